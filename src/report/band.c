/*
 * band.c - the interval of a predicted step time from the validation residuals of its regime;
 * see band.h. The table is read once (pthread_once: `simtrain serve` reports from threads).
 */
#include "report/band.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/csv.h"
#include "base/paths.h"
#include "base/util.h"
#include "model/workload.h"

#define TABLE_PATH "hardware/calibration/error-bands.csv"

static const char *const dim_name[BD_COUNT] = { "gpu", "stack", "kind", "size", "seq" };
static const char *const dim_text[BD_COUNT] = { "GPU generation", "stack", "parallel kind",
                                                "model size", "sequence length" };

/* Relaxations tried in order, each a set of dimensions left unmatched (bits of enum band_dim). */
#define R(d) (1u << (d))
static const unsigned relaxations[] = {
    0,
    R(BD_SEQ),
    R(BD_SIZE),
    R(BD_SEQ) | R(BD_SIZE),
    R(BD_GPU),
    R(BD_GPU) | R(BD_SEQ),
    R(BD_GPU) | R(BD_SIZE),
    R(BD_GPU) | R(BD_SEQ) | R(BD_SIZE),
    R(BD_STACK) | R(BD_SEQ) | R(BD_SIZE),
};

const char *band_dim_name(enum band_dim d)
{
    return (unsigned)d < BD_COUNT ? dim_name[d] : "?";
}

const char *band_dim_text(enum band_dim d)
{
    return (unsigned)d < BD_COUNT ? dim_text[d] : "?";
}

/* Copy w into dst[n], cut to n - 1 bytes as snprintf's "%s" would (without its cost: the
 * table's 1,000 rows took 6,000 snprintf calls, 4 M instructions of every report). */
static void copy_cut(char *dst, size_t n, const char *w)
{
    size_t len = 0;

    while (len + 1 < n && w[len])
        len++;
    memcpy(dst, w, len);
    dst[len] = '\0';
}

static void set_word(struct band_regime *r, enum band_dim d, const char *w)
{
    copy_cut(r->word[d], sizeof(r->word[d]), w);
}

void band_regime_of(const struct scenario *s, struct band_regime *out)
{
    const struct parallelism *p = &s->par;
    double params = workload_params_total(&s->model);
    int seq = s->train.seq_len;
    bool model_parallel = p->tp > 1 || p->pp > 1 || p->cp > 1 || p->ep > 1;
    bool sharded =
        p->sharding == SHARD_ZERO3 || p->sharding == SHARD_FSDP || p->sharding == SHARD_HSDP;

    memset(out, 0, sizeof(*out));
    set_word(out, BD_GPU, arch_name(s->hw.gpu.arch));
    set_word(out, BD_STACK, s->fw.name && *s->fw.name ? s->fw.name : "other");
    set_word(out, BD_KIND, model_parallel ? "model-parallel" : sharded ? "sharded" : "replicated");
    set_word(out, BD_SIZE, params < 3e9 ? "<3B" : params < 30e9 ? "3-30B" : ">=30B");
    set_word(out, BD_SEQ, seq <= 2048 ? "<=2k" : seq <= 8192 ? "4k-8k" : ">=16k");
}

/* ---- the table ---------------------------------------------------------------------------- */

struct band_entry {
    struct band_regime reg;
    char set[48]; /* runs file name */
    double ratio; /* measured / predicted step time */
};

static struct {
    struct band_entry *e;
    int n;
    char *path; /* NULL when no table was found */
} table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static char *table_path(void)
{
    const char *dirs[2] = { getenv("SIMTRAIN_DATA"), paths_data_dir() };

    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *cand;
        FILE *f;
        if (!dirs[i] || !*dirs[i])
            continue;
        cand = xasprintf("%s/%s", dirs[i], TABLE_PATH);
        f = fopen(cand, "r");
        if (f) {
            fclose(f);
            return cand;
        }
        free(cand);
    }
    return NULL;
}

static void load_table(void)
{
    struct csv_error err;
    struct csv_table *t;
    int col[BD_COUNT], cset, cratio;

    table.path = table_path();
    if (!table.path || !(t = csv_read_file(table.path, &err)))
        return;
    for (int d = 0; d < BD_COUNT; d++)
        col[d] = csv_column(t, dim_name[d]);
    cset = csv_column(t, "set");
    cratio = csv_column(t, "measured_over_predicted");
    table.e = xcalloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*table.e));
    for (int i = 0; i < t->nrows; i++) {
        struct band_entry *e = &table.e[table.n];
        char *end;
        const char *v = csv_field(t, i, cratio);

        e->ratio = strtod(v, &end);
        if (!*v || *end || !(e->ratio > 0) || !isfinite(e->ratio))
            continue;
        for (int d = 0; d < BD_COUNT; d++)
            set_word(&e->reg, (enum band_dim)d, csv_field(t, i, col[d]));
        copy_cut(e->set, sizeof(e->set), csv_field(t, i, cset));
        table.n++;
    }
    csv_free(t);
}

static bool matches(const struct band_regime *a, const struct band_regime *b, unsigned relaxed)
{
    for (int d = 0; d < BD_COUNT; d++)
        if (!(relaxed & R(d)) && strcmp(a->word[d], b->word[d]))
            return false;
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted v[0..n) by linear interpolation between order statistics. */
static double sorted_quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;

    return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[n - 1];
}

static void note_set(struct band *b, const char *set)
{
    size_t len = strlen(b->sets);
    const char *p = strstr(b->sets, set);

    if (p && (p == b->sets || p[-1] == ' ') && (p[strlen(set)] == ',' || !p[strlen(set)]))
        return;
    snprintf(b->sets + len, sizeof(b->sets) - len, "%s%s", len ? ", " : "", set);
}

void band_lookup(const struct scenario *s, double step_s, struct band *out)
{
    double *v;

    memset(out, 0, sizeof(*out));
    band_regime_of(s, &out->regime);
    pthread_once(&table_once, load_table);
    out->table = table.path;
    if (!table.n)
        return;
    v = xmalloc((size_t)table.n * sizeof(*v));
    for (size_t k = 0; k < ARRAY_LEN(relaxations) && !out->found; k++) {
        int n = 0;
        for (int i = 0; i < table.n; i++)
            if (matches(&table.e[i].reg, &out->regime, relaxations[k]))
                v[n++] = table.e[i].ratio;
        if (n < BAND_MIN_RUNS)
            continue;
        qsort(v, (size_t)n, sizeof(*v), cmp_double);
        out->found = true;
        out->n = n;
        out->relaxed = relaxations[k];
        out->q10 = sorted_quantile(v, n, 0.1);
        out->q90 = sorted_quantile(v, n, 0.9);
        out->lo_s = fmin(step_s, step_s * out->q10);
        out->hi_s = fmax(step_s, step_s * out->q90);
        for (int i = 0; i < table.n; i++)
            if (matches(&table.e[i].reg, &out->regime, relaxations[k]))
                note_set(out, table.e[i].set);
    }
    free(v);
}

void band_fmt(const struct band *b, char *buf, size_t n)
{
    if (!b->found)
        snprintf(buf, n, "no measured run near it");
    else if (b->hi_s < 1)
        snprintf(buf, n, "%.1f - %.1f ms", b->lo_s * 1e3, b->hi_s * 1e3);
    else
        snprintf(buf, n, "%.2f - %.2f s", b->lo_s, b->hi_s);
}

void band_basis_text(const struct band *b, char *buf, size_t n)
{
    size_t len;

    if (!b->table) {
        snprintf(buf, n, "no table of validation residuals (%s) was found", TABLE_PATH);
        return;
    }
    if (!b->found) {
        snprintf(buf, n,
                 "no measured run near it: fewer than %d validation runs share its parallel "
                 "kind (%s) with its stack (%s) or its GPU generation (%s)",
                 BAND_MIN_RUNS, b->regime.word[BD_KIND], b->regime.word[BD_STACK],
                 b->regime.word[BD_GPU]);
        return;
    }
    snprintf(buf, n, "%d runs of %s:", b->n, b->sets);
    for (int d = 0; d < BD_COUNT; d++) {
        len = strlen(buf);
        if (!(b->relaxed & R(d)))
            snprintf(buf + len, n - len, " %s", b->regime.word[d]);
    }
    if (b->relaxed) {
        const char *sep = "; not matched: ";
        for (int d = 0; d < BD_COUNT; d++)
            if (b->relaxed & R(d)) {
                len = strlen(buf);
                snprintf(buf + len, n - len, "%s%s", sep, dim_text[d]);
                sep = ", ";
            }
    }
}

/* ---- writing ------------------------------------------------------------------------------- */

void band_write_header(FILE *f)
{
    fprintf(f, "set,id,gpu,stack,kind,size,seq,measured_over_predicted\n");
}

void band_write_row(FILE *f, const char *set, const char *id, const struct band_regime *r,
                    double ratio)
{
    fprintf(f, "%s,\"", set);
    for (const char *c = id; *c; c++)
        fprintf(f, *c == '"' ? "\"\"" : "%c", *c);
    fputc('"', f);
    for (int d = 0; d < BD_COUNT; d++)
        fprintf(f, ",%s", r->word[d]);
    fprintf(f, ",%.4f\n", ratio);
}
