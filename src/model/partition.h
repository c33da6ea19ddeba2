/*
 * partition.h - the split of transformer layers over pipeline stages and
 * model chunks: even, explicit first/last stage sizes, Megatron's embedding/loss
 * accounting, or torchtitan's rules (parallelism.pp_split). Pure functions.
 */
#ifndef SIMTRAIN_PARTITION_H
#define SIMTRAIN_PARTITION_H

#include <stddef.h>

#include "model/scenario.h"

/*
 * Split `layers` over pp stages of v chunks: out[c * pp + stage] layers. The
 * first stage holds `first` layers and the last `last` (0 = an even share);
 * the other stages share the rest evenly; each stage's layers spread over its
 * chunks as evenly as possible. Returns 0, or -1 with a reason.
 */
int pp_partition(int layers, int pp, int v, int first, int last, int *out, char *reason,
                 size_t reason_len);

/* The first and last stage sizes a scenario asks for, explicitly or by Megatron's rule. */
void pp_split(const struct scenario *s, int *first, int *last);

/*
 * The layers of each (chunk, stage) of a scenario, out[c * pp + stage] (pp * vpp entries):
 * first/last_stage_layers when given, else by parallelism.pp_split: auto (even, else
 * Megatron's embedding/loss accounting when it divides), even, megatron, torchtitan,
 * torchtitan_weighted (partition.c cites each framework's code). Virtual stage c * pp + stage
 * is chunk c of stage `stage`, as Megatron and torchtitan's looped schedules place them.
 * Returns 0, or -1 with a reason.
 */
int pp_layers(const struct scenario *s, int *out, char *reason, size_t reason_len);

/* Can the scenario's layers be split? 0, or -1 with a reason (used by scenario_finalize). */
int pp_check(const struct scenario *s, char *reason, size_t reason_len);

#endif
