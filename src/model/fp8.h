/*
 * fp8.h - FP8 training as the frameworks run it (training.fp8_recipe): which projections
 * run their three GEMMs in FP8, and the cast, amax and transpose kernels each recipe adds
 * around them, with what they keep for backward. workload.c calls it for every projection.
 *
 * Which linears. Every transformer projection (QKV, attention output, MLP up/gate and down,
 * the experts') under Transformer Engine and torchao; never the LM head, the router, the
 * attention core or LoRA adapters (workload.c). torchao's auto_filter_small_kn
 * (training.fp8_filter_small; pytorch/ao torchao/float8/float8_linear_utils.py @36027d8
 * lines 136-215, which torchtitan wires in) keeps a linear of weight N x K in BF16 when
 * K or N is not a multiple of 16, and for tensorwise when K <= 4096 and N <= 1024, for
 * rowwise when N <= 2048, K <= 1024, or N <= 4096 and K <= 2048.
 *
 * Casts per linear per micro-batch, bytes per element of the input X (M x K), the weight W
 * (K x N) and the output gradient dY (M x N), BF16 read 2, FP8 written 1:
 *   te_delayed   (TE v0.10 te.Linear, linear.py 87-181, base.py 721-745; delayed scaling
 *                needs no amax pass, the cast uses the previous scale and writes the amax):
 *                X cast+transpose 4, W cast+transpose 4, dY cast+transpose(+bias grad) 4,
 *                one kernel each, plus amax_and_scale_update forward and backward. Through
 *                Megatron's modules (TELayerNormColumnParallelLinear) the norm writes FP8
 *                itself, so a projection after a norm only transposes it (read 1, write 1),
 *                and is_first_microbatch caches the FP8 weight: cast once per step, two FP8
 *                copies (1 B each) kept (memory.c). Eager callers (llm-foundry's fc_type te
 *                never passes is_first_microbatch) recast it every micro-batch and keep its
 *                FP8 transpose, 1 B per weight, from forward to backward.
 *   te_current   (TE 2.x Float8CurrentScaling): as te_delayed plus an amax pass over each
 *                tensor before its cast (read 2).
 *   torchao_tensorwise (torchao/testing/training/roofline_utils.py @104f01a lines 126-308):
 *                X and dY 6 in three kernels (amax, amax reduce, cast to both layouts), 4 in
 *                two when torch.compile fuses the amax into the producing op; W 8 in four
 *                kernels (never fused): amax and the forward cast in forward, the backward
 *                cast in backward.
 *   torchao_rowwise: X and dY 8 in two kernels (6 fused); W 3 forward, 7 backward (a
 *                transpose and a cast), three kernels.
 * torchao saves the BF16 input and the weight reference for backward (float8_linear.py line
 * 45): nothing changes in memory. Transformer Engine saves the FP8 transpose of the input
 * (1 B per element) instead of the 16-bit input (linear.py 225-233).
 */
#ifndef SIMTRAIN_FP8_H
#define SIMTRAIN_FP8_H

#include <stdbool.h>

#include "model/scenario.h"

/* One projection: its GEMM shape per rank and where it sits. */
struct fp8_proj {
    double m, k, n, batch; /* (m x k) @ (k x n), `batch` experts, per rank */
    double k_glob, n_glob; /* in and out features of the whole weight (before tp) */
    bool after_norm;       /* the projection reads a norm's output (QKV, MLP up) */
    double micro_batches;  /* per optimizer step on this rank */
};

/* What the recipe does to one projection. */
struct fp8_cost {
    bool fp8;                     /* its GEMMs run in FP8 */
    int kernels_fwd, kernels_bwd; /* how many (host.c counts their launches) */
    sim_time fwd, bwd;            /* cast kernels added to the forward and the backward */
    double input_bytes;           /* bytes per input element it saves for backward (0: unchanged) */
    double weight_saved;          /* bytes of FP8 weight copies alive from forward to backward */
    bool bias_grad_fused;         /* the bias gradient is computed by the output-gradient cast */
};

/*
 * The recipe `s->train.fp8_recipe` applied to projection `pr` on `s`'s GPU (all zero, fp8
 * false, when the precision is not FP8 or the filter keeps it in BF16). `megatron` selects
 * Megatron's TE modules (fused norm-linear, cached weights). Pure.
 */
void fp8_projection(const struct scenario *s, bool megatron, const struct fp8_proj *pr,
                    struct fp8_cost *out);

/*
 * Bytes per projection weight of persistent FP8 copies: 2 (weight and its transpose) for
 * Transformer Engine through Megatron's modules, which cache them across micro-batches;
 * 0 otherwise.
 */
double fp8_weight_copy_bytes(const struct scenario *s, bool megatron);

#endif
