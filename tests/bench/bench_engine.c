/*
 * bench_engine.c - engine throughput in events per second on one core: a
 * hold model (each event schedules one successor at a random delay) with a
 * steady heap of H pending events, the shape the simulator produces.
 * Usage: bench_engine [events] ; prints one line per queue and pending count.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/engine.h"

static uint64_t rng = 12345;
static uint64_t spread = 10000; /* delays are uniform in [0, spread) ns */

static void hold(struct engine *e, void *ctx, int64_t data)
{
    int64_t *left = ctx;

    if (--*left > 0)
        engine_after(e, (sim_time)(rng_next(&rng) % spread), hold, ctx, data);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One hold run: `pending` events in a queue that turns into a radix heap at radix_min. */
static void run(int64_t events, int pending, size_t radix_min, const char *queue)
{
    struct engine e;
    int64_t left = events;
    double t0, t1;

    engine_init(&e);
    e.radix_min = radix_min;
    for (int i = 0; i < pending; i++)
        engine_at(&e, (sim_time)(rng_next(&rng) % spread), hold, &left, i);
    t0 = now_s();
    engine_run(&e);
    t1 = now_s();
    printf("%-10d %-8llu %-12s %12llu %10.3f %14.0f\n", pending, (unsigned long long)spread, queue,
           (unsigned long long)e.fired, t1 - t0, (double)e.fired / (t1 - t0));
    engine_release(&e);
}

/*
 * Usage: bench_engine [events]. Each pending count with the 4-ary heap alone and with the
 * radix heap from 32 events on (the ring below both), for delays spread over 10 us and over
 * 16 ns (many events at one time, as when thousands of symmetric ranks run in step).
 */
int main(int argc, char **argv)
{
    int64_t events = argc > 1 ? atoll(argv[1]) : 20000000;
    const int sizes[] = { 16, 48, 128, 256, 1024, 4096, 16384, 65536 };
    const uint64_t spreads[] = { 10000, 16 };

    printf("%-10s %-8s %-12s %12s %10s %14s\n", "pending", "spread", "queue", "events", "seconds",
           "events/s");
    for (size_t d = 0; d < sizeof(spreads) / sizeof(spreads[0]); d++) {
        spread = spreads[d];
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            run(events, sizes[k], (size_t)-1, "4-ary heap");
            run(events, sizes[k], 32, "radix heap");
        }
    }
    return 0;
}
