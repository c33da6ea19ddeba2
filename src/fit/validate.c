/*
 * validate.c - runs file in, predictions and error statistics out; see validate.h. Checks
 * the header and each row's own fields (id, metric, value), loads each hardware stem once,
 * has validate_row.c build the row's scenario, predicts it and compares the metric, then
 * summarises |error| per metric.
 */
#include "base/csv.h"
#include "fit/validate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/par.h"
#include "config/config.h"
#include "fit/fit.h"

/* Copy a string into a fixed buffer, truncating. */
static void set_str(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);

    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

const char *validate_metric_name(enum validate_metric m)
{
    static const char *const n[VM_COUNT] = { "step_time_s", "tokens_per_s_per_gpu", "peak_mem_gib",
                                             "peak_reserved_gib" };
    return (unsigned)m < VM_COUNT ? n[m] : "?";
}

/* ---- evaluating rows ------------------------------------------------------------ */

struct hw_entry {
    char *stem;
    struct hardware *hw; /* NULL when it failed to load */
    char reason[256];
};

struct runner {
    const struct validate_hooks *hooks;
    struct hw_entry *cache;
    int ncache;
    struct validate_profiles *profiles;
    struct validate_report *rep;
};

/* First "error: " message of a loader diagnostic, without its location prefix. */
static void first_error(FILE *f, char *out, size_t n)
{
    char line[512];
    const char *msg;

    out[0] = '\0';
    rewind(f);
    if (!fgets(line, sizeof(line), f))
        return;
    line[strcspn(line, "\n")] = '\0';
    msg = strstr(line, "error: ");
    set_str(out, n, msg ? msg + 7 : line);
}

static const struct hardware *default_load_hw(struct runner *ru, const char *stem, char *reason,
                                              size_t len)
{
    struct hw_entry *e;
    FILE *diag;

    for (int i = 0; i < ru->ncache; i++)
        if (!strcmp(ru->cache[i].stem, stem)) {
            set_str(reason, len, ru->cache[i].reason);
            return ru->cache[i].hw;
        }
    ru->cache = xrealloc(ru->cache, (size_t)(ru->ncache + 1) * sizeof(*ru->cache));
    e = &ru->cache[ru->ncache++];
    memset(e, 0, sizeof(*e));
    e->stem = xstrdup(stem);
    diag = tmpfile();
    e->hw = cfg_load_hardware(stem, diag ? diag : stderr);
    if (!e->hw) {
        char msg[200] = "";

        if (diag)
            first_error(diag, msg, sizeof(msg));
        snprintf(e->reason, sizeof(e->reason), "unknown hardware '%s'%s%s%s", stem,
                 msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
    }
    if (diag)
        fclose(diag);
    set_str(reason, len, e->reason);
    return e->hw;
}

static void note_hardware(struct validate_report *rep, const char *stem, const struct hardware *hw)
{
    for (int i = 0; i < rep->nhw; i++)
        if (!strcmp(rep->hw[i].stem, stem))
            return;
    rep->hw = xrealloc(rep->hw, (size_t)(rep->nhw + 1) * sizeof(*rep->hw));
    rep->hw[rep->nhw].stem = xstrdup(stem);
    rep->hw[rep->nhw].calibration = hw && hw->calibration ? xstrdup(hw->calibration) : NULL;
    rep->nhw++;
}

static double metric_of(enum validate_metric m, const struct prediction *p)
{
    switch (m) {
    case VM_STEP_TIME:
        return p->step_time_s;
    case VM_TOKENS_PER_GPU:
        return p->tokens_per_s_per_gpu;
    case VM_PEAK_RESERVED: /* torch.cuda.max_memory_reserved: tensors and the allocator's reserve */
        return p->peak_reserved_bytes / (1024.0 * 1024 * 1024);
    default:
        return p->peak_mem_bytes / (1024.0 * 1024 * 1024);
    }
}

/*
 * What a measurement can be, per metric: a step from 1 us to SIM_STEP_LIMIT (1e6 s), up to
 * 10^9 tokens per second per GPU (a GPU's ~1e15 FLOP/s over 6 FLOP per parameter per token
 * of a 10^5-parameter model), memory up to SIM_MEM_LIMIT (2^28 GiB). Beyond them the relative
 * error overflows or underflows (1e308 gave -inf in --json), so a value outside is refused.
 */
static const double measured_range[VM_COUNT][2] = {
    [VM_STEP_TIME] = { 1e-6, 1e6 },
    [VM_TOKENS_PER_GPU] = { 1e-6, 1e9 },
    [VM_PEAK_MEM] = { 1e-6, 268435456.0 },
    [VM_PEAK_RESERVED] = { 1e-6, 268435456.0 },
};

/* The row's own fields: id, metric and measured value, before any simulation. */
static int read_row_head(struct runner *ru, int i, const int *col, struct validate_row *r)
{
    const struct csv_table *t = ru->rep->csv;
    const char *v = csv_field(t, i, col[C_VALUE]);
    const char *end;

    r->line = t->rows[i].line;
    r->id = csv_field(t, i, col[C_ID]);
    r->hardware = csv_field(t, i, col[C_HARDWARE]);
    r->metric_name = csv_field(t, i, col[C_METRIC]);
    r->metric = -1;
    r->measured = NAN;
    for (int m = 0; m < VM_COUNT; m++)
        if (!strcmp(r->metric_name, validate_metric_name((enum validate_metric)m)))
            r->metric = m;
    if (t->rows[i].nfields != t->ncols) {
        snprintf(r->reason, sizeof(r->reason), "row has %d fields, the header has %d",
                 t->rows[i].nfields, t->ncols);
        return -1;
    }
    if (!*r->id) {
        snprintf(r->reason, sizeof(r->reason), "missing value for required column 'id'");
        return -1;
    }
    for (int j = 0; j < i; j++)
        if (!strcmp(ru->rep->rows[j].id, r->id)) {
            snprintf(r->reason, sizeof(r->reason), "duplicate id '%s' (first on line %d)", r->id,
                     ru->rep->rows[j].line);
            return -1;
        }
    if (r->metric < 0) {
        snprintf(r->reason, sizeof(r->reason),
                 "unknown metric '%s' (expected step_time_s, tokens_per_s_per_gpu, peak_mem_gib "
                 "or peak_reserved_gib)",
                 r->metric_name);
        return -1;
    }
    r->measured = csv_strtod(v, &end);
    if (!*v || *end || !(r->measured > 0) || !isfinite(r->measured)) {
        snprintf(r->reason, sizeof(r->reason), "value '%s' is not a positive number", v);
        r->measured = NAN;
        return -1;
    }
    if (r->measured < measured_range[r->metric][0] || r->measured > measured_range[r->metric][1]) {
        snprintf(r->reason, sizeof(r->reason),
                 "value '%s' is outside what a %s can measure (%g to %g)", v, r->metric_name,
                 measured_range[r->metric][0], measured_range[r->metric][1]);
        r->measured = NAN;
        return -1;
    }
    return 0;
}

/* A row between its reading and its comparison: the scenario to predict, the prediction. */
struct pending {
    bool predict; /* the row reached its prediction */
    int rc;       /* the predictor's status */
    struct scenario s;
    struct prediction p;
    char reason[256];
};

/* Everything of row i before its prediction (serial: the caches of hardware and profiles). */
static void prepare_row(struct runner *ru, int i, const int *col, struct pending *pd)
{
    struct validate_row *r = &ru->rep->rows[i];
    const struct hardware *hw;
    char reason[256] = "";

    if (read_row_head(ru, i, col, r))
        return;
    hw = ru->hooks && ru->hooks->load_hw
             ? ru->hooks->load_hw(r->hardware, reason, sizeof(reason), ru->hooks->ctx)
             : default_load_hw(ru, r->hardware, reason, sizeof(reason));
    note_hardware(ru->rep, r->hardware, hw);
    if (!hw) {
        snprintf(r->reason, sizeof(r->reason), "%s",
                 reason[0] ? reason : "cannot load the hardware description");
        return;
    }
    if (validate_row_scenario(ru->rep->csv, i, hw, ru->profiles, &pd->s, r->reason,
                              sizeof(r->reason)))
        return;
    r->reading = pd->s.fw.reading;
    band_regime_of(&pd->s, &r->regime);
    pd->predict = true;
}

struct predict_ctx {
    const struct validate_hooks *hooks;
    struct pending *pd;
};

/* The prediction of one prepared row: independent of every other row (par_for()). */
static void predict_row(void *ctx, long i)
{
    const struct predict_ctx *c = ctx;
    const struct validate_hooks *h = c->hooks;
    struct pending *pd = &c->pd[i];

    if (!pd->predict)
        return;
    memset(&pd->p, 0, sizeof(pd->p));
    pd->reason[0] = '\0';
    pd->rc = h && h->predict ? h->predict(&pd->s, &pd->p, pd->reason, sizeof(pd->reason), h->ctx)
                             : predict_scenario(&pd->s, &pd->p, pd->reason, sizeof(pd->reason));
}

/* The comparison of a predicted row with its measurement. */
static void finish_row(struct validate_row *r, const struct pending *pd)
{
    const struct prediction *p = &pd->p;

    if (!pd->predict)
        return;
    if (pd->rc) {
        set_str(r->reason, sizeof(r->reason), pd->reason[0] ? pd->reason : "simulation failed");
        return;
    }
    if (!p->fits && r->metric != VM_PEAK_MEM && r->metric != VM_PEAK_RESERVED) {
        snprintf(r->reason, sizeof(r->reason),
                 "does not fit: predicted peak %.1f GiB per GPU exceeds %.1f GiB",
                 p->peak_mem_bytes / (1024.0 * 1024 * 1024),
                 p->capacity_bytes / (1024.0 * 1024 * 1024));
        return;
    }
    r->predicted = metric_of((enum validate_metric)r->metric, p);
    if (!(r->predicted > 0) || !isfinite(r->predicted)) {
        snprintf(r->reason, sizeof(r->reason), "prediction is not a positive number (%g)",
                 r->predicted);
        return;
    }
    r->error_pct = 100 * (r->predicted - r->measured) / r->measured;
    r->ok = true;
}

void validate_group_stats(const struct validate_report *rep, enum validate_metric m,
                          const char *prefix, struct validate_stats *st)
{
    double *v = xmalloc((size_t)(rep->nrows ? rep->nrows : 1) * sizeof(*v));
    size_t plen = prefix && strcmp(prefix, "*") ? strlen(prefix) : 0;
    double sum = 0;

    memset(st, 0, sizeof(*st));
    for (int i = 0; i < rep->nrows; i++) {
        const struct validate_row *r = &rep->rows[i];

        if (r->metric != (int)m || (plen && strncmp(r->id, prefix, plen)))
            continue;
        if (!r->ok) {
            st->errors++;
            continue;
        }
        v[st->n++] = fabs(r->error_pct);
        sum += fabs(r->error_pct);
    }
    if (st->n) {
        st->mean = sum / st->n;
        st->median = fit_quantile(v, st->n, 0.5);
        st->p90 = fit_quantile(v, st->n, 0.9);
        st->max = fit_quantile(v, st->n, 1.0);
    }
    free(v);
}

static void summarize(struct validate_report *rep)
{
    for (int m = 0; m < VM_COUNT; m++)
        validate_group_stats(rep, (enum validate_metric)m, "*", &rep->stats[m]);
}

int validate_table(struct csv_table *t, const struct validate_hooks *hooks,
                   struct validate_report *out, FILE *diag)
{
    struct runner ru = { .hooks = hooks, .rep = out };
    struct predict_ctx pc = { .hooks = hooks };
    struct pending *pd;
    int col[C_COUNT];

    memset(out, 0, sizeof(*out));
    out->csv = t;
    out->path = t->name;
    validate_find_columns(t, col);
    if (validate_check_header(t, col, diag))
        return -1;
    out->rows = xcalloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*out->rows));
    out->nrows = t->nrows;
    ru.profiles = out->profiles = validate_profiles_new();
    pd = xcalloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*pd));
    for (int i = 0; i < t->nrows; i++)
        prepare_row(&ru, i, col, &pd[i]);
    pc.pd = pd;
    par_for(hooks && hooks->jobs > 1 ? hooks->jobs : 1, t->nrows, predict_row, &pc);
    for (int i = 0; i < t->nrows; i++)
        finish_row(&out->rows[i], &pd[i]);
    free(pd);
    summarize(out);
    for (int i = 0; i < ru.ncache; i++) {
        free(ru.cache[i].stem);
        cfg_free_hw(ru.cache[i].hw);
    }
    free(ru.cache);
    return 0;
}

int validate_file(const char *path, const struct validate_hooks *hooks, struct validate_report *out,
                  FILE *diag)
{
    struct csv_error err;
    struct csv_table *t = csv_read_file(path, &err);

    if (!t) {
        memset(out, 0, sizeof(*out));
        if (diag)
            csv_print_error(path, &err, diag);
        return -1;
    }
    return validate_table(t, hooks, out, diag);
}

void validate_release(struct validate_report *r)
{
    for (int i = 0; i < r->nhw; i++) {
        free(r->hw[i].stem);
        free(r->hw[i].calibration);
    }
    free(r->hw);
    free(r->rows);
    csv_free(r->csv);
    validate_profiles_free(r->profiles);
    memset(r, 0, sizeof(*r));
}
