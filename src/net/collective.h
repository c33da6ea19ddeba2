/*
 * collective.h - the cost of one collective or point-to-point transfer on a
 * communicator placed on the cluster, with the algorithm and protocol NCCL
 * would pick.
 *
 * Two layers. nccl_tables.c reproduces NCCL's own performance model: the
 * channel count and per-channel bandwidth its topology search would find
 * (src/graph/search.cc: speed arrays, channel duplication, NVLS heads), and
 * the per (algorithm, protocol) latency and bandwidth of ncclTopoTuneModel
 * (src/graph/tuning.cc, src/tuning/nvls.cc; constants of NCCL 2.30.7 as
 * summarized in formulas.md §5.3), so selection is NCCL's (the minimum
 * predicted time, ncclTopoGetAlgoTime). collective.c turns the choice into a
 * duration and a link load, adding what NCCL's model leaves out on purpose:
 *
 *   - pipeline fill: a transfer reaches its steady rate only once every
 *     channel's staging buffer (NCCL_STEPS slots; 4 MiB Simple, 4.7 MiB
 *     LL128, 512 KiB LL, NCCL init.cc) is in flight, so
 *     fill = min(buffer, bytes / channels) / per-channel bandwidth;
 *   - host staging: without GPU peer-to-peer (GeForce) NCCL's SHM transport
 *     copies through host memory, bounded by the achieved PCIe rate and by
 *     DRAM, which every byte crosses twice (written, then read);
 *   - the fabric: a group whose inter-node peers are on different rails of
 *     a rail-optimized fabric (or any fabric without rails) crosses the
 *     spine: NIC bandwidth / oversubscription, two extra switch hops each way;
 *   - all-to-all and send/recv, which NCCL runs as grouped point-to-point
 *     outside its tuning model: all-to-all cannot aggregate several NICs per
 *     GPU (nccl-tests issue #267), so inter-node traffic goes through the
 *     rank's own NIC;
 *   - "hier" (intra-node reduce-scatter, inter-node all-reduce of 1/ppn of the
 *     data on every rail at once, intra-node all-gather): a modelling option,
 *     never chosen automatically, since NCCL does not do it (formulas.md §5.4).
 *
 * Sizes follow nccl-tests: `bytes` is the full buffer for all-reduce, the full
 * output for all-gather, the full input for reduce-scatter, the buffer for
 * broadcast and reduce, each rank's whole send buffer for all-to-all, and the
 * payload for send/recv. A calibrated figure in hw->coll_cal for the chosen
 * (operation, algorithm, protocol, intra/inter-node) replaces the model's
 * latency and bus bandwidth (a measurement beats a model).
 */
#ifndef SIMTRAIN_COLLECTIVE_H
#define SIMTRAIN_COLLECTIVE_H

#include <stdbool.h>

#include "model/scenario.h"
#include "model/topo.h"

struct coll_cost {
    enum coll_algo algo; /* what was chosen (or forced) */
    enum coll_proto proto;
    sim_time latency;    /* fixed part, ns (NCCL latency + pipeline fill) */
    double bus_bytes;    /* bytes each rank moves over the bottleneck tier, per direction */
    double bus_bw_Bps;   /* rate of those bytes in isolation, bytes/s (<= the tier's capacity) */
    enum link_tier tier; /* the bottleneck tier, for link sharing */
    const char *path;    /* static text: "NVLink/NVSwitch", "PCIe via host memory" ... */
};

/*
 * Cost of operation `op` on `bytes` (nccl-tests size, see above) over group
 * `g` on hardware `hw`, honouring cfg->algo / cfg->proto like NCCL_ALGO /
 * NCCL_PROTO (an algorithm the operation or machine cannot run falls back to
 * ring, as NCCL does). Pure; fills *out.
 */
void coll_estimate(const struct hardware *hw, const struct nccl_cfg *cfg,
                   const struct comm_group *g, enum coll_op op, double bytes,
                   struct coll_cost *out);

/* Duration in isolation: latency + bus_bytes / bus_bw_Bps, rounded up, ns. */
sim_time coll_time(const struct coll_cost *c);

/*
 * How a benchmark drives the GPUs (nccl-tests src/common.cu): one host thread
 * per GPU (mpirun -np N, or -t N; nccl-tests' default -g 1, and what a
 * training job does), or one thread driving every GPU of the communicator
 * through one ncclGroupStart/End (-g N, "single process").
 */
enum coll_launch {
    LAUNCH_PER_RANK,
    LAUNCH_SINGLE_PROCESS,
    LAUNCH_COUNT
};

/* "per-rank", "single-process". */
const char *coll_launch_name(int launch);

/*
 * Time per iteration that nccl-tests reports for a collective taking `gpu` ns
 * on the GPUs (coll_time()), when one host thread issues it on `host_gpus`
 * GPUs at `launch` ns of host work each, `iters` iterations timed (-n).
 * BenchTime() (nccl-tests src/common.cu) starts a wall-clock timer, enqueues
 * the iterations back to back without waiting, then synchronizes the streams,
 * so host enqueue (h = host_gpus x launch per iteration) and GPU work overlap
 * and the slower sets the pace; the faster shows once, at one end:
 * max(h, gpu) + min(h, gpu) / iters. Pure.
 */
sim_time coll_bench_time(sim_time gpu, sim_time launch, int host_gpus, int iters);

/*
 * Whether NCCL offers algorithm `a` on hw: NVLS and NVLS-Tree need NVLink
 * SHARP, an NVSwitch system of the Hopper generation or later (NCCL
 * src/transport/nvls.cc); the others are always available (ALGO_AUTO too).
 * The loader's nccl.algo check and `simtrain collective --algo` use it.
 */
bool coll_algo_available(const struct hardware *hw, enum coll_algo a);

/*
 * nccl-tests bus bandwidth factor (doc/PERFORMANCE.md): all-reduce
 * 2(n-1)/n; reduce-scatter, all-gather and all-to-all (n-1)/n; broadcast,
 * reduce and send/recv 1.
 */
double coll_bus_factor(enum coll_op op, int nranks);

/*
 * Per-GPU capacity of a tier, bytes/s per direction: the GPU's NVLink
 * bandwidth, its PCIe link, or its share of the node's NICs (0 when absent).
 */
double coll_tier_bw(const struct hardware *hw, enum link_tier tier);

/* ---- NCCL's model (nccl_tables.c), exposed for reports and tests ---------- */

/* What NCCL's topology search finds for one algorithm's graph. */
struct nccl_graph {
    int nchannels;   /* 0 = no graph (algorithm unavailable) */
    double bw_intra; /* per channel, GB/s (NCCL's units, 1e9 B/s) */
    double bw_inter; /* per channel, GB/s */
};

/* NCCL's predictions for one operation on one group. */
struct nccl_model {
    enum coll_op op;
    int arch; /* index into NCCL's tables: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell */
    int nranks, nnodes, ppn;
    bool nvlink; /* intra-node paths are NVLink (NCCL typeIntra NVL) */
    bool ll128;  /* LL128 enabled by default on this path */
    struct nccl_graph ring, tree, nvls;
    double lat_us[ALGO_COUNT][PROTO_COUNT];   /* latency, us */
    double bus_GBps[ALGO_COUNT][PROTO_COUNT]; /* bandwidth before the bus-to-algorithm ratio */
    double alg_GBps[ALGO_COUNT][PROTO_COUNT]; /* algorithm bandwidth, GB/s; 0 = unavailable */
};

/*
 * Fill *m with NCCL's view of `op` on group `g`. extra_inter_us adds fabric
 * latency to every network step (NCCL's graph latencyInter).
 */
void nccl_model_init(const struct hardware *hw, const struct comm_group *g, enum coll_op op,
                     double extra_inter_us, struct nccl_model *m);

/*
 * NCCL's prediction split in its two parts for `bytes`: latency (us, with the
 * multi-node ring plateau factor) and algorithm bandwidth (GB/s, with the tree
 * correction for that size). Returns 0, or -1 when (algo, proto) is unavailable.
 */
int nccl_cost(const struct nccl_model *m, enum coll_algo algo, enum coll_proto proto, double bytes,
              double *lat_us, double *alg_GBps);

/* NCCL's predicted time in us for `bytes`, or -1 when (algo, proto) is unavailable. */
double nccl_time_us(const struct nccl_model *m, enum coll_algo algo, enum coll_proto proto,
                    double bytes);

/*
 * NCCL's choice for `bytes`: the fastest available (algorithm, protocol),
 * restricted by cfg like NCCL_ALGO / NCCL_PROTO (cfg may be NULL); when the
 * restriction leaves nothing, ring with any protocol, as NCCL falls back.
 */
void nccl_select(const struct nccl_model *m, const struct nccl_cfg *cfg, double bytes,
                 enum coll_algo *algo, enum coll_proto *proto);

/*
 * Withdraw from *m the algorithms NCCL release `version` (nccl_cfg.version; 0 = the model's,
 * 2.30) does not offer for m's operation, per src/graph/tuning.cc of each tag: no NVLS
 * before 2.17.1; NVLS for all-reduce, all-gather and reduce-scatter in 2.17; in 2.18 ring
 * only for all-gather and reduce-scatter ("if (coll == ncclFuncAllGather && a !=
 * NCCL_ALGO_RING) continue;", v2.18.1-1 tuning.cc l.159-160) and NVLS-Tree added for
 * all-reduce; NVLS for all-gather and reduce-scatter again from 2.19.
 */
void nccl_version_limits(struct nccl_model *m, int version);

/* NCCL's per-link NVLink bandwidth for a GPU architecture, GB/s (topo.h SM*_NVLINK_BW). */
double nccl_nvlink_bw(enum gpu_arch arch);

/* NCCL's PCIe link bandwidth for a generation and lane count, GB/s (topo.cc kvDictPciGen). */
double nccl_pcie_bw(int generation, int lanes);

#endif
