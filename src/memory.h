/*
 * memory.h - model-state memory per parameter (parameters, master weights,
 * gradients, optimizer states) for a training configuration, and the static
 * allocations a strategy places at the start of a rank's program.
 *
 * Data-parallel strategies state only their sharding factors (struct
 * shard_factors); this module owns the bytes per parameter (formulas.md §2.1,
 * ZERO §3.1, Megatron dist_optimizer.md, bitsandbytes optimizer.py).
 */
#ifndef SIMTRAIN_MEMORY_H
#define SIMTRAIN_MEMORY_H

#include "config.h"

struct build;

/* Bytes per parameter, unsharded. */
struct state_bytes {
    double params; /* weights as stored for compute */
    double master; /* fp32 master copy */
    double grads;  /* gradient buffer */
    double optim;  /* optimizer states */
};

/* Divisors applied per category: 1 = replicated, N = sharded N ways. */
struct shard_factors {
    double params, master, grads, optim;
};

void memory_state_bytes(const struct scenario *s, struct state_bytes *out);

/* Bytes per parameter the optimizer step reads and writes (memory-bound time). */
double memory_optimizer_traffic(const struct scenario *s);

/* Allocate `params` parameters' states at time zero, divided by the factors. */
void memory_emit_states(struct build *b, double params, const struct state_bytes *sb,
                        const struct shard_factors *f);

/* Allocate `bytes` of category `cat` at time zero, labelled (a string literal) for the trace. */
void memory_emit_static(struct build *b, int cat, double bytes, const char *label);

#endif
