/*
 * bench_plan.c - how fast `simtrain plan` searches (design target: >= 2,000 candidate
 * strategies/s on 2 cores; Calculon's search manages ~227/s, as re-measured by the
 * project's peer survey).
 *
 * For each scenario: the first pass (enumeration, the loader's rules, the builder probe and
 * the closed-form estimate of every candidate that passes them) timed over `repeats` cold
 * runs (a fresh estimator each time), reported as all candidates per second and as costed
 * (estimated) candidates per second; then the engine pass that simulates the best, and the
 * whole command. One thread: the search is not parallel (shards are, across processes).
 *
 *     build/bench_plan [repeats] [scenario.yaml ...]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/config.h"
#include "whatif/plan.h"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bench(const char *path, int repeats)
{
    struct scenario *s = cfg_load_scenario(path, NULL, 0, stderr);
    struct plan_opts o = { .top = 5, .shard_n = 1 };
    double best = 1e30, sim = 0, wall = 0;
    long cands = 0, costed = 0;
    int nsim = 0;
    char msg[256];

    if (!s)
        return 1;
    for (int i = 0; i < repeats; i++) {
        struct plan_result r;
        double t0 = now();
        if (plan_search(s, &o, &r, NULL, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "%s: %s\n", path, msg);
            cfg_free(s);
            return 1;
        }
        wall = now() - t0;
        if (r.search_s < best)
            best = r.search_s;
        cands = r.evaluated;
        costed = r.estimated;
        sim = r.simulate_s;
        nsim = r.nsimulated;
        plan_result_release(&r);
    }
    printf("%s\n", path);
    printf("  first pass  %8ld candidates in %.3f s: %9.0f candidates/s, %9.0f costed/s (%ld)\n",
           cands, best, cands / best, costed / best, costed);
    printf("  engine pass %8d simulations in %.3f s (%.1f ms each)\n", nsim, sim,
           nsim ? 1e3 * sim / nsim : 0);
    printf("  whole plan  %.3f s\n", wall);
    cfg_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 3, rc = 0;
    static const char *const defaults[] = { SIMTRAIN_SOURCE_DIR "/scenarios/70b_256gpu.yaml",
                                            SIMTRAIN_SOURCE_DIR "/scenarios/ddp_8gpu.yaml" };

    if (repeats < 1)
        repeats = 1;
    if (argc > 2)
        for (int i = 2; i < argc; i++)
            rc |= bench(argv[i], repeats);
    else
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
            rc |= bench(defaults[i], repeats);
    return rc;
}
