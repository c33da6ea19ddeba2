/*
 * size.h - how large the programs of a scenario will be, before building them: an upper
 * estimate of the tasks in the largest stage program strategy_build() makes, from the layout
 * alone (micro-batches, layers per stage, the communication each layer pass emits, the
 * data-parallel buckets), and the limit a simulation may build.
 *
 * A task takes about 100 bytes of program memory (64 in struct task, the rest in its
 * dependency, successor and stream lists), and the engine runs a few million tasks a second:
 * STRATEGY_MAX_TASKS (2^23) is about 0.8 GiB and a few seconds per simulated rank. The
 * shipped scenarios hold at most 56,000 tasks per program; the 100,000-layer GPT-2 of
 * tests/cli/deep_model.sh about 4.8 million. The loader refuses a scenario whose estimate
 * exceeds the limit (config/check.c), naming the setting that makes most of the tasks, so
 * that no input is discovered by running out of memory; strategy_build() refuses a program
 * that outgrows the limit all the same.
 *
 * The estimate counts each layer pass (forward, backward, recomputation) with the tasks the
 * layer emitter (layer.c) adds for the scenario's tensor, sequence, context and expert
 * parallelism, plus the pipeline transfers per micro-batch and chunk and the data-parallel
 * hooks (per unit and micro-batch, and one collective per gradient bucket). It is at least
 * the real count and within a small factor of it (tests/test_size.c checks both on every
 * shipped scenario and a grid of layouts).
 */
#ifndef SIMTRAIN_STRATEGY_SIZE_H
#define SIMTRAIN_STRATEGY_SIZE_H

#include "model/scenario.h"

#define STRATEGY_MAX_TASKS (1 << 23) /* tasks of one stage program, about 0.8 GiB */

/* What makes the tasks of a program. */
enum size_cause {
    SIZE_MICROBATCHES, /* micro-batches per step (global_batch / (micro_batch * dp)) */
    SIZE_LAYERS,       /* layers on a pipeline stage */
    SIZE_DDP_BUCKETS,  /* ddp.bucket_size / first_bucket_size */
    SIZE_ZERO_BUCKETS  /* zero.reduce_bucket_size */
};

struct prog_size {
    double tasks;        /* upper estimate of the largest stage program, tasks */
    double microbatches; /* per step */
    double stage_layers; /* layers on the largest stage */
    double layer_tasks;  /* tasks of one layer in one micro-batch (passes and DP hooks) */
    double buckets;      /* data-parallel bucket collectives per step */
    enum size_cause cause;
};

/*
 * Estimate the programs of `s`, a scenario finalized up to its layout and batch (degrees,
 * dp, micro-batches and the layer split checked; config/check.c calls it last). Pure; never
 * fails; the figures saturate rather than overflow.
 */
void strategy_program_size(const struct scenario *s, struct prog_size *out);

#endif
