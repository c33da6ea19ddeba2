/*
 * memory.h - per-rank memory accounting of a training configuration: the
 * bytes of model state per parameter (weights by storage dtype, fp32 master
 * copy, gradients, optimizer states), how data-parallel sharding and CPU
 * offload divide them, what LoRA / QLoRA freeze, and the static allocations a
 * strategy places at time zero of a rank's program.
 *
 * Division of labour. This module owns the bytes, in closed form: strategies
 * (strategy/ddp.c, zero.c, fsdp.c) ask memory_shard_factors() how their
 * sharding divides each category, and strategy/states.c writes the model
 * states this module counts into their programs as time-zero marks; the
 * unsharded buffers a strategy adds (gathered parameters, buckets) it emits
 * itself. The closed-form estimate (whatif/estimate.h) reads the same
 * functions. Activations come from workload.h; the engine's tracker turns all
 * marks into the timeline and the peak (engine/).
 *
 * Model (sources in comments next to each figure; docs/memory.md):
 * - Mixed-precision AdamW: 2 B weights + 2-4 B gradients + 4 B fp32 master +
 *   8 B fp32 m and v = 16-18 B/param (ZERO §3.1 K = 12; formulas.md §2.1).
 * - ZeRO stage k divides optimizer states (and master) / gradients /
 *   parameters by the data-parallel degree N_d (ZERO §5.1-5.3, Fig. 1).
 * - LoRA freezes the base weights (no gradient, master or optimizer state) and
 *   trains r*(d_in + d_out) adapter parameters per targeted matrix (LORA
 *   §4.1); QLoRA stores the base projection weights as NF4 with block-wise
 *   constants (QLORA §3). The constants are not parameters, so sharding
 *   leaves them whole; under ZeRO-3 the quantized model is whole on each GPU
 *   at load; LitGPT's loop keeps the last micro-batch's NF4 GEMM inputs.
 * - CPU offload moves the offloaded categories to host memory: they occupy no
 *   GPU memory (their PCIe and CPU time belong to strategy/offload.c).
 */
#ifndef SIMTRAIN_MEMORY_H
#define SIMTRAIN_MEMORY_H

#include <stdbool.h>

#include "model/scenario.h"
#include "model/kinds.h"

/* Bytes per trainable parameter, unsharded. */
struct state_bytes {
    double params;     /* weights as stored for compute */
    double fp8_copies; /* persistent FP8 weight copies (Megatron + TE, fp8.h), per parameter */
    double gathered;   /* what the distributed optimizer all-gathers after the step */
    double master;     /* fp32 master copy (0 when none) */
    double grads;      /* gradient buffer */
    double optim;      /* optimizer states */
};

/*
 * How a rank holds each model-state category, as divisors of the unsharded
 * bytes: 1 = replicated, N = sharded N ways over the data-parallel group,
 * INFINITY = held in host memory (CPU offload): none of it on the GPU
 * (memory_host_bytes() gives the host's share).
 *
 * Expert (MoE) parameters are replicated over the expert-data-parallel group
 * only, so a sharded category divides them by N / ep instead of N
 * (memory_model_states() applies this).
 */
struct shard_factors {
    double params, master, grads, optim;
};

/*
 * The shard factors of a scenario's `parallelism.sharding` and
 * `training.offload`, with N = memory_shard_degree(s):
 *
 *   sharding            params  master  grads  optim   (ZERO §5; PyTorch FSDP api.py)
 *   none, fsdp_no_shard    1       1      1      1
 *   zero1                  1       N      1      N
 *   zero2                  1       N      N      N
 *   zero3, fsdp, hsdp      N       N      N      N
 *   fsdp_grad_op           N       N      N      N   (at rest; the gathered copy
 *                                                     alive from forward to backward
 *                                                     is the strategy's MC_GATHERED)
 *
 * then INFINITY for what offload moves to the host:
 *   offload: optimizer  master and optimizer states, and the gradients too
 *                       when the stage partitions them (zero2, zero3, FSDP
 *                       variants): ZeRO-Offload keeps only the 16-bit
 *                       parameters on the GPU, DeepSpeed's estimator 2*P
 *                       (formulas.md §2.3)
 *   offload: params     every category (ZeRO-Infinity offload_param; FSDP
 *                       CPUOffload(offload_params=True) moves parameters and
 *                       gradients, and the optimizer then steps on the CPU)
 *
 * QLoRA's paged optimizer keeps the optimizer states in host-backed unified
 * memory, paged to CPU RAM when the GPU runs short and back for the update,
 * after activations are freed (QLORA §3): optim = INFINITY.
 * Pure function; never fails.
 */
void memory_shard_factors(const struct scenario *s, struct shard_factors *f);

/*
 * The degree N over which sharded categories are divided: dp * cp (the
 * gradient-reduction group, as Megatron's distributed optimizer shards),
 * or the HSDP shard group (data-parallel peers inside a node). 1 for
 * unsharded strategies.
 */
double memory_shard_degree(const struct scenario *s);

/* Bytes per trainable parameter for the scenario's precision and optimizer. */
void memory_state_bytes(const struct scenario *s, struct state_bytes *out);

/*
 * Bytes per frozen base parameter under LoRA / QLoRA: the compute dtype, or
 * for a QLoRA projection weight (`quantized`) NF4 with its constants:
 * 0.5 + 4/64 B without double quantization, 0.5 + 1/64 + 4/(64*256) B with it
 * (QLORA §3, formulas.md §2.7). Embeddings, norms and the LM head stay 16-bit.
 */
double memory_frozen_bytes(const struct scenario *s, bool quantized);

/* Is the frozen base quantized (QLoRA's NF4, or LLM.int8 under lora_int8)? */
bool memory_quantized_base(const struct scenario *s);

/*
 * DoRA's transient workspace per rank, bytes (0 without training.lora.dora):
 * every forward of an adapted projection builds lora_B(lora_A(eye(d_in))) and
 * the weight norm ||W + s * BA|| (PEFT tuners/lora/dora.py DoraLinearLayer:
 * get_lora_weight, get_weight_norm): eye(d_in) and the product in fp32, the
 * scaled product and the sum as 16-bit weight-sized tensors, for the widest
 * adapted projection. Counted as a static workspace, as the dequantization
 * buffer is.
 */
double memory_dora_bytes(const struct scenario *s);

/* A rank's parameters by role, elements (after tp / pp / ep model sharding). */
struct param_roles {
    double trainable;    /* with gradients, master copy and optimizer states */
    double frozen;       /* frozen, stored at the compute dtype (LoRA base) */
    double frozen_quant; /* frozen projection weights stored as NF4 (QLoRA) */
    double expert;       /* of all the above, expert parameters (MoE) */
};

/*
 * The roles of `params` parameters of which `linear` are projection weights
 * (the ones QLoRA stores as NF4), `adapters` LoRA adapter parameters and
 * `expert` expert parameters: full fine-tuning trains all of them; LoRA
 * freezes the base and trains the adapters. Pure.
 */
void memory_roles(const struct scenario *s, double params, double linear, double adapters,
                  double expert, struct param_roles *out);

/* acc += times * r, role by role. */
void memory_add_roles(struct param_roles *acc, const struct param_roles *r, double times);

/* The roles of a whole (unsharded) model, for closed-form estimates. */
void memory_model_roles(const struct scenario *s, struct param_roles *out);

/*
 * Closed-form per-rank GPU model-state bytes: out[MC_PARAMS], out[MC_MASTER],
 * out[MC_GRADS], out[MC_OPTIM] for parameters `r` under factors `f` (other
 * entries set to 0). This is the accounting the emitted marks use, so the
 * ZeRO Figure 1 and DeepSpeed estimator figures come out of it.
 */
void memory_model_states(const struct scenario *s, const struct param_roles *r,
                         const struct shard_factors *f, double out[MC_COUNT]);

/*
 * Host memory one GPU's offloaded model states occupy (CPU offload, paged
 * optimizer), bytes: each offloaded category at its sharded size.
 */
double memory_host_bytes(const struct scenario *s, const struct param_roles *r);

/* Bytes per trainable parameter the optimizer step reads and writes (memory-bound time). */
double memory_optimizer_traffic(const struct scenario *s);

/*
 * QLoRA's dequantization buffer per rank, bytes (0 unless QLoRA): bitsandbytes
 * 0.41.1 MatMul4Bit (autograd/_functions.py) runs every base GEMM, forward
 * and backward, as `linear(A, dequantize_4bit(B, state).to(A.dtype).t())`:
 * a full 16-bit copy of the NF4 weight lives for the duration of the GEMM.
 * One such copy of the widest projection (the fused QKV weight h x (q + 2 kv)
 * or an MLP matrix h x f, per tp rank) is alive whenever a quantized GEMM
 * runs, the moment of the peak included (the start of backward); it is
 * counted as a static workspace.
 */
double memory_dequant_bytes(const struct scenario *s);

/*
 * QLoRA's NF4 block constants per rank, bytes (0 unless QLoRA): the absmax per
 * 64 weights (and, double-quantized, its 8-bit codes with one fp32 constant
 * per 256 blocks), memory_frozen_bytes(s, true) - 0.5 per NF4 weight. They
 * live in bitsandbytes' Params4bit.quant_state (nn/modules.py, 0.43), a
 * QuantState object of plain tensors, not a parameter; ZeRO-3 and FSDP
 * partition (and offload) parameter storage only, so every GPU keeps all of
 * them: memory_model_states() divides only the packed 4-bit data (0.5 B).
 */
double memory_quant_constants_bytes(const struct scenario *s, const struct param_roles *r);

/*
 * The whole stored model (parameters `r`, unsharded), bytes, that a GPU holds
 * before DeepSpeed ZeRO-3 partitions a QLoRA model; 0 otherwise. Transformers
 * skips deepspeed.zero.Init for quantized models (modeling_utils.py,
 * `if is_deepspeed_zero3_enabled() and not is_quantized`), so each rank
 * quantizes and places the whole model on its GPU, and ZeRO-3 partitions it
 * when the engine starts ("parameters first be fully loaded to each GPU and
 * then be sharded": DeepSpeed issues #5617, #5637, PEFT #1844, 2024). This is
 * the job's peak when the whole NF4 model outweighs a training step.
 */
double memory_qlora_load_bytes(const struct scenario *s, const struct param_roles *r);

/*
 * The previous micro-batch's inputs of the NF4 projections that are still
 * allocated during the next forward under LitGPT's loop, bytes per rank for
 * `layers` layers; 0 unless QLoRA without recompute in eager non-PEFT code.
 * bitsandbytes' MatMul4Bit keeps its input in `ctx.tensors = (A, B)`
 * (autograd/_functions.py, 0.41-0.43), not save_for_backward, so it lives
 * as long as the graph; LitGPT's finetune/lora.py rebinds `logits` and `loss`
 * only in the next iteration, after that micro-batch's forward, so each
 * forward runs with the last graph's inputs: the QKV and gate/up input (one
 * tensor), the out-projection and down-projection inputs, p*T*(2h + q + f)
 * per layer (tp divides q and f). Sized with the simulated micro-batch: with
 * variable-length data the previous batch is often shorter.
 */
double memory_qlora_retained_bytes(const struct scenario *s, double layers);

/*
 * The divisors `f` with the categories the scenario's offload or paged
 * optimizer keeps on the host set to INFINITY (none of them on the GPU).
 * `out` may be `f`. Pure.
 */
void memory_on_device(const struct scenario *s, const struct shard_factors *f,
                      struct shard_factors *out);

/*
 * PyTorch DDP's gradient bucket copies for `grad_bytes` of gradients: the
 * same size again with the default gradient_as_bucket_view=False
 * (torch/nn/parallel/distributed.py), none when there is no data-parallel
 * peer (a single process is not wrapped in DDP) or under Megatron's
 * contiguous gradient buffer.
 */
double memory_ddp_bucket_bytes(const struct scenario *s, double grad_bytes);

#endif
