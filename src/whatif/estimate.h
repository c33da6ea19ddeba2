/*
 * estimate.h - a closed-form first pass: step time and peak memory of a
 * finalized scenario in microseconds instead of the engine's milliseconds, for
 * `simtrain plan`, which must rank thousands of layouts per second and then
 * simulates only the best few. It uses the simulator's own cost functions
 * (workload_layer() durations, coll_estimate() for every collective on the
 * group shape the layout gives, schedule_steps() for activations in flight,
 * memory_state_bytes() for model states) and the strategies' rules
 * (strategy/rules.h: which collectives reduce and gather when, bucket sizes,
 * buffers), so it follows their changes; what it adds is the composition in
 * closed form (its approximations of those rules are named where they are
 * made, and tests/test_plan.c holds it to the engine on every shipped
 * scenario):
 *
 *   stage time per micro-batch t_s = sum over its layers of forward,
 *       backward and recompute compute plus the exposed tensor-parallel
 *       collectives (4 per layer, 6 with full recompute: SHO19 §3, ZERO §8)
 *   pipeline: 1F1B and GPipe (m - 1) max t_s + sum t_s, i.e. (m + p - 1) t for
 *       equal stages; interleaved m t + (p - 1) t / v; ZB-H1 m t + (p - 1) t / 3
 *       (NAR21 §2.2.1-2.2.2 and eq. 1; ZB README; formulas.md §4)
 *   data parallel: bucketed gradient reduction overlapped with the last
 *       micro-batch's backward, the optimizer step, the parameter all-gather of
 *       a distributed optimizer; ZeRO-3 / FSDP gathers per layer per
 *       micro-batch overlapped with compute (ZERO §7.2, formulas.md §3.1-3.3)
 *   memory per stage: model states with ZeRO's sharding factors (ZERO §5.1-5.3,
 *       Megatron dist_optimizer.md), activations of the micro-batches in
 *       flight found by walking the stage's schedule, logits, overhead.
 *
 * It ignores link sharing between concurrent collectives and the order of
 * events inside a step; it is a ranking device, not a prediction. Every
 * number a user reads as final comes from the engine (predict_scenario()).
 *
 * An estimator memoizes layer costs, collective times, group shapes and
 * schedule profiles across calls. It serves scenarios that share one model,
 * hardware description, sequence length and precision (what plan varies is
 * the layout, micro-batch, recompute, sharding and cluster size): the
 * caller creates one per base scenario. Memory: estimator_new() returns an
 * object the caller frees with estimator_free() (NULL accepted).
 *
 * Files: estimate.c (memo tables, ingredients, the step), estimate_time.c
 * (stage times, pipeline, data-parallel tail), estimate_memory.c (peak memory
 * per stage). What a step time means over a training run is totals.h.
 */
#ifndef SIMTRAIN_ESTIMATE_H
#define SIMTRAIN_ESTIMATE_H

#include "model/scenario.h"
#include "prog/prog.h"

struct estimate {
    double step_s;        /* predicted seconds per optimizer step */
    double compute_s;     /* compute on the slowest stage over all micro-batches, s */
    double tp_s;          /* exposed tensor-parallel communication, s */
    double cpep_s;        /* exposed context- and expert-parallel communication, s */
    double bubble_s;      /* pipeline fill and drain, including point-to-point latency, s */
    double dp_s;          /* exposed data-parallel communication, s */
    double optimizer_s;   /* optimizer step and offload traffic, s */
    double peak_bytes;    /* highest per-GPU peak over pipeline stages, bytes */
    int peak_stage;       /* stage with that peak */
    double mem[MC_COUNT]; /* bytes per memory category at that stage's peak */
};

struct estimator;

struct estimator *estimator_new(void);
void estimator_free(struct estimator *e);

/* Estimate one finalized scenario into *out. Pure apart from the memo tables. */
void estimate_scenario(struct estimator *e, const struct scenario *s, struct estimate *out);

#endif
