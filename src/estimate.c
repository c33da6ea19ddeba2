/* estimate.c - see estimate.h for the model and its sources. */
#include "estimate.h"
#include "partition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "cost.h"
#include "layout.h"
#include "memory.h"
#include "strategy.h"
#include "strategy/dp.h"
#include "workload.h"

/* ---- memo tables: fixed-size integer keys, fixed-size values --------------------------- */

#define KEYLEN 8

struct memo {
    size_t cap, n; /* slots, used slots */
    size_t vsize;  /* value bytes */
    size_t stride; /* bytes per slot: used flag, key, value */
    unsigned char *slots;
};

static void memo_init(struct memo *m, size_t vsize)
{
    memset(m, 0, sizeof(*m));
    m->vsize = vsize;
    m->stride = sizeof(int64_t) * (1 + KEYLEN) + ((vsize + 7) & ~(size_t)7);
}

static uint64_t key_hash(const int64_t *k)
{
    uint64_t h = 0x9e3779b97f4a7c15u;

    for (int i = 0; i < KEYLEN; i++) {
        h ^= (uint64_t)k[i] + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdu;
    }
    return h ^ (h >> 33);
}

static int64_t *slot_at(const struct memo *m, size_t i)
{
    return (int64_t *)(void *)(m->slots + i * m->stride);
}

static void memo_grow(struct memo *m)
{
    struct memo old = *m;

    m->cap = old.cap ? 2 * old.cap : 64;
    m->n = 0;
    m->slots = xcalloc(m->cap, m->stride);
    for (size_t i = 0; i < old.cap; i++) {
        int64_t *s = slot_at(&old, i);
        if (s[0]) {
            size_t j = key_hash(s + 1) & (m->cap - 1);
            while (slot_at(m, j)[0])
                j = (j + 1) & (m->cap - 1);
            memcpy(slot_at(m, j), s, m->stride);
            m->n++;
        }
    }
    free(old.slots);
}

/*
 * The value slot of `key`: *found says whether it was there; a new slot is
 * zeroed and must be filled before the next call (a later insert may move it).
 */
static void *memo_get(struct memo *m, const int64_t key[KEYLEN], bool *found)
{
    size_t j;

    if (2 * (m->n + 1) > m->cap)
        memo_grow(m);
    j = key_hash(key) & (m->cap - 1);
    for (;;) {
        int64_t *s = slot_at(m, j);
        if (!s[0]) {
            s[0] = 1;
            memcpy(s + 1, key, sizeof(int64_t) * KEYLEN);
            m->n++;
            *found = false;
            return s + 1 + KEYLEN;
        }
        if (memcmp(s + 1, key, sizeof(int64_t) * KEYLEN) == 0) {
            *found = true;
            return s + 1 + KEYLEN;
        }
        j = (j + 1) & (m->cap - 1);
    }
}

static void memo_release(struct memo *m)
{
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

/* ---- memoized ingredients ------------------------------------------------------------ */

/* One transformer layer for one micro-batch on one rank, seconds and bytes. */
struct layer_sum {
    double fwd, bwd, rc_sel; /* forward, backward (dgrad + wgrad), selective recompute, s */
    double attn_fwd;         /* attention core forward, s (context-parallel overlap) */
    double attn_bwd;         /* attention core backward, s */
    double act[3];           /* saved bytes by enum recompute */
    double params;           /* per rank, elements */
    double tp_bytes;         /* one TP collective, bytes */
    double a2a_bytes;        /* one MoE all-to-all, bytes */
};

/* Embedding and head + loss for one micro-batch. */
struct edge_sum {
    double e_time, e_act, e_params; /* embedding: fwd + bwd s, bytes, elems */
    double h_time, h_act, h_logits, h_transient, h_params; /* head */
};

/*
 * Micro-batch-chunks in flight on a stage at its worst moment, from its
 * schedule. A layer's saved tensors live from its forward to its weight
 * gradients (B, or W when the backward is split); the embedding's and the
 * head's to the input-gradient pass, which does their weight gradients too
 * (build.c).
 */
struct sched_profile {
    int max_layers; /* any chunk, freed at B or W */
    int max_first;  /* chunk 0, freed at B or BI */
    int max_last;   /* chunk v - 1, freed at B or BI */
};

struct estimator {
    struct memo layers, edges, colls, groups, scheds;
};

enum memo_kind {
    MK_LAYER = 1,
    MK_EDGE,
    MK_COLL,
    MK_GROUP,
    MK_SCHED
};

struct estimator *estimator_new(void)
{
    struct estimator *e = xcalloc(1, sizeof(*e));

    memo_init(&e->layers, sizeof(struct layer_sum));
    memo_init(&e->edges, sizeof(struct edge_sum));
    memo_init(&e->colls, sizeof(double));
    memo_init(&e->groups, sizeof(struct comm_group));
    memo_init(&e->scheds, sizeof(struct sched_profile));
    return e;
}

void estimator_free(struct estimator *e)
{
    if (!e)
        return;
    memo_release(&e->layers);
    memo_release(&e->edges);
    memo_release(&e->colls);
    memo_release(&e->groups);
    memo_release(&e->scheds);
    free(e);
}

static double sec(sim_time t)
{
    return (double)t / NS_PER_S;
}

static const struct layer_sum *layer_of(struct estimator *e, const struct scenario *s, bool moe)
{
    const struct parallelism *p = &s->par;
    int64_t key[KEYLEN] = { MK_LAYER, s->train.micro_batch, p->tp, p->cp,
                            p->ep,    p->sequence_parallel, moe,   0 };
    bool found;
    struct layer_sum *v = memo_get(&e->layers, key, &found);
    struct layer_cost lc;
    struct shard sh;

    if (found)
        return v;
    workload_shard(s, &sh);
    workload_layer(s, &sh, moe, &lc);
    v->fwd = sec(lc.fwd[PART_ATTN] + lc.fwd[PART_MLP]);
    v->bwd =
        sec(lc.dgrad[PART_ATTN] + lc.dgrad[PART_MLP] + lc.wgrad[PART_ATTN] + lc.wgrad[PART_MLP]);
    v->rc_sel = sec(lc.recompute_selective);
    for (int i = 0; i < lc.nops; i++)
        if (lc.ops[i].kind == OP_ATTN || lc.ops[i].core) {
            v->attn_fwd += sec(lc.ops[i].t_fwd);
            v->attn_bwd += sec(lc.ops[i].t_dgrad + lc.ops[i].t_wgrad);
        }
    memcpy(v->act, lc.act, sizeof(v->act));
    v->params = lc.params[PART_ATTN] + lc.params[PART_MLP];
    v->tp_bytes = lc.tp_bytes;
    v->a2a_bytes = lc.moe_a2a_bytes;
    return v;
}

static const struct edge_sum *edge_of(struct estimator *e, const struct scenario *s)
{
    const struct parallelism *p = &s->par;
    int64_t key[KEYLEN] = {
        MK_EDGE, s->train.micro_batch, p->tp, p->cp, p->sequence_parallel, p->pp > 1, 0, 0
    };
    bool found;
    struct edge_sum *v = memo_get(&e->edges, key, &found);
    struct edge_cost ec;
    struct shard sh;

    if (found)
        return v;
    workload_shard(s, &sh);
    workload_embedding(s, &sh, &ec);
    v->e_time = sec(ec.fwd + ec.bwd);
    v->e_act = ec.act;
    v->e_params = ec.params;
    workload_head(s, &sh, &ec);
    v->h_time = sec(ec.fwd + ec.bwd);
    v->h_act = ec.act;
    v->h_logits = ec.logits_bytes;
    v->h_transient = ec.transient_bytes;
    v->h_params = ec.params;
    return v;
}

/*
 * Shape of rank 0's communicator of `kind`, as the engine sees it (sim.c
 * group_shape: members per node, nodes spanned, rail alignment).
 */
static struct comm_group group_of(struct estimator *e, const struct scenario *s, int kind)
{
    const struct parallelism *p = &s->par;
    int64_t order = 0;
    struct layout l;
    struct comm_group *v;
    bool found;
    int *m, n, gpn, first, ppn0 = 0, nodes = 1, cur = 0, maxppn = 0, rail = 1;

    for (int i = 0; i < DIM_COUNT; i++)
        order = order * 8 + p->order[i];
    {
        int64_t key[KEYLEN] = { MK_GROUP,
                                kind,
                                (int64_t)p->tp << 32 | (uint32_t)p->cp,
                                (int64_t)p->dp << 32 | (uint32_t)p->pp,
                                p->ep,
                                order,
                                (int64_t)s->hw.gpus_per_node << 32 | (uint32_t)s->gpus,
                                p->sharding == SHARD_HSDP };
        v = memo_get(&e->groups, key, &found);
    }
    if (found)
        return *v;
    layout_init(&l, s);
    m = xmalloc(sizeof(int) * (size_t)(s->gpus > 2 ? s->gpus : 2));
    n = layout_group(&l, 0, kind, m, s->gpus > 2 ? s->gpus : 2);
    gpn = l.gpus_per_node;
    first = layout_node(&l, m[0]);
    while (ppn0 < n && layout_node(&l, m[ppn0]) == first)
        ppn0++;
    for (int i = 0; i < n; i++) {
        if (i > 0 && layout_node(&l, m[i]) != layout_node(&l, m[i - 1])) {
            nodes++;
            cur = 0;
        }
        if (cur >= ppn0 || m[i] % gpn != m[cur] % gpn)
            rail = 0;
        cur++;
        maxppn = cur > maxppn ? cur : maxppn;
    }
    free(m);
    v->nranks = n;
    v->nnodes = nodes;
    v->ppn = maxppn;
    v->rail_aligned = rail && n == nodes * ppn0;
    return *v;
}

/* Seconds for one collective of `bytes` on group g, in isolation. */
static double coll_s(struct estimator *e, const struct scenario *s, const struct comm_group *g,
                     enum coll_op op, double bytes)
{
    int64_t bits;
    double *v;
    bool found;
    struct coll_cost c;

    if (g->nranks <= 1 || bytes <= 0)
        return 0;
    memcpy(&bits, &bytes, sizeof(bits));
    {
        int64_t key[KEYLEN] = {
            MK_COLL, op, g->nranks, g->nnodes, g->ppn, g->rail_aligned, bits, 0
        };
        v = memo_get(&e->colls, key, &found);
    }
    if (found)
        return *v;
    coll_estimate(&s->hw, &s->nccl, g, op, bytes, &c);
    *v = sec(coll_time(&c));
    return *v;
}

static struct sched_profile profile_of(struct estimator *e, const struct scenario *s, int stage,
                                       int m)
{
    const struct parallelism *p = &s->par;
    int64_t key[KEYLEN] = { MK_SCHED, p->schedule, p->pp, stage, m, p->vpp, 0, 0 };
    bool found;
    struct sched_profile *v = memo_get(&e->scheds, key, &found);
    struct sched_profile r = { 0, 0, 0 };
    int max = 3 * m * p->vpp + 8, n, layers = 0, first = 0, last = 0;
    struct pp_step *steps;

    if (found)
        return *v;
    steps = xmalloc(sizeof(*steps) * (size_t)max);
    n = schedule_steps(p->schedule, p->pp, stage, m, p->vpp, steps, max);
    for (int i = 0; i < n; i++) {
        int k = steps[i].kind;
        int dl = k == STEP_F ? 1 : k == STEP_BI ? 0 : -1; /* layers */
        int de = k == STEP_F ? 1 : k == STEP_W ? 0 : -1;  /* embedding, head */
        layers += dl;
        if (steps[i].chunk == 0)
            first += de;
        if (steps[i].chunk == p->vpp - 1)
            last += de;
        r.max_layers = layers > r.max_layers ? layers : r.max_layers;
        r.max_first = first > r.max_first ? first : r.max_first;
        r.max_last = last > r.max_last ? last : r.max_last;
    }
    free(steps);
    *v = r;
    return r;
}

/* ---- composition --------------------------------------------------------------------- */

/* Everything about one candidate that the stage loop and the memory model share. */
struct cand {
    const struct scenario *s;
    struct estimator *e;
    int m;                       /* micro-batches per step */
    const struct layer_sum *ld;  /* dense layer */
    const struct layer_sum *lm;  /* MoE layer (== ld for dense models) */
    const struct edge_sum *edge; /* embedding, head */
    double t_block;              /* TP collectives of one block, s */
    double t_a2a;                /* one MoE all-to-all, s */
    double t_cp_f, t_cp_b;       /* exposed context-parallel comm per layer, s */
    struct comm_group dp_g;      /* gradient group */
    struct shard_factors f;      /* model-state sharding (memory.c) */
    struct param_roles roles;    /* the whole model's parameters by role (memory.c) */
    double model_params;         /* the whole model's parameters (unsharded), elements */
};

struct stage_sum {
    int dense, moe;  /* layers */
    double t, t_bwd; /* per micro-batch: total, backward part, s */
    double comp, tp; /* per micro-batch: compute, exposed TP, s */
    double cpep;     /* per micro-batch: exposed CP + EP, s */
    double params;   /* per rank, elements */
    double act;      /* saved bytes of one micro-batch over all layers of the stage */
};

/*
 * Layers of each (chunk, stage), out[c * pp + stage], as the builder splits
 * them: evenly, or with the embedding and the loss counted as a layer each
 * when that makes the split even (partition.h pp_split(), Megatron's
 * account_for_embedding/loss_in_pipeline_split; Llama 3 405B's 126 layers).
 */
static void split_layers(const struct scenario *s, int *out)
{
    int pp = s->par.pp, v = s->par.vpp, n = pp * v, L = s->model.layers, first, last;
    char reason[160];

    pp_split(s, &first, &last);
    if (pp_partition(L, pp, v, first, last, out, reason, sizeof(reason)) != 0)
        for (int i = 0; i < n; i++)
            out[i] = L / n + (i < L % n); /* not reached for finalized scenarios */
}

static void stage_sums(const struct cand *c, int pp, struct stage_sum *st)
{
    const struct scenario *s = c->s;
    int v = s->par.vpp, l = 0, *part = xmalloc(sizeof(int) * (size_t)(pp * v));
    enum recompute rc0 = s->train.recompute;
    int keep = rc0 == RC_FULL ? s->train.recompute_layers : 0;

    memset(st, 0, sizeof(*st) * (size_t)pp);
    split_layers(s, part);
    for (int ch = 0; ch < v; ch++)
        for (int k = 0; k < pp; k++)
            for (int i = 0; i < part[ch * pp + k]; i++, l++) {
                bool moe = workload_is_moe(&s->model, l);
                const struct layer_sum *ls = moe ? c->lm : c->ld;
                /* recompute_layers: the first layers of each chunk recompute (build.c) */
                enum recompute rc = keep > 0 && i >= keep ? RC_NONE : rc0;
                double re = rc == RC_FULL ? ls->fwd : rc == RC_SELECTIVE ? ls->rc_sel : 0;
                int blocks = rc == RC_FULL ? 6 : 4;
                st[k].moe += moe;
                st[k].dense += !moe;
                st[k].comp += ls->fwd + ls->bwd + re;
                st[k].t_bwd += ls->bwd + re + c->t_block * (blocks - 2) + c->t_cp_b;
                st[k].tp += c->t_block * blocks;
                st[k].cpep += c->t_cp_f + c->t_cp_b + (moe ? 4 * c->t_a2a : 0);
                st[k].params += ls->params;
                st[k].act += ls->act[rc];
            }
    free(part);
    st[0].comp += c->edge->e_time;
    st[0].params += c->edge->e_params;
    st[pp - 1].comp += c->edge->h_time;
    st[pp - 1].params += c->edge->h_params;
    for (int k = 0; k < pp; k++)
        st[k].t = st[k].comp + st[k].tp + st[k].cpep;
}

/* Pipeline time of m micro-batches over the stages (formulas.md §4). */
static double pipeline_s(const struct scenario *s, int m, const struct stage_sum *st,
                         double *bubble)
{
    int pp = s->par.pp;
    double tmax = 0, tsum = 0, tot;

    for (int k = 0; k < pp; k++) {
        tmax = st[k].t > tmax ? st[k].t : tmax;
        tsum += st[k].t;
    }
    if (pp == 1)
        tot = m * tmax;
    else if (s->par.schedule == SCHED_INTERLEAVED)
        tot = m * tmax + (tsum - tmax) / s->par.vpp;
    else if (s->par.schedule == SCHED_ZB_H1)
        tot = m * tmax + (tsum - tmax) / 3;
    else
        tot = (m - 1) * tmax + tsum;
    *bubble = tot - m * tmax;
    return tot;
}

static bool megatron_ddp(const struct scenario *s)
{
    return dp_framework(s) == FW_MEGATRON;
}

/* Bucketed reduction of `bytes` (ddp.c's buckets), seconds in total and for the last bucket. */
static double buckets_s(const struct cand *c, enum coll_op op, double bytes, double *last)
{
    const struct scenario *s = c->s;
    double elem = dtype_bytes(s->train.grad_dtype), cap, first, t = 0, full;

    if (megatron_ddp(s)) {
        cap = (1e6 * s->par.dp > 4e7 ? 1e6 * s->par.dp : 4e7) * elem; /* ddp.c, Megatron */
        first = cap;
    } else {
        cap = s->ddp.bucket_bytes;
        first = s->ddp.first_bucket_bytes;
    }
    *last = 0;
    if (bytes <= 0)
        return 0;
    if (bytes <= first) {
        *last = coll_s(c->e, s, &c->dp_g, op, bytes);
        return *last;
    }
    t = coll_s(c->e, s, &c->dp_g, op, first);
    bytes -= first;
    full = (double)(int64_t)(bytes / cap);
    t += full * coll_s(c->e, s, &c->dp_g, op, cap);
    bytes -= full * cap;
    *last = bytes > 0 ? coll_s(c->e, s, &c->dp_g, op, bytes) : coll_s(c->e, s, &c->dp_g, op, cap);
    return t + (bytes > 0 ? *last : 0);
}

static bool gathers_per_layer(enum sharding sh)
{
    return sh == SHARD_ZERO3 || sh == SHARD_FSDP || sh == SHARD_FSDP_GRAD_OP || sh == SHARD_HSDP;
}

/*
 * The parameters of a stage by role (trainable, frozen, NF4, expert): the
 * model's roles (memory.c) in the proportion of the stage's share.
 */
static void stage_roles(const struct cand *c, const struct stage_sum *st, struct param_roles *r)
{
    double f = c->model_params > 0 ? st->params / c->model_params : 0;

    r->trainable = c->roles.trainable * f;
    r->frozen = c->roles.frozen * f;
    r->frozen_quant = c->roles.frozen_quant * f;
    r->expert = c->roles.expert * f;
}

/* Exposed data-parallel time of a stage; the optimizer step's time into *opt_s. */
static double dp_tail_s(const struct cand *c, const struct stage_sum *st, double *opt_s)
{
    const struct scenario *s = c->s;
    enum sharding sh = s->par.sharding;
    struct comm_group shard_g = c->dp_g;
    struct param_roles roles;
    struct state_bytes sb;
    double gbytes, pbytes, opt_params, last, t = 0;

    stage_roles(c, st, &roles);
    memory_state_bytes(s, &sb);
    /* FSDP communicates gradients in MixedPrecision.reduce_dtype (PyTorch fsdp/api.py). */
    gbytes = roles.trainable * (sh >= SHARD_FSDP ? dtype_bytes(s->fsdp.reduce_dtype) : sb.grads);
    pbytes = roles.trainable * sb.params;
    /* The optimizer updates this rank's shard; on the host under offload (INFINITY). */
    opt_params = roles.trainable /
                 (isinf(c->f.optim)
                      ? (sh == SHARD_NONE || sh == SHARD_FSDP_NO_SHARD ? 1 : memory_shard_degree(s))
                      : c->f.optim);
    *opt_s = sec(cost_membound(&s->hw.gpu, &s->hw.eff, opt_params * memory_optimizer_traffic(s)));
    if (isinf(c->f.optim) && s->hw.pcie.bw_Bps > 0)
        *opt_s = sec(offload_cpu_step_time(s, opt_params)) +
                 opt_params * (sb.grads + sb.params) / s->hw.pcie.bw_Bps; /* ZeRO-Offload */
    if (sh == SHARD_HSDP)
        shard_g = group_of(c->e, s, COMM_DP_INTRA);
    if (c->dp_g.nranks <= 1 || gbytes <= 0)
        return 0;
    if (!gathers_per_layer(sh)) {
        bool scatter = sh == SHARD_ZERO1 || sh == SHARD_ZERO2;
        double red = buckets_s(c, scatter ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, gbytes, &last);
        double window = s->ddp.overlap ? st->t_bwd : 0;
        /* DDP and ZeRO-1 reduce at the accumulation boundary only (no_sync); ZeRO-2 and FSDP
         * NO_SHARD after every micro-batch's backward (zero.c, fsdp.c). */
        int times = sh == SHARD_ZERO2 || sh == SHARD_FSDP_NO_SHARD ? c->m : 1;
        if (times > 1) /* the reductions run beside the later micro-batches' compute */
            window = (c->m - 1) * st->t + window;
        t = times * red - window > last ? times * red - window : last;
        if (scatter)
            t += buckets_s(c, COLL_ALL_GATHER, pbytes, &last);
        return t;
    }
    {
        /* Per layer and micro-batch: gather for forward (and again for backward under full
         * sharding), reduce-scatter the gradients; prefetch overlaps them with compute. */
        int layers = st->dense + st->moe > 0 ? st->dense + st->moe : 1;
        double lp = st->params / layers, lt = roles.trainable / layers;
        double ag =
            coll_s(c->e, s, &shard_g, COLL_ALL_GATHER, lp * dtype_bytes(s->fsdp.param_dtype));
        double rs =
            coll_s(c->e, s, &shard_g, COLL_REDUCE_SCATTER, lt * dtype_bytes(s->fsdp.reduce_dtype));
        double per_mb = layers * ((sh == SHARD_FSDP_GRAD_OP ? 1 : 2) * ag + rs);
        double exposed = per_mb > st->t ? per_mb - st->t : 0;
        t = c->m * exposed + ag;
        if (sh == SHARD_HSDP) {
            struct comm_group inter = group_of(c->e, s, COMM_DP_INTER);
            t += coll_s(c->e, s, &inter, COLL_ALL_REDUCE, gbytes / shard_g.nranks);
        }
        return t;
    }
}

/* DeepSpeed's gradient buckets (zero.c; DS config defaults, formulas.md §2.3). */
static double zero_buffers(const struct cand *c)
{
    const struct scenario *s = c->s;
    enum sharding sh = s->par.sharding;
    bool ds = dp_framework(s) == FW_DEEPSPEED;
    double pb = dtype_bytes(s->train.precision) < 2 ? 2 : dtype_bytes(s->train.precision);

    if (c->dp_g.nranks <= 1 || !s->zero.contiguous_gradients)
        return 0;
    if (sh == SHARD_ZERO3)
        return s->zero.reduce_bucket_size * pb;
    if ((sh == SHARD_ZERO1 && ds) || sh == SHARD_ZERO2)
        return (s->zero.overlap_comm ? 2 : 1) * s->zero.reduce_bucket_size * pb;
    return 0;
}

/* Peak memory of one stage, per category (the categories of prog.h). */
static double stage_memory(const struct cand *c, const struct stage_sum *st, int stage,
                           double mem[MC_COUNT])
{
    const struct scenario *s = c->s;
    int pp = s->par.pp, v = s->par.vpp;
    struct sched_profile prof = profile_of(c->e, s, stage, c->m);
    struct param_roles roles;
    struct state_bytes sb;
    enum recompute rc = s->train.recompute;
    double total = 0;

    stage_roles(c, st, &roles);
    memory_state_bytes(s, &sb);
    memory_model_states(s, &roles, &c->f, mem);
    if (gathers_per_layer(s->par.sharding)) {
        int layers = st->dense + st->moe > 0 ? st->dense + st->moe : 1;
        double unit = st->params / layers * dtype_bytes(s->fsdp.param_dtype);
        /* SHARD_GRAD_OP keeps every unit gathered from forward to backward; the others keep the
         * current unit and the prefetched one (PyTorch limit_all_gathers; formulas.md §3.3). */
        mem[MC_GATHERED] = s->par.sharding == SHARD_FSDP_GRAD_OP ? unit * layers : 2 * unit;
    }
    mem[MC_COMM] = zero_buffers(c);
    if (s->par.sharding == SHARD_NONE)
        mem[MC_COMM] += memory_ddp_bucket_bytes(s, roles.trainable * sb.grads);
    mem[MC_ACT] = prof.max_layers * st->act / v;
    if (rc != RC_NONE)
        mem[MC_ACT] += c->ld->act[RC_NONE] - c->ld->act[rc]; /* one layer recomputed */
    if (stage == 0)
        mem[MC_ACT] += prof.max_first * c->edge->e_act;
    if (stage == pp - 1) {
        mem[MC_ACT] += prof.max_last * c->edge->h_act;
        mem[MC_LOGITS] = prof.max_last * c->edge->h_logits + c->edge->h_transient;
    }
    mem[MC_OVERHEAD] = s->train.overhead_bytes;
    for (int k = 0; k < MC_COUNT; k++)
        total += mem[k];
    return total;
}

/* Bytes per activation element: fp8 training keeps 16-bit activations (workload.c). */
static double act_bytes(const struct scenario *s)
{
    double p = dtype_bytes(s->train.precision);

    return p < 2 ? 2 : p;
}

static void prepare(struct cand *c, struct estimator *e, const struct scenario *s)
{
    const struct parallelism *p = &s->par;

    memset(c, 0, sizeof(*c));
    c->s = s;
    c->e = e;
    c->m = s->train.global_batch / (s->train.micro_batch * p->dp);
    c->ld = layer_of(e, s, false);
    c->lm = s->model.moe.experts > 0 ? layer_of(e, s, true) : c->ld;
    c->edge = edge_of(e, s);
    c->dp_g = group_of(e, s, COMM_DP);
    memory_shard_factors(s, &c->f);
    memory_model_roles(s, &c->roles);
    c->model_params = c->roles.trainable + c->roles.frozen + c->roles.frozen_quant;
    if (p->tp > 1 && !p->tp_comm_overlap) {
        struct comm_group g = group_of(e, s, COMM_TP);
        c->t_block = p->sequence_parallel
                         ? coll_s(e, s, &g, COLL_ALL_GATHER, c->ld->tp_bytes) +
                               coll_s(e, s, &g, COLL_REDUCE_SCATTER, c->ld->tp_bytes)
                         : coll_s(e, s, &g, COLL_ALL_REDUCE, c->ld->tp_bytes);
    }
    if (p->ep > 1) {
        struct comm_group g = group_of(e, s, COMM_EP);
        c->t_a2a = coll_s(e, s, &g, COLL_ALL_TO_ALL, c->lm->a2a_bytes);
    }
    if (p->cp > 1) {
        /* Ring attention: cp steps of the attention core, each overlapping the transfer of the
         * next K/V chunk to the ring neighbour (double buffering); backward passes K/V and
         * dK/dV, then sends the last dK/dV home (formulas.md §3.6; layer.c core()). */
        struct comm_group g = group_of(e, s, COMM_CP);
        const struct model *m = &s->model;
        double kv = 2.0 * s->train.micro_batch * ((double)s->train.seq_len / p->cp) *
                    ((double)m->kv_heads / p->tp) * m->head_dim * act_bytes(s);
        double f = coll_s(e, s, &g, COLL_SEND_RECV, kv),
               b2 = coll_s(e, s, &g, COLL_SEND_RECV, 2 * kv);
        double sf = c->ld->attn_fwd / p->cp, sb = c->ld->attn_bwd / p->cp;
        c->t_cp_f = (p->cp - 1) * (f > sf ? f - sf : 0);
        c->t_cp_b = (p->cp - 1) * (b2 > sb ? b2 - sb : 0) + f;
    }
}

/* Point-to-point time of one activation transfer between neighbouring stages. */
static double p2p_s(const struct cand *c)
{
    const struct scenario *s = c->s;
    struct comm_group g;
    double bytes;

    if (s->par.pp <= 1)
        return 0;
    g = group_of(c->e, s, COMM_PP_NEXT);
    bytes = (double)s->train.micro_batch * s->train.seq_len / s->par.cp * s->model.hidden *
            act_bytes(s) / s->par.tp; /* build.c p2p_bytes: b*s*h, scattered over tp (NAR21 §4.1) */
    return coll_s(c->e, s, &g, COLL_SEND_RECV, bytes);
}

void estimate_scenario(struct estimator *e, const struct scenario *s, struct estimate *out)
{
    int pp = s->par.pp, slow = 0, heavy;
    struct stage_sum *st = xmalloc(sizeof(*st) * (size_t)pp);
    struct cand c;
    double bubble, opt0, optl, tail0, taill, mem[MC_COUNT];

    memset(out, 0, sizeof(*out));
    prepare(&c, e, s);
    stage_sums(&c, pp, st);
    pipeline_s(s, c.m, st, &bubble);
    /* Fill and drain cross every stage boundary once each way per model chunk. */
    bubble += 2.0 * (pp - 1) * s->par.vpp * p2p_s(&c);
    for (int k = 1; k < pp; k++)
        if (st[k].t > st[slow].t)
            slow = k;
    out->compute_s = c.m * st[slow].comp;
    out->tp_s = c.m * st[slow].tp;
    out->cpep_s = c.m * st[slow].cpep;
    out->bubble_s = bubble;
    /* Stage 0 finishes its backward last; the last stage about one fill earlier. */
    tail0 = dp_tail_s(&c, &st[0], &opt0);
    taill = dp_tail_s(&c, &st[pp - 1], &optl) - (pp > 1 ? st[pp - 1].t_bwd * (pp - 1) : 0);
    if (tail0 + opt0 >= taill + optl) {
        out->dp_s = tail0;
        out->optimizer_s = opt0;
    } else {
        out->dp_s = taill > 0 ? taill : 0;
        out->optimizer_s = optl;
    }
    out->step_s =
        c.m * st[slow].t + bubble + out->dp_s + out->optimizer_s + sec(s->sim.step_overhead);
    out->peak_bytes = -1;
    /* The first stage holds the most micro-batches, the last the logits; with an uneven
     * split a middle stage may hold more layers: the earliest of the heaviest is checked. */
    heavy = 0;
    for (int k = 1; k < pp; k++)
        if (st[k].act + st[k].params > st[heavy].act + st[heavy].params)
            heavy = k;
    for (int i = 0; i < 3; i++) {
        int k = i == 0 ? 0 : i == 1 ? pp - 1 : heavy;
        double peak;
        if ((i == 1 && pp == 1) || (i == 2 && (heavy == 0 || heavy == pp - 1)))
            continue;
        peak = stage_memory(&c, &st[k], k, mem);
        if (peak > out->peak_bytes) {
            out->peak_bytes = peak;
            out->peak_stage = k;
            memcpy(out->mem, mem, sizeof(mem));
        }
    }
    free(st);
}

/* ---- time to train ------------------------------------------------------------------ */

void train_totals(const struct scenario *s, double step_s, struct train_totals *out)
{
    double tokens_per_step = (double)s->train.global_batch * s->train.seq_len;

    memset(out, 0, sizeof(*out));
    out->have_price = s->train.price_gpu_hour > 0;
    if (out->have_price)
        out->per_step_usd = step_s * s->gpus / 3600.0 * s->train.price_gpu_hour;
    if (s->train.tokens <= 0 || tokens_per_step <= 0 || step_s <= 0)
        return;
    out->have_tokens = true;
    out->tokens = s->train.tokens;
    out->steps = s->train.tokens / tokens_per_step;
    out->seconds = out->steps * step_s;
    out->gpu_hours = out->seconds * s->gpus / 3600.0;
    if (out->have_price)
        out->cost_usd = out->gpu_hours * s->train.price_gpu_hour;
    out->have_power = s->hw.gpu.power_W > 0;
    if (out->have_power)
        out->energy_J = s->hw.gpu.power_W * s->gpus * out->seconds;
}

void totals_fmt_duration(const struct train_totals *t, char *buf, size_t n)
{
    if (!t->have_tokens)
        snprintf(buf, n, "-");
    else if (t->seconds >= 2 * 86400.0)
        snprintf(buf, n, "%.1f d", t->seconds / 86400.0);
    else if (t->seconds >= 3600.0)
        snprintf(buf, n, "%.1f h", t->seconds / 3600.0);
    else
        snprintf(buf, n, "%.1f min", t->seconds / 60.0);
}

/* Three significant digits with an SI prefix: "$1.54 M", "432 MWh". */
static void fmt_scaled(double v, const char *pre, const char *unit, char *buf, size_t n)
{
    static const char *const si[] = { "", "k", "M", "G", "T" };
    size_t i = 0;

    while (v >= 999.5 && i + 1 < ARRAY_LEN(si)) {
        v /= 1000;
        i++;
    }
    snprintf(buf, n, "%s%.3g%s%s%s", pre, v, *si[i] || *unit ? " " : "", si[i], unit);
}

void totals_fmt_cost(const struct train_totals *t, char *buf, size_t n)
{
    if (!t->have_tokens || !t->have_price)
        snprintf(buf, n, "-");
    else
        fmt_scaled(t->cost_usd, "$", "", buf, n);
}

void totals_fmt_energy(const struct train_totals *t, char *buf, size_t n)
{
    if (!t->have_tokens || !t->have_power)
        snprintf(buf, n, "-");
    else
        fmt_scaled(t->energy_J / 3.6e3, "", "Wh", buf, n); /* 1 Wh = 3600 J */
}
