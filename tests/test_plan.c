/* test_plan.c - the closed-form estimate against the engine, the layout search and
 * time-to-train (plan.h, estimate.h). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp(), setenv() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "whatif/estimate.h"
#include "whatif/plan.h"
#include "run/run.h"
#include "support.h"

/* tiny-llama (8 layers, 8 heads, 4 KV heads) on one 8-GPU tiny-box node (test fixtures). */
static const char scenario_text[] = "name: plan_test\n"
                                    "hardware: tiny-box\n"
                                    "workload: tiny-llama\n"
                                    "cluster:\n"
                                    "  nodes: 1\n"
                                    "training:\n"
                                    "  seq_len: 1024\n"
                                    "  global_batch: 64\n"
                                    "  tokens: 10G\n"
                                    "  price_per_gpu_hour: 2\n";

static char dir[64], path[128];

static int setup(void **state)
{
    FILE *f;

    (void)state;
    setenv("SIMTRAIN_DATA", SIMTRAIN_SOURCE_DIR "/tests/fixtures", 1);
    snprintf(dir, sizeof(dir), "/tmp/simtrain-plan-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/plan.yaml", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(scenario_text, f);
    return fclose(f);
}

static int teardown(void **state)
{
    (void)state;
    remove(path);
    return rmdir(dir);
}

/* The test scenario with at most one override "key=value" (NULL for none). */
static struct scenario *load(const char *set)
{
    const char *sets[] = { set, NULL };

    return test_load(path, NULL, sets);
}

static double rel(double est, double ref)
{
    return fabs(est / ref - 1);
}

/*
 * Check the fast path against the slow reference (STYLE.md, tests): on typical layouts of
 * every schedule and recompute mode with DDP and the distributed optimizer, the closed-form
 * step time is within 30 % of the engine's and the peak memory within 20 %; the median step
 * error is under 10 %. (Measured when written: step median ~3 %, memory median ~2 %.)
 */
static void test_estimate_tracks_engine(void **state)
{
    static const struct {
        int dp, tp, pp, vpp, sched, sh, mb, rc;
        bool sp;
    } lay[] = {
        { 8, 1, 1, 1, SCHED_1F1B, SHARD_NONE, 1, RC_NONE, false },
        { 8, 1, 1, 1, SCHED_1F1B, SHARD_ZERO1, 4, RC_FULL, false },
        { 4, 2, 1, 1, SCHED_1F1B, SHARD_NONE, 2, RC_NONE, true },
        { 2, 4, 1, 1, SCHED_1F1B, SHARD_ZERO1, 1, RC_SELECTIVE, false },
        { 4, 1, 2, 1, SCHED_1F1B, SHARD_NONE, 2, RC_NONE, false },
        { 4, 1, 2, 1, SCHED_GPIPE, SHARD_NONE, 2, RC_NONE, false },
        { 4, 1, 2, 1, SCHED_ZB_H1, SHARD_ZERO1, 1, RC_NONE, false },
        { 2, 1, 4, 2, SCHED_INTERLEAVED, SHARD_NONE, 1, RC_FULL, false },
        { 1, 2, 4, 1, SCHED_1F1B, SHARD_ZERO1, 4, RC_NONE, true },
        { 2, 2, 2, 2, SCHED_INTERLEAVED, SHARD_NONE, 2, RC_NONE, true },
        { 1, 4, 2, 1, SCHED_1F1B, SHARD_NONE, 8, RC_FULL, false },
        { 1, 1, 8, 1, SCHED_1F1B, SHARD_NONE, 1, RC_NONE, false },
    };
    struct scenario *base = load(NULL);
    struct estimator *e = estimator_new();
    double step_err[ARRAY_LEN(lay)];
    int n = 0;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(lay); i++) {
        struct plan_cand c = { .gpus = 8,
                               .nodes = 1,
                               .dp = lay[i].dp,
                               .tp = lay[i].tp,
                               .pp = lay[i].pp,
                               .vpp = lay[i].vpp,
                               .cp = 1,
                               .ep = 1,
                               .sp = lay[i].sp,
                               .schedule = lay[i].sched,
                               .sharding = lay[i].sh,
                               .micro_batch = lay[i].mb,
                               .recompute = lay[i].rc };
        struct scenario s;
        struct cfg_error err;
        struct sim_opts opts = { 0 };
        struct estimate est;
        struct run r;
        char reason[256];

        plan_apply(base, &c, &s);
        assert_int_equal(scenario_finalize(&s, &err), 0);
        estimate_scenario(e, &s, &est);
        if (run_scenario(&s, &opts, &r, reason, sizeof(reason)) != 0)
            continue; /* a strategy not modelled by the engine has nothing to compare with */
        if (rel(est.step_s, r.step_s) >= 0.30 || rel(est.peak_bytes, r.peak_bytes) >= 0.20)
            fprintf(stderr, "layout %zu: step %.4g vs %.4g s, peak %.4g vs %.4g GiB\n", i,
                    est.step_s, r.step_s, est.peak_bytes / 1073741824.0,
                    r.peak_bytes / 1073741824.0);
        assert_true(rel(est.step_s, r.step_s) < 0.30);
        assert_true(rel(est.peak_bytes, r.peak_bytes) < 0.20);
        step_err[n++] = rel(est.step_s, r.step_s);
        run_release(&r);
    }
    assert_true(n >= 8);
    for (int i = 1; i < n; i++) /* insertion sort for the median */
        for (int j = i; j > 0 && step_err[j - 1] > step_err[j]; j--) {
            double t = step_err[j];
            step_err[j] = step_err[j - 1];
            step_err[j - 1] = t;
        }
    assert_true(step_err[n / 2] < 0.10);
    estimator_free(e);
    cfg_free(base);
}

/* The shipped scenarios (the .yaml files of scenarios/), sorted by name, into names[0 .. max);
 * returns the count. */
static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

static int shipped_scenarios(char names[][128], int max)
{
    DIR *d = opendir("scenarios");
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        assert_true(n < max && len < 128);
        memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), by_name);
    return n;
}

/* Median of v[0 .. n) (sorts v). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The estimate departs from the engine where it approximates the strategies' rules
 * (strategy/rules.h; each approximation is named in estimate_time.c and estimate_memory.c):
 * DDP's buckets and ddp.overlap stand for ZeRO-1/2's, gradients travel at grad_dtype, FSDP's
 * unsharded gradients and the order of events are not modelled. On every shipped scenario
 * the estimated step time is within 12 % of the engine's and the peak memory within 25 %;
 * the median errors are under 2 %. (Measured when written, estimate / engine - 1: step
 * -8.6 % (mixtral_8x7b_64gpu) to +5.7 % (qlora_7b_4090), median 0.6 %; peak -22.3 %
 * (70b_256gpu_fsdp: FSDP's unsharded gradients) to +4.1 %, median 0.3 %.)
 */
static void test_estimate_every_shipped_scenario(void **state)
{
    char names[64][128];
    double step_err[64], peak_err[64];
    int n = shipped_scenarios(names, 64);

    (void)state;
    assert_true(n >= 10);
    for (int i = 0; i < n; i++) {
        char file[160];
        struct scenario *s;
        struct estimator *e = estimator_new();
        struct estimate est;
        struct run r;

        snprintf(file, sizeof(file), "scenarios/%.128s", names[i]);
        s = test_load(file, NULL, NULL);
        estimate_scenario(e, s, &est);
        test_simulate(s, false, &r);
        step_err[i] = rel(est.step_s, r.step_s);
        peak_err[i] = rel(est.peak_bytes, r.peak_bytes);
        if (step_err[i] >= 0.12 || peak_err[i] >= 0.25)
            fail_msg("%s: step %.4g s (engine %.4g s), peak %.4g GiB (engine %.4g GiB)", names[i],
                     est.step_s, r.step_s, est.peak_bytes / 1073741824.0,
                     r.peak_bytes / 1073741824.0);
        run_release(&r);
        cfg_free(s);
        estimator_free(e);
    }
    assert_true(median(step_err, n) < 0.02);
    assert_true(median(peak_err, n) < 0.02);
}

/* Estimate and engine step times of the test scenario with overrides (NULL-terminated). */
static void est_and_run(const char *const *sets, double *est_s, double *run_s)
{
    struct scenario *s = test_load(path, NULL, sets);
    struct estimator *e = estimator_new();
    struct estimate est;
    struct run r;

    estimate_scenario(e, s, &est);
    test_simulate(s, false, &r);
    *est_s = est.step_s;
    *run_s = r.step_s;
    run_release(&r);
    estimator_free(e);
    cfg_free(s);
}

/*
 * The estimate knows the gradient-accumulation pass the engine schedules (ddp.c): turning
 * Megatron's fusion off, or running PyTorch's DDP, adds time to both, and the estimate's
 * increase is within 30 % of the engine's.
 */
static void test_estimate_grad_accum_pass(void **state)
{
    static const char *const fused[] = { "parallelism.framework=megatron", "parallelism.dp=8",
                                         "ddp.grad_accum_fusion=true", NULL };
    static const char *const unfused[] = { "parallelism.framework=megatron", "parallelism.dp=8",
                                           "ddp.grad_accum_fusion=false", NULL };
    static const char *const torch[] = { "parallelism.framework=megatron", "parallelism.dp=8",
                                         "ddp.impl=pytorch", NULL };
    double e0, r0, e1, r1, e2, r2;

    (void)state;
    est_and_run(fused, &e0, &r0);
    est_and_run(unfused, &e1, &r1);
    est_and_run(torch, &e2, &r2);
    assert_true(r1 > r0 && e1 > e0);
    assert_true(fabs((e1 - e0) / (r1 - r0) - 1) < 0.30);
    assert_true(r2 > r0 && e2 > e0);
    assert_true(fabs((e2 - e0) / (r2 - r0) - 1) < 0.30);
}

/*
 * DeepSpeed's 2021 ZeRO-3 (zero.stage3_gather per_param_sync) serializes its per-tensor
 * gathers and copies with the compute: the estimate knows it, staying within 30 % of the
 * engine and well above the coalesced estimate, as the engine is.
 */
static void test_estimate_zero3_per_param_sync(void **state)
{
    static const char *const now[] = { "parallelism.sharding=zero3", "parallelism.dp=8", NULL };
    static const char *const old[] = { "parallelism.sharding=zero3", "parallelism.dp=8",
                                       "zero.stage3_gather=per_param_sync", NULL };
    double e0, r0, e1, r1;

    (void)state;
    est_and_run(now, &e0, &r0);
    est_and_run(old, &e1, &r1);
    if (rel(e1, r1) >= 0.30)
        fprintf(stderr, "per_param_sync: estimate %.4g s, engine %.4g s\n", e1, r1);
    assert_true(rel(e1, r1) < 0.30);
    assert_true(r1 > 1.2 * r0);
    assert_true(e1 > 1.2 * e0);
}

/*
 * Estimate layout `c` with an estimator first warmed by layout `warmup` and with a fresh one:
 * the memo tables must change nothing, byte for byte. Returns the warm-up's estimate in *x and
 * the layout's in *a.
 */
static void assert_memo_neutral(const struct plan_cand *c, const struct plan_cand *warmup,
                                struct estimate *x, struct estimate *a)
{
    struct scenario *base = load(NULL);
    struct estimator *warm = estimator_new(), *fresh = estimator_new();
    struct estimate b;
    struct scenario s, t;
    struct cfg_error err;

    plan_apply(base, c, &s);
    assert_int_equal(scenario_finalize(&s, &err), 0);
    plan_apply(base, warmup, &t);
    assert_int_equal(scenario_finalize(&t, &err), 0);
    estimate_scenario(warm, &t, x);
    estimate_scenario(warm, &s, a);
    estimate_scenario(fresh, &s, &b);
    assert_memory_equal(a, &b, sizeof(b));
    estimator_free(warm);
    estimator_free(fresh);
    cfg_free(base);
}

/* The memo tables change nothing: a warm estimator gives the bytes a fresh one gives. */
static void test_estimate_memo_consistent(void **state)
{
    struct plan_cand c = { .gpus = 8,
                           .nodes = 1,
                           .dp = 2,
                           .tp = 2,
                           .pp = 2,
                           .vpp = 1,
                           .cp = 1,
                           .ep = 1,
                           .schedule = SCHED_1F1B,
                           .micro_batch = 2 };
    struct plan_cand w = c;
    struct estimate x, a;

    (void)state;
    w.tp = 4; /* warm the tables with another layout first */
    w.dp = 1;
    assert_memo_neutral(&c, &w, &x, &a);
    assert_true(x.step_s > 0 && fabs(x.step_s - a.step_s) > 0);
}

/*
 * Under framework `auto` the layout decides between eager PyTorch modules and Megatron's fused
 * kernels (the model code, scenario_model_code()), which save different activations: a table
 * warmed with a pipelined (Megatron) layout must not serve a single-replica (eager) one.
 */
static void test_estimate_memo_eager(void **state)
{
    struct plan_cand c = { .gpus = 8,
                           .nodes = 1,
                           .dp = 8,
                           .tp = 1,
                           .pp = 1,
                           .vpp = 1,
                           .cp = 1,
                           .ep = 1,
                           .schedule = SCHED_1F1B,
                           .micro_batch = 1 };
    struct plan_cand w = c;
    struct estimate x, a;

    (void)state;
    w.pp = 2; /* Megatron under `auto` */
    w.dp = 4;
    assert_memo_neutral(&c, &w, &x, &a);
}

/* The search returns `top` layouts that fit by simulation, best simulated step first. */
static void test_plan_top_fit_and_sorted(void **state)
{
    struct scenario *s = load(NULL);
    struct plan_opts o = { .top = 3, .shard_n = 1 };
    struct plan_result r;
    char msg[256];

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    assert_int_equal(r.nfinal, 3);
    for (int i = 0; i < r.nfinal; i++) {
        assert_true(r.final[i].simulated);
        assert_int_equal(r.final[i].sim_status, -1);
        assert_true(r.final[i].sim_peak_bytes <= r.capacity_bytes);
        assert_true(r.final[i].sim_step_s > 0);
        if (i > 0)
            assert_true(r.final[i - 1].sim_step_s <= r.final[i].sim_step_s);
    }
    assert_true(r.final[0].tt.have_tokens && r.final[0].tt.have_price);
    plan_result_release(&r);
    cfg_free(s);
}

/* Every candidate is accounted for: rejected by one reason before simulation, or fits. */
static void test_plan_counts_add_up(void **state)
{
    struct scenario *s = load(NULL);
    struct plan_opts o = { .top = 2, .shard_n = 1 };
    struct plan_result r;
    char msg[256];
    long pre = 0;

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    for (int k = 0; k < PR_COUNT; k++)
        if (k != PR_OOM_SIMULATED && k != PR_SIM_FAILED)
            pre += r.rejected[k];
    /* the engine may decline some that the builder probe accepted (counted again there) */
    assert_true(pre + r.nfit >= r.evaluated && pre + r.nfit <= r.evaluated + r.nsimulated);
    assert_int_equal(r.layouts, r.enumerated); /* each layout with its knob settings */
    assert_true(r.evaluated >= r.layouts);
    assert_true(r.rejected[PR_DIVISIBILITY] > 0); /* e.g. tp 8 does not divide kv_heads 4 */
    assert_true(r.example[PR_DIVISIBILITY][0] != '\0');
    plan_result_release(&r);
    cfg_free(s);
}

static int has_number(const struct plan_result *r, long number)
{
    for (long i = 0; i < r->nfit; i++)
        if (r->fit[i].number == number)
            return 1;
    return 0;
}

/* Shards K/N split the candidates: disjoint, and together the whole search. */
static void test_plan_shards_partition(void **state)
{
    struct scenario *s = load(NULL);
    struct plan_opts o = { .top = 1, .shard_n = 1 }, o0 = o, o1 = o;
    struct plan_result all, r0, r1;
    char msg[256];

    (void)state;
    o0.shard_n = o1.shard_n = 2;
    o1.shard_k = 1;
    assert_int_equal(plan_search(s, &o, &all, NULL, msg, sizeof(msg)), 0);
    assert_int_equal(plan_search(s, &o0, &r0, NULL, msg, sizeof(msg)), 0);
    assert_int_equal(plan_search(s, &o1, &r1, NULL, msg, sizeof(msg)), 0);
    assert_int_equal(r0.evaluated + r1.evaluated, all.evaluated);
    assert_int_equal(r0.nfit + r1.nfit, all.nfit);
    for (long i = 0; i < all.nfit; i++)
        assert_int_equal(has_number(&r0, all.fit[i].number) + has_number(&r1, all.fit[i].number),
                         1);
    plan_result_release(&all);
    plan_result_release(&r0);
    plan_result_release(&r1);
    cfg_free(s);
}

/* On a 1 GiB GPU nothing fits, and the report says so with figures. */
static void test_plan_rejects_oom_with_reason(void **state)
{
    struct scenario *s = load("hardware.gpu.memory=1 GiB");
    struct plan_opts o = { .top = 3, .shard_n = 1 };
    struct plan_result r;
    char msg[256];

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    assert_int_equal(r.nfinal, 0);
    assert_int_equal(r.nfit, 0);
    assert_true(r.rejected[PR_OOM_ESTIMATE] > 0);
    assert_non_null(strstr(r.example[PR_OOM_ESTIMATE], "GiB"));
    plan_result_release(&r);
    cfg_free(s);
}

/* A GPU count that whole nodes cannot form is a usage error with a message. */
static void test_plan_gpu_count_error(void **state)
{
    struct scenario *s = load(NULL);
    struct plan_opts o = { .top = 1, .shard_n = 1, .gpus = { 12 }, .ngpus = 1 };
    struct plan_result r;
    char msg[256] = "";

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "12 GPUs"));
    plan_result_release(&r);
    cfg_free(s);
}

/* Ranking by cost over two GPU counts orders by GPU-seconds per step. */
static void test_plan_cost_ranking(void **state)
{
    struct scenario *s = load("cluster.nodes=2");
    struct plan_opts o = {
        .top = 4, .shard_n = 1, .gpus = { 8, 16 }, .ngpus = 2, .objective = PLAN_BY_COST
    };
    struct plan_result r;
    char msg[256];

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    assert_true(r.nfinal >= 2);
    for (int i = 1; i < r.nfinal; i++)
        assert_true(r.final[i - 1].sim_step_s * r.final[i - 1].gpus <=
                    r.final[i].sim_step_s * r.final[i].gpus);
    plan_result_release(&r);
    cfg_free(s);
}

/* The one-line description names every knob that differs from the plain default. */
static void test_plan_describe(void **state)
{
    struct plan_cand c = { .dp = 2,
                           .tp = 2,
                           .pp = 2,
                           .vpp = 2,
                           .cp = 1,
                           .ep = 1,
                           .sp = true,
                           .schedule = SCHED_INTERLEAVED,
                           .sharding = SHARD_ZERO1,
                           .micro_batch = 4,
                           .recompute = RC_SELECTIVE };
    char buf[160];

    (void)state;
    plan_describe(&c, buf, sizeof(buf));
    assert_string_equal(buf, "dp 2 tp 2 pp 2 vpp 2 sp interleaved zero1 mb 4 selective");
}

/*
 * A candidate gets the defaults that follow its layout, as a scenario written with that layout
 * would: from a DDP base, a ZeRO-3 candidate overlaps its reductions (DeepSpeed's stage-3
 * overlap_comm default) and, with the framework left to auto, a tp 2 candidate reduces after
 * backward (Megatron's DDP, which auto selects under model parallelism); an overlap_comm the
 * user gave is kept.
 */
static void test_plan_apply_rederives_defaults(void **state)
{
    static const char yaml[] = "name: plan_apply\n"
                               "hardware: dgx-h100\n"
                               "workload: llama2-7b\n"
                               "cluster: {nodes: 1, gpus: 8}\n"
                               "training: {seq_len: 2048, global_batch: 8}\n"
                               "parallelism: {dp: 8}\n";
    const char *off[] = { "zero.overlap_comm=false", NULL };
    struct scenario *base = test_load("plan_apply.yaml", yaml, NULL);
    struct scenario *given = test_load("plan_apply.yaml", yaml, off);
    struct plan_cand z3 = { .gpus = 8,
                            .nodes = 1,
                            .dp = 8,
                            .tp = 1,
                            .pp = 1,
                            .vpp = 1,
                            .cp = 1,
                            .ep = 1,
                            .sharding = SHARD_ZERO3,
                            .micro_batch = 1 };
    struct plan_cand tp2 = z3;
    struct scenario s;

    (void)state;
    tp2.dp = 4;
    tp2.tp = 2;
    tp2.sharding = SHARD_NONE;
    assert_false(base->zero.overlap_comm);
    assert_true(base->ddp.overlap);
    plan_apply(base, &z3, &s);
    assert_true(s.zero.overlap_comm);
    plan_apply(given, &z3, &s);
    assert_false(s.zero.overlap_comm);
    plan_apply(base, &tp2, &s);
    assert_false(s.ddp.overlap);
    cfg_free(base);
    cfg_free(given);
}

/*
 * Time to train by hand: 2e12 tokens at 1024 x 4096 tokens per step are 476,837.16 steps;
 * at 18 s per step 8,583,068.8 s; on 256 GPUs 610,351.6 GPU-hours, $1,525,878.9 at $2.5;
 * at 700 W per GPU 1.538e12 J.
 */
static void test_train_totals_by_hand(void **state)
{
    struct scenario s;
    struct train_totals t;

    (void)state;
    memset(&s, 0, sizeof(s));
    s.gpus = 256;
    s.train.global_batch = 1024;
    s.train.seq_len = 4096;
    s.train.tokens = 2e12;
    s.train.price_gpu_hour = 2.5;
    s.hw.gpu.power_W = 700;
    train_totals(&s, 18.0, &t);
    assert_true(t.have_tokens && t.have_price && t.have_power);
    assert_true(fabs(t.steps - 476837.158203125) < 1e-6);
    assert_true(fabs(t.seconds - 8583068.84765625) < 1e-3);
    assert_true(fabs(t.gpu_hours - 610351.5625) < 1e-3);
    assert_true(fabs(t.cost_usd - 1525878.90625) < 1e-2);
    assert_true(fabs(t.energy_J - 700.0 * 256 * 8583068.84765625) < 1);
    s.train.tokens = 0;
    train_totals(&s, 18.0, &t);
    assert_false(t.have_tokens);
    assert_true(t.have_price); /* the price of one step stays known */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_tracks_engine),
        cmocka_unit_test(test_estimate_every_shipped_scenario),
        cmocka_unit_test(test_plan_apply_rederives_defaults),
        cmocka_unit_test(test_estimate_grad_accum_pass),
        cmocka_unit_test(test_estimate_zero3_per_param_sync),
        cmocka_unit_test(test_estimate_memo_consistent),
        cmocka_unit_test(test_estimate_memo_eager),
        cmocka_unit_test(test_plan_top_fit_and_sorted),
        cmocka_unit_test(test_plan_counts_add_up),
        cmocka_unit_test(test_plan_shards_partition),
        cmocka_unit_test(test_plan_rejects_oom_with_reason),
        cmocka_unit_test(test_plan_gpu_count_error),
        cmocka_unit_test(test_plan_cost_ranking),
        cmocka_unit_test(test_plan_describe),
        cmocka_unit_test(test_train_totals_by_hand),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
