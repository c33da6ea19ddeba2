/*
 * verify.c - the imported text through the loader before anyone sees it: a refusal of a key
 * the import wrote from a source key (hidden_size 0, heads that do not divide, a batch that
 * does not divide) is reported at that source key's line and column, so that `simtrain import`
 * never writes a scenario the loader then refuses, and `--from` names the config, not the
 * text it was translated into. Refusals of keys that no source key gave (a default, --set)
 * are printed as the loader printed them. See import_internal.h, imp_verify().
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream(), strtok_r() */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/schema.h"
#include "import/import_internal.h"

/* The entry whose line starts at byte `off` of the text, or NULL. */
static const struct imp_entry *entry_at(const struct imp *im, long off)
{
    for (size_t i = 0; i < im->nentries; i++)
        if (im->entries[i].emit_off == off)
            return &im->entries[i];
    return NULL;
}

/* Byte offset where line `line` (from 1) of text[0..len) starts, or -1. */
static long line_start(const char *text, size_t len, int line)
{
    size_t i = 0;

    for (int l = 1; l < line; l++) {
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            return -1;
        i = (size_t)(nl - text) + 1;
    }
    return (long)i;
}

/*
 * One diagnostic line of the loader, `NAME:L:C: error: MSG`: the entry it refuses (when it
 * was written from a source key) and its message; NULL otherwise.
 */
static const struct imp_entry *refused_entry(const struct imp *im, const char *name,
                                             const char *text, size_t len, const char *diag_line,
                                             const char **msg)
{
    size_t nl = strlen(name);
    const struct imp_entry *e;
    const char *p, *err;
    int line = 0;

    if (strncmp(diag_line, name, nl) != 0 || diag_line[nl] != ':')
        return NULL;
    p = diag_line + nl + 1;
    line = atoi(p);
    err = strstr(p, ": error: ");
    if (line < 1 || !err)
        return NULL;
    e = entry_at(im, line_start(text, len, line));
    if (!e || !e->src)
        return NULL;
    *msg = err + 9;
    return e;
}

/* Report the captured loader diagnostics, moved to the source keys where they can be. */
static void report(struct imp *im, const char *name, const char *text, size_t len, char *out)
{
    char *save = NULL;
    bool keep = false, raw = false; /* the excerpt lines of a diagnostic printed as it is */

    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        const char *msg = NULL;
        const struct imp_entry *e = refused_entry(im, name, text, len, l, &msg);

        if (e) {
            imp_error(im, e->src, "%s (written as '%s: %s')", msg, e->key, e->value);
            keep = false;
            continue;
        }
        if (l[0] != ' ')
            keep = strstr(l, "error: ") != NULL || (keep && strncmp(l, "note: ", 6) == 0);
        if (keep)
            fprintf(im->diag, "%s\n", l);
        raw |= keep;
    }
    if (raw)
        fprintf(im->diag, "note: '%s' is the scenario text imported from %s\n", name,
                im->rq->nfiles > 0 ? im->rq->files[0] : "?");
}

int imp_verify(struct imp *im, const char *text, size_t len)
{
    struct import_request rq = *im->rq;
    char *name = import_text_name(&rq), *out = NULL;
    size_t outlen = 0;
    FILE *cap = open_memstream(&out, &outlen);
    bool ok;

    if (!cap) {
        fprintf(stderr, "simtrain: out of memory\n");
        abort();
    }
    if (im->workload_only) {
        struct model *m = cfg_load_model_mem(name, text, len, cap);
        ok = m != NULL;
        cfg_free_model(m);
    } else {
        struct scenario *s = cfg_load_scenario_mem(name, text, len, rq.sets, rq.nsets, cap);
        ok = s != NULL;
        cfg_free(s);
    }
    fclose(cap);
    if (!ok) {
        report(im, name, text, len, out);
        im->errors++;
    }
    free(out);
    free(name);
    return ok ? 0 : -1;
}
