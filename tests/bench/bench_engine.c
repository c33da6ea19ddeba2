/*
 * bench_engine.c - engine throughput in events per second on one core: a
 * hold model (each event schedules one successor at a random delay) with a
 * steady heap of H pending events, the shape the simulator produces.
 * Usage: bench_engine [events] ; prints one line per heap size.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/engine.h"

static uint64_t rng = 12345;

static void hold(struct engine *e, void *ctx, int64_t data)
{
    int64_t *left = ctx;

    if (--*left > 0)
        engine_after(e, (sim_time)(rng_next(&rng) % 10000), hold, ctx, data);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int64_t events = argc > 1 ? atoll(argv[1]) : 20000000;
    const int sizes[] = { 16, 256, 4096, 65536 };
    size_t k;

    printf("%-10s %12s %10s %14s\n", "heap size", "events", "seconds", "events/s");
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        struct engine e;
        int64_t left = events;
        double t0, t1;
        int i;

        engine_init(&e);
        for (i = 0; i < sizes[k]; i++)
            engine_at(&e, (sim_time)(rng_next(&rng) % 10000), hold, &left, i);
        t0 = now_s();
        engine_run(&e);
        t1 = now_s();
        printf("%-10d %12llu %10.3f %14.0f\n", sizes[k], (unsigned long long)e.fired, t1 - t0,
               (double)e.fired / (t1 - t0));
        engine_release(&e);
    }
    return 0;
}
