/*
 * fuzz_config.c - libFuzzer target for the configuration loader (built with
 * -DSIMTRAIN_FUZZ=ON by clang; tests/fuzz/run.sh builds and runs it).
 *
 * The first byte picks what the rest of the input is:
 *   'H'  a hardware document (calibration references resolve in tests/fixtures)
 *   'W'  a workload document
 *   'O'  a `--set key=value` argument applied to a fixed valid scenario
 *   'P'  a scenario posted to `simtrain serve` (cfg_load_scenario_posted(): library names
 *        only, no file path)
 *   else the whole input is a scenario document, whose bare-name references
 *        resolve to the fixtures (SIMTRAIN_DATA=tests/fixtures; run from the repo root)
 * A scenario that loads is then mutated through cfg_set() and re-finalized, and
 * its errors reported, so those paths are fuzzed too. Diagnostics go to
 * /dev/null. Any crash, leak or undefined behaviour is a bug.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/schema.h"
#include "base/units.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

static const char base_scenario[] = "hardware: tiny-box\n"
                                    "workload: tiny-llama\n"
                                    "cluster: {nodes: 2}\n"
                                    "training: {seq_len: 2048, global_batch: 64}\n"
                                    "parallelism: {tp: 2, pp: 2}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!getenv("SIMTRAIN_DATA"))
        setenv("SIMTRAIN_DATA", "tests/fixtures", 1);
    devnull = fopen("/dev/null", "w");
    return 0;
}

/* Poke a loaded scenario through the typed API: cfg_set, finalize, error reports. */
static void exercise(struct scenario *s, const char *text, size_t len)
{
    static const char *const keys[] = { "parallelism.tp",      "cluster.nodes",
                                        "training.seq_len",    "workload.heads",
                                        "hardware.gpu.memory", "parallelism.schedule" };
    struct scenario copy = *s;
    struct cfg_error err;
    char value[32], buf[64];
    size_t n = len < sizeof(value) - 1 ? len : sizeof(value) - 1;

    memcpy(value, text, n);
    value[n] = '\0';
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (cfg_set(&copy, keys[i], value, &err) == 0 && scenario_finalize(&copy, &err) != 0)
            cfg_report_error(s, &err, devnull);
    units_format(s->hw.gpu.mem_bytes, UNIT_BYTES, buf, sizeof(buf));
    units_format(s->hw.nvlink.bw_Bps, UNIT_BANDWIDTH, buf, sizeof(buf));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char mode = size ? text[0] : 0;

    if (mode == 'H') {
        cfg_free_hw(cfg_load_hardware_mem("tests/fixtures/hardware/fuzz.yaml", text + 1, size - 1,
                                          devnull));
    } else if (mode == 'W') {
        cfg_free_model(
            cfg_load_model_mem("tests/fixtures/workloads/fuzz.yaml", text + 1, size - 1, devnull));
    } else if (mode == 'O') {
        char *arg = malloc(size);
        struct cfg_override o;

        memcpy(arg, text + 1, size - 1);
        arg[size - 1] = '\0';
        if (cfg_override_init(&o, arg, devnull) == 0) {
            struct scenario *s =
                cfg_load_scenario_mem("tests/fixtures/scenarios/fuzz.yaml", base_scenario,
                                      sizeof(base_scenario) - 1, &o, 1, devnull);
            if (s)
                exercise(s, o.value, strlen(o.value));
            cfg_free(s);
            cfg_override_release(&o);
        }
        free(arg);
    } else if (mode == 'P') {
        struct scenario *s =
            cfg_load_scenario_posted("scenario.yaml", text + 1, size - 1, NULL, 0, devnull);

        if (s)
            exercise(s, text + 1, size - 1);
        cfg_free(s);
    } else {
        struct scenario *s = cfg_load_scenario_mem("tests/fixtures/scenarios/fuzz.yaml", text, size,
                                                   NULL, 0, devnull);

        if (s)
            exercise(s, text, size);
        cfg_free(s);
    }
    return 0;
}
