/*
 * rules.h - the rules of the training frameworks that both the engine's builders
 * (strategy/ddp.c, zero.c, fsdp.c, offload.c, build.c) and the closed-form estimate behind
 * `plan` (whatif/estimate*.c) follow, stated once: which implementation runs a sharding
 * mode, which collectives reduce the gradients and gather the parameters and when, the
 * bucket sizes, the passes and buffers around them, the CPU optimizer's rate, and the
 * point-to-point sizes of pipeline and context parallelism. Each rule cites its source next
 * to it (rules.c). Pure functions of a finalized scenario; none fails.
 *
 * The builders turn these rules into tasks; the estimate composes them in closed form. Where
 * the estimate departs from them (an approximation of its own), estimate_time.c and
 * estimate_memory.c say so next to the code, and tests/test_plan.c compares the estimate
 * with the engine on every shipped scenario.
 */
#ifndef SIMTRAIN_RULES_H
#define SIMTRAIN_RULES_H

#include <stdbool.h>

#include "model/scenario.h"
#include "net/collective.h"

/* The implementation that runs a scenario's data parallelism (the dp_ops of strategy.h). */
enum dp_impl {
    DPI_DDP,    /* PyTorch DDP or Megatron DDP, with Megatron's distributed optimizer (ddp.c) */
    DPI_ZERO12, /* DeepSpeed ZeRO stage 1 or 2 (zero.c) */
    DPI_ZERO3,  /* DeepSpeed ZeRO stage 3 (zero.c) */
    DPI_FSDP,   /* PyTorch FSDP / FSDP2, every ShardingStrategy (fsdp.c) */
    DPI_NONE    /* not modelled */
};

/* Which implementation runs `parallelism.sharding` under the scenario's framework. */
enum dp_impl rules_dp_impl(const struct scenario *s);

/* ---- when gradients are reduced, and how ------------------------------------------- */

/* The collective that reduces gradients: COLL_ALL_REDUCE, or COLL_REDUCE_SCATTER when the
 * optimizer states are sharded (every ZeRO stage, FSDP but NO_SHARD, Megatron's distributed
 * optimizer). */
enum coll_op rules_grad_reduce_op(const struct scenario *s);

/* Whether the gradients are reduced after every micro-batch's backward (ZeRO-2 and -3, FSDP)
 * rather than only after the one that ends gradient accumulation (DDP no_sync, ZeRO-1). */
bool rules_reduce_every_microbatch(const struct scenario *s);

/* Whether each rank's updated 16-bit shard is all-gathered after the optimizer step (ZeRO-1
 * and -2, Megatron's distributed optimizer): the parameters are replicated, the states not. */
bool rules_param_gather_after_step(const struct scenario *s);

/* Whether parameters are sharded and all-gathered per unit before its forward and backward
 * (ZeRO-3, FSDP FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD). */
bool rules_gathers_per_unit(const struct scenario *s);

/* Of those, whether a unit is freed after its forward and gathered again for its backward:
 * ZeRO-3 (release_sub_module), FSDP with reshard_after_forward but SHARD_GRAD_OP. */
bool rules_reshard_after_forward(const struct scenario *s);

/*
 * FSDP2 under pipeline parallelism (torch.distributed.pipelining, as torchtitan runs it): the
 * stage's backward runs with reshard_after_backward and requires_gradient_sync off, so a
 * unit's parameters stay unsharded through the step once gathered (torchtitan also keeps them
 * after forward), its gradients accumulate unsharded in reduce_dtype, and it reduce-scatters
 * once, after the stage's last backward of the step.
 */
bool rules_fsdp_pipelined(const struct scenario *s);

/* The communicator that shards and reduces: COMM_DP, or for HYBRID_SHARD COMM_DP_INTRA (the
 * replicate group COMM_DP_INTER then all-reduces the reduced shard). */
int rules_shard_comm(const struct scenario *s);

/* ---- buckets, passes and buffers ------------------------------------------------------ */

/* Does DeepSpeed's engine reduce unsharded gradients (ZeRO stage 0), after the whole backward? */
bool rules_deepspeed_engine_ddp(const struct scenario *s);

/* The gradient buckets of ddp.c: the first one's and the others' capacity, bytes. */
void rules_ddp_buckets(const struct scenario *s, double *first_bytes, double *bytes);

/*
 * Bytes of ddp.c's gradient-accumulation pass after micro-batch `mb` (0-based) for `params`
 * trainable parameters: Megatron's main_grad.add_ without gradient-accumulation fusion,
 * PyTorch's AccumulateGrad from the second micro-batch on; 0 where there is none.
 */
double rules_ddp_grad_accum_bytes(const struct scenario *s, double params, int mb);

/* DeepSpeed's ipg gradient buckets of zero.c (contiguous_gradients), bytes; 0 otherwise. */
double rules_zero_bucket_bytes(const struct scenario *s);

/*
 * The weight matrices ZeRO-3 gathers one by one for a unit of kind `kind` (enum
 * param_unit of strategy.h; `moe` for an MoE layer), forward order, elements per rank after
 * tensor parallelism, into elems[0 .. 4): a layer's attention QKV and output projection,
 * MLP input (gate and up together for SwiGLU) and output; the word and learned position
 * embeddings. Returns their count, 0 when the unit is taken as one tensor (the head, MoE
 * layers).
 */
int rules_zero3_weight_tensors(const struct scenario *s, int kind, bool moe, double elems[4]);

/* Duration of the optimizer step of `params` elements on the host CPU (offload), ns. */
sim_time rules_host_step_time(const struct scenario *s, double params);

/* ---- activation checkpointing ---------------------------------------------------------- */

/*
 * What layer `layer` (0-based over the whole model) recomputes, the `index`-th layer (0-based)
 * of its model chunk: training.recompute, resolved per block. Full with recompute_layers = k:
 * the first k layers of each chunk (Megatron --recompute-method block); full, or selective
 * with selective_policy blocks, with recompute_every = k: the blocks whose 1-based index is a
 * multiple of k (torchtitan's layer mode), with recompute_fraction = p < 1: fms-fsdp's evenly
 * spaced fraction; other selective policies recompute inside every layer.
 */
enum recompute rules_layer_recompute(const struct scenario *s, int layer, int index);

/* ---- model-parallel transfers --------------------------------------------------------- */

/* Bytes of one activation (or gradient) transfer between neighbouring pipeline stages. */
double rules_pp_send_bytes(const struct scenario *s);

/* Bytes of one K/V chunk passed around the context-parallel ring. */
double rules_cp_kv_bytes(const struct scenario *s);

#endif
