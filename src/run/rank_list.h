/*
 * rank_list.h - lists of global ranks as a user writes them on the command line
 * (`--trace-ranks 0-7,64`): comma-separated ranks and inclusive ranges, in any order,
 * overlaps allowed; and the same compact form for printing a set of ranks back.
 */
#ifndef SIMTRAIN_RANK_LIST_H
#define SIMTRAIN_RANK_LIST_H

#include <stddef.h>

#include "engine/sim.h"

struct rank_list {
    int *ranks; /* distinct global ranks, ascending */
    int n;
};

/*
 * Parse `text` into *out for a job of `world` ranks. On a malformed list, an empty range or
 * a rank outside [0, world) returns -1 with a message naming `flag` in err (*out is then
 * empty); else 0. The caller releases *out with rank_list_release().
 */
int rank_list_parse(const char *flag, const char *text, int world, struct rank_list *out, char *err,
                    size_t errlen);

void rank_list_release(struct rank_list *l);

/* ranks[0 .. n) (ascending) in the compact form ("0-7,64"; "" when n is 0) into buf. */
void rank_list_format(const int *ranks, int n, char *buf, size_t len);

/*
 * The simulated ranks a step's trace kept (rank_result.traced), compact, into buf; returns
 * how many.
 */
int rank_list_traced(const struct sim_result *res, char *buf, size_t len);

#endif
