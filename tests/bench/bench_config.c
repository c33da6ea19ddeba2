/*
 * bench_config.c - how fast the input layer is: loading a scenario (three YAML
 * files, overrides, extraction, finalize), re-finalizing a mutated copy (what
 * plan and sweep do per candidate), and cfg_set + finalize (sweep --vary).
 *
 *     build/bench_config [iterations]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/config.h"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *path = SIMTRAIN_SOURCE_DIR "/tests/fixtures/scenarios/good.yaml";
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    struct scenario *s;
    struct cfg_error err;
    double t0, t1;
    int bad = 0;

    t0 = now();
    for (int i = 0; i < n; i++) {
        s = cfg_load_scenario(path, NULL, 0, stderr);
        if (!s)
            return 1;
        cfg_free(s);
    }
    t1 = now();
    printf("cfg_load_scenario (good.yaml + hardware + calibration + workload): %8.1f us/load\n",
           (t1 - t0) / n * 1e6);

    s = cfg_load_scenario(path, NULL, 0, stderr);
    if (!s)
        return 1;
    t0 = now();
    for (int i = 0; i < 100 * n; i++) {
        struct scenario copy = *s;

        copy.par.tp = 1 << (i % 4);
        copy.par.pp = 1 << ((i / 4) % 3);
        copy.par.dp = 0;
        bad += scenario_finalize(&copy, &err) != 0;
    }
    t1 = now();
    printf("scenario_finalize on a mutated copy:                            %8.3f us/call "
           "(%d of %d rejected)\n",
           (t1 - t0) / (100.0 * n) * 1e6, bad, 100 * n);

    t0 = now();
    for (int i = 0; i < 10 * n; i++) {
        struct scenario copy = *s;

        if (cfg_set(&copy, "cluster.nodes", i % 2 ? "2" : "4", &err) != 0)
            return 1;
        scenario_finalize(&copy, &err);
    }
    t1 = now();
    printf("cfg_set + scenario_finalize:                                    %8.3f us/call\n",
           (t1 - t0) / (10.0 * n) * 1e6);
    cfg_free(s);
    return 0;
}
