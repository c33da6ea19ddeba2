/*
 * timeline.h - the step's timeline for a picture: the task intervals the Chrome trace writes
 * (trace.c; the same records, sim_result.trace, and the same memory samples), per simulated
 * rank and stream, with the tasks closer together than what a picture of the window can show
 * merged into one span, so that a browser draws a 16-second step of 10^5 tasks per rank from
 * a few thousand spans (`simtrain serve`'s page and `--html`).
 *
 * Merging: on one stream, consecutive tasks of the same time category and micro-batch whose
 * gap is at most the resolution (the window over width_px) become one span that counts them
 * and keeps the first task's label. A track that would still hold more than
 * TIMELINE_MAX_SPANS merges across micro-batches, then across categories (the span takes its
 * first task's category). Nothing is dropped: every traced task of the window is in a span.
 *
 * The JSON (schema in docs/json-schema.md, "Timeline"): times in microseconds with nanosecond
 * decimals, as in the trace.
 */
#ifndef SIMTRAIN_TIMELINE_H
#define SIMTRAIN_TIMELINE_H

#include <stdio.h>

#include "run/run.h"

#define TIMELINE_MAX_SPANS 6000 /* per track, after merging */

struct timeline_opts {
    double from_s, to_s; /* the window; to_s <= from_s: the whole step */
    int width_px;        /* the picture's width: sets the resolution; 0 = 2000 */
};

/*
 * Write the timeline of run r (simulated with sim_opts.trace) as one JSON object to f. Returns
 * 0, or -1 when f reports a write error.
 */
int timeline_write(FILE *f, const struct run *r, const struct timeline_opts *o);

#endif
