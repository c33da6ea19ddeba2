/*
 * rules.c - the framework rules the builders and the closed-form estimate share (see
 * rules.h), each with its source. The strategies' files (ddp.c, zero.c, fsdp.c, offload.c)
 * describe the mechanisms at length; this file states the decisions.
 */
#include "strategy/rules.h"

#include "model/memory.h"
#include "strategy/strategy.h"

/* DeepSpeedCPUAdam vs torch.optim.Adam on the CPU: "DeepSpeedCPUAdam is 5X-7X faster than the
 * standard PyTorch implementation" (DeepSpeed ZeRO-Offload tutorial, deepspeed.ai); midpoint. */
#define TORCH_CPU_ADAM_SLOWDOWN 6.0

/*
 * Megatron runs zero1 as its distributed optimizer (ddp.c); every other ZeRO stage is
 * DeepSpeed's (Megatron-DeepSpeed when combined with tensor or pipeline parallelism;
 * PyTorch's ZeroRedundancyOptimizer is not modelled separately). The FSDP sharding
 * strategies are PyTorch's, version 1 or 2.
 */
enum dp_impl rules_dp_impl(const struct scenario *s)
{
    switch (s->par.sharding) {
    case SHARD_NONE:
        return DPI_DDP;
    case SHARD_ZERO1:
        return scenario_framework(s) == FW_MEGATRON ? DPI_DDP : DPI_ZERO12;
    case SHARD_ZERO2:
        return DPI_ZERO12;
    case SHARD_ZERO3:
        return DPI_ZERO3;
    case SHARD_FSDP:
    case SHARD_FSDP_GRAD_OP:
    case SHARD_HSDP:
    case SHARD_FSDP_NO_SHARD:
        return DPI_FSDP;
    default:
        return DPI_NONE;
    }
}

/* ---- when gradients are reduced, and how ------------------------------------------- */

/*
 * Megatron's distributed optimizer reduce-scatters the DDP buckets (dist_optimizer.md);
 * DeepSpeed's average_tensor reduces each bucket to the owner of each partition, the volume
 * of a reduce-scatter (stage_1_and_2.py; stage3.py __reduce_and_partition_ipg_grads); FSDP
 * reduce-scatters every unit but NO_SHARD's, which all-reduces (_runtime_utils.py
 * _post_backward_hook).
 */
enum coll_op rules_grad_reduce_op(const struct scenario *s)
{
    switch (rules_dp_impl(s)) {
    case DPI_DDP:
        return s->par.sharding == SHARD_ZERO1 ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
    case DPI_ZERO12:
    case DPI_ZERO3:
        return COLL_REDUCE_SCATTER;
    case DPI_FSDP:
        return s->par.sharding == SHARD_FSDP_NO_SHARD ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER;
    case DPI_NONE:
    default:
        return COLL_ALL_REDUCE;
    }
}

/*
 * DDP under no_sync reduces in the last micro-batch's backward only (distributed.py), and so
 * does ZeRO-1 ("if self.partition_gradients or self.is_gradient_accumulation_boundary",
 * stage_1_and_2.py); ZeRO-2 and -3 partition the gradients, so they reduce in every
 * backward, and so does FSDP (no no_sync: its docstring warns no_sync keeps unsharded
 * gradients; llm-foundry's Composer applies no_sync only to DDP).
 */
bool rules_reduce_every_microbatch(const struct scenario *s)
{
    switch (rules_dp_impl(s)) {
    case DPI_ZERO12:
        return s->par.sharding == SHARD_ZERO2;
    case DPI_ZERO3:
        return true;
    case DPI_FSDP:
        return !rules_fsdp_pipelined(s);
    case DPI_DDP:
    case DPI_NONE:
    default:
        return false;
    }
}

/*
 * ZeRO-1 and -2 all-gather each rank's updated 16-bit partition after the step
 * (runtime/utils.py all_gather_dp_groups); so does Megatron's distributed optimizer
 * (dist_optimizer.md). ZeRO-3 and FSDP gather per unit instead.
 */
bool rules_param_gather_after_step(const struct scenario *s)
{
    enum dp_impl impl = rules_dp_impl(s);

    return impl == DPI_ZERO12 || (impl == DPI_DDP && s->par.sharding == SHARD_ZERO1);
}

/* ZeRO-3 fetches every sub-module (fetch_sub_module); FSDP unshards every unit but NO_SHARD's. */
bool rules_gathers_per_unit(const struct scenario *s)
{
    enum dp_impl impl = rules_dp_impl(s);

    return impl == DPI_ZERO3 || (impl == DPI_FSDP && s->par.sharding != SHARD_FSDP_NO_SHARD);
}

/*
 * ZeRO-3 releases a module after its forward (release_sub_module; zero.c keeps those reused
 * within stage3_max_reuse_distance); FSDP reshards after forward unless SHARD_GRAD_OP or
 * reshard_after_forward is off (api.py; FSDP2 fully_shard(reshard_after_forward)).
 */
bool rules_reshard_after_forward(const struct scenario *s)
{
    if (!rules_gathers_per_unit(s))
        return false;
    if (rules_dp_impl(s) == DPI_ZERO3)
        return true;
    return s->par.sharding != SHARD_FSDP_GRAD_OP && s->fsdp.reshard_after_forward;
}

/*
 * torch/distributed/pipelining/stage.py backward_maybe_with_nosync (pytorch 0138610): for an
 * FSDPModule every backward but the schedule's last runs with set_reshard_after_backward(False)
 * and set_requires_gradient_sync(False); the last one's post_backward reduces and reshards.
 * FSDP2 keeps the unsharded gradient across those backwards, upcast to reduce_dtype
 * (_fsdp_param.py to_accumulated_grad_if_needed / accumulate_unsharded_grad_if_needed).
 */
bool rules_fsdp_pipelined(const struct scenario *s)
{
    return rules_dp_impl(s) == DPI_FSDP && s->par.pp > 1 && s->fsdp.version == 2 &&
           s->par.sharding != SHARD_FSDP_NO_SHARD;
}

/* HYBRID_SHARD shards within a node and all-reduces across nodes (_reduce_grad, _inter_node_pg). */
int rules_shard_comm(const struct scenario *s)
{
    return rules_dp_impl(s) == DPI_FSDP && s->par.sharding == SHARD_HSDP ? COMM_DP_INTRA : COMM_DP;
}

/* ---- buckets, passes and buffers ------------------------------------------------------ */

/*
 * PyTorch DDP: bucket_cap_mb = 25 MiB with a first bucket of _DEFAULT_FIRST_BUCKET_BYTES =
 * 1 MiB (ddp.bucket_bytes, ddp.first_bucket_bytes; torch/nn/parallel/distributed.py).
 * Megatron DDP: bucket_size = max(40M, 1M * dp) parameters, the first one too
 * (distributed_data_parallel_config.py), at the gradient dtype.
 */
void rules_ddp_buckets(const struct scenario *s, double *first_bytes, double *bytes)
{
    double elem = dtype_bytes(s->train.grad_dtype);

    if (rules_deepspeed_engine_ddp(s)) {
        /* engine.allreduce_gradients(bucket_size=MEMORY_OPT_ALLREDUCE_SIZE = 500000000
           elements), buffered_allreduce_fallback (deepspeed/runtime/engine.py L47, L927-941
           @v0.3.13; L110, L1970-1984, L2533-2547 @v0.16.0) */
        *bytes = *first_bytes = 5e8 * elem;
        return;
    }
    if (scenario_megatron_ddp(s)) {
        double params = 1e6 * s->par.dp > 4e7 ? 1e6 * s->par.dp : 4e7;
        *bytes = *first_bytes = params * elem;
    } else {
        *bytes = s->ddp.bucket_bytes;
        *first_bytes = s->ddp.first_bucket_bytes;
    }
}

/*
 * DeepSpeed's engine with ZeRO stage 0 (Megatron-DeepSpeed, HF with a stage-0 config):
 * engine.backward() calls allreduce_gradients() after loss.backward(), which at the accumulation
 * boundary runs buffered_allreduce_fallback: the gradients flattened into buffers of 5e8
 * elements, each all-reduced and copied back, after the whole backward (no hooks, no overlap;
 * deepspeed/runtime/engine.py L927-941 @v0.3.13, L1970-1984 and L2072-2074 @v0.16.0).
 */
bool rules_deepspeed_engine_ddp(const struct scenario *s)
{
    return s->par.sharding == SHARD_NONE && scenario_framework(s) == FW_DEEPSPEED &&
           !scenario_megatron_ddp(s);
}

/*
 * Gradient accumulation outside the weight-gradient GEMMs, per unit and micro-batch:
 * - Megatron without gradient-accumulation fusion: param_hook runs
 *   main_grad.add_(param.grad) every micro-batch, the first included
 *   (megatron/model/distributed.py DistributedDataParallel._make_param_hook):
 *   read the 16-bit gradient, read and write main_grad (grad_dtype);
 * - PyTorch DDP under no_sync: autograd's AccumulateGrad keeps the first
 *   micro-batch's gradient tensor and adds each later one in place
 *   (torch/csrc/autograd/functions/accumulate_grad.h, `variable_grad +=
 *   new_grad`): read both, write one, in grad_dtype.
 * Megatron with fusion (the default) accumulates inside the GEMM epilogue.
 */
double rules_ddp_grad_accum_bytes(const struct scenario *s, double params, int mb)
{
    double g = dtype_bytes(s->train.grad_dtype);

    if (scenario_megatron_ddp(s))
        return s->ddp.grad_accum_fusion ? 0 : params * (dtype_bytes(s->train.precision) + 2 * g);
    return mb == 0 ? 0 : params * 3 * g;
}

/*
 * contiguous_gradients keeps one ipg buffer of reduce_bucket_size elements at the 16-bit
 * parameter dtype, two with overlap_comm for stages 1 and 2 (ipg_index double buffering,
 * stage_1_and_2.py); stage 3 keeps one (stage3.py; formulas.md §2.3).
 */
double rules_zero_bucket_bytes(const struct scenario *s)
{
    enum dp_impl impl = rules_dp_impl(s);
    struct state_bytes sb;

    if (!s->zero.contiguous_gradients || (impl != DPI_ZERO12 && impl != DPI_ZERO3))
        return 0;
    memory_state_bytes(s, &sb);
    if (impl == DPI_ZERO3)
        return s->zero.reduce_bucket_size * sb.params;
    return (s->zero.overlap_comm ? 2 : 1) * s->zero.reduce_bucket_size * sb.params;
}

int rules_zero3_weight_tensors(const struct scenario *s, int kind, bool moe, double elems[4])
{
    const struct model *m = &s->model;
    double tp = s->par.tp, h = m->hidden, q = (double)m->heads * m->head_dim;
    double kv = (double)m->kv_heads * m->head_dim, f = m->ffn_hidden;
    int n = 0;

    if (kind == UNIT_LAYER && !moe) {
        elems[n++] = h * (q + 2 * kv) / tp;
        elems[n++] = q * h / tp;
        elems[n++] = h * f * (workload_mlp_matrices(m) - 1) / tp;
        elems[n++] = f * h / tp;
    } else if (kind == UNIT_EMBED) {
        elems[n++] = (double)m->vocab * h / tp;
        if (m->pos == POS_LEARNED)
            elems[n++] = (double)m->max_seq * h;
    }
    return n;
}

/*
 * The hardware file's host.adam_throughput models DeepSpeedCPUAdam (memory-bound, see the
 * hardware files); a framework without it (FSDP CPUOffload steps a torch.optim optimizer on
 * the CPU) runs TORCH_CPU_ADAM_SLOWDOWN times slower.
 */
sim_time rules_host_step_time(const struct scenario *s, double params)
{
    double rate = s->hw.host.adam_Pps;

    if (scenario_framework(s) != FW_DEEPSPEED)
        rate /= TORCH_CPU_ADAM_SLOWDOWN;
    return ns_from_s(params / rate);
}

/* ---- activation checkpointing ---------------------------------------------------------- */

/*
 * fms-fsdp's selective checkpointing of a fraction p of the blocks
 * (fms_fsdp/policies/ac_handler.py L43-58 @5a296afe): walking the blocks 1, 2, ..., block i
 * is wrapped when i * p >= cut_off, cut_off starting at 1/2 and growing by one with each
 * wrapped block, so p = 1/2 wraps 1, 3, 5, ... and p = 1/3 wraps 2, 5, 8, ... The same loop,
 * to compare as Python does.
 */
static bool fraction_wraps(double p, int block)
{
    double cut_off = 0.5;
    bool wrapped = false;

    for (int i = 1; i <= block; i++) {
        wrapped = i * p >= cut_off;
        if (wrapped)
            cut_off += 1;
    }
    return wrapped;
}

enum recompute rules_layer_recompute(const struct scenario *s, int layer, int index)
{
    const struct training *t = &s->train;
    bool blocks =
        t->recompute == RC_FULL || (t->recompute == RC_SELECTIVE && t->selective == SEL_BLOCKS);

    if (!blocks)
        return t->recompute;
    if (t->recompute == RC_FULL && t->recompute_layers > 0)
        return index < t->recompute_layers ? RC_FULL : RC_NONE;
    /* torchtitan's layer mode: `_count % ac_freq == 0` over every block wrapped
     * (torchtitan/parallelisms/parallelize_llama.py L277-285 @9dec370). */
    if (t->recompute_every > 0 && (layer + 1) % t->recompute_every)
        return RC_NONE;
    if (t->recompute_fraction < 1 && !fraction_wraps(t->recompute_fraction, layer + 1))
        return RC_NONE;
    return RC_FULL;
}

/* ---- model-parallel transfers --------------------------------------------------------- */

/* fp8 training keeps activations in 16 bits outside the GEMMs (Transformer Engine; workload.c). */
static double act_bytes(const struct scenario *s)
{
    double p = dtype_bytes(s->train.precision);

    return p < 2 ? 2 : p;
}

/* b * s * h activations of one micro-batch, scattered over tp (NAR21 §4.1). */
double rules_pp_send_bytes(const struct scenario *s)
{
    double act = (double)s->train.micro_batch * s->train.seq_len / s->par.cp * s->model.hidden *
                 act_bytes(s);

    return act / s->par.tp;
}

/*
 * K and V of this rank's s/cp tokens, kv_heads/tp heads each (context_parallel.md). Eager code
 * repeats grouped-query K and V to every query head before SDPA (torchtitan repeat_kv,
 * model.py L201-202 @9dec370), so PyTorch's context parallelism passes heads/tp of them.
 */
double rules_cp_kv_bytes(const struct scenario *s)
{
    const struct model *m = &s->model;
    double kvh = workload_eager(s) && m->kv_heads < m->heads ? m->heads : m->kv_heads;

    return 2.0 * s->train.micro_batch * ((double)s->train.seq_len / s->par.cp) * (kvh / s->par.tp) *
           m->head_dim * act_bytes(s);
}
