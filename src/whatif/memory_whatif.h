/*
 * memory_whatif.h - the what-if table of `simtrain memory`: each memory
 * technique alone (activation checkpointing, gradient accumulation, 8-bit
 * Adam, pure bf16, CPU offload, ZeRO stages, LoRA, QLoRA) and in useful
 * combinations, applied to the scenario with the loader's own setters
 * (cfg_set(), then scenario_finalize()) and re-simulated for its peak memory
 * and step time.
 *
 * A row is left out when it cannot apply: it changes nothing the table
 * varies, it shards over one data-parallel rank, the scenario is already
 * sharded further, FlashAttention already recomputes what selective
 * recompute would, or it repeats an earlier row's configuration. A row
 * whose configuration the loader or the simulator refuses is kept, with the
 * reason.
 *
 * Memory: memory_whatif_run() fills a struct memory_whatif that owns its
 * rows; release it with memory_whatif_release().
 */
#ifndef SIMTRAIN_MEMORY_WHATIF_H
#define SIMTRAIN_MEMORY_WHATIF_H

#include <stdbool.h>
#include <stdio.h>

#include "model/scenario.h"
#include "run/run.h"

/* What one configuration gave. */
struct mw_outcome {
    bool ok;           /* simulated (else reason says why not) */
    double peak_bytes; /* peak memory per GPU, bytes */
    double step_s;     /* step time, s */
    bool fits;         /* the peak fits the GPU, and what it offloads the host RAM */
    bool host_short;   /* the offloaded states exceed the host RAM per GPU */
    char reason[400];
};

struct mw_row {
    const char *label; /* "8-bit Adam (bitsandbytes)" (static) */
    struct mw_outcome o;
};

struct memory_whatif {
    struct mw_outcome base; /* the scenario as configured */
    double capacity_bytes;  /* per GPU */
    struct mw_row *rows;    /* the rows that apply, in table order */
    int nrows;
    int best;             /* index of the fastest row that fits when the base does not, or -1 */
    bool flash_selective; /* selective recompute left out: FlashAttention recomputes already */
};

/*
 * Evaluate the table for scenario s (loaded and finalized), whose step `base`
 * is already simulated. Fills *out; never fails (a refused row keeps its
 * reason).
 */
void memory_whatif_run(const struct scenario *s, const struct run *base, struct memory_whatif *out);

void memory_whatif_release(struct memory_whatif *w);

/* The table as `simtrain memory` prints it, with the fastest change that fits. */
void memory_whatif_print(FILE *f, const struct scenario *s, const struct memory_whatif *w);

#endif
