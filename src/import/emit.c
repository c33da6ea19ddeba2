/*
 * emit.c - the text of an import: a header naming the sources, every scenario key in the
 * order the schema lists it (config/schema.c, so the file reads like the shipped scenarios),
 * nested by section, each with its comment, then the list of source keys ignored or
 * approximated, those --strict refuses marked.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream() */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/schema.h"
#include "import/import_internal.h"

#define COMMENT_COLUMN 40

/* The position of dotted key `key` in a depth-first walk of `sec`; -1 when it has none. */
static int rank_in(const struct section *sec, const char *prefix, const char *key, int *counter)
{
    char path[160];

    for (size_t i = 0; i < sec->nfields; i++) {
        const struct field *f = &sec->fields[i];
        int r;

        snprintf(path, sizeof(path), "%s%s", prefix, f->key);
        if (f->type == FT_SECTION && f->sub) {
            char sub[170];
            snprintf(sub, sizeof(sub), "%s.", path);
            if ((r = rank_in(f->sub, sub, key, counter)) >= 0)
                return r;
            continue;
        }
        if (f->type == FT_REF && strcmp(f->key, "workload") == 0) {
            (*counter)++;
            if (strcmp(key, "workload") == 0)
                return *counter;
            if ((r = rank_in(&schema_workload, "workload.", key, counter)) >= 0)
                return r;
            continue;
        }
        (*counter)++;
        if (strcmp(path, key) == 0)
            return *counter;
    }
    return -1;
}

/*
 * The order of a key: its place in the schema; a key the schema lacks (written commented, for
 * keys simtrain does not read yet) goes after the last known key of its section.
 */
static double rank(const struct imp *im, const char *key)
{
    int counter = 0, r;
    char sect[160];
    const char *dot;
    double last = -1;

    r = im->workload_only ? rank_in(&schema_workload, "", key, &counter)
                          : rank_in(&schema_scenario, "", key, &counter);
    if (r >= 0)
        return r;
    dot = strrchr(key, '.');
    snprintf(sect, sizeof(sect), "%.*s", dot ? (int)(dot - key) : 0, key);
    for (size_t i = 0; i < im->nentries; i++) {
        const char *k = im->entries[i].key, *d = strrchr(k, '.');
        int kr;
        if (im->entries[i].commented || !d || (size_t)(d - k) != strlen(sect) ||
            strncmp(k, sect, strlen(sect)) != 0)
            continue;
        counter = 0;
        kr = im->workload_only ? rank_in(&schema_workload, "", k, &counter)
                               : rank_in(&schema_scenario, "", k, &counter);
        if (kr > last)
            last = kr;
    }
    return last + 0.5;
}

struct ranked {
    const struct imp_entry *e;
    double rank;
};

static int by_rank(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->rank < y->rank || x->rank > y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->e->seq < y->e->seq ? -1 : x->e->seq > y->e->seq;
}

/* Components of a dotted key shared with the previous one. */
static int common_depth(const char *a, const char *b)
{
    int depth = 0;
    const char *da, *db;

    while (a && b && (da = strchr(a, '.')) && (db = strchr(b, '.')) && da - a == db - b &&
           strncmp(a, b, (size_t)(da - a)) == 0) {
        depth++;
        a = da + 1;
        b = db + 1;
    }
    return depth;
}

static void line(FILE *f, int indent, bool commented, const char *key, size_t keylen,
                 const char *value, const char *comment)
{
    int n = fprintf(f, "%*s%s%.*s:%s%s", 2 * indent, "", commented ? "# " : "", (int)keylen, key,
                    value ? " " : "", value ? value : "");

    if (comment && *comment)
        fprintf(f, "%*s# %s", n < COMMENT_COLUMN - 1 ? COMMENT_COLUMN - n : 2, "", comment);
    fputc('\n', f);
}

static void write_entries(struct imp *im, FILE *f)
{
    struct ranked *r = xcalloc(im->nentries ? im->nentries : 1, sizeof(*r));
    const char *prev = NULL;

    for (size_t i = 0; i < im->nentries; i++)
        r[i] = (struct ranked){ &im->entries[i], rank(im, im->entries[i].key) };
    qsort(r, im->nentries, sizeof(*r), by_rank);
    for (size_t i = 0; i < im->nentries; i++) {
        const struct imp_entry *e = r[i].e;
        int depth = prev ? common_depth(prev, e->key) : 0, d = 0;
        const char *k = e->key, *dot;

        /* open the sections this key needs beyond those the previous one opened */
        while ((dot = strchr(k, '.'))) {
            if (d >= depth)
                line(f, d, false, k, (size_t)(dot - k), NULL, NULL);
            k = dot + 1;
            d++;
        }
        im->entries[e - im->entries].emit_off = ftell(f);
        line(f, d, e->commented, k, strlen(k), e->value, e->comment);
        prev = e->key;
    }
    free(r);
}

static void write_header(struct imp *im, FILE *f)
{
    const struct import_request *rq = im->rq;

    fprintf(f, "# %s imported by `simtrain import %s` from:\n",
            im->workload_only ? "simtrain workload" : "simtrain scenario",
            import_kind_name(rq->kind));
    for (int i = 0; i < im->nfiles; i++)
        fprintf(f, "#   %s (%s)\n", im->files[i].path, im->files[i].role);
    if (rq->command)
        fprintf(f, "# command: %s\n", rq->command);
    fprintf(f, "# Each key names the source file, line and key it comes from, or the default it\n"
               "# takes and where that default is defined. Edit freely; docs/import.md has the\n"
               "# mapping. The keys ignored or approximated are listed at the end.\n");
}

static const char *fate_word(enum imp_fate f)
{
    switch (f) {
    case FATE_APPROX:
        return "approximated";
    case FATE_DROPPED:
        return "ignored";
    case FATE_NOTE:
        return "note";
    default:
        return "ignored";
    }
}

static void write_notes(struct imp *im, FILE *f)
{
    bool any = false;

    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < im->nnotes; i++) {
            const struct imp_note *n = &im->notes[i];
            bool cost = n->fate == FATE_APPROX || n->fate == FATE_DROPPED;
            int ln = 0, col = 0;

            /* those that affect memory or time first, then the rest */
            if ((pass == 0) != cost)
                continue;
            if (!any) {
                fprintf(f, "\n# Ignored or approximated (* affects memory or step time; "
                           "--strict refuses it):\n");
                any = true;
            }
            if (n->at && n->at->src)
                diag_locate(n->at->src, n->at->off, &ln, &col);
            fprintf(f, "# %s ", cost ? "*" : "-");
            if (n->at && n->at->src) {
                const char *base = strrchr(n->at->src->path, '/');
                fprintf(f, "%s:%d:%d ", base ? base + 1 : n->at->src->path, ln, col);
            }
            fprintf(f, "%s: %s\n", fate_word(n->fate), n->text);
        }
    if (!any)
        fprintf(f, "\n# Nothing was ignored or approximated.\n");
}

char *imp_emit(struct imp *im, size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);

    if (!f) {
        fprintf(stderr, "simtrain: out of memory\n");
        abort();
    }
    write_header(im, f);
    write_entries(im, f);
    write_notes(im, f);
    fclose(f);
    if (len)
        *len = n;
    return text;
}
