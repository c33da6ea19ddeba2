/*
 * radix.h - a radix heap of events (Ahuja, Mehlhorn, Orlin and Tarjan 1990): the engine's
 * queue when many events are pending (engine.h; `--ranks all` keeps one or two per simulated
 * stream). Keys are the events' integer-ns times; a discrete-event simulation never schedules
 * before the event it runs, so every key is at least the last one popped (`last`), and an
 * event goes to bucket 0 when its time equals `last`, else to bucket 64 - clz(t ^ last) (one
 * per highest differing bit). Pop takes bucket 0's first event; when bucket 0 is empty, the
 * lowest non-empty bucket's earliest time becomes `last` and its events are spread over the
 * lower buckets, each moving at most 64 times in its life.
 *
 * Ties: every bucket holds its events in insertion-sequence order. A push appends the newest
 * sequence number; a bucket is spread only into buckets that are empty, in its own order. So
 * bucket 0, all at one time, pops in sequence order, and the queue's order is exactly the
 * (time, sequence) order of the engine's heap.
 */
#ifndef SIMTRAIN_RADIX_H
#define SIMTRAIN_RADIX_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/event.h"

#define RADIX_BUCKETS 65

struct radix_bucket {
    struct event *ev;
    size_t n, cap;
};

struct radix {
    struct radix_bucket b[RADIX_BUCKETS];
    size_t head0;      /* bucket 0: events [head0, n) are pending */
    size_t n;          /* events pending */
    uint64_t nonempty; /* bit i - 1: bucket i (1..64) holds events */
    sim_time last;     /* the time of the last event popped (or where the queue started) */
};

/* An empty queue whose events are all at or after `start` (>= 0). */
void radix_init(struct radix *q, sim_time start);
void radix_release(struct radix *q);

/*
 * Queue *ev (its seq above every queued one). False, queueing nothing, when ev->t is before
 * the last time popped: the caller falls back to a comparison heap.
 */
bool radix_push(struct radix *q, const struct event *ev);

/* Remove the earliest event (time, then sequence) into *out; false when empty. */
bool radix_pop(struct radix *q, struct event *out);

#endif
