/*
 * calibrate.c - fitted cost-model parameters from measurements (see
 * calibrate.h): the model each class of rows is fitted to, shared with
 * `--check`, and the fits themselves. Rows come from calibrate_read.c; the
 * calibration file and the reports are written by cmd_calibrate.c.
 */
#include "fit/calibrate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/attn_table.h"
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

/* A fused-attention row's FlashAttention-2 rate relative to the reference shape (attn_table.h). */
static double flash_rel(const struct hardware *hw, const struct measurement *m)
{
    if (!(m->seq > 0 && m->head_dim > 0))
        return 1;
    return attn_rel_rate(hw->gpu.arch, ATTN_IMPL_CUDA, m->head_dim, m->causal, m->seq);
}

/* The peak an attention row's efficiency is a fraction of: at the SM clock it logged, else at
 * the sustained clock (cost_attn_peak()), as the GEMM rows. */
static double attn_peak(const struct hardware *hw, const struct measurement *m)
{
    return cost_attn_peak(&hw->gpu, m->dtype, hw->gpu.tensor_cores > 0 ? m->clock_Hz : 0);
}

double calib_predict_rate(const struct hardware *hw, const struct efficiency *eff,
                          const struct measurement *m)
{
    double bw = hw->gpu.mem_bw_Bps * eff->mem_bw;
    const struct coll_calib *c;
    double x;

    double clock = hw->gpu.tensor_cores > 0 ? m->clock_Hz : 0; /* the row's logged SM clock */

    switch (m->kind) {
    case MEAS_GEMM:
        return m->flops / calib_gemm_seconds(hw, eff, eff->gemm_latency / NS_PER_S,
                                             cost_gemm_eff(eff, m->dtype), clock, m);
    case MEAS_GEMM_BEST:
        return cost_gemm_peak_at(&hw->gpu, m->dtype, clock) * cost_gemm_eff(eff, m->dtype);
    case MEAS_ATTN_FLASH:
        return attn_peak(hw, m) * eff->attn_flash * flash_rel(hw, m);
    case MEAS_ATTN_STD:
        return attn_peak(hw, m) * eff->attn_standard;
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
void calib_quality_of(const struct measurement *const *rows, const double *pred_rate, int n,
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

int calib_collect(const struct meas_set *ms, bool (*want)(const struct measurement *),
                  const struct measurement ***out)
{
    int n = 0;

    *out = xcalloc((size_t)(ms->n ? ms->n : 1), sizeof(**out));
    for (int i = 0; i < ms->n; i++)
        if (want(&ms->rows[i]))
            (*out)[n++] = &ms->rows[i];
    return n;
}

bool calib_is_gemm(const struct measurement *m)
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

/* Attention's efficiencies are fractions of the peak at the clocks this calibration fitted. */
static void fit_attention(const struct hardware *hw_in, const struct meas_set *ms,
                          struct calib_result *r)
{
    struct hardware fitted = *hw_in;
    const struct hardware *hw = &fitted;
    const struct measurement **rows;
    int n = calib_collect(ms, is_attn, &rows);
    double *f = xmalloc((size_t)(n ? n : 1) * sizeof(*f)), *pred;
    const enum meas_kind kinds[2] = { MEAS_ATTN_FLASH, MEAS_ATTN_STD };
    double *target[2] = { &r->eff.attn_flash, &r->eff.attn_standard };
    const unsigned bit[2] = { CAL_ATTN_FLASH, CAL_ATTN_STANDARD };

    for (int d = 0; d < DT_COUNT; d++)
        if (r->clock_sust_Hz[d] > 0)
            fitted.gpu.clock_sust_Hz[d] = r->clock_sust_Hz[d];

    for (int k = 0; k < 2; k++) {
        int m = 0;

        for (int i = 0; i < n; i++)
            if (rows[i]->kind == kinds[k])
                f[m++] =
                    rows[i]->rate / attn_peak(hw, rows[i]) / (k == 0 ? flash_rel(hw, rows[i]) : 1);
        if (m) {
            *target[k] = rel_mean(f, m);
            r->fitted |= bit[k];
        }
    }
    pred = f;
    for (int i = 0; i < n; i++)
        pred[i] = attn_peak(hw, rows[i]) * (rows[i]->kind == MEAS_ATTN_FLASH
                                                ? r->eff.attn_flash * flash_rel(hw, rows[i])
                                                : r->eff.attn_standard);
    calib_quality_of(rows, pred, n, &r->q_attn);
    snprintf(r->q_attn.note, sizeof(r->q_attn.note), "%s",
             n ? "achieved FLOP/s / peak (fused: FA2 at the reference shape), relative LS"
               : "no attention rows");
    free(f);
    free(rows);
}

static void fit_membound(const struct hardware *hw, const struct meas_set *ms,
                         struct calib_result *r)
{
    const struct measurement **rows;
    int n = calib_collect(ms, is_mem, &rows), nt = 0;
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
    calib_quality_of(rows, x, n, &r->q_mem);
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
    calib_quality_of(rows, pred, n, &cc->q);
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
 * No measured rate may exceed the hardware's peak: compute rows its dense peak in their dtype
 * (at the highest SM clock where the hardware gives the clock model), memory-bound rows its
 * memory bandwidth (a faster row is another GPU's, or a typo, and would fit an efficiency above
 * 1). 0, or -1 with each such row's line on `log`.
 */
static int check_rates(const struct hardware *hw, const struct meas_set *ms, FILE *log)
{
    int bad = 0;

    for (int i = 0; i < ms->n; i++) {
        const struct measurement *m = &ms->rows[i];
        bool compute = m->kind == MEAS_GEMM || m->kind == MEAS_GEMM_BEST ||
                       m->kind == MEAS_ATTN_FLASH || m->kind == MEAS_ATTN_STD;
        double burst = hw->gpu.clock_max_Hz > 0
                           ? cost_gemm_peak_at(&hw->gpu, m->dtype, hw->gpu.clock_max_Hz)
                           : 0;
        double peak = compute                    ? fmax(cost_peak_flops(&hw->gpu, m->dtype), burst)
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
    if (calib_fit_gemm(hw, ms, opt, out, log))
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
