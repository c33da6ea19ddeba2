/*
 * test_run.c - one simulated step end to end on shipped scenarios: the JSON and the
 * Perfetto trace are valid and complete, two runs give identical bytes, the time
 * breakdown adds up to the step time and the memory categories add up to the peak.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/schema.h"
#include "report/report.h"
#include "run/run.h"

static const char *const scenarios[] = {
    "scenarios/gpt2_1gpu.yaml",
    "scenarios/ddp_8gpu.yaml",
    "scenarios/ddp_16gpu_2node.yaml",
    "scenarios/70b_256gpu.yaml",
};

/* The outputs go to a fresh directory under /tmp, never into the source tree. */
static char outdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(outdir, sizeof(outdir), "/tmp/simtrain-run-XXXXXX");
    return mkdtemp(outdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(outdir);
}

/* outdir/NAME, in a static buffer per slot (0..3). */
static const char *out_path(int slot, const char *name)
{
    static char buf[4][128];

    snprintf(buf[slot], sizeof(buf[slot]), "%s/%s", outdir, name);
    return buf[slot];
}

static struct scenario *load(const char *path)
{
    struct scenario *s = cfg_load_scenario(path, NULL, 0, stderr);

    assert_non_null(s);
    return s;
}

static char *slurp(const char *path, size_t *len)
{
    char *text = read_file(path, len);

    assert_non_null(text);
    return text;
}

/* The JSON result parses, and its breakdown sums to the step time within rounding. */
static void test_json_valid_and_consistent(void **state)
{
    const char *tmp = out_path(0, "test_run.json");
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(scenarios); i++) {
        struct scenario *s = load(scenarios[i]);
        struct sim_opts opts = { 0 };
        struct run r;
        char reason[256], *text;
        cJSON *root, *res, *bd, *it;
        double sum = 0, step;

        assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
        assert_int_equal(report_json(tmp, &r), 0);
        text = slurp(tmp, NULL);
        root = cJSON_Parse(text);
        assert_non_null(root);
        res = cJSON_GetObjectItem(root, "result");
        assert_non_null(res);
        step = cJSON_GetObjectItem(res, "step_time_s")->valuedouble;
        assert_true(step > 0);
        bd = cJSON_GetObjectItem(res, "breakdown_s");
        cJSON_ArrayForEach(it, bd) sum += it->valuedouble;
        assert_true(sum > step * (1 - 1e-9) && sum < step * (1 + 1e-9));
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "ranks")), r.sim.nranks);
        cJSON_Delete(root);
        free(text);
        run_release(&r);
        cfg_free(s);
    }
    remove(tmp);
}

/* Every simulated rank's exclusive breakdown sums exactly to the step time (integer ns). */
static void test_breakdown_sums_to_step(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(scenarios); i++) {
        struct scenario *s = load(scenarios[i]);
        struct sim_opts opts = { 0 };
        struct run r;
        char reason[256];
        int k, c;

        assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
        for (k = 0; k < r.sim.nranks; k++) {
            sim_time sum = 0;
            for (c = 0; c < TC_COUNT; c++)
                sum += r.sim.ranks[k].bucket[c];
            assert_int_equal(sum, r.sim.step);
        }
        run_release(&r);
        cfg_free(s);
    }
}

/* Memory categories at the peak sum to the peak; everything transient is freed by step end. */
static void test_memory_categories_sum(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(scenarios); i++) {
        struct scenario *s = load(scenarios[i]);
        struct sim_opts opts = { 0 };
        struct run r;
        char reason[256];
        int k, c;

        assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
        for (k = 0; k < r.sim.nranks; k++) {
            const struct rank_result *rr = &r.sim.ranks[k];
            int64_t sum = 0;
            for (c = 0; c < MC_COUNT; c++)
                sum += rr->at_peak[c];
            assert_int_equal(sum, rr->peak);
            assert_int_equal(rr->cur[MC_ACT], 0);
            assert_int_equal(rr->cur[MC_LOGITS], 0);
            assert_true(rr->peak > 0);
        }
        run_release(&r);
        cfg_free(s);
    }
}

/*
 * PyTorch's two high-water marks: the reserved peak (tensors and the caching allocator's
 * reserve, torch.cuda.max_memory_reserved) lies between the allocated peak (tensors,
 * max_memory_allocated) and the whole peak less the CUDA context and NCCL; at the whole peak it
 * is reached when that instant holds the most reserve; without fragmentation all three agree
 * (the reserve is zero), and the trace's memory samples never exceed them.
 */
static void test_reserved_and_allocated_peaks(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(scenarios); i++) {
        struct cfg_override o = { "training.memory_fragmentation", "0",
                                  "training.memory_fragmentation=0" };
        struct scenario *s = load(scenarios[i]);
        struct scenario *z = cfg_load_scenario(scenarios[i], &o, 1, stderr);
        struct sim_opts opts = { .trace = true };
        struct run r, rz;
        char reason[256];

        assert_non_null(z);
        assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
        assert_int_equal(run_scenario(z, &opts, &rz, reason, sizeof(reason)), 0);
        for (int k = 0; k < r.sim.nranks; k++) {
            const struct rank_result *rr = &r.sim.ranks[k], *rzr = &rz.sim.ranks[k];
            int64_t over = rr->at_peak[MC_OVERHEAD];

            assert_true(rr->peak_allocated <= rr->peak_reserved);
            assert_true(rr->peak_reserved <= rr->peak - over);
            assert_true(rr->peak_reserved >= rr->peak - over - rr->at_peak[MC_RESERVE]);
            for (size_t t = 0; t < rr->ntl; t++) {
                int64_t held = 0;
                for (int c = 0; c < MC_COUNT; c++)
                    held += c == MC_OVERHEAD ? 0 : rr->tl[t].cur[c];
                assert_true(held <= rr->peak_reserved);
                assert_true(held - rr->tl[t].cur[MC_RESERVE] <= rr->peak_allocated);
            }
            assert_int_equal(rzr->peak_allocated, rzr->peak_reserved);
            assert_int_equal(rzr->peak_reserved, rzr->peak - rzr->at_peak[MC_OVERHEAD]);
        }
        assert_true(r.peak_reserved_bytes > r.peak_allocated_bytes);
        run_release(&r);
        run_release(&rz);
        cfg_free(s);
        cfg_free(z);
    }
}

/*
 * The trace is Chrome Trace Event JSON: a traceEvents array whose events all have ph and pid;
 * complete events carry ts and dur >= 0; there are counter events for memory.
 */
static void test_trace_is_chrome_trace(void **state)
{
    const char *tmp = out_path(0, "test_run.trace.json");
    struct scenario *s = load("scenarios/ddp_16gpu_2node.yaml");
    struct sim_opts opts = { 0 };
    struct run r;
    char reason[256], *text;
    cJSON *root, *ev, *e;
    int complete = 0, counters = 0, meta = 0;

    (void)state;
    opts.trace = true;
    assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
    assert_int_equal(trace_write(tmp, &r), 0);
    text = slurp(tmp, NULL);
    root = cJSON_Parse(text);
    assert_non_null(root);
    ev = cJSON_GetObjectItem(root, "traceEvents");
    assert_true(cJSON_IsArray(ev));
    cJSON_ArrayForEach(e, ev)
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        assert_non_null(cJSON_GetObjectItem(e, "pid"));
        if (strcmp(ph, "X") == 0) {
            assert_true(cJSON_GetObjectItem(e, "ts")->valuedouble >= 0);
            assert_true(cJSON_GetObjectItem(e, "dur")->valuedouble >= 0);
            assert_non_null(cJSON_GetObjectItem(e, "name"));
            complete++;
        } else if (strcmp(ph, "C") == 0) {
            counters++;
        } else if (strcmp(ph, "M") == 0) {
            meta++;
        }
    }
    assert_true(complete > 100);
    assert_true(counters > 10);
    assert_true(meta > 0);
    cJSON_Delete(root);
    free(text);
    run_release(&r);
    cfg_free(s);
    remove(tmp);
}

/* Two runs of the same scenario write byte-identical JSON and traces. */
static void test_deterministic_bytes(void **state)
{
    const char *files[2][2] = { { out_path(0, "det_a.json"), out_path(1, "det_a.trace") },
                                { out_path(2, "det_b.json"), out_path(3, "det_b.trace") } };
    size_t i, k, la, lb;

    (void)state;
    for (i = 0; i < ARRAY_LEN(scenarios); i++) {
        char *a, *b;
        for (k = 0; k < 2; k++) {
            struct scenario *s = load(scenarios[i]);
            struct sim_opts opts = { 0 };
            struct run r;
            char reason[256];
            opts.trace = i < 3; /* the flagship trace is large; its JSON suffices */
            assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
            assert_int_equal(report_json(files[k][0], &r), 0);
            if (opts.trace)
                assert_int_equal(trace_write(files[k][1], &r), 0);
            run_release(&r);
            cfg_free(s);
        }
        a = slurp(files[0][0], &la);
        b = slurp(files[1][0], &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
        if (i < 3) {
            a = slurp(files[0][1], &la);
            b = slurp(files[1][1], &lb);
            assert_int_equal(la, lb);
            assert_memory_equal(a, b, la);
            free(a);
            free(b);
        }
    }
    for (k = 0; k < 2; k++) {
        remove(files[k][0]);
        remove(files[k][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_valid_and_consistent),
        cmocka_unit_test(test_breakdown_sums_to_step),
        cmocka_unit_test(test_memory_categories_sum),
        cmocka_unit_test(test_reserved_and_allocated_peaks),
        cmocka_unit_test(test_trace_is_chrome_trace),
        cmocka_unit_test(test_deterministic_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
