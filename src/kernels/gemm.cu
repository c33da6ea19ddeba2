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

struct bench_gemm {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    void *A, *B, *C, *ws;
    size_t ws_bytes;
    float alpha, beta;
};

void bench_gemm_run(struct bench_gemm *g, cudaStream_t stream)
{
    cublasLtMatmul(g->lt, g->op, &g->alpha, g->A, g->a, g->B, g->b, &g->beta, g->C, g->c, g->C,
                   g->c, &g->algo, g->ws, g->ws_bytes, stream);
}

void bench_gemm_run_fn(void *g, cudaStream_t stream)
{
    bench_gemm_run((struct bench_gemm *)g, stream);
}

static size_t elem_bytes(cudaDataType_t t)
{
    return t == CUDA_R_8F_E4M3 ? 1 : t == CUDA_R_32F ? 4 : 2;
}

static cudaDataType_t input_type(const char *dtype)
{
    return !std::strcmp(dtype, "fp8")    ? CUDA_R_8F_E4M3
           : !std::strcmp(dtype, "fp16") ? CUDA_R_16F
                                         : CUDA_R_16BF;
}

/* Bytes the GEMM reads and writes: A and B in the input type, C in the output type. */
static double gemm_bytes(long m, long n, long k, const char *dtype)
{
    cudaDataType_t in = input_type(dtype), outt = in == CUDA_R_8F_E4M3 ? CUDA_R_16BF : in;

    return (double)elem_bytes(in) * (m * k + k * n) + (double)elem_bytes(outt) * m * n;
}

void bench_gemm_free(struct bench_gemm *g)
{
    if (!g)
        return;
    cudaFree(g->A);
    cudaFree(g->B);
    cudaFree(g->C);
    cudaFree(g->ws);
    if (g->op)
        cublasLtMatmulDescDestroy(g->op);
    if (g->a)
        cublasLtMatrixLayoutDestroy(g->a);
    if (g->b)
        cublasLtMatrixLayoutDestroy(g->b);
    if (g->c)
        cublasLtMatrixLayoutDestroy(g->c);
    if (g->lt)
        cublasLtDestroy(g->lt);
    delete g;
}

#define NEW_CHECK(call)                                                                            \
    do {                                                                                           \
        if ((call) != CUBLAS_STATUS_SUCCESS) {                                                     \
            std::fprintf(stderr, "simtrain-bench: %s:%d: %s failed\n", __FILE__, __LINE__, #call); \
            bench_gemm_free(g);                                                                    \
            return nullptr;                                                                        \
        }                                                                                          \
    } while (0)

struct bench_gemm *bench_gemm_new(long m, long n, long k, const char *dtype, cudaStream_t stream,
                                  double max_bytes)
{
    cudaDataType_t in = input_type(dtype), outt = in == CUDA_R_8F_E4M3 ? CUDA_R_16BF : in;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t heur;
    struct bench_gemm *g;
    int found = 0;

    if (gemm_bytes(m, n, k, dtype) > 3 * max_bytes)
        return nullptr;
    g = new struct bench_gemm();
    std::memset(g, 0, sizeof(*g));
    g->alpha = 1.0f;
    g->ws_bytes = 32u << 20;
    NEW_CHECK(cublasLtCreate(&g->lt));
    NEW_CHECK(cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    NEW_CHECK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    NEW_CHECK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    NEW_CHECK(cublasLtMatrixLayoutCreate(&g->a, in, k, m, k));
    NEW_CHECK(cublasLtMatrixLayoutCreate(&g->b, in, k, n, k));
    NEW_CHECK(cublasLtMatrixLayoutCreate(&g->c, outt, m, n, m));
    NEW_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    if (cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &g->ws_bytes,
                                             sizeof(g->ws_bytes)) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, g->a, g->b, g->c, g->c, pref, 1, &heur,
                                       &found) != CUBLAS_STATUS_SUCCESS ||
        found < 1) {
        std::fprintf(stderr, "  gemm %ldx%ldx%ld %s: no cuBLASLt algorithm, skipped\n", m, n, k,
                     dtype);
        cublasLtMatmulPreferenceDestroy(pref);
        bench_gemm_free(g);
        return nullptr;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    g->algo = heur.algo;
    CUDA_CHECK(cudaMalloc(&g->ws, g->ws_bytes));
    CUDA_CHECK(cudaMalloc(&g->A, elem_bytes(in) * m * k));
    CUDA_CHECK(cudaMalloc(&g->B, elem_bytes(in) * k * n));
    CUDA_CHECK(cudaMalloc(&g->C, elem_bytes(outt) * m * n));
    bench_fill(g->A, (size_t)m * k, dtype, 1, stream);
    bench_fill(g->B, (size_t)k * n, dtype, 2, stream);
    return g;
}

/* One shape in one dtype; skipped (with a note) when it does not fit or has no algorithm. */
static void one_gemm(struct bench_out *out, const struct bench_opts *o, cudaStream_t stream,
                     const shape &s, const char *dtype)
{
    struct bench_gemm *g = bench_gemm_new(s.m, s.n, s.k, dtype, stream, o->max_bytes);
    struct bench_row r;

    if (!g)
        return;
    std::memset(&r, 0, sizeof(r));
    r.kernel = "gemm";
    std::snprintf(r.shape, sizeof(r.shape), "m=%ld n=%ld k=%ld", s.m, s.n, s.k);
    r.dtype = dtype;
    r.gpus = 1;
    r.nodes = 1;
    r.time_s = bench_time(bench_gemm_run_fn, g, stream, o);
    r.flops = 2.0 * s.m * s.n * s.k;
    r.bytes = gemm_bytes(s.m, s.n, s.k, dtype);
    std::snprintf(r.notes, sizeof(r.notes),
                  "cuBLASLt %s, TN, fp32 accumulate, heuristic algorithm 1 of 1", s.what);
    bench_write(out, &r);
    bench_gemm_free(g);
}

int bench_gemm(struct bench_out *out, const struct bench_opts *o)
{
    cudaDeviceProp prop;
    cudaStream_t stream;
    std::vector<const char *> dtypes = { "bf16", "fp16" };

    CUDA_CHECK(cudaGetDeviceProperties(&prop, o->device));
    /* FP8 tensor cores: Ada (sm_89) and Hopper (sm_90) onwards. */
    if (prop.major * 10 + prop.minor >= 89)
        dtypes.push_back("fp8");
    CUDA_CHECK(cudaStreamCreate(&stream));
    std::fprintf(stderr, "gemm suite\n");
    for (const char *dt : dtypes)
        for (const shape &s : shapes(o->quick))
            one_gemm(out, o, stream, s, dt);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}
