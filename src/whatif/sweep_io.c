/*
 * sweep_io.c - what `simtrain sweep` writes and reads back (see sweep.h): the
 * CSV (RFC 4180) and JSON rows of the points, the one-screen text table, and
 * the merge of shard CSV files into one sweep for the efficiencies.
 */
#include "whatif/sweep.h"

#include <stdlib.h>
#include <string.h>

#include "base/csv.h"
#include "report/band.h"
#include "report/report.h"

/* ---- CSV and JSON ------------------------------------------------------------------------- */

static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void underscores(char *buf)
{
    for (size_t i = 0; buf[i]; i++)
        if (buf[i] == ' ' || buf[i] == '/')
            buf[i] = '_';
        else if (buf[i] >= 'A' && buf[i] <= 'Z')
            buf[i] = (char)(buf[i] - 'A' + 'a');
}

/* Column name of a time category: "time_tp_comm_s". */
static void tcat_column(int c, char *buf, size_t n)
{
    snprintf(buf, n, "time_%s_s", tcat_name(c));
    underscores(buf);
}

/* Column name of a memory category: "memory_optimizer_states_bytes". */
static void mcat_column(int c, char *buf, size_t n)
{
    snprintf(buf, n, "memory_%s_bytes", mcat_name(c));
    underscores(buf);
}

static const char *const metric_cols[] = {
    "gpus",
    "nodes",
    "dp",
    "tp",
    "pp",
    "vpp",
    "cp",
    "ep",
    "micro_batch",
    "global_batch",
    "step_time_s",
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "mfu",
    "peak_memory_bytes",
    "capacity_bytes",
    "group",
    "base_index",
    "speedup",
    "strong_scaling_eff",
    "weak_scaling_eff",
    "time_to_train_s",
    "gpu_hours",
    "cost_usd",
    "energy_J",
    "step_time_lo_s",
    "step_time_hi_s",
};

/* The numbers of a point in metric_cols order; *ok[i] false = empty field. */
static int point_numbers(const struct sweep_point *p, double *v, bool *ok)
{
    bool sim = sweep_point_simulated(p), lay = p->gpus > 0;
    bool eff = sim && p->base >= 0;
    int n = 0;

#define PUT(val, cond) (v[n] = (val), ok[n++] = (cond))
    PUT(p->gpus, lay);
    PUT(p->nodes, lay);
    PUT(p->dp, lay);
    PUT(p->tp, lay);
    PUT(p->pp, lay);
    PUT(p->vpp, lay);
    PUT(p->cp, lay);
    PUT(p->ep, lay);
    PUT(p->micro_batch, lay);
    PUT(p->global_batch, lay);
    PUT(p->step_s, sim);
    PUT(p->tokens_per_s, sim);
    PUT(p->tokens_per_s_per_gpu, sim);
    PUT(p->mfu, sim);
    PUT(p->peak_bytes, sim);
    PUT(p->capacity_bytes, sim);
    PUT(p->group, p->group >= 0);
    PUT((double)p->base, p->base >= 0);
    PUT(p->speedup, eff);
    PUT(p->strong_eff, eff);
    PUT(p->weak_eff, eff);
    PUT(p->tt.seconds, sim && p->tt.have_tokens);
    PUT(p->tt.gpu_hours, sim && p->tt.have_tokens);
    PUT(p->tt.cost_usd, sim && p->tt.have_tokens && p->tt.have_price);
    PUT(p->tt.energy_J, sim && p->tt.have_tokens && p->tt.have_power);
    PUT(p->step_lo_s, sim && p->step_hi_s > 0);
    PUT(p->step_hi_s, sim && p->step_hi_s > 0);
#undef PUT
    return n;
}

static void num_field(FILE *f, bool ok, double v)
{
    if (ok)
        fprintf(f, ",%.10g", v);
    else
        fputc(',', f);
}

void sweep_csv_header(const struct sweep *sw, FILE *f)
{
    char col[48];

    fputs("index", f);
    for (int a = 0; a < sw->naxes; a++) {
        fputc(',', f);
        csv_text(f, sw->axes[a].key);
    }
    fputs(",status,scaling", f);
    for (size_t c = 0; c < ARRAY_LEN(metric_cols); c++)
        fprintf(f, ",%s", metric_cols[c]);
    for (int c = 0; c < TC_COUNT; c++) {
        tcat_column(c, col, sizeof(col));
        fprintf(f, ",%s", col);
    }
    for (int c = 0; c < MC_COUNT; c++) {
        mcat_column(c, col, sizeof(col));
        fprintf(f, ",%s", col);
    }
    fputs(",reason\n", f);
}

void sweep_csv_row(const struct sweep *sw, const struct sweep_point *p, FILE *f)
{
    double v[ARRAY_LEN(metric_cols)];
    bool ok[ARRAY_LEN(metric_cols)];
    bool sim = sweep_point_simulated(p);
    int m;

    if (p->status == SP_NOT_RUN)
        return;
    fprintf(f, "%ld", p->index);
    for (int a = 0; a < sw->naxes; a++) {
        fputc(',', f);
        csv_text(f, sw->axes[a].values[p->vidx[a]]);
    }
    fprintf(f, ",%s,%s", sweep_status_name(p->status), sw->weak ? "weak" : "strong");
    m = point_numbers(p, v, ok);
    for (int c = 0; c < m; c++)
        num_field(f, ok[c], v[c]);
    for (int c = 0; c < TC_COUNT; c++)
        num_field(f, sim, p->breakdown_s[c]);
    for (int c = 0; c < MC_COUNT; c++)
        num_field(f, sim, p->mem_bytes[c]);
    fputc(',', f);
    csv_text(f, p->reason);
    fputc('\n', f);
}

int sweep_write_csv(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f)
{
    sweep_csv_header(sw, f);
    for (long i = 0; i < n; i++)
        sweep_csv_row(sw, &pts[i], f);
    return ferror(f) ? -1 : 0;
}

void sweep_json_begin(const struct sweep *sw, FILE *f)
{
    fputs("{\n  \"scenario\": ", f);
    fput_json_string(f, sw->path ? sw->path : "");
    fprintf(f, ",\n  \"scaling\": \"%s\",\n  \"axes\": [", sw->weak ? "weak" : "strong");
    for (int a = 0; a < sw->naxes; a++) {
        fprintf(f, "%s\n    {\"key\": ", a ? "," : "");
        fput_json_string(f, sw->axes[a].key);
        fputs(", \"values\": [", f);
        for (int x = 0; x < sw->axes[a].nvalues; x++) {
            fputs(x ? ", " : "", f);
            fput_json_string(f, sw->axes[a].values[x]);
        }
        fputs("]}", f);
    }
    fputs("\n  ],\n  \"points\": [", f);
}

void sweep_json_point(const struct sweep *sw, const struct sweep_point *p, bool first, FILE *f)
{
    double v[ARRAY_LEN(metric_cols)];
    bool ok[ARRAY_LEN(metric_cols)];
    int m;

    fprintf(f, "%s\n    {\"index\": %ld, \"values\": {", first ? "" : ",", p->index);
    for (int a = 0; a < sw->naxes; a++) {
        fputs(a ? ", " : "", f);
        fput_json_string(f, sw->axes[a].key);
        fputs(": ", f);
        fput_json_string(f, sw->axes[a].values[p->vidx[a]]);
    }
    fprintf(f, "}, \"status\": \"%s\"", sweep_status_name(p->status));
    m = point_numbers(p, v, ok);
    for (int c = 0; c < m; c++)
        if (ok[c])
            fprintf(f, ", \"%s\": %.10g", metric_cols[c], v[c]);
    if (sweep_point_simulated(p)) {
        fputs(", \"breakdown_s\": {", f);
        for (int c = 0; c < TC_COUNT; c++)
            fprintf(f, "%s\"%s\": %.9g", c ? ", " : "", tcat_name(c), p->breakdown_s[c]);
        fputs("}, \"memory_at_peak_bytes\": {", f);
        for (int c = 0; c < MC_COUNT; c++)
            fprintf(f, "%s\"%s\": %.9g", c ? ", " : "", mcat_name(c), p->mem_bytes[c]);
        fputc('}', f);
    }
    if (p->reason[0]) {
        fputs(", \"reason\": ", f);
        fput_json_string(f, p->reason);
    }
    fputc('}', f);
}

void sweep_json_end(FILE *f)
{
    fputs("\n  ]\n}\n", f);
}

int sweep_write_json(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f)
{
    bool first = true;

    sweep_json_begin(sw, f);
    for (long i = 0; i < n; i++) {
        if (pts[i].status == SP_NOT_RUN)
            continue;
        sweep_json_point(sw, &pts[i], first, f);
        first = false;
    }
    sweep_json_end(f);
    return ferror(f) ? -1 : 0;
}

/* ---- text table ---------------------------------------------------------------------- */

static bool has_size_axis(const struct sweep *sw)
{
    for (int a = 0; a < sw->naxes; a++)
        if (sw->axes[a].size)
            return true;
    return false;
}

/* Width of axis a's column: its key or its longest value. */
static int axis_width(const struct sweep *sw, int a)
{
    int w = (int)strlen(sw->axes[a].key);

    for (int x = 0; x < sw->axes[a].nvalues; x++)
        if ((int)strlen(sw->axes[a].values[x]) > w)
            w = (int)strlen(sw->axes[a].values[x]);
    return w;
}

void sweep_print_header(const struct sweep *sw, FILE *f)
{
    bool size = has_size_axis(sw);

    for (int a = 0; a < sw->naxes; a++)
        fprintf(f, "%-*s  ", axis_width(sw, a), sw->axes[a].key);
    fprintf(f, "%5s  %-12s %10s %17s %10s %6s %9s %8s %7s %10s %9s\n", "GPUs", "dp x tp x pp",
            "step", "interval", "tok/s/GPU", "MFU", "memory", size ? "speedup" : "vs base",
            size ? (sw->weak ? "weak" : "strong") : "", "to train", "cost");
}

void sweep_print_row(const struct sweep *sw, const struct sweep_point *p, FILE *f)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    char lay[32], step[32], dur[32], cost[32], iv[48];
    bool size = has_size_axis(sw);

    if (p->status == SP_NOT_RUN)
        return;
    for (int a = 0; a < sw->naxes; a++)
        fprintf(f, "%-*s  ", axis_width(sw, a), sw->axes[a].values[p->vidx[a]]);
    if (!sweep_point_simulated(p)) {
        fprintf(f, "%s: %s\n", p->status == SP_INVALID ? "invalid" : "not simulated", p->reason);
        return;
    }
    snprintf(lay, sizeof(lay), "%d x %d x %d", p->dp, p->tp, p->pp);
    report_fmt_time(p->step_s, step, sizeof(step));
    totals_fmt_duration(&p->tt, dur, sizeof(dur));
    totals_fmt_cost(&p->tt, cost, sizeof(cost));
    sweep_fmt_interval(p->step_lo_s, p->step_hi_s, iv, sizeof(iv));
    fprintf(f, "%5d  %-12s %10s %17s %10.0f %5.1f%% %5.1f GiB", p->gpus, lay, step, iv,
            p->tokens_per_s_per_gpu, 100 * p->mfu, p->peak_bytes / gib);
    if (p->base >= 0 && size)
        fprintf(f, " %7.2fx %6.1f%%", p->speedup, 100 * (sw->weak ? p->weak_eff : p->strong_eff));
    else if (p->base >= 0)
        fprintf(f, " %7.2fx %7s", p->speedup, "");
    else
        fprintf(f, " %8s %7s", "-", "");
    fprintf(f, " %10s %9s%s\n", dur, cost, p->status == SP_OOM ? "  OUT OF MEMORY" : "");
}

void sweep_fmt_interval(double lo_s, double hi_s, char *buf, size_t n)
{
    struct band b = { .found = hi_s > 0, .lo_s = lo_s, .hi_s = hi_s };

    if (b.found)
        band_fmt(&b, buf, n);
    else
        snprintf(buf, n, "none");
}

void sweep_print_footer(const struct sweep *sw, FILE *f)
{
    fprintf(f, "interval: where 8 in 10 measured runs of the point's regime fell, scaled to its "
               "step (none: no\nmeasured run near it; simtrain SCENARIO --json says which runs)\n");
    if (!has_size_axis(sw))
        fprintf(f, "vs base: step-time speedup against the first point that fits\n");
}

void sweep_print(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f)
{
    sweep_print_header(sw, f);
    for (long i = 0; i < n; i++)
        sweep_print_row(sw, &pts[i], f);
    sweep_print_footer(sw, f);
}

/* ---- streaming ------------------------------------------------------------------------ */

void sweep_writer_begin(struct sweep_writer *w, const struct sweep *sw)
{
    if (w->text)
        sweep_print_header(sw, w->text);
    if (w->csv)
        sweep_csv_header(sw, w->csv);
    if (w->json)
        sweep_json_begin(sw, w->json);
}

void sweep_writer_point(void *ctx, const struct sweep *sw, const struct sweep_point *p)
{
    struct sweep_writer *w = ctx;

    if (p->status == SP_NOT_RUN)
        return;
    if (w->text) {
        sweep_print_row(sw, p, w->text);
        fflush(w->text);
    }
    if (w->csv) {
        sweep_csv_row(sw, p, w->csv);
        fflush(w->csv);
    }
    if (w->json) {
        sweep_json_point(sw, p, !w->written, w->json);
        w->written = true;
        fflush(w->json);
    }
    if (w->keep) {
        grow_array((void **)&w->kept, &w->cap_kept, (size_t)w->nkept + 1, sizeof(*w->kept));
        w->kept[w->nkept++] = *p;
    }
}

void sweep_writer_end(struct sweep_writer *w, const struct sweep *sw)
{
    if (w->text)
        sweep_print_footer(sw, w->text);
    if (w->json)
        sweep_json_end(w->json);
}

void sweep_writer_release(struct sweep_writer *w)
{
    free(w->kept);
    w->kept = NULL;
    w->nkept = 0;
}

/* ---- merging shard files ------------------------------------------------------------- */

static int axis_value(struct sweep_axis *ax, const char *text)
{
    for (int x = 0; x < ax->nvalues; x++)
        if (strcmp(ax->values[x], text) == 0)
            return x;
    ax->values = xrealloc(ax->values, sizeof(char *) * (size_t)(ax->nvalues + 1));
    ax->values[ax->nvalues] = xstrdup(text);
    return ax->nvalues++;
}

static int status_of(const char *text)
{
    for (int s = 0; s < SP_STATUS_COUNT; s++)
        if (strcmp(text, sweep_status_name(s)) == 0)
            return s;
    return -1;
}

static void merge_row(const struct csv_table *t, int row, struct sweep *sw, struct sweep_point *p)
{
    double v[ARRAY_LEN(metric_cols)];
    char col[48];

    memset(p, 0, sizeof(*p));
    p->index = strtol(csv_field(t, row, 0), NULL, 10);
    for (int a = 0; a < sw->naxes; a++)
        p->vidx[a] = axis_value(&sw->axes[a], csv_field(t, row, 1 + a));
    p->status = status_of(csv_field(t, row, 1 + sw->naxes));
    sw->weak |= strcmp(csv_field(t, row, 2 + sw->naxes), "weak") == 0;
    for (size_t c = 0; c < ARRAY_LEN(metric_cols); c++)
        v[c] = strtod(csv_field(t, row, csv_column(t, metric_cols[c])), NULL);
    p->gpus = (int)v[0];
    p->nodes = (int)v[1];
    p->dp = (int)v[2];
    p->tp = (int)v[3];
    p->pp = (int)v[4];
    p->vpp = (int)v[5];
    p->cp = (int)v[6];
    p->ep = (int)v[7];
    p->micro_batch = (int)v[8];
    p->global_batch = (int)v[9];
    p->step_s = v[10];
    p->tokens_per_s = v[11];
    p->tokens_per_s_per_gpu = v[12];
    p->mfu = v[13];
    p->peak_bytes = v[14];
    p->capacity_bytes = v[15];
    p->tt.have_tokens = csv_field(t, row, csv_column(t, "time_to_train_s"))[0] != '\0';
    p->tt.seconds = v[21];
    p->tt.gpu_hours = v[22];
    p->tt.have_price = csv_field(t, row, csv_column(t, "cost_usd"))[0] != '\0';
    p->tt.cost_usd = v[23];
    p->tt.have_power = csv_field(t, row, csv_column(t, "energy_J"))[0] != '\0';
    p->tt.energy_J = v[24];
    p->step_lo_s = v[25];
    p->step_hi_s = v[26];
    for (int c = 0; c < TC_COUNT; c++) {
        tcat_column(c, col, sizeof(col));
        p->breakdown_s[c] = strtod(csv_field(t, row, csv_column(t, col)), NULL);
    }
    for (int c = 0; c < MC_COUNT; c++) {
        mcat_column(c, col, sizeof(col));
        p->mem_bytes[c] = strtod(csv_field(t, row, csv_column(t, col)), NULL);
    }
    snprintf(p->reason, sizeof(p->reason), "%s", csv_field(t, row, csv_column(t, "reason")));
}

static int by_index(const void *a, const void *b)
{
    const struct sweep_point *x = a, *y = b;

    return (x->index > y->index) - (x->index < y->index);
}

int sweep_merge(const char *const *paths, int npaths, struct sweep *sw, struct sweep_point **pts,
                long *n, char *msg, size_t msglen)
{
    size_t cap = 0;

    memset(sw, 0, sizeof(*sw));
    *pts = NULL;
    *n = 0;
    for (int k = 0; k < npaths; k++) {
        struct csv_error err;
        struct csv_table *t = csv_read_file(paths[k], &err);
        int st;
        if (!t) {
            if (err.line > 0)
                snprintf(msg, msglen, "%s:%d: %s", paths[k], err.line, err.msg);
            else
                snprintf(msg, msglen, "%s", err.msg); /* names the file */
            return -1;
        }
        st = csv_column(t, "status");
        if (st < 1 || csv_column(t, "index") != 0 || csv_column(t, "energy_J") < 0 ||
            st - 1 > SWEEP_MAX_AXES || (k > 0 && st - 1 != sw->naxes)) {
            snprintf(msg, msglen, "%s: not a sweep CSV of the same axes (written by --csv)",
                     paths[k]);
            csv_free(t);
            return -1;
        }
        if (k == 0) {
            sw->naxes = st - 1;
            sw->axes = xcalloc((size_t)sw->naxes, sizeof(*sw->axes));
            for (int a = 0; a < sw->naxes; a++) {
                sw->axes[a].key = xstrdup(t->header[1 + a]);
                sw->axes[a].size = sweep_is_size_key(t->header[1 + a]);
            }
        } else {
            for (int a = 0; a < sw->naxes; a++)
                if (strcmp(sw->axes[a].key, t->header[1 + a]) != 0) {
                    snprintf(msg, msglen, "%s: axis '%s' differs from the first file's '%s'",
                             paths[k], t->header[1 + a], sw->axes[a].key);
                    csv_free(t);
                    return -1;
                }
        }
        for (int r = 0; r < t->nrows; r++) {
            grow_array((void **)pts, &cap, (size_t)*n + 1, sizeof(**pts));
            merge_row(t, r, sw, &(*pts)[(*n)++]);
        }
        csv_free(t);
    }
    if (*n > 0)
        qsort(*pts, (size_t)*n, sizeof(**pts), by_index);
    for (long i = 1; i < *n; i++)
        if ((*pts)[i].index == (*pts)[i - 1].index) {
            snprintf(msg, msglen, "point %ld appears twice (overlapping shards?)", (*pts)[i].index);
            return -1;
        }
    sw->npoints = *n;
    return 0;
}
