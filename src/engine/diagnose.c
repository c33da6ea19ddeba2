/*
 * diagnose.c - what a step that did not finish reports (sim_internal.h). The programs come
 * from the strategy builders, so a deadlock is a builder bug: the message names the first
 * stuck rank's task and stream; SIMTRAIN_DEBUG_STUCK=1 lists every rank's stream heads.
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
