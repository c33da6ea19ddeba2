/*
 * fuzz_csv.c - libFuzzer target for the CSV readers (built with -DSIMTRAIN_FUZZ=ON by clang;
 * tests/fuzz/run.sh builds and runs it beside fuzz_config).
 *
 * The first byte picks what the rest of the input is:
 *   'V'  a runs file of `simtrain validate` (fit/validate.h): every row is turned into a
 *        scenario and finalized (the loader's rules, the size limits), then "predicted" by a
 *        stub that costs nothing but the program-size estimate, and the report is printed and
 *        written as JSON; every hardware stem is the fixture tiny-box
 *   'C'  a measurements file of `simtrain calibrate` (fit/calibrate.h): read, range-checked,
 *        fitted against tiny-box, and compared (--check), reports to /dev/null
 *   else the whole input through the RFC 4180 reader alone (base/csv.h), every field read
 * Run from the repository root (tiny-box is loaded from tests/fixtures). Any crash, leak,
 * undefined behaviour or float-cast overflow is a bug.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/csv.h"
#include "config/config.h"
#include "fit/calibrate.h"
#include "fit/validate.h"
#include "strategy/size.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;
static struct hardware *tiny_box;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!getenv("SIMTRAIN_DATA"))
        setenv("SIMTRAIN_DATA", "tests/fixtures", 1);
    devnull = fopen("/dev/null", "w");
    tiny_box = cfg_load_hardware("tests/fixtures/hardware/tiny-box.yaml", stderr);
    if (!devnull || !tiny_box)
        abort(); /* run from the repository root */
    return 0;
}

/* The stub predictor: a finalized row's program-size estimate, and a figure from it. */
static int predict(const struct scenario *s, struct prediction *out, char *reason,
                   size_t reason_len, void *ctx)
{
    struct prog_size z;

    (void)ctx;
    strategy_program_size(s, &z);
    if (z.tasks > STRATEGY_MAX_TASKS) {
        snprintf(reason, reason_len, "%.3g tasks", z.tasks);
        return -1;
    }
    memset(out, 0, sizeof(*out));
    out->fits = true;
    out->step_time_s = 1e-6 * z.tasks;
    out->tokens_per_s_per_gpu = 1e6 / (1 + z.tasks);
    out->peak_mem_bytes = 1e3 * z.tasks;
    out->capacity_bytes = s->hw.gpu.mem_bytes;
    return 0;
}

static const struct hardware *load_hw(const char *stem, char *reason, size_t reason_len, void *ctx)
{
    (void)ctx;
    if (!*stem) {
        snprintf(reason, reason_len, "no hardware");
        return NULL;
    }
    return tiny_box;
}

static void fuzz_validate(struct csv_table *t)
{
    const struct validate_hooks hooks = { predict, load_hw, NULL, 0 };
    struct validate_report rep;

    if (validate_table(t, &hooks, &rep, devnull) == 0) {
        validate_print(&rep, false, devnull);
        validate_print(&rep, true, devnull);
        validate_write_json(&rep, "/dev/null", devnull);
    }
    validate_release(&rep);
}

static void fuzz_calibrate(struct csv_table *t)
{
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    struct calib_result r;
    struct meas_set ms;

    if (calib_parse(t, &ms, devnull) == 0) {
        if (calib_fit(tiny_box, &ms, &opt, &r, devnull) == 0) {
            calib_print_summary(tiny_box, &r, devnull);
            calib_write_yaml(tiny_box, NULL, &ms, &r, "fuzz", devnull);
            calib_result_release(&r);
        }
        calib_check(tiny_box, &ms, false, devnull);
    }
    calib_release(&ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char mode = size ? text[0] : 0;
    size_t skip = mode == 'V' || mode == 'C' ? 1 : 0;
    struct csv_error err;
    struct csv_table *t = csv_parse(text + skip, size - skip, "fuzz.csv", &err);

    if (!t) {
        csv_print_error("fuzz.csv", &err, devnull);
        return 0;
    }
    if (mode == 'V') {
        fuzz_validate(t);
    } else if (mode == 'C') {
        fuzz_calibrate(t);
    } else {
        size_t sum = 0;

        for (int r = 0; r < t->nrows; r++)
            for (int c = -1; c <= t->ncols; c++)
                sum += strlen(csv_field(t, r, c));
        fprintf(devnull, "%zu %d\n", sum, csv_column(t, "id"));
        csv_free(t);
    }
    return 0;
}
