/*
 * diagnose.c - what a step the engine cannot answer for reports (sim_internal.h). The
 * programs come from the strategy builders, so a deadlock is a builder bug: the message
 * names the first stuck rank's task and stream; SIMTRAIN_DEBUG_STUCK=1 lists every rank's
 * stream heads. A step longer than SIM_STEP_LIMIT (util.h) is refused, not reported: some
 * duration in it may have saturated.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine/sim_internal.h"

/* SIMTRAIN_DEBUG_STUCK=1: list every rank's stream heads when a step deadlocks (builder bugs). */
static void dump_heads(const struct sim *sm)
{
    char name[160];
    int ri, st;

    for (ri = 0; ri < sm->nr; ri++) {
        const struct srank *r = &sm->r[ri];
        for (st = 0; st < ST_COUNT; st++) {
            int ti = r->head[st];
            if (ti >= r->ntasks)
                continue;
            prog_label_text(r->prog, r->prog->tasks[ti].label, name, sizeof(name));
            fprintf(stderr, "rank %d stream %s task %d '%s' mb %d ready %d\n",
                    sm->res->ranks[ri].rank, stream_name(st), ti, name, r->prog->tasks[ti].mb,
                    (int)exec_ready(r, ti));
        }
    }
}

int diagnose_step_range(const struct sim *sm, char *reason, size_t reason_len)
{
    if (sm->res->step <= SIM_STEP_LIMIT)
        return 0;
    snprintf(reason, reason_len,
             "the step lasts longer than %.0f s (%.1f days), the longest the simulator answers "
             "for: a rate of the hardware (a bandwidth, an efficiency) is too low or the "
             "workload too large for it",
             (double)SIM_STEP_LIMIT / NS_PER_S, (double)SIM_STEP_LIMIT / NS_PER_S / 86400);
    return -1;
}

int diagnose_memory_range(const struct sim *sm, char *reason, size_t reason_len)
{
    for (int ri = 0; ri < sm->nr; ri++)
        if (sm->res->ranks[ri].peak > SIM_MEM_LIMIT) {
            snprintf(reason, reason_len,
                     "rank %d would hold more than %.0f PiB at its peak, a million times any "
                     "GPU's memory: the workload is too large for the simulator to count its "
                     "bytes (they saturate beyond)",
                     sm->res->ranks[ri].rank,
                     (double)SIM_MEM_LIMIT / (1024.0 * 1024 * 1024 * 1024 * 1024));
            return -1;
        }
    return 0;
}

int diagnose_deadlock(const struct sim *sm, char *reason, size_t reason_len)
{
    int ri, st;

    for (ri = 0; ri < sm->nr; ri++) {
        const struct srank *r = &sm->r[ri];
        for (st = 0; st < ST_COUNT; st++) {
            if (r->head[st] < r->ntasks) {
                int ti = r->head[st];
                char name[160];
                prog_label_text(r->prog, r->prog->tasks[ti].label, name, sizeof(name));
                snprintf(reason, reason_len,
                         "internal error: rank %d stuck at task %d ('%s') on stream %s",
                         sm->res->ranks[ri].rank, ti, name, stream_name(st));
                if (getenv("SIMTRAIN_DEBUG_STUCK"))
                    dump_heads(sm);
                return -1;
            }
        }
    }
    return 0;
}
