/*
 * estimate.c - the closed-form estimator (see estimate.h for the model and its
 * sources): memo tables, the memoized ingredients of a candidate (layer,
 * embedding and head costs, group shapes, collective times, schedule
 * profiles) and the composition of a step from the stage times
 * (estimate_time.c) and the stage memory (estimate_memory.c).
 */
#include "whatif/estimate.h"

#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "whatif/estimate_internal.h"
#include "model/layout.h"
#include "strategy/rules.h"
#include "strategy/strategy.h"
#include "model/workload.h"

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

struct estimator {
    struct memo layers, edges, colls, groups, scheds;
    /* The whole model's parameter roles depend on the model and the fine-tuning mode only
     * (memory_model_roles()): kept for the last mode seen. */
    bool have_roles;
    int roles_key[3]; /* finetune, lora targets, lora rank */
    struct param_roles roles;
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

static const struct layer_sum *layer_of(struct estimator *e, const struct scenario *s, bool moe,
                                        bool windowed)
{
    const struct parallelism *p = &s->par;
    /* The model code changes what a layer saves and does: with `auto` it follows the layout */
    int64_t key[KEYLEN] = { MK_LAYER,
                            s->train.micro_batch,
                            p->tp,
                            p->cp,
                            p->ep,
                            p->sequence_parallel,
                            (int64_t)moe | (int64_t)windowed << 1,
                            scenario_model_code(s) };
    bool found;
    struct layer_sum *v = memo_get(&e->layers, key, &found);
    struct layer_cost lc;
    struct shard sh;

    if (found)
        return v;
    workload_shard(s, &sh);
    workload_layer_variant(s, &sh, moe, windowed, &lc);
    v->fwd = est_sec(lc.fwd[PART_ATTN] + lc.fwd[PART_MLP]);
    v->bwd = est_sec(lc.dgrad[PART_ATTN] + lc.dgrad[PART_MLP] + lc.wgrad[PART_ATTN] +
                     lc.wgrad[PART_MLP]);
    v->wgrad = est_sec(lc.wgrad[PART_ATTN] + lc.wgrad[PART_MLP]);
    v->rc_sel = est_sec(lc.recompute_selective);
    for (int i = 0; i < lc.nops; i++)
        if (lc.ops[i].kind == OP_ATTN || lc.ops[i].core) {
            v->attn_fwd += est_sec(lc.ops[i].t_fwd);
            v->attn_bwd += est_sec(lc.ops[i].t_dgrad + lc.ops[i].t_wgrad);
        }
    memcpy(v->act, lc.act, sizeof(v->act));
    v->params = lc.params[PART_ATTN] + lc.params[PART_MLP];
    v->tp_bytes = lc.tp_bytes;
    v->a2a_bytes = lc.moe_a2a_bytes;
    v->bwd_transient = lc.bwd_transient;
    return v;
}

static const struct edge_sum *edge_of(struct estimator *e, const struct scenario *s)
{
    const struct parallelism *p = &s->par;
    int64_t key[KEYLEN] = { MK_EDGE,   s->train.micro_batch,   p->tp, p->cp, p->sequence_parallel,
                            p->pp > 1, scenario_model_code(s), 0 };
    bool found;
    struct edge_sum *v = memo_get(&e->edges, key, &found);
    struct edge_cost ec;
    struct shard sh;

    if (found)
        return v;
    workload_shard(s, &sh);
    workload_embedding(s, &sh, &ec);
    v->e_time = est_sec(ec.fwd + ec.bwd);
    v->e_act = ec.act;
    v->e_params = ec.params;
    workload_head(s, &sh, &ec);
    v->h_time = est_sec(ec.fwd + ec.bwd);
    v->h_act = ec.act;
    v->h_logits = ec.logits_bytes;
    v->h_transient = ec.transient_bytes;
    v->h_params = ec.params;
    return v;
}

struct comm_group est_group(struct estimator *e, const struct scenario *s, int kind)
{
    const struct parallelism *p = &s->par;
    int64_t order = 0;
    struct layout l;
    struct comm_group *v;
    bool found;
    int *m, n;

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
    layout_group_shape(&l, m, n, v);
    free(m);
    return *v;
}

double est_coll_s(struct estimator *e, const struct scenario *s, const struct comm_group *g,
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
    *v = est_sec(coll_time(&c));
    return *v;
}

struct sched_profile est_sched_profile(struct estimator *e, const struct scenario *s, int stage,
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

/* The ingredients of candidate s: costs per layer, communication per layer, sharding. */
static void prepare(struct cand *c, struct estimator *e, const struct scenario *s)
{
    const struct parallelism *p = &s->par;

    memset(c, 0, sizeof(*c));
    c->s = s;
    c->e = e;
    c->m = s->train.global_batch / (s->train.micro_batch * p->dp);
    c->ld = layer_of(e, s, false, false);
    c->lm = s->model.moe.experts > 0 ? layer_of(e, s, true, false) : c->ld;
    c->lw = c->ld;
    c->lmw = c->lm;
    if (s->model.window > 0 && s->model.window < s->train.seq_len) {
        c->lw = layer_of(e, s, false, true);
        c->lmw = s->model.moe.experts > 0 ? layer_of(e, s, true, true) : c->lw;
    }
    c->edge = edge_of(e, s);
    c->dp_g = est_group(e, s, COMM_DP);
    memory_shard_factors(s, &c->f);
    {
        int key[3] = { s->train.finetune, (int)s->train.lora.targets, s->train.lora.rank };
        if (!e->have_roles || memcmp(key, e->roles_key, sizeof(key)) != 0) {
            memory_model_roles(s, &e->roles);
            memcpy(e->roles_key, key, sizeof(key));
            e->have_roles = true;
        }
        c->roles = e->roles;
    }
    c->model_params = c->roles.trainable + c->roles.frozen + c->roles.frozen_quant;
    if (p->tp > 1) {
        struct comm_group g = est_group(e, s, COMM_TP);
        c->t_block = p->sequence_parallel
                         ? est_coll_s(e, s, &g, COLL_ALL_GATHER, c->ld->tp_bytes) +
                               est_coll_s(e, s, &g, COLL_REDUCE_SCATTER, c->ld->tp_bytes)
                         : est_coll_s(e, s, &g, COLL_ALL_REDUCE, c->ld->tp_bytes);
        /* tp_comm_overlap pipelines each collective with its GEMM in tp chunks: one chunk
         * stays exposed (layer.c overlapped_gemm()). */
        if (p->tp_comm_overlap)
            c->t_block /= p->tp;
    }
    if (p->ep > 1) {
        struct comm_group g = est_group(e, s, COMM_EP);
        c->t_a2a = est_coll_s(e, s, &g, COLL_ALL_TO_ALL, c->lm->a2a_bytes);
    }
    if (p->cp > 1) {
        /* Ring attention: cp steps of the attention core, each overlapping the transfer of the
         * next K/V chunk to the ring neighbour (double buffering); backward passes K/V and
         * dK/dV, then sends the last dK/dV home (formulas.md §3.6; layer.c core()). */
        struct comm_group g = est_group(e, s, COMM_CP);
        double kv = rules_cp_kv_bytes(s);
        double f = est_coll_s(e, s, &g, COLL_SEND_RECV, kv),
               b2 = est_coll_s(e, s, &g, COLL_SEND_RECV, 2 * kv);
        double sf = c->ld->attn_fwd / p->cp, sb = c->ld->attn_bwd / p->cp;
        c->t_cp_f = (p->cp - 1) * (f > sf ? f - sf : 0);
        c->t_cp_b = (p->cp - 1) * (b2 > sb ? b2 - sb : 0) + f;
    }
}

void estimate_scenario(struct estimator *e, const struct scenario *s, struct estimate *out)
{
    int pp = s->par.pp, slow = 0, heavy;
    struct stage_sum *st = xmalloc(sizeof(*st) * (size_t)pp);
    struct cand c;
    double bubble, opt0, optl, tail0, taill, mem[MC_COUNT];

    memset(out, 0, sizeof(*out));
    prepare(&c, e, s);
    est_stage_sums(&c, pp, st);
    est_pipeline_s(s, c.m, st, &bubble);
    /* Fill and drain cross every stage boundary once each way per model chunk. */
    bubble += 2.0 * (pp - 1) * s->par.vpp * est_p2p_s(&c);
    for (int k = 1; k < pp; k++)
        if (st[k].t > st[slow].t)
            slow = k;
    out->compute_s = c.m * st[slow].comp;
    out->tp_s = c.m * st[slow].tp;
    out->cpep_s = c.m * st[slow].cpep;
    out->bubble_s = bubble;
    /* Stage 0 finishes its backward last; the last stage about one fill earlier. */
    tail0 = est_dp_tail_s(&c, &st[0], &opt0);
    taill = est_dp_tail_s(&c, &st[pp - 1], &optl) - (pp > 1 ? st[pp - 1].t_bwd * (pp - 1) : 0);
    if (tail0 + opt0 >= taill + optl) {
        out->dp_s = tail0;
        out->optimizer_s = opt0;
    } else {
        out->dp_s = taill > 0 ? taill : 0;
        out->optimizer_s = optl;
    }
    out->step_s =
        c.m * st[slow].t + bubble + out->dp_s + out->optimizer_s + est_sec(s->sim.step_overhead);
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
        peak = est_stage_memory(&c, &st[k], k, mem);
        if (peak > out->peak_bytes) {
            out->peak_bytes = peak;
            out->peak_stage = k;
            memcpy(out->mem, mem, sizeof(mem));
        }
    }
    free(st);
}
