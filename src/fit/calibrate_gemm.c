/*
 * calibrate_gemm.c - the GEMM fit of `simtrain calibrate` (calibrate.h): the
 * kernel efficiency per tensor-core dtype, the shared latency and output tile,
 * and, where the hardware has the clock model (cost.h, "GEMM peak"), the SM
 * clock the part sustains at its power cap.
 *
 * Each row is priced at the clock it ran at: the SM clock it logged
 * (`sm_clock_mhz`, NVML in simtrain-bench), else the sustained clock of its
 * dtype. So a row with a clock constrains the efficiency alone, and a row
 * without one (a long run on random data) constrains efficiency x sustained
 * clock. When a dtype has rows of both kinds the sustained clock is a fitted
 * parameter; when it has `gemm_sustained` rows that logged their clock
 * (simtrain-bench --sustained), their median clock is the sustained clock;
 * otherwise the hardware file's value stands. BF16 and FP16 share one
 * efficiency and one clock (the same tensor-core rate and power on every
 * part of formulas.md §7).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit/calibrate_internal.h"
#include "fit/fit.h"
#include "model/cost.h"

/* A dtype's parameter class: bf16 and fp16 share one. */
static int dt_class(enum dtype d)
{
    return d == DT_FP16 ? DT_BF16 : (int)d;
}

struct gemm_ctx {
    const struct hardware *hw;
    struct efficiency eff; /* tile under test and mem_bw; gemm_max and latency come from p */
    const struct measurement *const *rows;
    int n;
    int g_param[DT_COUNT];    /* by class: index of log(gemm_max) in p, -1 = absent */
    int f_param[DT_COUNT];    /* by class: index of log(clock / 1 GHz) in p, -1 = not fitted */
    double f_fixed[DT_COUNT]; /* by class: a fixed sustained clock, Hz (0 = the hardware's) */
    bool present[DT_COUNT];   /* dtypes with rows */
    int np;                   /* parameters after the latency */
    bool clocked;             /* the hardware has the clock model: rows' clocks count */
    bool fit_latency;         /* p[0] is the latency in us */
    double latency_s;         /* the fixed latency when !fit_latency */
};

/* The fitted GEMM model: what fit_gemm keeps of its best candidate. */
struct gemm_model {
    struct efficiency eff; /* tile, mem_bw */
    double latency_s;
    double g[DT_COUNT], g_err[DT_COUNT]; /* gemm_max per dtype and its 1-sigma */
    double f[DT_COUNT];                  /* sustained clock per dtype, Hz; 0 = not determined */
    double chisq;
    char msg[128];
};

static int off(const struct gemm_ctx *c)
{
    return c->fit_latency ? 1 : 0;
}

static double gmax_of(const struct gemm_ctx *c, const double *p, enum dtype dt)
{
    return exp(p[off(c) + c->g_param[dt_class(dt)]]);
}

/* The SM clock row m is priced at, Hz; 0 = the hardware's sustained clock (or no model). */
static double clock_of(const struct gemm_ctx *c, const double *p, const struct measurement *m)
{
    int k = dt_class(m->dtype);

    if (!c->clocked)
        return 0;
    if (m->clock_Hz > 0)
        return m->clock_Hz;
    if (c->f_param[k] >= 0)
        return exp(p[off(c) + c->f_param[k]]) * 1e9;
    return c->f_fixed[k];
}

double calib_gemm_seconds(const struct hardware *hw, const struct efficiency *eff, double lat_s,
                          double gmax, double clock_Hz, const struct measurement *m)
{
    struct efficiency e = *eff;
    struct gpu_spec g = hw->gpu;

    e.gemm_max = gmax;
    e.gemm_max_fp8 = gmax;
    e.gemm_latency = 0; /* added here in seconds: the fit needs it continuous, not in ns */
    if (clock_Hz > 0)
        for (int d = 0; d < DT_COUNT; d++)
            if (dt_class((enum dtype)d) == dt_class(m->dtype))
                g.clock_sust_Hz[d] = clock_Hz;
    return lat_s + cost_gemm_seconds(&g, &e, m->dtype, m->m, m->n, m->k, m->batch);
}

static int gemm_resid(const double *p, int np, double *r, int n, void *vctx)
{
    const struct gemm_ctx *c = vctx;
    double lat = c->fit_latency ? p[0] * 1e-6 : c->latency_s;

    (void)np;
    for (int i = 0; i < n; i++) {
        const struct measurement *m = c->rows[i];
        double g = gmax_of(c, p, m->dtype), f = clock_of(c, p, m);

        if (m->kind == MEAS_GEMM)
            r[i] = calib_gemm_seconds(c->hw, &c->eff, lat, g, f, m) / m->time_s - 1;
        else
            r[i] = m->rate / cost_gemm_peak_at(&c->hw->gpu, m->dtype, f) / g - 1;
    }
    return 0;
}

/* Output tiles tried, by common cuBLAS/CUTLASS threadblock shapes (formulas.md 6.2). */
static const int tile_candidates[][2] = {
    { 128, 128 }, { 128, 256 }, { 256, 128 }, { 64, 128 },
    { 128, 64 },  { 64, 64 },   { 256, 64 },  { 64, 256 },
};

/* Starting sustained clock of a class: the hardware's, else its highest, else 1.5 GHz. */
static double clock_guess(const struct hardware *hw, enum dtype d)
{
    double f = cost_gemm_clock(&hw->gpu, d);

    if (!(f > 0))
        f = hw->gpu.clock_max_Hz;
    return f > 0 ? f : 1.5e9;
}

/* One fit at the current tile; latency clamped at zero by refitting without it. */
static int gemm_fit_tile(struct gemm_ctx *c, struct gemm_model *out)
{
    double p[FIT_MAX_PARAMS], g0 = log(c->hw->eff.gemm_max > 0 ? c->hw->eff.gemm_max : 0.8);
    struct fit_result res;

    memset(out, 0, sizeof(*out));
    for (;;) {
        p[0] = c->hw->eff.gemm_latency / 1e3;
        for (int d = 0; d < DT_COUNT; d++) {
            if (c->g_param[d] >= 0)
                p[off(c) + c->g_param[d]] = g0;
            if (c->f_param[d] >= 0)
                p[off(c) + c->f_param[d]] = log(clock_guess(c->hw, (enum dtype)d) / 1e9);
        }
        if (fit_nlls(gemm_resid, c, c->n, p, off(c) + c->np, &res)) {
            snprintf(out->msg, sizeof(out->msg), "%s", res.msg);
            return -1;
        }
        if (!c->fit_latency || p[0] >= 0)
            break;
        c->fit_latency = false; /* negative latency: pin it at zero and refit */
        c->latency_s = 0;
    }
    out->eff = c->eff;
    out->latency_s = c->fit_latency ? p[0] * 1e-6 : c->latency_s;
    out->chisq = res.chisq;
    snprintf(out->msg, sizeof(out->msg), "%s", res.msg);
    for (int d = 0; d < DT_COUNT; d++) {
        int k = dt_class((enum dtype)d);
        if (c->g_param[k] < 0)
            continue;
        if (c->present[d]) /* bf16 and fp16 share the value; report the dtypes measured */
            out->g[d] = gmax_of(c, p, (enum dtype)d);
        out->g_err[d] = out->g[d] * res.stderr_p[off(c) + c->g_param[k]];
        if (c->f_param[k] >= 0)
            out->f[d] = exp(p[off(c) + c->f_param[k]]) * 1e9;
        else if (c->f_fixed[k] > 0)
            out->f[d] = c->f_fixed[k];
    }
    return 0;
}

/* Which dtype's gemm_max the simulator gets: the requested one, its 16-bit twin, or the most rows.
 */
static enum dtype choose_gemm_dtype(const struct gemm_model *gm,
                                    const struct measurement *const *rows, int n, enum dtype want,
                                    FILE *log)
{
    enum dtype alt = want == DT_BF16 ? DT_FP16 : DT_BF16;
    int most = -1, count[DT_COUNT] = { 0 };

    if (gm->g[want] > 0)
        return want;
    /* bf16 and fp16 share one tensor-core peak on A100/H100/H200 (formulas.md 7). */
    if ((want == DT_BF16 || want == DT_FP16) && gm->g[alt] > 0)
        return alt;
    for (int i = 0; i < n; i++)
        count[rows[i]->dtype]++;
    for (int d = 0; d < DT_COUNT; d++)
        if (count[d] && (most < 0 || count[d] > count[most]))
            most = d;
    if (log)
        fprintf(log,
                "calibrate: warning: no %s GEMM rows; gemm_max comes from %s rows and the "
                "simulator applies it to every dtype\n",
                dtype_name(want), dtype_name((enum dtype)most));
    return (enum dtype)most;
}

/*
 * The parameters of each class: its efficiency, and its sustained clock when
 * rows with and without a clock meet (fitted) or sustained-mode rows logged it
 * (their median). Returns the number of clocks fitted.
 */
static int plan_params(struct gemm_ctx *c)
{
    int with[DT_COUNT] = { 0 }, without[DT_COUNT] = { 0 }, nf = 0;
    double *sust = xmalloc((size_t)c->n * sizeof(*sust));

    for (int d = 0; d < DT_COUNT; d++)
        c->g_param[d] = c->f_param[d] = -1;
    for (int i = 0; i < c->n; i++) {
        int k = dt_class(c->rows[i]->dtype);
        c->present[c->rows[i]->dtype] = true;
        if (c->g_param[k] < 0)
            c->g_param[k] = c->np++;
        if (c->rows[i]->clock_Hz > 0)
            with[k]++;
        else
            without[k]++;
    }
    for (int k = 0; c->clocked && k < DT_COUNT; k++) {
        int ns = 0;
        for (int i = 0; i < c->n; i++)
            if (dt_class(c->rows[i]->dtype) == k && c->rows[i]->sustained &&
                c->rows[i]->clock_Hz > 0)
                sust[ns++] = c->rows[i]->clock_Hz;
        if (ns)
            c->f_fixed[k] = fit_quantile(sust, ns, 0.5);
        else if (with[k] && without[k] && cost_gemm_clock(&c->hw->gpu, (enum dtype)k) > 0)
            c->f_param[k] = c->np++, nf++;
    }
    free(sust);
    return nf;
}

/*
 * Distinct points among the GEMM rows (kind, dtype and shape), and *shapes, the distinct
 * shapes of timed GEMMs (gemm_best rows have none). Quadratic: a measurements file holds tens
 * of GEMM rows.
 */
static int distinct_gemm_points(const struct measurement *const *rows, int n, int *shapes)
{
    int points = 0;

    *shapes = 0;
    for (int i = 0; i < n; i++) {
        const struct measurement *a = rows[i];
        bool seen_point = false, seen_shape = a->kind != MEAS_GEMM;

        for (int j = 0; j < i; j++) {
            const struct measurement *b = rows[j];
            bool shape = b->kind == a->kind && !(b->m < a->m || b->m > a->m) &&
                         !(b->n < a->n || b->n > a->n) && !(b->k < a->k || b->k > a->k) &&
                         !(b->batch < a->batch || b->batch > a->batch);

            seen_shape |= shape;
            seen_point |= shape && b->dtype == a->dtype;
        }
        points += !seen_point;
        *shapes += !seen_shape;
    }
    return points;
}

/*
 * A GEMM fit its inputs cannot determine is refused, with the reason. Timed rows must
 * outnumber the parameters they are fitted to (gemm_max of each dtype, the sustained clocks
 * fitted, and the latency when fitted): as many rows as parameters leave no residual to judge
 * the fit by (a sigma of 0 and an R^2 of nothing). Best-shape rows are no fit: they read
 * gemm_max directly. And a gemm_max above 1 is a rate above the peak at its clock, which no
 * efficiency gives: the rows are faster than the model allows with the hardware's fixed launch
 * latency (one shape cannot separate the two). Returns true, with the message on `log`, when
 * refused.
 */
static bool gemm_undetermined(const struct hardware *hw, const struct gemm_model *gm,
                              const struct measurement *const *rows, int n, int params, FILE *log)
{
    int timed = 0;

    for (int i = 0; i < n; i++)
        timed += rows[i]->kind == MEAS_GEMM;
    if (timed > 0 && timed <= params) {
        if (log)
            fprintf(log,
                    "calibrate: error: GEMM: %d timed row%s for %d parameter%s: a fit needs more "
                    "rows than parameters to be judged; add shapes or repeated timings\n",
                    timed, timed == 1 ? "" : "s", params, params == 1 ? "" : "s");
        return true;
    }
    for (int d = 0; d < DT_COUNT; d++)
        if (gm->g[d] > 1) {
            if (log)
                fprintf(log,
                        "calibrate: error: GEMM: gemm_max for %s comes out at %.3g, above 1 (the "
                        "peak): the rows are faster than the model allows with a launch latency "
                        "of %.2f us; add shapes of other sizes (the latency is fitted from two or "
                        "more) or check the rows against the %s peak of %.0f TFLOP/s\n",
                        dtype_name((enum dtype)d), gm->g[d], gm->latency_s * 1e6,
                        dtype_name((enum dtype)d), cost_peak_flops(&hw->gpu, (enum dtype)d) / 1e12);
            return true;
        }
    return false;
}

int calib_fit_gemm(const struct hardware *hw, const struct meas_set *ms,
                   const struct calib_options *opt, struct calib_result *r, FILE *log)
{
    const struct measurement **rows;
    int n = calib_collect(ms, calib_is_gemm, &rows), nshaped = 0, nclock, nshapes, distinct;
    struct gemm_ctx c;
    struct gemm_model best = { .chisq = INFINITY }, cur;
    bool can_fit_latency;
    double *pred;

    if (!n) {
        snprintf(r->q_gemm.note, sizeof(r->q_gemm.note), "no GEMM rows: gemm_* not fitted");
        free(rows);
        return 0;
    }
    memset(&c, 0, sizeof(c));
    c.hw = hw;
    c.eff = r->eff; /* fitted mem_bw for the memory roofline */
    c.rows = rows;
    c.n = n;
    c.clocked = hw->gpu.tensor_cores > 0;
    nclock = plan_params(&c);
    for (int i = 0; i < n; i++)
        nshaped += rows[i]->kind == MEAS_GEMM;
    /*
     * Latency and tile need two distinct shapes and one distinct point more than parameters:
     * repeated timings of one shape cannot tell a fixed latency from a lower rate (the fit
     * would be singular and its sigma meaningless), so they determine gemm_max alone.
     */
    distinct = distinct_gemm_points(rows, n, &nshapes);
    can_fit_latency = nshapes >= 2 && distinct >= c.np + 2 && c.np + 1 <= FIT_MAX_PARAMS;
    if (c.np > FIT_MAX_PARAMS || n < c.np) {
        if (log)
            fprintf(log, "calibrate: GEMM rows: %d parameters for %d rows (dtypes and clocks)\n",
                    c.np, n);
        free(rows);
        return -1;
    }
    for (size_t t = 0; t < (can_fit_latency ? ARRAY_LEN(tile_candidates) : 1); t++) {
        if (can_fit_latency) {
            c.eff.tile_m = tile_candidates[t][0];
            c.eff.tile_n = tile_candidates[t][1];
        }
        c.fit_latency = can_fit_latency;
        c.latency_s = hw->eff.gemm_latency / NS_PER_S;
        if (!gemm_fit_tile(&c, &cur) && cur.chisq < best.chisq)
            best = cur;
        else if (isinf(best.chisq))
            snprintf(best.msg, sizeof(best.msg), "%s", cur.msg);
    }
    if (isinf(best.chisq)) {
        if (log)
            fprintf(log, "calibrate: GEMM fit failed: %s\n", best.msg);
        free(rows);
        return -1;
    }
    if (gemm_undetermined(hw, &best, rows, n, c.np + (can_fit_latency ? 1 : 0), log)) {
        free(rows);
        return -1;
    }
    if (can_fit_latency) {
        r->eff.tile_m = best.eff.tile_m;
        r->eff.tile_n = best.eff.tile_n;
        r->eff.gemm_latency = ns_from_s(best.latency_s);
        r->fitted |= CAL_GEMM_LATENCY | CAL_TILE;
    }
    memcpy(r->gemm_max_dt, best.g, sizeof(best.g));
    memcpy(r->gemm_max_err, best.g_err, sizeof(best.g_err));
    r->gemm_dtype = choose_gemm_dtype(&best, rows, n, opt->gemm_dtype, log);
    r->eff.gemm_max = best.g[r->gemm_dtype];
    r->fitted |= CAL_GEMM_MAX;
    if (best.g[DT_FP8] > 0 && dt_class(r->gemm_dtype) != DT_FP8) {
        r->eff.gemm_max_fp8 = best.g[DT_FP8];
        r->fitted |= CAL_GEMM_MAX_FP8;
    }
    for (int d = 0; d < DT_COUNT; d++)
        if (best.f[d] > 0 && hw->gpu.tc_flop_clk[d] > 0) {
            r->clock_sust_Hz[d] = best.f[d];
            r->fitted |= CAL_CLOCK;
        }

    pred = xmalloc((size_t)n * sizeof(*pred));
    for (int i = 0; i < n; i++) {
        const struct measurement *m = rows[i];
        double g = best.g[m->dtype];
        double f = c.clocked ? (m->clock_Hz > 0 ? m->clock_Hz : best.f[m->dtype]) : 0;

        pred[i] = m->kind == MEAS_GEMM
                      ? m->flops / calib_gemm_seconds(hw, &best.eff, best.latency_s, g, f, m)
                      : g * cost_gemm_peak_at(&hw->gpu, m->dtype, f);
    }
    calib_quality_of(rows, pred, n, &r->q_gemm);
    snprintf(r->q_gemm.note, sizeof(r->q_gemm.note), "%d shaped rows, %s%s; %.60s", nshaped,
             can_fit_latency ? "latency and tile fitted" : "latency and tile not fitted",
             nclock ? ", sustained clock fitted" : "", best.msg);
    free(pred);
    free(rows);
    return 0;
}
