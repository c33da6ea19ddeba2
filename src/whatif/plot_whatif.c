/*
 * plot_whatif.c - the pictures of `simtrain sweep` and `simtrain plan` with
 * --plot DIR (see plot.h): throughput and scaling efficiency against GPUs,
 * step time and peak memory by category per sweep point (stacked bars), and
 * the plan's estimated layouts against memory with the simulated winners, and every simulated
 * candidate's step time against its memory with the Pareto front.
 */
#include "report/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/plan.h"
#include "report/plot_chart.h"
#include "whatif/sweep.h"

/* ---- sweep --------------------------------------------------------------------------- */

/* "nodes=4, micro_batch=2"; with sep "\\n" one value per line of a bar label. */
static void point_label(const struct sweep *sw, const struct sweep_point *p, const char *sep,
                        bool values_only, char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int a = 0; a < sw->naxes && len + 1 < n; a++) {
        const char *key = strrchr(sw->axes[a].key, '.');
        if (values_only)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", a ? sep : "",
                                    sw->axes[a].values[p->vidx[a]]);
        else
            len +=
                (size_t)snprintf(buf + len, n - len, "%s%s=%s", a ? sep : "",
                                 key ? key + 1 : sw->axes[a].key, sw->axes[a].values[p->vidx[a]]);
        for (char *q = buf; *q; q++)
            if (*q == '"')
                *q = '\'';
    }
}

/* The label of a group: its non-size axis values. */
static void group_label(const struct sweep *sw, const struct sweep_point *p, char *buf, size_t n)
{
    struct sweep tmp = *sw;
    struct sweep_axis ax[SWEEP_MAX_AXES];
    struct sweep_point q = *p;
    int nax = 0;

    for (int a = 0; a < sw->naxes; a++)
        if (!sw->axes[a].size) {
            ax[nax] = sw->axes[a];
            q.vidx[nax++] = p->vidx[a];
        }
    tmp.axes = ax;
    tmp.naxes = nax;
    point_label(&tmp, &q, ", ", false, buf, n);
    if (!buf[0]) { /* one group: name it after the scenario file */
        const char *base = sw->path ? strrchr(sw->path, '/') : NULL;
        base = base ? base + 1 : sw->path ? sw->path : "sweep";
        snprintf(buf, n, "%.*s", (int)strcspn(base, "."), base);
    }
}

static int sweep_scaling(const char *dir, const struct sweep *sw, const struct sweep_point *pts,
                         long n)
{
    int groups = 0, maxg = -1;
    char *title, *vars, label[256];
    FILE *f = chart_open_dat(dir, "scaling");

    if (!f)
        return -1;
    fprintf(f, "# one block per group: GPUs tokens/s efficiency(%%) ideal_tokens/s\n");
    for (long i = 0; i < n; i++)
        maxg = pts[i].group > maxg ? pts[i].group : maxg;
    for (int g = 0; g <= maxg; g++) {
        int rows = 0;
        for (long i = 0; i < n; i++) {
            const struct sweep_point *p = &pts[i], *b = NULL;
            if (p->group != g || !sweep_point_simulated(p) || p->base < 0)
                continue;
            for (long j = 0; j < n; j++)
                if (pts[j].index == p->base)
                    b = &pts[j];
            if (rows++ == 0) {
                group_label(sw, p, label, sizeof(label));
                fprintf(f, "%s\"%s\" \"\" \"\" \"\"\n", groups++ ? "\n\n" : "", label);
            }
            fprintf(f, "%d %.6g %.4f %.6g\n", p->gpus, p->tokens_per_s,
                    100 * (sw->weak ? p->weak_eff : p->strong_eff),
                    b ? b->tokens_per_s / b->gpus * p->gpus : 0);
        }
    }
    if (chart_close_dat(f, dir, "scaling") != 0)
        return -1;
    if (groups == 0) {
        fprintf(stderr, "simtrain: note: no simulated point to draw scaling from\n");
        return 0;
    }
    title = chart_safe_title(sw->path ? sw->path : "sweep");
    vars = xasprintf("titletext='%s'; ngroups=%d; scaling='%s'", title, groups,
                     sw->weak ? "weak" : "strong");
    chart_draw(dir, "scaling", "scaling", vars);
    free(vars);
    free(title);
    return 0;
}

/*
 * Many bars: label them with values only, one axis per line, and name the
 * axes once under the chart (*xlabel, which the caller frees).
 */
static bool compact_labels(const struct sweep *sw, const struct sweep_point *pts, long n,
                           char **xlabel)
{
    struct strbuf sb;
    long rows = 0;

    for (long i = 0; i < n; i++)
        rows += sweep_point_simulated(&pts[i]);
    sb_init(&sb);
    for (int a = 0; a < sw->naxes; a++) {
        const char *key = strrchr(sw->axes[a].key, '.');
        sb_addf(&sb, "%s%s", a ? " / " : "", key ? key + 1 : sw->axes[a].key);
    }
    *xlabel = sb_detach(&sb);
    return rows > 6;
}

/* Add a bar for point p, labelled with its axis values (values only when compact). */
static int point_row(struct chart_rows *rows, const struct sweep *sw, const struct sweep_point *p,
                     bool compact)
{
    char label[256];

    point_label(sw, p, "\\n", compact, label, sizeof(label));
    return chart_rows_add(rows, label);
}

static int sweep_breakdown(const char *dir, const struct sweep *sw, const struct sweep_point *pts,
                           long n)
{
    const char *unit;
    double span = 0, scale;
    char *title, ylabel[48], *xlabel;
    bool compact = compact_labels(sw, pts, n, &xlabel);
    struct chart_rows rows;
    int rc;

    for (long i = 0; i < n; i++)
        if (sweep_point_simulated(&pts[i]))
            span = pts[i].step_s > span ? pts[i].step_s : span;
    scale = chart_time_scale(span, &unit);
    chart_rows_init(&rows, TC_COUNT);
    for (long i = 0; i < n; i++)
        if (sweep_point_simulated(&pts[i])) {
            int row = point_row(&rows, sw, &pts[i], compact);
            for (int c = 0; c < TC_COUNT; c++)
                rows.v[row * TC_COUNT + c] = pts[i].breakdown_s[c] * scale;
        }
    snprintf(ylabel, sizeof(ylabel), "time per step (%s)", unit);
    title = xasprintf("Step time by category: %s", sw->path ? sw->path : "sweep");
    rc = chart_bars(&(struct chart_bars){ .dir = dir,
                                          .name = "sweep_breakdown",
                                          .title = title,
                                          .ylabel = ylabel,
                                          .hline = -1,
                                          .lines = sw->naxes,
                                          .xlabel = compact ? xlabel : "" },
                    &rows, chart_tcat_label, chart_tcat_color);
    free(title);
    free(xlabel);
    chart_rows_release(&rows);
    return rc;
}

static int sweep_memory(const char *dir, const struct sweep *sw, const struct sweep_point *pts,
                        long n)
{
    const char *names[MC_COUNT];
    double cap = 0, top = 0;
    char *title, *xlabel;
    bool compact = compact_labels(sw, pts, n, &xlabel);
    struct chart_rows rows;
    int rc;

    for (int c = 0; c < MC_COUNT; c++)
        names[c] = mcat_name(c);
    chart_rows_init(&rows, MC_COUNT);
    for (long i = 0; i < n; i++)
        if (sweep_point_simulated(&pts[i])) {
            int row = point_row(&rows, sw, &pts[i], compact);
            cap = pts[i].capacity_bytes > cap ? pts[i].capacity_bytes : cap;
            top = pts[i].peak_bytes > top ? pts[i].peak_bytes : top;
            for (int c = 0; c < MC_COUNT; c++)
                rows.v[row * MC_COUNT + c] = pts[i].mem_bytes[c] / CHART_GIB;
        }
    title = xasprintf("Peak memory per GPU by category: %s", sw->path ? sw->path : "sweep");
    rc = chart_bars(&(struct chart_bars){ .dir = dir,
                                          .name = "sweep_memory",
                                          .title = title,
                                          .ylabel = "GiB at the peak",
                                          .hline = cap / CHART_GIB,
                                          .ymax = (top > cap ? top : cap) / CHART_GIB * 1.08,
                                          .lines = sw->naxes,
                                          .xlabel = compact ? xlabel : "" },
                    &rows, names, chart_mcat_color);
    free(title);
    free(xlabel);
    chart_rows_release(&rows);
    return rc;
}

int plot_sweep(const char *dir, const struct sweep *sw, const struct sweep_point *pts, long n)
{
    bool size = false;
    int rc = 0;

    if (chart_make_dir(dir) != 0)
        return -1;
    for (int a = 0; a < sw->naxes; a++)
        size |= sw->axes[a].size;
    if (size)
        rc |= sweep_scaling(dir, sw, pts, n);
    rc |= sweep_breakdown(dir, sw, pts, n);
    rc |= sweep_memory(dir, sw, pts, n);
    return rc ? -1 : 0;
}

/* ---- plan ---------------------------------------------------------------------------- */

static int plan_scatter(const char *dir, const struct plan_result *pr)
{
    char *title, *vars;
    FILE *f = chart_open_dat(dir, "plan");

    if (!f)
        return -1;
    fprintf(f, "# step_s peak_GiB kind(0 estimate, 1 simulated, 2 final) rank\n");
    for (long i = 0; i < pr->nfit; i++)
        fprintf(f, "%.6g %.4f 0 0\n", pr->fit[i].est.step_s, pr->fit[i].est.peak_bytes / CHART_GIB);
    fputs("\n\n", f);
    for (long i = 0; i < pr->nfit; i++)
        if (pr->fit[i].simulated && pr->fit[i].sim_status < 0)
            fprintf(f, "%.6g %.4f 1 0\n", pr->fit[i].sim_step_s,
                    pr->fit[i].sim_peak_bytes / CHART_GIB);
    fputs("\n\n", f);
    /* One label per spot: winners with the same figures share it ("#1,2"). */
    for (int i = 0; i < pr->nfinal; i++) {
        const struct plan_cand *c = &pr->final[i];
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = fabs(pr->final[j].sim_step_s - c->sim_step_s) <= 0.02 * c->sim_step_s &&
                   fabs(pr->final[j].sim_peak_bytes - c->sim_peak_bytes) <= 1.0 * CHART_GIB;
        if (seen)
            continue;
        fprintf(f, "%.6g %.4f 2 \"#%d", c->sim_step_s, c->sim_peak_bytes / CHART_GIB, i + 1);
        for (int j = i + 1; j < pr->nfinal; j++)
            if (fabs(pr->final[j].sim_step_s - c->sim_step_s) <= 0.02 * c->sim_step_s &&
                fabs(pr->final[j].sim_peak_bytes - c->sim_peak_bytes) <= 1.0 * CHART_GIB)
                fprintf(f, ",%d", j + 1);
        fputs("\"\n", f);
    }
    if (chart_close_dat(f, dir, "plan") != 0)
        return -1;
    title = chart_safe_title(pr->base->path && *pr->base->path ? pr->base->path : pr->base->name);
    vars = xasprintf("titletext='%s'; capacity=%.4f; nfit=%ld", title,
                     pr->capacity_bytes / CHART_GIB, pr->nfit);
    chart_draw(dir, "plan", "plan", vars);
    free(vars);
    free(title);
    return 0;
}

/* Does simulated candidate a dominate b: no slower, no more memory, better in one? */
static bool dominates(const struct plan_cand *a, const struct plan_cand *b)
{
    return a->sim_step_s <= b->sim_step_s && a->sim_peak_bytes <= b->sim_peak_bytes &&
           (a->sim_step_s < b->sim_step_s || a->sim_peak_bytes < b->sim_peak_bytes);
}

static int by_memory(const void *a, const void *b)
{
    const struct plan_cand *x = *(const struct plan_cand *const *)a;
    const struct plan_cand *y = *(const struct plan_cand *const *)b;

    if (x->sim_peak_bytes < y->sim_peak_bytes || x->sim_peak_bytes > y->sim_peak_bytes)
        return x->sim_peak_bytes < y->sim_peak_bytes ? -1 : 1;
    return (x->number > y->number) - (x->number < y->number);
}

/*
 * Every simulated candidate, simulated step time against simulated peak: those that fit, those
 * the engine found out of memory, and the Pareto front of the fitting ones (no other is both
 * faster and smaller), joined in memory order.
 */
static int plan_pareto(const char *dir, const struct plan_result *pr)
{
    const struct plan_cand **front = xmalloc(sizeof(*front) * (size_t)(pr->nfit + 1));
    char *title, *vars;
    int nfront = 0, nsim = 0, noom = 0;
    FILE *f = chart_open_dat(dir, "plan_pareto");

    if (!f) {
        free(front);
        return -1;
    }
    fprintf(f, "# three blocks: simulated and fits, simulated out of memory, the Pareto front;\n"
               "# rows: sim_step_s sim_peak_GiB\n");
    for (int block = 0; block < 2; block++) {
        int rows = 0;
        for (long i = 0; i < pr->nfit; i++) {
            const struct plan_cand *c = &pr->fit[i];
            if (!c->simulated || !(c->sim_step_s > 0))
                continue;
            if ((block == 0) != (c->sim_status < 0))
                continue;
            fprintf(f, "%.6g %.4f\n", c->sim_step_s, c->sim_peak_bytes / CHART_GIB);
            nsim++;
            noom += block == 1;
            rows++;
        }
        fputs(rows ? "\n\n" : "NaN NaN\n\n\n", f); /* an empty block keeps its index */
    }
    for (long i = 0; i < pr->nfit; i++) {
        const struct plan_cand *c = &pr->fit[i];
        bool beaten = false;
        if (!c->simulated || c->sim_status >= 0)
            continue;
        for (long j = 0; j < pr->nfit && !beaten; j++)
            beaten = pr->fit[j].simulated && pr->fit[j].sim_status < 0 && dominates(&pr->fit[j], c);
        if (!beaten)
            front[nfront++] = c;
    }
    qsort(front, (size_t)nfront, sizeof(*front), by_memory);
    for (int i = 0; i < nfront; i++)
        fprintf(f, "%.6g %.4f\n", front[i]->sim_step_s, front[i]->sim_peak_bytes / CHART_GIB);
    free(front);
    if (chart_close_dat(f, dir, "plan_pareto") != 0)
        return -1;
    if (nsim == 0) {
        fprintf(stderr, "simtrain: note: no simulated candidate to draw plan_pareto from\n");
        return 0;
    }
    title = chart_safe_title(pr->base->path && *pr->base->path ? pr->base->path : pr->base->name);
    vars = xasprintf("titletext='%s'; capacity=%.4f; nsim=%d; nfront=%d; noom=%d", title,
                     pr->capacity_bytes / CHART_GIB, pr->nsimulated, nfront, noom);
    chart_draw(dir, "plan_pareto", "pareto", vars);
    free(vars);
    free(title);
    return 0;
}

/* Three lines under a bar: rank; degrees; schedule, sharding, micro-batch, recompute. */
static void top_label(const struct plan_cand *c, int rank, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "#%d\\ndp%d tp%d pp%d", rank, c->dp, c->tp, c->pp);

    if (c->vpp > 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " v%d", c->vpp);
    if (c->cp > 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " cp%d", c->cp);
    if (c->ep > 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " ep%d", c->ep);
    if (len < n)
        snprintf(buf + len, n - len, "\\n%s%s mb%d %s", c->sp ? "sp " : "",
                 sharding_name((enum sharding)c->sharding), c->micro_batch,
                 recompute_name((enum recompute)c->recompute));
}

static int plan_top(const char *dir, const struct plan_result *pr)
{
    const char *unit;
    double span = 0, scale;
    char *title, ylabel[48];
    struct chart_rows rows;
    int rc;

    if (pr->nfinal == 0)
        return 0;
    for (int i = 0; i < pr->nfinal; i++)
        span = pr->final[i].sim_step_s > span ? pr->final[i].sim_step_s : span;
    scale = chart_time_scale(span, &unit);
    chart_rows_init(&rows, TC_COUNT);
    for (int i = 0; i < pr->nfinal; i++) {
        char label[160];
        int row;
        top_label(&pr->final[i], i + 1, label, sizeof(label));
        row = chart_rows_add(&rows, label);
        for (int c = 0; c < TC_COUNT; c++)
            rows.v[row * TC_COUNT + c] = pr->final[i].sim_breakdown_s[c] * scale;
    }
    snprintf(ylabel, sizeof(ylabel), "simulated time per step (%s)", unit);
    title = xasprintf("Best layouts, step time by category: %s", pr->base->name);
    rc = chart_bars(&(struct chart_bars){ .dir = dir,
                                          .name = "plan_top",
                                          .title = title,
                                          .ylabel = ylabel,
                                          .hline = -1,
                                          .lines = 3 },
                    &rows, chart_tcat_label, chart_tcat_color);
    free(title);
    chart_rows_release(&rows);
    return rc;
}

int plot_plan(const char *dir, const struct plan_result *pr)
{
    int rc = 0;

    if (chart_make_dir(dir) != 0)
        return -1;
    rc |= plan_scatter(dir, pr);
    rc |= plan_pareto(dir, pr);
    rc |= plan_top(dir, pr);
    return rc ? -1 : 0;
}
