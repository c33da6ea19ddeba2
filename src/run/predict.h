/*
 * predict.h - one call from a validated scenario to the headline predictions,
 * for callers that want numbers rather than a report (validate, sweep, plan).
 *
 * predict_scenario() runs the full pipeline (workload -> strategy -> engine)
 * in symmetric mode and fills a struct prediction. It does not print.
 */
#ifndef SIMTRAIN_PREDICT_H
#define SIMTRAIN_PREDICT_H

#include "model/scenario.h"

struct prediction {
    double step_time_s;  /* seconds per optimizer step */
    double tokens_per_s; /* whole job */
    double tokens_per_s_per_gpu;
    double mfu;                 /* model FLOPs utilization, fraction */
    double peak_mem_bytes;      /* highest per-GPU peak over simulated ranks */
    double peak_reserved_bytes; /* highest caching-allocator reservation (max_memory_reserved) */
    double capacity_bytes;      /* per-GPU memory capacity */
    bool fits;                  /* peak_mem_bytes <= capacity_bytes */
};

/*
 * Simulate one step of `s` (already finalized). Returns 0 and fills *out, or
 * -1 with a one-line reason in reason[0..reason_len) when the scenario cannot
 * be simulated (a feature not modelled, or an internal limit).
 */
int predict_scenario(const struct scenario *s, struct prediction *out, char *reason,
                     size_t reason_len);

#endif
