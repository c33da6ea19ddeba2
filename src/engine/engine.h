/*
 * engine.h - the discrete-event core: integer-nanosecond time and a min-heap
 * of events keyed by (time, insertion sequence), so events at equal
 * times run in the order they were scheduled, on every machine (ns-3, libuv
 * timers). Nothing here knows about GPUs; sim.c builds on it.
 *
 * Events carry a handler, a context pointer and one 64-bit payload. Cancel
 * by generation counters in the payload, never by searching the heap.
 *
 * The simulator keeps few events queued (about six for a symmetric run, one
 * or two per simulated stream), so the queue is a ring kept sorted by
 * insertion while it holds up to ENGINE_RING_MAX events (a new event is
 * usually the latest: one comparison; the earliest leaves from the head), and
 * a radix heap on the integer-ns times beyond (radix.h; --ranks all, deep
 * pipelines). A 4-ary heap stands in when an event comes before one already
 * popped (engine_pop() without engine_run()). All give the same (t, seq) order.
 */
#ifndef SIMTRAIN_ENGINE_H
#define SIMTRAIN_ENGINE_H

#include <assert.h>
#include <stdint.h>

#include "base/util.h"
#include "engine/event.h"

struct radix;

struct engine {
    struct event *heap;  /* the queue: a sorted ring while small, else a 4-ary min-heap */
    size_t n, cap;       /* events queued, slots allocated (a power of two) */
    size_t head;         /* ring: slot of the earliest event */
    int ring;            /* 1: heap[] is a ring sorted on (t, seq); 0: a heap from slot 0 */
    struct radix *rq;    /* non-NULL: the events are in this radix heap, not in heap[] */
    struct radix *spare; /* the radix heap's memory while the queue is a ring or a heap */
    size_t radix_min;    /* the heap becomes a radix heap at this many events
                            (ENGINE_RADIX_MIN; bench_engine compares others) */
    int no_radix;        /* an event was scheduled before one already run (engine_pop()
                            without engine_run()): a radix heap cannot hold that */
    uint64_t seq;        /* next insertion sequence number */
    sim_time now;        /* time of the event being run, ns */
    uint64_t fired;      /* events run so far */
};

#define ENGINE_RING_MAX 32 /* beyond this many events the ring becomes a heap */
/* From this many events on, the queue is a radix heap: bench_engine measured it 1.7-4x the
 * 4-ary heap's events/s from 48 to 65,536 pending (the ring below 32 is faster than both). */
#define ENGINE_RADIX_MIN ENGINE_RING_MAX

void engine_init(struct engine *e);
void engine_release(struct engine *e);

/* The out-of-line part of engine_at(): growing, turning the ring into a heap, the heap. */
void engine_push_slow(struct engine *e, const struct event *ev);

/*
 * Schedule fn(e, ctx, data) at absolute time t (t >= now is asserted). Inline: the
 * simulator schedules an event per task. The common case appends to the ring: the new
 * event has the highest sequence number, so it goes after every event at a time <= t.
 */
static inline void engine_at(struct engine *e, sim_time t, engine_fn *fn, void *ctx, int64_t data)
{
    assert(t >= e->now && "event scheduled in the past");
    if (e->ring && e->n < ENGINE_RING_MAX && e->n < e->cap) {
        struct event *h = e->heap;
        size_t mask = e->cap - 1, j = (e->head + e->n) & mask;

        while (j != e->head && h[(j - 1) & mask].t > t) {
            h[j] = h[(j - 1) & mask];
            j = (j - 1) & mask;
        }
        h[j].t = t;
        h[j].seq = e->seq++;
        h[j].fn = fn;
        h[j].ctx = ctx;
        h[j].data = data;
        e->n++;
    } else {
        struct event ev = { t, e->seq++, fn, ctx, data };
        engine_push_slow(e, &ev);
    }
}

/* Schedule fn after a delay of dt >= 0 ns (at SIM_TIME_MAX when now + dt is beyond it). */
static inline void engine_after(struct engine *e, sim_time dt, engine_fn *fn, void *ctx,
                                int64_t data)
{
    assert(dt >= 0 && "negative delay");
    engine_at(e, time_add(e->now, dt), fn, ctx, data);
}

/* Run events until the heap is empty. Returns the time of the last event. */
sim_time engine_run(struct engine *e);

/* Remove and return the earliest event into *ev; 0 when empty. For tests and custom loops. */
int engine_pop(struct engine *e, struct event *ev);

#endif
