/*
 * memory_limits.h - the limits of `simtrain memory`: the largest micro-batch, the longest
 * sequence and the fewest GPUs at which a scenario fits, each found on the engine (the
 * simulated step's peak, not a formula) and each with the memory category that stops it; and
 * the effective global batch, and how it is made.
 *
 * Each limit is a search over an ordered range of values on which "fits" holds up to the
 * limit and not beyond (memory grows with the micro-batch and the sequence, shrinks with the
 * GPUs). The closed-form estimate (estimate.h) finds its own limit by bisection in
 * microseconds; the engine starts there, steps outwards in doubling strides until one value
 * fits and a neighbouring one does not, then bisects between them. Every engine run is kept
 * (the plot). A limit's "one step past" is the next value of the range: the next micro-batch,
 * the next sequence length on the search's grid (a multiple of 128 tokens and of what the
 * layout needs: 2 cp, tp with sequence parallelism), the next smaller GPU count (whole nodes
 * beyond one node, multiples of tp * pp * cp within it). What stops a limit is the category
 * that grows most from the limit to one step past it.
 *
 * What varies and what is held:
 *   - micro-batch: the accumulation steps are kept (the scenario's, or those of its fewest
 *     GPUs), so the global batch becomes micro-batch x accumulation x dp (the report says what
 *     it is at the limit);
 *   - sequence: the sequences per step are kept, at the scenario's micro-batch (or the
 *     largest that fits, when smaller);
 *   - GPUs: data parallelism follows the GPU count (dp = GPUs / (tp pp cp)), the global batch
 *     is kept where micro-batch x dp divides it, else the accumulation steps. A sharding that
 *     keeps the model states whole on every GPU (none, fsdp_no_shard), or one that never fits
 *     in the range, is replaced by the framework's sharding that divides them all (fsdp for
 *     PyTorch, zero3 for DeepSpeed, Megatron's distributed optimizer for Megatron), and the
 *     report says so. When no GPU count fits at the scenario's micro-batch (activations do not
 *     shrink with the GPU count), the search is repeated at micro-batch 1.
 * The micro-batch and sequence limits are found on the scenario as given when it fits at
 * micro-batch 1, else at its fewest GPUs (the report says so); without either, there are none.
 *
 * Memory: memory_limits_run() fills a struct memory_limits that owns its points; release it
 * with memory_limits_release().
 */
#ifndef SIMTRAIN_MEMORY_LIMITS_H
#define SIMTRAIN_MEMORY_LIMITS_H

#include <stdbool.h>
#include <stdio.h>

#include "model/scenario.h"
#include "run/run.h"

enum ml_axis {
    ML_MICRO_BATCH,
    ML_SEQ_LEN,
    ML_GPUS,
    ML_AXES
};

/* One engine run of a search. */
struct ml_point {
    int axis;                   /* enum ml_axis */
    long value;                 /* micro-batch, tokens or GPUs */
    bool ok;                    /* simulated (else reason says why not) */
    bool fits;                  /* ok and the peak fits the GPU */
    double peak_bytes;          /* simulated peak per GPU */
    double reserve_short_bytes; /* allocator reserve it had no room for (run.h): "tight" */
    double step_s;              /* simulated step */
    double at_peak[MC_COUNT];
    char reason[200];
};

struct ml_limit {
    bool searched;     /* the limit applies (mb and seq need a configuration that fits) */
    bool found;        /* a value of the range fits */
    long value;        /* the largest micro-batch / longest sequence / fewest GPUs that fits */
    long past;         /* one step past it: simulated, does not fit; 0 = the range ends there */
    long lo, hi;       /* the range searched, in values */
    long estimate;     /* the closed-form estimate's limit, where the engine started (0 = none) */
    int runs;          /* engine runs this search made */
    int stop_cat;      /* category that grows most from value to past, -1 when past was refused */
    double stop_bytes; /* its growth */
    struct ml_point at, next; /* the run at the limit and the one past it */
    int global_batch;         /* sequences per step at the limit */
    int accumulation;         /* micro-batches per step at the limit */
    int dp;                   /* data-parallel degree at the limit */
};

struct memory_limits {
    double capacity_bytes;
    /* The configuration the micro-batch and sequence limits are found at. */
    int ref_gpus;
    enum sharding ref_sharding;
    bool ref_moved;             /* not the scenario as given: it does not fit at micro-batch 1 */
    enum sharding gpu_sharding; /* the sharding of the GPU-count search */
    int gpu_micro_batch;        /* its micro-batch: the scenario's, or 1 when none fits there */
    struct ml_limit gpu_unfit;  /* the search at the scenario's micro-batch, when it found none */
    bool sharding_changed;      /* gpu_sharding replaces the scenario's */
    int accumulation;    /* micro-batches per step of the micro-batch and sequence searches */
    int seq_micro_batch; /* micro-batch of the sequence search */
    int seq_step;        /* the sequence grid, tokens */
    struct ml_limit lim[ML_AXES];
    struct ml_point *pts; /* every engine run, in order */
    int npts;
    size_t cap_pts;
};

/*
 * Find the three limits of scenario s (loaded and finalized); `base` is its simulated step
 * (saves one run). Never fails: a refused configuration is a point with its reason.
 */
void memory_limits_run(const struct scenario *s, const struct run *base, struct memory_limits *out);

/* Run the scenario with `axis` set to `value` as the search would (the reference GPU count and
 * sharding of l included) into *p: for the plot's extra points and for tests. */
void memory_limits_eval(const struct scenario *s, const struct memory_limits *l, int axis,
                        long value, struct ml_point *p);

void memory_limits_release(struct memory_limits *l);

/* ---- outputs (memory_limits_io.c) --------------------------------------------------------- */

/* The limits and the effective batch as `simtrain memory` prints them. */
void memory_limits_print(FILE *f, const struct scenario *s, const struct memory_limits *l);

/* The effective global batch of s: sequences, tokens, and how they are made. */
void memory_limits_print_batch(FILE *f, const struct scenario *s);

/* The axis as the report names it ("largest micro-batch"), and its JSON key ("micro_batch"). */
const char *memory_limits_axis_name(int axis);
const char *memory_limits_axis_key(int axis);

/*
 * The JSON of `simtrain memory --json`: the run's peak by category and by module, the
 * verdict, the effective batch and the limits (docs/json-schema.md). 0, or -1 when f has an
 * error. `l` may be NULL (--no-limits).
 */
int memory_limits_write_json(FILE *f, const struct run *r, const struct memory_limits *l);

/* The pictures of --plot DIR: peak against micro-batch and against sequence length, with the
 * capacity (plots/limits.gp). 0, or -1 when DIR or a data file cannot be written. */
int memory_limits_plot(const char *dir, const struct scenario *s, struct memory_limits *l);

#endif
