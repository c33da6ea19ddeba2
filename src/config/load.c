/*
 * load.c - loading scenarios, hardware and workloads: parsing the files,
 * applying `--set` overrides to the YAML tree, typed extraction through the
 * schema (extract.c), derivation and checks (check.c), and
 * reporting semantic errors at their YAML location. References are resolved
 * in ref.c; cfg_set() is in set.c.
 */
#include "config/config.h"

#include <stdlib.h>
#include <string.h>

#include "config/profile.h"
#include "config/schema.h"

#define SET_PREFIX "--set "

/* Standalone hardware / model objects carry their arena behind them. */
struct hw_box {
    struct hardware hw; /* first: cfg_free_hw() casts back */
    struct arena arena;
};
struct model_box {
    struct model m;
    struct arena arena;
};

/* ---- documents ------------------------------------------------------------------------------ */

/* Count and print a YAML syntax error and its note, within the error cap. */
static void yaml_error(struct schema_ctx *c, const struct yt_error *ye)
{
    schema_error(c, diag_unechoed_at_start(ye->mark), "%s", ye->msg);
    if (ye->note_mark.src && c->diag && c->errors <= SCHEMA_MAX_ERRORS)
        diag_note(c->diag, ye->note_mark, "%s", ye->note);
}

/* Parse a file's text; its root must be a mapping. NULL (and an error) otherwise. */
static const struct yt_node *parse_root(struct schema_ctx *c, const char *path, const char *text,
                                        size_t len, const char *what)
{
    struct yt_error ye;
    struct yt_doc *doc = yt_parse(c->a, path, text, len, 0, &ye);

    if (!doc) {
        yaml_error(c, &ye);
        return NULL;
    }
    if (!doc->root) {
        schema_error(c, (struct diag_mark){ &doc->src, 0, 1 }, "empty %s file", what);
        return NULL;
    }
    if (doc->root->kind != YT_MAP) {
        struct diag_mark m = yt_mark(doc->root);

        m.len = DIAG_NO_EXCERPT; /* not a file of this kind: its text is not echoed */
        schema_error(c, m, "expected a mapping of keys in the %s file, got %s", what,
                     yt_describe(doc->root));
        return NULL;
    }
    return doc->root;
}

/* The node at a dotted path under `root`: the value if all of it exists, else the deepest key. */
static struct diag_mark locate(const struct yt_node *root, const char *path,
                               const struct yt_node *fallback)
{
    const struct yt_node *node = root, *last_key = NULL;
    const char *p = path;

    while (node && node->kind == YT_MAP && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const struct yt_pair *hit = NULL;

        for (size_t i = 0; i < node->count; i++)
            if (node->pairs[i].key->len == n && memcmp(node->pairs[i].key->text, p, n) == 0)
                hit = &node->pairs[i];
        if (!hit)
            break;
        last_key = hit->key;
        node = hit->value;
        if (!dot) {
            if (node->kind == YT_SCALAR && !yt_is_null(node))
                return yt_mark(node);
            return yt_mark(last_key);
        }
        p = dot + 1;
    }
    if (last_key)
        return yt_mark(last_key);
    if (fallback)
        return yt_mark(fallback);
    if (root)
        return (struct diag_mark){ root->src, root->off, 1 };
    return (struct diag_mark){ NULL, 0, 0 };
}

/* ---- hardware, calibration, workload -------------------------------------------------------- */

struct override;
static struct yt_node *mutable_node(const struct yt_node *n);
static void apply_override(struct schema_ctx *c, struct yt_node *root, const struct override *o);
static void calibration_keep_overrides(struct schema_ctx *c, struct yt_node *root,
                                       const struct override *ovr, int novr);

/*
 * The hardware's calibration file replaces the efficiency and sustained-clock keys it names;
 * a `--set hardware.efficiency.*` or `--set hardware.gpu.clock.sustained.*` (ovr, novr) is set
 * in the calibration's tree too, so that the user's value wins over the file's.
 */
static void load_calibration(struct schema_ctx *c, const struct yt_node *hw_root,
                             struct hardware *hw, const char *from, const struct override *ovr,
                             int novr)
{
    const struct yt_node *ref = yt_map_get(hw_root, "calibration");
    const struct yt_node *root, *name;
    struct cfg_found f;
    bool saved = c->no_defaults;

    if (cfg_resolve(c, "calibration", "hardware/calibration", hw->calibration, yt_mark(ref), from,
                    &f))
        return;
    hw->calibration = f.path;
    root = parse_root(c, f.path, f.text, f.len, "calibration");
    free(f.text);
    if (!root)
        return;
    if (c->errors == 0) /* a refused override was reported at the hardware's extraction */
        calibration_keep_overrides(c, mutable_node(root), ovr, novr);
    c->no_defaults = true;
    schema_extract(c, &schema_calibration, root, NULL, hw);
    c->no_defaults = saved;
    name = yt_map_get(root, "hardware");
    if (name && name->kind == YT_SCALAR && hw->name && strcmp(name->text, hw->name) != 0) {
        char q[64];

        diag_clip(q, sizeof(q), name->text, strlen(name->text));
        schema_error(c, yt_mark(name), "calibration file is for hardware '%s', not '%s'", q,
                     hw->name);
    }
}

/* A sustained SM clock (hardware or calibration file) cannot exceed the part's highest clock. */
static void check_clocks(struct schema_ctx *c, const struct yt_node *root,
                         const struct yt_node *where, const struct gpu_spec *g)
{
    char key[64], a[32], b[32];

    if (!(g->clock_max_Hz > 0))
        return;
    for (int d = 0; d < DT_COUNT; d++) {
        if (!(g->clock_sust_Hz[d] > g->clock_max_Hz))
            continue;
        snprintf(key, sizeof(key), "gpu.clock.sustained.%s", dtype_name((enum dtype)d));
        schema_error(c, locate(root, key, where), "sustained %s clock %s exceeds gpu.clock.max %s",
                     dtype_name((enum dtype)d),
                     units_format(g->clock_sust_Hz[d], UNIT_FREQ, a, sizeof(a)),
                     units_format(g->clock_max_Hz, UNIT_FREQ, b, sizeof(b)));
        return;
    }
}

/*
 * The clock model (tensor cores x FLOP per clock x clock) and the stated peak describe one part:
 * at gpu.clock.max the model's peak is the datasheet's or somewhat above it, as the datasheet
 * quotes the boost clock (A100: 432 x 512 x 1410 MHz = 312 TFLOP/s, the datasheet's; H100 SXM:
 * 528 x 1024 x 1980 MHz = 1070, 1.08 x 989; B200 1.06 x). Outside 0.98 to 1.25 x one of them is
 * wrong, and the GEMMs would be priced by the model against a peak the reports contradict.
 */
static void check_clock_model(struct schema_ctx *c, const struct yt_node *root,
                              const struct yt_node *where, const struct gpu_spec *g)
{
    char key[64], a[32], b[32], f[32];

    if (!(g->clock_max_Hz > 0) || g->tensor_cores <= 0)
        return;
    for (int d = 0; d < DT_COUNT; d++) {
        double model = g->tensor_cores * g->tc_flop_clk[d] * g->clock_max_Hz;

        if (!(g->tc_flop_clk[d] > 0) || !(g->flops[d] > 0) ||
            (model >= 0.98 * g->flops[d] && model <= 1.25 * g->flops[d]))
            continue;
        snprintf(key, sizeof(key), "gpu.tensor_flop_per_clock.%s", dtype_name((enum dtype)d));
        schema_error(c, locate(root, key, where),
                     "the clock model gives a %s peak of %s at gpu.clock.max (%d tensor cores x "
                     "%g FLOP per clock x %s), but gpu.flops.%s is %s: the datasheet peak lies "
                     "within 0.8 to 1.02 times the model's (change both together)",
                     dtype_name((enum dtype)d), units_format(model, UNIT_FLOPS, a, sizeof(a)),
                     g->tensor_cores, g->tc_flop_clk[d],
                     units_format(g->clock_max_Hz, UNIT_FREQ, b, sizeof(b)),
                     dtype_name((enum dtype)d),
                     units_format(g->flops[d], UNIT_FLOPS, f, sizeof(f)));
        return;
    }
}

/* Hardware mapping -> struct: schema, defaults, name, checks, calibration. */
static void extract_hardware(struct schema_ctx *c, const struct yt_node *root,
                             const struct yt_node *where, struct hardware *hw, const char *path,
                             const char *from, const struct override *ovr, int novr)
{
    int before = c->errors;

    schema_extract(c, &schema_hardware, root, where, hw);
    if (!hw->name)
        hw->name = path ? cfg_stem(c->a, path) : "inline";
    hw->path = path ? path : "";
    if (c->errors == before && !(hw->gpu.flops[DT_BF16] > 0) && !(hw->gpu.flops[DT_FP16] > 0))
        schema_error(c, locate(root, "gpu.flops", where), "gpu.flops needs a bf16 or fp16 peak");
    if (c->errors == before && hw->pcie.gpus_per_switch > hw->gpus_per_node)
        schema_error(c, locate(root, "node.pcie.gpus_per_switch", where),
                     "gpus_per_switch (%d) exceeds the GPUs per node (%d)",
                     hw->pcie.gpus_per_switch, hw->gpus_per_node);
    if (hw->calibration)
        load_calibration(c, root, hw, from, ovr, novr);
    if (c->errors == before)
        check_clocks(c, root, where, &hw->gpu);
    if (c->errors == before)
        check_clock_model(c, root, where, &hw->gpu);
}

static void extract_model(struct schema_ctx *c, const struct yt_node *root,
                          const struct yt_node *where, struct model *m, const char *path)
{
    schema_extract(c, &schema_workload, root, where, m);
    if (!m->name)
        m->name = path ? cfg_stem(c->a, path) : "inline";
}

/* Resolve a scenario's `hardware:` / `workload:` value to the mapping to extract. */
static const struct yt_node *reference(struct schema_ctx *c, const struct yt_node *ref,
                                       const char *key, const char *subdir, const char *from,
                                       const char **path)
{
    struct cfg_found f;
    const struct yt_node *root;
    const char *what = strcmp(key, "hardware") == 0 ? "hardware" : "workload";

    *path = NULL;
    if (!ref)
        return NULL; /* reported as a missing required key */
    if (ref->kind == YT_MAP)
        return ref;
    if (ref->kind != YT_SCALAR || yt_is_null(ref)) {
        schema_error(c, yt_mark(ref),
                     "expected a name, a path ending in .yaml, or a mapping for '%s', got %s", key,
                     yt_describe(ref));
        return NULL;
    }
    if (strlen(ref->text) != ref->len) {
        schema_error(c, yt_mark(ref), "value of '%s' contains a NUL character", key);
        return NULL;
    }
    if (cfg_resolve(c, what, subdir, ref->text, yt_mark(ref), from, &f))
        return NULL;
    root = parse_root(c, f.path, f.text, f.len, what);
    free(f.text);
    *path = f.path;
    return root;
}

/* ---- overrides ------------------------------------------------------------------------------ */

/* One `--set key=value`, parsed into a tree node shown as "--set key=value". */
struct override {
    const struct diag_src *src; /* "<command line>" text */
    const char *key;            /* arena copy */
    size_t key_off;             /* offset of the key in src->text */
    struct yt_node *value;
    int target; /* 0 scenario, 1 hardware, 2 workload */
};

static int parse_override(struct schema_ctx *c, const struct cfg_override *o, struct override *out)
{
    const char *key = o->key ? o->key : "";
    const char *val = o->value ? o->value : "";
    char *text = xasprintf(SET_PREFIX "%s=%s", key, val);
    size_t klen = strlen(key), voff = strlen(SET_PREFIX) + klen + 1;
    size_t base_off, bad_at, bad_len;
    struct yt_error ye;
    struct yt_doc *doc = yt_parse(c->a, CMDLINE, text, strlen(text), voff, &ye);
    char msg[256];

    free(text);
    if (!doc) {
        yaml_error(c, &ye);
        return -1;
    }
    out->src = &doc->src;
    out->key = arena_strdup(c->a, key);
    out->key_off = strlen(SET_PREFIX);
    if (!schema_lookup(key, &base_off, &bad_at, &bad_len, msg, sizeof(msg))) {
        schema_error(c, (struct diag_mark){ out->src, out->key_off + bad_at, bad_len }, "%s", msg);
        return -1;
    }
    out->value = doc->root ? doc->root : yt_new_scalar(c->a, out->src, "", 0, voff, voff);
    out->target = strncmp(key, "hardware.", 9) == 0 ? 1 : strncmp(key, "workload.", 9) == 0 ? 2 : 0;
    return 0;
}

/* Set the override's value in the tree under root, creating mappings on the way. */
static void apply_override(struct schema_ctx *c, struct yt_node *root, const struct override *o)
{
    const char *p = o->key;
    struct yt_node *node = root;

    if (o->target)
        p = strchr(p, '.') + 1;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        size_t off = o->key_off + (size_t)(p - o->key);
        struct yt_node *key = yt_new_scalar(c->a, o->src, p, n, off, off + n);
        struct yt_pair *hit;

        if (!dot) {
            yt_map_put(c->a, node, key, o->value);
            return;
        }
        hit = yt_map_find(node, key->text);
        if (!hit || yt_is_null(hit->value)) {
            struct yt_node *map = yt_new_map(c->a, o->src, off, off + n);

            yt_map_put(c->a, node, key, map);
            node = map;
        } else if (hit->value->kind == YT_MAP) {
            node = hit->value;
        } else {
            return; /* the file's own value has the wrong type; extraction reports it */
        }
        p = dot + 1;
    }
}

/*
 * The hardware overrides that a calibration file could replace, set in its tree (root) at the
 * calibration's path: hardware.efficiency.K -> efficiency.K, hardware.gpu.clock.sustained.K ->
 * clock.sustained.K (schema_calibration). Marks still point at the --set argument.
 */
static void calibration_keep_overrides(struct schema_ctx *c, struct yt_node *root,
                                       const struct override *ovr, int novr)
{
    static const struct {
        const char *prefix; /* of the --set key */
        size_t strip;       /* bytes of it the calibration's path leaves out */
    } paths[] = {
        { "hardware.efficiency.", sizeof("hardware.") - 1 },
        { "hardware.gpu.clock.sustained.", sizeof("hardware.gpu.") - 1 },
    };

    if (root->kind != YT_MAP)
        return; /* extraction reports the file's shape */
    for (int i = 0; i < novr; i++)
        for (size_t k = 0; k < ARRAY_LEN(paths); k++) {
            struct override o = ovr[i];

            if (strncmp(o.key, paths[k].prefix, strlen(paths[k].prefix)) != 0)
                continue;
            o.key += paths[k].strip;
            o.key_off += paths[k].strip;
            o.target = 0;
            apply_override(c, root, &o);
        }
}

/* ---- scenarios ------------------------------------------------------------------------------- */

void cfg_free(struct scenario *s)
{
    if (!s)
        return;
    if (s->src) {
        arena_release(&s->src->arena);
        free(s->src);
    }
    free(s);
}

/* Cast away the tree's const for --set edits: the nodes live in our own arena. */
static struct yt_node *mutable_node(const struct yt_node *n)
{
    struct yt_node *m;

    memcpy(&m, &n, sizeof(m));
    return m;
}

/* Resolve and parse the scenario's hardware and workload; paths stay NULL when inline. */
static void load_references(struct schema_ctx *c, struct cfg_source *src, const char *path,
                            const char **hw_path, const char **model_path)
{
    src->hw_ref = yt_map_get(src->scen, "hardware");
    src->mdl_ref = yt_map_get(src->scen, "workload");
    src->hw = reference(c, src->hw_ref, "hardware", "hardware", path, hw_path);
    src->model = reference(c, src->mdl_ref, "workload", "workloads", path, model_path);
}

/* The key naming an inline mapping (for "missing key" errors), or NULL for files. */
static const struct yt_node *inline_key(const struct yt_node *scen, const char *key,
                                        const char *path)
{
    const struct yt_pair *p = yt_map_find(scen, key);

    return !path && p ? p->key : NULL;
}

/* Does the dotted path exist, with a value, under mapping root? */
static bool has_path(const struct yt_node *root, const char *path)
{
    const struct yt_node *node = root;
    const char *p = path;

    while (node && node->kind == YT_MAP) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const struct yt_node *next = NULL;

        for (size_t i = 0; i < node->count; i++)
            if (node->pairs[i].key->len == n && memcmp(node->pairs[i].key->text, p, n) == 0)
                next = node->pairs[i].value;
        if (!next)
            return false;
        if (!dot)
            return !yt_is_null(next);
        node = next;
        p = dot + 1;
    }
    return false;
}

/* Does the scenario (its file, its hardware or workload, or --set) give `key` itself? */
static bool tree_given(const char *key, const void *ctx)
{
    const struct cfg_source *src = ctx;

    if (strncmp(key, "workload.", 9) == 0)
        return has_path(src->model, key + 9);
    if (strncmp(key, "hardware.", 9) == 0)
        return has_path(src->hw, key + 9);
    return has_path(src->scen, key);
}

/*
 * training.framework's profile: selected (errors at the keys), bound to what the scenario
 * gives, applied with the derived defaults after it (profile.h). 0 or -1.
 */
static int apply_profile(struct schema_ctx *c, const struct cfg_source *src, struct scenario *s)
{
    const char *name = s->train.framework, *version = s->train.framework_version;

    if (!name || !*name) {
        if (version && *version) {
            schema_error(c, locate(src->scen, "training.framework_version", NULL),
                         "framework_version needs training.framework");
            return -1;
        }
        profile_none(&s->fw);
    } else if (profile_select(c, name, version, locate(src->scen, "training.framework", NULL),
                              locate(src->scen, "training.framework_version", NULL), &s->fw)) {
        return -1;
    }
    profile_bind(s, tree_given, src);
    profile_apply(s);
    return 0;
}

static struct scenario *load_scenario(const char *path, const char *text, size_t len,
                                      const struct cfg_override *ovr, int novr, FILE *diag,
                                      bool library_only)
{
    struct scenario *s = xcalloc(1, sizeof(*s));
    struct cfg_source *src = xcalloc(1, sizeof(*src));
    struct schema_ctx c = { .diag = diag, .a = &src->arena, .library_only = library_only };
    struct override *items = novr > 0 ? xcalloc((size_t)novr, sizeof(*items)) : NULL;
    const char *hw_path, *model_path;
    struct cfg_error err;
    bool ok = true;

    arena_init(&src->arena);
    s->src = src;
    src->scen = parse_root(&c, path, text, len, "scenario");
    if (!src->scen)
        goto fail;
    c.posted = src->scen->src;
    for (int i = 0; i < novr; i++)
        ok &= parse_override(&c, &ovr[i], &items[i]) == 0;
    if (!ok)
        goto fail;
    for (int i = 0; i < novr; i++)
        if (items[i].target == 0)
            apply_override(&c, mutable_node(src->scen), &items[i]);
    load_references(&c, src, path, &hw_path, &model_path);
    for (int i = 0; i < novr; i++) {
        const struct yt_node *root = items[i].target == 1 ? src->hw : src->model;

        if (items[i].target && root)
            apply_override(&c, mutable_node(root), &items[i]);
    }
    schema_extract(&c, &schema_scenario, src->scen, NULL, s);
    if (src->hw)
        extract_hardware(&c, src->hw, inline_key(src->scen, "hardware", hw_path), &s->hw, hw_path,
                         hw_path ? hw_path : path, items, novr);
    if (src->model)
        extract_model(&c, src->model, inline_key(src->scen, "workload", model_path), &s->model,
                      model_path);
    if (c.errors)
        goto fail;
    s->given = c.given;
    s->path = arena_strdup(&src->arena, path);
    if (!s->name)
        s->name = cfg_stem(&src->arena, path);
    if (!s->description)
        s->description = "";
    if (apply_profile(&c, src, s))
        goto fail;
    cfg_read_words(s, s->given | s->fw.given);
    if (scenario_finalize(s, &err)) {
        cfg_report_error(s, &err, diag);
        goto fail;
    }
    free(items);
    return s;
fail:
    free(items);
    cfg_free(s);
    return NULL;
}

struct scenario *cfg_load_scenario_mem(const char *path, const char *text, size_t len,
                                       const struct cfg_override *ovr, int novr, FILE *diag)
{
    return load_scenario(path, text, len, ovr, novr, diag, false);
}

struct scenario *cfg_load_scenario_posted(const char *name, const char *text, size_t len,
                                          const struct cfg_override *ovr, int novr, FILE *diag)
{
    return load_scenario(name, text, len, ovr, novr, diag, true);
}

static char *read_input(const char *path, size_t *len, FILE *diag)
{
    const char *why;
    char *text = cfg_read_file(path, len, &why);

    if (!text && diag)
        fprintf(diag, "error: cannot read '%s': %s\n", path, why);
    return text;
}

struct scenario *cfg_load_scenario(const char *path, const struct cfg_override *ovr, int novr,
                                   FILE *diag)
{
    char *found = cfg_locate_input(path); /* a shipped scenario from any directory */
    size_t len;
    char *text = read_input(found ? found : path, &len, diag);
    struct scenario *s = NULL;

    if (text)
        s = cfg_load_scenario_mem(found, text, len, ovr, novr, diag);
    free(text);
    free(found);
    return s;
}

const char *cfg_scenario_text(const struct scenario *s, size_t *len)
{
    const struct diag_src *src = s->src && s->src->scen ? s->src->scen->src : NULL;

    *len = src ? src->len : 0;
    return src ? src->text : NULL;
}

void cfg_report_error(const struct scenario *s, const struct cfg_error *err, FILE *diag)
{
    const struct cfg_source *src = s->src;
    const struct yt_node *root, *fallback = NULL;
    const char *p = err->path;

    if (!src || !src->scen) {
        if (err->path[0])
            fprintf(diag, "error: %s: %s\n", err->path, err->msg);
        else
            fprintf(diag, "error: %s\n", err->msg);
        return;
    }
    root = src->scen;
    if (strncmp(p, "hardware.", 9) == 0 && src->hw) {
        root = src->hw;
        fallback = src->hw_ref;
        p += 9;
    } else if (strncmp(p, "workload.", 9) == 0 && src->model) {
        root = src->model;
        fallback = src->mdl_ref;
        p += 9;
    }
    diag_error(diag, locate(root, p, fallback), "%s", err->msg);
    {
        const struct fw_setting *st = profile_applied(s, err->path);

        if (st)
            diag_note(diag, (struct diag_mark){ NULL, 0, 0 },
                      "%s = %s is the default of framework %s %s (%s); set it in the scenario",
                      st->key, st->value, s->fw.name, s->fw.version, st->source);
    }
}

/* ---- standalone hardware and workloads ------------------------------------------------------- */

void cfg_free_hw(struct hardware *hw)
{
    struct hw_box *box = (struct hw_box *)hw;

    if (!hw)
        return;
    arena_release(&box->arena);
    free(box);
}

void cfg_free_model(struct model *m)
{
    struct model_box *box = (struct model_box *)m;

    if (!m)
        return;
    arena_release(&box->arena);
    free(box);
}

struct hardware *cfg_load_hardware_mem(const char *path, const char *text, size_t len, FILE *diag)
{
    struct hw_box *box = xcalloc(1, sizeof(*box));
    struct schema_ctx c = { .diag = diag, .a = &box->arena };
    const struct yt_node *root;

    arena_init(&box->arena);
    root = parse_root(&c, path, text, len, "hardware");
    if (root)
        extract_hardware(&c, root, NULL, &box->hw, arena_strdup(&box->arena, path), path, NULL, 0);
    if (c.errors) {
        cfg_free_hw(&box->hw);
        return NULL;
    }
    return &box->hw;
}

struct model *cfg_load_model_mem(const char *path, const char *text, size_t len, FILE *diag)
{
    struct model_box *box = xcalloc(1, sizeof(*box));
    struct schema_ctx c = { .diag = diag, .a = &box->arena };
    const struct yt_node *root;
    struct cfg_error err;

    arena_init(&box->arena);
    root = parse_root(&c, path, text, len, "workload");
    if (root)
        extract_model(&c, root, NULL, &box->m, arena_strdup(&box->arena, path));
    if (!c.errors && cfg_model_finalize(&box->m, &err)) {
        const char *p = strncmp(err.path, "workload.", 9) == 0 ? err.path + 9 : err.path;

        diag_error(diag, locate(root, p, NULL), "%s", err.msg);
        c.errors++;
    }
    if (c.errors) {
        cfg_free_model(&box->m);
        return NULL;
    }
    return &box->m;
}

/* Find a standalone file by name (data directories) or path (working directory). */
static void *load_named(const char *name_or_path, const char *what, const char *subdir, FILE *diag)
{
    struct arena a;
    struct schema_ctx c = { .diag = diag, .a = &a };
    struct cfg_found f;
    void *obj = NULL;

    arena_init(&a);
    if (cfg_resolve(&c, what, subdir, name_or_path, (struct diag_mark){ NULL, 0, 0 }, NULL, &f) ==
        0) {
        if (strcmp(what, "hardware") == 0)
            obj = cfg_load_hardware_mem(f.path, f.text, f.len, diag);
        else
            obj = cfg_load_model_mem(f.path, f.text, f.len, diag);
        free(f.text);
    }
    arena_release(&a);
    return obj;
}

struct hardware *cfg_load_hardware(const char *name_or_path, FILE *diag)
{
    return load_named(name_or_path, "hardware", "hardware", diag);
}

struct model *cfg_load_model(const char *name_or_path, FILE *diag)
{
    return load_named(name_or_path, "workload", "workloads", diag);
}

/* ---- --set arguments ---------------------------------------------------------------------- */

int cfg_override_init(struct cfg_override *o, const char *arg, FILE *diag)
{
    const char *eq = strchr(arg, '=');
    char *copy;

    memset(o, 0, sizeof(*o));
    if (!eq || eq == arg) {
        if (diag) {
            char *text = xasprintf(SET_PREFIX "%s", arg);
            struct diag_src src = { CMDLINE, text, strlen(text) };
            size_t at = strlen(SET_PREFIX);

            diag_error(diag, (struct diag_mark){ &src, at, strlen(arg) },
                       eq ? "missing key before '=' in '%s'" : "expected key=value, got '%s'", arg);
            free(text);
        }
        return -1;
    }
    copy = xstrdup(arg);
    copy[eq - arg] = '\0';
    o->key = copy;
    o->value = copy + (eq - arg) + 1;
    o->arg = arg;
    return 0;
}

void cfg_override_release(struct cfg_override *o)
{
    char *p;

    memcpy(&p, &o->key, sizeof(p));
    free(p);
    memset(o, 0, sizeof(*o));
}
