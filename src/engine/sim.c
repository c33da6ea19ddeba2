/* sim.c - see sim.h. The run loop: setup, events, accounting, teardown. */
#include "engine/sim.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/collective.h"
#include "engine/engine.h"
#include "net/flow.h"

/* Communicator slots of a rank: one per collective kind, four for point-to-point. */
enum {
    SLOT_SEND_NEXT = COMM_KIND_COUNT,
    SLOT_SEND_PREV,
    SLOT_RECV_PREV,
    SLOT_RECV_NEXT,
    NSLOT
};

struct inst {
    int arrived;
    uint8_t op, tcat;
    double bytes;
};

#define COMM_MEMO 4 /* cost entries remembered per communicator */

struct comm {
    struct comm_group g;
    int kind;     /* enum comm_kind */
    int nsim;     /* simulated members */
    int *members; /* rank indices of simulated members */
    int p2p;
    struct inst *q; /* pending instances, ring buffer of qcap */
    int32_t *qtask; /* per instance, per member: the member's task index */
    int64_t qbase;  /* seq of the oldest pending instance (= next to start) */
    int qcap;
    int64_t qmax; /* highest seq seen + 1 */
    int active;
    struct coll_cost cost; /* of the active instance */
    double sm_frac;        /* SM share its kernel holds on each member */
    /* its last few cost entries (a layer alternates its operations and sizes) */
    uint32_t memo_gen; /* sim.cache_gen when they were looked up (0 = never: it starts at 1) */
    int memo_next;     /* the slot the next miss replaces */
    struct comm_memo {
        int op; /* operation and bytes of the entry */
        double bytes;
        size_t ent; /* index into sim.cache */
    } memo[COMM_MEMO];
};

struct sflow {
    int comm;       /* communicator, or -1 for a copy */
    int rank, task; /* for copies */
    double cap;     /* rate in isolation, bytes/s */
    uint32_t mark;  /* component search stamp */
    int nres, res[2 * 4];
    int *res_many;    /* when more than 8 resources */
    int cap_many;     /* entries allocated at res_many */
    double remaining; /* bus bytes left */
    double rate;      /* bytes/s */
    sim_time last;    /* when remaining was last updated */
    uint32_t gen;
    int active;
};

struct srank {
    const struct prog *prog;
    const int32_t *snext;   /* the program's stream order (prog.h) */
    int32_t ntasks;         /* the program's tasks */
    int32_t head[ST_COUNT]; /* per stream: the task at its head, or ntasks when done */
    int8_t running[ST_COUNT];
    int comm[NSLOT];
    int midx[NSLOT]; /* this rank's member index in comm[slot] */
    int64_t seq[NSLOT];
    int compute_tcat;            /* tcat of the running compute task, or -1 */
    int inflight[TC_COUNT];      /* transferring communication / offload, by category */
    sim_time last;               /* last accounting time */
    sim_time start_of[ST_COUNT]; /* start time of the running task per stream */
    int res[TIER_COUNT + 2];     /* link resources: tiers, then PCIe h2d and d2h */
    /* the running compute-stream kernel, slowed while collectives hold SMs */
    int cmp_task;     /* task index, or -1 */
    double cmp_left;  /* work left, ns at full speed */
    double cmp_rate;  /* progress per ns, (0, 1] */
    sim_time cmp_t;   /* when cmp_left was last updated */
    uint32_t cmp_gen; /* generation of its completion event */
    double sm_busy;   /* fraction of SMs held by active collectives */
    int64_t mem;      /* bytes held now: the sum of rank_result.cur */
    int64_t churn;    /* bytes of the categories allocated and freed within the step */
};

struct cost_key {
    int nranks, nnodes, ppn, rail, op;
    double bytes;
};

struct cost_ent {
    struct cost_key k;
    struct coll_cost c;
    double sm_frac; /* fraction of the GPU's SMs its NCCL kernel holds */
    int used;
    int note[COMM_KIND_COUNT]; /* index into result->notes per communicator kind, -1 = none */
};

struct sim {
    const struct scenario *sc;
    double reserve_per_byte; /* allocator reserve per churned byte: f / (1 - f) */
    int64_t capacity;        /* GPU memory, bytes: the reserve's ceiling */
    const struct layout *lay;
    const struct sim_opts *opts;
    struct engine eng;
    struct sim_result *res;
    struct srank *r;
    int nr;
    struct comm *comms;
    int ncomms;
    size_t cap_comms;
    struct flow_net *net; /* every resource as a link; only a component's flows while solving */
    struct rflows {       /* active flows crossing a resource (n: how many) */
        int *f;
        int n, cap;
    } * res_flows;
    int *comp, *seeds, *fids; /* scratch: a component's flows, search seeds, net flow ids */
    size_t cap_comp, cap_seeds, cap_fids;
    int *pending; /* flows whose component must be re-solved before time moves on */
    int npending;
    size_t cap_pending;
    uint32_t stamp;
    int nres;
    struct sflow *flows;
    int nflows;
    size_t cap_flows;
    int *free_flows;
    int nfree;
    size_t cap_free;
    struct cost_ent *cache;
    size_t cache_cap, cache_n;
    uint32_t cache_gen; /* from 1, bumped whenever the cache is rehashed (entries move) */
    int64_t *stack;     /* (rank << 32 | task) tasks to complete now */
    size_t nstack, cap_stack;
    int trace_ranks; /* ranks recorded for the trace: 0 without --trace */
};

/* ---- small hash map: communicator key -> index ---------------------------- */

struct keymap {
    uint64_t *keys;
    int *vals;
    size_t cap, n;
};

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int *keymap_slot(struct keymap *m, uint64_t key)
{
    size_t i;

    if (2 * (m->n + 1) > m->cap) {
        struct keymap old = *m;
        size_t j;
        m->cap = old.cap ? old.cap * 2 : 64;
        m->keys = xmalloc(m->cap * sizeof(*m->keys));
        m->vals = xmalloc(m->cap * sizeof(*m->vals));
        for (j = 0; j < m->cap; j++)
            m->vals[j] = -1;
        m->n = 0;
        for (j = 0; j < old.cap; j++)
            if (old.vals[j] >= 0)
                *keymap_slot(m, old.keys[j]) = old.vals[j], m->n++;
        free(old.keys);
        free(old.vals);
    }
    i = mix64(key) & (m->cap - 1);
    while (m->vals[i] >= 0 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->vals[i] < 0)
        m->keys[i] = key;
    return &m->vals[i];
}

/* ---- setup ------------------------------------------------------------- */

static int slot_kind(int slot)
{
    switch (slot) {
    case SLOT_SEND_NEXT:
    case SLOT_RECV_NEXT:
        return COMM_PP_NEXT;
    case SLOT_SEND_PREV:
    case SLOT_RECV_PREV:
        return COMM_PP_PREV;
    default:
        return slot;
    }
}

/* Find or create the communicator for simulated rank index ri and slot. */
static int comm_for(struct sim *sm, struct keymap *km, int ri, int slot, int *sim_of_rank, int *buf,
                    int bufmax)
{
    const struct layout *l = sm->lay;
    int rank = sm->res->ranks[ri].rank;
    int kind = slot_kind(slot);
    uint64_t key;
    int *v, n, i;
    struct comm *c;

    if (slot >= COMM_KIND_COUNT) {
        int peer = layout_peer(l, rank, kind);
        int src = (slot == SLOT_SEND_NEXT || slot == SLOT_SEND_PREV) ? rank : peer;
        int dst = src == rank ? peer : rank;
        int fwd = slot == SLOT_SEND_NEXT || slot == SLOT_RECV_PREV;
        /* (src, dst, direction): with pp = 2 both directions join the same two ranks */
        key = ((uint64_t)(NSLOT + 1 + fwd) << 58) ^ ((uint64_t)src << 29) ^ (uint64_t)dst;
        buf[0] = src < dst ? src : dst;
        buf[1] = src < dst ? dst : src;
        n = src == dst ? 1 : 2;
    } else {
        n = layout_group(l, rank, kind, buf, bufmax);
        key = ((uint64_t)kind << 58) ^ (uint64_t)buf[0] ^ ((uint64_t)n << 32);
    }
    v = keymap_slot(km, key);
    if (*v >= 0)
        return *v;
    *v = sm->ncomms;
    km->n++;
    grow_array((void **)&sm->comms, &sm->cap_comms, (size_t)sm->ncomms + 1, sizeof(*sm->comms));
    c = &sm->comms[sm->ncomms];
    memset(c, 0, sizeof(*c));
    /* A pipeline pair is named by its direction: activations forward, gradients backward. */
    if (slot >= COMM_KIND_COUNT)
        kind = (slot == SLOT_SEND_NEXT || slot == SLOT_RECV_PREV) ? COMM_PP_NEXT : COMM_PP_PREV;
    c->kind = kind;
    c->p2p = slot >= COMM_KIND_COUNT;
    layout_group_shape(l, buf, n, &c->g);
    c->members = xmalloc(sizeof(int) * (size_t)n);
    for (i = 0; i < n; i++)
        if (sim_of_rank[buf[i]] >= 0)
            c->members[c->nsim++] = sim_of_rank[buf[i]];
    c->qcap = 4;
    c->q = xcalloc((size_t)c->qcap, sizeof(*c->q));
    return sm->ncomms++; /* qtask: in setup(), once every member is known */
}

static int member_index(const struct comm *c, int ri)
{
    int i;

    for (i = 0; i < c->nsim; i++)
        if (c->members[i] == ri)
            return i;
    assert(0 && "rank not a member of its communicator");
    return -1;
}

static void setup_resources(struct sim *sm)
{
    const struct hardware *hw = &sm->sc->hw;
    int ri, t;

    sm->nres = sm->nr * (TIER_COUNT + 2);
    sm->res_flows = xcalloc((size_t)sm->nres, sizeof(*sm->res_flows));
    sm->net = flow_new();
    for (ri = 0; ri < sm->nr; ri++) {
        for (t = 0; t < TIER_COUNT + 2; t++) {
            double cap = t < TIER_COUNT ? coll_tier_bw(hw, (enum link_tier)t) : hw->pcie.bw_Bps;
            int id = flow_link_add(sm->net, cap > 0 ? cap : 1e9);
            assert(id == ri * (TIER_COUNT + 2) + t);
            sm->r[ri].res[t] = id;
        }
    }
}

static void setup(struct sim *sm, struct prog *const *prog_of_stage)
{
    const struct layout *l = sm->lay;
    struct keymap km = { 0 };
    int *sim_of_rank, *buf, rank, ri, slot, i;
    int bufmax = l->world > 2 ? l->world : 2;

    sim_of_rank = xmalloc(sizeof(int) * (size_t)l->world);
    for (rank = 0; rank < l->world; rank++)
        sim_of_rank[rank] = -1;
    sm->nr = 0;
    for (rank = 0; rank < l->world; rank++) {
        int c[DIM_COUNT];
        layout_coords(l, rank, c);
        if (sm->opts->all_ranks || (c[DIM_TP] == 0 && c[DIM_CP] == 0 && c[DIM_DP] == 0))
            sim_of_rank[rank] = sm->nr++;
    }
    sm->res->nranks = sm->nr;
    sm->res->ranks = xcalloc((size_t)sm->nr, sizeof(struct rank_result));
    sm->r = xcalloc((size_t)sm->nr, sizeof(struct srank));
    for (rank = 0; rank < l->world; rank++) {
        struct rank_result *rr;
        struct srank *r;
        if ((ri = sim_of_rank[rank]) < 0)
            continue;
        rr = &sm->res->ranks[ri];
        r = &sm->r[ri];
        rr->rank = rank;
        layout_coords(l, rank, rr->coords);
        rr->prog = prog_of_stage[rr->coords[DIM_PP]];
        rr->slowdown = 1.0;
        if (sm->opts->all_ranks && rank == sm->sc->sim.straggler_rank)
            rr->slowdown = sm->sc->sim.straggler_slowdown;
        r->prog = rr->prog;
        r->snext = r->prog->snext;
        r->ntasks = r->prog->ntasks;
        r->compute_tcat = -1;
        r->cmp_task = -1;
        for (i = 0; i < ST_COUNT; i++)
            r->head[i] = r->prog->sfirst[i];
    }
    buf = xmalloc(sizeof(int) * (size_t)bufmax);
    for (ri = 0; ri < sm->nr; ri++) {
        /* Only create communicators this rank's program uses (task_slot() maps its tasks). */
        int used[NSLOT] = { 0 };
        const struct prog *p = sm->r[ri].prog;
        uint32_t next = 1u << COMM_PP_NEXT;
        for (i = 0; i < COMM_KIND_COUNT; i++)
            used[i] = (p->coll_comms >> i) & 1;
        used[SLOT_SEND_NEXT] = (p->send_comms & next) != 0;
        used[SLOT_SEND_PREV] = (p->send_comms & ~next) != 0;
        used[SLOT_RECV_NEXT] = (p->recv_comms & next) != 0;
        used[SLOT_RECV_PREV] = (p->recv_comms & ~next) != 0;
        for (slot = 0; slot < NSLOT; slot++) {
            sm->r[ri].comm[slot] = -1;
            if (used[slot])
                sm->r[ri].comm[slot] = comm_for(sm, &km, ri, slot, sim_of_rank, buf, bufmax);
        }
    }
    /* Member indices and instance storage now that every member is known. */
    for (i = 0; i < sm->ncomms; i++) {
        struct comm *c = &sm->comms[i];
        c->qtask = xcalloc((size_t)c->qcap * (size_t)(c->nsim ? c->nsim : 1), sizeof(int32_t));
    }
    for (ri = 0; ri < sm->nr; ri++)
        for (slot = 0; slot < NSLOT; slot++)
            if (sm->r[ri].comm[slot] >= 0)
                sm->r[ri].midx[slot] = member_index(&sm->comms[sm->r[ri].comm[slot]], ri);
    free(buf);
    free(sim_of_rank);
    free(km.keys);
    free(km.vals);
    setup_resources(sm);
    sm->trace_ranks = !sm->opts->trace                ? 0
                      : sm->opts->trace_max_ranks > 0 ? sm->opts->trace_max_ranks
                                                      : 64;
}

/* ---- accounting -------------------------------------------------------- */

/* Priority of exposed communication when several are in flight. */
static const int exposed_order[] = { TC_COMM_TP, TC_COMM_CP, TC_COMM_EP,
                                     TC_COMM_PP, TC_COMM_DP, TC_OFFLOAD };

static inline void account(struct sim *sm, int ri)
{
    struct srank *r = &sm->r[ri];
    sim_time now = sm->eng.now, dt = now - r->last;
    int cat = TC_IDLE;
    size_t i;

    if (dt <= 0) /* already accounted at this instant */
        return;
    if (r->compute_tcat >= 0) {
        cat = r->compute_tcat;
    } else {
        for (i = 0; i < ARRAY_LEN(exposed_order); i++)
            if (r->inflight[exposed_order[i]] > 0) {
                cat = exposed_order[i];
                break;
            }
    }
    sm->res->ranks[ri].bucket[cat] += dt;
    r->last = now;
}

/*
 * The caching allocator's reserve follows the tensors allocated and freed within the step
 * (activations, logits, gathered parameters): a fraction f of what it holds for them is free
 * but unusable, so it holds f / (1 - f) bytes more than they occupy (docs/memory.md). Model
 * states and buffers allocated once at time zero do not fragment. The reserve is soft: when
 * cudaMalloc fails, PyTorch's allocator releases its cached blocks and retries
 * (CUDACachingAllocator.cpp, release_cached_blocks), so it never takes more than the GPU has
 * free; whether a run fits is decided by what is allocated.
 */
static inline bool churned(int cat)
{
    return cat == MC_ACT || cat == MC_LOGITS || cat == MC_GATHERED;
}

static void mem_apply(struct sim *sm, int ri, int cat, int64_t delta)
{
    struct rank_result *rr = &sm->res->ranks[ri];
    struct srank *r = &sm->r[ri];
    int64_t total;

    if (delta == 0)
        return;
    rr->cur[cat] += delta;
    assert(rr->cur[cat] >= 0 && "memory freed twice");
    if (churned(cat))
        r->churn += delta;
    if (r->churn > 0 || rr->cur[MC_RESERVE] > 0) {
        int64_t want = llround(sm->reserve_per_byte * (double)r->churn);
        int64_t room = sm->capacity - (r->mem + delta - rr->cur[MC_RESERVE]);
        int64_t reserve = MAX(0, MIN(want, room));

        if (room >= 0 && want - reserve > rr->reserve_short)
            rr->reserve_short = want - reserve;
        delta += reserve - rr->cur[MC_RESERVE];
        rr->cur[MC_RESERVE] = reserve;
    }
    total = r->mem += delta;
    if (total > rr->peak) {
        rr->peak = total;
        rr->peak_t = sm->eng.now;
        memcpy(rr->at_peak, rr->cur, sizeof(rr->cur));
    }
    if (ri < sm->trace_ranks) {
        struct mem_sample *s;
        if (rr->ntl == 0 || rr->tl[rr->ntl - 1].t != sm->eng.now) {
            grow_array((void **)&rr->tl, &rr->cap_tl, rr->ntl + 1, sizeof(*rr->tl));
            rr->ntl++;
        }
        s = &rr->tl[rr->ntl - 1];
        s->t = sm->eng.now;
        memcpy(s->cur, rr->cur, sizeof(rr->cur));
    }
}

static void trace_task(struct sim *sm, int ri, int task, sim_time t0)
{
    struct sim_result *res = sm->res;
    struct trace_rec *tr;

    if (ri >= sm->trace_ranks)
        return;
    grow_array((void **)&res->trace, &res->cap_trace, res->ntrace + 1, sizeof(*res->trace));
    tr = &res->trace[res->ntrace++];
    tr->rank_idx = ri;
    tr->task = task;
    tr->t0 = t0;
    tr->t1 = sm->eng.now;
}

/* ---- task lifecycle ------------------------------------------------------ */

static void ev_task_done(struct engine *e, void *ctx, int64_t data);
static void arrive(struct sim *sm, int ri, int ti);
static int *flow_reserve(struct sim *sm, int nres, int *fi);
static void flow_begin(struct sim *sm, int fi, int comm, int ri, int ti, double bytes, double cap,
                       sim_time delay);

/*
 * SM contention. An NCCL kernel runs one thread block per channel (NCCL
 * src/enqueue.cc: the launch grid is the channel count), so while a
 * collective is active on a rank its blocks hold that share of the SMs and a
 * kernel on the compute stream progresses at the rest (at least a quarter).
 * The straggler multiplier applies on top.
 */
static double compute_rate(const struct sim *sm, int ri)
{
    double free_sm = 1.0 - sm->r[ri].sm_busy;

    if (free_sm < 0.25)
        free_sm = 0.25;
    return free_sm / sm->res->ranks[ri].slowdown;
}

static void ev_compute_done(struct engine *e, void *ctx, int64_t data);

static void compute_schedule(struct sim *sm, int ri)
{
    struct srank *r = &sm->r[ri];
    sim_time dt = (sim_time)ceil(r->cmp_left / r->cmp_rate - 1e-6);

    r->cmp_gen++;
    engine_after(&sm->eng, dt > 0 ? dt : 0, ev_compute_done, sm,
                 ((int64_t)ri << 32) | (int64_t)r->cmp_gen);
}

static void compute_start(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    sim_time dur = r->prog->tasks[ti].dur;

    r->cmp_task = ti;
    r->cmp_left = (double)dur;
    r->cmp_rate = compute_rate(sm, ri);
    r->cmp_t = sm->eng.now;
    if (!(r->cmp_rate < 1.0 || r->cmp_rate > 1.0) && dur < ((sim_time)1 << 52)) {
        /* full speed: compute_schedule()'s ceil(dur - 1e-6) is dur for an integer dur < 2^52 */
        r->cmp_gen++;
        engine_after(&sm->eng, dur, ev_compute_done, sm, ((int64_t)ri << 32) | (int64_t)r->cmp_gen);
        return;
    }
    compute_schedule(sm, ri);
}

/* The SMs held by collectives on rank ri changed by `delta`: re-rate its kernel. */
static inline void sm_change(struct sim *sm, int ri, double delta)
{
    struct srank *r = &sm->r[ri];
    double rate;

    r->sm_busy += delta;
    if (r->sm_busy < 1e-9)
        r->sm_busy = 0;
    if (r->cmp_task < 0)
        return;
    rate = compute_rate(sm, ri);
    if (!(rate < r->cmp_rate || rate > r->cmp_rate))
        return;
    r->cmp_left -= (double)(sm->eng.now - r->cmp_t) * r->cmp_rate;
    if (r->cmp_left < 0)
        r->cmp_left = 0;
    r->cmp_t = sm->eng.now;
    r->cmp_rate = rate;
    compute_schedule(sm, ri);
}

static void push_complete(struct sim *sm, int ri, int ti)
{
    grow_array((void **)&sm->stack, &sm->cap_stack, sm->nstack + 1, sizeof(*sm->stack));
    sm->stack[sm->nstack++] = ((int64_t)ri << 32) | (int64_t)ti;
}

static void start(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    const struct task *t = &r->prog->tasks[ti];
    sim_time dur;

#if defined(__GNUC__)
    __builtin_prefetch(&r->prog->succs[t->succ0]); /* read when it completes */
#endif
    r->running[t->stream] = 1;
    r->start_of[t->stream] = sm->eng.now;
    if (t->mem0)
        mem_apply(sm, ri, t->mcat0, t->mem0);
    switch (t->kind) {
    case TASK_COMPUTE:
    case TASK_HOST:
        account(sm, ri);
        if (t->stream == ST_COMPUTE && t->kind == TASK_COMPUTE) {
            r->compute_tcat = t->tcat;
            compute_start(sm, ri, ti);
            break;
        }
        if (t->stream == ST_COMPUTE)
            r->compute_tcat = t->tcat;
        else
            r->inflight[t->tcat]++;
        dur = t->dur;
        if (t->kind == TASK_COMPUTE &&
            (sm->res->ranks[ri].slowdown > 1.0 || sm->res->ranks[ri].slowdown < 1.0))
            dur = (sim_time)ceil((double)dur * sm->res->ranks[ri].slowdown);
        engine_after(&sm->eng, dur, ev_task_done, sm, ((int64_t)ri << 32) | ti);
        break;
    case TASK_COPY: {
        int fi;
        account(sm, ri);
        r->inflight[t->tcat]++;
        *flow_reserve(sm, 1, &fi) = r->res[t->stream == ST_D2H ? TIER_COUNT + 1 : TIER_COUNT];
        flow_begin(sm, fi, -1, ri, ti, t->bytes, sm->sc->hw.pcie.bw_Bps, 0);
        break;
    }
    case TASK_COLL:
    case TASK_SEND:
    case TASK_RECV:
        arrive(sm, ri, ti);
        break;
    default:
        push_complete(sm, ri, ti);
        break;
    }
}

/*
 * Are all of task ti's dependencies done? Tasks leave the head of their
 * stream exactly when they complete, in stream order (= index order), so a
 * predecessor is done when its stream's head has passed it: no per-rank
 * counters (the state of a rank is its stream heads, which keeps --ranks all
 * small and cached).
 */
static bool ready(const struct srank *r, int ti)
{
    const struct prog *p = r->prog;
    int32_t i, end = p->pstart[ti + 1];

    for (i = p->pstart[ti]; i < end; i++) {
        int d = p->preds[i];
        if (r->head[p->stream_of[d]] <= d)
            return false;
    }
    return true;
}

static void try_start(struct sim *sm, int ri, int st)
{
    struct srank *r = &sm->r[ri];
    int32_t ti = r->head[st];

    if (r->running[st] || ti >= r->ntasks || !ready(r, ti))
        return;
    start(sm, ri, ti);
}

static void complete(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    struct rank_result *rr = &sm->res->ranks[ri];
    const struct task *t = &r->prog->tasks[ti];
    const int32_t *succ = r->prog->succs + t->succ0;
    unsigned tried = 0; /* streams poked, a bit each */
    int i;

    if (t->kind != TASK_MARK) {
        account(sm, ri);
        rr->busy[t->tcat] += sm->eng.now - r->start_of[t->stream];
        if (t->stream == ST_COMPUTE && (t->kind == TASK_COMPUTE || t->kind == TASK_HOST))
            r->compute_tcat = -1;
        else if (t->kind == TASK_COMPUTE || t->kind == TASK_HOST || t->kind == TASK_COPY)
            r->inflight[t->tcat]--;
        trace_task(sm, ri, ti, r->start_of[t->stream]);
    }
    if (t->mem1)
        mem_apply(sm, ri, t->mcat1, t->mem1);
    assert(r->head[t->stream] == ti);
    r->running[t->stream] = 0;
    r->head[t->stream] = r->snext[ti];
#if defined(__GNUC__)
    /*
     * The stream's next tasks start soon: fetch the next two, the next one's dependency list
     * and the one after's readiness data. The simulator walks each stream in index order long
     * after the builder wrote it (megabytes per stage, out of cache); waiting for those cache
     * lines cost 8-10 ms of the flagship's ~55 (measured, docs/performance.md). Written out
     * here: GCC 12 deletes a helper function holding only prefetches as a pure call.
     */
    if (r->head[t->stream] < r->ntasks) {
        const struct prog *p = r->prog;
        int32_t n = r->head[t->stream], n2 = r->snext[n];
        __builtin_prefetch(&p->tasks[n]);
        __builtin_prefetch(&p->preds[p->pstart[n]]);
        if (n2 < r->ntasks) {
            __builtin_prefetch(&p->tasks[n2]);
            __builtin_prefetch(&p->pstart[n2]);
            __builtin_prefetch(&r->snext[n2]);
        }
    }
#endif
    rr->end = sm->eng.now;
    /*
     * Poke the streams of the successors, then this task's own. Nothing completes while
     * they start (completions come from events and the drained stack), so the heads and
     * readiness stay put: a stream poked once is not poked again.
     */
    for (i = 0; i < t->nsucc; i++) {
        int st = r->prog->stream_of[succ[i]];
        if (tried & (1u << st))
            continue;
        tried |= 1u << st;
        try_start(sm, ri, st);
    }
    if (!(tried & (1u << t->stream)))
        try_start(sm, ri, t->stream);
}

static void drain(struct sim *sm)
{
    while (sm->nstack > 0) {
        int64_t v = sm->stack[--sm->nstack];
        complete(sm, (int)(v >> 32), (int)(v & 0xffffffff));
    }
}

static void ev_task_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;

    (void)e;
    complete(sm, (int)(data >> 32), (int)(data & 0xffffffff));
    drain(sm);
}

static void ev_compute_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int ri = (int)(data >> 32), ti;
    struct srank *r = &sm->r[ri];

    (void)e;
    if ((uint32_t)(data & 0xffffffff) != r->cmp_gen || r->cmp_task < 0)
        return; /* superseded by a rate change */
    ti = r->cmp_task;
    r->cmp_task = -1;
    complete(sm, ri, ti);
    drain(sm);
}

/* ---- collectives ----------------------------------------------------------- */

static int task_slot(const struct task *t)
{
    if (t->kind == TASK_SEND)
        return t->comm == COMM_PP_NEXT ? SLOT_SEND_NEXT : SLOT_SEND_PREV;
    if (t->kind == TASK_RECV)
        return t->comm == COMM_PP_NEXT ? SLOT_RECV_NEXT : SLOT_RECV_PREV;
    return t->comm;
}

/* Grow the pending-instance ring of c until it holds instance `seq`. */
static void inst_grow(struct comm *c, int64_t seq)
{
    int ncap = c->qcap * 2, nsim = c->nsim ? c->nsim : 1;
    struct inst *q;
    int32_t *qt;
    int64_t s;

    while (seq - c->qbase >= ncap)
        ncap *= 2;
    q = xcalloc((size_t)ncap, sizeof(*q));
    qt = xcalloc((size_t)ncap * (size_t)nsim, sizeof(int32_t));
    for (s = c->qbase; s < c->qbase + c->qcap; s++) {
        q[s & (ncap - 1)] = c->q[s & (c->qcap - 1)];
        memcpy(qt + (s & (ncap - 1)) * nsim, c->qtask + (s & (c->qcap - 1)) * nsim,
               sizeof(int32_t) * (size_t)nsim);
    }
    free(c->q);
    free(c->qtask);
    c->q = q;
    c->qtask = qt;
    c->qcap = ncap;
}

static inline struct inst *inst_at(struct comm *c, int64_t seq)
{
    assert(seq >= c->qbase);
    if (seq - c->qbase >= c->qcap)
        inst_grow(c, seq);
    return &c->q[seq & (c->qcap - 1)]; /* qcap is a power of two */
}

static uint64_t cost_hash(const struct cost_key *k)
{
    uint64_t bits; /* entries match bit for bit (memcmp), so hash the bits of the size */

    memcpy(&bits, &k->bytes, sizeof(bits));
    return mix64((uint64_t)k->nranks * 1000003u ^ (uint64_t)k->nnodes << 20 ^
                 (uint64_t)k->ppn << 40 ^ (uint64_t)k->op << 56 ^ (uint64_t)k->rail << 62 ^ bits);
}

static struct cost_ent *cost_slot(struct cost_ent *tab, size_t cap, const struct cost_key *k)
{
    size_t i;

    for (i = cost_hash(k) & (cap - 1); tab[i].used; i = (i + 1) & (cap - 1))
        if (memcmp(&tab[i].k, k, sizeof(*k)) == 0)
            break;
    return &tab[i];
}

/*
 * Share of the SMs an operation's kernel holds: its channel count (one block
 * each) over the SM count. Collectives use the channels of the graph NCCL
 * picked; send/recv NCCL_NCHANNELS_PER_NET_PEER's default of 2 (NCCL env docs).
 */
static double sm_fraction(const struct hardware *hw, const struct comm_group *g, int op,
                          const struct coll_cost *c)
{
    struct nccl_model m;
    int ch;

    if (g->nranks <= 1 || hw->gpu.sm_count <= 0 || c->bus_bytes <= 0)
        return 0;
    if (op == COLL_SEND_RECV) {
        ch = 2;
    } else {
        nccl_model_init(hw, g, op == COLL_ALL_TO_ALL ? COLL_ALL_GATHER : (enum coll_op)op, 0, &m);
        ch = c->algo == ALGO_TREE                                ? m.tree.nchannels
             : c->algo == ALGO_NVLS || c->algo == ALGO_NVLS_TREE ? m.nvls.nchannels
                                                                 : m.ring.nchannels;
    }
    return ch > 0 ? MIN(1.0, (double)ch / hw->gpu.sm_count) : 0;
}

/* The collective model's cost, cached by group shape, operation and size. */
static struct cost_ent *estimate(struct sim *sm, struct comm *c, int op, double bytes)
{
    struct cost_key k;
    struct cost_ent *ent;
    int i;

    /* a communicator mostly repeats one of its last few operations */
    if (c->memo_gen == sm->cache_gen)
        for (i = 0; i < COMM_MEMO; i++)
            if (c->memo[i].op == op && !(c->memo[i].bytes < bytes || c->memo[i].bytes > bytes))
                return &sm->cache[c->memo[i].ent];
    memset(&k, 0, sizeof(k));
    k.nranks = c->g.nranks;
    k.nnodes = c->g.nnodes;
    k.ppn = c->g.ppn;
    k.rail = c->g.rail_aligned;
    k.op = op;
    k.bytes = bytes;
    if (2 * (sm->cache_n + 1) > sm->cache_cap) {
        struct cost_ent *old = sm->cache;
        size_t oldcap = sm->cache_cap, j;

        sm->cache_cap = oldcap ? oldcap * 2 : 256;
        sm->cache = xcalloc(sm->cache_cap, sizeof(*sm->cache));
        sm->cache_gen++; /* the entries move: every communicator's memo is stale */
        for (j = 0; j < oldcap; j++)
            if (old[j].used)
                *cost_slot(sm->cache, sm->cache_cap, &old[j].k) = old[j];
        free(old);
    }
    ent = cost_slot(sm->cache, sm->cache_cap, &k);
    if (!ent->used) {
        ent->used = 1;
        ent->k = k;
        for (i = 0; i < COMM_KIND_COUNT; i++)
            ent->note[i] = -1;
        coll_estimate(&sm->sc->hw, &sm->sc->nccl, &c->g, (enum coll_op)op, bytes, &ent->c);
        ent->sm_frac = sm_fraction(&sm->sc->hw, &c->g, op, &ent->c);
        sm->cache_n++;
    }
    if (c->memo_gen != sm->cache_gen) {
        for (i = 0; i < COMM_MEMO; i++)
            c->memo[i].op = -1;
        c->memo_gen = sm->cache_gen;
    }
    c->memo[c->memo_next].op = op;
    c->memo[c->memo_next].bytes = bytes;
    c->memo[c->memo_next].ent = (size_t)(ent - sm->cache);
    c->memo_next = (c->memo_next + 1) % COMM_MEMO;
    return ent;
}

/* Count one collective in the distinct-shapes list the report shows. */
static void note_coll(struct sim *sm, const struct comm *c, const struct inst *in,
                      struct cost_ent *ent)
{
    struct sim_result *res = sm->res;
    struct coll_note *n;

    if (ent->note[c->kind] >= 0) {
        res->notes[ent->note[c->kind]].count++;
        return;
    }
    if (res->nnotes >= 256)
        return;
    grow_array((void **)&res->notes, &res->cap_notes, (size_t)res->nnotes + 1, sizeof(*res->notes));
    ent->note[c->kind] = res->nnotes;
    n = &res->notes[res->nnotes++];
    n->comm_kind = c->kind;
    n->op = in->op;
    n->nranks = c->g.nranks;
    n->nnodes = c->g.nnodes;
    n->algo = c->cost.algo;
    n->proto = c->cost.proto;
    n->path = c->cost.path;
    n->bytes = in->bytes;
    n->time = coll_time(&c->cost);
    n->count = 1;
}

static void ev_coll_transfer(struct engine *e, void *ctx, int64_t data);
static void coll_finish(struct sim *sm, int ci);
static void coll_transfer(struct sim *sm, int ci, sim_time delay);

static void coll_begin(struct sim *sm, int ci)
{
    struct comm *c = &sm->comms[ci];
    struct inst *in = inst_at(c, c->qbase);
    struct cost_ent *ent;
    int i;

    c->active = 1;
    ent = estimate(sm, c, in->op, in->bytes);
    c->cost = ent->c;
    c->sm_frac = ent->sm_frac;
    note_coll(sm, c, in, ent);
    for (i = 0; i < c->nsim; i++) {
        int ri = c->members[i];
        struct srank *r = &sm->r[ri];
        int ti = c->qtask[(c->qbase & (c->qcap - 1)) * c->nsim + i];
        account(sm, ri);
        r->inflight[in->tcat]++;
        r->start_of[r->prog->stream_of[ti]] = sm->eng.now;
        if (c->sm_frac > 0)
            sm_change(sm, ri, c->sm_frac);
        sm->res->ranks[ri].comm_bytes[c->kind] += c->cost.bus_bytes;
    }
    if (c->cost.bus_bytes <= 0 || c->cost.bus_bw_Bps <= 0)
        engine_after(&sm->eng, c->cost.latency, ev_coll_transfer, sm, ci);
    else
        coll_transfer(sm, ci, c->cost.latency);
}

/* An operation without payload ends after its latency. */
static void ev_coll_transfer(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;

    (void)e;
    coll_finish(sm, (int)data);
    drain(sm);
}

/*
 * The operation's bytes as one flow over its members' links of the
 * bottleneck tier, starting after the latency (`delay`): the flow holds its
 * links from now, which saves an event per operation; its bytes start to move
 * at now + delay.
 */
static void coll_transfer(struct sim *sm, int ci, sim_time delay)
{
    struct comm *c = &sm->comms[ci];
    int fi, i;
    int *res = flow_reserve(sm, c->nsim, &fi);

    for (i = 0; i < c->nsim; i++)
        res[i] = sm->r[c->members[i]].res[c->cost.tier];
    flow_begin(sm, fi, ci, -1, -1, c->cost.bus_bytes, c->cost.bus_bw_Bps, delay);
}

static void coll_finish(struct sim *sm, int ci)
{
    struct comm *c = &sm->comms[ci];
    struct inst *in = inst_at(c, c->qbase);
    int i;

    for (i = 0; i < c->nsim; i++) {
        int ri = c->members[i];
        int ti = c->qtask[(c->qbase & (c->qcap - 1)) * c->nsim + i];
        account(sm, ri);
        sm->r[ri].inflight[in->tcat]--;
        if (c->sm_frac > 0)
            sm_change(sm, ri, -c->sm_frac);
        complete(sm, ri, ti);
    }
    memset(in, 0, sizeof(*in));
    c->qbase++;
    c->active = 0;
    if (c->qbase < c->qmax && inst_at(c, c->qbase)->arrived == c->nsim)
        coll_begin(sm, ci);
}

static void arrive(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    const struct task *t = &r->prog->tasks[ti];
    int slot = task_slot(t);
    int ci = r->comm[slot];
    struct comm *c = &sm->comms[ci];
    int64_t seq = r->seq[slot]++;
    struct inst *in = inst_at(c, seq);

    if (in->arrived == 0) {
        in->op = t->kind == TASK_COLL ? t->op : COLL_SEND_RECV;
        in->tcat = t->tcat;
        in->bytes = t->bytes;
    } else {
        assert(in->op == (t->kind == TASK_COLL ? t->op : COLL_SEND_RECV) &&
               "mismatched collective order across ranks");
        if (t->bytes > in->bytes)
            in->bytes = t->bytes;
    }
    c->qtask[(seq & (c->qcap - 1)) * c->nsim + r->midx[slot]] = ti;
    in->arrived++;
    if (seq + 1 > c->qmax)
        c->qmax = seq + 1;
    if (in->arrived == c->nsim && seq == c->qbase && !c->active)
        coll_begin(sm, ci);
}

/* ---- flows ------------------------------------------------------------------ */

static void ev_flow_done(struct engine *e, void *ctx, int64_t data);

static const int *flow_res(const struct sflow *f)
{
    return f->nres > (int)ARRAY_LEN(f->res) ? f->res_many : f->res;
}

static void flow_schedule(struct sim *sm, int fi)
{
    struct sflow *f = &sm->flows[fi];
    sim_time wait = f->last > sm->eng.now ? f->last - sm->eng.now : 0;
    sim_time dt = wait + ns_from_s(f->remaining / f->rate);

    f->gen++;
    engine_after(&sm->eng, dt, ev_flow_done, sm, ((int64_t)f->gen << 32) | fi);
}

/* A flow's rate changes: account for what it moved and reschedule its end. */
static void flow_rerate(struct sim *sm, int fi, double rate)
{
    struct sflow *f = &sm->flows[fi];

    if (!(rate < f->rate || rate > f->rate))
        return;
    if (sm->eng.now > f->last) { /* a flow still in its latency has moved nothing yet */
        f->remaining -= f->rate * ((double)(sm->eng.now - f->last) / NS_PER_S);
        if (f->remaining < 0)
            f->remaining = 0;
        f->last = sm->eng.now;
    }
    f->rate = rate > 0 ? rate : 1.0;
    flow_schedule(sm, fi);
}

/*
 * Re-solve the max-min allocation of the flows connected to the seeds
 * through shared link resources, and reschedule those whose rate moved.
 * Max-min fairness decomposes over connected components, so solving only
 * the component a change touched gives the global allocation at a cost that
 * does not grow with the number of ranks (--ranks all on 16k GPUs).
 */
static void solve_component(struct sim *sm, const int *seeds, int nseeds)
{
    int ncomp = 0, k, i, j;

    if (++sm->stamp == 0)
        sm->stamp = 1;
    for (k = 0; k < nseeds; k++) {
        struct sflow *f = &sm->flows[seeds[k]];
        if (!f->active || f->mark == sm->stamp)
            continue;
        f->mark = sm->stamp;
        grow_array((void **)&sm->comp, &sm->cap_comp, (size_t)ncomp + 1, sizeof(int));
        sm->comp[ncomp++] = seeds[k];
    }
    for (k = 0; k < ncomp; k++) {
        const struct sflow *f = &sm->flows[sm->comp[k]];
        const int *res = flow_res(f);
        for (i = 0; i < f->nres; i++) {
            const struct rflows *rl = &sm->res_flows[res[i]];
            for (j = 0; j < rl->n; j++) {
                struct sflow *g = &sm->flows[rl->f[j]];
                if (g->mark == sm->stamp)
                    continue;
                g->mark = sm->stamp;
                grow_array((void **)&sm->comp, &sm->cap_comp, (size_t)ncomp + 1, sizeof(int));
                sm->comp[ncomp++] = rl->f[j];
            }
        }
    }
    if (ncomp == 0)
        return;
    /* The component's flows alone in the shared net (its links were added at setup). */
    grow_array((void **)&sm->fids, &sm->cap_fids, (size_t)ncomp, sizeof(int));
    for (k = 0; k < ncomp; k++) {
        const struct sflow *f = &sm->flows[sm->comp[k]];
        sm->fids[k] = flow_add(sm->net, f->cap, flow_res(f), f->nres);
    }
    flow_solve(sm->net);
    for (k = 0; k < ncomp; k++)
        flow_rerate(sm, sm->comp[k], flow_rate(sm->net, sm->fids[k]));
    for (k = 0; k < ncomp; k++)
        flow_remove(sm->net, sm->fids[k]);
}

/*
 * Flows start and end in bursts at one instant (every data-parallel replica
 * sends its activations at the same time): queue their components and solve
 * once, from an event at the same time that runs after those already queued.
 * Rates are stale for zero simulated time, so results do not change.
 */
static void ev_solve(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int n = sm->npending;

    (void)e;
    (void)data;
    sm->npending = 0;
    grow_array((void **)&sm->seeds, &sm->cap_seeds, (size_t)n + 1, sizeof(int));
    memcpy(sm->seeds, sm->pending, sizeof(int) * (size_t)n);
    solve_component(sm, sm->seeds, n);
    drain(sm);
}

static void solve_later(struct sim *sm, const int *flows, int n)
{
    if (n <= 0)
        return;
    if (sm->npending == 0)
        engine_at(&sm->eng, sm->eng.now, ev_solve, sm, 0);
    grow_array((void **)&sm->pending, &sm->cap_pending, (size_t)(sm->npending + n), sizeof(int));
    memcpy(sm->pending + sm->npending, flows, sizeof(int) * (size_t)n);
    sm->npending += n;
}

static void res_flows_add(struct sim *sm, int r, int fi)
{
    struct rflows *rl = &sm->res_flows[r];

    if (rl->n == rl->cap) {
        rl->cap = rl->cap ? 2 * rl->cap : 4;
        rl->f = xrealloc(rl->f, sizeof(int) * (size_t)rl->cap);
    }
    rl->f[rl->n++] = fi;
}

/* Remove fi, keeping the order of the others (determinism of the search order). */
static void res_flows_remove(struct sim *sm, int r, int fi)
{
    struct rflows *rl = &sm->res_flows[r];
    int i;

    for (i = 0; i < rl->n; i++)
        if (rl->f[i] == fi)
            break;
    assert(i < rl->n);
    for (rl->n--; i < rl->n; i++) /* a few entries: no call to memmove */
        rl->f[i] = rl->f[i + 1];
}

/*
 * A flow slot (*fi) over nres link resources: returns the array the caller
 * fills with the resource ids before flow_begin().
 */
static int *flow_reserve(struct sim *sm, int nres, int *fi)
{
    struct sflow *f;

    if (sm->nfree > 0) {
        *fi = sm->free_flows[--sm->nfree];
    } else {
        grow_array((void **)&sm->flows, &sm->cap_flows, (size_t)sm->nflows + 1, sizeof(*sm->flows));
        *fi = sm->nflows++;
        memset(&sm->flows[*fi], 0, sizeof(sm->flows[*fi]));
    }
    f = &sm->flows[*fi];
    f->nres = nres;
    if (nres <= (int)ARRAY_LEN(f->res))
        return f->res;
    if (nres > f->cap_many) {
        free(f->res_many);
        f->res_many = xmalloc(sizeof(int) * (size_t)nres);
        f->cap_many = nres;
    }
    return f->res_many;
}

/*
 * Start flow fi (resources filled in) of `bytes` at `cap` bytes/s in isolation, for
 * communicator `comm`, or (comm = -1) for copy task ti of rank ri; its bytes move from
 * now + delay.
 */
static void flow_begin(struct sim *sm, int fi, int comm, int ri, int ti, double bytes, double cap,
                       sim_time delay)
{
    struct sflow *f = &sm->flows[fi];
    const int *res = flow_res(f);
    int nres = f->nres, i, shared = 0;

    f->comm = comm;
    f->rank = ri;
    f->task = ti;
    f->remaining = bytes;
    f->last = sm->eng.now + delay;
    f->active = 1;
    f->cap = cap;
    for (i = 0; i < nres; i++) {
        res_flows_add(sm, res[i], fi);
        shared |= sm->res_flows[res[i]].n > 1;
    }
    if (shared) {
        f->rate = 0;
        solve_later(sm, &fi, 1);
    } else {
        /* Alone on its links: a flow runs at its own solo bandwidth. */
        f->rate = cap;
        flow_schedule(sm, fi);
    }
}

static void ev_flow_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int fi = (int)(data & 0xffffffff);
    struct sflow *f = &sm->flows[fi];
    const int *res;
    int i, nseeds;

    (void)e;
    if (!f->active || (uint32_t)(data >> 32) != f->gen)
        return; /* superseded by a rate change */
    res = flow_res(f);
    nseeds = 0;
    /* the flows left on its links, whose shares grow: none when it was alone on them */
    for (i = 0; i < f->nres; i++) {
        const struct rflows *rl;
        res_flows_remove(sm, res[i], fi);
        rl = &sm->res_flows[res[i]];
        if (rl->n == 0)
            continue;
        grow_array((void **)&sm->seeds, &sm->cap_seeds, (size_t)(nseeds + rl->n), sizeof(int));
        memcpy(sm->seeds + nseeds, rl->f, sizeof(int) * (size_t)rl->n);
        nseeds += rl->n;
    }
    f->active = 0;
    grow_array((void **)&sm->free_flows, &sm->cap_free, (size_t)sm->nfree + 1, sizeof(int));
    sm->free_flows[sm->nfree++] = fi;
    if (f->comm >= 0) {
        coll_finish(sm, f->comm);
    } else {
        account(sm, f->rank);
        complete(sm, f->rank, f->task);
    }
    if (nseeds > 0)
        solve_later(sm, sm->seeds, nseeds);
    drain(sm);
}

/* ---- run --------------------------------------------------------------- */

static void ev_kickoff(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int st;

    (void)e;
    for (st = 0; st < ST_COUNT; st++)
        try_start(sm, (int)data, st);
    drain(sm);
}

/* SIMTRAIN_DEBUG_STUCK=1: list every rank's stream heads when a step deadlocks (builder bugs). */
static void dump_heads(const struct sim *sm)
{
    char name[160];
    int ri, st;

    for (ri = 0; ri < sm->nr; ri++) {
        const struct srank *r = &sm->r[ri];
        for (st = 0; st < ST_COUNT; st++) {
            int ti = r->head[st];
            if (ti >= r->ntasks)
                continue;
            prog_label_text(r->prog, r->prog->tasks[ti].label, name, sizeof(name));
            fprintf(stderr, "rank %d stream %s task %d '%s' mb %d ready %d\n",
                    sm->res->ranks[ri].rank, stream_name(st), ti, name, r->prog->tasks[ti].mb,
                    (int)ready(r, ti));
        }
    }
}

static int check_done(struct sim *sm, char *reason, size_t reason_len)
{
    int ri, st;

    for (ri = 0; ri < sm->nr; ri++) {
        struct srank *r = &sm->r[ri];
        for (st = 0; st < ST_COUNT; st++) {
            if (r->head[st] < r->ntasks) {
                int ti = r->head[st];
                char name[160];
                prog_label_text(r->prog, r->prog->tasks[ti].label, name, sizeof(name));
                snprintf(reason, reason_len,
                         "internal error: rank %d stuck at task %d ('%s') on stream %s",
                         sm->res->ranks[ri].rank, ti, name, stream_name(st));
                if (getenv("SIMTRAIN_DEBUG_STUCK"))
                    dump_heads(sm);
                return -1;
            }
        }
    }
    return 0;
}

int sim_run(const struct scenario *s, const struct layout *l, struct prog *const *prog_of_stage,
            const struct sim_opts *opts, struct sim_result *res, char *reason, size_t reason_len)
{
    struct sim sm;
    int ri, i, rc;

    memset(&sm, 0, sizeof(sm));
    memset(res, 0, sizeof(*res));
    sm.sc = s;
    sm.reserve_per_byte = s->train.fragmentation / (1 - s->train.fragmentation);
    sm.capacity = (int64_t)s->hw.gpu.mem_bytes;
    sm.lay = l;
    sm.opts = opts;
    sm.res = res;
    sm.cache_gen = 1;
    engine_init(&sm.eng);
    setup(&sm, prog_of_stage);
    for (ri = 0; ri < sm.nr; ri++)
        engine_at(&sm.eng, 0, ev_kickoff, &sm, ri);
    engine_run(&sm.eng);
    rc = check_done(&sm, reason, reason_len);
    res->events = sm.eng.fired;
    res->step = 0;
    for (ri = 0; ri < sm.nr; ri++)
        if (res->ranks[ri].end > res->step)
            res->step = res->ranks[ri].end;
    sm.eng.now = res->step;
    for (ri = 0; ri < sm.nr; ri++)
        account(&sm, ri);

    for (i = 0; i < sm.ncomms; i++) {
        free(sm.comms[i].members);
        free(sm.comms[i].q);
        free(sm.comms[i].qtask);
    }
    for (i = 0; i < sm.nflows; i++)
        free(sm.flows[i].res_many);
    free(sm.r);
    free(sm.comms);
    free(sm.flows);
    free(sm.free_flows);
    for (i = 0; i < sm.nres; i++)
        free(sm.res_flows[i].f);
    free(sm.res_flows);
    free(sm.fids);
    free(sm.pending);
    flow_free(sm.net);
    free(sm.comp);
    free(sm.seeds);
    free(sm.cache);
    free(sm.stack);
    engine_release(&sm.eng);
    return rc;
}

void sim_result_release(struct sim_result *res)
{
    int i;

    for (i = 0; i < res->nranks; i++)
        free(res->ranks[i].tl);
    free(res->ranks);
    free(res->trace);
    free(res->notes);
    memset(res, 0, sizeof(*res));
}
