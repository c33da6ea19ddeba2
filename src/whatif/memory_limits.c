/*
 * memory_limits.c - the searches of `simtrain memory`'s limits (memory_limits.h): the
 * configurations they try, the closed-form bracket and the engine's bisection.
 */
#include "whatif/memory_limits.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/schema.h"
#include "whatif/estimate.h"

#define MB_CAP   4096    /* largest micro-batch searched */
#define SEQ_CAP  1048576 /* longest sequence searched, tokens (no learned positions) */
#define SEQ_GRID 128     /* sequence lengths are multiples of this (and of the layout's needs) */
#define GPUS_CAP 65536   /* most GPUs searched */

/* One configuration the searches try: the reference layout with one axis moved. */
struct config {
    int gpus;
    enum sharding sharding;
    int micro_batch;
    int seq_len;
    bool keep_batch; /* keep the global batch where micro_batch x dp divides it */
};

struct ctx {
    const struct scenario *base;
    struct memory_limits *out;
    int accum;         /* the scenario's micro-batches per step */
    int first_pt;      /* the current search's first point (the memo's range) */
    struct config cfg; /* the current search's configuration */
    int axis;
    const long *vals; /* the current search's values, in the order fits holds then fails */
};

/* Scenario `out` of base with configuration c; 0, or -1 with the loader's reason. */
static int make(const struct scenario *b, int accum, const struct config *c, struct scenario *out,
                char *msg, size_t n)
{
    const struct parallelism *p = &b->par;
    int gpn = b->hw.gpus_per_node, mp = p->tp * p->pp * p->cp, dp;
    long gb;
    struct cfg_error err;

    *out = *b;
    if (c->gpus % mp || (c->gpus > gpn && c->gpus % gpn)) {
        snprintf(msg, n, "%d GPUs do not form whole nodes of tp x pp x cp = %d", c->gpus, mp);
        return -1;
    }
    dp = c->gpus / mp;
    out->gpus = c->gpus;
    out->nodes = c->gpus > gpn ? c->gpus / gpn : 1;
    out->par.dp = dp;
    out->par.sharding = c->sharding;
    out->train.micro_batch = c->micro_batch;
    out->train.seq_len = c->seq_len;
    gb = (long)accum * c->micro_batch * dp;
    if (c->keep_batch && b->train.global_batch % ((long)c->micro_batch * dp) == 0)
        gb = b->train.global_batch;
    if (gb > INT_MAX) {
        snprintf(msg, n, "global batch %ld sequences is too large", gb);
        return -1;
    }
    out->train.global_batch = (int)gb;
    cfg_derive_defaults(out, b->given);
    if (scenario_finalize(out, &err) != 0) {
        snprintf(msg, n, "%.190s", err.msg);
        return -1;
    }
    return 0;
}

static struct config with_value(const struct config *c, int axis, long v)
{
    struct config r = *c;

    if (axis == ML_MICRO_BATCH)
        r.micro_batch = (int)v;
    else if (axis == ML_SEQ_LEN)
        r.seq_len = (int)v;
    else
        r.gpus = (int)v;
    return r;
}

static void simulate(const struct scenario *b, int accum, const struct config *c, int axis, long v,
                     struct ml_point *p)
{
    struct config cv = with_value(c, axis, v);
    struct scenario s;
    struct sim_opts opts = { 0 };
    struct run r;

    memset(p, 0, sizeof(*p));
    p->axis = axis;
    p->value = v;
    if (make(b, accum, &cv, &s, p->reason, sizeof(p->reason)) != 0 ||
        run_scenario(&s, &opts, &r, p->reason, sizeof(p->reason)) != 0)
        return;
    p->ok = true;
    p->fits = r.fits;
    p->peak_bytes = r.peak_bytes;
    p->reserve_short_bytes = r.reserve_short_bytes;
    p->step_s = r.step_s;
    for (int k = 0; k < MC_COUNT; k++)
        p->at_peak[k] = (double)r.sim.ranks[r.peak_idx].at_peak[k];
    run_release(&r);
}

/* Does value i of the current search fit on the engine? Each value runs once per search. */
static bool engine_fits(struct ctx *c, long i)
{
    struct memory_limits *l = c->out;
    long v = c->vals[i];

    for (int k = c->first_pt; k < l->npts; k++)
        if (l->pts[k].axis == c->axis && l->pts[k].value == v)
            return l->pts[k].fits;
    grow_array((void **)&l->pts, &l->cap_pts, (size_t)l->npts + 1, sizeof(*l->pts));
    simulate(c->base, c->accum, &c->cfg, c->axis, v, &l->pts[l->npts]);
    l->lim[c->axis].runs++;
    return l->pts[l->npts++].fits;
}

/* Does value i fit by the closed-form estimate? (A refused configuration does not.) */
static bool estimate_fits(struct ctx *c, long i)
{
    struct config cv = with_value(&c->cfg, c->axis, c->vals[i]);
    struct scenario s;
    struct estimator *e;
    struct estimate est;
    char msg[200];

    if (make(c->base, c->accum, &cv, &s, msg, sizeof(msg)) != 0)
        return false;
    e = estimator_new(); /* one per configuration: the memo assumes one sequence length */
    estimate_scenario(e, &s, &est);
    estimator_free(e);
    return est.peak_bytes <= s.hw.gpu.mem_bytes;
}

/* The last index of [0, n) at which fits() holds, by bisection (fits holds on a prefix); -1. */
static long estimate_limit(struct ctx *c, long n)
{
    long ok = -1, bad = n;

    if (!estimate_fits(c, 0))
        return -1;
    ok = 0;
    if (estimate_fits(c, n - 1))
        return n - 1;
    bad = n - 1;
    while (bad - ok > 1) {
        long mid = ok + (bad - ok) / 2;
        if (estimate_fits(c, mid))
            ok = mid;
        else
            bad = mid;
    }
    return ok;
}

/*
 * The engine's limit: the last index of [0, n) that fits, starting from `guess`: strides
 * doubling outwards until a fitting index and a failing one bracket the limit, then bisection.
 * *bad becomes the first failing index after it (n when the range ends fitting).
 */
static long engine_limit(struct ctx *c, long n, long guess, long *bad)
{
    long g = guess < 0 ? 0 : guess >= n ? n - 1 : guess, ok = -1;

    *bad = n;
    if (engine_fits(c, g)) {
        ok = g;
        for (long d = 1; ok < n - 1; d *= 2) {
            long j = ok + d < n - 1 ? ok + d : n - 1;
            if (!engine_fits(c, j)) {
                *bad = j;
                break;
            }
            ok = j;
        }
    } else {
        *bad = g;
        for (long d = 1; *bad > 0; d *= 2) {
            long j = *bad - d > 0 ? *bad - d : 0;
            if (engine_fits(c, j)) {
                ok = j;
                break;
            }
            *bad = j;
        }
    }
    while (ok >= 0 && *bad<n && * bad - ok> 1) {
        long mid = ok + (*bad - ok) / 2;
        if (engine_fits(c, mid))
            ok = mid;
        else
            *bad = mid;
    }
    return ok;
}

static const struct ml_point *point(const struct ctx *c, long v)
{
    for (int k = c->out->npts - 1; k >= c->first_pt; k--)
        if (c->out->pts[k].axis == c->axis && c->out->pts[k].value == v)
            return &c->out->pts[k];
    return NULL;
}

/* Search axis `axis` over vals[0 .. n) (fits first, then not) with configuration cfg. */
static void search(struct ctx *c, int axis, const long *vals, long n, const struct config *cfg)
{
    struct ml_limit *L = &c->out->lim[axis];
    long guess, ok, bad;

    memset(L, 0, sizeof(*L));
    L->searched = true;
    L->stop_cat = -1;
    L->lo = vals[0];
    L->hi = vals[n - 1];
    c->axis = axis;
    c->vals = vals;
    c->cfg = *cfg;
    c->first_pt = c->out->npts;
    guess = estimate_limit(c, n);
    L->estimate = guess >= 0 ? vals[guess] : 0;
    ok = engine_limit(c, n, guess, &bad);
    if (ok < 0)
        return;
    L->found = true;
    L->value = vals[ok];
    L->at = *point(c, vals[ok]);
    if (bad < n) {
        L->past = vals[bad];
        L->next = *point(c, vals[bad]);
        /* What stops it: the category that grows most from the limit to one step past; the
         * allocator reserve is left out (it follows the tensors and yields when memory is short).
         */
        for (int k = 0; L->next.ok && k < MC_COUNT; k++) {
            double g = L->next.at_peak[k] - L->at.at_peak[k];
            if (k != MC_RESERVE && (L->stop_cat < 0 || g > L->stop_bytes)) {
                L->stop_cat = k;
                L->stop_bytes = g;
            }
        }
    }
    {
        struct config cv = with_value(cfg, axis, L->value);
        struct scenario s;
        char msg[200];
        if (make(c->base, c->accum, &cv, &s, msg, sizeof(msg)) == 0) {
            L->global_batch = s.train.global_batch;
            L->dp = s.par.dp;
            L->accumulation = s.train.global_batch / (s.train.micro_batch * s.par.dp);
        }
    }
}

/* ---- the three searches ---------------------------------------------------------------- */

/* The sharding that divides every model state under the scenario's framework. */
static enum sharding scale_out_sharding(const struct scenario *s)
{
    enum framework fw = scenario_framework(s);

    if (fw == FW_MEGATRON || s->par.pp > 1)
        return SHARD_ZERO1; /* Megatron's distributed optimizer; ZeRO-2/3 and FSDP need pp = 1 */
    return fw == FW_DEEPSPEED ? SHARD_ZERO3 : SHARD_FSDP;
}

static bool replicates_states(enum sharding sh)
{
    return sh == SHARD_NONE || sh == SHARD_FSDP_NO_SHARD;
}

/* The GPU counts the configuration forms, largest first (the order in which fits holds):
 * multiples of tp x pp x cp within one node, whole nodes beyond. */
static long gpu_counts(const struct ctx *c, const struct config *cfg, long *vals)
{
    const struct scenario *b = c->base;
    long gpn = b->hw.gpus_per_node, mp = (long)b->par.tp * b->par.pp * b->par.cp, n = 0;

    for (long g = GPUS_CAP / gpn * gpn; g >= mp; g -= g > gpn ? gpn : 1) {
        struct config cv = with_value(cfg, ML_GPUS, g);
        struct scenario s;
        char msg[200];
        if (g % mp == 0 && make(b, c->accum, &cv, &s, msg, sizeof(msg)) == 0)
            vals[n++] = g;
    }
    return n;
}

static void search_gpus(struct ctx *c, bool base_fits)
{
    struct memory_limits *l = c->out;
    const struct scenario *b = c->base;
    struct config cfg = { b->gpus, b->par.sharding, b->train.micro_batch, b->train.seq_len, true };
    long *vals = xmalloc(sizeof(long) * (GPUS_CAP + 1)), n;
    enum sharding wide = scale_out_sharding(b);

    if (!base_fits && replicates_states(cfg.sharding) && b->train.offload == OFFLOAD_NONE) {
        cfg.sharding = wide; /* replicas never fit where one does not */
        l->sharding_changed = true;
    }
    n = gpu_counts(c, &cfg, vals);
    if (n > 0)
        search(c, ML_GPUS, vals, n, &cfg);
    if ((n == 0 || !l->lim[ML_GPUS].found) && !l->sharding_changed && cfg.sharding != wide &&
        b->train.offload == OFFLOAD_NONE) {
        int runs = l->lim[ML_GPUS].runs;
        cfg.sharding = wide;
        l->sharding_changed = true;
        n = gpu_counts(c, &cfg, vals);
        if (n > 0)
            search(c, ML_GPUS, vals, n, &cfg);
        l->lim[ML_GPUS].runs += runs;
    }
    if (!l->lim[ML_GPUS].found && cfg.micro_batch > 1) {
        /* Activations do not shrink with the GPU count: at the scenario's micro-batch no count
         * fits; micro-batch 1 may (and gives the micro-batch and sequence limits a reference). */
        int runs = l->lim[ML_GPUS].runs;
        struct ml_limit none = l->lim[ML_GPUS];
        cfg.micro_batch = 1;
        n = gpu_counts(c, &cfg, vals);
        if (n > 0)
            search(c, ML_GPUS, vals, n, &cfg);
        if (l->lim[ML_GPUS].found)
            l->gpu_unfit = none; /* what the scenario's micro-batch gave */
        else
            l->lim[ML_GPUS] = none;
        l->lim[ML_GPUS].runs += runs;
    }
    l->gpu_micro_batch = cfg.micro_batch;
    l->gpu_sharding = cfg.sharding;
    free(vals);
}

/* The sequence grid: multiples of 128 and of what the layout divides the sequence by. */
static int seq_step(const struct scenario *s)
{
    long need = s->par.cp > 1 ? 2L * s->par.cp : 1, step = SEQ_GRID;

    if (s->par.sequence_parallel)
        need *= s->par.tp;
    while (step % need)
        step += SEQ_GRID;
    return (int)step;
}

void memory_limits_run(const struct scenario *s, const struct run *base, struct memory_limits *out)
{
    struct ctx c;
    struct ml_point p1;
    bool fits1;
    long *vals, n;

    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.base = s;
    c.out = out;
    c.accum = s->train.global_batch / (s->train.micro_batch * s->par.dp);
    out->capacity_bytes = s->hw.gpu.mem_bytes;
    out->ref_gpus = s->gpus;
    out->ref_sharding = s->par.sharding;
    /* Does the scenario fit at micro-batch 1? (Then its own layout is the reference.) */
    fits1 = base->fits;
    if (!fits1) {
        struct config one = { s->gpus, s->par.sharding, 1, s->train.seq_len, false };
        simulate(s, c.accum, &one, ML_MICRO_BATCH, 1, &p1);
        fits1 = p1.fits;
    }
    search_gpus(&c, base->fits);
    if (!fits1) {
        if (!out->lim[ML_GPUS].found)
            return; /* nothing fits: no micro-batch or sequence limit */
        out->ref_gpus = (int)out->lim[ML_GPUS].value;
        out->ref_sharding = out->gpu_sharding;
        out->ref_moved = true;
        c.accum = out->lim[ML_GPUS].accumulation; /* the batch the GPU search kept there */
    }
    out->accumulation = c.accum;
    {
        struct config cfg = { out->ref_gpus, out->ref_sharding, s->train.micro_batch,
                              s->train.seq_len, false };
        vals = xmalloc(sizeof(long) * (SEQ_CAP / SEQ_GRID + MB_CAP));
        for (n = 0; n < MB_CAP; n++)
            vals[n] = n + 1;
        search(&c, ML_MICRO_BATCH, vals, n, &cfg);
        out->seq_micro_batch = s->train.micro_batch;
        if (out->lim[ML_MICRO_BATCH].found && out->lim[ML_MICRO_BATCH].value < cfg.micro_batch)
            out->seq_micro_batch = (int)out->lim[ML_MICRO_BATCH].value;
        cfg.micro_batch = out->seq_micro_batch;
        out->seq_step = seq_step(s);
        {
            long cap = SEQ_CAP;
            if (s->model.pos == POS_LEARNED && s->model.max_seq > 0)
                cap = s->model.max_seq; /* the loader's rule for learned positions */
            for (n = 0; (n + 1) * out->seq_step <= cap; n++)
                vals[n] = (n + 1) * out->seq_step;
        }
        if (n > 0)
            search(&c, ML_SEQ_LEN, vals, n, &cfg);
        free(vals);
    }
}

void memory_limits_eval(const struct scenario *s, const struct memory_limits *l, int axis,
                        long value, struct ml_point *p)
{
    int accum = axis == ML_GPUS ? s->train.global_batch / (s->train.micro_batch * s->par.dp)
                                : l->accumulation;
    struct config cfg = { l->ref_gpus, l->ref_sharding, s->train.micro_batch, s->train.seq_len,
                          false };

    if (axis == ML_SEQ_LEN)
        cfg.micro_batch = l->seq_micro_batch;
    if (axis == ML_GPUS) {
        cfg.sharding = l->gpu_sharding;
        cfg.micro_batch = l->gpu_micro_batch;
        cfg.keep_batch = true;
    }
    simulate(s, accum, &cfg, axis, value, p);
}

void memory_limits_release(struct memory_limits *l)
{
    free(l->pts);
    l->pts = NULL;
    l->npts = 0;
}
