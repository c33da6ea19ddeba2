/*
 * plan.c - the layout search of `simtrain plan` (see plan.h): enumerate,
 * check, probe, estimate, then simulate the best.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime() */

#include "whatif/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/profile.h"
#include "config/schema.h"
#include "model/layout.h"
#include "report/band.h"
#include "run/run.h"
#include "strategy/strategy.h"
#include "model/workload.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *plan_reject_name(int reason)
{
    static const char *const n[PR_COUNT] = {
        [PR_DIVISIBILITY] = "divisibility",
        [PR_COMBINATION] = "invalid combination",
        [PR_NOT_MODELLED] = "not modelled yet",
        [PR_DUPLICATE] = "same as another layout",
        [PR_DOMINATED] = "dominated setting",
        [PR_HOST_MEMORY] = "host memory (offload)",
        [PR_OOM_ESTIMATE] = "out of memory (estimate)",
        [PR_OOM_SIMULATED] = "out of memory (simulated)",
        [PR_SIM_FAILED] = "simulation declined",
    };
    return reason >= 0 && reason < PR_COUNT ? n[reason] : "?";
}

void plan_describe(const struct plan_cand *c, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "dp %d tp %d pp %d", c->dp, c->tp, c->pp);

#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (len < n)                                                                               \
            len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__);                              \
    } while (0)
    if (c->vpp > 1)
        ADD(" vpp %d", c->vpp);
    if (c->cp > 1)
        ADD(" cp %d", c->cp);
    if (c->ep > 1)
        ADD(" ep %d", c->ep);
    if (c->sp)
        ADD(" sp");
    if (c->pp > 1)
        ADD(" %s", schedule_name((enum pp_schedule)c->schedule));
    ADD(" %s mb %d %s", sharding_name((enum sharding)c->sharding), c->micro_batch,
        recompute_name((enum recompute)c->recompute));
    /* the knobs away from their preferred value, and TP overlap when on */
    for (int k = 0; k < PK_COUNT; k++) {
        const struct plan_knob *kn = &plan_knobs[k];
        int v = c->knob[k] - 1;
        if (v < 0 || v >= kn->nvalues || (v == kn->preferred && k != PK_TP_OVERLAP) ||
            (k == PK_TP_OVERLAP && !v))
            continue;
        ADD(" %s %s", kn->name, kn->values[v]);
    }
#undef ADD
}

/* The keys a candidate sets. */
static const char *const plan_keys[] = {
    "parallelism.sequence_parallel", "parallelism.schedule", "parallelism.sharding",
    "training.micro_batch",          "training.recompute",   "training.recompute_layers",
};

/* The base with the keys a candidate sets marked as the user's (plan_apply()), once. */
static void mark_plan_keys(struct scenario *s)
{
    for (size_t i = 0; i < ARRAY_LEN(plan_keys); i++)
        profile_override(s, plan_keys[i]);
}

/* plan_apply() on a base whose plan keys are marked already (mark_plan_keys()). */
static void apply_marked(const struct scenario *marked, const struct plan_cand *c,
                         struct scenario *out)
{
    *out = *marked;
    out->gpus = c->gpus;
    out->nodes = c->nodes;
    out->par.dp = c->dp;
    out->par.tp = c->tp;
    out->par.pp = c->pp;
    out->par.vpp = c->vpp;
    out->par.cp = c->cp;
    out->par.ep = c->ep;
    out->par.sequence_parallel = c->sp;
    out->par.schedule = (enum pp_schedule)c->schedule;
    out->par.sharding = (enum sharding)c->sharding;
    out->train.micro_batch = c->micro_batch;
    out->train.recompute = (enum recompute)c->recompute;
    if (c->recompute != RC_FULL)
        out->train.recompute_layers = 0;
    /* The candidate's own settings win over the framework profile's; its rules and the
     * defaults that follow the layout (zero.overlap_comm with the stage, ddp.overlap with the
     * framework model parallelism selects) are applied again, unless the user gave them. */
    profile_apply(out);
    plan_knobs_apply(c->knob, out);
}

void plan_apply(const struct scenario *base, const struct plan_cand *c, struct scenario *out)
{
    struct scenario marked = *base;

    mark_plan_keys(&marked);
    apply_marked(&marked, c, out);
}

void plan_cand_changes(const struct scenario *base, const struct plan_cand *c, char *buf, size_t n)
{
    struct scenario s, d;
    struct plan_cand plain = *c;
    struct cfg_error err;

    plan_apply(base, c, &s);
    (void)scenario_finalize(&s, &err); /* derives what the candidate leaves to the loader */
    memset(plain.knob, 0, sizeof(plain.knob));
    plan_apply(base, &plain, &d);
    (void)scenario_finalize(&d, &err);
    plan_changes(base, &d, &s, buf, n);
}

/* ---- the builder probe: what is modelled, once per kind of candidate ------------------ */

struct probe {
    int key[10];
    char reason[200]; /* "" = modelled */
};

struct search {
    const struct scenario *base;
    struct scenario marked; /* base with the plan keys marked (mark_plan_keys()) */
    const struct plan_opts *o;
    struct plan_result *res;
    struct estimator *est;
    struct probe *probes;
    int nprobes;
    size_t cap_probes;
    size_t cap_fit, cap_final;
    bool selective_noop; /* selective recompute recomputes nothing (flash attention) */
    bool over;           /* more layouts than o->max_layouts: the search stopped */
};

/* "" when the builder accepts the kind of `s`, else its reason. */
static const char *probe(struct search *se, const struct scenario *s)
{
    const struct parallelism *p = &s->par;
    int key[10] = { p->sharding,      p->framework,      p->cp > 1,   p->ep > 1,
                    p->pp > 1,        p->tp > 1,         p->schedule, p->sequence_parallel,
                    s->train.offload, p->tp_comm_overlap };
    struct probe *pr;
    struct scenario small = *s;
    struct layout l;
    struct prog **progs;

    for (int i = 0; i < se->nprobes; i++)
        if (memcmp(se->probes[i].key, key, sizeof(key)) == 0)
            return se->probes[i].reason;
    grow_array((void **)&se->probes, &se->cap_probes, (size_t)se->nprobes + 1, sizeof(*se->probes));
    pr = &se->probes[se->nprobes++];
    memcpy(pr->key, key, sizeof(key));
    pr->reason[0] = '\0';
    /* The fewest micro-batches the schedule allows: building is then cheap. */
    small.train.global_batch =
        s->train.micro_batch * p->dp * (p->schedule == SCHED_INTERLEAVED ? p->pp : 1);
    layout_init(&l, &small);
    progs = xcalloc((size_t)p->pp, sizeof(*progs));
    if (strategy_build(&small, &l, progs, pr->reason, sizeof(pr->reason)) != 0 && !pr->reason[0])
        snprintf(pr->reason, sizeof(pr->reason), "the strategy builder declines it");
    for (int i = 0; i < p->pp; i++)
        prog_free(progs[i]);
    free(progs);
    return pr->reason;
}

/* ---- evaluation of one candidate ------------------------------------------------------- */

static void reject(struct search *se, int why, const struct plan_cand *c, const char *msg)
{
    struct plan_result *r = se->res;

    if (r->rejected[why]++ == 0) {
        char d[160];
        plan_describe(c, d, sizeof(d));
        /* The reason is cut to what the example holds after the candidate (GCC checks it). */
        if (se->o->ngpus > 1)
            snprintf(r->example[why], sizeof(r->example[why]), "%d GPUs %s: %.140s", c->gpus, d,
                     msg);
        else
            snprintf(r->example[why], sizeof(r->example[why]), "%s: %.150s", d, msg);
    }
}

static bool is_divisibility(const char *msg)
{
    return strstr(msg, "divide") || strstr(msg, "multiple") || strstr(msg, "divisible") ||
           strstr(msg, "does not match");
}

static double objective(const struct search *se, const struct plan_cand *c, double step_s)
{
    if (se->o->objective == PLAN_BY_COST)
        return step_s * c->gpus; /* GPU-seconds per step; the price is a constant factor */
    return step_s;
}

/* How one knob setting of a layout came out. */
enum outcome {
    OUT_FITS,
    OUT_OOM, /* over the GPU's memory by estimate */
    OUT_REJECTED
};

/* Knob setting c->knob of layout s0 (finalized): the checks, then the estimate. */
static enum outcome try_setting(struct search *se, struct plan_cand *c, const struct scenario *s0)
{
    struct plan_result *r = se->res;
    struct scenario s = *s0;
    struct cfg_error err;
    const char *why;
    char msg[200];

    plan_knobs_apply(c->knob, &s);
    if (plan_knobs_need_check(c->knob, s0) && scenario_finalize(&s, &err) != 0) {
        reject(se, is_divisibility(err.msg) ? PR_DIVISIBILITY : PR_COMBINATION, c, err.msg);
        return OUT_REJECTED;
    }
    c->offload = s.train.offload != OFFLOAD_NONE;
    if (c->offload) {
        double host = plan_host_bytes_node(&s);
        if (host > s.hw.host.mem_bytes) {
            msg[0] = '\0';
            if (!r->rejected[PR_HOST_MEMORY]) /* only the first is shown: format it alone */
                snprintf(msg, sizeof(msg), "host RAM %.0f GiB per node > %.0f GiB", host / GIB,
                         s.hw.host.mem_bytes / GIB);
            reject(se, PR_HOST_MEMORY, c, msg);
            return OUT_REJECTED;
        }
    }
    why = probe(se, &s);
    if (why[0]) {
        reject(se, PR_NOT_MODELLED, c, why);
        return OUT_REJECTED;
    }
    r->estimated++;
    estimate_scenario(se->est, &s, &c->est);
    if (c->est.peak_bytes > s.hw.gpu.mem_bytes) {
        msg[0] = '\0';
        if (!r->rejected[PR_OOM_ESTIMATE])
            snprintf(msg, sizeof(msg), "estimated peak %.1f GiB > %.1f GiB",
                     c->est.peak_bytes / GIB, s.hw.gpu.mem_bytes / GIB);
        reject(se, PR_OOM_ESTIMATE, c, msg);
        return OUT_OOM;
    }
    c->est_objective = objective(se, c, c->est.step_s);
    c->sim_status = -1;
    train_totals(&s, c->est.step_s, &c->tt);
    grow_array((void **)&r->fit, &se->cap_fit, (size_t)r->nfit + 1, sizeof(*r->fit));
    r->fit[r->nfit++] = *c;
    return OUT_FITS;
}

/*
 * The most memory knob setting `knob` could free against the preferred one (estimate `pref`):
 * offload the model states it moves, DeepSpeed without overlap one gradient bucket, FSDP with
 * less prefetch the gathered units, activation offload the saved activations; the other knobs
 * free nothing.
 */
static double can_free(const unsigned char *knob, const struct estimate *pref)
{
    int off = knob[PK_OFFLOAD] - 1, bwd = knob[PK_BWD_PREFETCH] - 1;
    double b = 0;

    if (off > OFFLOAD_NONE)
        b += pref->mem[MC_MASTER] + pref->mem[MC_OPTIM] + pref->mem[MC_GRADS] +
             (off == OFFLOAD_PARAMS ? pref->mem[MC_PARAMS] : 0);
    if (knob[PK_ZERO_OVERLAP] == 1) /* overlap_comm off */
        b += pref->mem[MC_COMM];
    if ((bwd >= 0 && bwd != BWD_PREFETCH_PRE) || knob[PK_FWD_PREFETCH] == 1)
        b += pref->mem[MC_GATHERED];
    if (knob[PK_ACT_OFFLOAD] - 1 > ACT_OFFLOAD_NONE)
        b += pref->mem[MC_ACT];
    return b;
}

/* Does setting `w` (value indices per knob) dominate `v`: at least as preferred everywhere? */
static bool at_least_as_preferred(const int *w, const int *v)
{
    for (int k = 0; k < PK_COUNT; k++)
        if (w[k] > v[k])
            return false;
    return true;
}

/*
 * Every knob setting of layout c, in mixed-radix order of the value indices (each knob's values
 * listed preferred first, then slower ones that need no more memory), so that a setting comes
 * after every setting at least as preferred in every knob. A setting is dominated when one of
 * those fits by estimate (it would only be slower); when the preferred one does not fit, a
 * setting whose memory cannot fit either (the preferred estimate less what it can free) is
 * counted out of memory without an estimate.
 */
static void evaluate(struct search *se, struct plan_cand *c)
{
    struct plan_result *r = se->res;
    struct scenario s0;
    struct cfg_error err;
    int vals[PK_COUNT][PK_MAX_VALUES], nv[PK_COUNT], total = 1, nfits = 0;
    int fits[64][PK_COUNT], idx[PK_COUNT];
    enum outcome pref = OUT_REJECTED;
    struct estimate pe;
    double cap = se->base->hw.gpu.mem_bytes;
    char msg[200];

    if (se->o->max_layouts > 0 && r->layouts >= se->o->max_layouts) {
        se->over = true;
        return;
    }
    r->layouts++;
    memset(c->knob, 0, sizeof(c->knob));
    c->variant = 0;
    c->offload = false;
    apply_marked(&se->marked, c, &s0);
    if (scenario_finalize(&s0, &err) != 0) {
        r->evaluated++;
        reject(se, is_divisibility(err.msg) ? PR_DIVISIBILITY : PR_COMBINATION, c, err.msg);
        return;
    }
    c->schedule = s0.par.schedule;
    if (c->recompute == RC_SELECTIVE && se->selective_noop) {
        r->evaluated++;
        reject(se, PR_DUPLICATE, c,
               "selective recompute has nothing to recompute under flash attention (= none)");
        return;
    }
    for (int k = 0; k < PK_COUNT; k++) {
        nv[k] = plan_knob_values(&s0, k, vals[k]);
        total *= nv[k] > 0 ? nv[k] : 1;
    }
    memset(&pe, 0, sizeof(pe));
    for (int v = 0; v < total; v++) {
        int rest = v;
        bool dominated = false;
        for (int k = 0; k < PK_COUNT; k++) { /* v in mixed radix: all zero = the preferred */
            idx[k] = nv[k] > 0 ? rest % nv[k] : 0;
            c->knob[k] = (unsigned char)(nv[k] > 0 ? vals[k][idx[k]] + 1 : 0);
            rest /= nv[k] > 0 ? nv[k] : 1;
        }
        c->variant = v;
        r->evaluated++;
        for (int i = 0; i < nfits && !dominated; i++)
            dominated = at_least_as_preferred(fits[i], idx);
        if (dominated) {
            reject(se, PR_DOMINATED, c,
                   "slower than a setting of the same layout that fits and is preferred in every "
                   "knob");
            continue;
        }
        if (v > 0 && pref == OUT_OOM &&
            pe.peak_bytes - pe.mem[MC_RESERVE] - can_free(c->knob, &pe) > cap) {
            msg[0] = '\0';
            if (!r->rejected[PR_OOM_ESTIMATE])
                snprintf(
                    msg, sizeof(msg),
                    "estimated peak above %.1f GiB > %.1f GiB (the preferred setting's less what "
                    "this one can free)",
                    (pe.peak_bytes - pe.mem[MC_RESERVE] - can_free(c->knob, &pe)) / GIB, cap / GIB);
            reject(se, PR_OOM_ESTIMATE, c, msg);
            continue;
        }
        {
            enum outcome o = try_setting(se, c, &s0);
            if (v == 0) {
                pref = o;
                pe = c->est;
            }
            if (o == OUT_FITS && nfits < 64)
                memcpy(fits[nfits++], idx, sizeof(idx));
        }
    }
}

/* ---- enumeration ------------------------------------------------------------------------ */

static int divisors(int n, int *out, int max)
{
    int k = 0;

    for (int d = 1; d <= n && k < max; d++)
        if (n % d == 0)
            out[k++] = d;
    return k;
}

#define MAX_DIV 256

/* Every candidate for one GPU count, numbered; evaluates this shard's. */
static void enumerate(struct search *se, int gpus, int nodes)
{
    const struct scenario *b = se->base;
    const struct plan_opts *o = se->o;
    int dt[MAX_DIV], dpp[MAX_DIV], dc[MAX_DIV], dv[MAX_DIV], de[MAX_DIV];
    int ntp = divisors(gpus, dt, MAX_DIV);
    int max_mb = o->max_micro_batch > 0 ? o->max_micro_batch : 64;
    bool moe = b->model.moe.experts > 0;
    struct plan_cand c;

    memset(&c, 0, sizeof(c));
    c.gpus = gpus;
    c.nodes = nodes;
    for (int i = 0; i < ntp; i++) {
        int npp = divisors(gpus / dt[i], dpp, MAX_DIV);
        for (int j = 0; j < npp; j++) {
            int ncp = divisors(gpus / dt[i] / dpp[j], dc, MAX_DIV);
            int pp = dpp[j], nv = 1;
            dv[0] = 1;
            if (pp > 1 && b->model.layers % pp == 0)
                nv = divisors(b->model.layers / pp, dv, MAX_DIV);
            for (int k = 0; k < ncp; k++) {
                int dp = gpus / (dt[i] * pp * dc[k]);
                int nep = moe ? divisors(dp, de, MAX_DIV) : 1;
                if (!moe)
                    de[0] = 1;
                c.tp = dt[i];
                c.pp = pp;
                c.cp = dc[k];
                c.dp = dp;
                for (int v = 0; v < nv; v++) {
                    static const int one[] = { SCHED_1F1B };
                    static const int flat[] = { SCHED_1F1B, SCHED_GPIPE, SCHED_ZB_H1 };
                    static const int inter[] = { SCHED_INTERLEAVED };
                    const int *sch = pp == 1 ? one : dv[v] > 1 ? inter : flat;
                    int nsch = pp == 1 || dv[v] > 1 ? 1 : 3;
                    c.vpp = dv[v];
                    for (int q = 0; q < nsch; q++)
                        for (int e = 0; e < nep; e++)
                            for (int sh = SHARD_NONE; sh <= SHARD_FSDP_NO_SHARD; sh++)
                                for (int mb = 1; mb <= max_mb; mb *= 2) {
                                    if (mb > 1 && (long)mb * dp > b->train.global_batch)
                                        break;
                                    for (int q2 = 0; q2 < plan_n_recompute_policies; q2++)
                                        for (int sp = 0; sp <= (c.tp > 1); sp++) {
                                            int rc = plan_recompute_policies[q2];
                                            long number = se->res->enumerated++;
                                            if (number % o->shard_n != o->shard_k)
                                                continue;
                                            c.number = number;
                                            c.schedule = sch[q];
                                            c.ep = de[e];
                                            c.sharding = sh;
                                            c.micro_batch = mb;
                                            c.recompute = rc;
                                            c.sp = sp;
                                            evaluate(se, &c);
                                        }
                                }
                }
            }
        }
    }
}

/* ---- ranking and simulation --------------------------------------------------------------- */

/* -1, 0 or 1 as a < b, a == b, a > b (no equality test on doubles). */
static int cmp_double(double a, double b)
{
    return (a > b) - (a < b);
}

static int cmp_double_p(const void *a, const void *b)
{
    return cmp_double(*(const double *)a, *(const double *)b);
}

static int by_estimate(const void *a, const void *b)
{
    const struct plan_cand *x = a, *y = b;

    if (cmp_double(x->est_objective, y->est_objective))
        return cmp_double(x->est_objective, y->est_objective);
    if (cmp_double(x->est.peak_bytes, y->est.peak_bytes))
        return cmp_double(x->est.peak_bytes, y->est.peak_bytes);
    if (x->number != y->number)
        return (x->number > y->number) - (x->number < y->number);
    return (x->variant > y->variant) - (x->variant < y->variant);
}

static int by_simulation(const void *a, const void *b)
{
    const struct plan_cand *x = a, *y = b;

    if (cmp_double(x->sim_objective, y->sim_objective))
        return cmp_double(x->sim_objective, y->sim_objective);
    if (cmp_double(x->sim_peak_bytes, y->sim_peak_bytes))
        return cmp_double(x->sim_peak_bytes, y->sim_peak_bytes);
    if (x->number != y->number)
        return (x->number > y->number) - (x->number < y->number);
    return (x->variant > y->variant) - (x->variant < y->variant);
}

static void simulate(struct search *se, struct plan_cand *c, FILE *progress)
{
    struct plan_result *r = se->res;
    struct scenario s;
    struct cfg_error err;
    struct sim_opts opts = { 0 };
    struct run run;
    struct band band;
    char reason[256], d[160];

    apply_marked(&se->marked, c, &s);
    (void)scenario_finalize(&s, &err); /* passed in evaluate() */
    c->simulated = true;
    r->nsimulated++;
    plan_describe(c, d, sizeof(d));
    if (run_scenario(&s, &opts, &run, reason, sizeof(reason)) != 0) {
        c->sim_status = strstr(reason, "not modelled") ? PR_NOT_MODELLED : PR_SIM_FAILED;
        reject(se, c->sim_status, c, reason);
        if (progress)
            fprintf(progress, "simtrain plan: simulated %s: %s\n", d, reason);
        return;
    }
    c->sim_step_s = run.step_s;
    band_lookup(&s, run.step_s, &band);
    c->sim_lo_s = band.lo_s;
    c->sim_hi_s = band.hi_s;
    c->sim_peak_bytes = run.peak_bytes;
    c->sim_tight = run.reserve_short_bytes > 0;
    c->sim_mfu = run.mfu;
    c->sim_tokens_per_s = run.tokens_per_s;
    c->sim_objective = objective(se, c, run.step_s);
    memcpy(c->sim_breakdown_s, run_metrics(&run)->breakdown_s, sizeof(c->sim_breakdown_s));
    c->tt = run_metrics(&run)->totals;
    if (c->offload)
        plan_offload_needs(&s, &run, &c->needs);
    plan_cand_changes(se->base, c, c->changes, sizeof(c->changes));
    if (!run.fits) {
        char msg[200];
        c->sim_status = PR_OOM_SIMULATED;
        snprintf(msg, sizeof(msg), "simulated peak %.1f GiB > %.1f GiB (estimate %.1f GiB)",
                 run.peak_bytes / (1024.0 * 1024 * 1024),
                 run.capacity_bytes / (1024.0 * 1024 * 1024),
                 c->est.peak_bytes / (1024.0 * 1024 * 1024));
        reject(se, PR_OOM_SIMULATED, c, msg);
    } else {
        grow_array((void **)&r->final, &se->cap_final, (size_t)r->nfinal + 1, sizeof(*r->final));
        r->final[r->nfinal++] = *c;
    }
    if (progress)
        fprintf(progress, "simtrain plan: simulated %s: %.4g s per step%s\n", d, run.step_s,
                run.fits ? "" : ", out of memory");
    run_release(&run);
}

/*
 * Whether selective recompute changes nothing for this model: the attention
 * core it would recompute is fused (FlashAttention recomputes it internally),
 * so time and saved activations equal recompute none (workload_layer.c).
 */
static bool selective_noop(const struct scenario *base)
{
    struct shard sh;
    struct layer_cost lc;
    double a = 0, b = 0;

    workload_shard(base, &sh);
    workload_layer(base, &sh, false, &lc);
    a = lc.act[RC_SELECTIVE];
    b = lc.act[RC_NONE];
    return lc.recompute_selective == 0 && a >= b * (1 - 1e-12) && a <= b * (1 + 1e-12);
}

/* The top-th best simulated objective so far. */
static double kth_objective(const struct plan_result *r, int top)
{
    double *v = xmalloc(sizeof(double) * (size_t)r->nfinal), kth;

    for (int i = 0; i < r->nfinal; i++)
        v[i] = r->final[i].sim_objective;
    qsort(v, (size_t)r->nfinal, sizeof(double), cmp_double_p);
    kth = v[top - 1];
    free(v);
    return kth;
}

/* |estimate / engine - 1| of every simulated candidate: median and maximum. */
static void estimate_errors(struct plan_result *r)
{
    double *st = xmalloc(sizeof(double) * (size_t)(r->nsimulated + 1));
    double *me = xmalloc(sizeof(double) * (size_t)(r->nsimulated + 1));
    int n = 0;

    for (long i = 0; i < r->nfit; i++) {
        const struct plan_cand *c = &r->fit[i];
        if (!c->simulated || !(c->sim_step_s > 0) || !(c->sim_peak_bytes > 0))
            continue;
        st[n] = fabs(c->est.step_s / c->sim_step_s - 1);
        me[n++] = fabs(c->est.peak_bytes / c->sim_peak_bytes - 1);
    }
    r->nerr = n;
    if (n > 0) {
        qsort(st, (size_t)n, sizeof(double), cmp_double_p);
        qsort(me, (size_t)n, sizeof(double), cmp_double_p);
        r->err_step_median = n % 2 ? st[n / 2] : (st[n / 2 - 1] + st[n / 2]) / 2;
        r->err_mem_median = n % 2 ? me[n / 2] : (me[n / 2 - 1] + me[n / 2]) / 2;
        r->err_step_max = st[n - 1];
        r->err_mem_max = me[n - 1];
    }
    free(st);
    free(me);
}

static int gpu_counts(const struct scenario *b, const struct plan_opts *o, int *gpus, int *nodes,
                      char *msg, size_t msglen)
{
    int n = o->ngpus > 0 ? o->ngpus : 1, gpn = b->hw.gpus_per_node;

    for (int i = 0; i < n; i++) {
        int g = o->ngpus > 0 ? o->gpus[i] : b->gpus;
        if (g < 1 || (g > gpn && g % gpn != 0)) {
            snprintf(msg, msglen,
                     "%d GPUs: more than one node of '%s' needs a multiple of its %d GPUs per node",
                     g, b->hw.name, gpn);
            return -1;
        }
        if (g > gpn && b->hw.net.nics_per_node == 0) {
            snprintf(msg, msglen, "%d GPUs span several nodes but hardware '%s' has no network", g,
                     b->hw.name);
            return -1;
        }
        gpus[i] = g;
        nodes[i] = g > gpn ? g / gpn : 1;
    }
    return n;
}

int plan_search(const struct scenario *base, const struct plan_opts *o, struct plan_result *out,
                FILE *progress, char *msg, size_t msglen)
{
    struct search se;
    int gpus[PLAN_MAX_GPU_COUNTS], nodes[PLAN_MAX_GPU_COUNTS], n;
    int budget = o->simulate > 0 ? o->simulate : 3 * o->top + 2;
    double t0;

    memset(out, 0, sizeof(*out));
    out->base = base;
    out->objective = o->objective;
    out->capacity_bytes = base->hw.gpu.mem_bytes;
    n = gpu_counts(base, o, gpus, nodes, msg, msglen);
    if (n < 0)
        return -1;
    memset(&se, 0, sizeof(se));
    se.base = base;
    se.marked = *base;
    mark_plan_keys(&se.marked);
    se.o = o;
    se.res = out;
    se.est = estimator_new();
    se.selective_noop = selective_noop(base);
    t0 = now_s();
    for (int i = 0; i < n && !se.over; i++)
        enumerate(&se, gpus[i], nodes[i]);
    if (se.over) {
        snprintf(msg, msglen,
                 "the search has more than %ld layouts, the bound on the work of one request "
                 "(plan fewer GPUs, or run `simtrain plan` on the command line)",
                 o->max_layouts);
        estimator_free(se.est);
        free(se.probes);
        plan_result_release(out);
        return -1;
    }
    if (out->nfit > 0)
        qsort(out->fit, (size_t)out->nfit, sizeof(*out->fit), by_estimate);
    out->search_s = now_s() - t0;
    t0 = now_s();
    /* Simulate in estimate order until `top` fit, then go on while a candidate's estimate
     * still beats the top-th simulated figure (the estimate may be optimistic), within budget. */
    for (long i = 0; i < out->nfit && out->nsimulated < budget; i++) {
        if (out->nfinal >= o->top && out->fit[i].est_objective >= kth_objective(out, o->top))
            break;
        simulate(&se, &out->fit[i], progress);
    }
    estimate_errors(out);
    if (out->nfinal > 0)
        qsort(out->final, (size_t)out->nfinal, sizeof(*out->final), by_simulation);
    if (out->nfinal > o->top)
        out->nfinal = o->top; /* the others stay marked in fit[] */
    out->simulate_s = now_s() - t0;
    estimator_free(se.est);
    free(se.probes);
    return 0;
}

void plan_result_release(struct plan_result *r)
{
    free(r->fit);
    free(r->final);
    memset(r, 0, sizeof(*r));
}
