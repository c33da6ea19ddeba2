/*
 * sustained.cu - GEMMs as a training run sees them: minutes of back-to-back cuBLASLt GEMMs on
 * random data, with the SM clock and the board power logged through NVML, after a short burst
 * from an idle GPU (docs/calibration.md, "The GPU under load").
 *
 * Matmuls on A100 / H100 are power limited: after a few seconds at the cap the SM clock drops
 * below its maximum, further on random operands than on zeros (Horace He, thonking.ai 2024;
 * standardkernel.com, Feb 2026: an H100 16384^3 GEMM takes 11.04 ms with idle gaps at
 * 1970-1980 MHz and 12.36 ms back to back). For each dtype and shape this suite writes two
 * rows for `simtrain calibrate`:
 *   gemm            a burst after 2 s idle: 100 ms of GEMMs, median time, median SM clock
 *   gemm_sustained  `--sustained-s` seconds back to back (default 120); the first quarter is
 *                   dropped as the ramp to the cap, the rest gives the mean time per GEMM, the
 *                   median SM clock and the mean power (sm_clock_mhz, power_w)
 * calibrate fits the kernel efficiency to both rows at their clocks and takes the sustained
 * clock from the gemm_sustained rows.
 *
 * NVML is loaded at run time (libnvidia-ml.so.1, the driver's), so the suite builds without
 * the NVML headers; without the library the clock and power columns stay empty and calibrate
 * fits the sustained clock instead.
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <dlfcn.h>

#include "bench.h"

/* ---- NVML, through dlopen (the few entry points of nvml.h this suite needs) ---- */

typedef struct nvml_device *nvml_device_t;
typedef int nvml_fn_init(void);
typedef int nvml_fn_by_bus(const char *bus, nvml_device_t *dev);
typedef int nvml_fn_clock(nvml_device_t dev, int type, unsigned *mhz);
typedef int nvml_fn_power(nvml_device_t dev, unsigned *mw);

enum {
    NVML_CLOCK_SM = 1 /* nvmlClockType_t: GRAPHICS 0, SM 1, MEM 2 */
};

struct nvml {
    void *lib;
    nvml_device_t dev;
    nvml_fn_clock *clock;
    nvml_fn_power *power;
};

static bool nvml_open(struct nvml *n, int cuda_device)
{
    char bus[32];
    nvml_fn_init *init;
    nvml_fn_by_bus *by_bus;

    std::memset(n, 0, sizeof(*n));
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!n->lib)
        return false;
    init = (nvml_fn_init *)dlsym(n->lib, "nvmlInit_v2");
    by_bus = (nvml_fn_by_bus *)dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    n->clock = (nvml_fn_clock *)dlsym(n->lib, "nvmlDeviceGetClockInfo");
    n->power = (nvml_fn_power *)dlsym(n->lib, "nvmlDeviceGetPowerUsage");
    if (!init || !by_bus || !n->clock || !n->power || init() != 0 ||
        cudaDeviceGetPCIBusId(bus, sizeof(bus), cuda_device) != cudaSuccess ||
        by_bus(bus, &n->dev) != 0) {
        dlclose(n->lib);
        n->lib = nullptr;
        return false;
    }
    return true;
}

static void nvml_close(struct nvml *n)
{
    if (!n->lib)
        return;
    typedef int fn_shutdown(void);
    fn_shutdown *shutdown = (fn_shutdown *)dlsym(n->lib, "nvmlShutdown");
    if (shutdown)
        shutdown();
    dlclose(n->lib);
    n->lib = nullptr;
}

/* ---- a sampler thread: SM clock (MHz) and power (W) every 50 ms ---- */

struct sample {
    double t_s, mhz, watts;
};

struct sampler {
    struct nvml *nvml;
    std::atomic<bool> stop;
    std::mutex mu;
    std::vector<sample> v;
    std::chrono::steady_clock::time_point t0;
    std::thread th;
};

static double since(const std::chrono::steady_clock::time_point &t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static void sampler_loop(sampler *s)
{
    while (!s->stop.load()) {
        unsigned mhz = 0, mw = 0;

        if (s->nvml->clock(s->nvml->dev, NVML_CLOCK_SM, &mhz) == 0 &&
            s->nvml->power(s->nvml->dev, &mw) == 0) {
            std::lock_guard<std::mutex> lock(s->mu);
            s->v.push_back({ since(s->t0), (double)mhz, mw / 1000.0 });
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

/* Median SM clock and mean power of the samples taken in [from_s, to_s] (0 when none). */
static void sampled(sampler *s, double from_s, double to_s, double *mhz, double *watts)
{
    std::vector<double> c;
    double w = 0;
    std::lock_guard<std::mutex> lock(s->mu);

    for (const sample &x : s->v)
        if (x.t_s >= from_s && x.t_s <= to_s) {
            c.push_back(x.mhz);
            w += x.watts;
        }
    *mhz = *watts = 0;
    if (c.empty())
        return;
    std::sort(c.begin(), c.end());
    *mhz = c[c.size() / 2];
    *watts = w / (double)c.size();
}

/* ---- runs ---- */

/* Seconds per GEMM over back-to-back launches for `wall_s`, timed in 0.5 s windows. */
struct window {
    double t0_s, t1_s, per_gemm_s;
};

static std::vector<window> run_for(struct bench_gemm *g, cudaStream_t stream, double wall_s,
                                   double probe_s, const std::chrono::steady_clock::time_point &t0)
{
    std::vector<window> out;
    long per = std::max(1L, (long)(0.5 / probe_s));
    double start = since(t0);
    cudaEvent_t a, b;

    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    while (since(t0) - start < wall_s) {
        float ms = 0;
        double w0 = since(t0);

        CUDA_CHECK(cudaEventRecord(a, stream));
        for (long i = 0; i < per; i++)
            bench_gemm_run(g, stream);
        CUDA_CHECK(cudaEventRecord(b, stream));
        CUDA_CHECK(cudaEventSynchronize(b));
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        out.push_back({ w0, since(t0), ms / 1e3 / (double)per });
    }
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    return out;
}

static void one_shape(struct bench_out *out, const struct bench_opts *o, sampler *s,
                      cudaStream_t stream, long m, long n, long k, const char *dtype)
{
    struct bench_gemm *g = bench_gemm_new(m, n, k, dtype, stream, o->max_bytes);
    struct bench_row r;
    std::vector<window> w;
    std::vector<double> t;
    double probe, sum = 0, mhz, watts;
    size_t first;

    if (!g)
        return;
    std::this_thread::sleep_for(std::chrono::seconds(2)); /* idle: the clock recovers */
    probe = std::max(1e-6, bench_time(bench_gemm_run_fn, g, stream, o));
    /* burst: 100 ms after idling again */
    std::this_thread::sleep_for(std::chrono::seconds(2));
    w = run_for(g, stream, 0.1, probe, s->t0);
    for (const window &x : w)
        t.push_back(x.per_gemm_s);
    std::sort(t.begin(), t.end());
    sampled(s, w.front().t0_s, w.back().t1_s, &mhz, &watts);
    std::memset(&r, 0, sizeof(r));
    r.kernel = "gemm";
    std::snprintf(r.shape, sizeof(r.shape), "m=%ld n=%ld k=%ld", m, n, k);
    r.dtype = dtype;
    r.gpus = r.nodes = 1;
    r.time_s = t[t.size() / 2];
    r.flops = 2.0 * m * n * k;
    r.clock_mhz = mhz;
    r.power_w = watts;
    std::snprintf(r.notes, sizeof(r.notes),
                  "burst: 100 ms of cuBLASLt GEMMs after 2 s idle, random data in [-1, 1]");
    bench_write(out, &r);
    /* sustained: back to back; the first quarter is the ramp to the power cap */
    w = run_for(g, stream, o->sustained_s, probe, s->t0);
    first = w.size() / 4;
    for (size_t i = first; i < w.size(); i++)
        sum += w[i].per_gemm_s;
    sampled(s, w[first].t0_s, w.back().t1_s, &mhz, &watts);
    r.kernel = "gemm_sustained";
    r.time_s = sum / (double)(w.size() - first);
    r.clock_mhz = mhz;
    r.power_w = watts;
    std::snprintf(r.notes, sizeof(r.notes),
                  "sustained: %.0f s back to back on random data, mean of the last %zu of %zu "
                  "0.5 s windows; median SM clock, mean power over them (NVML)",
                  o->sustained_s, w.size() - first, w.size());
    bench_write(out, &r);
    bench_gemm_free(g);
}

int bench_sustained(struct bench_out *out, const struct bench_opts *o)
{
    static const long shapes[][3] = {
        { 8192, 8192, 8192 },
        { 16384, 16384, 16384 },
        { 16384, 14336, 4096 }, /* an MLP up projection: 16k tokens, hidden 4096 */
    };
    cudaDeviceProp prop;
    cudaStream_t stream;
    struct nvml nvml;
    sampler s;
    std::vector<const char *> dtypes = { "bf16" };

    CUDA_CHECK(cudaGetDeviceProperties(&prop, o->device));
    if (prop.major * 10 + prop.minor >= 89)
        dtypes.push_back("fp8");
    std::fprintf(stderr, "sustained suite (%.0f s per dtype and shape)\n", o->sustained_s);
    if (!nvml_open(&nvml, o->device))
        std::fprintf(stderr,
                     "  NVML (libnvidia-ml.so.1) not available: no clock or power logged\n");
    CUDA_CHECK(cudaStreamCreate(&stream));
    s.nvml = &nvml;
    s.stop = false;
    s.t0 = std::chrono::steady_clock::now();
    if (nvml.lib)
        s.th = std::thread(sampler_loop, &s);
    for (const char *dt : dtypes)
        for (size_t i = 0; i < (o->quick ? 1 : sizeof(shapes) / sizeof(shapes[0])); i++)
            one_shape(out, o, &s, stream, shapes[i][0], shapes[i][1], shapes[i][2], dt);
    s.stop = true;
    if (s.th.joinable())
        s.th.join();
    nvml_close(&nvml);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}
