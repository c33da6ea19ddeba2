/*
 * ddp.c - data parallelism without sharding: PyTorch DDP and Megatron DDP.
 *
 * PyTorch DDP (torch/nn/parallel/distributed.py): gradients are grouped into
 * buckets in reverse parameter order ("to approximate the order in which their
 * gradients are produced"), bucket_cap_mb = 25 MiB with a first bucket of
 * _DEFAULT_FIRST_BUCKET_BYTES = 1 MiB; each bucket is all-reduced on the
 * communication stream as soon as all its gradients are ready, overlapping
 * the rest of backward. Under gradient accumulation (no_sync) only the last
 * micro-batch's backward reduces. By default (gradient_as_bucket_view=False)
 * the buckets are flat copies of the gradients: one more gradient-sized buffer.
 *
 * Megatron DDP (distributed_data_parallel_config.py): gradients live in one
 * contiguous buffer (no copy); bucket_size = max(40M, 1M * dp) parameters;
 * with overlap_grad_reduce the buckets reduce during the last backward.
 * overlap_grad_reduce defaults to False (formulas.md §3.1; `ddp.overlap`
 * defaults to false for Megatron, config/check.c): after the last backward
 * the whole buffer is scaled by 1/dp in place and all-reduced in one call
 * (megatron/model/distributed.py allreduce_gradients: `buffer_.data /=
 * get_data_parallel_world_size()` then one all_reduce of the buffer; Megatron
 * core's non-overlapped path likewise keeps a single bucket per buffer).
 *
 * Megatron's optimizer step (megatron/optimizer/optimizer.py,
 * Float16OptimizerWithFloat16Params.step, and clip_grads.py) is a sequence of
 * memory-bound multi-tensor passes, each costed from its bytes: with fp16
 * loss scaling, unscale and check for inf (read and write the fp32 main
 * gradients); the gradient norm for clipping (multi_tensor_l2norm reads every
 * gradient; --clip-grad defaults to 1.0); the Adam update; and the copy of
 * the fp32 main parameters into the 16-bit model parameters as a separate
 * multi_tensor_scale pass (reads the main parameters again). Before the next
 * iteration zero_grad_buffer() writes the whole gradient buffer. The scalar
 * all-reduces of the norm and the inf flag over the model-parallel group are
 * latency only and not modelled.
 *
 * The optimizer step follows the last reduction (formulas.md §3.1).
 *
 * Megatron's distributed optimizer (dist_optimizer.md; ZeRO-1 style): the same
 * buckets are reduce-scattered instead of all-reduced, each rank updates its
 * 1/dp shard of the fp32 master weights and optimizer states, and the updated
 * 16-bit parameters are all-gathered (bytes/param 6 + 12/dp for bf16 params
 * with fp32 gradients). Without overlap_param_gather the gather follows the
 * step.
 *
 * The bucket sizes, the gradient-accumulation pass and which collectives run when are
 * stated once in rules.c, which the closed-form estimate (whatif/) reads too.
 */
#include <stdlib.h>

#include "model/cost.h"
#include "strategy/dp_internal.h"
#include "model/memory.h"
#include "strategy/strategy.h"

struct ddp {
    int distributed;     /* Megatron distributed optimizer */
    double bucket_bytes; /* capacity of buckets after the first */
    double first_bytes;  /* capacity of the first bucket */
    double fill;         /* bytes in the open bucket */
    int nbuckets;        /* buckets issued */
    int last_coll;       /* last all-reduce task */
    double params;       /* parameters on this rank */
};

/* Megatron's optimizer (Float16OptimizerWithFloat16Params) runs the step. */
static int megatron(const struct scenario *s)
{
    return scenario_framework(s) == FW_MEGATRON;
}

/* A memory-bound pass over `bytes` on the compute stream after `dep`, counted as optimizer time. */
static int emit_pass(struct build *b, double bytes, const char *label, int dep)
{
    struct prog *p = b->p;
    int t;

    if (bytes <= 0)
        return dep;
    t = prog_compute(p, ST_COMPUTE, TC_OPTIMIZER,
                     cost_membound(&b->s->hw.gpu, &b->s->hw.eff, bytes), prog_label(p, label, 0),
                     -1);
    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/*
 * Bytes per parameter Megatron's optimizer step moves beyond the fused Adam
 * update (memory_optimizer_traffic()): unscale and inf check of the main
 * gradients under fp16 loss scaling (read + write), the gradient norm (read),
 * and the separate copy of the main parameters to the model parameters
 * (reads the fp32 master copy again). See the header comment for sources.
 */
static double megatron_step_extra(const struct scenario *s)
{
    struct state_bytes sb;
    double g;

    memory_state_bytes(s, &sb);
    g = sb.grads;
    if (sb.master > 0 && g < 4) {
        /* 16-bit model gradients (fp16 runs without --accumulate-allreduce-grads-in-fp32):
         * _copy_model_grads_to_main_grads casts them into fp32 main gradients first, and the
         * passes below work on those. */
        return g + 4 + (s->train.precision == DT_FP16 ? 2 * 4 : 0) + 4 + sb.master;
    }
    return (s->train.precision == DT_FP16 ? 2 * g : 0) + g + sb.master;
}

static void ddp_init(struct build *b)
{
    struct ddp *d = xcalloc(1, sizeof(*d));
    const struct scenario *s = b->s;
    double elem = dtype_bytes(s->train.grad_dtype);
    struct shard_factors f;
    int i;

    b->dp_state = d;
    for (i = 0; i < b->nunits; i++)
        d->params += states_unit_trainable(b, i);
    rules_ddp_buckets(s, &d->first_bytes, &d->bucket_bytes);
    d->last_coll = -1;
    d->distributed = rules_grad_reduce_op(s) == COLL_REDUCE_SCATTER;
    memory_shard_factors(s, &f);
    states_emit_model_states(b, &f);
    /* PyTorch DDP's bucket copies of the gradients (gradient_as_bucket_view=False). */
    states_emit_static(b, MC_COMM, memory_ddp_bucket_bytes(s, d->params * elem),
                       "DDP gradient buckets");
}

static void issue_bucket(struct build *b, struct ddp *d, int dep)
{
    struct prog *p = b->p;
    int t;

    if (d->fill <= 0)
        return;
    if (d->distributed)
        t = prog_coll(p, ST_DP, TC_COMM_DP, COMM_DP, COLL_REDUCE_SCATTER, d->fill,
                      prog_label(p, "reduce-scatter bucket %d", d->nbuckets), -1);
    else
        t = prog_coll(p, ST_DP, TC_COMM_DP, COMM_DP, COLL_ALL_REDUCE, d->fill,
                      prog_label(p, "all-reduce bucket %d", d->nbuckets), -1);
    if (dep >= 0)
        prog_dep(p, t, dep);
    d->nbuckets++;
    d->fill = 0;
    d->last_coll = t;
}

/* Gradient accumulation outside the GEMMs, after the unit's backward on the compute stream
 * (before the next unit's backward in stream order): rules_ddp_grad_accum_bytes(). */
static void accumulate_grads(struct build *b, int unit, int mb, int grad_task)
{
    const struct scenario *s = b->s;
    double bytes = rules_ddp_grad_accum_bytes(s, states_unit_trainable(b, unit), mb);
    int t;

    if (bytes <= 0)
        return;
    t = prog_compute(
        b->p, ST_COMPUTE, TC_BWD, cost_membound(&s->hw.gpu, &s->hw.eff, bytes),
        prog_label(b->p, scenario_megatron_ddp(s) ? "main_grad += grad" : "grad accumulate", 0),
        mb);
    if (grad_task >= 0)
        prog_dep(b->p, t, grad_task);
}

static void ddp_post_backward(struct build *b, int unit, int mb, int grad_task)
{
    struct ddp *d = b->dp_state;
    double bytes = unit_grad_bytes(b, unit);

    accumulate_grads(b, unit, mb, grad_task);
    if ((mb != b->m - 1 && !rules_reduce_every_microbatch(b->s)) ||
        b->s->par.dp * b->s->par.cp == 1)
        return; /* no_sync: accumulate locally until the last micro-batch */
    if (!b->s->ddp.overlap)
        return;
    while (bytes > 0) {
        double cap = d->nbuckets == 0 ? d->first_bytes : d->bucket_bytes;
        double take = cap - d->fill < bytes ? cap - d->fill : bytes;
        d->fill += take;
        bytes -= take;
        if (d->fill >= cap)
            issue_bucket(b, d, grad_task);
    }
}

/* The gradient reduction after the last backward when it is not overlapped. */
static int reduce_after_backward(struct build *b, struct ddp *d, int dep)
{
    double bytes = d->params * dtype_bytes(b->s->train.grad_dtype);

    if (scenario_megatron_ddp(b->s)) {
        /* Scale by 1/dp in place, then one collective over the whole buffer. */
        dep = emit_pass(b, 2 * bytes, "grad buffer /= dp", dep);
        d->fill = bytes;
        issue_bucket(b, d, dep);
        return dep;
    }
    /* PyTorch DDP: one reduction of everything after backward, still bucketed. DeepSpeed's
     * engine flattens each buffer into a new tensor (buffered_allreduce_fallback ->
     * allreduce_bucket: flatten, all-reduce, copy back), one at a time. */
    double flat = bytes < d->bucket_bytes ? bytes : d->bucket_bytes;
    bool ds = rules_deepspeed_engine_ddp(b->s);

    if (ds)
        dep = dp_mem_mark(b, ST_DP, dep, MC_COMM, flat, "DeepSpeed flattened gradient buffer");
    while (bytes > 0) {
        double take = bytes < d->bucket_bytes ? bytes : d->bucket_bytes;
        d->fill = take;
        bytes -= take;
        issue_bucket(b, d, dep);
    }
    if (ds)
        dp_mem_mark(b, ST_DP, d->last_coll, MC_COMM, -flat, "free flattened buffer");
    return dep;
}

static void ddp_step(struct build *b)
{
    struct ddp *d = b->dp_state;
    int dep = b->grads_ready;
    bool meg = megatron(b->s), meg_ddp = scenario_megatron_ddp(b->s);
    double grad_bytes = d->params * dtype_bytes(b->s->train.grad_dtype);

    if (b->s->par.dp * b->s->par.cp > 1) {
        if (!b->s->ddp.overlap)
            dep = reduce_after_backward(b, d, dep);
        issue_bucket(b, d, dep);
        if (d->last_coll >= 0)
            dep = d->last_coll;
    }
    if (!d->distributed) {
        int t = emit_optimizer(
            b, d->params, memory_optimizer_traffic(b->s) + (meg ? megatron_step_extra(b->s) : 0),
            dep);
        if (meg_ddp)
            emit_pass(b, grad_bytes, "zero grad buffer", t);
        return;
    }
    {
        double n = b->s->par.dp * b->s->par.cp;
        struct state_bytes sb;
        double pbytes, cap;
        int t = emit_optimizer(
            b, d->params / n,
            memory_optimizer_traffic(b->s) + (meg ? megatron_step_extra(b->s) : 0), dep);
        struct prog *p = b->p;
        if (meg_ddp)
            emit_pass(b, grad_bytes, "zero grad buffer", t);
        /* Parameter all-gather of the updated shards, in the reduction's buckets of parameters. */
        memory_state_bytes(b->s, &sb);
        pbytes = d->params * sb.gathered;
        cap = d->bucket_bytes / dtype_bytes(b->s->train.grad_dtype) * sb.gathered;
        while (pbytes > 0 && n > 1) {
            double take = pbytes < cap ? pbytes : cap;
            int g = prog_coll(p, ST_DP_GATHER, TC_COMM_DP, COMM_DP, COLL_ALL_GATHER, take,
                              prog_label(p, "param all-gather", 0), -1);
            prog_dep(p, g, t);
            pbytes -= take;
        }
    }
}

static void ddp_release(struct build *b)
{
    free(b->dp_state);
    b->dp_state = NULL;
}

const struct dp_ops dp_ddp = {
    .name = "ddp",
    .init = ddp_init,
    .post_backward = ddp_post_backward,
    .step = ddp_step,
    .release = ddp_release,
};
