/*
 * workload.h - a decoder-only transformer as operators: for one transformer
 * layer, the embedding and the LM head with loss, each operator's forward
 * and backward FLOPs, memory traffic, duration on the configured GPU, and the
 * bytes it saves for backward, all per rank after tensor/sequence/context
 * parallel sharding.
 *
 * Model choices and sources:
 * - GEMM FLOPs 2mnk; backward = dgrad + wgrad = 2x forward (NAR21 App., KOR22
 *   App. A). Per-layer structure generalised to GQA and SwiGLU as Megatron's
 *   num_floating_point_operations() does (formulas.md §1.3).
 * - Model FLOPs (MFU) count attention without a causal discount, as Korthikanti
 *   App. A eq. 7 and PaLM App. B do; durations of FlashAttention use the causal
 *   half (FA2 skips masked blocks; Megatron halves the s^2 term for that reason).
 *   FlashAttention's backward runs 5 of the 7 matmul passes: 2.5x forward (FA2 §3.1).
 * - Saved activations: Korthikanti §4 per-tensor accounting (16-bit
 *   activations, 1-byte dropout masks), generalised tensor by tensor to GQA
 *   (K and V of kv_heads * head_dim) and SwiGLU (gate, up and their product
 *   kept for backward); FlashAttention replaces the s^2 softmax terms by the
 *   output and fp32 log-sum-exp statistics (FA1 §3.1); normalisation statistics
 *   (fp32 per token) are counted, which Korthikanti ignores.
 * - Under sequence parallelism the replicated tensors (norm inputs and outputs,
 *   dropout masks) are divided by tp (KOR22 §4.2.2).
 * - LoRA / QLoRA (LORA §4.1, QLORA §3): the base weights are frozen, so base
 *   GEMMs skip their weight gradients (input gradients still flow to earlier
 *   adapters), and a frozen projection no longer saves its input for backward
 *   unless an adapter on it needs the same tensor (autograd saves a matmul
 *   operand only for the other operand's gradient). Each targeted matrix adds
 *   the adapter GEMMs x*A (T x d_in x r) and (xA)*B (T x r x d_out), their
 *   input and weight gradients, and saves xA (T x r). With lora_dropout > 0
 *   (training.lora.dropout; PEFT defaults to 0, LitGPT uses 0.05) the
 *   adapters of one input read a dropped copy of it, saved with its 1-byte
 *   mask instead of x. QLoRA dequantizes each NF4 projection
 *   weight to bf16 before every forward and backward GEMM (bitsandbytes
 *   MatMul4Bit): a memory-bound pass reading the NF4 bytes and writing 2 B per
 *   weight, in forward and again in backward. The embedding and the LM head
 *   stay frozen in 16 bits: no weight gradients (unless PEFT's modules_to_save
 *   trains a copy of them). LoRA on an LLM.int8 base (lora_int8) quantizes each
 *   base GEMM's input and runs it at the int8 peak, dequantizing the weight
 *   for the input gradient (workload_lora.c); DoRA adds the weight norm per forward
 *   and two saved outputs per adapted projection (dora(), workload_lora.c).
 * - Bias gradients: a projection with a bias reduces its output gradient over
 *   the tokens in backward (Megatron ColumnParallelLinear grad_output.sum(0)).
 * - The loss: fp32-upcast logits (Megatron's vocab-parallel cross-entropy as
 *   its separate fp32 passes, mpu/cross_entropy.py) or flash_attn's fused
 *   cross-entropy on the 16-bit logits (training.cross_entropy: fused).
 * - Fused attention kernels (training.attention_impl): FlashAttention-2 CUDA, the
 *   Triton FlashAttention of flash_attn_triton.py, FlashAttention-3, cuDNN, each at its
 *   published rate for the layer's head dimension and sequence (attn_table.h); the core
 *   runs in BF16 under FP8 (FP8 recipes convert the linears only). Under context
 *   parallelism the ring's per-chunk kernels and log-sum-exp merges (workload_attn.c).
 * - Eager element-wise chains (training.compile off): RMSNorm, RoPE and gated activations
 *   as their tensor ops, a kernel and a pass each (wl_chain(); torch.compile and Megatron's
 *   fused kernels do each in one), and grouped-query K/V repeated for SDPA.
 * - MoE token permutation and unpermutation (Megatron core moe_utils.py) as
 *   memory-bound passes over the T*k routed copies.
 * - Eager modules (workload_eager()) save more than Megatron's fused kernels
 *   (formulas.md §2.4 "Limits": measured 24-48 hidden-state copies per layer
 *   for Hugging Face models): RMSNorm keeps an fp32 copy of its input instead
 *   of the 16-bit one, SiLU-gated MLPs keep gate,
 *   silu(gate) and up, and the attention output is copied to a contiguous
 *   tensor before the out-projection. LayerNorm (a fused ATen kernel) and
 *   GeLU save the same in both.
 *
 * Files: workload.c (the embedding and the head, and the operator primitives: GEMMs,
 * projections, memory-bound passes, norms), workload_layer.c (a layer's attention and MLP
 * operators, its parameters and recompute figures), workload_attn.c (the fused attention core's
 * durations: one kernel, or context parallelism's per-chunk kernels and merges), workload_lora.c
 * (LoRA and DoRA adapters, frozen and quantized base projections), workload_params.c (parameter and
 * model-FLOP counts of the whole model), workload_host.c (the host time that issues a layer);
 * workload_internal.h holds what the first four share.
 */
#ifndef SIMTRAIN_WORKLOAD_H
#define SIMTRAIN_WORKLOAD_H

#include "model/scenario.h"

enum op_kind {
    OP_GEMM,
    OP_ATTN, /* attention core: QK^T, softmax, AV (fused or not) */
    OP_MEM,  /* memory-bound: norm, activation, dropout, residual, rope, loss */
    OP_EMBED /* embedding gather / scatter-add */
};

/* The two blocks of a layer between tensor-parallel collectives. */
enum layer_part {
    PART_ATTN,
    PART_MLP,
    PART_COUNT
};

/*
 * Where an op sits inside its layer part, between the tensor-parallel
 * collectives: the norm before the first projection, the MoE router, the
 * column-parallel projection (QKV, FC1 / gate-up, with their LoRA adapters and
 * QLoRA dequantization), what lies between it and the core (rope, activation),
 * the attention core, the row-parallel projection (output, FC2 / down, with
 * adapters) and the residual after it.
 */
enum op_seg {
    SEG_PRE,
    SEG_GATE,
    SEG_COL,
    SEG_MID,
    SEG_CORE,
    SEG_ROW,
    SEG_POST
};

#define MAX_OPS 32

struct op {
    char name[24];
    int kind;          /* enum op_kind */
    int part;          /* enum layer_part (layers), 0 otherwise */
    int seg;           /* enum op_seg */
    double m, n, k;    /* GEMM: (m x k) @ (k x n), per rank */
    double batch;      /* independent GEMMs of that shape (experts) */
    double flops;      /* forward FLOPs counted for MFU, per rank */
    double hw_flops;   /* forward FLOPs executed (causal skipping), per rank */
    double bytes;      /* forward memory traffic, bytes */
    sim_time t_fwd;    /* forward duration */
    sim_time t_dgrad;  /* backward w.r.t. inputs */
    sim_time t_wgrad;  /* backward w.r.t. weights (0 for ops without weights) */
    double saved;      /* bytes saved for backward (no recompute) */
    bool core;         /* recomputed by selective recompute (attention core) */
    bool fp8;          /* projection GEMMs in FP8 (training.fp8_recipe; fp8.h) */
    bool bias_in_cast; /* its bias gradient comes out of the FP8 output-gradient cast */
    int extra_kernels_fwd,
        extra_kernels_bwd; /* memory-bound kernels beyond its kind's (FP8 casts) */
    double kept; /* core ops: bytes of `saved` selective recompute keeps (Q, K, V inputs) */
};

/* The per-rank slice of the work: micro-batch, sequence and parallel degrees. */
struct shard {
    int b; /* micro-batch, sequences */
    int s; /* sequence length seen by attention (full, before cp) */
    int tp, cp, ep;
    bool sp;       /* sequence parallel */
    enum dtype dt; /* activation / matmul dtype */
};

/* The passes over a layer the host issues (layer_cost.host). */
enum host_pass {
    HOST_FWD,       /* forward with autograd */
    HOST_FWD_CKPT,  /* forward of a checkpointed layer (no_grad inside the checkpoint) */
    HOST_RECOMPUTE, /* its recomputation in backward */
    HOST_BWD,       /* backward */
    HOST_PASSES
};

struct layer_cost {
    struct op ops[MAX_OPS];
    int nops;
    sim_time fwd[PART_COUNT];         /* forward compute per part */
    sim_time dgrad[PART_COUNT];       /* backward input-gradient compute per part */
    sim_time wgrad[PART_COUNT];       /* backward weight-gradient compute per part */
    sim_time recompute_selective;     /* forward time of the attention core */
    double act[3];                    /* saved bytes by enum recompute (none, selective, full) */
    double params[PART_COUNT];        /* parameters per rank, elements */
    double linear_params[PART_COUNT]; /* of which projection weights (QLoRA quantizes these) */
    double lora_params[PART_COUNT];   /* LoRA adapter parameters per rank (0 for full training) */
    double flops_fwd;                 /* model FLOPs forward per rank */
    double tp_bytes;                  /* size of one TP collective (b*s*h), bytes */
    double moe_a2a_bytes;             /* MoE: bytes one all-to-all dispatch moves per rank */
    double bwd_transient;             /* bytes of the MLP backward's activation gradients */
    sim_time host[HOST_PASSES][PART_COUNT]; /* host time to issue a part (workload_host.c), ns */
    bool softmax_torch; /* Megatron's fused softmax fell back to its PyTorch ops (b*np % 4) */
};

struct edge_cost { /* embedding (first stage) or head + loss (last stage) */
    struct op ops[8];
    int nops;
    sim_time fwd, bwd;
    double act;             /* bytes saved for backward */
    double logits_bytes;    /* fp32 logits kept for the loss backward (head) */
    double transient_bytes; /* peak transient during the forward (head logits) */
    double params;          /* per rank, elements */
    double flops_fwd;
    sim_time host_fwd, host_bwd; /* the CPU's issue per micro-batch (workload_host.c), ns */
};

void workload_shard(const struct scenario *s, struct shard *sh);

/* Cost of one transformer layer; moe selects the MoE MLP. */
void workload_layer(const struct scenario *s, const struct shard *sh, bool moe,
                    struct layer_cost *out);

/*
 * The same for a layer whose attention is `windowed` (workload_is_windowed()):
 * FlashAttention skips the blocks outside the window (flash-attn 2.3
 * window_size, as transformers' flash_attention_2 passes sliding_window), so
 * its FLOPs, model FLOPs included, scale by workload_window_share(); unfused
 * attention computes every score and masks the rest (transformers' eager
 * attention with its sliding-window mask): no change. Memory is unchanged
 * either way (FlashAttention saves Q, K, V, O and the log-sum-exp).
 */
void workload_layer_variant(const struct scenario *s, const struct shard *sh, bool moe,
                            bool windowed, struct layer_cost *out);
void workload_embedding(const struct scenario *s, const struct shard *sh, struct edge_cost *out);
void workload_head(const struct scenario *s, const struct shard *sh, struct edge_cost *out);

/*
 * Does the scenario run unfused PyTorch modules (Hugging Face / LitGPT /
 * torchtitan eager) rather than Megatron's fused kernels? Eager unless the
 * model code (scenario_model_code(): training.model_code, for `auto` the
 * framework's) is Megatron's. It changes what is saved for backward: see
 * "Eager modules" above.
 */
bool workload_eager(const struct scenario *s);

/* ---- host time (workload_host.c: the CPU issuing a layer) ---- */

/*
 * Host (CPU) time to issue part `part` of a layer in pass `pass` (enum host_pass), with the
 * layer's operators `lc` (kernel and autograd-node counts from their kinds) and the scenario's
 * host costs per operation class (struct host_cfg). The engine runs it on the rank's host
 * stream ahead of the part's kernels (strategy/layer.c). ns.
 */
sim_time workload_host_time(const struct scenario *s, const struct layer_cost *lc, int part,
                            int pass);

/* Fill lc->host for every part and pass. */
void workload_host_times(const struct scenario *s, struct layer_cost *lc);

/*
 * Host time to issue the embedding (with the step's batch: get_batch) or the head with its
 * loss, per micro-batch, forward and backward: e->host_fwd, e->host_bwd (Megatron model code;
 * 0 for the others, not counted yet). ns.
 */
void workload_edge_host(const struct scenario *s, struct edge_cost *e, bool head);

/*
 * Duration of an optimizer step over `params` parameters of this rank moving
 * `bytes_per_param` each (memory_optimizer_traffic()), with the launches of
 * training.optimizer_impl (workload_host.c). ns.
 */
sim_time workload_optimizer_time(const struct scenario *s, double params, double bytes_per_param);

/* Is layer i (0-based) an MoE layer? */
bool workload_is_moe(const struct model *m, int layer);

/* Weight matrices of the (dense or expert) MLP: 2 for GeLU, 3 for SwiGLU and gated GeLU. */
int workload_mlp_matrices(const struct model *m);

/*
 * Does layer i attend within a sliding window shorter than the sequence?
 * model.window > 0 and < training.seq_len, and the layer is not one of the
 * global layers of model.window_pattern.
 */
bool workload_is_windowed(const struct scenario *s, int layer);

/*
 * The share of full causal attention's query-key pairs that a window of
 * `window` keys computes over `seq_len` tokens: (2 s w - w^2) / s^2; 1 when
 * the window is 0 or at least the sequence.
 */
double workload_window_share(int seq_len, int window);

/* Parameter counts of the whole model (elements, not sharded). */
double workload_params_layer(const struct model *m, bool moe);
double workload_params_embedding(const struct model *m); /* tokens + positions */
double workload_params_head(const struct model *m);      /* final norm + untied output */
double workload_params_total(const struct model *m);
double workload_params_expert(const struct model *m); /* one routed expert, biases included */
double workload_params_active(const struct model *m); /* per token (MoE: top-k experts) */

/* Projection weights of one layer (q, k, v, o and the MLP matrices; experts included), elements. */
double workload_linear_params_layer(const struct model *m, bool moe);

/*
 * LoRA adapter parameters of one layer, unsharded: r * (d_in + d_out) per
 * targeted matrix (LORA §4.1), each expert's matrices included; 0 for full
 * fine-tuning. `gate` has no matrix in a GeLU MLP (fc1 is `up`, fc2 `down`).
 */
double workload_lora_params_layer(const struct scenario *s, bool moe);
double workload_lora_params_total(const struct scenario *s);

/*
 * Bytes per NF4 weight with its block-wise constants (QLORA §3): 0.5 + 4/64
 * plain, 0.5 + 1/64 + 4/(64*256) with double quantization.
 */
double workload_nf4_bytes(bool double_quant);

/*
 * Trainable parameters of a whole module PEFT trains beside the adapters
 * (training.lora.modules_to_save): the token embedding (`embedding`) or the LM
 * head, V * h each, a deep copy next to the frozen original
 * (ModulesToSaveWrapper, peft/utils/other.py); 0 when not listed or not LoRA.
 */
double workload_saved_module_params(const struct scenario *s, bool embedding);

/* Trainable parameters of the model: all of them, or the LoRA adapters and saved modules. */
double workload_params_trainable(const struct scenario *s);

/*
 * Model FLOPs of one optimizer step, for the whole global batch: the computation the step
 * performs, without recomputation and without causal discount (Korthikanti App. A eq. 7
 * generalised per formulas.md §1.3: 6 FLOPs per weight and token, 12·s·q per layer and token
 * for the attention core, as PaLM App. B counts). Weights that train nothing (the base model
 * under LoRA and QLoRA, the LM head) run forward and input gradient only: 4 per weight and
 * token; the adapters count 6. MFU divides these by the step time, GPUs and peak.
 */
double workload_model_flops(const struct scenario *s);

/*
 * Hardware FLOPs of one step: the model FLOPs plus the recomputation's forward (full: the
 * layers recomputed, recompute_layers of each chunk when given; selective: the unfused
 * attention core, none with FlashAttention). HFU divides these.
 */
double workload_hardware_flops(const struct scenario *s);

/* workload_model_flops()'s convention in words, for the reports (a static string). */
const char *workload_flops_convention(const struct scenario *s);

#endif
