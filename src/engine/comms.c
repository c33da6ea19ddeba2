/*
 * comms.c - communicators (sim_internal.h). Each simulated rank gets one communicator per
 * collective kind its program uses and one per point-to-point direction; ranks of one group
 * share it. Operations are matched in issue order, as NCCL requires: the n-th operation a
 * member issues on a communicator is the n-th of every member, and it starts when every
 * simulated member has arrived. A communicator runs one operation at a time (a PyTorch
 * process group's single NCCL stream). An operation costs the collective model's latency,
 * then its bus bytes move as one flow (transfer.c); the model's answers are cached by group
 * shape, operation and size.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sim_internal.h"

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
static int find_comm(struct sim *sm, struct keymap *km, int ri, int slot, const int *sim_of_rank,
                     int *buf, int bufmax)
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
    return sm->ncomms++; /* qtask: in comms_setup(), once every member is known */
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

/* The slots rank ri's program uses (slot_of() maps its tasks): only those get a communicator. */
static void used_slots(const struct prog *p, int used[NSLOT])
{
    uint32_t next = 1u << COMM_PP_NEXT;
    int i;

    for (i = 0; i < COMM_KIND_COUNT; i++)
        used[i] = (p->coll_comms >> i) & 1;
    used[SLOT_SEND_NEXT] = (p->send_comms & next) != 0;
    used[SLOT_SEND_PREV] = (p->send_comms & ~next) != 0;
    used[SLOT_RECV_NEXT] = (p->recv_comms & next) != 0;
    used[SLOT_RECV_PREV] = (p->recv_comms & ~next) != 0;
}

void comms_setup(struct sim *sm, const int *sim_of_rank)
{
    const struct layout *l = sm->lay;
    struct keymap km = { 0 };
    int bufmax = l->world > 2 ? l->world : 2;
    int *buf = xmalloc(sizeof(int) * (size_t)bufmax), ri, slot, i;

    for (ri = 0; ri < sm->nr; ri++) {
        int used[NSLOT];
        used_slots(sm->r[ri].prog, used);
        for (slot = 0; slot < NSLOT; slot++) {
            sm->r[ri].comm[slot] = -1;
            if (used[slot])
                sm->r[ri].comm[slot] = find_comm(sm, &km, ri, slot, sim_of_rank, buf, bufmax);
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
    free(km.keys);
    free(km.vals);
}

void comms_release(struct sim *sm)
{
    int i;

    for (i = 0; i < sm->ncomms; i++) {
        free(sm->comms[i].members);
        free(sm->comms[i].q);
        free(sm->comms[i].qtask);
    }
    free(sm->comms);
    free(sm->cache);
}

static int slot_of(const struct task *t)
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

static uint64_t hash_key(const struct cost_key *k)
{
    uint64_t bits; /* entries match bit for bit (memcmp), so hash the bits of the size */

    memcpy(&bits, &k->bytes, sizeof(bits));
    return mix64((uint64_t)k->nranks * 1000003u ^ (uint64_t)k->nnodes << 20 ^
                 (uint64_t)k->ppn << 40 ^ (uint64_t)k->op << 56 ^ (uint64_t)k->rail << 62 ^ bits);
}

static struct cost_ent *cache_slot(struct cost_ent *tab, size_t cap, const struct cost_key *k)
{
    size_t i;

    for (i = hash_key(k) & (cap - 1); tab[i].used; i = (i + 1) & (cap - 1))
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
static struct cost_ent *lookup_cost(struct sim *sm, struct comm *c, int op, double bytes)
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
                *cache_slot(sm->cache, sm->cache_cap, &old[j].k) = old[j];
        free(old);
    }
    ent = cache_slot(sm->cache, sm->cache_cap, &k);
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

static void ev_latency_done(struct engine *e, void *ctx, int64_t data);

/* Start the operation at the head of communicator ci: every member has arrived. */
static void begin_op(struct sim *sm, int ci)
{
    struct comm *c = &sm->comms[ci];
    struct inst *in = inst_at(c, c->qbase);
    struct cost_ent *ent;
    int i;

    c->active = 1;
    ent = lookup_cost(sm, c, in->op, in->bytes);
    c->cost = ent->c;
    c->sm_frac = ent->sm_frac;
    notes_coll(sm, c, in, ent);
    for (i = 0; i < c->nsim; i++) {
        int ri = c->members[i];
        struct srank *r = &sm->r[ri];
        int ti = c->qtask[(c->qbase & (c->qcap - 1)) * c->nsim + i];
        exec_account(sm, ri);
        r->inflight[in->tcat]++;
        r->start_of[r->prog->stream_of[ti]] = sm->eng.now;
        if (c->sm_frac > 0)
            exec_sm_change(sm, ri, c->sm_frac);
        sm->res->ranks[ri].comm_bytes[c->kind] += c->cost.bus_bytes;
    }
    if (c->cost.bus_bytes <= 0 || c->cost.bus_bw_Bps <= 0)
        engine_after(&sm->eng, c->cost.latency, ev_latency_done, sm, ci);
    else
        transfer_coll(sm, ci, c->cost.latency);
}

/* An operation without payload ends after its latency. */
static void ev_latency_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;

    (void)e;
    comms_finish(sm, (int)data);
    exec_drain(sm);
}

void comms_finish(struct sim *sm, int ci)
{
    struct comm *c = &sm->comms[ci];
    struct inst *in = inst_at(c, c->qbase);
    int i;

    for (i = 0; i < c->nsim; i++) {
        int ri = c->members[i];
        int ti = c->qtask[(c->qbase & (c->qcap - 1)) * c->nsim + i];
        exec_account(sm, ri);
        sm->r[ri].inflight[in->tcat]--;
        if (c->sm_frac > 0)
            exec_sm_change(sm, ri, -c->sm_frac);
        exec_complete(sm, ri, ti);
    }
    memset(in, 0, sizeof(*in));
    c->qbase++;
    c->active = 0;
    if (c->qbase < c->qmax && inst_at(c, c->qbase)->arrived == c->nsim)
        begin_op(sm, ci);
}

void comms_arrive(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    const struct task *t = &r->prog->tasks[ti];
    int slot = slot_of(t);
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
        begin_op(sm, ci);
}
