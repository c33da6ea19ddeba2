/*
 * test_band.c - the step-time interval from validation residuals (report/band.h): a scenario's
 * regime, the percentiles of the matching rows, the relaxation order and "none", on a table of
 * known ratios put under $SIMTRAIN_DATA (read once per process: every test here uses it).
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "report/band.h"
#include "support.h"

#define FLAGSHIP SIMTRAIN_SOURCE_DIR "/scenarios/70b_256gpu.yaml"

static char datadir[] = "/tmp/simtrain-band-XXXXXX";
static char tablepath[256];

/*
 * Six Megatron model-parallel >=30B runs at <=2k on Ampere with ratios 1.0 .. 1.5, four
 * Hopper ones at 4k-8k (too few alone), one FSDP run.
 */
static int setup(void **state)
{
    static const char *const rows = "set,id,gpu,stack,kind,size,seq,measured_over_predicted\n"
                                    "a.csv,\"m1\",ampere,megatron,model-parallel,>=30B,<=2k,1.0\n"
                                    "a.csv,\"m2\",ampere,megatron,model-parallel,>=30B,<=2k,1.5\n"
                                    "a.csv,\"m3\",ampere,megatron,model-parallel,>=30B,<=2k,1.1\n"
                                    "b.csv,\"m4\",ampere,megatron,model-parallel,>=30B,<=2k,1.4\n"
                                    "b.csv,\"m5\",ampere,megatron,model-parallel,>=30B,<=2k,1.2\n"
                                    "b.csv,\"m6\",ampere,megatron,model-parallel,>=30B,<=2k,1.3\n"
                                    "a.csv,\"h1\",hopper,megatron,model-parallel,>=30B,4k-8k,0.9\n"
                                    "a.csv,\"h2\",hopper,megatron,model-parallel,>=30B,4k-8k,0.9\n"
                                    "a.csv,\"h3\",hopper,megatron,model-parallel,>=30B,4k-8k,0.9\n"
                                    "a.csv,\"h4\",hopper,megatron,model-parallel,>=30B,4k-8k,0.9\n"
                                    "a.csv,\"f1\",hopper,llm-foundry,sharded,>=30B,<=2k,1.2\n";
    char dir[160];
    FILE *f;

    (void)state;
    if (!mkdtemp(datadir))
        return -1;
    snprintf(dir, sizeof(dir), "%s/hardware", datadir);
    mkdir(dir, 0700);
    snprintf(dir, sizeof(dir), "%s/hardware/calibration", datadir);
    mkdir(dir, 0700);
    snprintf(tablepath, sizeof(tablepath), "%s/error-bands.csv", dir);
    f = fopen(tablepath, "w");
    if (!f)
        return -1;
    fputs(rows, f);
    fclose(f);
    setenv("SIMTRAIN_DATA", datadir, 1);
    return 0;
}

static int teardown(void **state)
{
    char dir[160];

    (void)state;
    remove(tablepath);
    snprintf(dir, sizeof(dir), "%s/hardware/calibration", datadir);
    rmdir(dir);
    snprintf(dir, sizeof(dir), "%s/hardware", datadir);
    rmdir(dir);
    rmdir(datadir);
    unsetenv("SIMTRAIN_DATA");
    return 0;
}

/* The flagship is hopper megatron model-parallel >=30B 4k-8k. */
static void test_band_regime_of_flagship(void **state)
{
    struct scenario *s = test_load(FLAGSHIP, NULL, NULL);
    struct band_regime r;

    (void)state;
    band_regime_of(s, &r);
    assert_string_equal(r.word[BD_GPU], "hopper");
    assert_string_equal(r.word[BD_STACK], "megatron");
    assert_string_equal(r.word[BD_KIND], "model-parallel");
    assert_string_equal(r.word[BD_SIZE], ">=30B");
    assert_string_equal(r.word[BD_SEQ], "4k-8k");
    cfg_free(s);
}

/* The 4 Hopper rows are too few, and stay 4 with the sequence, the size or the GPU generation
 * dropped alone; dropping GPU generation and sequence adds the 6 Ampere ones: sorted ratios
 * 0.9 x4, 1.0 .. 1.5 give p10 0.9 and p90 1.4 + 0.1 * 0.1 = 1.41, so a 10 s step gets
 * [9, 14.1]. */
static void test_band_relaxes_to_enough_runs(void **state)
{
    struct scenario *s = test_load(FLAGSHIP, NULL, NULL);
    struct band b;

    (void)state;
    band_lookup(s, 10.0, &b);
    assert_true(b.found);
    assert_int_equal(b.n, 10);
    assert_int_equal(b.relaxed, (1u << BD_GPU) | (1u << BD_SEQ));
    assert_true(fabs(b.q10 - 0.9) < 1e-9);
    assert_true(fabs(b.q90 - 1.41) < 1e-9);
    assert_true(fabs(b.lo_s - 9.0) < 1e-9);
    assert_true(fabs(b.hi_s - 14.1) < 1e-9);
    assert_string_equal(b.sets, "a.csv, b.csv");
    cfg_free(s);
}

/* A replicated run on Hopper: one sharded row of another kind is not near it. */
static void test_band_none_when_no_run_is_near(void **state)
{
    struct scenario *s =
        test_load(FLAGSHIP, NULL,
                  (const char *[]){ "parallelism.tp=1", "parallelism.pp=1", "parallelism.vpp=1",
                                    "parallelism.sequence_parallel=false",
                                    "parallelism.schedule=1f1b", "parallelism.dp=256", NULL });
    struct band b;
    char text[256];

    (void)state;
    band_lookup(s, 10.0, &b);
    assert_false(b.found);
    assert_int_equal(b.n, 0);
    band_basis_text(&b, text, sizeof(text));
    assert_non_null(strstr(text, "no measured run near it"));
    band_fmt(&b, text, sizeof(text));
    assert_string_equal(text, "no measured run near it");
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band_regime_of_flagship),
        cmocka_unit_test(test_band_relaxes_to_enough_runs),
        cmocka_unit_test(test_band_none_when_no_run_is_near),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
