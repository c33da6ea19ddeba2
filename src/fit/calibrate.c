/*
 * calibrate.c - fitted cost-model parameters from measurements (see
 * calibrate.h): the model each class of rows is fitted to, shared with
 * `--check`, and the fits themselves. Rows come from calibrate_read.c; the
 * calibration file and the reports are written by cmd_calibrate.c.
 */
#include "fit/calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "fit/fit.h"

/* ---- models shared by fitting and checking -------------------------------- */

/* nccl-tests doc/PERFORMANCE.md bus factors (formulas.md 5.2). */
double calib_bus_factor(int op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL:
        return (double)(n - 1) / n;
    default:
        return 1;
    }
}

static const struct coll_calib *find_coll(const struct hardware *hw, const struct measurement *m)
{
    bool inter = m->nodes > 1;

    for (int i = 0; i < hw->ncoll_cal; i++) {
        const struct coll_calib *c = &hw->coll_cal[i];

        if (c->op == m->op && c->inter_node == inter &&
            (c->algo == ALGO_AUTO || c->algo == m->algo) &&
            (c->proto == PROTO_AUTO || c->proto == m->proto))
            return c;
    }
    return NULL;
}

double calib_predict_rate(const struct hardware *hw, const struct efficiency *eff,
                          const struct measurement *m)
{
    double peak = cost_peak_flops(&hw->gpu, m->dtype);
    double bw = hw->gpu.mem_bw_Bps * eff->mem_bw;
    const struct coll_calib *c;
    double x;

    switch (m->kind) {
    case MEAS_GEMM:
        return m->flops / cost_gemm_seconds(&hw->gpu, eff, m->dtype, m->m, m->n, m->k, m->batch);
    case MEAS_GEMM_BEST:
        return peak * eff->gemm_max;
    case MEAS_ATTN_FLASH:
        return peak * eff->attn_flash;
    case MEAS_ATTN_STD:
        return peak * eff->attn_standard;
    case MEAS_MEMBOUND:
        if (m->bytes > 0)
            return m->bytes / (eff->launch / NS_PER_S + m->bytes / bw);
        return bw;
    case MEAS_H2D:
    case MEAS_D2H:
        return hw->pcie.bw_Bps;
    case MEAS_D2D:
        return hw->nvlink.bw_Bps > 0 ? hw->nvlink.bw_Bps : hw->pcie.bw_Bps;
    case MEAS_COLL:
        c = find_coll(hw, m);
        if (!c || !(c->bus_bw_Bps > 0))
            return 0;
        x = m->bytes * calib_bus_factor(m->op, m->gpus);
        return x / (c->latency / NS_PER_S + x / c->bus_bw_Bps);
    default:
        return 0;
    }
}

/* ---- fitting ------------------------------------------------------------- */

/* Fill R^2 of rates and the worst |t_pred/t_meas - 1| = |rate_meas/rate_pred - 1|. */
static void quality(const struct measurement *const *rows, const double *pred_rate, int n,
                    struct calib_quality *q)
{
    double *obs = xmalloc((size_t)(n ? n : 1) * sizeof(*obs));

    q->points = n;
    q->worst = 0;
    q->worst_line = 0;
    for (int i = 0; i < n; i++) {
        double e = pred_rate[i] > 0 ? fabs(rows[i]->rate / pred_rate[i] - 1) : INFINITY;

        obs[i] = rows[i]->rate;
        if (e > q->worst || !q->worst_line) {
            q->worst = e;
            q->worst_line = rows[i]->line;
        }
    }
    q->r2 = fit_r2(obs, pred_rate, n);
    free(obs);
}

static int collect(const struct meas_set *ms, bool (*want)(const struct measurement *),
                   const struct measurement ***out)
{
    int n = 0;

    *out = xcalloc((size_t)(ms->n ? ms->n : 1), sizeof(**out));
    for (int i = 0; i < ms->n; i++)
        if (want(&ms->rows[i]))
            (*out)[n++] = &ms->rows[i];
    return n;
}

static bool is_gemm(const struct measurement *m)
{
    return m->kind == MEAS_GEMM || m->kind == MEAS_GEMM_BEST;
}

static bool is_attn(const struct measurement *m)
{
    return m->kind == MEAS_ATTN_FLASH || m->kind == MEAS_ATTN_STD;
}

static bool is_mem(const struct measurement *m)
{
    return m->kind == MEAS_MEMBOUND;
}

struct gemm_ctx {
    const struct hardware *hw;
    struct efficiency eff; /* tile under test and mem_bw; gemm_max and latency come from p */
    const struct measurement *const *rows;
    int n;
    int dt_param[DT_COUNT]; /* index among the gemm_max parameters, -1 = dtype absent */
    int ng;                 /* gemm_max parameters (dtypes present) */
    bool fit_latency;       /* p[0] is the latency in us, the log(gemm_max) follow */
    double latency_s;       /* the fixed latency when !fit_latency */
};

/* The fitted GEMM model: what fit_gemm keeps of its best candidate. */
struct gemm_model {
    struct efficiency eff; /* tile, mem_bw */
    double latency_s;
    double g[DT_COUNT], g_err[DT_COUNT]; /* gemm_max per dtype and its 1-sigma */
    double chisq;
    bool latency_fitted;
    char msg[128];
};

static double gmax_of(const struct gemm_ctx *c, const double *p, enum dtype dt)
{
    return exp(p[(c->fit_latency ? 1 : 0) + c->dt_param[dt]]);
}

/* t = latency + cost_gemm_seconds(): the simulator's own function (cost.h). */
static double gemm_time(const struct hardware *hw, const struct efficiency *eff, double lat_s,
                        double gmax, const struct measurement *m)
{
    struct efficiency e = *eff;

    e.gemm_max = gmax;
    e.gemm_latency = 0; /* added here in seconds: the fit needs it continuous, not in ns */
    return lat_s + cost_gemm_seconds(&hw->gpu, &e, m->dtype, m->m, m->n, m->k, m->batch);
}

static int gemm_resid(const double *p, int np, double *r, int n, void *vctx)
{
    const struct gemm_ctx *c = vctx;
    double lat = c->fit_latency ? p[0] * 1e-6 : c->latency_s;

    (void)np;
    for (int i = 0; i < n; i++) {
        const struct measurement *m = c->rows[i];
        double g = gmax_of(c, p, m->dtype);

        if (m->kind == MEAS_GEMM)
            r[i] = gemm_time(c->hw, &c->eff, lat, g, m) / m->time_s - 1;
        else
            r[i] = m->rate / cost_peak_flops(&c->hw->gpu, m->dtype) / g - 1;
    }
    return 0;
}

/* Output tiles tried, by common cuBLAS/CUTLASS threadblock shapes (formulas.md 6.2). */
static const int tile_candidates[][2] = {
    { 128, 128 }, { 128, 256 }, { 256, 128 }, { 64, 128 },
    { 128, 64 },  { 64, 64 },   { 256, 64 },  { 64, 256 },
};

/* One fit at the current tile; latency clamped at zero by refitting without it. */
static int gemm_fit_tile(struct gemm_ctx *c, struct gemm_model *out)
{
    double p[FIT_MAX_PARAMS], g0 = log(c->hw->eff.gemm_max > 0 ? c->hw->eff.gemm_max : 0.8);
    struct fit_result res;
    int off;

    memset(out, 0, sizeof(*out));
    for (;;) {
        off = c->fit_latency ? 1 : 0;
        p[0] = c->hw->eff.gemm_latency / 1e3;
        for (int i = 0; i < c->ng; i++)
            p[off + i] = g0;
        if (fit_nlls(gemm_resid, c, c->n, p, off + c->ng, &res)) {
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
    out->latency_fitted = c->fit_latency || !(c->latency_s > 0);
    out->chisq = res.chisq;
    snprintf(out->msg, sizeof(out->msg), "%s", res.msg);
    for (int d = 0; d < DT_COUNT; d++)
        if (c->dt_param[d] >= 0) {
            out->g[d] = gmax_of(c, p, (enum dtype)d);
            out->g_err[d] = out->g[d] * res.stderr_p[off + c->dt_param[d]];
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
 * outnumber the parameters they are fitted to (gemm_max of each dtype they time, and the
 * latency when fitted): as many rows as parameters leave no residual to judge the fit by (a
 * sigma of 0 and an R^2 of nothing). Best-shape rows are no fit: they read gemm_max directly.
 * And a gemm_max above 1 is a rate above the peak, which no efficiency gives: the rows are
 * faster than the model allows with the hardware's fixed launch latency (one shape cannot
 * separate the two). Returns true, with the message on `log`, when refused.
 */
static bool gemm_undetermined(const struct hardware *hw, const struct gemm_model *gm,
                              const struct measurement *const *rows, int n, bool latency, FILE *log)
{
    bool timed_dt[DT_COUNT] = { false };
    int timed = 0, params = latency ? 1 : 0;

    for (int i = 0; i < n; i++)
        if (rows[i]->kind == MEAS_GEMM) {
            timed++;
            params += !timed_dt[rows[i]->dtype];
            timed_dt[rows[i]->dtype] = true;
        }
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

static int fit_gemm(const struct hardware *hw, const struct meas_set *ms,
                    const struct calib_options *opt, struct calib_result *r, FILE *log)
{
    const struct measurement **rows;
    int n = collect(ms, is_gemm, &rows), nshaped = 0, nshapes, distinct;
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
    for (int d = 0; d < DT_COUNT; d++)
        c.dt_param[d] = -1;
    for (int i = 0; i < n; i++) {
        if (c.dt_param[rows[i]->dtype] < 0)
            c.dt_param[rows[i]->dtype] = c.ng++;
        nshaped += rows[i]->kind == MEAS_GEMM;
    }
    /*
     * Latency and tile need two distinct shapes and one distinct point more than parameters:
     * repeated timings of one shape cannot tell a fixed latency from a lower rate (the fit
     * would be singular and its sigma meaningless), so they determine gemm_max alone.
     */
    distinct = distinct_gemm_points(rows, n, &nshapes);
    can_fit_latency = nshapes >= 2 && distinct >= c.ng + 2 && c.ng + 1 <= FIT_MAX_PARAMS;
    if (c.ng > FIT_MAX_PARAMS) {
        if (log)
            fprintf(log, "calibrate: GEMM rows span too many dtypes\n");
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
    if (gemm_undetermined(hw, &best, rows, n, can_fit_latency, log)) {
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

    pred = xmalloc((size_t)n * sizeof(*pred));
    for (int i = 0; i < n; i++) {
        const struct measurement *m = rows[i];
        double g = best.g[m->dtype];

        pred[i] = m->kind == MEAS_GEMM ? m->flops / gemm_time(hw, &best.eff, best.latency_s, g, m)
                                       : g * cost_peak_flops(&hw->gpu, m->dtype);
    }
    quality(rows, pred, n, &r->q_gemm);
    snprintf(r->q_gemm.note, sizeof(r->q_gemm.note), "%d shaped rows, %s; %.80s", nshaped,
             can_fit_latency ? "latency and tile fitted" : "latency and tile not fitted", best.msg);
    free(pred);
    free(rows);
    return 0;
}

/* Relative least squares for a constant fraction: minimise sum (a/f_i - 1)^2. */
static double rel_mean(const double *f, int n)
{
    double s1 = 0, s2 = 0;

    for (int i = 0; i < n; i++) {
        s1 += 1 / f[i];
        s2 += 1 / (f[i] * f[i]);
    }
    return s2 > 0 ? s1 / s2 : 0;
}

static void fit_attention(const struct hardware *hw, const struct meas_set *ms,
                          struct calib_result *r)
{
    const struct measurement **rows;
    int n = collect(ms, is_attn, &rows);
    double *f = xmalloc((size_t)(n ? n : 1) * sizeof(*f)), *pred;
    const enum meas_kind kinds[2] = { MEAS_ATTN_FLASH, MEAS_ATTN_STD };
    double *target[2] = { &r->eff.attn_flash, &r->eff.attn_standard };
    const unsigned bit[2] = { CAL_ATTN_FLASH, CAL_ATTN_STANDARD };

    for (int k = 0; k < 2; k++) {
        int m = 0;

        for (int i = 0; i < n; i++)
            if (rows[i]->kind == kinds[k])
                f[m++] = rows[i]->rate / cost_peak_flops(&hw->gpu, rows[i]->dtype);
        if (m) {
            *target[k] = rel_mean(f, m);
            r->fitted |= bit[k];
        }
    }
    pred = f;
    for (int i = 0; i < n; i++)
        pred[i] = cost_peak_flops(&hw->gpu, rows[i]->dtype) *
                  (rows[i]->kind == MEAS_ATTN_FLASH ? r->eff.attn_flash : r->eff.attn_standard);
    quality(rows, pred, n, &r->q_attn);
    snprintf(r->q_attn.note, sizeof(r->q_attn.note), "%s",
             n ? "achieved FLOP/s / peak, relative least squares" : "no attention rows");
    free(f);
    free(rows);
}

static void fit_membound(const struct hardware *hw, const struct meas_set *ms,
                         struct calib_result *r)
{
    const struct measurement **rows;
    int n = collect(ms, is_mem, &rows), nt = 0;
    double *x = xmalloc((size_t)(n ? n : 1) * 3 * sizeof(*x)), *y = x + (n ? n : 1),
           *w = y + (n ? n : 1);
    double a = 0, b = 0, peak = hw->gpu.mem_bw_Bps;

    for (int i = 0; i < n; i++)
        if (rows[i]->bytes > 0 && rows[i]->time_s > 0) {
            x[nt] = rows[i]->bytes;
            y[nt] = rows[i]->time_s;
            w[nt] = 1 / (y[nt] * y[nt]);
            nt++;
        }
    if (n && nt >= 2 && !fit_line(x, y, w, nt, &a, &b) && b > 0) {
        if (a < 0) {
            a = 0;
            fit_slope(x, y, w, nt, &b);
            snprintf(r->q_mem.note, sizeof(r->q_mem.note),
                     "timed sizes: bandwidth fitted, launch came out negative (kept)");
        } else {
            r->eff.launch = ns_from_s(a);
            r->fitted |= CAL_LAUNCH;
            snprintf(r->q_mem.note, sizeof(r->q_mem.note),
                     "timed sizes: t = launch + bytes/bw, weighted by 1/t^2");
        }
        r->eff.mem_bw = 1 / (b * peak);
        r->fitted |= CAL_MEM_BW;
    } else if (n) {
        for (int i = 0; i < n; i++)
            x[i] = rows[i]->rate / peak;
        r->eff.mem_bw = rel_mean(x, n);
        r->fitted |= CAL_MEM_BW;
        snprintf(r->q_mem.note, sizeof(r->q_mem.note),
                 "achieved bandwidth only (no timed sizes): launch not fitted");
    } else {
        snprintf(r->q_mem.note, sizeof(r->q_mem.note), "no memory-bound rows");
    }
    for (int i = 0; i < n; i++)
        x[i] = calib_predict_rate(hw, &r->eff, rows[i]);
    quality(rows, x, n, &r->q_mem);
    free(x);
    free(rows);
}

static int coll_group(struct calib_result *r, const struct measurement *m)
{
    for (int i = 0; i < r->ncoll; i++) {
        const struct coll_calib *c = &r->coll[i].cal;

        if (c->op == m->op && c->algo == m->algo && c->proto == m->proto &&
            c->inter_node == (m->nodes > 1))
            return i;
    }
    r->coll = xrealloc(r->coll, (size_t)(r->ncoll + 1) * sizeof(*r->coll));
    memset(&r->coll[r->ncoll], 0, sizeof(*r->coll));
    r->coll[r->ncoll].cal.op = m->op;
    r->coll[r->ncoll].cal.algo = m->algo;
    r->coll[r->ncoll].cal.proto = m->proto;
    r->coll[r->ncoll].cal.inter_node = m->nodes > 1;
    return r->ncoll++;
}

static void fit_one_coll(const struct meas_set *ms, struct calib_coll *cc)
{
    const struct measurement **rows = xcalloc((size_t)ms->n, sizeof(*rows));
    double *x = xcalloc((size_t)ms->n * 4, sizeof(*x)), *y = x + ms->n, *w = y + ms->n,
           *pred = w + ms->n;
    double a = 0, b = 0;
    int n = 0;

    for (int i = 0; i < ms->n; i++) {
        const struct measurement *m = &ms->rows[i];

        if (m->kind != MEAS_COLL || m->op != cc->cal.op || m->algo != cc->cal.algo ||
            m->proto != cc->cal.proto || (m->nodes > 1) != cc->cal.inter_node)
            continue;
        rows[n] = m;
        x[n] = m->bytes * calib_bus_factor(m->op, m->gpus);
        y[n] = m->time_s;
        w[n] = 1 / (y[n] * y[n]);
        n++;
    }
    if (fit_line(x, y, w, n, &a, &b) || a < 0 || !(b > 0)) {
        a = 0;
        fit_slope(x, y, w, n, &b);
        snprintf(cc->q.note, sizeof(cc->q.note), "bandwidth only (latency not determined)");
    } else {
        snprintf(cc->q.note, sizeof(cc->q.note), "alpha-beta, weighted by 1/t^2");
    }
    cc->cal.latency = ns_from_s(a);
    cc->cal.bus_bw_Bps = b > 0 ? 1 / b : 0;
    for (int i = 0; i < n; i++)
        pred[i] = x[i] / (a + x[i] * b);
    quality(rows, pred, n, &cc->q);
    free(x);
    free(rows);
}

static void fit_collectives(const struct meas_set *ms, struct calib_result *r, FILE *log)
{
    for (int i = 0; i < ms->n; i++)
        if (ms->rows[i].kind == MEAS_COLL)
            coll_group(r, &ms->rows[i]);
    for (int g = 0; g < r->ncoll; g++) {
        const struct calib_coll *cc = &r->coll[g];

        fit_one_coll(ms, &r->coll[g]);
        /* NCCL switches LL -> LL128 -> Simple with size (formulas.md 5.3): a line cannot follow. */
        if (log && cc->cal.proto == PROTO_AUTO && cc->q.points > 2)
            fprintf(log,
                    "calibrate: note: %s %s/auto: the protocol was NCCL's choice, so one "
                    "alpha-beta line spans its protocol switches (worst residual %.0f %%)\n",
                    coll_op_name(cc->cal.op), algo_name(cc->cal.algo), 100 * cc->q.worst);
    }
}

static void fit_host(const struct meas_set *ms, struct calib_result *r)
{
    const enum meas_kind kinds[3] = { MEAS_H2D, MEAS_D2H, MEAS_D2D };
    double *v = xmalloc((size_t)(ms->n ? ms->n : 1) * sizeof(*v));

    for (int k = 0; k < 3; k++) {
        int n = 0;

        for (int i = 0; i < ms->n; i++)
            if (ms->rows[i].kind == kinds[k])
                v[n++] = ms->rows[i].rate;
        r->host_Bps[k] = fit_quantile(v, n, 0.5);
    }
    free(v);
}

/*
 * No measured rate may exceed the hardware's peak: compute rows its dense peak in their dtype,
 * memory-bound rows its memory bandwidth (a faster row is another GPU's, or a typo, and would
 * fit an efficiency above 1). 0, or -1 with each such row's line on `log`.
 */
static int check_rates(const struct hardware *hw, const struct meas_set *ms, FILE *log)
{
    int bad = 0;

    for (int i = 0; i < ms->n; i++) {
        const struct measurement *m = &ms->rows[i];
        bool compute = m->kind == MEAS_GEMM || m->kind == MEAS_GEMM_BEST ||
                       m->kind == MEAS_ATTN_FLASH || m->kind == MEAS_ATTN_STD;
        double peak = compute                    ? cost_peak_flops(&hw->gpu, m->dtype)
                      : m->kind == MEAS_MEMBOUND ? hw->gpu.mem_bw_Bps
                                                 : 0;

        if (peak > 0 && m->rate > peak * (1 + 1e-9)) {
            if (log)
                fprintf(log,
                        "%s:%d: error: achieved %.4g %s is above the %s peak of %.4g %s of '%s'\n",
                        ms->csv->name, m->line, m->rate / (compute ? 1e12 : 1e9),
                        compute ? "TFLOP/s" : "GB/s", compute ? dtype_name(m->dtype) : "memory",
                        peak / (compute ? 1e12 : 1e9), compute ? "TFLOP/s" : "GB/s",
                        hw->name ? hw->name : "?");
            bad++;
        }
    }
    return bad ? -1 : 0;
}

int calib_fit(const struct hardware *hw, const struct meas_set *ms, const struct calib_options *opt,
              struct calib_result *out, FILE *log)
{
    memset(out, 0, sizeof(*out));
    if (check_rates(hw, ms, log))
        return -1;
    out->eff = hw->eff;
    out->gemm_dtype = opt->gemm_dtype;
    out->coll_report_only = opt->coll_report_only;
    fit_membound(hw, ms, out); /* first: the GEMM memory roofline uses mem_bw */
    if (fit_gemm(hw, ms, opt, out, log))
        return -1;
    fit_attention(hw, ms, out);
    fit_collectives(ms, out, log);
    fit_host(ms, out);
    return 0;
}

void calib_result_release(struct calib_result *r)
{
    free(r->coll);
    r->coll = NULL;
    r->ncoll = 0;
}
