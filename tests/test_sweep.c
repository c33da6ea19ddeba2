/* test_sweep.c - axes, points, scaling efficiency, shards and outputs of `simtrain sweep`
 * (sweep.h). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp(), setenv(), open_memstream() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "whatif/sweep.h"

/* A small job on the test fixtures: tiny-llama (8 layers) on 8-GPU tiny-box nodes. */
static const char scenario_text[] = "name: whatif_test\n"
                                    "hardware: tiny-box\n"
                                    "workload: tiny-llama\n"
                                    "cluster:\n"
                                    "  nodes: 1\n"
                                    "training:\n"
                                    "  seq_len: 1024\n"
                                    "  global_batch: 64\n"
                                    "  micro_batch: 2\n"
                                    "  tokens: 10G\n"
                                    "  price_per_gpu_hour: 2\n"
                                    "parallelism:\n"
                                    "  dp: 8\n";

static char dir[64], path[128];

static int setup(void **state)
{
    FILE *f;

    (void)state;
    setenv("SIMTRAIN_DATA", SIMTRAIN_SOURCE_DIR "/tests/fixtures", 1);
    snprintf(dir, sizeof(dir), "/tmp/simtrain-sweep-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/whatif.yaml", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(scenario_text, f);
    return fclose(f);
}

static int teardown(void **state)
{
    char p[160];

    (void)state;
    remove(path);
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof(p), "%s/part%d.csv", dir, k);
        remove(p);
    }
    return rmdir(dir);
}

static struct scenario *load(void)
{
    struct scenario *s = cfg_load_scenario(path, NULL, 0, stderr);

    assert_non_null(s);
    return s;
}

/* A sweep over `varies` (NULL-terminated), evaluated as shard k of n. */
static struct sweep_point *run(struct sweep *sw, const struct scenario *s, const char **varies,
                               bool weak, int k, int n)
{
    char msg[256];
    struct sweep_point *pts;

    sweep_init(sw, path, s, NULL, 0, weak);
    for (int i = 0; varies[i]; i++)
        assert_int_equal(sweep_add_axis(sw, varies[i], msg, sizeof(msg)), 0);
    pts = calloc((size_t)sw->npoints, sizeof(*pts));
    sweep_run(sw, k, n, pts, NULL);
    if (n == 1)
        sweep_efficiency(sw, pts, sw->npoints);
    return pts;
}

/* Values split at top-level commas: a list value keeps its own commas. */
static void test_sweep_axis_values_split(void **state)
{
    struct scenario *s = load();
    struct sweep sw;
    char msg[256];

    (void)state;
    sweep_init(&sw, path, s, NULL, 0, false);
    assert_int_equal(sweep_add_axis(&sw, "training.lora.targets=[q,v],[q,k,v,o]", msg, sizeof(msg)),
                     0);
    assert_int_equal(sw.axes[0].nvalues, 2);
    assert_string_equal(sw.axes[0].values[0], "[q,v]");
    assert_string_equal(sw.axes[0].values[1], "[q,k,v,o]");
    assert_int_equal(sw.npoints, 2);
    sweep_release(&sw);
    cfg_free(s);
}

/* An unknown key and a value of the wrong type are errors naming them, before anything runs. */
static void test_sweep_axis_rejects_bad_input(void **state)
{
    struct scenario *s = load();
    struct sweep sw;
    char msg[256];

    (void)state;
    sweep_init(&sw, path, s, NULL, 0, false);
    assert_int_equal(sweep_add_axis(&sw, "parallelism.tpp=1,2", msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "tpp"));
    assert_int_equal(sweep_add_axis(&sw, "cluster.nodes=1,x", msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "'x'"));
    assert_int_equal(sweep_add_axis(&sw, "cluster.nodes", msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "KEY=V1,V2"));
    sweep_release(&sw);
    cfg_free(s);
}

/* Points are numbered row-major: the last axis varies fastest. */
static void test_sweep_point_order_row_major(void **state)
{
    struct scenario *s = load();
    struct sweep sw;
    char msg[256];

    (void)state;
    sweep_init(&sw, path, s, NULL, 0, false);
    assert_int_equal(sweep_add_axis(&sw, "training.micro_batch=1,2", msg, sizeof(msg)), 0);
    assert_int_equal(
        sweep_add_axis(&sw, "training.recompute=none,selective,full", msg, sizeof(msg)), 0);
    assert_int_equal(sw.npoints, 6);
    assert_int_equal(sweep_value_index(&sw, 4, 0), 1);
    assert_int_equal(sweep_value_index(&sw, 4, 1), 1);
    assert_int_equal(sweep_value_index(&sw, 2, 0), 0);
    assert_int_equal(sweep_value_index(&sw, 2, 1), 2);
    sweep_release(&sw);
    cfg_free(s);
}

/* Changing the node count re-derives dp from the GPUs (8 -> 16) although the file gives dp 8. */
static void test_sweep_dp_follows_gpu_count(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "cluster.nodes=1,2", NULL };
    struct sweep sw;
    struct sweep_point *pts = run(&sw, s, varies, false, 0, 1);

    (void)state;
    assert_int_equal(pts[0].status, SP_OK);
    assert_int_equal(pts[1].status, SP_OK);
    assert_int_equal(pts[0].gpus, 8);
    assert_int_equal(pts[1].gpus, 16);
    assert_int_equal(pts[0].dp, 8);
    assert_int_equal(pts[1].dp, 16);
    assert_int_equal(pts[1].global_batch, 64); /* strong scaling: the batch is kept */
    assert_true(pts[1].step_s < pts[0].step_s);
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
}

/* --weak grows the global batch with the GPU count: 64 on 8 GPUs, 128 on 16. */
static void test_sweep_weak_grows_batch(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "cluster.nodes=1,2", NULL };
    struct sweep sw;
    struct sweep_point *pts = run(&sw, s, varies, true, 0, 1);

    (void)state;
    assert_int_equal(pts[0].global_batch, 64);
    assert_int_equal(pts[1].global_batch, 128);
    assert_true(pts[1].weak_eff > 0.5 && pts[1].weak_eff <= 1.0 + 1e-9);
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
}

/* A combination that breaks a rule is a row with the loader's reason; the others still run. */
static void test_sweep_invalid_point_kept(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "parallelism.tp=1,3", NULL };
    struct sweep sw;
    struct sweep_point *pts = run(&sw, s, varies, false, 0, 1);

    (void)state;
    assert_int_equal(pts[1].status, SP_INVALID);
    assert_non_null(strstr(pts[1].reason, "does not divide"));
    assert_int_equal(pts[0].status, SP_OK);
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
}

/* A file reference axis reloads the scenario per point: two workloads, two step times. */
static void test_sweep_reference_axis_reloads(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "workload=tiny-llama,tiny-gpt", NULL };
    struct sweep sw;
    struct sweep_point *pts = run(&sw, s, varies, false, 0, 1);

    (void)state;
    assert_true(sw.axes[0].ref);
    assert_int_equal(pts[0].status, SP_OK);
    assert_int_equal(pts[1].status, SP_OK);
    assert_true(fabs(pts[0].step_s - pts[1].step_s) > 1e-9);
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
}

/* A framework axis reloads the scenario too: each point binds its profile's defaults (torchtitan
 * shards with FSDP, `other` keeps the file's DDP), and an unknown name is that point's error,
 * naming the accepted profiles. */
static void test_sweep_framework_axis_reloads(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "training.framework=other,torchtitan,nonesuch", NULL };
    struct sweep sw;
    struct sweep_point *pts = run(&sw, s, varies, false, 0, 1);

    (void)state;
    assert_true(sw.axes[0].ref);
    assert_true(pts[0].status == SP_OK || pts[0].status == SP_OOM);
    assert_true(pts[1].status == SP_OK || pts[1].status == SP_OOM);
    assert_true(pts[1].peak_bytes < pts[0].peak_bytes); /* FSDP shards the states */
    assert_int_equal(pts[2].status, SP_INVALID);
    assert_non_null(strstr(pts[2].reason, "torchtitan"));
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
}

/* Synthetic points with hand-computed efficiencies (sweep.h definitions). */
static void test_sweep_efficiency_formulas(void **state)
{
    char k0[] = "cluster.nodes", k1[] = "training.micro_batch";
    struct sweep_axis ax[2] = { { .key = k0, .nvalues = 2, .size = true },
                                { .key = k1, .nvalues = 2 } };
    struct sweep sw = { .axes = ax, .naxes = 2, .npoints = 4 };
    struct sweep_point p[4];

    (void)state;
    memset(p, 0, sizeof(p));
    /* group micro_batch=0: 8 GPUs 10 s, 16 GPUs 5.5 s; group 1: 8 GPUs 8 s, 16 GPUs 4 s */
    for (int i = 0; i < 4; i++) {
        p[i].index = i;
        p[i].vidx[0] = i / 2;
        p[i].vidx[1] = i % 2;
        p[i].status = SP_OK;
        p[i].gpus = i / 2 ? 16 : 8;
    }
    p[0].step_s = 10;
    p[1].step_s = 8;
    p[2].step_s = 5.5;
    p[3].step_s = 4;
    sweep_efficiency(&sw, p, 4);
    assert_int_equal(p[0].group, p[2].group);
    assert_int_equal(p[1].group, p[3].group);
    assert_int_not_equal(p[0].group, p[1].group);
    assert_int_equal(p[2].base, 0);
    assert_int_equal(p[3].base, 1);
    assert_true(fabs(p[2].speedup - 10 / 5.5) < 1e-12);
    assert_true(fabs(p[2].strong_eff - 10.0 * 8 / (5.5 * 16)) < 1e-12);
    assert_true(fabs(p[2].weak_eff - 10 / 5.5) < 1e-12);
    assert_true(fabs(p[3].strong_eff - 1.0) < 1e-12);
    assert_true(fabs(p[0].strong_eff - 1.0) < 1e-12);
}

/* The base is the group's smallest *valid* point: an invalid smallest one is skipped. */
static void test_sweep_efficiency_skips_invalid_base(void **state)
{
    char k0[] = "cluster.nodes";
    struct sweep_axis ax = { .key = k0, .nvalues = 3, .size = true };
    struct sweep sw = { .axes = &ax, .naxes = 1, .npoints = 3 };
    struct sweep_point p[3];

    (void)state;
    memset(p, 0, sizeof(p));
    for (int i = 0; i < 3; i++) {
        p[i].index = i;
        p[i].vidx[0] = i;
        p[i].gpus = 8 << i;
        p[i].status = SP_OK;
        p[i].step_s = 40.0 / (1 << i);
    }
    p[0].status = SP_INVALID;
    sweep_efficiency(&sw, p, 3);
    assert_int_equal(p[1].base, 1);
    assert_int_equal(p[2].base, 1);
    assert_true(fabs(p[2].strong_eff - 1.0) < 1e-12);
    assert_true(p[0].speedup <= 0);
}

static char *csv_of(const struct sweep *sw, const struct sweep_point *pts, long n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(sweep_write_csv(sw, pts, n, f), 0);
    fclose(f);
    return text;
}

/* Running twice writes the same bytes (STYLE.md, determinism). */
static void test_sweep_deterministic_csv(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "cluster.nodes=1,2", "training.recompute=none,full", NULL };
    struct sweep a, b;
    struct sweep_point *pa = run(&a, s, varies, false, 0, 1), *pb = run(&b, s, varies, false, 0, 1);
    char *ta = csv_of(&a, pa, a.npoints), *tb = csv_of(&b, pb, b.npoints);

    (void)state;
    assert_string_equal(ta, tb);
    assert_non_null(strstr(ta, "index,cluster.nodes,training.recompute,status,scaling,gpus"));
    free(ta);
    free(tb);
    free(pa);
    free(pb);
    sweep_release(&a);
    sweep_release(&b);
    cfg_free(s);
}

/* Three shards written as CSV and merged give the single run's points and efficiencies. */
static void test_sweep_shards_merge_to_full(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "cluster.nodes=1,2,4", "training.micro_batch=1,2", NULL };
    struct sweep full, part, merged;
    struct sweep_point *pf = run(&full, s, varies, false, 0, 1), *pm;
    char *files[3], msg[256];
    long n;

    (void)state;
    for (int k = 0; k < 3; k++) {
        struct sweep_point *pk = run(&part, s, varies, false, k, 3);
        FILE *f;
        files[k] = malloc(160);
        snprintf(files[k], 160, "%s/part%d.csv", dir, k);
        f = fopen(files[k], "w");
        assert_non_null(f);
        assert_int_equal(sweep_write_csv(&part, pk, part.npoints, f), 0);
        fclose(f);
        free(pk);
        sweep_release(&part);
    }
    assert_int_equal(sweep_merge((const char *const *)files, 3, &merged, &pm, &n, msg, sizeof(msg)),
                     0);
    sweep_efficiency(&merged, pm, n);
    assert_int_equal(n, full.npoints);
    assert_int_equal(merged.naxes, 2);
    assert_true(merged.axes[0].size);
    for (long i = 0; i < n; i++) {
        assert_int_equal(pm[i].index, pf[i].index);
        assert_int_equal(pm[i].status, pf[i].status);
        assert_true(fabs(pm[i].step_s - pf[i].step_s) <= 1e-9 * pf[i].step_s);
        assert_true(fabs(pm[i].strong_eff - pf[i].strong_eff) < 1e-8);
        assert_int_equal(pm[i].base, pf[i].base);
    }
    /* overlapping shards are refused */
    free(files[1]);
    files[1] = files[0];
    free(pm);
    sweep_release(&merged);
    assert_int_equal(sweep_merge((const char *const *)files, 2, &merged, &pm, &n, msg, sizeof(msg)),
                     -1);
    assert_non_null(strstr(msg, "twice"));
    free(pm);
    sweep_release(&merged);
    free(files[0]);
    free(files[2]);
    free(pf);
    sweep_release(&full);
    cfg_free(s);
}

/* The JSON output parses and holds one object per point with its axis values. */
static void test_sweep_json_is_valid(void **state)
{
    struct scenario *s = load();
    const char *varies[] = { "cluster.nodes=1,2", "parallelism.tp=1,3", NULL };
    struct sweep sw;
    struct sweep_point *pts = run(&sw, s, varies, false, 0, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cJSON *root, *points, *p0;

    (void)state;
    assert_int_equal(sweep_write_json(&sw, pts, sw.npoints, f), 0);
    fclose(f);
    root = cJSON_Parse(text);
    assert_non_null(root);
    points = cJSON_GetObjectItem(root, "points");
    assert_int_equal(cJSON_GetArraySize(points), 4);
    p0 = cJSON_GetArrayItem(points, 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(p0, "values"), "cluster.nodes")->valuestring, "1");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(points, 1), "status")->valuestring,
                        "invalid");
    assert_non_null(cJSON_GetObjectItem(p0, "time_to_train_s"));
    assert_non_null(cJSON_GetObjectItem(p0, "cost_usd"));
    cJSON_Delete(root);
    free(text);
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_axis_values_split),
        cmocka_unit_test(test_sweep_axis_rejects_bad_input),
        cmocka_unit_test(test_sweep_point_order_row_major),
        cmocka_unit_test(test_sweep_dp_follows_gpu_count),
        cmocka_unit_test(test_sweep_weak_grows_batch),
        cmocka_unit_test(test_sweep_invalid_point_kept),
        cmocka_unit_test(test_sweep_reference_axis_reloads),
        cmocka_unit_test(test_sweep_framework_axis_reloads),
        cmocka_unit_test(test_sweep_efficiency_formulas),
        cmocka_unit_test(test_sweep_efficiency_skips_invalid_base),
        cmocka_unit_test(test_sweep_deterministic_csv),
        cmocka_unit_test(test_sweep_shards_merge_to_full),
        cmocka_unit_test(test_sweep_json_is_valid),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
