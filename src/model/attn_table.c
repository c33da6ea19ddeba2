/*
 * attn_table.c - published fused-attention rates (see attn_table.h). Every number is a bar
 * label of a FlashAttention benchmark figure, TFLOP/s, at sequence 512, 1k, 2k, 4k, 8k, 16k
 * (batch x sequence = 16k tokens, hidden 2048: FA2 paper §4.1), read from the figures in
 * Dao-AILab/flash-attention @0251105 (assets/):
 *
 * [FA2-A100] flash2_a100_fwd_bwd_benchmark.png (FlashAttention-2 paper, arXiv:2307.08691,
 *   Fig. 4): forward + backward on A100 80GB SXM4. Its "FlashAttention Triton" bars are
 *   flash_attn.flash_attn_triton (benchmarks/benchmark_causal.py at the FA2 release,
 *   4f285b35, line 130), the file llm-foundry copied into
 *   llmfoundry/models/layers/flash_attn_triton.py (MPT attn_impl: triton).
 * [FA2-H100] flash2_h100_fwd_bwd_benchmark.png: forward + backward on H100 80GB SXM5
 *   (FlashAttention-1 CUDA and FlashAttention-2; no Triton bars).
 * [FA3] flash3_fp16_fwd.png (FlashAttention-3 paper, arXiv:2407.08608, Fig. 5): forward,
 *   FP16, H100 80GB SXM5: FlashAttention-2, cuDNN, FlashAttention-3.
 *
 * What is derived (stated, not measured):
 * - Triton on Hopper: no published figure. The Triton kernel implements FlashAttention-1's
 *   algorithm with mma.sync like FA1's CUDA kernels, and on A100 runs at FA1's rate (within
 *   10 % at head dimension 128; its header: "Overall Triton forward + backward is slightly
 *   slower than CUDA forward + backward"): H100 Triton = H100 FA1 x (A100 Triton / A100 FA1)
 *   at each point.
 * - FlashAttention-3 and cuDNN forward + backward on Hopper: FA2's forward + backward x their
 *   forward speed-up over FA2 at the same point ([FA3] has no backward figure in the repo).
 * - cuDNN on Ampere, and Volta and Ada: FlashAttention-2's A100 rates (no figure); Blackwell:
 *   the Hopper tables (no figure for B200 in these sources).
 * Two bar labels of [FA2-A100] sit under the legend: FA2 head dim 128 without mask at 512
 * (drawn at about 150; taken as the 1k point's 173 x 248/294, the H100 ratio) and head dim
 * 64 at 1k (read as 153).
 */
#include "model/attn_table.h"

#include <math.h>

#define NSEQ 6 /* 512 .. 16k */

/* [hd 64 / 128][no mask / causal][sequence] */
typedef const double series[2][2][NSEQ];

static series a100_fa2 = {
    { { 132, 153, 162, 171, 175, 176 }, { 88, 119, 140, 156, 165, 171 } },
    { { 146, 173, 187, 196, 201, 203 }, { 99, 133, 155, 173, 182, 189 } },
};
static series a100_fa1 = {
    { { 91, 92, 104, 108, 110, 110 }, { 58, 70, 77, 87, 92, 97 } },
    { { 76, 72, 76, 80, 82, 83 }, { 55, 62, 69, 76, 80, 83 } },
};
static series a100_triton = {
    { { 90, 102, 98, 98, 100, 100 }, { 59, 75, 79, 76, 79, 80 } },
    { { 78, 85, 90, 93, 95, 95 }, { 50, 61, 68, 74, 78, 80 } },
};
static series h100_fa2 = {
    { { 215, 254, 274, 288, 294, 296 }, { 141, 192, 232, 257, 273, 284 } },
    { { 248, 294, 320, 326, 335, 338 }, { 163, 221, 265, 294, 308, 328 } },
};
static series h100_fa1 = {
    { { 157, 159, 161, 161, 166, 168 }, { 104, 123, 136, 138, 149, 156 } },
    { { 127, 127, 128, 131, 137, 139 }, { 98, 109, 108, 126, 135, 137 } },
};
/* [FA3] forward only */
static series h100_fwd_fa2 = {
    { { 282, 306, 318, 321, 322, 324 }, { 180, 229, 262, 284, 295, 299 } },
    { { 309, 350, 362, 366, 370, 370 }, { 191, 260, 298, 319, 333, 335 } },
};
static series h100_fwd_cudnn = {
    { { 335, 373, 395, 408, 412, 413 }, { 225, 288, 334, 363, 379, 388 } },
    { { 497, 574, 617, 609, 600, 595 }, { 315, 410, 484, 518, 529, 539 } },
};
static series h100_fwd_fa3 = {
    { { 333, 392, 460, 476, 496, 497 }, { 197, 265, 371, 420, 460, 473 } },
    { { 467, 565, 625, 638, 646, 648 }, { 292, 423, 521, 579, 602, 616 } },
};

static bool hopper_tables(enum gpu_arch arch)
{
    return arch == ARCH_HOPPER || arch == ARCH_BLACKWELL;
}

bool attn_impl_available(enum gpu_arch arch, enum attn_impl impl)
{
    return impl != ATTN_IMPL_FA3 || arch == ARCH_HOPPER;
}

/* The rate of `impl` at table point (hd index h, causal c, sequence index i), TFLOP/s. */
static double point(bool hopper, enum attn_impl impl, int h, int c, int i)
{
    if (!hopper)
        return impl == ATTN_IMPL_TRITON ? a100_triton[h][c][i] : a100_fa2[h][c][i];
    switch (impl) {
    case ATTN_IMPL_TRITON:
        return h100_fa1[h][c][i] * a100_triton[h][c][i] / a100_fa1[h][c][i];
    case ATTN_IMPL_FA3:
        return h100_fa2[h][c][i] * h100_fwd_fa3[h][c][i] / h100_fwd_fa2[h][c][i];
    case ATTN_IMPL_CUDNN:
        return h100_fa2[h][c][i] * h100_fwd_cudnn[h][c][i] / h100_fwd_fa2[h][c][i];
    default:
        return h100_fa2[h][c][i];
    }
}

/* Interpolated in log2(seq) (512 = index 0) at head-dim index h. */
static double along_seq(bool hopper, enum attn_impl impl, int h, int c, double seq)
{
    double x = seq > 0 ? log2(seq / 512.0) : 0;
    int i;

    if (x <= 0)
        return point(hopper, impl, h, c, 0);
    if (x >= NSEQ - 1)
        return point(hopper, impl, h, c, NSEQ - 1);
    i = (int)x;
    return point(hopper, impl, h, c, i) +
           (x - i) * (point(hopper, impl, h, c, i + 1) - point(hopper, impl, h, c, i));
}

static double rate(bool hopper, enum attn_impl impl, double hd, bool causal, double seq)
{
    double w = (hd - 64) / 64, r64 = along_seq(hopper, impl, 0, causal, seq);
    double r128 = along_seq(hopper, impl, 1, causal, seq);

    w = w < 0 ? 0 : w > 1 ? 1 : w;
    return r64 + w * (r128 - r64);
}

double attn_rel_rate(enum gpu_arch arch, enum attn_impl impl, double head_dim, bool causal,
                     double seq)
{
    bool hopper = hopper_tables(arch);

    if (!attn_impl_available(arch, impl))
        impl = ATTN_IMPL_CUDA;
    return rate(hopper, impl, head_dim, causal, seq) /
           rate(hopper, ATTN_IMPL_CUDA, ATTN_REF_HEAD_DIM, false, ATTN_REF_SEQ);
}
