/*
 * attention.cu - attention forward, fused and unfused, bf16.
 *
 * Fused: an own FlashAttention-style kernel (Dao et al., FlashAttention,
 * arXiv:2205.14135, Algorithm 1: tiles of Q stay on chip while K/V tiles
 * stream through, with an online softmax), on tensor cores through WMMA.
 * It is simpler than FlashAttention-2/3 (no register-resident accumulators,
 * no warp specialisation), so its rate is a lower bound for fused attention;
 * where FA2/FA3 or cuDNN numbers exist, prefer them (docs/calibration.md).
 * Unfused: two cuBLAS strided-batched GEMMs with a softmax kernel between
 * them, the way eager PyTorch computes attention (the S = QK^T matrix goes
 * through HBM). FLOPs per call for both: 4*b*h*s^2*d, halved when causal
 * (the FlashAttention-2 benchmark's count; formulas.md 6.3).
 */
#include <cmath>
#include <cstring>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <mma.h>

#include "bench.h"

using namespace nvcuda;

typedef __nv_bfloat16 bf16;

enum {
    BM = 64,
    BN = 64,
    WARPS = 4
};

template <int D> static size_t flash_smem()
{
    return sizeof(bf16) * (BM * D + 2 * BN * D + BM * BN) +
           sizeof(float) * (BM * BN + BM * D + 2 * BM);
}

/* One block: BM query rows of one (batch, head); warp w owns rows [16w, 16w + 16). */
template <int D>
__global__ void __launch_bounds__(WARPS * 32)
    flash_fwd(const bf16 *q, const bf16 *k, const bf16 *v, bf16 *o, int S, float scale, int causal)
{
    extern __shared__ __align__(32) unsigned char smem[];
    bf16 *sQ = (bf16 *)smem, *sK = sQ + BM * D, *sV = sK + BN * D, *sP = sV + BN * D;
    float *sS = (float *)(sP + BM * BN), *sO = sS + BM * BN, *sM = sO + BM * D, *sL = sM + BM;
    size_t base = (size_t)blockIdx.y * S * D;
    int m0 = blockIdx.x * BM, tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int r0 = warp * 16, row = r0 + lane / 2, half = lane % 2;
    int n_end = causal ? min(S, m0 + BM) : S;

    for (int i = tid; i < BM * D; i += blockDim.x) {
        int r = i / D;
        sQ[i] = m0 + r < S ? q[base + (size_t)(m0 + r) * D + i % D] : bf16(0.0f);
        sO[i] = 0.0f;
    }
    for (int i = tid; i < BM; i += blockDim.x) {
        sM[i] = -INFINITY;
        sL[i] = 0.0f;
    }
    __syncthreads();
    for (int n0 = 0; n0 < n_end; n0 += BN) {
        for (int i = tid; i < BN * D; i += blockDim.x) {
            int r = i / D;
            bool in = n0 + r < S;
            sK[i] = in ? k[base + (size_t)(n0 + r) * D + i % D] : bf16(0.0f);
            sV[i] = in ? v[base + (size_t)(n0 + r) * D + i % D] : bf16(0.0f);
        }
        __syncthreads();
        for (int c = 0; c < BN / 16; c++) { /* S = Q K^T for this warp's rows */
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int d = 0; d < D / 16; d++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> b;
                wmma::load_matrix_sync(a, sQ + r0 * D + d * 16, D);
                wmma::load_matrix_sync(b, sK + c * 16 * D + d * 16, D);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(sS + r0 * BN + c * 16, acc, BN, wmma::mem_row_major);
        }
        __syncwarp();
        { /* online softmax: two lanes per row, 32 columns each */
            float mx = -INFINITY, sum = 0.0f, m_old = sM[row], m_new, alpha;
            for (int j = half * 32; j < half * 32 + 32; j++) {
                float s = sS[row * BN + j] * scale;
                if (n0 + j >= S || (causal && n0 + j > m0 + row))
                    s = -INFINITY;
                sS[row * BN + j] = s;
                mx = fmaxf(mx, s);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            m_new = fmaxf(m_old, mx);
            for (int j = half * 32; j < half * 32 + 32; j++) {
                float p = m_new == -INFINITY ? 0.0f : __expf(sS[row * BN + j] - m_new);
                sP[row * BN + j] = bf16(p);
                sum += p;
            }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            alpha = m_old == -INFINITY ? 0.0f : __expf(m_old - m_new);
            for (int d = half * (D / 2); d < (half + 1) * (D / 2); d++)
                sO[row * D + d] *= alpha;
            __syncwarp();
            if (!half) {
                sM[row] = m_new;
                sL[row] = sL[row] * alpha + sum;
            }
        }
        __syncwarp();
        for (int c = 0; c < D / 16; c++) { /* O += P V */
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, sO + r0 * D + c * 16, D, wmma::mem_row_major);
            for (int kk = 0; kk < BN / 16; kk++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> b;
                wmma::load_matrix_sync(a, sP + r0 * BN + kk * 16, BN);
                wmma::load_matrix_sync(b, sV + kk * 16 * D + c * 16, D);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(sO + r0 * D + c * 16, acc, D, wmma::mem_row_major);
        }
        __syncthreads();
    }
    for (int i = tid; i < BM * D; i += blockDim.x) {
        int r = i / D;
        if (m0 + r < S)
            o[base + (size_t)(m0 + r) * D + i % D] = bf16(sL[r] > 0 ? sO[i] / sL[r] : 0.0f);
    }
}

/* Row softmax of the unfused path, in place: p = exp(scale * s - max) / sum, causal mask. */
__global__ void softmax_rows(bf16 *s, int cols, float scale, int causal)
{
    __shared__ float red[32];
    bf16 *p = s + (size_t)blockIdx.x * cols;
    int row = blockIdx.x % cols, lim = causal ? row + 1 : cols;
    float mx = -INFINITY, sum = 0.0f;

    for (int j = threadIdx.x; j < lim; j += blockDim.x)
        mx = fmaxf(mx, (float)p[j] * scale);
    for (int o = 16; o; o /= 2)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = mx;
    __syncthreads();
    mx = red[0];
    for (int w = 1; w < (int)blockDim.x / 32; w++)
        mx = fmaxf(mx, red[w]);
    __syncthreads();
    for (int j = threadIdx.x; j < lim; j += blockDim.x)
        sum += __expf((float)p[j] * scale - mx);
    for (int o = 16; o; o /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = sum;
    __syncthreads();
    sum = 0.0f;
    for (int w = 0; w < (int)blockDim.x / 32; w++)
        sum += red[w];
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        p[j] = bf16(j < lim ? __expf((float)p[j] * scale - mx) / sum : 0.0f);
}

struct attn_cfg {
    int b, h, s, d, causal;
};

struct attn_ctx {
    attn_cfg c;
    bf16 *q, *k, *v, *o, *scores;
    cublasHandle_t blas;
};

static void run_flash(void *vctx, cudaStream_t stream)
{
    attn_ctx *a = (attn_ctx *)vctx;
    dim3 grid((a->c.s + BM - 1) / BM, a->c.b * a->c.h);
    float scale = 1.0f / sqrtf((float)a->c.d);

    if (a->c.d == 64)
        flash_fwd<64><<<grid, WARPS * 32, flash_smem<64>(), stream>>>(a->q, a->k, a->v, a->o,
                                                                      a->c.s, scale, a->c.causal);
    else
        flash_fwd<128><<<grid, WARPS * 32, flash_smem<128>(), stream>>>(a->q, a->k, a->v, a->o,
                                                                        a->c.s, scale, a->c.causal);
}

static void run_standard(void *vctx, cudaStream_t stream)
{
    attn_ctx *a = (attn_ctx *)vctx;
    long s = a->c.s, d = a->c.d, batch = (long)a->c.b * a->c.h;
    float one = 1.0f, zero = 0.0f;

    cublasSetStream(a->blas, stream);
    /* S(row-major, query x key) = Q K^T: column-major K^T(s x d) * Q(d x s) */
    cublasGemmStridedBatchedEx(a->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)s, (int)s, (int)d, &one,
                               a->k, CUDA_R_16BF, (int)d, s * d, a->q, CUDA_R_16BF, (int)d, s * d,
                               &zero, a->scores, CUDA_R_16BF, (int)s, s * s, (int)batch,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    softmax_rows<<<(unsigned)(batch * s), 256, 0, stream>>>(a->scores, (int)s,
                                                            1.0f / sqrtf((float)d), a->c.causal);
    /* O(row-major s x d) = P V: column-major V(d x s) * P(s x s) */
    cublasGemmStridedBatchedEx(a->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)d, (int)s, (int)s, &one,
                               a->v, CUDA_R_16BF, (int)d, s * d, a->scores, CUDA_R_16BF, (int)s,
                               s * s, &zero, a->o, CUDA_R_16BF, (int)d, s * d, (int)batch,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

int bench_attention(struct bench_out *out, const struct bench_opts *o)
{
    /* Azure's FlashAttention-2 runs (batch 2, seq 8192; head_dim 64 on A100, 128 on H100) first. */
    static const attn_cfg cfgs[] = {
        { 2, 32, 8192, 64, 0 },  { 2, 16, 8192, 128, 0 }, { 1, 32, 4096, 128, 1 },
        { 4, 32, 2048, 128, 1 }, { 8, 16, 1024, 64, 0 },
    };
    cudaStream_t stream;
    cublasHandle_t blas;

    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "simtrain-bench: cublasCreate failed\n");
        return 1;
    }
    CUDA_CHECK(cudaStreamCreate(&stream));
    CUDA_CHECK(cudaFuncSetAttribute(flash_fwd<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)flash_smem<64>()));
    CUDA_CHECK(cudaFuncSetAttribute(flash_fwd<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)flash_smem<128>()));
    std::fprintf(stderr, "attention suite\n");
    for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]) && (!o->quick || i < 2); i++) {
        attn_ctx a;
        size_t n = (size_t)cfgs[i].b * cfgs[i].h * cfgs[i].s * cfgs[i].d;
        double scores = 2.0 * cfgs[i].b * cfgs[i].h * (double)cfgs[i].s * cfgs[i].s;
        double flops = 4.0 * cfgs[i].b * cfgs[i].h * (double)cfgs[i].s * cfgs[i].s * cfgs[i].d *
                       (cfgs[i].causal ? 0.5 : 1.0);

        std::memset(&a, 0, sizeof(a));
        a.c = cfgs[i];
        a.blas = blas;
        CUDA_CHECK(cudaMalloc(&a.q, 4 * n * sizeof(bf16)));
        a.k = a.q + n;
        a.v = a.k + n;
        a.o = a.v + n;
        bench_fill(a.q, 3 * n, "bf16", 3, stream);
        for (int kind = 0; kind < 2; kind++) {
            struct bench_row r;

            if (kind == 1 && scores > 4 * o->max_bytes)
                continue;
            if (kind == 1)
                CUDA_CHECK(cudaMalloc(&a.scores, (size_t)scores));
            std::memset(&r, 0, sizeof(r));
            r.kernel = kind ? "attention_standard" : "attention_flash";
            std::snprintf(r.shape, sizeof(r.shape),
                          "batch=%d heads=%d seq=%d head_dim=%d causal=%d", a.c.b, a.c.h, a.c.s,
                          a.c.d, a.c.causal);
            r.dtype = "bf16";
            r.gpus = 1;
            r.nodes = 1;
            r.time_s = bench_time(kind ? run_standard : run_flash, &a, stream, o);
            r.flops = flops;
            std::snprintf(r.notes, sizeof(r.notes), "%s",
                          kind ? "forward, cuBLAS batched QK^T + softmax kernel + PV (eager style)"
                               : "forward, simtrain's own FlashAttention-style WMMA kernel (a "
                                 "lower bound for FA2/FA3)");
            bench_write(out, &r);
            if (kind == 1)
                CUDA_CHECK(cudaFree(a.scores));
        }
        CUDA_CHECK(cudaFree(a.q));
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    cublasDestroy(blas);
    return 0;
}
