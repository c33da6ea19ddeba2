/* test_plan_io.c - the outputs of `simtrain plan` and the merge of shard files (plan.h,
 * plan_io.c). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp(), setenv(), open_memstream() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "whatif/plan.h"
#include "support.h"

/* tiny-llama (8 layers) on one 8-GPU tiny-box node (test fixtures). */
static const char scenario_text[] = "name: plan_io_test\n"
                                    "hardware: tiny-box\n"
                                    "workload: tiny-llama\n"
                                    "cluster:\n"
                                    "  nodes: 1\n"
                                    "training:\n"
                                    "  seq_len: 1024\n"
                                    "  global_batch: 64\n"
                                    "  tokens: 10G\n"
                                    "  price_per_gpu_hour: 2\n";

static char dir[64];

static int setup(void **state)
{
    (void)state;
    setenv("SIMTRAIN_DATA", SIMTRAIN_SOURCE_DIR "/tests/fixtures", 1);
    snprintf(dir, sizeof(dir), "/tmp/simtrain-plan-io-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char p[128];

    (void)state;
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof(p), "%s/part%d.csv", dir, k);
        remove(p);
    }
    return rmdir(dir);
}

/* Search shard k of n and write its CSV to dir/part<k>.csv; returns the simulated fits. */
static int search_shard(const struct scenario *s, int k, int n, char *file, size_t len)
{
    struct plan_opts o = { .top = 2, .shard_k = k, .shard_n = n };
    struct plan_result r;
    char msg[256];
    FILE *f;
    int fits = 0;

    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    snprintf(file, len, "%s/part%d.csv", dir, k);
    f = fopen(file, "w");
    assert_non_null(f);
    assert_int_equal(plan_write_csv(&r, f), 0);
    assert_int_equal(fclose(f), 0);
    for (long i = 0; i < r.nfit; i++)
        fits += r.fit[i].simulated && r.fit[i].sim_status < 0;
    plan_result_release(&r);
    return fits;
}

/*
 * Two shards' CSV files merge into one ranking: every simulated layout that fits in either
 * file, best simulated step first, with the figures the files hold.
 */
static void test_plan_merge_ranks_both_shards(void **state)
{
    struct scenario *s = test_load("plan_io.yaml", scenario_text, NULL);
    char files[2][128];
    const char *paths[2] = { files[0], files[1] };
    struct plan_cand *c;
    char msg[256], *text = NULL;
    size_t len = 0;
    long n;
    int fits;
    FILE *f;

    (void)state;
    fits = search_shard(s, 0, 2, files[0], sizeof(files[0]));
    fits += search_shard(s, 1, 2, files[1], sizeof(files[1]));
    assert_true(fits >= 2);
    assert_int_equal(plan_merge(paths, 2, PLAN_BY_TIME, &c, &n, msg, sizeof(msg)), 0);
    assert_int_equal(n, fits);
    for (long i = 0; i < n; i++) {
        assert_true(c[i].simulated && c[i].sim_status < 0 && c[i].sim_step_s > 0);
        assert_int_equal(c[i].gpus, 8);
        assert_int_equal(c[i].dp * c[i].tp * c[i].pp * c[i].cp, 8);
        if (i > 0)
            assert_true(c[i - 1].sim_step_s <= c[i].sim_step_s);
    }
    f = open_memstream(&text, &len);
    plan_print_merged(f, c, n, 2, 1);
    fclose(f);
    assert_non_null(strstr(text, "simulated layouts that fit, from 2 files\n"));
    assert_non_null(strstr(text, "\n  1  "));
    assert_null(strstr(text, "\n  2  ")); /* top 1 */
    free(text);
    free(c);
    cfg_free(s);
}

/* A file that is not a plan CSV names the column it lacks; a missing file names itself. */
static void test_plan_merge_errors(void **state)
{
    char p[128], msg[256];
    const char *paths[1] = { p };
    struct plan_cand *c;
    long n;
    FILE *f;

    (void)state;
    snprintf(p, sizeof(p), "%s/part2.csv", dir);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("number,gpus\n1,8\n", f);
    fclose(f);
    assert_int_equal(plan_merge(paths, 1, PLAN_BY_TIME, &c, &n, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "part2.csv: not a plan CSV (no column 'dp')"));
    snprintf(p, sizeof(p), "%s/missing.csv", dir);
    assert_int_equal(plan_merge(paths, 1, PLAN_BY_TIME, &c, &n, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "missing.csv"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_merge_ranks_both_shards),
        cmocka_unit_test(test_plan_merge_errors),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
