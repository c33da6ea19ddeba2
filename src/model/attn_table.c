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
 * - cuDNN on Ampere, and Volta and Ada: FlashAttention-2's A100 rates (no figure).
 * Two bar labels of [FA2-A100] sit under the legend: FA2 head dim 128 without mask at 512
 * (drawn at about 150; taken as the 1k point's 173 x 248/294, the H100 ratio) and head dim
 * 64 at 1k (read as 153).
 *
 * Beyond 16k and on Blackwell, from [B200-SDPA]: NVIDIA/cudnn-frontend
 * benchmark/sdpa_benchmark_training/artifacts/sdpa_bf16_benchmark_results_NVIDIA_B200.csv @cb560b9
 * (cuDNN frontend v1.13, torch 2.8.0a0 nv25.06, cuDNN 9.10): forward and backward TFLOP/s of
 * PyTorch SDPA's flash backend (FlashAttention-2) and of cuDNN on a B200, causal, head dimension
 * 128, 128 query and 8 KV heads, batch 1, sequence 512 .. 128k (forward + backward rate
 * 3.5 / (1/fwd + 2.5/bwd), the FLOP count above).
 * - Past 16k each kernel family keeps the trend [B200-SDPA] measures from 16k to 32k, 64k and
 *   128k (FlashAttention-2: +3.1 %, +4.5 %, +4.8 %; cuDNN: +4.0 %, +0.8 %, -1.5 %), on every
 *   generation (the only published series past 16k; FlashAttention-1, Triton and
 *   FlashAttention-3 follow FlashAttention-2's); beyond 128k the rate stays at 128k's.
 * - Blackwell: Hopper's tables times the B200 / H100 ratio of the same kernel, causal, head
 *   dimension 128, averaged over 8k and 16k (the points where both benchmarks fill the GPU):
 *   FlashAttention-2 on B200 runs the sm80 mma.sync kernels at about H100's rate (x1.03),
 *   cuDNN about twice the Hopper cuDNN figure (x2.1, [FA3]'s cuDNN on H100 as reference);
 *   Triton follows FlashAttention-2 (an estimate); FlashAttention-3 does not run there.
 */
#include "model/attn_table.h"

#include <math.h>

#define NSEQ  6 /* published figure points: 512 .. 16k */
#define NLONG 3 /* [B200-SDPA] points past them: 32k, 64k, 128k */

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

/* [B200-SDPA] forward and backward TFLOP/s at 8k, 16k, 32k, 64k, 128k (causal, hd 128) */
static const double b200_fa2[2][5] = { { 373.392, 394.495, 403.739, 408.739, 410.988 },
                                       { 298.867, 319.979, 330.801, 335.402, 336.043 } };
static const double b200_cudnn[2][5] = { { 1171.278, 1332.415, 1419.000, 1382.330, 1355.418 },
                                         { 942.509, 1074.776, 1108.688, 1073.059, 1047.843 } };

/* Forward + backward rate of a kernel running forward at f and backward at b. */
static double fwd_bwd(double f, double b)
{
    return 3.5 / (1 / f + 2.5 / b);
}

static bool hopper_tables(enum gpu_arch arch)
{
    return arch == ARCH_HOPPER || arch == ARCH_BLACKWELL;
}

bool attn_impl_available(enum gpu_arch arch, enum attn_impl impl)
{
    return impl != ATTN_IMPL_FA3 || arch == ARCH_HOPPER;
}

/* The rate of `impl` at a published table point (hd index h, causal c, sequence index i). */
static double table_point(bool hopper, enum attn_impl impl, int h, int c, int i)
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

/* [B200-SDPA]'s series of the kernel family `impl` belongs to, forward + backward, point k (8k =
 * 0). */
static double b200_point(enum attn_impl impl, int k)
{
    const double(*t)[5] = impl == ATTN_IMPL_CUDNN ? b200_cudnn : b200_fa2;

    return fwd_bwd(t[0][k], t[1][k]);
}

/*
 * Blackwell over Hopper for `impl`: B200 over the Hopper table (causal, hd 128), the mean of
 * the 8k and 16k ratios (sequence indices 4 and 5).
 */
static double blackwell_factor(enum attn_impl impl)
{
    enum attn_impl fam = impl == ATTN_IMPL_CUDNN ? ATTN_IMPL_CUDNN : ATTN_IMPL_CUDA;

    return (b200_point(fam, 0) / table_point(true, fam, 1, 1, 4) +
            b200_point(fam, 1) / table_point(true, fam, 1, 1, 5)) /
           2;
}

/* The rate of `impl` at point i of 512 .. 128k (past 16k: the [B200-SDPA] trend), TFLOP/s. */
static double point(enum gpu_arch arch, enum attn_impl impl, int h, int c, int i)
{
    bool hopper = hopper_tables(arch);
    double r = table_point(hopper, impl, h, c, i < NSEQ ? i : NSEQ - 1);
    /* cuDNN has its own series where it has its own table; elsewhere it runs FA2's rates */
    enum attn_impl fam = impl == ATTN_IMPL_CUDNN && hopper ? ATTN_IMPL_CUDNN : ATTN_IMPL_CUDA;

    if (i >= NSEQ)
        r *= b200_point(fam, i - NSEQ + 2) / b200_point(fam, 1);
    if (arch == ARCH_BLACKWELL)
        r *= blackwell_factor(impl);
    return r;
}

/* Interpolated in log2(seq) (512 = index 0) at head-dim index h. */
static double along_seq(enum gpu_arch arch, enum attn_impl impl, int h, int c, double seq)
{
    double x = seq > 0 ? log2(seq / 512.0) : 0;
    int i, last = NSEQ + NLONG - 1;

    if (x <= 0)
        return point(arch, impl, h, c, 0);
    if (x >= last)
        return point(arch, impl, h, c, last);
    i = (int)x;
    return point(arch, impl, h, c, i) +
           (x - i) * (point(arch, impl, h, c, i + 1) - point(arch, impl, h, c, i));
}

static double rate(enum gpu_arch arch, enum attn_impl impl, double hd, bool causal, double seq)
{
    double w = (hd - 64) / 64, r64 = along_seq(arch, impl, 0, causal, seq);
    double r128 = along_seq(arch, impl, 1, causal, seq);

    w = w < 0 ? 0 : w > 1 ? 1 : w;
    return r64 + w * (r128 - r64);
}

double attn_rel_rate(enum gpu_arch arch, enum attn_impl impl, double head_dim, bool causal,
                     double seq)
{
    if (!attn_impl_available(arch, impl))
        impl = ATTN_IMPL_CUDA;
    return rate(arch, impl, head_dim, causal, seq) /
           rate(arch, ATTN_IMPL_CUDA, ATTN_REF_HEAD_DIM, false, ATTN_REF_SEQ);
}
