/*
 * gemm.cu - cuBLASLt GEMMs over the shapes a transformer layer runs, in bf16,
 * fp16 and (on sm_89 and later) fp8 E4M3 with bf16 output; fp32 accumulation.
 *
 * Layout "TN" (A transposed, B not, column-major), which cuBLASLt requires
 * for fp8: C[m x n] = A[k x m]^T B[k x n]. FLOPs per call 2*m*n*k.
 * Shapes: for hidden h in {2048, 4096, 8192} and T = 16384 tokens (micro
 * batch x sequence) the QKV (T, 3h, h), attention output (T, h, h), MLP up
 * (T, 4h, h) and down (T, h, 4h) GEMMs (formulas.md 1.2), their backward
 * orientations (h, 3h, T) for weight gradients, square sizes 1024..16384, and
 * the shapes of the Azure cuBLASLt table the shipped calibrations use.
 */
#include <cstring>
#include <vector>

#include <cublasLt.h>

#include "bench.h"

#define LT_CHECK(call)                                                                             \
    do {                                                                                           \
        cublasStatus_t st_ = (call);                                                               \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            std::fprintf(stderr, "simtrain-bench: %s:%d: %s: cublas status %d\n", __FILE__,        \
                         __LINE__, #call, (int)st_);                                               \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

struct shape {
    long m, n, k;
    const char *what;
};

static std::vector<shape> shapes(bool quick)
{
    std::vector<shape> v;
    const long T = 16384;

    for (long s = 1024; s <= 16384; s *= 2)
        v.push_back({ s, s, s, "square" });
    if (quick)
        return v;
    for (long h : { 2048L, 4096L, 8192L }) {
        v.push_back({ T, 3 * h, h, "qkv" });
        v.push_back({ T, h, h, "attention out" });
        v.push_back({ T, 4 * h, h, "mlp up" });
        v.push_back({ T, h, 4 * h, "mlp down" });
        v.push_back({ h, 3 * h, T, "qkv weight grad" });
        v.push_back({ 4 * h, h, T, "mlp up weight grad" });
    }
    /* Azure/AI-benchmarking-guide cuBLASLt shapes (hardware/calibration/measurements). */
    v.push_back({ 1024, 2145, 1024, "azure" });
    v.push_back({ 6144, 12288, 12288, "azure" });
    v.push_back({ 802816, 192, 768, "azure" });
    return v;
}

struct gemm_ctx {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    void *A, *B, *C, *ws;
    size_t ws_bytes;
    float alpha, beta;
};

static void run_gemm(void *vctx, cudaStream_t stream)
{
    gemm_ctx *g = (gemm_ctx *)vctx;

    cublasLtMatmul(g->lt, g->op, &g->alpha, g->A, g->a, g->B, g->b, &g->beta, g->C, g->c, g->C,
                   g->c, &g->algo, g->ws, g->ws_bytes, stream);
}

static size_t elem_bytes(cudaDataType_t t)
{
    return t == CUDA_R_8F_E4M3 ? 1 : t == CUDA_R_32F ? 4 : 2;
}

/* One shape in one dtype; 1 when cuBLASLt has no algorithm for it (skipped). */
static int one_gemm(struct bench_out *out, const struct bench_opts *o, cublasLtHandle_t lt,
                    cudaStream_t stream, const shape &s, const char *dtype, void *ws,
                    size_t ws_bytes)
{
    cudaDataType_t in = !std::strcmp(dtype, "fp8")    ? CUDA_R_8F_E4M3
                        : !std::strcmp(dtype, "fp16") ? CUDA_R_16F
                                                      : CUDA_R_16BF;
    cudaDataType_t outt = in == CUDA_R_8F_E4M3 ? CUDA_R_16BF : in;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    gemm_ctx g;
    double bytes =
        (double)elem_bytes(in) * (s.m * s.k + s.k * s.n) + (double)elem_bytes(outt) * s.m * s.n;

    if (bytes > 3 * o->max_bytes)
        return 1;
    std::memset(&g, 0, sizeof(g));
    g.lt = lt;
    g.alpha = 1.0f;
    g.beta = 0.0f;
    g.ws = ws;
    g.ws_bytes = ws_bytes;
    LT_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    LT_CHECK(cublasLtMatrixLayoutCreate(&g.a, in, s.k, s.m, s.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&g.b, in, s.k, s.n, s.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&g.c, outt, s.m, s.n, s.m));
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws_bytes, sizeof(ws_bytes)));
    if (cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.a, g.b, g.c, g.c, pref, 1, &heur, &found) !=
            CUBLAS_STATUS_SUCCESS ||
        found < 1) {
        std::fprintf(stderr, "  gemm %ldx%ldx%ld %s: no cuBLASLt algorithm, skipped\n", s.m, s.n,
                     s.k, dtype);
        found = 0;
    }
    if (found) {
        struct bench_row r;

        g.algo = heur.algo;
        CUDA_CHECK(cudaMalloc(&g.A, elem_bytes(in) * s.m * s.k));
        CUDA_CHECK(cudaMalloc(&g.B, elem_bytes(in) * s.k * s.n));
        CUDA_CHECK(cudaMalloc(&g.C, elem_bytes(outt) * s.m * s.n));
        bench_fill(g.A, (size_t)s.m * s.k, dtype, 1, stream);
        bench_fill(g.B, (size_t)s.k * s.n, dtype, 2, stream);
        std::memset(&r, 0, sizeof(r));
        r.kernel = "gemm";
        std::snprintf(r.shape, sizeof(r.shape), "m=%ld n=%ld k=%ld", s.m, s.n, s.k);
        r.dtype = dtype;
        r.gpus = 1;
        r.nodes = 1;
        r.time_s = bench_time(run_gemm, &g, stream, o);
        r.flops = 2.0 * s.m * s.n * s.k;
        r.bytes = bytes;
        std::snprintf(r.notes, sizeof(r.notes),
                      "cuBLASLt %s, TN, fp32 accumulate, heuristic algorithm 1 of 1", s.what);
        bench_write(out, &r);
        CUDA_CHECK(cudaFree(g.A));
        CUDA_CHECK(cudaFree(g.B));
        CUDA_CHECK(cudaFree(g.C));
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(g.a);
    cublasLtMatrixLayoutDestroy(g.b);
    cublasLtMatrixLayoutDestroy(g.c);
    cublasLtMatmulDescDestroy(g.op);
    return found ? 0 : 1;
}

int bench_gemm(struct bench_out *out, const struct bench_opts *o)
{
    cudaDeviceProp prop;
    cublasLtHandle_t lt;
    cudaStream_t stream;
    size_t ws_bytes = 32u << 20;
    void *ws;
    std::vector<const char *> dtypes = { "bf16", "fp16" };

    CUDA_CHECK(cudaGetDeviceProperties(&prop, o->device));
    /* FP8 tensor cores: Ada (sm_89) and Hopper (sm_90) onwards. */
    if (prop.major * 10 + prop.minor >= 89)
        dtypes.push_back("fp8");
    if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "simtrain-bench: cublasLtCreate failed\n");
        return 1;
    }
    CUDA_CHECK(cudaStreamCreate(&stream));
    CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    std::fprintf(stderr, "gemm suite\n");
    for (const char *dt : dtypes)
        for (const shape &s : shapes(o->quick))
            if (one_gemm(out, o, lt, stream, s, dt, ws, ws_bytes) < 0)
                return 1;
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaStreamDestroy(stream));
    cublasLtDestroy(lt);
    return 0;
}
