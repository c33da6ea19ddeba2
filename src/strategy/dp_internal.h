/*
 * dp_internal.h - pieces shared by the data-parallel strategies (strategy/ddp.c,
 * zero.c, fsdp.c, offload.c): process groups whose collectives run in issue order, gradient
 * buckets, memory marks and host offload. (The traffic they issue is counted from the programs by
 * run/metrics.c.)
 *
 * Process groups. PyTorch's ProcessGroupNCCL runs every collective of one
 * process group on that group's internal NCCL stream, whatever CUDA stream
 * issued it, so an all-gather issued after a reduce-scatter of the same group
 * waits for it (formulas.md §3.3: "all collectives of one process group share
 * one NCCL stream, so issue order matters"). struct dp_pg reproduces this by
 * chaining each collective of a group after the previous one, so programs may
 * still place gathers and reductions on separate simulated streams (for the
 * trace) without reordering them.
 *
 * Offload. Host<->device copies are TASK_COPY on ST_H2D / ST_D2H over the
 * rank's PCIe link (contended by the flow solver); the CPU optimizer step is
 * TASK_HOST on ST_HOST at the hardware file's `host.adam_throughput` (params/s
 * per GPU's share of the host). Both are accounted as TC_OFFLOAD.
 *
 * Private to src/strategy/ (tests/deps.sh).
 */
#ifndef SIMTRAIN_STRATEGY_DP_INTERNAL_H
#define SIMTRAIN_STRATEGY_DP_INTERNAL_H

#include "model/scenario.h"
#include "strategy/rules.h"
#include "strategy/strategy.h"

/* One process group: its collectives run one at a time, in issue order. */
struct dp_pg {
    int comm; /* enum comm_kind */
    int size; /* members */
    int last; /* last collective issued on the group, -1 = none */
};

void dp_pg_init(struct dp_pg *pg, const struct build *b, int comm);

/*
 * Issue collective `op` of `bytes` (nccl-tests size) on group pg from
 * simulated stream `stream`, after task `dep` (-1 = none) and after the
 * group's previous collective. Returns the task, or -1 when the group has a
 * single member (nothing to communicate). `label` is a static format with at
 * most one %d, expanded with `arg`.
 */
int dp_pg_coll(struct build *b, struct dp_pg *pg, int stream, int op, double bytes,
               const char *label, int arg, int dep);

/* Gradient buckets filled in backward order; a bucket is issued when full. */
struct dp_bucket {
    double first; /* capacity of the first bucket, bytes */
    double cap;   /* capacity of the others, bytes */
    double fill;  /* bytes in the open bucket */
    int issued;   /* buckets issued so far */
};

void dp_bucket_init(struct dp_bucket *bk, double first_bytes, double bytes);

/*
 * Pour up to *bytes into the open bucket, taking what was poured off *bytes.
 * Returns the size of a bucket that became full (issue it now) or 0 once
 * everything fitted; call again while it returns > 0.
 */
double dp_bucket_pour(struct dp_bucket *bk, double *bytes);

/* Close the open bucket: returns its size (0 when empty) and empties it. */
double dp_bucket_flush(struct dp_bucket *bk);

/*
 * A zero-time mark on `stream` after task `dep` (-1 = none) that changes
 * category `cat` by `bytes` (> 0 allocates, < 0 frees) when it runs.
 * Returns the mark. `label` is a static string.
 */
int dp_mem_mark(struct build *b, int stream, int dep, int cat, double bytes, const char *label);

/* Bytes of unit `unit`'s parameters when gathered with `param_bytes` per trainable element. */
double dp_unit_gather_bytes(const struct build *b, int unit, double param_bytes);

/* Elements of unit `unit` whose gradients are reduced (trainable parameters). */
double dp_unit_grad_elems(const struct build *b, int unit);

/* Is unit `ui` the last one of its model chunk in backward order (end of that backward)? */
bool dp_unit_ends_backward(const struct build *b, int ui);

/* ---- offload (offload.c) --------------------------------------------------- */

/*
 * A host<->device copy of `bytes` over the rank's PCIe link after `dep` (-1 =
 * none): to the device on ST_H2D when `to_device`, else on ST_D2H. Returns
 * the task, or -1 when bytes <= 0.
 */
int offload_copy(struct build *b, bool to_device, double bytes, int dep, const char *label,
                 int arg);

/*
 * Activation offloading (training.activation_offload, offload.c): the forward's copy of layer
 * ui's saved tensors (bytes) to the host after compute task t, returning what the next unit
 * waits for (t when nothing moves); the backward's copy back after `prev`, returning it.
 */
int offload_activations(struct build *b, int ui, double bytes, int t, int last);
int offload_fetch_activations(struct build *b, int ui, double bytes, int prev);

/*
 * The optimizer step of `params` elements on the host CPU (ZeRO-Offload's
 * DeepSpeedCPUAdam, FSDP CPUOffload's optimizer), after `dep`, taking
 * rules_host_step_time(). Returns the TASK_HOST task.
 */
int offload_cpu_step(struct build *b, double params, int dep);

/* ---- DeepSpeed ZeRO (zero.c) ------------------------------------------------ */

/*
 * CPU time of the Python loop with which DeepSpeed of 2021 (zero.stage3_gather:
 * per_param_sync) builds the all-gather's list of `world_size` narrow views
 * before each parameter's all-gather, while the GPU waits: world_size x the
 * measured cost of one PyTorch view op (zero.c); 0 for one rank.
 */
sim_time zero_ds2021_view_loop_time(int world_size);

#endif
