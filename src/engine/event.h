/*
 * event.h - one event of the engine's queue (engine.h), apart so that the queue structures
 * (radix.h) can hold events without the engine.
 */
#ifndef SIMTRAIN_EVENT_H
#define SIMTRAIN_EVENT_H

#include <stdint.h>

#include "base/util.h"

struct engine;
typedef void engine_fn(struct engine *e, void *ctx, int64_t data);

struct event {
    sim_time t;   /* when it fires, ns */
    uint64_t seq; /* insertion sequence: FIFO among equal times */
    engine_fn *fn;
    void *ctx;
    int64_t data;
};

#endif
