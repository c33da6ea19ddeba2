/*
 * fp8cast.cu - the memory-bound kernels FP8 recipes add around every projection (model/fp8.h),
 * on a BF16 tensor of rows x 4096, at the sizes of the membound suite:
 *   amax                 read 2 B per element, one |x| max per block then an atomic max (the
 *                        amax pass of torchao's dynamic scaling and TE's current scaling)
 *   cast_fp8             read 2 B, write a scaled E4M3 byte: 3 B per element (torchao, TE)
 *   cast_transpose_fp8   read 2 B, write the E4M3 byte and its transpose: 4 B per element, in
 *                        32 x 32 tiles through shared memory (TE's fp8_cast_transpose_fused)
 * Each row records the bytes a call moves, so `simtrain calibrate` checks them against the
 * memory-bound rate the model prices casts at (kernel names read as memory-bound rows).
 */
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "bench.h"

typedef __nv_bfloat16 bf16;
typedef __nv_fp8_e4m3 fp8;

enum {
    COLS = 4096,
    TILE = 32
};

__global__ void k_amax(const bf16 *x, size_t n, unsigned *out)
{
    __shared__ float red[32];
    float m = 0.0f;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        m = fmaxf(m, fabsf(__bfloat162float(x[i])));
    for (int o = 16; o; o /= 2)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)blockDim.x / 32; w++)
            m = fmaxf(m, red[w]);
        atomicMax(out, __float_as_uint(m)); /* non-negative floats order as unsigned */
    }
}

__global__ void k_cast(const bf16 *x, fp8 *y, size_t n, float scale)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = fp8(__bfloat162float(x[i]) * scale);
}

/* rows x COLS in, y (rows x COLS) and yt (COLS x rows) out; 32 x 8 threads per 32 x 32 tile. */
__global__ void k_cast_transpose(const bf16 *x, fp8 *y, fp8 *yt, size_t rows, float scale)
{
    __shared__ fp8 tile[TILE][TILE + 4];
    size_t r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;

    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        size_t r = r0 + j, c = c0 + threadIdx.x;
        fp8 v = fp8(__bfloat162float(x[r * COLS + c]) * scale);
        y[r * COLS + c] = v;
        tile[j][threadIdx.x] = v;
    }
    __syncthreads();
    for (int j = threadIdx.y; j < TILE; j += blockDim.y)
        yt[(c0 + j) * rows + r0 + threadIdx.x] = tile[threadIdx.x][j];
}

struct cast_ctx {
    int kind; /* 0 amax, 1 cast, 2 cast + transpose */
    bf16 *x;
    fp8 *y, *yt;
    unsigned *amax;
    size_t rows;
};

static void run_cast(void *vctx, cudaStream_t s)
{
    cast_ctx *c = (cast_ctx *)vctx;
    size_t n = c->rows * COLS;

    if (c->kind == 0)
        k_amax<<<1024, 256, 0, s>>>(c->x, n, c->amax);
    else if (c->kind == 1)
        k_cast<<<1024, 256, 0, s>>>(c->x, c->y, n, 0.5f);
    else
        k_cast_transpose<<<dim3(COLS / TILE, (unsigned)(c->rows / TILE)), dim3(TILE, 8), 0, s>>>(
            c->x, c->y, c->yt, c->rows, 0.5f);
}

int bench_fp8_casts(struct bench_out *out, const struct bench_opts *o)
{
    static const char *const names[3] = { "amax", "cast_fp8", "cast_transpose_fp8" };
    static const double bytes_per_elem[3] = { 2, 3, 4 };
    cudaStream_t stream;
    cast_ctx c;

    std::fprintf(stderr, "fp8 cast suite\n");
    CUDA_CHECK(cudaStreamCreate(&stream));
    std::memset(&c, 0, sizeof(c));
    CUDA_CHECK(cudaMalloc(&c.amax, sizeof(unsigned)));
    for (double mb = 1 << 20; mb * 2 <= o->max_bytes; mb *= o->quick ? 16 : 4) {
        c.rows = (size_t)(mb / 2 / COLS / TILE) * TILE;
        if (c.rows < TILE)
            continue;
        CUDA_CHECK(cudaMalloc(&c.x, c.rows * COLS * sizeof(bf16)));
        CUDA_CHECK(cudaMalloc(&c.y, c.rows * COLS));
        CUDA_CHECK(cudaMalloc(&c.yt, c.rows * COLS));
        bench_fill(c.x, c.rows * COLS, "bf16", 3, stream);
        for (c.kind = 0; c.kind < 3; c.kind++) {
            struct bench_row r;

            std::memset(&r, 0, sizeof(r));
            r.kernel = names[c.kind];
            std::snprintf(r.shape, sizeof(r.shape), "rows=%zu cols=%d", c.rows, (int)COLS);
            r.dtype = "bf16";
            r.gpus = r.nodes = 1;
            r.bytes = bytes_per_elem[c.kind] * (double)c.rows * COLS;
            r.time_s = bench_time(run_cast, &c, stream, o);
            r.gbps = r.bytes / r.time_s / 1e9;
            std::snprintf(r.notes, sizeof(r.notes), "BF16 in, E4M3 out (model/fp8.h casts)");
            bench_write(out, &r);
        }
        CUDA_CHECK(cudaFree(c.x));
        CUDA_CHECK(cudaFree(c.y));
        CUDA_CHECK(cudaFree(c.yt));
    }
    CUDA_CHECK(cudaFree(c.amax));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}
