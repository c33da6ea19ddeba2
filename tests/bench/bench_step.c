/*
 * bench_step.c - wall time of one simulated step, split into its phases:
 * loading the scenario, building the per-stage programs, simulating them.
 * Usage: bench_step [SCENARIO.yaml ...] [--ranks all] [--repeat N]
 * Default: the flagship (scenarios/70b_256gpu.yaml) and the 405B scenario.
 * Prints the best of N repeats per phase, the median of the N totals (the
 * figure to compare on a shared machine), the tasks built, the engine events,
 * the simulated step time and the peak resident memory of the process.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "config/config.h"
#include "model/layout.h"
#include "engine/sim.h"
#include "strategy/strategy.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static int bench(const char *path, bool all, int repeat)
{
    double best_load = 1e30, best_build = 1e30, best_sim = 1e30, median;
    double *total = xcalloc((size_t)repeat, sizeof(*total));
    long tasks = 0;
    uint64_t events = 0;
    double step = 0;
    int i;

    for (i = 0; i < repeat; i++) {
        struct sim_opts opts = { .all_ranks = all };
        struct sim_result res;
        struct layout l;
        struct prog **progs;
        char reason[512];
        double t0, t1, t2, t3;
        struct scenario *s;
        int st;

        t0 = now_s();
        s = cfg_load_scenario(path, NULL, 0, stderr);
        if (!s)
            return -1;
        t1 = now_s();
        layout_init(&l, s);
        progs = xcalloc((size_t)s->par.pp, sizeof(*progs));
        if (strategy_build(s, &l, progs, reason, sizeof(reason)) != 0) {
            fprintf(stderr, "%s: %s\n", path, reason);
            return -1;
        }
        t2 = now_s();
        if (sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)) != 0) {
            fprintf(stderr, "%s: %s\n", path, reason);
            return -1;
        }
        t3 = now_s();
        tasks = 0;
        for (st = 0; st < s->par.pp; st++)
            tasks += progs[st]->ntasks;
        events = res.events;
        step = (double)res.step / NS_PER_S;
        best_load = t1 - t0 < best_load ? t1 - t0 : best_load;
        best_build = t2 - t1 < best_build ? t2 - t1 : best_build;
        best_sim = t3 - t2 < best_sim ? t3 - t2 : best_sim;
        total[i] = t3 - t0;
        sim_result_release(&res);
        for (st = 0; st < s->par.pp; st++)
            prog_free(progs[st]);
        free(progs);
        cfg_free(s);
    }
    qsort(total, (size_t)repeat, sizeof(*total), cmp_double);
    median = repeat % 2 ? total[repeat / 2] : (total[repeat / 2 - 1] + total[repeat / 2]) / 2;
    free(total);
    printf("%-28s %-9s %8.1f %8.1f %9.1f %9.1f %9.1f %10ld %11llu %12.0f %9.3f %8.0f\n", path,
           all ? "all" : "symmetric", best_load * 1e3, best_build * 1e3, best_sim * 1e3,
           (best_load + best_build + best_sim) * 1e3, median * 1e3, tasks,
           (unsigned long long)events, (double)events / best_sim, step, peak_rss_mib());
    return 0;
}

int main(int argc, char **argv)
{
    const char *defaults[] = { SIMTRAIN_SOURCE_DIR "/scenarios/70b_256gpu.yaml",
                               SIMTRAIN_SOURCE_DIR "/scenarios/405b_16k.yaml" };
    const char *paths[16];
    int npaths = 0, repeat = 5, i, rc = 0;
    bool all = false;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc)
            all = strcmp(argv[++i], "all") == 0;
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (npaths < (int)ARRAY_LEN(paths))
            paths[npaths++] = argv[i];
    }
    if (npaths == 0)
        for (i = 0; i < (int)ARRAY_LEN(defaults); i++)
            paths[npaths++] = defaults[i];
    if (repeat < 1)
        repeat = 1;
    printf("%-28s %-9s %8s %8s %9s %9s %9s %10s %11s %12s %9s %8s\n", "scenario", "ranks",
           "load ms", "build ms", "sim ms", "total ms", "median ms", "tasks", "events", "events/s",
           "step s", "rss MiB");
    for (i = 0; i < npaths; i++)
        rc |= bench(paths[i], all, repeat);
    return rc ? 1 : 0;
}
