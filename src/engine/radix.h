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

#include <assert.h>
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

/* The bucket of time t: 0 when it is `last`, else one past the highest bit they differ in. */
static inline int radix_bucket_of(sim_time last, sim_time t)
{
    uint64_t x = (uint64_t)t ^ (uint64_t)last;

    return x ? 64 - __builtin_clzll(x) : 0;
}

/* Make room for one more event in bucket b (out of line: rare). */
void radix_grow(struct radix_bucket *b);

/*
 * Queue *ev (its seq above every queued one). False, queueing nothing, when ev->t is before
 * the last time popped: the caller falls back to a comparison heap. Inline, as the pop: the
 * engine pushes once per event.
 */
static inline bool radix_push(struct radix *q, const struct event *ev)
{
    int i = radix_bucket_of(q->last, ev->t);
    struct radix_bucket *b = &q->b[i];

    if (ev->t < q->last)
        return false;
    if (b->n == b->cap)
        radix_grow(b);
    b->ev[b->n++] = *ev;
    if (i)
        q->nonempty |= 1ull << (i - 1);
    q->n++;
    return true;
}

/* Remove the earliest event (time, then sequence) into *out; false when empty. */
bool radix_pop(struct radix *q, struct event *out);

/* Bucket 0 is empty and q is not: make the lowest non-empty bucket's earliest time `last`. */
void radix_refill(struct radix *q);

/*
 * Remove the earliest event of a queue that is not empty and return it in place, without a
 * copy (the engine's loop: 40 bytes an event). It stays valid until the next push or pop.
 */
static inline const struct event *radix_pop_ref(struct radix *q)
{
    struct radix_bucket *b0 = &q->b[0];
    const struct event *ev;

    assert(q->n > 0);
    if (q->head0 == b0->n)
        radix_refill(q);
    ev = &b0->ev[q->head0++];
    if (q->head0 == b0->n)
        b0->n = q->head0 = 0; /* the slots are reused by the next push: ev is still there */
    q->n--;
    return ev;
}

#endif
