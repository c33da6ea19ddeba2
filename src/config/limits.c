/*
 * limits.c - the sizes a simulation may reach, checked when a scenario is finalized (after
 * its layout and batch are known, before anything is built): the GPUs a job may span, the
 * tasks a stage program may hold (strategy/size.h estimates them from the layout), the tokens
 * a time-to-train may count. Each refusal names the setting that makes the size, the limit
 * and the reason for it, so that no input is discovered by running out of memory or by
 * printing a number past any meaning.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/units.h"
#include "config/schema.h"
#include "strategy/size.h"

/* What the size estimate's cause is, in the scenario's terms, and where it is set. */
static int too_many_tasks(const struct scenario *s, const struct prog_size *z,
                          struct cfg_error *err)
{
    char size[48], limit[96];

    snprintf(limit, sizeof(limit),
             "more than the %d (2^23) a program may hold: about 0.8 GiB of memory",
             STRATEGY_MAX_TASKS);
    /* buckets of a usual size (>= 1 MiB, >= 10^6 elements): the model's gradients are the cause */
    if ((z->cause == SIZE_DDP_BUCKETS && s->ddp.bucket_bytes >= 1048576) ||
        (z->cause == SIZE_ZERO_BUCKETS && s->zero.reduce_bucket_size >= 1e6))
        return cfg_fail(err, "workload",
                        "the gradients of '%s' fill %.3g data-parallel buckets per step, each a "
                        "collective of its own: a GPU's program would hold about %.3g tasks, %s",
                        s->model.name ? s->model.name : "?", z->buckets, z->tasks, limit);
    switch (z->cause) {
    case SIZE_DDP_BUCKETS:
        if (s->ddp.bucket_bytes < 1024)
            snprintf(size, sizeof(size), "%g B", s->ddp.bucket_bytes);
        else
            units_format(s->ddp.bucket_bytes, UNIT_BYTES, size, sizeof(size));
        return cfg_fail(
            err, "ddp.bucket_size",
            "ddp.bucket_size %s makes %.3g gradient buckets per step, each a collective of "
            "its own: a GPU's program would hold about %.3g tasks, %s",
            size, z->buckets, z->tasks, limit);
    case SIZE_ZERO_BUCKETS:
        return cfg_fail(err, "zero.reduce_bucket_size",
                        "zero.reduce_bucket_size %g makes %.3g gradient buckets per step, each a "
                        "collective of its own: a GPU's program would hold about %.3g tasks, %s",
                        s->zero.reduce_bucket_size, z->buckets, z->tasks, limit);
    case SIZE_MICROBATCHES:
        return cfg_fail(
            err, "training.global_batch",
            "global_batch / (micro_batch * dp) = %d / (%d * %d) = %.0f micro-batches per "
            "step, each simulated as its own tasks: a GPU's program would hold about "
            "%.3g tasks, %s",
            s->train.global_batch, s->train.micro_batch, s->par.dp, z->microbatches, z->tasks,
            limit);
    default:
        return cfg_fail(err, "workload.layers",
                        "%d layers (%.0f on the largest pipeline stage) in %.0f micro-batches: a "
                        "GPU's program would hold about %.3g tasks, %s",
                        s->model.layers, z->stage_layers, z->microbatches, z->tasks, limit);
    }
}

/*
 * Tokens to train: the largest published runs are about 1.5e13 tokens (Llama 3, 15.6T); 1e16
 * is 600 times that. Beyond it the step count stops being a whole number in a double and the
 * time to train stops meaning anything.
 */
#define MAX_TOKENS 1e16

/*
 * Memory sizes: 1 PiB, a thousand times the largest GPU memory (288 GB); byte counts of the
 * memory tracker stay exact far below their 64-bit limit (util.h, SIM_MEM_LIMIT).
 */
#define MAX_MEMORY_BYTES 1125899906842624.0

int cfg_check_limits(struct scenario *s, struct cfg_error *err)
{
    struct prog_size z;

    if (s->hw.gpu.mem_bytes > MAX_MEMORY_BYTES || s->train.overhead_bytes > MAX_MEMORY_BYTES) {
        bool gpu = s->hw.gpu.mem_bytes > MAX_MEMORY_BYTES;
        char size[48];

        snprintf(size, sizeof(size), "%.3g B", gpu ? s->hw.gpu.mem_bytes : s->train.overhead_bytes);
        return cfg_fail(err, gpu ? "hardware.gpu.memory" : "training.memory_overhead",
                        "%s %s is more than 1 PiB, a thousand times any GPU's memory",
                        gpu ? "a GPU memory of" : "a memory overhead of", size);
    }
    if (s->gpus > SIM_MAX_GPUS)
        return cfg_fail(
            err, s->given & GIVEN_GPUS ? "cluster.gpus" : "cluster.nodes",
            "a job of %d GPUs is more than the %d (2^20) a simulation may span: layouts "
            "and topologies keep state per GPU (the largest clusters hold about 10^5)",
            s->gpus, SIM_MAX_GPUS);
    if (s->train.tokens > MAX_TOKENS)
        return cfg_fail(err, "training.tokens",
                        "tokens %.3g is more than %.0e, about 600 times the largest published "
                        "training run (Llama 3, 15.6e12 tokens)",
                        s->train.tokens, MAX_TOKENS);
    strategy_program_size(s, &z);
    if (z.tasks > STRATEGY_MAX_TASKS)
        return too_many_tasks(s, &z, err);
    return 0;
}
