/*
 * layer.c - one transformer layer's forward and backward as tasks, with the
 * model-parallel communication inside it (see strategy.h).
 *
 * A layer is two parts (attention, MLP), each split into pieces
 * (struct seg_times, pieces.c) between which communication can sit:
 *
 *   norm | [AG] | router | [A2A] | col GEMM | mid | core [CP ring] | row GEMM | [A2A] | [RS/AR] |
 * residual
 *
 * Tensor parallelism (Megatron-LM, SHO19 §3, NAR21 §2.3): an all-reduce after
 * the row-parallel GEMM of each part in forward, and one at the input of the
 * column-parallel GEMM in backward. Sequence parallelism (KOR22 §4.2.2): an
 * all-gather of the sharded norm output before the column GEMM and a
 * reduce-scatter after the row GEMM in forward; in backward the conjugates
 * (all-gather of the output gradient, reduce-scatter of the input gradient)
 * and one more all-gather of the norm output for the column GEMM's weight
 * gradient. Megatron issues the backward communication of the column-parallel
 * GEMM asynchronously (LinearWithGradAccumulationAndAsyncCommunication in
 * megatron/core/tensor_parallel/layers.py): the re-gather overlaps the input
 * gradient GEMM and the reduce-scatter (or all-reduce) of the input gradient
 * overlaps the weight gradient GEMM; the rest is synchronous.
 *
 * With tp_comm_overlap (Transformer Engine userbuffers, as Megatron's
 * --tp-comm-overlap) the forward all-gather is pipelined with the column GEMM
 * and the reduce-scatter with the row GEMM, in tp chunks: only one chunk of
 * the communication stays exposed (modelled as two pieces: 1/tp exposed,
 * (tp - 1)/tp overlapped); the backward all-gather is pipelined with the row
 * GEMM's input gradient the same way.
 *
 * Context parallelism (Megatron context_parallel.md, MEG): attention splits
 * into cp steps; step i works on the K/V chunk received in step i - 1 while
 * the next chunk travels around the ring (point-to-point with the next CP
 * rank). With the load-balanced causal split (two chunks per rank, zig-zag)
 * every step costs 1/cp of the rank's attention. Backward passes K/V and the
 * partial dK/dV together (twice the bytes per step) and returns the last dK/dV
 * to its owner after the final step.
 *
 * Expert parallelism (Megatron moe/README.md, MEG): after the router, an
 * all-to-all dispatches the tokens to the ranks holding their experts, and an
 * all-to-all combines them back after the expert GEMMs; backward does both in
 * reverse. The expert GEMMs take moe_imbalance times their uniform-routing
 * time: the busiest rank sets the pace of the all-to-all that follows.
 *
 * Zero-bubble schedules split a backward into a B pass (input gradients) and a
 * W pass (the projections' weight gradients), as sail-sg's WeightGradStore
 * does (ZB; zero-bubble-pipeline-parallelism commits 95212f70, a84d634a): the B
 * pass's reduction of the column GEMM's input gradient has no weight gradient
 * left to overlap and blocks, and under sequence parallelism the W pass
 * re-gathers, blocking, what the B pass kept sharded.
 */
#include <assert.h>
#include <string.h>

#include "strategy/strategy.h"

/* ---- the emitter: compute merged between communication points ------------------------------ */

#define MAX_DEPS 4

struct em {
    struct build *b;
    int tcat; /* enum time_cat of the compute */
    int mb, layer;
    sim_time pend;     /* compute not yet emitted, ns */
    const char *label; /* label of the pending compute: its longest piece */
    sim_time longest;  /* duration of that piece, ns */
    int dep[MAX_DEPS]; /* what the next task waits for */
    int ndep;
    int first, last; /* first and last compute tasks emitted */
};

static void em_init(struct em *e, struct build *b, int tcat, int mb, int layer, int prev, int dep)
{
    memset(e, 0, sizeof(*e));
    e->b = b;
    e->tcat = tcat;
    e->mb = mb;
    e->layer = layer;
    e->first = e->last = -1;
    if (prev >= 0)
        e->dep[e->ndep++] = prev;
    if (dep >= 0)
        e->dep[e->ndep++] = dep;
}

static void em_wait(struct em *e, int t)
{
    int i;

    if (t < 0)
        return;
    for (i = 0; i < e->ndep; i++)
        if (e->dep[i] == t)
            return;
    assert(e->ndep < MAX_DEPS);
    e->dep[e->ndep++] = t;
}

/* Make task t wait for everything pending, then make it the only thing pending. */
static void em_chain(struct em *e, int t)
{
    int i;

    for (i = 0; i < e->ndep; i++)
        prog_dep(e->b->p, t, e->dep[i]);
    e->ndep = 0;
    e->dep[e->ndep++] = t;
}

static void em_add(struct em *e, sim_time dur, const char *label)
{
    if (dur <= 0)
        return;
    if (e->pend == 0 || dur > e->longest) {
        e->label = label;
        e->longest = dur;
    }
    e->pend = time_add(e->pend, dur);
}

/* Emit the pending compute as one task; returns it, or -1 when nothing is pending. */
static int em_flush(struct em *e)
{
    struct prog *p = e->b->p;
    int t;

    if (e->pend <= 0)
        return -1;
    t = prog_compute(p, ST_COMPUTE, e->tcat, e->pend, prog_label(p, e->label, e->layer), e->mb);
    em_chain(e, t);
    if (e->first < 0)
        e->first = t;
    e->last = t;
    e->pend = 0;
    e->longest = 0;
    return t;
}

/* A compute task of `dur` now, waiting for what is pending plus `also`. */
static int em_compute(struct em *e, sim_time dur, const char *label, int also)
{
    em_flush(e);
    em_wait(e, also);
    em_add(e, dur > 0 ? dur : 0, label);
    if (e->pend == 0)
        return -1;
    return em_flush(e);
}

static const char *coll_label(int comm, int op)
{
    if (comm == COMM_CP)
        return "CP ring step L%d";
    if (comm == COMM_EP)
        return "EP all-to-all L%d";
    if (op == COLL_SEND_RECV)
        return "TP ring exchange L%d";
    switch (op) {
    case COLL_ALL_GATHER:
        return "TP all-gather L%d";
    case COLL_REDUCE_SCATTER:
        return "TP reduce-scatter L%d";
    default:
        return "TP all-reduce L%d";
    }
}

/* A communication task after the pending compute; not chained (the caller decides). */
static int em_comm(struct em *e, int comm, int op, double bytes)
{
    struct prog *p = e->b->p;
    static const int stream[COMM_KIND_COUNT] = {
        [COMM_TP] = ST_TP, [COMM_CP] = ST_CP, [COMM_EP] = ST_EP
    };
    static const int tcat[COMM_KIND_COUNT] = {
        [COMM_TP] = TC_COMM_TP, [COMM_CP] = TC_COMM_CP, [COMM_EP] = TC_COMM_EP
    };
    int t, i;

    em_flush(e);
    t = prog_coll(p, stream[comm], tcat[comm], comm, op, bytes,
                  prog_label(p, coll_label(comm, op), e->layer), e->mb);
    for (i = 0; i < e->ndep; i++)
        prog_dep(p, t, e->dep[i]);
    return t;
}

/*
 * The task the next step waits for: the one pending dependency, or a mark (labelled
 * `label`) joining several (the last reduction and the last GEMM).
 */
static int em_result(struct em *e, const char *label)
{
    struct prog *p = e->b->p;
    int j;

    if (e->ndep == 1)
        return e->dep[0];
    j = prog_mark(p, ST_COMPUTE, prog_label(p, label, e->layer));
    em_chain(e, j);
    return j;
}

/* A blocking collective: everything after waits for it. */
static void em_sync(struct em *e, int comm, int op, double bytes)
{
    int t = em_comm(e, comm, op, bytes);

    e->ndep = 0;
    e->dep[e->ndep++] = t;
}

/*
 * The host's issue of a layer in one pass (workload_host.c), as a task on the rank's host
 * stream: the layer's first kernel waits for it. The host stream runs its tasks in program
 * order and waits for nothing else, so the CPU runs ahead of the GPU until a sync point
 * (emit_optimizer()) and a host-bound layer delays the GPU by what the host has not issued.
 */
static void em_host(struct em *e, const struct layer_cost *lc, int pass, const char *label)
{
    struct prog *p = e->b->p;
    sim_time dur = 0;

    for (int part = 0; part < PART_COUNT; part++)
        dur = time_add(dur, lc->host[pass][part]);
    if (dur > 0)
        em_wait(e, prog_host(p, TC_HOST, dur, prog_label(p, label, e->layer), e->mb));
}

/* ---- layer context ------------------------------------------------------------------------ */

struct lctx {
    const struct layer_cost *lc;
    const struct part_split *ps; /* [PART_COUNT] */
    bool tp, sp, overlap, cp, ep;
    int cp_method; /* enum cp_method */
    bool async;    /* backward TP reduction of the input gradient overlaps the weight gradient */
    int ntp, ncp;
    int ar_op; /* TP op after the row GEMM: all-reduce or reduce-scatter */
    double tp_bytes, kv_bytes, a2a_bytes, imb;
};

static void lctx_init(struct lctx *x, const struct build *b, const struct unit *u)
{
    const struct parallelism *par = &b->s->par;

    x->lc = strategy_unit_cost(b, u);
    x->ps = b->split[strategy_unit_variant(u)];
    x->ntp = par->tp;
    x->ncp = par->cp;
    x->tp = par->tp > 1;
    x->sp = x->tp && par->sequence_parallel;
    x->overlap = x->tp && par->tp_comm_overlap;
    x->async = x->sp || par->tp_async_allreduce;
    x->cp = par->cp > 1;
    x->cp_method = par->cp_method;
    x->ep = u->moe && par->ep > 1;
    x->ar_op = x->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
    x->tp_bytes = b->tp_bytes;
    x->kv_bytes = b->kv_bytes;
    x->a2a_bytes = b->a2a_bytes;
    x->imb = u->moe ? b->moe_imbalance : 1.0;
}

static sim_time scaled(sim_time t, double f)
{
    return f > 1 ? time_scale(t, f) : t;
}

/* A piece's input gradient plus, when wk is 1, its weight gradient (wk is 0 or 1). */
static sim_time with_wgrad(sim_time dgrad, sim_time wgrad, sim_time wk)
{
    return time_add(dgrad, time_mul(wgrad, wk));
}

/* Bytes each rank passes around a ring-exchange all-gather or reduce-scatter. */
static double ring_bytes(const struct lctx *x)
{
    return x->tp_bytes * (x->ntp - 1) / x->ntp;
}

/*
 * A GEMM of `dur` pipelined with a TP collective of `bytes` (tp_comm_overlap):
 * Transformer Engine's userbuffers split the GEMM into tp chunks and move the
 * collective as tp - 1 ring-exchange steps of bytes/tp between neighbours
 * (point-to-point over copy engines), each step alongside one GEMM chunk.
 * With t the exchange of (tp - 1)/tp of the bytes, the pipeline lasts
 * max(dur, t + dur/tp) for an all-gather feeding the GEMM (chunk i needs step
 * i; chunk 0 is local) and about max(dur, dur/tp + t) for a reduce-scatter
 * draining it (step i follows chunk i). Three tasks give exactly that: the
 * exchange beside the first tp - 1 chunks and the last chunk after both
 * (`before`), or the first chunk, then the exchange beside the rest.
 */
static void overlapped_gemm(struct em *e, const struct lctx *x, sim_time dur, const char *label,
                            bool before)
{
    double n = x->ntp;
    sim_time small = (sim_time)((double)dur / n), big = dur - small;
    int xchg, g;

    em_flush(e);
    if (before) {
        xchg = em_comm(e, COMM_TP, COLL_SEND_RECV, ring_bytes(x));
        em_compute(e, big, label, -1);
        em_compute(e, small, label, xchg);
        return;
    }
    em_compute(e, small, label, -1);
    xchg = em_comm(e, COMM_TP, COLL_SEND_RECV, ring_bytes(x));
    g = em_compute(e, big, label, -1);
    e->ndep = 0;
    em_wait(e, xchg);
    em_wait(e, g);
}

/*
 * The attention core; with cp > 1 its cp steps and the K/V exchanges around them
 * (parallelism.cp_method). p2p, Transformer Engine's ring: step i works on the chunk received
 * in step i - 1 while the next one travels to the next CP rank; backward passes K/V and the
 * partial dK/dV together (twice the bytes) and returns the last dK/dV to its owner.
 * torchtitan (torch/distributed/tensor/experimental/_attention.py, pytorch f2127dbd):
 * alltoall (`_AllToAllRotater`) is the same ring as permute_tensor, an all_to_all with one
 * peer per rank; allgather (`_AllGatherRotater`, its default) all-gathers every rank's K/V
 * once, in the first exchange_buffers() while the local sub-SDPA runs, and the later steps
 * take their chunk from that buffer (next_buffer() waits for the gather): the gather overlaps
 * 1/cp of the attention, and the buffer, cp x this rank's K/V (MC_WORKSPACE), lives until the
 * last step. Backward rotates K/V the same way again and sends the dK/dV partial sums round a
 * second ring (`dkv_rotater`, always all-to-all) in fp32 (`_cp_options.convert_to_f32`
 * True), 2 x the K/V bytes a step, the last ones home at the end.
 */
static void core(struct em *e, const struct lctx *x, sim_time dur, bool backward)
{
    const char *label = backward ? "attn core bwd L%d" : "attn core L%d";
    struct prog *p = e->b->p;
    bool gather = x->cp_method == CP_ALLGATHER;
    double dkv = backward ? (x->cp_method == CP_P2P ? 1 : 2) * x->kv_bytes : 0;
    double hop = (gather ? 0 : x->kv_bytes) + dkv, buffer = x->kv_bytes * x->ncp;
    sim_time step;
    int i, ring = -1, ag = -1, last = -1;

    if (!x->cp || dur <= 0) {
        em_add(e, dur, label);
        return;
    }
    step = dur / x->ncp;
    em_flush(e);
    if (gather) {
        ag = em_comm(e, COMM_CP, COLL_ALL_GATHER, buffer);
        task_mem_start(&p->tasks[ag], MC_WORKSPACE, bytes_i64(buffer));
    }
    for (i = 0; i < x->ncp; i++) {
        sim_time d = i == x->ncp - 1 ? dur - step * (x->ncp - 1) : step;
        int next = -1, t;

        if (hop <= 0 && i > 0) { /* all-gathered K/V and nothing to send: the rest at once */
            last = em_compute(e, dur - step, label, ag);
            break;
        }
        /* The next chunk travels while this one is computed (double buffering). */
        if (i < x->ncp - 1 && hop > 0)
            next = em_comm(e, COMM_CP, COLL_SEND_RECV, hop);
        if (i == 1 && ag >= 0)
            em_wait(e, ring); /* the gathered K/V and the previous hop */
        t = em_compute(e, d, label, i == 1 && ag >= 0 ? ag : ring);
        last = t >= 0 ? t : last;
        ring = next;
    }
    if (gather)
        task_mem_end(&p->tasks[last >= 0 ? last : ag], MC_WORKSPACE, -bytes_i64(buffer));
    if (backward) /* the last partial dK/dV goes home */
        em_sync(e, COMM_CP, COLL_SEND_RECV, dkv);
}

/* ---- forward ------------------------------------------------------------------------------ */

/*
 * One part forward. Compute between two blocking collectives runs back to
 * back, so where the part ends with one, its residual and the next part's
 * norm (`fold`) are emitted before it: the same timeline with fewer tasks.
 * Returns true when `fold` was emitted (the next part skips its norm).
 */
static bool part_forward(struct em *e, const struct lctx *x, int part, bool skip_pre, sim_time fold)
{
    const struct seg_times *f = &x->ps[part].fwd;
    bool attn = part == PART_ATTN, moe_a2a = x->ep && !attn;
    bool closing = !(x->overlap && !moe_a2a) && (x->tp || moe_a2a);
    const char *label = attn ? "attn fwd L%d" : "mlp fwd L%d";
    double imb = attn ? 1.0 : x->imb;

    if (!skip_pre)
        em_add(e, f->pre, attn ? "attn norm L%d" : "mlp norm L%d");
    if (x->sp && !x->overlap)
        em_sync(e, COMM_TP, COLL_ALL_GATHER, x->tp_bytes);
    em_add(e, f->gate, "router L%d");
    if (moe_a2a)
        em_sync(e, COMM_EP, COLL_ALL_TO_ALL, x->a2a_bytes);
    if (x->sp && x->overlap)
        overlapped_gemm(e, x, scaled(f->col, imb), label, true);
    else
        em_add(e, scaled(f->col, imb), label);
    em_add(e, scaled(f->mid, imb), label);
    core(e, x, f->core, false);
    if (!closing) {
        if (x->overlap && !moe_a2a)
            overlapped_gemm(e, x, f->row, label, false);
        else
            em_add(e, scaled(f->row, imb), label);
        em_add(e, f->post, attn ? "attn residual L%d" : "mlp residual L%d");
        return false;
    }
    em_add(e, scaled(f->row, imb), label);
    em_add(e, f->post, attn ? "attn residual L%d" : "mlp residual L%d");
    em_add(e, fold, "attn norm L%d");
    if (moe_a2a)
        em_sync(e, COMM_EP, COLL_ALL_TO_ALL, x->a2a_bytes);
    if (x->tp)
        em_sync(e, COMM_TP, x->ar_op, x->tp_bytes);
    return true;
}

/* The next unit of the same chunk in direction dir (+1 forward), when it is a layer; else NULL. */
static const struct unit *next_layer(const struct build *b, int ui, int dir)
{
    const struct unit *u = &b->units[ui];
    int n = ui + dir;

    if (n < 0 || n >= b->nunits || b->units[n].chunk != u->chunk || b->units[n].kind != UNIT_LAYER)
        return NULL;
    return &b->units[n];
}

/* ---- stamping ----------------------------------------------------------------------------- */

/*
 * A layer's tasks depend only on the values in its stamp key: the layer's kind
 * (dense or MoE, which picks its durations and collectives), the folding state
 * and what comes next, and which of prev and dep exist (and whether they are the
 * same task). The first emission of each key is recorded and the others are
 * stamped from it (prog.h), with their own layer number in the labels and their
 * own micro-batch: the same program at a quarter of the cost.
 */
enum {
    KEY_FWD = 1,
    KEY_BWD = 2
};

static uint64_t stamp_key(int which, int a, int b, int c, int d, int e, int prev, int dep)
{
    uint64_t k = (uint64_t)which;

    k = k << 8 | (uint8_t)a;
    k = k << 8 | (uint8_t)b;
    k = k << 8 | (uint8_t)c;
    k = k << 8 | (uint8_t)d;
    k = k << 8 | (uint8_t)e;
    k = k << 2 | (uint64_t)(prev >= 0) << 1 | (uint64_t)(dep >= 0);
    return k << 1 | (uint64_t)(prev >= 0 && prev == dep);
}

/* The emission of key `key` by `emit` (which returns aux), stamped when it was recorded before. */
static int stamped(struct build *b, uint64_t key, int layer, int mb, int prev, int dep, int *out,
                   int (*emit)(struct build *b, const void *arg, int *out), const void *arg)
{
    struct prog *p = b->p;
    int ext[PROG_SEG_EXT] = { prev, dep }, seg = prog_seg_find(p, key), aux;

    if (seg >= 0)
        return prog_seg_stamp(p, seg, ext, layer, mb, out, PROG_SEG_OUT);
    prog_seg_begin(p, key, ext, layer, mb);
    aux = emit(b, arg, out);
    prog_seg_end(p, out, PROG_SEG_OUT, aux);
    return aux;
}

/* ---- forward of a layer ------------------------------------------------------------------- */

struct fwd_args {
    int ui, mb, tcat, prev, dep;
    bool ckpt;             /* the layer is checkpointed (full recompute): forward under no_grad */
    bool host;             /* the host's issue of the pass is a task (build.h host_hidden) */
    const struct unit *nx; /* the next layer of the chunk (forward only), or NULL */
    bool skip;             /* its norm was emitted with the layer before */
};

/* out[] = { result, first, last }; returns whether the next layer's norm was folded in. */
static int emit_forward(struct build *b, const void *arg, int *out)
{
    const struct fwd_args *a = arg;
    const struct unit *u = &b->units[a->ui];
    sim_time next_pre = a->nx ? b->split[strategy_unit_variant(a->nx)][PART_ATTN].fwd.pre : 0;
    struct lctx x;
    struct em e;
    bool folded;

    lctx_init(&x, b, u);
    em_init(&e, b, a->tcat, a->mb, u->layer, a->prev, a->dep);
    if (a->host && a->tcat == TC_RECOMPUTE)
        em_host(&e, x.lc, HOST_RECOMPUTE, "host: recompute L%d");
    else if (a->host)
        em_host(&e, x.lc, a->ckpt ? HOST_FWD_CKPT : HOST_FWD, "host: fwd L%d");
    folded = part_forward(&e, &x, PART_ATTN, a->skip, x.ps[PART_MLP].fwd.pre);
    folded = part_forward(&e, &x, PART_MLP, folded, next_pre);
    em_flush(&e);
    out[1] = e.first;
    out[2] = e.last;
    out[0] = em_result(&e, "layer fwd done L%d");
    return folded;
}

int layer_forward(struct build *b, int ui, int mb, int tcat, int prev, int dep, int *first,
                  int *last)
{
    const struct unit *u = &b->units[ui];
    struct fwd_args a = { ui, mb, tcat, prev, dep, false, true, NULL, false };
    int out[PROG_SEG_OUT], folded;

    /* with host_hidden only a run's first layer (forward, or the first backwarded) */
    a.host = !b->host_hidden || !next_layer(b, ui, tcat == TC_RECOMPUTE ? 1 : -1);
    if (tcat == TC_FWD) {
        a.nx = next_layer(b, ui, 1);
        a.skip = b->pre_folded;
        a.ckpt = strategy_unit_recompute(b, ui) == RC_FULL;
    }
    folded =
        stamped(b,
                stamp_key(KEY_FWD, tcat | a.ckpt << 6 | a.host << 5, strategy_unit_variant(u),
                          a.skip, a.nx ? 1 + strategy_unit_variant(a.nx) : 0, mb < 0, prev, dep),
                u->layer, mb, prev, dep, out, emit_forward, &a);
    if (tcat == TC_FWD)
        b->pre_folded = folded && a.nx != NULL;
    *first = out[1];
    *last = out[2];
    return out[0];
}

/* ---- backward ----------------------------------------------------------------------------- */

/*
 * The column-parallel GEMM's backward: input gradient, then the reduction of
 * that gradient (async) alongside the weight gradient. In a zero-bubble B pass
 * (`split`: the weight gradient deferred to W) sail-sg's layers.py
 * (zero-bubble-pipeline-parallelism @39f2c186,
 * LinearWithGradAccumulationAndAsyncCommunication.backward) leaves the input's
 * sequence-parallel re-gather to the W pass and issues the reduction blocking
 * (async_op=wgrad_compute): no weight-gradient GEMM follows to hide it.
 */
static void col_backward(struct em *e, const struct lctx *x, sim_time dgrad, sim_time wgrad,
                         const char *label, bool split)
{
    int regather = -1, red, w, op = x->overlap ? COLL_SEND_RECV : x->ar_op;
    double bytes = x->overlap ? ring_bytes(x) : x->tp_bytes;

    if (!x->tp) {
        em_add(e, dgrad + wgrad, label);
        return;
    }
    if (!x->async || split) {
        /* Megatron-LM before --async-tensor-model-parallel-allreduce (2021): autograd runs the
         * linear's whole backward, then _CopyToModelParallelRegion.backward all-reduces the
         * input gradient synchronously (megatron/mpu/mappings.py). */
        em_add(e, dgrad + wgrad, label);
        em_sync(e, COMM_TP, x->async ? op : x->ar_op, x->async ? bytes : x->tp_bytes);
        return;
    }
    /* With tp_comm_overlap both are userbuffers bulk transfers (ring exchange) instead of NCCL. */
    if (x->sp) /* re-gather the sharded norm output for the weight gradient, during dgrad */
        regather = x->overlap ? em_comm(e, COMM_TP, COLL_SEND_RECV, ring_bytes(x))
                              : em_comm(e, COMM_TP, COLL_ALL_GATHER, x->tp_bytes);
    em_add(e, dgrad, label);
    em_flush(e);
    red = em_comm(e, COMM_TP, op, bytes);
    if (regather >= 0)
        prog_dep(e->b->p, red, regather);
    w = em_compute(e, wgrad, label, regather);
    e->ndep = 0;
    em_wait(e, red);
    em_wait(e, w);
}

/*
 * One part backward; `weights` false is a zero-bubble B pass: the projections'
 * weight gradients go to the W pass (part_weights()), the rest (norms, the MoE
 * router: not the captured linear layers) stays here.
 */
static void part_backward(struct em *e, const struct lctx *x, int part, bool weights,
                          bool skip_post)
{
    const struct part_split *ps = &x->ps[part];
    const struct seg_times *d = &ps->dgrad, *w = &ps->wgrad;
    bool attn = part == PART_ATTN;
    const char *label = attn ? "attn bwd L%d" : "mlp bwd L%d";
    double imb = attn ? 1.0 : x->imb;
    sim_time wk = weights ? 1 : 0; /* multiplies the projections' weight gradients in or out */

    if (!skip_post)
        em_add(e, time_add(d->post, w->post),
               attn ? "attn residual bwd L%d" : "mlp residual bwd L%d");
    if (x->sp && x->overlap && !x->ep) {
        overlapped_gemm(e, x, d->row, label, true);
        em_add(e, time_mul(w->row, wk), label);
    } else {
        if (x->tp && x->sp)
            em_sync(e, COMM_TP, COLL_ALL_GATHER, x->tp_bytes);
        if (x->ep && !attn)
            em_sync(e, COMM_EP, COLL_ALL_TO_ALL, x->a2a_bytes);
        em_add(e, scaled(with_wgrad(d->row, w->row, wk), imb), label);
    }
    em_add(e, scaled(with_wgrad(d->mid, w->mid, wk), imb), label);
    core(e, x, time_add(d->core, w->core), true);
    if (x->ep && !attn) {
        em_add(e, scaled(with_wgrad(d->col, w->col, wk), imb), label);
        em_sync(e, COMM_EP, COLL_ALL_TO_ALL, x->a2a_bytes);
        em_add(e, time_add(d->gate, w->gate), label);
        if (x->tp)
            em_sync(e, COMM_TP, x->ar_op, x->tp_bytes);
    } else {
        em_add(e, time_add(d->gate, w->gate), label);
        col_backward(e, x, scaled(d->col, imb), scaled(time_mul(w->col, wk), imb), label, !weights);
    }
    em_add(e, time_add(d->pre, w->pre), attn ? "attn norm bwd L%d" : "mlp norm bwd L%d");
}

/*
 * One part's zero-bubble W pass: the weight-gradient GEMMs sail-sg's WeightGradStore
 * deferred, in the order the B pass queued them (row-parallel first). Under sequence
 * parallelism each first re-gathers, blocking, the tensor it kept sharded (commit a84d634a,
 * layers.py execute_w_pass: the row-parallel GEMM's output gradient under
 * reshard_for_sequence_parallel, the column-parallel GEMM's input in pre_process); expert
 * GEMMs keep their dispatched tokens and need no collective.
 */
static void part_weights(struct em *e, const struct lctx *x, int part)
{
    const struct seg_times *w = &x->ps[part].wgrad;
    bool ep = x->ep && part == PART_MLP, gather = x->sp && !ep;
    double imb = part == PART_MLP ? x->imb : 1.0;
    sim_time row = scaled(time_add(w->row, w->mid), imb), col = scaled(w->col, imb);
    const char *label = part == PART_ATTN ? "wgrad attn L%d" : "wgrad mlp L%d";

    if (gather && row > 0)
        em_sync(e, COMM_TP, COLL_ALL_GATHER, x->tp_bytes);
    em_add(e, row, label);
    if (gather && col > 0)
        em_sync(e, COMM_TP, COLL_ALL_GATHER, x->tp_bytes);
    em_add(e, col, label);
}

struct bwd_args {
    int ui, mb, mode, prev, dep;
    bool host;             /* the host's issue of the pass is a task */
    const struct unit *nx; /* the layer whose backward comes next in the chunk, or NULL */
    bool fold;             /* its first piece is emitted with this layer */
    bool skip;             /* this layer's first piece was emitted with the layer before */
};

/* out[] = { result, first, last }. */
static int emit_backward(struct build *b, const void *arg, int *out)
{
    const struct bwd_args *a = arg;
    const struct unit *u = &b->units[a->ui], *nx = a->nx;
    int mode = a->mode;
    struct lctx x;
    struct em e;

    lctx_init(&x, b, u);
    em_init(&e, b, TC_BWD, a->mb, u->layer, a->prev, a->dep);
    if (mode != 2 && a->host) /* a zero-bubble W pass runs the weight GEMMs the B pass queued */
        em_host(&e, x.lc, HOST_BWD, "host: bwd L%d");
    if (mode == 2) {
        part_weights(&e, &x, PART_MLP);
        part_weights(&e, &x, PART_ATTN);
    } else {
        part_backward(&e, &x, PART_MLP, mode == 0, a->skip);
        part_backward(&e, &x, PART_ATTN, mode == 0, false);
        if (a->fold) {
            const struct part_split *ns = &b->split[strategy_unit_variant(nx)][PART_MLP];
            em_add(&e, time_add(ns->dgrad.post, ns->wgrad.post), "mlp residual bwd L%d");
        }
    }
    em_flush(&e);
    out[1] = e.first;
    out[2] = e.last;
    out[0] = em_result(&e, "layer bwd done L%d");
    return 0;
}

int layer_backward(struct build *b, int ui, int mb, int mode, int prev, int dep, int *first,
                   int *last)
{
    const struct unit *u = &b->units[ui];
    struct bwd_args a = { ui, mb, mode, prev, dep, true, NULL, false, false };
    int out[PROG_SEG_OUT];

    a.host = !b->host_hidden || !next_layer(b, ui, 1);
    if (mode != 2) {
        /*
         * The next layer's first piece (its MLP residual backward) follows this layer's
         * last one back to back: emitted with it, unless a recomputation comes between.
         */
        const struct unit *nx = next_layer(b, ui, -1);
        enum recompute rc = nx ? strategy_unit_recompute(b, (int)(nx - b->units)) : RC_NONE;
        const struct layer_cost *nlc = nx ? strategy_unit_cost(b, nx) : &b->layer;
        a.nx = nx;
        a.fold = nx && (rc == RC_NONE || (rc == RC_SELECTIVE && nlc->recompute_selective == 0));
        a.skip = b->post_folded;
    }
    stamped(b,
            stamp_key(KEY_BWD, mode | a.host << 4, strategy_unit_variant(u), a.skip,
                      a.fold ? 1 + strategy_unit_variant(a.nx) : 0, mb < 0, prev, dep),
            u->layer, mb, prev, dep, out, emit_backward, &a);
    if (mode != 2)
        b->post_folded = a.fold;
    *first = out[1];
    *last = out[2];
    return out[0];
}
