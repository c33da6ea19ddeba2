/*
 * engine.h - the discrete-event core: integer-nanosecond time and a min-heap
 * of events keyed by (time, insertion sequence), so events at equal
 * times run in the order they were scheduled, on every machine (ns-3, libuv
 * timers). Nothing here knows about GPUs; sim.c builds on it.
 *
 * Events carry a handler, a context pointer and one 64-bit payload. Cancel
 * by generation counters in the payload, never by searching the heap.
 */
#ifndef SIMTRAIN_ENGINE_H
#define SIMTRAIN_ENGINE_H

#include <stdint.h>

#include "util.h"

struct engine;
typedef void engine_fn(struct engine *e, void *ctx, int64_t data);

struct event {
    sim_time t;   /* when it fires, ns */
    uint64_t seq; /* insertion sequence: FIFO among equal times */
    engine_fn *fn;
    void *ctx;
    int64_t data;
};

struct engine {
    struct event *heap; /* 4-ary min-heap on (t, seq) */
    size_t n, cap;      /* events queued, slots allocated */
    uint64_t seq;       /* next insertion sequence number */
    sim_time now;       /* time of the event being run, ns */
    uint64_t fired;     /* events run so far */
};

void engine_init(struct engine *e);
void engine_release(struct engine *e);

/* Schedule fn(e, ctx, data) at absolute time t (t >= now is asserted). */
void engine_at(struct engine *e, sim_time t, engine_fn *fn, void *ctx, int64_t data);

/* Schedule fn after a delay of dt >= 0 ns. */
void engine_after(struct engine *e, sim_time dt, engine_fn *fn, void *ctx, int64_t data);

/* Run events until the heap is empty. Returns the time of the last event. */
sim_time engine_run(struct engine *e);

/* Remove and return the earliest event into *ev; 0 when empty. For tests and custom loops. */
int engine_pop(struct engine *e, struct event *ev);

#endif
