/*
 * membound.cu - memory-bound kernels and host/peer copies.
 *
 * The cost model charges such kernels launch + bytes / (peak_bw * mem_bw)
 * (cost.h; roofline, formulas.md 6.1 and 6.4). Each row records the bytes a
 * call reads plus writes, so `simtrain calibrate` fits launch and mem_bw on
 * a line through the sizes. Kernels: STREAM's copy, scale, add and triad
 * (McCalpin's definitions) on bf16 pairs; RMSNorm, LayerNorm and softmax
 * over rows of 4096 bf16 values; the AdamW step (fp32 master weights, m and
 * v read and written, bf16 gradient read, bf16 weight copy written: 28
 * bytes per parameter, formulas.md 2.1 state sizes). Copies: pinned host
 * to device and back, and GPU 1 to GPU 0 over the peer path.
 */
#include <cstring>

#include <cuda_bf16.h>

#include "bench.h"

typedef __nv_bfloat16 bf16;
typedef __nv_bfloat162 bf162;

enum {
    ROW = 4096
};

__global__ void k_copy(const bf162 *x, bf162 *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = x[i];
}

__global__ void k_scale(const bf162 *x, bf162 *y, size_t n, bf162 a)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = __hmul2(a, x[i]);
}

__global__ void k_add(const bf162 *x, const bf162 *y, bf162 *z, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        z[i] = __hadd2(x[i], y[i]);
}

__global__ void k_triad(const bf162 *x, const bf162 *y, bf162 *z, size_t n, bf162 a)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        z[i] = __hfma2(a, y[i], x[i]);
}

/* Block-wide sum over 256 threads. */
__device__ float block_sum(float v, float *red)
{
    for (int o = 16; o; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
    for (int w = 0; w < (int)blockDim.x / 32; w++)
        v += red[w];
    return v;
}

__device__ float block_max(float v, float *red)
{
    for (int o = 16; o; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < (int)blockDim.x / 32; w++)
        v = fmaxf(v, red[w]);
    return v;
}

/* One block per row of ROW values; kind 0 = RMSNorm, 1 = LayerNorm, 2 = softmax. */
__global__ void k_rows(const bf16 *x, bf16 *y, const bf16 *w, int kind)
{
    __shared__ float red[32];
    const bf16 *in = x + (size_t)blockIdx.x * ROW;
    bf16 *out = y + (size_t)blockIdx.x * ROW;
    float v[ROW / 256], a = 0.0f, b = 0.0f;

    for (int j = 0; j < ROW / 256; j++)
        v[j] = (float)in[threadIdx.x + 256 * j];
    if (kind == 2) {
        float mx = -INFINITY;
        for (int j = 0; j < ROW / 256; j++)
            mx = fmaxf(mx, v[j]);
        mx = block_max(mx, red);
        for (int j = 0; j < ROW / 256; j++)
            b += v[j] = __expf(v[j] - mx);
        b = 1.0f / block_sum(b, red);
        for (int j = 0; j < ROW / 256; j++)
            out[threadIdx.x + 256 * j] = bf16(v[j] * b);
        return;
    }
    if (kind == 1) {
        for (int j = 0; j < ROW / 256; j++)
            a += v[j];
        a = block_sum(a, red) / ROW;
    }
    for (int j = 0; j < ROW / 256; j++)
        b += (v[j] - a) * (v[j] - a);
    b = rsqrtf(block_sum(b, red) / ROW + 1e-5f);
    for (int j = 0; j < ROW / 256; j++)
        out[threadIdx.x + 256 * j] = bf16((v[j] - a) * b * (float)w[threadIdx.x + 256 * j]);
}

/* AdamW (Loshchilov & Hutter) with bias correction folded into lr and eps constants. */
__global__ void k_adamw(float *p, float *m, float *v, const bf16 *g, bf16 *p16, size_t n)
{
    const float b1 = 0.9f, b2 = 0.95f, lr = 1e-4f, eps = 1e-8f, wd = 0.1f;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float gi = (float)g[i], mi = b1 * m[i] + (1 - b1) * gi, vi = b2 * v[i] + (1 - b2) * gi * gi;
        float pi = p[i] * (1 - lr * wd) - lr * mi / (sqrtf(vi) + eps);

        m[i] = mi;
        v[i] = vi;
        p[i] = pi;
        p16[i] = bf16(pi);
    }
}

enum kind {
    COPY,
    SCALE,
    ADD,
    TRIAD,
    RMSNORM,
    LAYERNORM,
    SOFTMAX,
    ADAMW,
    NKINDS
};

static const char *const names[NKINDS] = { "copy",    "scale",     "add",     "triad",
                                           "rmsnorm", "layernorm", "softmax", "adamw" };

struct mem_ctx {
    enum kind k;
    size_t n; /* elements (bf16), or parameters for adamw */
    void *buf[5];
    int blocks;
};

static void run_mem(void *vctx, cudaStream_t s)
{
    mem_ctx *c = (mem_ctx *)vctx;
    bf162 a = __floats2bfloat162_rn(0.5f, 0.5f);
    size_t n2 = c->n / 2;

    switch (c->k) {
    case COPY:
        k_copy<<<c->blocks, 256, 0, s>>>((bf162 *)c->buf[0], (bf162 *)c->buf[1], n2);
        break;
    case SCALE:
        k_scale<<<c->blocks, 256, 0, s>>>((bf162 *)c->buf[0], (bf162 *)c->buf[1], n2, a);
        break;
    case ADD:
        k_add<<<c->blocks, 256, 0, s>>>((bf162 *)c->buf[0], (bf162 *)c->buf[1], (bf162 *)c->buf[2],
                                        n2);
        break;
    case TRIAD:
        k_triad<<<c->blocks, 256, 0, s>>>((bf162 *)c->buf[0], (bf162 *)c->buf[1],
                                          (bf162 *)c->buf[2], n2, a);
        break;
    case RMSNORM:
    case LAYERNORM:
    case SOFTMAX:
        k_rows<<<(unsigned)(c->n / ROW), 256, 0, s>>>((bf16 *)c->buf[0], (bf16 *)c->buf[1],
                                                      (bf16 *)c->buf[2], c->k - RMSNORM);
        break;
    default:
        k_adamw<<<c->blocks, 256, 0, s>>>((float *)c->buf[0], (float *)c->buf[1],
                                          (float *)c->buf[2], (bf16 *)c->buf[3], (bf16 *)c->buf[4],
                                          c->n);
    }
}

/* Bytes read + written per call. */
static double moved(enum kind k, size_t n)
{
    switch (k) {
    case ADD:
    case TRIAD:
        return 3.0 * 2 * n;
    case ADAMW:
        return 28.0 * n;
    default:
        return 2.0 * 2 * n;
    }
}

int bench_membound(struct bench_out *out, const struct bench_opts *o)
{
    cudaDeviceProp prop;
    cudaStream_t stream;
    const size_t first = 1u << 20;

    CUDA_CHECK(cudaGetDeviceProperties(&prop, o->device));
    CUDA_CHECK(cudaStreamCreate(&stream));
    std::fprintf(stderr, "memory-bound suite\n");
    for (int k = 0; k < NKINDS; k++) {
        for (size_t bytes = o->quick ? 64u << 20 : first; bytes <= o->max_bytes; bytes *= 4) {
            mem_ctx c;
            struct bench_row r;

            std::memset(&c, 0, sizeof(c));
            c.k = (enum kind)k;
            c.n = k == ADAMW ? bytes / 4 : bytes / 2; /* one array of `bytes` */
            c.n -= c.n % ROW;
            c.blocks = prop.multiProcessorCount * 8;
            for (int b = 0; b < 5; b++) {
                size_t sz = k == ADAMW ? (b < 3 ? 4 : 2) * c.n : 2 * c.n;

                if (b >= (k == ADAMW ? 5 : 3))
                    break;
                CUDA_CHECK(cudaMalloc(&c.buf[b], sz));
                bench_fill(c.buf[b], sz / (k == ADAMW && b < 3 ? 4 : 2),
                           k == ADAMW && b < 3 ? "fp32" : "bf16", 10 + b, stream);
            }
            if (k == ADAMW) /* v must be >= 0 */
                CUDA_CHECK(cudaMemsetAsync(c.buf[2], 0, 4 * c.n, stream));
            std::memset(&r, 0, sizeof(r));
            r.kernel = names[k];
            r.bytes = moved(c.k, c.n);
            r.dtype = k == ADAMW ? "fp32" : "bf16";
            r.gpus = 1;
            r.nodes = 1;
            r.time_s = bench_time(run_mem, &c, stream, o);
            r.gbps = r.bytes / r.time_s / 1e9;
            std::snprintf(r.notes, sizeof(r.notes), "%zu %s; bytes = read + written%s", c.n,
                          k == ADAMW ? "parameters" : "elements",
                          k >= RMSNORM && k <= SOFTMAX ? "; rows of 4096" : "");
            bench_write(out, &r);
            for (int b = 0; b < 5; b++)
                if (c.buf[b])
                    CUDA_CHECK(cudaFree(c.buf[b]));
        }
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}

struct copy_ctx {
    void *dst, *src;
    size_t bytes;
    cudaMemcpyKind kind;
    int dst_dev, src_dev;
    bool peer;
};

static void run_copy(void *vctx, cudaStream_t s)
{
    copy_ctx *c = (copy_ctx *)vctx;

    if (c->peer)
        cudaMemcpyPeerAsync(c->dst, c->dst_dev, c->src, c->src_dev, c->bytes, s);
    else
        cudaMemcpyAsync(c->dst, c->src, c->bytes, c->kind, s);
}

static void copy_row(struct bench_out *out, const struct bench_opts *o, copy_ctx *c,
                     const char *kernel, int gpus, const char *note, cudaStream_t stream)
{
    struct bench_row r;

    std::memset(&r, 0, sizeof(r));
    r.kernel = kernel;
    r.bytes = (double)c->bytes;
    r.gpus = gpus;
    r.nodes = 1;
    r.time_s = bench_time(run_copy, c, stream, o);
    r.gbps = r.bytes / r.time_s / 1e9;
    std::snprintf(r.notes, sizeof(r.notes), "%s", note);
    bench_write(out, &r);
}

int bench_copies(struct bench_out *out, const struct bench_opts *o)
{
    cudaStream_t stream;
    int ndev = 0;

    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaStreamCreate(&stream));
    std::fprintf(stderr, "copy suite\n");
    for (size_t bytes = o->quick ? 64u << 20 : 1u << 20; bytes <= o->max_bytes; bytes *= 4) {
        copy_ctx c;
        void *host, *dev;

        CUDA_CHECK(cudaMallocHost(&host, bytes));
        CUDA_CHECK(cudaMalloc(&dev, bytes));
        std::memset(host, 1, bytes);
        c = { dev, host, bytes, cudaMemcpyHostToDevice, 0, 0, false };
        copy_row(out, o, &c, "h2d", 1, "cudaMemcpyAsync from pinned host memory", stream);
        c = { host, dev, bytes, cudaMemcpyDeviceToHost, 0, 0, false };
        copy_row(out, o, &c, "d2h", 1, "cudaMemcpyAsync to pinned host memory", stream);
        if (ndev >= 2) {
            void *peer;
            int can = 0;

            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, o->device, (o->device + 1) % ndev));
            CUDA_CHECK(cudaSetDevice((o->device + 1) % ndev));
            CUDA_CHECK(cudaMalloc(&peer, bytes));
            if (can)
                cudaDeviceEnablePeerAccess(o->device, 0);
            CUDA_CHECK(cudaSetDevice(o->device));
            if (can)
                cudaDeviceEnablePeerAccess((o->device + 1) % ndev, 0);
            cudaGetLastError(); /* "already enabled" on later sizes is fine */
            c = { dev, peer, bytes, cudaMemcpyDefault, o->device, (o->device + 1) % ndev, true };
            copy_row(out, o, &c, "d2d", 2,
                     can ? "cudaMemcpyPeerAsync, peer access enabled (NVLink or PCIe P2P)"
                         : "cudaMemcpyPeerAsync without peer access (staged through the host)",
                     stream);
            CUDA_CHECK(cudaFree(peer));
        }
        CUDA_CHECK(cudaFree(dev));
        CUDA_CHECK(cudaFreeHost(host));
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}
