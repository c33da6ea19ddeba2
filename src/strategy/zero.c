/*
 * zero.c - DeepSpeed ZeRO stages 1, 2 and 3 (DeepSpeed 0.16,
 * deepspeed/runtime/zero/stage_1_and_2.py, stage3.py,
 * partitioned_param_coordinator.py; config names and defaults of
 * zero/config.py, formulas.md §2.3).
 *
 * Stages 1 and 2. Gradients go into "ipg" buckets of reduce_bucket_size
 * elements as backward produces them (reduce_independent_p_g_buckets_and_
 * remove_grads); a full bucket is reduced so that each rank receives the sum
 * of its own partition (average_tensor: one reduce per owner rank, the volume
 * of a reduce-scatter, modelled as one reduce-scatter of the bucket). Stage 2
 * reduces in every micro-batch's backward; stage 1 only in the backward that
 * ends gradient accumulation (reduce_ready_partitions_and_remove_grads: "if
 * self.partition_gradients or self.is_gradient_accumulation_boundary").
 * With overlap_comm the reduction runs on a side stream during backward;
 * without it (the default for stages 1 and 2) it runs on the compute stream
 * and backward waits. After the step each rank's updated 16-bit partition is
 * all-gathered with one all_gather_into_tensor per parameter group
 * (runtime/utils.py all_gather_dp_groups; allgather_bucket_size applies only
 * to the fallback for torch without all_gather_into_tensor).
 * Buffers: contiguous_gradients keeps one ipg buffer of reduce_bucket_size
 * elements, two with overlap_comm (ipg_index double buffering).
 *
 * Stage 3. Parameters are partitioned; each module's parameters are
 * all-gathered before its forward and again before its backward (fetch_sub_
 * module), then released (release_sub_module) unless they are reused within
 * stage3_max_reuse_distance elements of the trace or are persistent (numel <=
 * stage3_param_persistence_threshold: never partitioned). After fetching the
 * current module the coordinator prefetches the next parameters of the trace,
 * up to min(stage3_max_live_parameters - available, stage3_prefetch_bucket_size)
 * elements but always at least one parameter. Gradients are reduce-scattered
 * in ipg buckets of reduce_bucket_size (on reduce_and_partition_stream with
 * overlap_comm) in every micro-batch; the end-of-backward epilogue
 * synchronizes that stream (independent_gradient_partition_epilogue), so the
 * next micro-batch's forward starts after the last reduction.
 *
 * Granularity: one simulated unit (embedding, transformer layer, head) is
 * one fetch. The prefetch window is translated to units: a fetch of unit k
 * prefetches k+1, k+2, ... while the window allows, at least one unit when
 * prefetching is on (the window at DeepSpeed's sub-module granularity is
 * min(prefetch_bucket, max_live - largest tensor), since a fetch makes only
 * the current module's tensors available). All collectives of the data-
 * parallel group run in issue order (dp_internal.h).
 *
 * Recomputation. Megatron's checkpointed layer re-runs its forward inside
 * backward, so DeepSpeed's sub-module hooks (stage3.py _register_hooks_
 * recursively: forward pre/post hooks on every module) fetch the layer for the
 * recompute and release, after the recompute's forward, every sub-module whose
 * next use (its backward) is stage3_max_reuse_distance elements or more away;
 * those are gathered a third time for backward (regather_bytes). Applied in
 * the 2021 model only (see regather()).
 *
 * DeepSpeed of 2021 (v0.3.13, the first release with stage 3, to v0.4.x;
 * `zero.stage3_gather: per_param_sync`). Checked in its partition_parameters.py and
 * stage3.py: _allgather_param gathers ONE parameter into a fresh
 * torch.zeros buffer after torch.cuda.synchronize(), through
 * torch.distributed.all_gather with a list of world_size views;
 * fetch_sub_module waits with _synchronize_communication (handle.wait,
 * comm_stream.synchronize, torch.cuda.synchronize); gradients are reduced
 * one parameter at a time (_reduce_scatter_gradients: torch.distributed.
 * reduce_scatter with a list of world_size input views). DeepSpeed PR #1188
 * (June 2021) states the consequence: "the async version is not async at
 * all, because each all_gather calls torch.cuda.synchronize()". PyTorch
 * <= 1.8 ProcessGroupNCCL::allgather copies each of the world_size outputs out
 * of a flat buffer (outputTensors[i][j].copy_) and reduce_scatter copies each
 * input into one (inputFlattened[i][j].copy_): world_size memory-bound kernels
 * per collective. simtrain models it as: no prefetch (every gather waits for
 * the compute and collectives issued before it, the compute waits for it),
 * one all-gather per gathered weight tensor preceded by the zero fill and
 * followed by world_size copy-out kernels, one reduce-scatter per weight
 * gradient preceded by world_size copy-in kernels, and overlap_comm false
 * unless given (constants.py ZERO_OPTIMIZATION_OVERLAP_COMM_DEFAULT = False).
 * _allgather_param builds its list in Python after the synchronize, one
 * flat_tensor.narrow() view per rank, while the GPU waits: world_size views
 * at the measured CPU cost of a PyTorch view (zero_ds2021_view_loop_time()).
 * Not modelled: the rest of that loop (get_rank(group) per rank, append),
 * for which no measured figure was found; the loop building reduce_scatter's
 * input views (_reduce_scatter_gradient), which no synchronize precedes, so
 * it runs while kernels issued before it (the backward, earlier reductions
 * launched with async_op=True) execute; host time of kernel launches beyond
 * the kernels' own `launch` cost; the one parameter the 2021 coordinator
 * prefetched (stage3_prefetch_bucket_size 5e7 is below one weight matrix) and
 * could overlap with the sub-module before it is not represented at unit
 * granularity, so compute and gathers are fully serial here.
 *
 * Offload (ZeRO-Offload / ZeRO-Infinity): each reduced gradient partition is
 * copied to the host as fp32, the step runs on the CPU, the updated 16-bit
 * partition is copied back; with offload_param the 16-bit partition lives on
 * the host and is copied to the device before every all-gather (offload.c).
 *
 * Which stage reduces when, the ipg buffers and the tensors ZeRO-3 gathers one by one are
 * stated once in rules.c, which the closed-form estimate (whatif/) reads too.
 */
#include <stdlib.h>

#include "model/cost.h"
#include "strategy/dp_internal.h"
#include "model/memory.h"

#define ZMAX_TENSORS 4 /* gathered weight tensors per unit (attention QKV, proj, MLP in, out) */

struct zunit {
    double gather_bytes;        /* partitioned bytes this unit gathers (persistent ones excluded) */
    double params;              /* elements, for the prefetch window */
    double share[ZMAX_TENSORS]; /* fraction of the unit in each weight tensor, forward order */
    bool regather[ZMAX_TENSORS]; /* released after a full recompute, gathered again */
    int ntensors;                /* entries of share[] (1: the unit as one tensor) */
    double regather_bytes;       /* gathered again for backward after a full recompute */
    bool avail;                  /* gathered and not released */
    bool keep; /* reused within max_reuse_distance after its forward: not released */
    int ready; /* task after which it is available, -1 = none needed */
};

struct zero {
    int stage;               /* 1, 2 or 3 */
    struct dp_pg pg;         /* the data-parallel process group */
    struct dp_bucket bucket; /* ipg bucket, bytes at the communication dtype */
    double pbytes;           /* bytes per 16-bit parameter element (gathers, reductions) */
    double params;           /* trainable elements on this rank */
    int last_d2h;            /* last gradient copy to the host, -1 = none */
    struct zunit *u;         /* stage 3: per unit of the build */
    double window;           /* stage 3: prefetch window, elements (0 = no prefetch) */
    int epilogue;            /* stage 3: last reduction of the previous micro-batch, -1 */
    bool ds2021;             /* stage 3: DeepSpeed 0.3.13-0.4.x synchronous per-parameter path */
    bool overlap;            /* reductions on their own stream (overlap_comm) */
};

/* Do gradients go to the host (ZeRO-Offload)? Not under offload_param alone. */
static bool offload_grads(const struct scenario *s)
{
    return s->train.offload == OFFLOAD_OPTIMIZER || s->train.offload == OFFLOAD_PARAMS;
}

/* Do the 16-bit parameter partitions live on the host (offload_param)? */
static bool offload_params(const struct scenario *s)
{
    return s->train.offload == OFFLOAD_PARAMS || s->train.offload == OFFLOAD_PARAMS_ONLY;
}

static double param_elem_bytes(const struct scenario *s)
{
    struct state_bytes sb;

    memory_state_bytes(s, &sb);
    return sb.params;
}

/*
 * CPU time of one view op (narrow, select) called from Python, PyTorch of
 * 2018-2019: issue #29973 (PyTorch 1.3, Nov 2019) times 32 x 512
 * `matrix[i][j]` double indexings at 50.3 ms, 3.07 us each, i.e. 1.5 us per
 * view; issue #5388 (Feb 2018) `x[0]` at 1.05 us. Measured on the reporters'
 * CPUs, not on Selene's EPYC 7742; no figure for PyTorch 1.8 was found.
 */
#define TORCH_VIEW_NS 1500

sim_time zero_ds2021_view_loop_time(int world_size)
{
    return world_size > 1 ? time_mul(TORCH_VIEW_NS, world_size) : 0;
}

/* ---- gradient reduction (all stages) ------------------------------------------------------ */

/*
 * ZeRO-Offload's gradient path for one reduced bucket, this rank's partition
 * of `elems` elements, after task `dep`. Accumulating micro-steps bring the
 * host's running sum back to the GPU, add, and send it out again in 16 bits;
 * the step's own gradient goes out as fp32 (stage_1_and_2.py
 * async_accumulate_grad_in_cpu_via_gpu and async_inplace_copy_grad_to_fp32_
 * buffer_from_gpu; stage3.py __partition_grads likewise adds on the GPU).
 */
static void offload_partition(struct build *b, struct zero *z, double elems, int mb, int dep)
{
    bool boundary = mb == b->m - 1;
    int c;

    if (mb > 0 && z->stage >= 2) /* stage 1 accumulates on the GPU and reduces once */
        dep = offload_copy(b, true, elems * z->pbytes, dep, "accumulated gradient to device", 0);
    c = offload_copy(b, false, elems * (boundary && z->stage < 3 ? 4.0 : z->pbytes), dep,
                     "gradient partition to host", 0);
    if (c >= 0)
        z->last_d2h = c;
}

/*
 * PyTorch <= 1.8 list collectives (DeepSpeed 2021): world_size copy kernels of
 * bytes / world_size each (read and written), on `stream` after `dep`.
 */
static int list_copies(struct build *b, struct zero *z, int stream, double bytes, const char *label,
                       int arg, int dep)
{
    struct prog *p = b->p;
    double n = z->pg.size;
    sim_time each = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, 2 * bytes / n);
    int t = prog_compute(p, stream, TC_COMM_DP, time_mul(each, n), prog_label(p, label, arg), -1);

    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/* Reduce one full ipg bucket of `bytes` after task `dep`; (offload) move this rank's share. */
static void reduce_bucket(struct build *b, struct zero *z, double bytes, int mb, int dep)
{
    int stream = z->overlap ? ST_DP : ST_COMPUTE;
    int t;

    if (z->ds2021 && z->pg.size > 1) /* flatten_for_scatter_gather: copy each input in */
        dep =
            list_copies(b, z, stream, bytes, "reduce-scatter copy-in, %d kernels", z->pg.size, dep);
    t = dp_pg_coll(b, &z->pg, stream, COLL_REDUCE_SCATTER, bytes, "reduce-scatter bucket %d",
                   z->bucket.issued, dep);

    if (offload_grads(b->s))
        offload_partition(b, z, bytes / z->pbytes / z->pg.size, mb, t >= 0 ? t : dep);
}

static void reduce_grads(struct build *b, struct zero *z, int ui, int mb, int grad_task)
{
    double bytes = dp_unit_grad_elems(b, ui) * z->pbytes, full;

    if (z->ds2021) { /* _reduce_scatter_gradients: one reduce-scatter per parameter */
        const struct zunit *u = &z->u[ui];
        for (int i = u->ntensors - 1; i >= 0; i--)
            reduce_bucket(b, z, bytes * u->share[i], mb, grad_task);
        return;
    }

    while ((full = dp_bucket_pour(&z->bucket, &bytes)) > 0)
        reduce_bucket(b, z, full, mb, grad_task);
    if (dp_unit_ends_backward(b, ui) && (full = dp_bucket_flush(&z->bucket)) > 0)
        reduce_bucket(b, z, full, mb, grad_task);
}

/* The optimizer step on this rank's partition, on the GPU or (offload) the host. */
static int partition_step(struct build *b, struct zero *z, int dep)
{
    double n = z->pg.size, part = z->params / n;
    int t;

    if (b->s->train.offload == OFFLOAD_PARAMS_ONLY) {
        /*
         * offload_param without offload_optimizer (DeepSpeed stage3.py: the fp32
         * partition and the optimizer stay on the GPU): the step runs there and
         * the updated 16-bit partition goes back to its host copy.
         */
        t = emit_optimizer(b, part, memory_optimizer_traffic(b->s), dep);
        return offload_copy(b, false, part * z->pbytes, t, "updated partition to host", 0);
    }
    if (!offload_grads(b->s))
        return emit_optimizer(b, part, memory_optimizer_traffic(b->s), dep);
    t = offload_cpu_step(b, part, z->last_d2h >= 0 ? z->last_d2h : dep);
    if (b->s->train.offload == OFFLOAD_PARAMS)
        return t; /* the 16-bit partition lives on the host too */
    return offload_copy(b, true, part * z->pbytes, t, "updated partition to device", 0);
}

static void common_init(struct build *b, struct zero *z, int stage)
{
    const struct scenario *s = b->s;
    struct shard_factors f;
    int i;

    b->dp_state = z;
    z->stage = stage;
    z->pbytes = param_elem_bytes(s);
    z->overlap = s->zero.overlap_comm;
    z->last_d2h = -1;
    z->epilogue = -1;
    dp_pg_init(&z->pg, b, COMM_DP);
    dp_bucket_init(&z->bucket, 0, s->zero.reduce_bucket_size * z->pbytes);
    for (i = 0; i < b->nunits; i++)
        z->params += dp_unit_grad_elems(b, i);
    memory_shard_factors(s, &f);
    states_emit_model_states(b, &f);
}

static void zero_release(struct build *b)
{
    struct zero *z = b->dp_state;

    if (z)
        free(z->u);
    free(z);
    b->dp_state = NULL;
}

/* ---- stages 1 and 2 ----------------------------------------------------------------------- */

static void zero12_init(struct build *b)
{
    const struct scenario *s = b->s;
    struct zero *z = xcalloc(1, sizeof(*z));

    common_init(b, z, s->par.sharding == SHARD_ZERO1 ? 1 : 2);
    states_emit_static(b, MC_COMM, rules_zero_bucket_bytes(s), "ZeRO ipg gradient buckets");
}

static void zero12_post_backward(struct build *b, int ui, int mb, int grad_task)
{
    struct zero *z = b->dp_state;

    if (!rules_reduce_every_microbatch(b->s) && mb != b->m - 1)
        return; /* stage 1 reduces only at the gradient-accumulation boundary */
    reduce_grads(b, z, ui, mb, grad_task);
}

static void zero12_step(struct build *b)
{
    struct zero *z = b->dp_state;
    int dep = z->pg.last >= 0 ? z->pg.last : b->grads_ready;
    int t = partition_step(b, z, dep);

    /* Every rank's updated 16-bit partition, gathered on the compute stream (step is synchronous).
     */
    dp_pg_coll(b, &z->pg, ST_COMPUTE, COLL_ALL_GATHER, z->params * z->pbytes, "param all-gather", 0,
               t);
}

const struct dp_ops dp_zero12 = {
    .name = "deepspeed-zero12",
    .init = zero12_init,
    .post_backward = zero12_post_backward,
    .step = zero12_step,
    .release = zero_release,
};

/* ---- stage 3 ------------------------------------------------------------------------------ */

/*
 * Elements of a unit's tensors at or below the persistence threshold, per rank
 * after tensor parallelism: norm weights and biases, and any weight matrix or
 * embedding table as small (DeepSpeed 0.16 runtime/zero/parameter_offload.py
 * mark_persistent_parameters: `ds_persist = True` when `ds_numel <=
 * param_threshold`, for every named parameter; a threshold of 1e9 keeps a small
 * model whole; model_persistence_threshold, unbounded by default, is not modelled). Matrices
 * counted: those rules_zero3_weight_tensors() lists, the SwiGLU gate and up one by one; an MoE
 * layer's experts and the head's table are not (taken as one tensor).
 */
static double persistent_elems(const struct scenario *s, int kind, bool moe, double threshold)
{
    const struct model *m = &s->model;
    double tp = s->par.tp, h = m->hidden, q = (double)m->heads * m->head_dim;
    double kv = (double)m->kv_heads * m->head_dim, f = m->ffn_hidden;
    double norm = h, sum = 0;
    double small[8];
    int n = 0, i, norms = kind == UNIT_LAYER ? 2 : (kind == UNIT_HEAD ? 1 : 0);

    for (i = 0; i < norms; i++) {
        small[n++] = norm;
        if (m->norm == NORM_LAYERNORM)
            small[n++] = norm; /* LayerNorm bias */
    }
    if (kind == UNIT_LAYER && m->bias) {
        small[n++] = (q + 2 * kv) / tp; /* QKV biases */
        small[n++] = h;                 /* output projection bias */
        small[n++] = f / tp;            /* FC1 bias */
        small[n++] = h;                 /* FC2 bias */
    }
    for (i = 0; i < n; i++)
        if (small[i] <= threshold)
            sum += small[i];
    {
        double mats[ZMAX_TENSORS];
        int nm = rules_zero3_weight_tensors(s, kind, moe, mats), ins = workload_mlp_matrices(m) - 1;
        for (i = 0; i < nm; i++) {
            /* the MLP input is gate and up together under SwiGLU: each its own parameter */
            double one = kind == UNIT_LAYER && i == 2 && ins > 1 ? mats[i] / ins : mats[i];
            if (one <= threshold)
                sum += mats[i];
        }
    }
    return sum;
}

/* The largest tensor of a transformer layer (an MLP matrix or the attention projections). */
static double largest_tensor(const struct scenario *s)
{
    const struct model *m = &s->model;
    double h = m->hidden, q = (double)m->heads * m->head_dim, f = m->ffn_hidden;
    double mlp = h * f / s->par.tp, attn = h * q / s->par.tp;

    return mlp > attn ? mlp : attn;
}

/*
 * Split unit i into its weight tensors and mark those a full recompute
 * releases: after the recompute's forward of tensor j the layer's later
 * tensors run forward and then backward before j's backward, 2 * (elements
 * after j) away, released when that is >= stage3_max_reuse_distance
 * (_keep_for_later: kept while "reuse_distance_in_numel <
 * max_reuse_distance_in_numel").
 */
static void unit_tensors(struct build *b, struct zero *z, int i)
{
    struct zunit *u = &z->u[i];
    double elems[ZMAX_TENSORS], sum = 0, after = 0, again = 0;
    int n = rules_zero3_weight_tensors(b->s, b->units[i].kind, b->units[i].moe, elems), j;
    bool full = b->units[i].kind == UNIT_LAYER && strategy_unit_recompute(b, i) == RC_FULL;

    for (j = 0; j < n; j++)
        sum += elems[j];
    if (n == 0 || sum <= 0) {
        u->ntensors = 1;
        u->share[0] = 1;
        return;
    }
    u->ntensors = n;
    for (j = n - 1; j >= 0; j--) {
        u->share[j] = elems[j] / sum;
        u->regather[j] = full && 2 * after >= b->s->zero.max_reuse_distance;
        if (u->regather[j])
            again += u->share[j];
        after += elems[j];
    }
    u->regather_bytes = u->gather_bytes * again;
}

static void zero3_units(struct build *b, struct zero *z)
{
    const struct scenario *s = b->s;
    const struct zero_cfg *c = &s->zero;
    double persist = 0, after = 0, largest = largest_tensor(s);
    int i;

    z->u = xcalloc((size_t)b->nunits, sizeof(*z->u));
    for (i = 0; i < b->nunits; i++) {
        struct zunit *u = &z->u[i];
        double all = dp_unit_gather_bytes(b, i, z->pbytes);
        double keep =
            persistent_elems(s, b->units[i].kind, b->units[i].moe, c->param_persistence_threshold);
        double frac = b->units[i].params > 0 ? keep / b->units[i].params : 0;
        frac = frac > 1 ? 1 : frac;
        u->gather_bytes = all * (1 - frac);
        u->params = b->units[i].params;
        u->ready = -1;
        persist += all * frac;
        unit_tensors(b, z, i);
    }
    /* Kept for backward when the rest of the forward and the backward back to it fit the distance.
     */
    for (i = b->nunits - 1; i >= 0; i--) {
        z->u[i].keep = 2 * after < c->max_reuse_distance;
        after += z->u[i].params;
    }
    z->window = c->prefetch_bucket_size;
    if (c->max_live_parameters - largest < z->window)
        z->window = c->max_live_parameters - largest;
    if (z->window < 0 || z->ds2021)
        z->window = 0; /* 2021: every gather synchronizes the device (see the header) */
    /* Persistent parameters are whole on every rank; the model states counted them 1/N. */
    if (z->pg.size > 1)
        states_emit_static(b, MC_PARAMS, persist * (1 - 1.0 / z->pg.size),
                           "ZeRO-3 persistent parameters");
}

static void zero3_init(struct build *b)
{
    const struct scenario *s = b->s;
    struct zero *z = xcalloc(1, sizeof(*z));

    common_init(b, z, 3);
    /* zero.stage3_gather: per_param_sync also makes overlap_comm default to false (config) */
    z->ds2021 = s->zero.stage3_gather == ZERO3_GATHER_PER_PARAM_SYNC;
    zero3_units(b, z);
    states_emit_static(b, MC_COMM, rules_zero_bucket_bytes(s), "ZeRO-3 ipg gradient bucket");
}

/*
 * DeepSpeed 2021: gather unit ui's weight tensors (only those a recompute
 * released when `again`) one at a time, `bytes` in all, after task `dep`:
 * each waits for everything issued before it (torch.cuda.synchronize), fills
 * a fresh buffer with zeros, takes world_size narrow views of it on the CPU
 * (the GPU idle after the synchronize), all-gathers it and copies the
 * world_size pieces out. Returns the last copy-out; *first receives the
 * first task.
 */
static int fetch_tensors(struct build *b, struct zero *z, int ui, bool again, double bytes, int dep,
                         int *first)
{
    const struct zunit *u = &z->u[ui];
    struct prog *p = b->p;
    int t = dep, i;

    *first = -1;
    for (i = 0; i < u->ntensors; i++) {
        double part = bytes * u->share[i];
        int fill, views;

        if (part <= 0 || (again && !u->regather[i]))
            continue;
        fill = prog_compute(p, ST_DP_GATHER, TC_COMM_DP,
                            cost_membound(&b->s->hw.gpu, &b->s->hw.eff, part),
                            prog_label(p, "zero-fill gather buffer unit %d", ui), -1);
        if (t >= 0)
            prog_dep(p, fill, t);
        if (z->pg.last >= 0 && z->pg.last != t)
            prog_dep(p, fill, z->pg.last);
        if (*first < 0)
            *first = fill;
        views = prog_compute(p, ST_DP_GATHER, TC_COMM_DP, zero_ds2021_view_loop_time(z->pg.size),
                             prog_label(p, "narrow views on the CPU, unit %d", ui), -1);
        prog_dep(p, views, fill);
        t = dp_pg_coll(b, &z->pg, ST_DP_GATHER, COLL_ALL_GATHER, part,
                       again ? "re-fetch unit %d, one tensor" : "fetch unit %d, one tensor", ui,
                       views);
        t = list_copies(b, z, ST_DP_GATHER, part, "all-gather copy-out unit %d", ui, t);
    }
    return t;
}

/*
 * Make unit `ui` available: (offload) copy its partition in, then all-gather
 * it, no earlier than task `dep` (-1 = at once).
 */
static int fetch(struct build *b, struct zero *z, int ui, int dep)
{
    struct zunit *u = &z->u[ui];
    int h2d = -1, ag, first;

    if (u->avail)
        return u->ready;
    u->avail = true;
    u->ready = -1;
    if ((z->pg.size <= 1 && !offload_params(b->s)) || u->gather_bytes <= 0)
        return -1;
    if (offload_params(b->s))
        h2d = offload_copy(b, true, u->gather_bytes / z->pg.size, dep, "param partition to device",
                           0);
    if (z->pg.size <= 1) {
        /* one rank: nothing to gather, the host copy comes in whole (ZeRO-Infinity on one GPU) */
        ag = first = h2d;
    } else if (z->ds2021) {
        ag = fetch_tensors(b, z, ui, false, u->gather_bytes, h2d >= 0 ? h2d : dep, &first);
    } else {
        ag = dp_pg_coll(b, &z->pg, ST_DP_GATHER, COLL_ALL_GATHER, u->gather_bytes, "fetch unit %d",
                        ui, h2d >= 0 ? h2d : dep);
        first = ag;
    }
    task_mem_start(&b->p->tasks[first], MC_GATHERED, bytes_i64(u->gather_bytes));
    u->ready = ag;
    return ag;
}

static void release(struct build *b, struct zero *z, int ui, int after)
{
    struct zunit *u = &z->u[ui];

    if (!u->avail)
        return;
    u->avail = false;
    if ((z->pg.size > 1 || offload_params(b->s)) && u->gather_bytes > 0)
        dp_mem_mark(b, ST_COMPUTE, after, MC_GATHERED, -u->gather_bytes, "release gathered unit");
}

/*
 * The coordinator runs in the module hooks on the CPU, which DeepSpeed keeps
 * close to the GPU (fetch waits, event synchronizations): a fetch or prefetch
 * issued when unit ui starts goes out after the compute issued before it.
 */
static int hook_time(const struct build *b)
{
    return b->last_fwd > b->last_bwd ? b->last_fwd : b->last_bwd;
}

/* Prefetch the units after `ui` in direction `dir` (+1 forward, -1 backward) within the window. */
static void prefetch(struct build *b, struct zero *z, int ui, int dir)
{
    double budget = z->window;
    int now = hook_time(b), j;

    for (j = ui + dir; budget > 0 && j >= 0 && j < b->nunits; j += dir) {
        if (!z->u[j].avail)
            fetch(b, z, j, now);
        budget -= z->u[j].params;
    }
}

/* A zero-time join of two tasks on the compute stream (the compute waits for both). */
static int join(struct build *b, int a, int c)
{
    struct prog *p = b->p;
    int t;

    if (a < 0 || c < 0)
        return a < 0 ? c : a;
    t = prog_mark(p, ST_COMPUTE, prog_label(p, "wait for reductions (epilogue sync)", 0));
    prog_dep(p, t, a);
    if (a != c)
        prog_dep(p, t, c);
    return t;
}

static int zero3_pre_forward(struct build *b, int ui, int mb)
{
    struct zero *z = b->dp_state;
    int ready = fetch(b, z, ui, hook_time(b)), sync = -1;

    (void)mb;
    if (ui == b->chunk_first[b->units[ui].chunk]) {
        sync = z->epilogue; /* the previous backward's epilogue synchronized the reduce stream */
        z->epilogue = -1;
    }
    prefetch(b, z, ui, +1);
    return join(b, ready, sync);
}

static void zero3_post_forward(struct build *b, int ui, int mb, int fwd_task)
{
    struct zero *z = b->dp_state;

    (void)mb;
    if (!z->u[ui].keep)
        release(b, z, ui, fwd_task);
}

/*
 * The tensors a full recompute released, gathered again for backward after
 * `ready` (the recompute's fetch). The hooks here see a layer's recompute and
 * backward as one step, so the re-gather is issued before the recompute: with
 * the 2021 code, where nothing overlaps, that moves no time. With prefetching
 * (DeepSpeed 0.16) it would make the recompute wait for a gather only the
 * backward waits for, so it is applied to the 2021 model only until the
 * build gives a hook between recompute and backward. Buffers are reused: no
 * memory change.
 */
static int regather(struct build *b, struct zero *z, int ui, int ready)
{
    const struct zunit *u = &z->u[ui];
    int dep = ready >= 0 ? ready : hook_time(b), first;

    if (!z->ds2021 || z->pg.size <= 1 || u->regather_bytes <= 0)
        return ready;
    return fetch_tensors(b, z, ui, true, u->gather_bytes, dep, &first);
}

static int zero3_pre_backward(struct build *b, int ui, int mb)
{
    struct zero *z = b->dp_state;
    int ready = fetch(b, z, ui, hook_time(b));

    (void)mb;
    ready = regather(b, z, ui, ready);
    prefetch(b, z, ui, -1);
    return ready;
}

static void zero3_post_backward(struct build *b, int ui, int mb, int grad_task)
{
    struct zero *z = b->dp_state;

    release(b, z, ui, grad_task);
    reduce_grads(b, z, ui, mb, grad_task);
    if (dp_unit_ends_backward(b, ui))
        z->epilogue = z->pg.last;
}

static void zero3_step(struct build *b)
{
    struct zero *z = b->dp_state;

    partition_step(b, z, z->pg.last >= 0 ? z->pg.last : b->grads_ready);
}

const struct dp_ops dp_zero3 = {
    .name = "deepspeed-zero3",
    .init = zero3_init,
    .pre_forward = zero3_pre_forward,
    .post_forward = zero3_post_forward,
    .pre_backward = zero3_pre_backward,
    .post_backward = zero3_post_backward,
    .step = zero3_step,
    .release = zero_release,
};
