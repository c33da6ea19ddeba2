/*
 * workload_internal.h - the parts of the operator model (workload.h) that its files share:
 * workload.c (the per-rank context of a shard, the operator primitives every list is built
 * from, the embedding and the head), workload_layer.c (a layer's attention and MLP operators,
 * its parameters and recompute figures) and workload_lora.c (LoRA and DoRA adapters, frozen
 * base projections, QLoRA's NF4 dequantization and LLM.int8 bases). Internal to those files.
 */
#ifndef SIMTRAIN_WORKLOAD_INTERNAL_H
#define SIMTRAIN_WORKLOAD_INTERNAL_H

#include <stdbool.h>

#include "model/workload.h"

/* What every operator of one shard's layer, embedding or head is sized by. */
struct ctx {
    const struct scenario *s;
    const struct gpu_spec *gpu;
    const struct efficiency *eff;
    enum dtype dt;        /* every GEMM but the FP8 projections (16-bit under FP8) */
    enum fp8_recipe fp8;  /* FP8 projections (FP8_NONE: none) */
    bool fp8_megatron;    /* TE through Megatron's modules (fused norm-linear, cached weights) */
    double micro_batches; /* per optimizer step, per rank (cached FP8 weights cast once) */
    double p;             /* bytes per activation element */
    double T;             /* tokens per rank entering GEMMs (b * s / cp) */
    double Tn;            /* tokens per rank in norms, dropout, residual (T / tp under SP) */
    double tp;
    bool lora;        /* LoRA or QLoRA: base weights frozen */
    double frozen;    /* full fine-tuning: frozen share of each weight GEMM's wgrad, 0 = none */
    bool qlora;       /* base projection weights stored as NF4 */
    bool int8;        /* base projection weights stored as LLM.int8 (finetune lora_int8) */
    bool quant;       /* either: bitsandbytes keeps each projection's input for backward */
    unsigned targets; /* enum lora_target bits (0 for full training) */
    bool eager;       /* unfused PyTorch modules (workload_eager()) */
    bool unfused;     /* eager without torch.compile: element-wise chains run op by op */
    bool py_norm;     /* unfused and RMSNorm as tensor ops (training.rmsnorm_impl python) */
    bool hf;          /* Hugging Face Transformers + PEFT model code (scenario_model_code()) */
    double window;    /* share of the causal attention pairs a windowed layer computes, <= 1 */
};

/* workload.c */

/* Fill `c` for scenario `s` and shard `sh` (no window: c->window = 1). */
void wl_ctx_init(struct ctx *c, const struct scenario *s, const struct shard *sh);

/* Append a zeroed operator to ops[0..max) and return it; asserts the table has room. */
struct op *wl_add_op(struct op *ops, int *n, int max, const char *name, int kind, int part,
                     int seg);

/* A weight GEMM (m x k)(k x n) x batch at c->dt, saving `saved` bytes. */
void wl_gemm(const struct ctx *c, struct op *o, double m, double n, double k, double batch,
             double saved);

/* A projection: wl_gemm() in FP8 when the recipe converts it, with its casts (fp8.h). */
void wl_proj(const struct ctx *c, struct op *o, double m, double n, double k, double batch,
             double saved, double k_glob, double n_glob, bool after_norm);

/* A memory-bound op moving `bytes` forward, twice that backward. */
void wl_membound(const struct ctx *c, struct op *o, double bytes, double saved);

/*
 * An element-wise chain run op by op: `fwd` and `bwd` bytes per element moved by `kf` and `kb`
 * kernels over `elems` elements (the kernels beyond the first are the op's extra kernels).
 */
void wl_chain(const struct ctx *c, struct op *o, double elems, double fwd, int kf, double bwd,
              int kb);

/* Adds a biased projection's bias-gradient reduction (rows x cols) to its wgrad. */
void wl_bias_grad(const struct ctx *c, struct op *o, double rows, double cols, bool biased);

/* RMSNorm as its tensor ops over `elems` elements (time, kernels, saved bytes but statistics). */
void wl_rmsnorm_chain(const struct ctx *c, struct op *o, double elems);

/* A pre-norm over the (SP-sharded) hidden states, appended to ops[0..max). */
void wl_norm_op(const struct ctx *c, struct op *ops, int *n, int max, const char *name, int part);

/* tanh soft-capping of `elems` values, in the attention core when `core`. */
void wl_softcap_op(const struct ctx *c, struct op *ops, int *n, int max, const char *name, int part,
                   double elems, bool core);

/* workload_attn.c */

/*
 * The fused attention core's forward and backward durations and extra kernels into `o`: `b`
 * sequences of `s` tokens (the whole sequence) on `cp` context-parallel ranks, `q` query
 * width per rank, `qkv_elems` the Q, K, V elements the kernels read per rank.
 */
void wl_flash_core(const struct ctx *c, struct op *o, double b, double s, int cp, double q,
                   double qkv_elems);

/* workload_lora.c */

/* A base projection under LoRA: no weight gradient, its input kept only where needed. */
void wl_freeze(const struct ctx *c, struct op *o, unsigned mask, bool quantized);

/* Adds one adapter's (and DoRA's) cost to `o`; returns its parameters per rank. */
double wl_adapter(const struct ctx *c, struct op *o, double T, double d_in, double d_out,
                  double batch);

/* lora_dropout's dropped copies of an adapted input, on `lora`; `base` may drop its input. */
void wl_adapter_dropout(const struct ctx *c, struct op *base, struct op *lora, double rows,
                        double d_in, bool base_needs, unsigned mask);

/* QLoRA: appends the NF4 -> bf16 dequantization of `weights` weights (none otherwise). */
void wl_dequant_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part,
                   double weights);

/* LLM.int8: appends the input quantization and weight dequantization (none otherwise). */
void wl_int8_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part,
                double in_elems, double weights);

/* LLM.int8: a base GEMM's forward at the int8 peak (nothing otherwise). */
void wl_int8_gemm(const struct ctx *c, struct op *o);

#endif
