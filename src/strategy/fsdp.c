/*
 * fsdp.c - PyTorch FullyShardedDataParallel (torch/distributed/fsdp,
 * _runtime_utils.py, _limiter_utils.py, api.py) and FSDP2's per-parameter
 * fully_shard (torch/distributed/_composable/fsdp, _fsdp_param_group.py,
 * _fsdp_collectives.py).
 *
 * Units: one FSDP unit per transformer block (the auto-wrap policy of
 * llm-foundry and torchtitan); the root unit holds the rest (embedding, final
 * norm, LM head). ShardingStrategy (formulas.md §3.3, api.py):
 *   FULL_SHARD     all-gather before forward, reshard (free) after forward,
 *                  all-gather again before backward, reshard after backward,
 *                  reduce-scatter the unit's gradient;
 *   SHARD_GRAD_OP  no reshard after forward: the unit stays unsharded from
 *                  its forward to its backward;
 *   HYBRID_SHARD   FULL_SHARD inside the shard group (data-parallel peers of
 *                  one node), then all-reduce of the sharded gradient across
 *                  the replicate group (_reduce_grad: dist.all_reduce on
 *                  _inter_node_pg);
 *   NO_SHARD       replicated; each unit's gradient all-reduced.
 * The root never reshards after forward ("_post_forward_reshard": not for
 * the root, whose parameters backward needs first). Gradients are reduced in
 * every micro-batch (no no_sync: llm-foundry's Composer applies no_sync only
 * to DDP; FSDP's docstring warns no_sync keeps unsharded gradients).
 *
 * Ordering (FSDP1): every collective of a process group runs on its NCCL
 * stream in issue order (dp_internal.h). backward_prefetch BACKWARD_PRE issues the next
 * unit's all-gather in the pre-backward hook, before the current gradient
 * computation and its reduce-scatter; BACKWARD_POST issues it in the
 * post-backward hook, after the gradient computation but before the
 * reduce-scatter; without prefetch the all-gather is issued when backward
 * reaches the unit, behind the previous unit's reduce-scatter, so nothing
 * overlaps. Forward all-gathers depend on no compute (the CPU issues them
 * ahead: "implicit forward prefetch"), forward_prefetch only moves the issue
 * earlier. limit_all_gathers: before an all-gather the CPU waits for the
 * oldest reshard's free event once two are queued (_FreeEventQueue,
 * _max_num_inflight_all_gathers = 2), so at most two units are unsharded;
 * without it the all-gathers run ahead as fast as the network allows.
 *
 * FSDP2 (fsdp.version 2; torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py, read at
 * 010ae4a): per-parameter sharding, so each all-gather is copied in on its own stream first
 * (foreach_all_gather: the fp32 shards cast into a flat param_dtype buffer by _foreach_copy_,
 * then copied into the all-gather input by all_gather_copy_in: 4 + 3 x param_dtype bytes per
 * local element) and copied out into the parameters on the compute stream
 * (foreach_all_gather_copy_out's split_with_sizes_copy, a read and write of the unit); its
 * gradients are copied into the reduce-scatter input at reduce_dtype on the compute stream
 * (foreach_reduce_scatter_copy_in's chunk_cat runs before the reduce-scatter stream waits for
 * the current one) and, for fp32 and bf16, averaged by NCCL itself (ReduceOp.AVG,
 * _get_gradient_divide_factors: no divide kernels); forward all-gathers wait for the copy-out
 * two units back (all_gather_state event), backward prefetches one unit ahead after the
 * current copy-out; reshard_after_forward as configured, each resharded unit gathered again
 * for backward; no CPU rate limiter.
 *
 * Memory on the timeline: an all-gather allocates the unit's unsharded
 * parameters (param_dtype) when it starts, the reshard frees them; the
 * unsharded gradient of a unit lives from its backward until its
 * reduce-scatter ends. Offload (CPUOffload(offload_params=True)): each shard
 * is copied to the device before its all-gather and the sharded fp32 gradient
 * to the host after its reduction; the optimizer steps on the CPU.
 *
 * What reshards and which group reduces are stated once in rules.c, which the closed-form
 * estimate (whatif/) reads too.
 */
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "strategy/dp_internal.h"
#include "model/memory.h"

struct group {
    double gather_bytes; /* unsharded parameters at param_dtype, bytes */
    double grad_elems;   /* trainable elements (gradients reduced) */
    bool accumulating;   /* pipelined: the unsharded gradient accumulator exists */
    bool root;           /* the root unit (embedding + head) */
    bool avail;          /* unsharded */
    int ready;           /* task after which the unit is usable, -1 = nothing to wait for */
    int agout;           /* FSDP2: all-gather output not yet copied out, its AG task, -1 */
};

struct fsdp {
    enum sharding mode;
    int version;                 /* 1 or 2 */
    bool reshard_fwd;            /* free the unsharded parameters after forward */
    bool pipelined;              /* FSDP2 under pipelining: reduce once, after the last backward */
    struct dp_pg shard;          /* the group that shards (all DP peers, or the HSDP shard group) */
    struct dp_pg repl;           /* HSDP replicate group */
    double pbytes, rbytes;       /* param_dtype and reduce_dtype bytes */
    double params;               /* trainable elements on this rank */
    int *group_of;               /* per build unit: its FSDP unit */
    bool *fwd_first, *bwd_first; /* per build unit: first of its FSDP unit in forward / backward */
    struct group *g;             /* FSDP units, root first */
    int ng;
    int *freeq; /* limiter: queued free events (reshard marks), FIFO */
    int nfree, headq;
    int copyout[2];   /* FSDP2: the two most recent forward copy-outs, oldest first */
    int last_copyout; /* FSDP2: the most recent copy-out */
    int last_red;     /* last gradient reduction (or its copy to the host) */
};

static bool sharded(const struct fsdp *f)
{
    return f->mode != SHARD_FSDP_NO_SHARD && f->shard.size > 1;
}

/* ---- units -------------------------------------------------------------------------------- */

static void make_groups(struct build *b, struct fsdp *f)
{
    int i, root = -1;

    f->group_of = xcalloc((size_t)b->nunits, sizeof(int));
    f->g = xcalloc((size_t)b->nunits + 1, sizeof(*f->g));
    for (i = 0; i < b->nunits; i++) {
        if (b->units[i].kind != UNIT_LAYER && root < 0) {
            root = f->ng++;
            f->g[root].root = true;
        }
        f->group_of[i] = b->units[i].kind != UNIT_LAYER ? root : f->ng++;
    }
    /* Root first: its forward starts before any block's. */
    if (root > 0) {
        struct group r = f->g[root];
        memmove(&f->g[1], &f->g[0], sizeof(*f->g) * (size_t)root);
        f->g[0] = r;
        for (i = 0; i < b->nunits; i++)
            f->group_of[i] = f->group_of[i] == root ? 0 : f->group_of[i] + (f->group_of[i] < root);
    }
    for (i = 0; i < b->nunits; i++) {
        struct group *g = &f->g[f->group_of[i]];
        g->gather_bytes += dp_unit_gather_bytes(b, i, f->pbytes);
        g->grad_elems += dp_unit_grad_elems(b, i);
    }
    for (i = 0; i < f->ng; i++) {
        f->g[i].ready = -1;
        f->g[i].agout = -1;
        f->params += f->g[i].grad_elems;
    }
}

/* Mark each build unit that comes first in its FSDP unit in forward order and in backward order. */
static void mark_edges(const struct build *b, struct fsdp *f)
{
    bool *seen = xcalloc((size_t)f->ng + 1, sizeof(bool));
    int i;

    f->fwd_first = xcalloc((size_t)b->nunits, sizeof(bool));
    f->bwd_first = xcalloc((size_t)b->nunits, sizeof(bool));
    for (i = 0; i < b->nunits; i++) {
        f->fwd_first[i] = !seen[f->group_of[i]];
        seen[f->group_of[i]] = true;
    }
    memset(seen, 0, sizeof(bool) * ((size_t)f->ng + 1));
    for (i = b->nunits - 1; i >= 0; i--) {
        f->bwd_first[i] = !seen[f->group_of[i]];
        seen[f->group_of[i]] = true;
    }
    free(seen);
}

/* The group of the next unit after ui in direction dir whose group differs, or -1. */
static int next_group(const struct build *b, const struct fsdp *f, int ui, int dir)
{
    int i;

    for (i = ui + dir; i >= 0 && i < b->nunits; i += dir)
        if (f->group_of[i] != f->group_of[ui])
            return f->group_of[i];
    return -1;
}

static void fsdp_init(struct build *b)
{
    const struct scenario *s = b->s;
    struct fsdp *f = xcalloc(1, sizeof(*f));
    struct shard_factors sf;

    b->dp_state = f;
    f->mode = s->par.sharding;
    f->version = s->fsdp.version;
    f->reshard_fwd = rules_reshard_after_forward(s);
    f->pipelined = rules_fsdp_pipelined(s);
    f->pbytes = dtype_bytes(s->fsdp.param_dtype);
    f->rbytes = dtype_bytes(s->fsdp.reduce_dtype);
    dp_pg_init(&f->shard, b, rules_shard_comm(s));
    dp_pg_init(&f->repl, b, COMM_DP_INTER);
    if (f->mode != SHARD_HSDP)
        f->repl.size = 1;
    f->copyout[0] = f->copyout[1] = f->last_copyout = -1;
    f->last_red = -1;
    make_groups(b, f);
    mark_edges(b, f);
    f->freeq = xcalloc((size_t)(b->m + 1) * (size_t)(f->ng + 1) * 2, sizeof(int));
    memory_shard_factors(s, &sf);
    states_emit_model_states(b, &sf);
}

static void fsdp_release(struct build *b)
{
    struct fsdp *f = b->dp_state;

    if (f) {
        free(f->group_of);
        free(f->fwd_first);
        free(f->bwd_first);
        free(f->g);
        free(f->freeq);
    }
    free(f);
    b->dp_state = NULL;
}

/* ---- unshard and reshard ------------------------------------------------------------------ */

static int limiter_wait(struct build *b, struct fsdp *f)
{
    if (!b->s->fsdp.limit_all_gathers || f->nfree - f->headq < 2)
        return -1;
    return f->freeq[f->headq++];
}

/* FSDP2: copy the all-gather output into the unit's parameters, on the compute stream. */
static int copy_out(struct build *b, struct fsdp *f, int gi, bool forward)
{
    struct group *g = &f->g[gi];
    struct prog *p = b->p;
    sim_time dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, 2 * g->gather_bytes);
    int t = prog_compute(p, ST_COMPUTE, TC_COMM_DP, dur,
                         prog_label(p, "FSDP2 copy-out unit %d", gi), -1);

    prog_dep(p, t, g->agout);
    /* The unsharded parameters appear; the all-gather output dies with the copy. */
    task_mem_start(&p->tasks[t], MC_GATHERED, bytes_i64(g->gather_bytes));
    task_mem_end(&p->tasks[t], MC_GATHERED, -bytes_i64(g->gather_bytes));
    g->agout = -1;
    g->ready = t;
    f->last_copyout = t;
    if (forward) {
        f->copyout[0] = f->copyout[1];
        f->copyout[1] = t;
    }
    return t;
}

/*
 * FSDP2: copy this rank's shards into the all-gather input on the gather stream (fp32 shards
 * cast to param_dtype, then copied in: 4 + 3 x param_dtype bytes per local element; two copies
 * of fp32 without mixed precision). Returns the copy's task.
 */
static int copy_in(struct build *b, struct fsdp *f, int gi, int dep)
{
    struct prog *p = b->p;
    double local = f->g[gi].gather_bytes / f->pbytes / f->shard.size;
    double per = f->pbytes < 4 ? 4 + 3 * f->pbytes : 2 * f->pbytes;
    sim_time dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, per * local);
    int t = prog_compute(p, ST_DP_GATHER, TC_COMM_DP, dur,
                         prog_label(p, "FSDP2 copy-in unit %d", gi), -1);

    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/* Issue the all-gather of group gi if it is sharded; returns its all-gather task or -1. */
static int unshard(struct build *b, struct fsdp *f, int gi, bool forward)
{
    struct group *g;
    int dep, h2d = -1, ag;

    if (gi < 0 || f->g[gi].avail)
        return -1;
    g = &f->g[gi];
    g->avail = true;
    g->ready = -1;
    if (!sharded(f) || g->gather_bytes <= 0)
        return -1;
    if (f->version == 1)
        dep = limiter_wait(b, f);
    else if (forward)
        dep = f->copyout[0]; /* all_gather_state: the copy-out two units back */
    else
        dep = f->last_copyout; /* backward: the all-gather streams wait for each copy-out */
    if (b->s->train.offload == OFFLOAD_PARAMS)
        h2d = offload_copy(b, true, g->gather_bytes / f->pbytes * 4.0 / f->shard.size, dep,
                           "fp32 shard to device", 0);
    if (f->version == 2)
        h2d = copy_in(b, f, gi, h2d >= 0 ? h2d : dep);
    ag = dp_pg_coll(b, &f->shard, ST_DP_GATHER, COLL_ALL_GATHER, g->gather_bytes,
                    "all-gather unit %d", gi, h2d >= 0 ? h2d : dep);
    task_mem_start(&b->p->tasks[ag], MC_GATHERED, bytes_i64(g->gather_bytes));
    if (f->version == 2)
        g->agout = ag;
    else
        g->ready = ag;
    return ag;
}

/* The task the unit's compute must wait for (FSDP2: its copy-out, emitted now if pending). */
static int wait_unshard(struct build *b, struct fsdp *f, int gi, bool forward)
{
    struct group *g = &f->g[gi];

    unshard(b, f, gi, forward);
    if (g->agout >= 0)
        return copy_out(b, f, gi, forward);
    return g->ready;
}

static void reshard(struct build *b, struct fsdp *f, int gi, int after)
{
    struct group *g = &f->g[gi];
    int t;

    if (!g->avail)
        return;
    g->avail = false;
    if (!sharded(f) || g->gather_bytes <= 0)
        return;
    t = dp_mem_mark(b, ST_COMPUTE, after, MC_GATHERED, -g->gather_bytes, "reshard");
    f->freeq[f->nfree++] = t;
}

/* ---- hooks -------------------------------------------------------------------------------- */

static int fsdp_pre_forward(struct build *b, int ui, int mb)
{
    struct fsdp *f = b->dp_state;
    int gi = f->group_of[ui], t;

    (void)mb;
    if (!f->fwd_first[ui])
        return -1;
    t = wait_unshard(b, f, gi, true);
    if (b->s->fsdp.forward_prefetch && f->version == 1)
        unshard(b, f, next_group(b, f, ui, +1), true);
    return t;
}

static void fsdp_post_forward(struct build *b, int ui, int mb, int fwd_task)
{
    struct fsdp *f = b->dp_state;
    int gi = f->group_of[ui];

    (void)mb;
    if (f->reshard_fwd && !f->g[gi].root)
        reshard(b, f, gi, fwd_task);
}

static int fsdp_pre_backward(struct build *b, int ui, int mb)
{
    struct fsdp *f = b->dp_state;
    int gi = f->group_of[ui], t, grads;

    (void)mb;
    if (!f->bwd_first[ui] || f->mode == SHARD_FSDP_NO_SHARD)
        return -1;
    t = wait_unshard(b, f, gi, false);
    /* The unit's unsharded gradient, alive until its reduce-scatter (pipelined: until it is
     * added to the accumulator, which lives from the first backward to the reduce-scatter). */
    grads = dp_mem_mark(b, ST_COMPUTE, t, MC_GRADS, f->g[gi].grad_elems * f->pbytes,
                        "unsharded gradient");
    if (f->pipelined && !f->g[gi].accumulating) {
        f->g[gi].accumulating = true;
        grads = dp_mem_mark(b, ST_COMPUTE, grads, MC_GRADS, f->g[gi].grad_elems * f->rbytes,
                            "unsharded gradient accumulator");
    }
    if (f->version == 2 || b->s->fsdp.backward_prefetch == BWD_PREFETCH_PRE)
        unshard(b, f, next_group(b, f, ui, -1), false);
    return grads;
}

/*
 * FSDP1: autograd assembles the unit's FlatParameter gradient from the
 * gradients of its parameter views (the views come from flat_param.split(),
 * whose backward, split_with_sizes_backward, is a torch.cat): one copy of the
 * unsharded gradient on the compute stream, read and written at param_dtype.
 * Returns the copy's task, or grad_task under FSDP2 (per-parameter sharding
 * has no flat gradient) or without gradients.
 */
static int flat_grad(struct build *b, struct fsdp *f, int gi, int grad_task)
{
    struct group *g = &f->g[gi];
    struct prog *p = b->p;
    sim_time dur;
    int t;

    if (f->version != 1 || g->grad_elems <= 0)
        return grad_task;
    dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, 2 * g->grad_elems * f->pbytes);
    t = prog_compute(p, ST_COMPUTE, TC_BWD, dur, prog_label(p, "FSDP flat gradient unit %d", gi),
                     -1);
    prog_dep(p, t, grad_task);
    return t;
}

/*
 * PyTorch's gradient pre-divide factor for `world` ranks: the largest power of
 * two f with world % f == 0 and world / f > f, doubled from 1
 * (torch/distributed/fsdp/_init_utils.py _get_gradient_predivide_factor).
 */
static double predivide_factor(int world)
{
    double factor = 1;

    while (world % (int)factor == 0 && world / factor > factor)
        factor *= 2;
    return factor;
}

/*
 * The memory-bound work around a unit's reduce-scatter. FSDP1 (_runtime_utils.py
 * _post_backward_hook, default_hooks.py reduce_scatter_hook), on the stream that issues the
 * reduction (it delays the reduction, not the computation): the unsharded gradient cast to
 * reduce_dtype when that differs from param_dtype (`flat_param.grad.to(reduce_dtype)`),
 * divided in place by the pre-divide factor, and the shard divided by the post-divide factor
 * after the collective. FSDP2 (_fsdp_collectives.py foreach_reduce @010ae4a): the gradients
 * copied into one reduce-scatter input at reduce_dtype on the compute stream (chunk_cat, read
 * param_dtype, write reduce_dtype), and the divisions only for fp16 (fp32 and bf16 reduce with
 * NCCL's ReduceOp.AVG). Returns the task the reduction waits for.
 */
static int pre_reduce(struct build *b, struct fsdp *f, int gi, int dep)
{
    struct group *g = &f->g[gi];
    struct prog *p = b->p;
    double n = g->grad_elems, shard = n / f->shard.size, bytes = 0;
    bool v2 = f->version == 2, divides = true;
    sim_time dur;
    int t;

    if (n <= 0 || !sharded(f))
        return dep;
    if (v2) {
        dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, n * (f->pbytes + f->rbytes));
        t = prog_compute(p, ST_COMPUTE, TC_BWD, dur,
                         prog_label(p, "FSDP2 reduce-scatter copy-in unit %d", gi), -1);
        if (dep >= 0)
            prog_dep(p, t, dep);
        dep = t;
        divides = b->s->fsdp.reduce_dtype == DT_FP16;
    } else if (f->rbytes > f->pbytes || f->rbytes < f->pbytes) {
        bytes += n * (f->pbytes + f->rbytes);
    }
    if (divides && predivide_factor(f->shard.size) > 1)
        bytes += 2 * n * f->rbytes + 2 * shard * f->rbytes;
    if (bytes <= 0)
        return dep;
    dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, bytes);
    t = prog_compute(p, ST_DP, TC_COMM_DP, dur,
                     prog_label(p, "FSDP gradient cast/divide unit %d", gi), -1);
    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/* Reduce group gi's gradient after grad_task; (offload) copy the shard to the host. */
static void reduce(struct build *b, struct fsdp *f, int gi, int grad_task)
{
    struct group *g = &f->g[gi];
    double bytes = g->grad_elems * f->rbytes;
    double held = f->pipelined ? f->rbytes : f->pbytes; /* the unsharded gradient's bytes/elem */
    int t, last;

    if (rules_grad_reduce_op(b->s) == COLL_ALL_REDUCE) { /* NO_SHARD */
        t = dp_pg_coll(b, &f->shard, ST_DP, COLL_ALL_REDUCE, bytes, "all-reduce unit %d", gi,
                       grad_task);
        if (t >= 0)
            f->last_red = t;
        return;
    }
    t = dp_pg_coll(b, &f->shard, ST_DP, COLL_REDUCE_SCATTER, bytes, "reduce-scatter unit %d", gi,
                   pre_reduce(b, f, gi, grad_task));
    if (t >= 0)
        task_mem_end(&b->p->tasks[t], MC_GRADS, -bytes_i64(g->grad_elems * held));
    else
        dp_mem_mark(b, ST_DP, grad_task, MC_GRADS, -g->grad_elems * held,
                    "free unsharded gradient");
    last = t >= 0 ? t : grad_task;
    t = dp_pg_coll(b, &f->repl, ST_DP, COLL_ALL_REDUCE, bytes / f->shard.size,
                   "replicate all-reduce unit %d", gi, last);
    last = t >= 0 ? t : last;
    if (b->s->train.offload == OFFLOAD_PARAMS)
        last = offload_copy(b, false, g->grad_elems * 4.0 / f->shard.size, last,
                            "fp32 gradient shard to host", 0);
    f->last_red = last;
}

/*
 * Pipelined FSDP2: the micro-batch's gradient joins the unit's accumulator in reduce_dtype, a
 * memory-bound pass on the compute stream (the first one converts, to_accumulated_grad_if_needed:
 * read param_dtype, write reduce_dtype; later ones add, accumulate_unsharded_grad_if_needed:
 * read both, write reduce_dtype), then the micro-batch's own gradient is freed. Returns the
 * pass (or grad_task).
 */
static int accumulate(struct build *b, struct fsdp *f, int gi, int mb, int grad_task)
{
    struct group *g = &f->g[gi];
    struct prog *p = b->p;
    double n = g->grad_elems;
    sim_time dur;
    int t;

    if (n <= 0)
        return grad_task;
    dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff,
                        n * (f->pbytes + f->rbytes + (mb > 0 ? f->rbytes : 0)));
    t = prog_compute(p, ST_COMPUTE, TC_BWD, dur,
                     prog_label(p, "FSDP2 gradient accumulate unit %d", gi), mb);
    prog_dep(p, t, grad_task);
    task_mem_end(&p->tasks[t], MC_GRADS, -bytes_i64(n * f->pbytes));
    return t;
}

static void fsdp_post_backward(struct build *b, int ui, int mb, int grad_task)
{
    struct fsdp *f = b->dp_state;
    int gi = f->group_of[ui];

    if (!f->fwd_first[ui])
        return; /* a unit reduces after its last part in backward (the root: the embedding) */
    if (f->pipelined) {
        grad_task = accumulate(b, f, gi, mb, grad_task);
        if (mb != b->m - 1)
            return; /* no reshard after backward, no gradient sync until the last one */
        reshard(b, f, gi, grad_task);
        f->g[gi].accumulating = false;
        reduce(b, f, gi, grad_task);
        return;
    }
    grad_task = flat_grad(b, f, gi, grad_task);
    if (f->mode != SHARD_FSDP_NO_SHARD) {
        reshard(b, f, gi, grad_task);
        if (f->version == 1 && b->s->fsdp.backward_prefetch == BWD_PREFETCH_POST)
            unshard(b, f, next_group(b, f, ui, -1), false);
    }
    reduce(b, f, gi, grad_task);
}

static void fsdp_step(struct build *b)
{
    struct fsdp *f = b->dp_state;
    double part = f->params / (sharded(f) ? f->shard.size : 1);
    int dep = f->last_red >= 0 ? f->last_red : b->grads_ready;

    if (b->s->train.offload == OFFLOAD_PARAMS)
        offload_cpu_step(b, part, dep);
    else
        emit_optimizer(b, part, memory_optimizer_traffic(b->s), dep);
}

const struct dp_ops dp_fsdp = {
    .name = "pytorch-fsdp",
    .init = fsdp_init,
    .pre_forward = fsdp_pre_forward,
    .post_forward = fsdp_post_forward,
    .pre_backward = fsdp_pre_backward,
    .post_backward = fsdp_post_backward,
    .step = fsdp_step,
    .release = fsdp_release,
};
