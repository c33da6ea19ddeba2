/*
 * import.c - one import from the request to the text: the hardware it is for, the kind's
 * translation, the --strict pass over what was ignored or approximated, the text (emit.c).
 */
#define _DEFAULT_SOURCE /* realpath() */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "import/import_internal.h"

static const char *const kind_names[IMPORT_KIND_COUNT] = {
    [IMPORT_HF_CONFIG] = "hf-config", [IMPORT_AXOLOTL] = "axolotl",
    [IMPORT_DEEPSPEED] = "deepspeed", [IMPORT_ACCELERATE] = "accelerate",
    [IMPORT_MEGATRON] = "megatron",
};

int import_kind_parse(const char *name, enum import_kind *out)
{
    for (int k = 0; k < IMPORT_KIND_COUNT; k++)
        if (name && strcmp(name, kind_names[k]) == 0) {
            *out = (enum import_kind)k;
            return 0;
        }
    return -1;
}

const char *import_kind_name(enum import_kind k)
{
    return k >= 0 && k < IMPORT_KIND_COUNT ? kind_names[k] : "?";
}

const char *import_kind_list(void)
{
    return "hf-config, axolotl, deepspeed, accelerate or megatron";
}

char *import_text_name(const struct import_request *rq)
{
    return xasprintf("<imported from %s>", rq->nfiles > 0 ? rq->files[0] : "?");
}

/* How many files each kind takes: hf-config, axolotl, deepspeed, megatron one; accelerate 1-2. */
static int check_files(struct imp *im)
{
    const struct import_request *rq = im->rq;
    int most = rq->kind == IMPORT_ACCELERATE ? 2 : 1;

    if (rq->nfiles < 1)
        return imp_error(im, NULL, "import %s: no file given", import_kind_name(rq->kind));
    if (rq->nfiles > most)
        return imp_error(im, NULL,
                         "import %s takes %s file (got %d); the files a config names (Axolotl's "
                         "deepspeed:, accelerate's deepspeed_config_file) are followed",
                         import_kind_name(rq->kind), most == 1 ? "one" : "one or two", rq->nfiles);
    if (!rq->hardware && rq->kind != IMPORT_HF_CONFIG)
        return imp_error(im, NULL, "import %s needs --hardware (the GPUs it runs on)",
                         import_kind_name(rq->kind));
    return 0;
}

/* The position of a note's key: its file's place among the sources, then the byte offset. */
static long long note_pos(const struct imp *im, const struct imp_note *n)
{
    for (int i = 0; n->at && i < im->nfiles; i++)
        if (n->at->src == &im->files[i].doc->src)
            return (long long)i << 40 | (long long)n->at->off;
    return (long long)IMP_MAX_FILES << 40;
}

/* Every approximated or dropped key that affects memory or time becomes an error, in the
 * order of the files and of the keys in them. */
static int strict_pass(struct imp *im)
{
    int before = im->errors;
    size_t *order = xcalloc(im->nnotes ? im->nnotes : 1, sizeof(*order));

    for (size_t i = 0; i < im->nnotes; i++)
        order[i] = i;
    for (size_t i = 1; i < im->nnotes; i++) /* insertion sort: stable, a few dozen notes */
        for (size_t j = i;
             j > 0 && note_pos(im, &im->notes[order[j - 1]]) > note_pos(im, &im->notes[order[j]]);
             j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t k = 0; k < im->nnotes; k++) {
        const struct imp_note *n = &im->notes[order[k]];
        if (n->fate != FATE_APPROX && n->fate != FATE_DROPPED)
            continue;
        imp_error(im, n->at, "%s, and it affects memory or step time (--strict): %s",
                  n->fate == FATE_APPROX ? "approximated" : "not modelled", n->text);
    }
    free(order);
    return im->errors > before ? -1 : 0;
}

/* The `hardware:` value: a shipped name as it is, a path made absolute (the text may move). */
static void put_hardware(struct imp *im)
{
    const char *h = im->rq->hardware;
    char *abs;

    if (!strchr(h, '/') && !strstr(h, ".yaml")) {
        imp_put(im, "hardware", h, "--hardware");
        return;
    }
    abs = realpath(h, NULL);
    imp_put(im, "hardware", abs ? abs : h, imp_fmt(im, "--hardware %s", h));
    free(abs);
}

static int run_kind(struct imp *im)
{
    switch (im->rq->kind) {
    case IMPORT_HF_CONFIG:
        return imp_hf_config_kind(im);
    case IMPORT_AXOLOTL:
        return imp_axolotl(im);
    case IMPORT_DEEPSPEED:
        return imp_deepspeed_kind(im);
    case IMPORT_ACCELERATE:
        return imp_accelerate(im);
    case IMPORT_MEGATRON:
        return imp_megatron(im);
    default:
        return imp_error(im, NULL, "unknown import kind");
    }
}

/*
 * --set values written into the text over what the sources said, so that the text loads as
 * --from with the same --set does. Hardware keys stay with the hardware the text names (the
 * loader applies them under --from; `simtrain import` refuses them).
 */
static int apply_sets(struct imp *im)
{
    for (int i = 0; i < im->rq->nsets; i++) {
        const char *key = im->rq->sets[i].key, *value = im->rq->sets[i].value;
        const char *old = imp_get(im, key);
        const struct imp_entry *e = NULL;

        if (strcmp(key, "hardware") == 0 || strncmp(key, "hardware.", 9) == 0) {
            if (im->rq->to_file)
                return imp_error(im, NULL,
                                 "--set %s: the import names its hardware (--hardware); set "
                                 "hardware keys with --from, or in a hardware file",
                                 key);
            continue;
        }
        if (im->workload_only) {
            if (strncmp(key, "workload.", 9) != 0)
                return imp_error(im, NULL, "--set %s: a workload import takes workload.* keys",
                                 key);
            key += 9;
            old = imp_get(im, key);
        }
        for (size_t j = 0; j < im->nentries; j++)
            if (strcmp(im->entries[j].key, key) == 0)
                e = &im->entries[j];
        if (e && strncmp(e->comment, "--set", 5) == 0) {
            imp_put(im, key, value, e->comment);
            continue;
        }
        imp_put(im, key, value,
                old ? imp_fmt(im, "--set %s=%s (the import said %s: %s)", key, value, old,
                              e ? e->comment : "")
                    : imp_fmt(im, "--set %s=%s", key, value));
    }
    return 0;
}

/* The scenario's name: the first file's base name without its extension. */
static void put_name(struct imp *im)
{
    const char *p = im->rq->files[0], *base = strrchr(p, '/'), *dot;
    char name[128];

    base = base ? base + 1 : p;
    dot = strrchr(base, '.');
    snprintf(name, sizeof(name), "%.*s", dot && dot > base ? (int)(dot - base) : (int)strlen(base),
             base);
    imp_putf(im, "name", imp_fmt(im, "the base name of %s", p), "\"%s\"", name);
}

char *import_scenario(const struct import_request *rq, FILE *diag, size_t *len)
{
    struct imp im;
    char *text = NULL;
    size_t n = 0;
    int rc;

    memset(&im, 0, sizeof(im));
    arena_init(&im.a);
    im.diag = diag;
    im.rq = rq;
    im.workload_only = rq->kind == IMPORT_HF_CONFIG && !rq->hardware;
    rc = check_files(&im);
    if (rc == 0 && rq->hardware) {
        im.hw = cfg_load_hardware(rq->hardware, diag);
        if (!im.hw)
            rc = -1;
    }
    if (rc == 0 && !im.workload_only) {
        put_name(&im);
        put_hardware(&im);
    }
    if (rc == 0)
        rc = run_kind(&im);
    if (rc == 0 && im.errors == 0)
        rc = apply_sets(&im);
    if (rc == 0 && im.errors == 0 && rq->strict)
        rc = strict_pass(&im);
    if (rc == 0 && im.errors == 0)
        text = imp_emit(&im, &n);
    if (len)
        *len = n;
    if (text && imp_verify(&im, text, n)) {
        free(text);
        text = NULL;
    }
    cfg_free_hw(im.hw);
    free(im.entries);
    free(im.notes);
    arena_release(&im.a);
    return text;
}
