/*
 * main.cu - simtrain-bench: run the kernel-set suites and append their rows to a
 * measurements CSV for `simtrain calibrate` (format: src/kernels/README.md).
 *
 *   simtrain-bench [--suite gemm,attention,membound,fp8cast,copy,nccl,sustained] [--out FILE]
 *                  [--device N] [--gpus N] [--budget-ms MS] [--max-bytes BYTES]
 *                  [--sustained-s S] [--quick]
 */
#include <cstdint>
#include <cstring>
#include <ctime>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <unistd.h>

#ifdef SIMTRAIN_BENCH_MPI
#include <mpi.h>
#endif

#include "bench.h"

#ifndef SIMTRAIN_VERSION
#define SIMTRAIN_VERSION "dev"
#endif

static const char *const header =
    "kernel,shape,bytes,dtype,gpu,gpus,nodes,algo,proto,time_us,tflops,gbps,date,source,notes,"
    "sm_clock_mhz,power_w\n";

/* CSV field: quoted when it holds a comma, quote or line break (RFC 4180). */
static void field(FILE *f, const char *s, bool last)
{
    if (std::strpbrk(s, ",\"\r\n")) {
        std::fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                std::fputc('"', f);
            std::fputc(*s, f);
        }
        std::fputc('"', f);
    } else {
        std::fputs(s, f);
    }
    std::fputc(last ? '\n' : ',', f);
}

static void number(FILE *f, double v, const char *fmt)
{
    if (v > 0)
        std::fprintf(f, fmt, v);
    std::fputc(',', f);
}

void bench_write(struct bench_out *out, const struct bench_row *r)
{
    FILE *f = out->f;

    if (!f)
        return;
    field(f, r->kernel, false);
    field(f, r->shape, false);
    number(f, r->bytes, "%.0f");
    field(f, r->dtype ? r->dtype : "", false);
    field(f, out->gpu, false);
    number(f, r->gpus, "%.0f");
    number(f, r->nodes, "%.0f");
    field(f, r->algo ? r->algo : "", false);
    field(f, r->proto ? r->proto : "", false);
    number(f, r->time_s * 1e6, "%.4f");
    number(f, r->flops > 0 && r->time_s > 0 ? r->flops / r->time_s / 1e12 : 0, "%.2f");
    number(f, r->gbps, "%.2f");
    field(f, out->date, false);
    field(f, out->source, false);
    field(f, r->notes, false);
    number(f, r->clock_mhz, "%.0f");
    if (r->power_w > 0)
        std::fprintf(f, "%.1f", r->power_w);
    std::fputc('\n', f);
    std::fflush(f);
    std::fprintf(stderr, "  %-20s %-40s %10.2f us\n", r->kernel, r->shape[0] ? r->shape : "-",
                 r->time_s * 1e6);
}

double bench_time(bench_fn *fn, void *ctx, cudaStream_t stream, const struct bench_opts *o)
{
    cudaEvent_t start, stop;
    float ms = 0;
    double probe;
    long iters;

    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    fn(ctx, stream);
    fn(ctx, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaEventRecord(start, stream));
    fn(ctx, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    probe = ms > 0 ? ms / 1e3 : 1e-6;
    iters = (long)(o->budget_s / probe);
    iters = iters < o->min_iters ? o->min_iters : iters > 10000 ? 10000 : iters;
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (long i = 0; i < iters; i++)
        fn(ctx, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms / 1e3 / (double)iters;
}

/* Small values in [-1, 1] from a hash of the index, so no overflow in any dtype. */
template <typename T> __global__ void fill_kernel(T *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;

        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = T((float)(h % 2001u) / 1000.0f - 1.0f);
    }
}

void bench_fill(void *dev, size_t n, const char *dtype, unsigned seed, cudaStream_t stream)
{
    const int threads = 256, blocks = 1024;

    if (!std::strcmp(dtype, "bf16"))
        fill_kernel<<<blocks, threads, 0, stream>>>((__nv_bfloat16 *)dev, n, seed);
    else if (!std::strcmp(dtype, "fp16"))
        fill_kernel<<<blocks, threads, 0, stream>>>((__half *)dev, n, seed);
    else if (!std::strcmp(dtype, "fp8"))
        fill_kernel<<<blocks, threads, 0, stream>>>((__nv_fp8_e4m3 *)dev, n, seed);
    else
        fill_kernel<<<blocks, threads, 0, stream>>>((float *)dev, n, seed);
    CUDA_CHECK(cudaGetLastError());
}

static void usage(FILE *f)
{
    std::fputs(
        "usage: simtrain-bench [--suite LIST] [--out FILE] [--device N] [--gpus N]\n"
        "                      [--budget-ms MS] [--max-bytes BYTES] [--quick]\n"
        "  --suite      comma list of gemm, attention, membound, fp8cast, copy, nccl and\n"
        "               sustained (default: all but sustained, which takes minutes)\n"
        "  --out        measurements CSV to append to (default measurements.csv; - = stdout)\n"
        "  --device     GPU for the single-GPU suites (default 0)\n"
        "  --gpus       collectives on up to N GPUs (default: all visible; with MPI: all ranks)\n"
        "  --budget-ms  timing budget per row (default 200)\n"
        "  --max-bytes  largest buffer or message (default 1 GiB)\n"
        "  --sustained-s  back-to-back seconds per dtype and shape of the sustained suite\n"
        "               (default 120; NVML logs the SM clock and power)\n"
        "  --quick      fewer shapes and sizes (a smoke test)\n",
        f);
}

static bool has_suite(const char *list, const char *name)
{
    size_t n = std::strlen(name);

    for (const char *p = list; (p = std::strstr(p, name)) != nullptr; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static void open_output(struct bench_out *out, const char *path, int device)
{
    cudaDeviceProp prop;
    char host[64] = "unknown";
    std::time_t now = std::time(nullptr);

    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::snprintf(out->gpu, sizeof(out->gpu), "%s", prop.name);
    std::strftime(out->date, sizeof(out->date), "%Y-%m-%d", std::gmtime(&now));
    gethostname(host, sizeof(host) - 1);
    std::snprintf(out->source, sizeof(out->source), "simtrain-bench %s on %s (sm_%d%d, %d SMs)",
                  SIMTRAIN_VERSION, host, prop.major, prop.minor, prop.multiProcessorCount);
    if (!path) {
        out->f = nullptr;
        return;
    }
    if (!std::strcmp(path, "-")) {
        out->f = stdout;
    } else {
        out->f = std::fopen(path, "a");
        if (!out->f) {
            std::perror(path);
            std::exit(1);
        }
    }
    std::fseek(out->f, 0, SEEK_END);
    if (out->f == stdout || std::ftell(out->f) == 0)
        std::fputs(header, out->f);
}

int main(int argc, char **argv)
{
    struct bench_opts o = { 0.2, 5, 1024.0 * 1024 * 1024, 0, 0, false, 120 };
    const char *suites = "gemm,attention,membound,fp8cast,copy,nccl", *path = "measurements.csv";
    struct bench_out out;
    int rank = 0, rc = 0;

#ifdef SIMTRAIN_BENCH_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;

        if (!std::strcmp(a, "--quick")) {
            o.quick = true;
            continue;
        }
        if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        i++;
        if (!std::strcmp(a, "--suite"))
            suites = v;
        else if (!std::strcmp(a, "--out"))
            path = v;
        else if (!std::strcmp(a, "--device"))
            o.device = std::atoi(v);
        else if (!std::strcmp(a, "--gpus"))
            o.max_gpus = std::atoi(v);
        else if (!std::strcmp(a, "--budget-ms"))
            o.budget_s = std::atof(v) / 1e3;
        else if (!std::strcmp(a, "--max-bytes"))
            o.max_bytes = std::atof(v);
        else if (!std::strcmp(a, "--sustained-s"))
            o.sustained_s = std::atof(v) > 1 ? std::atof(v) : 1;
        else {
            std::fprintf(stderr, "simtrain-bench: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    CUDA_CHECK(cudaSetDevice(o.device));
    open_output(&out, rank == 0 ? path : nullptr, o.device);
    if (rank == 0)
        std::fprintf(stderr, "simtrain-bench: %s, writing %s\n", out.gpu, path);
    if (rank == 0 && has_suite(suites, "gemm"))
        rc |= bench_gemm(&out, &o);
    if (rank == 0 && has_suite(suites, "attention"))
        rc |= bench_attention(&out, &o);
    if (rank == 0 && has_suite(suites, "membound"))
        rc |= bench_membound(&out, &o);
    if (rank == 0 && has_suite(suites, "fp8cast"))
        rc |= bench_fp8_casts(&out, &o);
    if (rank == 0 && has_suite(suites, "sustained"))
        rc |= bench_sustained(&out, &o);
    if (rank == 0 && has_suite(suites, "copy"))
        rc |= bench_copies(&out, &o);
    if (has_suite(suites, "nccl"))
        rc |= bench_nccl(&out, &o, argc, argv);
    if (out.f && out.f != stdout)
        std::fclose(out.f);
#ifdef SIMTRAIN_BENCH_MPI
    MPI_Finalize();
#endif
    return rc;
}
