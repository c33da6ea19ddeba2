/*
 * metrics.h - what a simulated step means, computed once from the simulation's result for
 * every output that shows it: the exclusive time breakdown and the time in flight per
 * category, averaged over the simulated ranks; the data-parallel traffic per GPU per step;
 * and what the step time means over a training run (totals.h). run_scenario() fills
 * run.metrics; the terminal report, the JSON result, `sweep`, `plan` and `memory` read it.
 *
 * Data-parallel traffic is counted as ZERO §7 counts it: every collective on a
 * data-parallel group (COMM_DP, COMM_DP_INTRA, COMM_DP_INTER) by its size, an all-reduce
 * twice (reduce-scatter + all-gather), in units of Ψ, the rank's model replica at 16 bits:
 * DDP 2 Ψ, ZeRO-1/2 2 Ψ, ZeRO-3 / FSDP 3 Ψ. What crosses the links is the engine's bus bytes
 * per communicator kind (sim.h rank_result.comm_bytes); of those, the groups that span
 * nodes are the ones the engine charges to the network tier, i.e. what the NICs carry.
 */
#ifndef SIMTRAIN_METRICS_H
#define SIMTRAIN_METRICS_H

#include "engine/sim.h"
#include "model/layout.h"
#include "model/scenario.h"
#include "prog/prog.h"
#include "run/totals.h"

/* The data-parallel traffic one program issues per step. */
struct prog_dp_traffic {
    double
        volume_bytes; /* ZeRO counting: all-reduce 2x, all-gather / reduce-scatter 1x (ZERO §7) */
    double psi_bytes; /* Ψ: this rank's model-replica parameters at 16 bits, bytes */
    int collectives;  /* data-parallel collectives per step */
    double h2d_bytes; /* offload copies host -> device per step */
    double d2h_bytes; /* offload copies device -> host per step */
};

/* Data-parallel traffic per GPU per step, averaged over the simulated ranks. */
struct metrics_dp {
    double volume_bytes; /* collective sizes, all-reduce twice (ZeRO §7 counting), bytes */
    double psi_bytes;    /* Ψ: the rank's model replica in 16 bits, bytes */
    double link_bytes;   /* bus bytes over the bottleneck links (NVLink, PCIe or network) */
    double nic_bytes;    /* of which over the network (groups spanning nodes), bytes */
    double exposed_s;    /* exposed data-parallel communication, s */
    double h2d_bytes;    /* offload copies to the GPU, bytes */
    double d2h_bytes;    /* offload copies to the host, bytes */
    double offload_s;    /* exposed offload time (PCIe copies, CPU optimizer), s */
    double collectives;  /* data-parallel collectives */
};

struct run_metrics {
    double breakdown_s[TC_COUNT]; /* exclusive time per category, averaged over ranks; sums to
                                     the step time (up to rounding), s */
    double busy_s[TC_COUNT];      /* time with a task of the category running, overlapped
                                     or not, averaged over ranks, s */
    struct metrics_dp dp;         /* data-parallel traffic */
    struct train_totals totals;   /* time to train, GPU-hours, cost, energy (totals.h) */
};

/*
 * The metrics of a simulated step: scenario `s` laid out as `l`, programs progs[0 .. nprogs)
 * (one per pipeline stage; NULL with nprogs 0 when unknown: each rank's program is then
 * scanned on its own), the engine's result `sim`, `step_s` seconds per step. Pure.
 */
void metrics_compute(const struct scenario *s, const struct layout *l, struct prog *const *progs,
                     int nprogs, const struct sim_result *sim, double step_s,
                     struct run_metrics *out);

/* The data-parallel traffic program `p` of scenario `s` issues per step (ZERO §7). Pure. */
void metrics_prog_dp(const struct scenario *s, const struct prog *p, struct prog_dp_traffic *out);

/*
 * Of a rank's bus bytes per communicator kind (sim.h rank_result.comm_bytes), those of
 * data-parallel groups that span nodes: the engine charges such a group's traffic to the
 * network tier, so this is what the rank's NICs carry for data parallelism. Pure.
 */
double metrics_dp_nic_bytes(const struct layout *l, int rank,
                            const double comm_bytes[COMM_KIND_COUNT]);

/* Of the same, every data-parallel group's bytes (NVLink, PCIe or network). */
double metrics_dp_link_bytes(const double comm_bytes[COMM_KIND_COUNT]);

#endif
