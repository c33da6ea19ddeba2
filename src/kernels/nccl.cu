/*
 * nccl.cu - NCCL collectives over message sizes, as nccl-tests measures them.
 *
 * Operations: all_reduce, all_gather, reduce_scatter, all_to_all (grouped
 * ncclSend/ncclRecv, as NCCL implements it) and send_recv (each rank sends to
 * the next and receives from the previous). Size S is nccl-tests' size: the
 * whole buffer for all_reduce, the gathered output for all_gather, the input
 * for reduce_scatter, each rank's buffer for all_to_all, the payload for
 * send_recv. Bus bandwidth = S / t * factor with nccl-tests' factors
 * (doc/PERFORMANCE.md; formulas.md 5.2). Float data, sum, out of place.
 *
 * One process drives 2..N local GPUs (ncclCommInitAll), or, built with MPI,
 * one process per GPU across nodes (ncclCommInitRank; rank 0 writes). The
 * algorithm and protocol columns record NCCL_ALGO / NCCL_PROTO when they
 * name one choice (run_all.sh sweeps them), and stay empty (auto) otherwise.
 */
#include <cctype>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench.h"

#ifndef SIMTRAIN_BENCH_NCCL

int bench_nccl(struct bench_out *out, const struct bench_opts *o, int argc, char **argv)
{
    (void)out, (void)o, (void)argc, (void)argv;
    std::fprintf(stderr, "simtrain-bench: built without NCCL; collective suite skipped\n");
    return 0;
}

#else

#include <nccl.h>
#ifdef SIMTRAIN_BENCH_MPI
#include <mpi.h>
#endif

#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            std::fprintf(stderr, "simtrain-bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                         ncclGetErrorString(r_));                                                  \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

enum op {
    ALL_REDUCE,
    ALL_GATHER,
    REDUCE_SCATTER,
    ALL_TO_ALL,
    SEND_RECV,
    NOPS
};
static const char *const op_names[NOPS] = { "all_reduce", "all_gather", "reduce_scatter",
                                            "all_to_all", "send_recv" };

/* The ranks this process drives: all of them (single process) or its own (MPI). */
struct group {
    int nranks;           /* ranks in the communicator */
    int first_rank;       /* global rank of local member 0 */
    std::vector<int> dev; /* local devices */
    std::vector<ncclComm_t> comm;
    std::vector<cudaStream_t> stream;
    std::vector<float *> send, recv;
};

static double bus_factor(enum op op, int n)
{
    switch (op) {
    case ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case SEND_RECV:
        return 1.0;
    default:
        return (double)(n - 1) / n;
    }
}

static void launch(struct group *g, enum op op, size_t bytes)
{
    size_t n = (size_t)g->nranks, count = bytes / sizeof(float);

    NCCL_CHECK(ncclGroupStart());
    for (size_t i = 0; i < g->dev.size(); i++) {
        int rank = g->first_rank + (int)i;
        ncclComm_t c = g->comm[i];
        cudaStream_t s = g->stream[i];

        switch (op) {
        case ALL_REDUCE:
            NCCL_CHECK(ncclAllReduce(g->send[i], g->recv[i], count, ncclFloat, ncclSum, c, s));
            break;
        case ALL_GATHER:
            NCCL_CHECK(ncclAllGather(g->send[i], g->recv[i], count / n, ncclFloat, c, s));
            break;
        case REDUCE_SCATTER:
            NCCL_CHECK(
                ncclReduceScatter(g->send[i], g->recv[i], count / n, ncclFloat, ncclSum, c, s));
            break;
        case ALL_TO_ALL:
            for (size_t p = 0; p < n; p++) {
                NCCL_CHECK(
                    ncclSend(g->send[i] + p * (count / n), count / n, ncclFloat, (int)p, c, s));
                NCCL_CHECK(
                    ncclRecv(g->recv[i] + p * (count / n), count / n, ncclFloat, (int)p, c, s));
            }
            break;
        default:
            NCCL_CHECK(ncclSend(g->send[i], count, ncclFloat, (rank + 1) % (int)n, c, s));
            NCCL_CHECK(ncclRecv(g->recv[i], count, ncclFloat, (rank + (int)n - 1) % (int)n, c, s));
        }
    }
    NCCL_CHECK(ncclGroupEnd());
}

static void sync_all(struct group *g)
{
    for (size_t i = 0; i < g->dev.size(); i++) {
        CUDA_CHECK(cudaSetDevice(g->dev[i]));
        CUDA_CHECK(cudaStreamSynchronize(g->stream[i]));
    }
#ifdef SIMTRAIN_BENCH_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
}

/* Mean seconds per collective over all ranks (the slowest rank's clock under MPI). */
static double time_op(struct group *g, enum op op, size_t bytes, const struct bench_opts *o)
{
    using clk = std::chrono::steady_clock;
    double probe, t;
    long iters;

    for (int i = 0; i < 3; i++)
        launch(g, op, bytes);
    sync_all(g);
    auto t0 = clk::now();
    launch(g, op, bytes);
    sync_all(g);
    probe = std::chrono::duration<double>(clk::now() - t0).count();
#ifdef SIMTRAIN_BENCH_MPI
    MPI_Allreduce(MPI_IN_PLACE, &probe, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    iters = (long)(o->budget_s / (probe > 1e-7 ? probe : 1e-7));
    iters = iters < o->min_iters ? o->min_iters : iters > 2000 ? 2000 : iters;
    t0 = clk::now();
    for (long i = 0; i < iters; i++)
        launch(g, op, bytes);
    sync_all(g);
    t = std::chrono::duration<double>(clk::now() - t0).count() / (double)iters;
#ifdef SIMTRAIN_BENCH_MPI
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    return t;
}

/* NCCL_ALGO / NCCL_PROTO spelled as the measurements CSV does, or "" when not one choice. */
static std::string env_choice(const char *var)
{
    static const char *const map[][2] = {
        { "ring", "ring" },          { "tree", "tree" }, { "nvls", "nvls" },
        { "nvlstree", "nvls_tree" }, { "ll", "ll" },     { "ll128", "ll128" },
        { "simple", "simple" },
    };
    const char *v = std::getenv(var);
    std::string s;

    if (!v)
        return "";
    for (const char *p = v; *p; p++)
        s += (char)std::tolower((unsigned char)*p);
    for (auto &m : map)
        if (s == m[0])
            return m[1];
    return "";
}

static void run_group(struct group *g, struct bench_out *out, const struct bench_opts *o, int nodes)
{
    std::string algo = env_choice("NCCL_ALGO"), proto = env_choice("NCCL_PROTO");
    bool writer = g->first_rank == 0;

    for (int op = 0; op < NOPS; op++) {
        for (double bytes = 1024; bytes <= o->max_bytes; bytes *= o->quick ? 16 : 2) {
            size_t b = (size_t)bytes;
            struct bench_row r;

            b -= b % (sizeof(float) * (size_t)g->nranks);
            if (!b)
                continue;
            std::memset(&r, 0, sizeof(r));
            r.time_s = time_op(g, (enum op)op, b, o);
            if (!writer)
                continue;
            r.kernel = op_names[op];
            r.bytes = (double)b;
            r.dtype = "fp32";
            r.gpus = g->nranks;
            r.nodes = nodes;
            r.algo = algo.c_str();
            r.proto = proto.c_str();
            r.gbps = (double)b / r.time_s * bus_factor((enum op)op, g->nranks) / 1e9;
            std::snprintf(r.notes, sizeof(r.notes),
                          "NCCL %d.%d.%d, out of place, float sum; gbps = nccl-tests busbw",
                          NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
            bench_write(out, &r);
        }
    }
}

static void alloc_buffers(struct group *g, size_t bytes)
{
    for (size_t i = 0; i < g->dev.size(); i++) {
        cudaStream_t s;
        float *a, *b;

        CUDA_CHECK(cudaSetDevice(g->dev[i]));
        CUDA_CHECK(cudaStreamCreate(&s));
        CUDA_CHECK(cudaMalloc(&a, bytes));
        CUDA_CHECK(cudaMalloc(&b, bytes));
        bench_fill(a, bytes / sizeof(float), "fp32", 20 + (unsigned)i, s);
        g->stream.push_back(s);
        g->send.push_back(a);
        g->recv.push_back(b);
    }
}

static void free_group(struct group *g)
{
    for (size_t i = 0; i < g->dev.size(); i++) {
        CUDA_CHECK(cudaSetDevice(g->dev[i]));
        CUDA_CHECK(cudaFree(g->send[i]));
        CUDA_CHECK(cudaFree(g->recv[i]));
        CUDA_CHECK(cudaStreamDestroy(g->stream[i]));
        ncclCommDestroy(g->comm[i]);
    }
}

int bench_nccl(struct bench_out *out, const struct bench_opts *o, int argc, char **argv)
{
    int ndev = 0;

    (void)argc, (void)argv;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
#ifdef SIMTRAIN_BENCH_MPI
    int rank, size, nodes = 1;
    char host[64] = { 0 };
    struct group g;
    ncclUniqueId id;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        std::vector<char> all((size_t)size * sizeof(host));

        gethostname(host, sizeof(host) - 1);
        MPI_Allgather(host, sizeof(host), MPI_CHAR, all.data(), sizeof(host), MPI_CHAR,
                      MPI_COMM_WORLD);
        for (int r = 1; r < size; r++) {
            bool seen = false;
            for (int q = 0; q < r && !seen; q++)
                seen = !std::strncmp(&all[(size_t)r * sizeof(host)], &all[(size_t)q * sizeof(host)],
                                     sizeof(host));
            nodes += !seen;
        }
        if (rank == 0)
            NCCL_CHECK(ncclGetUniqueId(&id));
        MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
        g.nranks = size;
        g.first_rank = rank;
        g.dev.push_back(rank % ndev);
        g.comm.resize(1);
        CUDA_CHECK(cudaSetDevice(g.dev[0]));
        NCCL_CHECK(ncclCommInitRank(&g.comm[0], size, id, rank));
        alloc_buffers(&g, (size_t)o->max_bytes);
        if (rank == 0)
            std::fprintf(stderr, "nccl suite: %d ranks on %d nodes\n", size, nodes);
        run_group(&g, out, o, nodes);
        free_group(&g);
        return 0;
    }
#endif
    int max = o->max_gpus > 0 && o->max_gpus < ndev ? o->max_gpus : ndev;

    if (max < 2) {
        std::fprintf(stderr, "nccl suite: %d GPU visible, collectives need 2; skipped\n", ndev);
        return 0;
    }
    for (int n = 2; n <= max; n = n * 2 > max && n < max ? max : n * 2) {
        struct group g;

        g.nranks = n;
        g.first_rank = 0;
        for (int i = 0; i < n; i++)
            g.dev.push_back(i);
        g.comm.resize((size_t)n);
        NCCL_CHECK(ncclCommInitAll(g.comm.data(), n, g.dev.data()));
        alloc_buffers(&g, (size_t)o->max_bytes);
        std::fprintf(stderr, "nccl suite: %d GPUs\n", n);
        run_group(&g, out, o, 1);
        free_group(&g);
    }
    CUDA_CHECK(cudaSetDevice(o->device));
    return 0;
}

#endif
