/*
 * profile.c - loading profile files (frameworks/NAME.yaml) and selecting a version; see
 * profile.h for the format. Every key and value is checked here, at load, with the schema's
 * own conversions, so applying a profile cannot fail.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, readdir */

#include "config/profile_internal.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Add the stems of DIR's *.yaml files to names[0..*n) (capacity cap). */
static void scan_dir(struct arena *a, const char *dir, const char ***names, int *n, int *cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);

        if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.')
            continue;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            *names = xrealloc(*names, sizeof(**names) * (size_t)*cap);
        }
        (*names)[(*n)++] = cfg_stem(a, e->d_name);
    }
    closedir(d);
}

int profile_names(struct arena *a, const char ***out)
{
    const char *env = getenv("SIMTRAIN_DATA");
    const char **names = NULL, **res;
    int n = 0, cap = 0, k = 0;

    if (env && *env) {
        char *dir = xasprintf("%s/%s", env, PROFILE_DIR);
        scan_dir(a, dir, &names, &n, &cap);
        free(dir);
    }
    {
        char *dir = xasprintf("%s/%s", cfg_data_dir(), PROFILE_DIR);
        scan_dir(a, dir, &names, &n, &cap);
        free(dir);
    }
    if (n > 1)
        qsort(names, (size_t)n, sizeof(*names), cmp_str);
    res = arena_alloc(a, sizeof(*res) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        if (k == 0 || strcmp(res[k - 1], names[i]) != 0)
            res[k++] = names[i];
    free(names);
    *out = res;
    return k;
}

/* "a, b, c" of names[0..n), into the arena. */
static const char *join_list(struct arena *a, const char *const *names, int n)
{
    struct strbuf sb;
    char *r;

    sb_init(&sb);
    for (int i = 0; i < n; i++)
        sb_addf(&sb, "%s%s", i ? ", " : "", names[i]);
    r = arena_strdup(a, sb.buf ? sb.buf : "");
    sb_release(&sb);
    return r;
}

/* ---- values ------------------------------------------------------------------------------ */

static bool is_scalar(const struct yt_node *n)
{
    return n && n->kind == YT_SCALAR && !yt_is_null(n);
}

/* The scalar value of `key` in map as an arena string; NULL when absent (error if required). */
static const char *text_at(struct schema_ctx *c, const struct yt_node *map, const char *key,
                           bool required)
{
    const struct yt_node *v = yt_map_get(map, key);

    if (!v) {
        if (required)
            schema_error(c, yt_mark(map), "missing required key '%s' in the profile", key);
        return NULL;
    }
    if (!is_scalar(v) || strlen(v->text) != v->len) {
        schema_error(c, yt_mark(v), "expected text for '%s', got %s", key, yt_describe(v));
        return NULL;
    }
    return arena_strdup(c->a, v->text);
}

static bool type_settable(const struct field *f)
{
    return f->type == FT_INT || f->type == FT_FLOAT || f->type == FT_QTY || f->type == FT_BOOL ||
           f->type == FT_ENUM;
}

/* May a profile set `key`? NULL, or why not. */
static const char *refused(const char *key, const struct field *f)
{
    static const char *const layout[] = { "parallelism.dp",  "parallelism.tp", "parallelism.pp",
                                          "parallelism.vpp", "parallelism.cp", "parallelism.ep" };
    static const char *const sections[] = { "training.", "parallelism.", "ddp.", "zero.",
                                            "fsdp.",     "nccl.",        "host." };
    bool in = strcmp(key, "workload.dropout") == 0;

    for (size_t i = 0; i < ARRAY_LEN(sections); i++)
        in |= strncmp(key, sections[i], strlen(sections[i])) == 0;
    if (!in)
        return "a profile sets keys of training, parallelism, ddp, zero, fsdp, nccl and host, and "
               "workload.dropout";
    for (size_t i = 0; i < ARRAY_LEN(layout); i++)
        if (strcmp(key, layout[i]) == 0)
            return "the layout degrees are the scenario's own";
    if (strncmp(key, "training.framework", 18) == 0)
        return "a profile cannot select a framework";
    if (!type_settable(f))
        return "a profile sets numbers, booleans and enumeration words only";
    return NULL;
}

/* Look a dotted key up; an error at `at` when unknown. */
static const struct field *key_field(struct schema_ctx *c, const struct yt_node *at,
                                     const char *key, size_t *off)
{
    size_t base, bad_at, bad_len;
    char msg[256];
    const struct field *f = schema_lookup(key, &base, &bad_at, &bad_len, msg, sizeof(msg));

    if (!f) {
        schema_error(c, yt_mark(at), "%s", msg);
        return NULL;
    }
    *off = base + f->off;
    return f;
}

/* Convert the scalar `text` for field f (at offset off in struct scenario) into *num / val. */
static int convert(struct schema_ctx *c, const struct field *f, size_t off, const char *text,
                   size_t len, enum yt_style style, const struct yt_node *at, double *num,
                   unsigned char *val)
{
    struct scenario scratch;
    struct conv_error e;
    char *base = (char *)&scratch + off - f->off;

    memset(&scratch, 0, sizeof(scratch));
    if (schema_convert(f, text, len, style, base, NULL, &e)) {
        schema_error(c, yt_mark(at), "%s", e.msg);
        return -1;
    }
    if (num)
        *num = profile_read(f, (char *)&scratch + off);
    if (val)
        memcpy(val, (char *)&scratch + off, f->size);
    return 0;
}

/* A setting KEY: {value: V, source: TEXT} into *out; `cond` for a rule's. */
static int parse_setting(struct schema_ctx *c, const struct yt_pair *kv, const struct fw_cond *cond,
                         int ncond, const char *when, struct fw_setting *out)
{
    const struct yt_node *m = kv->value, *v;
    struct fw_impl *im = arena_alloc(c->a, sizeof(*im));
    const char *key = kv->key->text, *why;
    const struct field *f;
    size_t off;

    if (!(f = key_field(c, kv->key, key, &off)))
        return -1;
    if ((why = refused(key, f)) != NULL) {
        schema_error(c, yt_mark(kv->key), "'%s' cannot be set by a profile: %s", key, why);
        return -1;
    }
    if (!m || m->kind != YT_MAP) {
        schema_error(c, yt_mark(m ? m : kv->key),
                     "expected {value: V, source: TEXT} for '%s', got %s", key, yt_describe(m));
        return -1;
    }
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->pairs[i].key->text, "value") && strcmp(m->pairs[i].key->text, "source")) {
            schema_error(c, yt_mark(m->pairs[i].key),
                         "unknown key '%s' in a profile setting (expected value and source)",
                         m->pairs[i].key->text);
            return -1;
        }
    v = yt_map_get(m, "value");
    if (!is_scalar(v)) {
        schema_error(c, yt_mark(v ? v : m), "expected a value for '%s'", key);
        return -1;
    }
    out->source = text_at(c, m, "source", true);
    if (!out->source)
        return -1;
    if (!*out->source) {
        schema_error(c, yt_mark(yt_map_get(m, "source")), "empty source for '%s'", key);
        return -1;
    }
    if (convert(c, f, off, v->text, v->len, v->style, v, NULL, im->val))
        return -1;
    im->f = f;
    im->off = off;
    im->cond = cond;
    im->ncond = ncond;
    out->key = arena_strdup(c->a, key);
    out->value = arena_strdup(c->a, v->text);
    out->when = when;
    out->impl = im;
    return 0;
}

/* One condition KEY: COND of a rule's `if`. */
static int parse_cond(struct schema_ctx *c, const struct yt_pair *kv, struct fw_cond *out)
{
    static const struct {
        const char *p;
        int op;
    } ops[] = { { "!=", FW_NE }, { ">=", FW_GE }, { "<=", FW_LE },
                { "==", FW_EQ }, { ">", FW_GT },  { "<", FW_LT } };
    const struct yt_node *v = kv->value;
    const char *key = kv->key->text;
    size_t off;

    memset(out, 0, sizeof(*out));
    if (!(out->f = key_field(c, kv->key, key, &off)))
        return -1;
    out->off = off;
    if (!type_settable(out->f)) {
        schema_error(c, yt_mark(kv->key), "a condition reads numbers, booleans and words: '%s'",
                     key);
        return -1;
    }
    if (v && v->kind == YT_SEQ) {
        if (v->count < 1 || v->count > FW_MAX_VALUES) {
            schema_error(c, yt_mark(v), "expected 1 to %d values for '%s'", FW_MAX_VALUES, key);
            return -1;
        }
        for (size_t i = 0; i < v->count; i++) {
            const struct yt_node *it = v->items[i];
            if (!is_scalar(it)) {
                schema_error(c, yt_mark(it), "expected a value for '%s'", key);
                return -1;
            }
            if (convert(c, out->f, off, it->text, it->len, it->style, it, &out->vals[i], NULL))
                return -1;
        }
        out->nvals = (int)v->count;
        return 0;
    }
    if (!is_scalar(v)) {
        schema_error(c, yt_mark(v ? v : kv->key), "expected a value or a list for '%s'", key);
        return -1;
    }
    {
        const char *t = v->text;
        size_t skip = 0;
        out->op = FW_EQ;
        for (size_t i = 0; i < ARRAY_LEN(ops) && v->style != YT_BLOCK; i++)
            if (strncmp(t, ops[i].p, strlen(ops[i].p)) == 0) {
                out->op = ops[i].op;
                skip = strlen(ops[i].p);
                break;
            }
        while (t[skip] == ' ')
            skip++;
        if ((out->op != FW_EQ && out->op != FW_NE) &&
            !(out->f->type == FT_INT || out->f->type == FT_FLOAT || out->f->type == FT_QTY)) {
            schema_error(c, yt_mark(v), "'%s' is not a number: only == and != apply", key);
            return -1;
        }
        out->nvals = 1;
        return convert(c, out->f, off, t + skip, v->len - skip,
                       skip ? YT_PLAIN : (enum yt_style)v->style, v, &out->vals[0], NULL);
    }
}

/* "parallelism.pp >1, training.precision bf16" for display. */
static const char *cond_text(struct schema_ctx *c, const struct yt_node *m)
{
    struct strbuf sb;
    char *r;

    sb_init(&sb);
    for (size_t i = 0; i < m->count; i++) {
        const struct yt_node *v = m->pairs[i].value;
        sb_addf(&sb, "%s%s ", i ? ", " : "", m->pairs[i].key->text);
        if (v->kind == YT_SEQ)
            for (size_t j = 0; j < v->count; j++)
                sb_addf(&sb, "%s%s", j ? "|" : "", v->items[j]->text);
        else
            sb_puts(&sb, v->text);
    }
    r = arena_strdup(c->a, sb.buf ? sb.buf : "");
    sb_release(&sb);
    return r;
}

/* The settings of a `defaults` mapping or a `set` of a rule, appended to v->own. */
static int parse_settings(struct schema_ctx *c, struct fw_version *v, const struct yt_node *m,
                          const struct fw_cond *cond, int ncond, const char *when, size_t *cap)
{
    int rc = 0;

    if (!m || m->kind != YT_MAP) {
        schema_error(c, yt_mark(m), "expected a mapping of settings, got %s", yt_describe(m));
        return -1;
    }
    for (size_t i = 0; i < m->count; i++) {
        if ((size_t)v->nown == *cap) {
            struct fw_setting *n = arena_alloc(c->a, sizeof(*n) * (*cap ? 2 * *cap : 32));
            if (v->nown)
                memcpy(n, v->own, sizeof(*n) * (size_t)v->nown);
            v->own = n;
            *cap = *cap ? 2 * *cap : 32;
        }
        if (parse_setting(c, &m->pairs[i], cond, ncond, when, &v->own[v->nown]) == 0)
            v->nown++;
        else
            rc = -1;
    }
    return rc;
}

static int parse_rules(struct schema_ctx *c, struct fw_version *v, const struct yt_node *rules,
                       size_t *cap)
{
    if (rules->kind != YT_SEQ) {
        schema_error(c, yt_mark(rules), "expected a list of rules, got %s", yt_describe(rules));
        return -1;
    }
    for (size_t i = 0; i < rules->count; i++) {
        const struct yt_node *r = rules->items[i], *cond, *set;
        struct fw_cond *conds;

        if (r->kind != YT_MAP || !(cond = yt_map_get(r, "if")) || !(set = yt_map_get(r, "set")) ||
            r->count != 2 || cond->kind != YT_MAP || cond->count < 1) {
            schema_error(c, yt_mark(r), "expected a rule {if: {KEY: COND}, set: {KEY: {...}}}");
            return -1;
        }
        conds = arena_alloc(c->a, sizeof(*conds) * cond->count);
        for (size_t j = 0; j < cond->count; j++)
            if (parse_cond(c, &cond->pairs[j], &conds[j]))
                return -1;
        if (parse_settings(c, v, set, conds, (int)cond->count, cond_text(c, cond), cap))
            return -1;
    }
    return 0;
}

static const char **text_list(struct schema_ctx *c, const struct yt_node *n, const char *what,
                              int *count)
{
    const char **out;

    *count = 0;
    if (!n)
        return NULL;
    if (n->kind != YT_SEQ) {
        schema_error(c, yt_mark(n), "expected a list for '%s', got %s", what, yt_describe(n));
        return NULL;
    }
    out = arena_alloc(c->a, sizeof(*out) * (n->count ? n->count : 1));
    for (size_t i = 0; i < n->count; i++) {
        if (!is_scalar(n->items[i])) {
            schema_error(c, yt_mark(n->items[i]), "expected text in '%s'", what);
            return NULL;
        }
        out[(*count)++] = arena_strdup(c->a, n->items[i]->text);
    }
    return out;
}

static const char *const version_keys[] = { "name",     "aliases", "releases", "released",
                                            "since",    "read",    "note",     "inherits",
                                            "defaults", "rules",   "notes" };

static int parse_version(struct schema_ctx *c, const struct yt_node *m, struct fw_version *v)
{
    const struct yt_node *d, *r;
    size_t cap = 0;
    int before = c->errors;

    if (m->kind != YT_MAP) {
        schema_error(c, yt_mark(m), "expected a version mapping, got %s", yt_describe(m));
        return -1;
    }
    for (size_t i = 0; i < m->count; i++) {
        bool known = false;
        for (size_t k = 0; k < ARRAY_LEN(version_keys); k++)
            known |= strcmp(m->pairs[i].key->text, version_keys[k]) == 0;
        if (!known)
            schema_error(c, yt_mark(m->pairs[i].key), "unknown key '%s' in a profile version",
                         m->pairs[i].key->text);
    }
    v->name = text_at(c, m, "name", true);
    v->at = yt_mark(yt_map_get(m, "name") ? yt_map_get(m, "name") : m);
    v->released = text_at(c, m, "released", false);
    v->read = text_at(c, m, "read", true);
    v->note = text_at(c, m, "note", false);
    v->inherits = text_at(c, m, "inherits", false);
    v->inh_at = yt_mark(yt_map_get(m, "inherits"));
    v->aliases = text_list(c, yt_map_get(m, "aliases"), "aliases", &v->naliases);
    v->releases = text_list(c, yt_map_get(m, "releases"), "releases", &v->nreleases);
    profile_read_release(c, v, m);
    v->notes = text_list(c, yt_map_get(m, "notes"), "notes", &v->nnotes);
    if ((d = yt_map_get(m, "defaults")) != NULL && !(d->kind == YT_MAP && d->count == 0))
        parse_settings(c, v, d, NULL, 0, NULL, &cap);
    if ((r = yt_map_get(m, "rules")) != NULL)
        parse_rules(c, v, r, &cap);
    return c->errors > before ? -1 : 0;
}

static struct fw_file *parse_file(struct schema_ctx *c, const char *name, const char *path,
                                  const struct yt_node *root)
{
    struct fw_file *f = arena_alloc(c->a, sizeof(*f));
    const struct yt_node *vs = yt_map_get(root, "versions");
    const char *fname = text_at(c, root, "framework", true);
    int before = c->errors;

    f->name = arena_strdup(c->a, name);
    f->path = path;
    f->description = text_at(c, root, "description", true);
    f->current = text_at(c, root, "current", true);
    for (size_t i = 0; i < root->count; i++) {
        const char *k = root->pairs[i].key->text;
        if (strcmp(k, "framework") && strcmp(k, "description") && strcmp(k, "current") &&
            strcmp(k, "calendar") && strcmp(k, "versions"))
            schema_error(c, yt_mark(root->pairs[i].key), "unknown key '%s' in a profile", k);
    }
    profile_read_calendar(c, f, yt_map_get(root, "calendar"));
    if (fname && strcmp(fname, name) != 0)
        schema_error(c, yt_mark(yt_map_get(root, "framework")),
                     "the profile in '%s.yaml' must name itself '%s', not '%s'", name, name, fname);
    if (!vs || vs->kind != YT_SEQ || vs->count == 0) {
        schema_error(c, yt_mark(vs ? vs : root), "expected a non-empty list of 'versions'");
        return NULL;
    }
    f->v = arena_alloc(c->a, sizeof(*f->v) * vs->count);
    for (size_t i = 0; i < vs->count; i++)
        if (parse_version(c, vs->items[i], &f->v[f->nv]) == 0)
            f->nv++;
    if (c->errors > before)
        return NULL;
    for (int i = 0; i < f->nv; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(f->v[i].name, f->v[j].name) == 0)
                schema_error(c, f->v[i].at, "duplicate version '%s'", f->v[i].name);
    profile_check_order(c, f);
    if (f->current && !profile_find_version(f, f->current))
        schema_error(c, yt_mark(yt_map_get(root, "current")), "current version '%s' is not listed",
                     f->current);
    return c->errors > before ? NULL : f;
}

struct fw_file *profile_load_file(struct schema_ctx *c, const char *name, struct diag_mark at)
{
    struct cfg_found found;
    struct yt_error ye;
    struct yt_doc *doc;
    const char **names;
    int n = profile_names(c->a, &names), i;

    for (i = 0; i < n && strcmp(names[i], name) != 0; i++)
        ;
    if (i == n) {
        const char *hint = diag_did_you_mean(name, names, (size_t)n);
        char q[64];

        diag_clip(q, sizeof(q), name, strlen(name));
        schema_error(c, at, "unknown framework '%s'%s%s%s (accepted: %s)", q,
                     hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "",
                     n ? join_list(c->a, names, n) : "none: no frameworks/ directory found");
        return NULL;
    }
    if (cfg_resolve(c, "framework", PROFILE_DIR, name, at, NULL, &found))
        return NULL;
    doc = yt_parse(c->a, found.path, found.text, found.len, 0, &ye);
    free(found.text);
    if (!doc) {
        schema_error(c, ye.mark, "%s", ye.msg);
        return NULL;
    }
    if (!doc->root || doc->root->kind != YT_MAP) {
        schema_error(c, (struct diag_mark){ &doc->src, 0, 1 },
                     "expected a mapping in the profile file");
        return NULL;
    }
    return parse_file(c, name, found.path, doc->root);
}

struct fw_version *profile_find_version(const struct fw_file *f, const char *word)
{
    for (int i = 0; i < f->nv; i++) {
        if (strcmp(f->v[i].name, word) == 0)
            return &f->v[i];
        for (int k = 0; k < f->v[i].naliases; k++)
            if (strcmp(f->v[i].aliases[k], word) == 0)
                return &f->v[i];
    }
    return NULL;
}

/* ---- inheritance and selection ------------------------------------------------------------ */

int profile_resolve(struct schema_ctx *c, struct fw_file *f, struct fw_version *v)
{
    struct fw_file *pf = f;
    struct fw_version *parent = NULL;
    int n;

    if (v->state == 2)
        return 0;
    if (v->state == 1) {
        schema_error(c, v->inh_at, "version '%s' inherits from itself", v->name);
        return -1;
    }
    v->state = 1;
    if (v->inherits) {
        const char *slash = strchr(v->inherits, '/');
        const char *word = slash ? slash + 1 : v->inherits;

        if (slash) {
            char *other = arena_strdup(c->a, v->inherits);
            other[slash - v->inherits] = '\0';
            pf = strcmp(other, f->name) ? profile_load_file(c, other, v->inh_at) : f;
        }
        parent = pf ? profile_find_version(pf, word) : NULL;
        if (pf && !parent)
            schema_error(c, v->inh_at, "inherited version '%s' not found", v->inherits);
        if (!parent || profile_resolve(c, pf, parent))
            return -1;
    }
    n = (parent ? parent->nall : 0) + v->nown;
    if (n > FW_MAX_SETTINGS) {
        schema_error(c, v->at, "version '%s' has %d settings; at most %d", v->name, n,
                     FW_MAX_SETTINGS);
        return -1;
    }
    v->all = arena_alloc(c->a, sizeof(*v->all) * (size_t)(n ? n : 1));
    if (parent && parent->nall)
        memcpy(v->all, parent->all, sizeof(*v->all) * (size_t)parent->nall);
    if (v->nown)
        memcpy(v->all + (parent ? parent->nall : 0), v->own, sizeof(*v->all) * (size_t)v->nown);
    v->nall = n;
    v->state = 2;
    return 0;
}

void profile_none(struct fw_state *fw)
{
    memset(fw, 0, sizeof(*fw));
    fw->name = "other";
    fw->version = "";
    fw->read = "simtrain's own defaults (docs/yaml-reference.md)";
}

int profile_select(struct schema_ctx *c, const char *name, const char *version,
                   struct diag_mark name_at, struct diag_mark version_at, struct fw_state *fw)
{
    struct fw_file *f;
    struct fw_version *v;
    const char *word = version && *version ? version : NULL, *note = NULL;
    char why[160];

    profile_none(fw);
    if (!(f = profile_load_file(c, name, name_at)))
        return -1;
    v = word ? profile_pick_version(c->a, f, word, &note, why, sizeof(why))
             : profile_find_version(f, f->current);
    if (!v) {
        struct strbuf sb;
        char q[64];

        sb_init(&sb);
        for (int i = 0; i < f->nv; i++) {
            sb_addf(&sb, "%s%s", i ? ", " : "", f->v[i].name);
            for (int k = 0; k < f->v[i].nreleases; k++)
                sb_addf(&sb, ", %s", f->v[i].releases[k]);
            for (int k = 0; k < f->v[i].naliases; k++)
                sb_addf(&sb, ", %s", f->v[i].aliases[k]);
        }
        diag_clip(q, sizeof(q), word, strlen(word));
        schema_error(c, version_at,
                     "framework_version '%s' of framework '%s': %s; accepted: its versions and "
                     "their aliases (%s), a release number (0.14.4, v0.16.0, core_r0.8.0), a "
                     "container tag YY.MM[.patch] (24.09, 26.04.01), a date YYYY[-MM[-DD]], main "
                     "or latest; empty = %s",
                     q, name, strstr(why, "no version form") ? "not a version string" : why, sb.buf,
                     f->current);
        sb_release(&sb);
        return -1;
    }
    if (profile_resolve(c, f, v))
        return -1;
    fw->name = f->name;
    fw->version = v->name;
    fw->asked = word ? arena_strdup(c->a, word) : NULL;
    fw->reading = note;
    fw->read = v->read;
    fw->note = v->note;
    fw->settings = v->all;
    fw->nsettings = v->nall;
    return 0;
}
