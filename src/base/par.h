/*
 * par.h - a loop over independent items on several threads, for the commands that evaluate
 * many configurations (`validate`, `sweep`): each item's result goes to its own slot, so the
 * output does not depend on the number of threads or on which thread took which item.
 *
 * The simulator keeps no global state (serve/api.h), so items may run concurrently; the
 * callback must write only the item's own slot.
 */
#ifndef SIMTRAIN_PAR_H
#define SIMTRAIN_PAR_H

/* The default --jobs: the processors online (at least 1). */
int par_default_jobs(void);

/*
 * Call fn(ctx, i) once for every i in [0, n), on min(jobs, n) threads (the calling thread
 * is one of them; jobs <= 1: in order, on the calling thread alone). Returns when all are
 * done. Aborts when a thread cannot be started.
 */
void par_for(int jobs, long n, void (*fn)(void *ctx, long i), void *ctx);

#endif
