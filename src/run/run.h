/*
 * run.h - one simulated training step end to end: layout, programs, engine,
 * the headline metrics derived from the result, and the rest of its metrics
 * (metrics.h), computed once for every output that shows them.
 *
 * Ownership: run_scenario() fills a struct run that owns its programs and
 * simulation result; release it with run_release().
 */
#ifndef SIMTRAIN_RUN_H
#define SIMTRAIN_RUN_H

#include "model/scenario.h"
#include "model/layout.h"
#include "prog/prog.h"
#include "engine/sim.h"
#include "run/metrics.h"

struct run {
    const struct scenario *s;
    struct layout lay;
    struct prog **progs; /* one per pipeline stage */
    int nprogs;
    struct sim_result sim;
    double step_s; /* seconds per optimizer step */
    double tokens_per_step;
    double tokens_per_s;
    double tokens_per_s_per_gpu;
    double model_flops; /* per step, whole job (workload_model_flops()) */
    double mfu;         /* model FLOPs / (step * gpus * peak) */
    double hw_flops;    /* model FLOPs + recomputation, per step (workload_hardware_flops()) */
    double hfu;         /* hardware FLOPs / (step * gpus * peak) */
    double peak_flops;  /* per GPU, dense, training dtype */
    int peak_idx;       /* simulated rank with the highest memory peak */
    double peak_bytes;
    double peak_allocated_bytes; /* highest torch.cuda.max_memory_allocated over ranks, bytes */
    double peak_reserved_bytes;  /* highest torch.cuda.max_memory_reserved over ranks, bytes */
    double capacity_bytes;
    bool fits;
    double reserve_short_bytes; /* most allocator reserve a rank had no room for (0 = none) */
    struct run_memo *memo;      /* run_metrics()'s, owned */
};

int run_scenario(const struct scenario *s, const struct sim_opts *opts, struct run *out,
                 char *reason, size_t reason_len);
void run_release(struct run *r);

/*
 * The metrics of run `r` (from run_scenario()): computed from its result on the first call,
 * so that a run nobody reports pays nothing, and kept, owned by the run, until
 * run_release().
 */
const struct run_metrics *run_metrics(const struct run *r);

#endif
