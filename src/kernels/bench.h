/*
 * bench.h - the simtrain kernel set (simtrain-bench): shared helpers.
 *
 * Every suite measures kernels the cost model has a parameter for and
 * appends rows to one measurements CSV (format: src/kernels/README.md),
 * the input of `simtrain calibrate`. Times are means over back-to-back
 * launches on one stream after a warm-up, timed with CUDA events, like
 * nccl-tests and the cuBLASLt benchmarks the shipped calibrations use.
 */
#ifndef SIMTRAIN_BENCH_H
#define SIMTRAIN_BENCH_H

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "simtrain-bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                         cudaGetErrorString(err_));                                                \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

struct bench_opts {
    double budget_s;    /* target measuring time per row, seconds */
    int min_iters;      /* at least this many timed launches */
    double max_bytes;   /* largest buffer / message, bytes */
    int device;         /* GPU for single-GPU suites */
    int max_gpus;       /* collectives: use up to this many GPUs (0 = all visible) */
    bool quick;         /* fewer shapes and sizes */
    double sustained_s; /* sustained suite: back-to-back seconds per dtype and shape */
};

/* One output row; empty strings and zeros are written as empty fields. */
struct bench_row {
    const char *kernel;
    char shape[128];
    double bytes;
    const char *dtype;
    int gpus, nodes;
    const char *algo, *proto;
    double time_s;
    double flops;     /* per call; tflops column = flops / time */
    double gbps;      /* achieved GB/s (bus bandwidth for collectives) */
    double clock_mhz; /* SM clock logged during the row (NVML), MHz; 0 = not logged */
    double power_w;   /* board power logged during the row, W; 0 = not logged */
    char notes[256];
};

struct bench_out {
    FILE *f;
    char gpu[256];    /* device name */
    char date[16];    /* YYYY-MM-DD, UTC */
    char source[192]; /* "simtrain-bench VERSION on HOST" */
};

void bench_write(struct bench_out *out, const struct bench_row *r);

/* Mean seconds per launch of fn(ctx) on `stream`: warm-up, then enough launches for the budget. */
typedef void bench_fn(void *ctx, cudaStream_t stream);
double bench_time(bench_fn *fn, void *ctx, cudaStream_t stream, const struct bench_opts *o);

/* Fill a device buffer of n bytes with small pseudo-random values of the given element type. */
void bench_fill(void *dev, size_t n_elems, const char *dtype, unsigned seed, cudaStream_t stream);

/*
 * One cuBLASLt GEMM C[m x n] = A[k x m]^T B[k x n] in `dtype` (bf16, fp16, fp8 E4M3 with bf16
 * output) on random operands (gemm.cu): NULL when its buffers would exceed 3 x max_bytes or
 * cuBLASLt has no algorithm. bench_gemm_run_fn is bench_gemm_run as a bench_fn.
 */
struct bench_gemm;
struct bench_gemm *bench_gemm_new(long m, long n, long k, const char *dtype, cudaStream_t s,
                                  double max_bytes);
void bench_gemm_run(struct bench_gemm *g, cudaStream_t s);
void bench_gemm_run_fn(void *g, cudaStream_t s);
void bench_gemm_free(struct bench_gemm *g);

int bench_gemm(struct bench_out *out, const struct bench_opts *o);
int bench_sustained(struct bench_out *out, const struct bench_opts *o);
int bench_fp8_casts(struct bench_out *out, const struct bench_opts *o);
int bench_attention(struct bench_out *out, const struct bench_opts *o);
int bench_membound(struct bench_out *out, const struct bench_opts *o);
int bench_copies(struct bench_out *out, const struct bench_opts *o);
int bench_nccl(struct bench_out *out, const struct bench_opts *o, int argc, char **argv);

#endif
