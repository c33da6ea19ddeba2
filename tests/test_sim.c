/*
 * test_sim.c - executing programs (sim.h) and the model-parallel builder
 * behind them: symmetric and all-ranks modes agree, a straggler holds the
 * step back, the breakdown adds up, runs are deterministic, collectives
 * slow the kernels they overlap; tensor, context and expert parallelism emit
 * the communication their sources describe; a layer of the 22B model of
 * KOR22 Table 4 takes the published time.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support.h"

#include "net/collective.h"
#include "config/schema.h"
#include "report/report.h"
#include "run/run.h"
#include "strategy/strategy.h"
#include "model/workload.h"

/* Average of a breakdown bucket over the simulated ranks. */
static double avg_bucket(const struct run *r, int cat)
{
    double sum = 0;
    int i;

    for (i = 0; i < r->sim.nranks; i++)
        sum += (double)r->sim.ranks[i].bucket[cat];
    return sum / r->sim.nranks;
}

/* ---- modes, stragglers, accounting -------------------------------------------------------- */

/*
 * Every shipped scenario of up to 1,024 GPUs gives the same step time, breakdown and memory
 * peak with one rank per stage as with every rank (the 16k-GPU scenario is checked by
 * bench_step, docs/performance.md).
 */
static void test_sim_symmetric_matches_all_ranks(void **state)
{
    DIR *d = opendir("scenarios");
    struct dirent *e;
    int checked = 0;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[512];
        struct scenario *s;
        struct run r1, r2;
        int cat;
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        snprintf(path, sizeof(path), "scenarios/%s", e->d_name);
        s = cfg_load_scenario(path, NULL, 0, stderr);
        assert_non_null(s);
        if (s->gpus > 1024) {
            cfg_free(s);
            continue;
        }
        test_simulate(s, false, &r1);
        test_simulate(s, true, &r2);
        if (r1.sim.step != r2.sim.step)
            fail_msg("%s: symmetric step %lld ns, all ranks %lld ns", path, (long long)r1.sim.step,
                     (long long)r2.sim.step);
        for (cat = 0; cat < TC_COUNT; cat++)
            if (test_rel_err(avg_bucket(&r1, cat) + 1, avg_bucket(&r2, cat) + 1) > 1e-9)
                fail_msg("%s: %s differs: %.0f vs %.0f ns", path, tcat_name(cat),
                         avg_bucket(&r1, cat), avg_bucket(&r2, cat));
        assert_true(fabs(r1.peak_bytes - r2.peak_bytes) < 0.5);
        assert_int_equal(r2.sim.nranks, s->gpus);
        run_release(&r1);
        run_release(&r2);
        cfg_free(s);
        checked++;
    }
    closedir(d);
    assert_true(checked >= 5);
}

#define MOE_3D                                                                                     \
    "hardware: dgx-h100\n"                                                                         \
    "workload: {layers: 8, hidden: 2048, heads: 16, kv_heads: 4, ffn_hidden: 4096, vocab: 8192,\n" \
    "           activation: swiglu, norm: rmsnorm, position: rope,\n"                              \
    "           moe: {experts: 8, topk: 2}}\n"                                                     \
    "cluster: {nodes: 2}\n"                                                                        \
    "training: {seq_len: 4096, global_batch: 16, micro_batch: 1, recompute: selective}\n"          \
    "parallelism: {tp: 2, pp: 2, dp: 4, ep: 2, sequence_parallel: true, sharding: zero1}\n"

/* TP x PP x DP x EP composes, and the two modes agree on it too. */
static void test_sim_moe_3d_modes_agree(void **state)
{
    struct scenario *s = test_load("sim-test.yaml", MOE_3D, NULL);
    struct run r1, r2;

    (void)state;
    test_simulate(s, false, &r1);
    test_simulate(s, true, &r2);
    assert_int_equal(r1.sim.step, r2.sim.step);
    assert_true(avg_bucket(&r1, TC_COMM_EP) > 0);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s);
}

/*
 * One slow GPU (compute x1.5) holds back the whole step: its compute time grows by half, the
 * step grows, and its peers wait for it (their idle time grows).
 */
static void test_sim_straggler_holds_the_step(void **state)
{
    const char *slow[] = { "simulation.straggler_rank=5", "simulation.straggler_slowdown=1.5",
                           NULL };
    struct scenario *s0 = test_load("sim-test.yaml", MOE_3D, NULL),
                    *s1 = test_load("sim-test.yaml", MOE_3D, slow);
    struct run r0, r1;
    const struct rank_result *a, *b, *peer0, *peer1;

    (void)state;
    test_simulate(s0, true, &r0);
    test_simulate(s1, true, &r1);
    a = &r0.sim.ranks[5];
    b = &r1.sim.ranks[5];
    assert_int_equal(b->rank, 5);
    assert_true(test_rel_err((double)b->busy[TC_FWD], 1.5 * (double)a->busy[TC_FWD]) < 0.05);
    assert_true(r1.sim.step > r0.sim.step);
    /* rank 4 is rank 5's TP peer: it waits on the straggler in every TP collective */
    peer0 = &r0.sim.ranks[4];
    peer1 = &r1.sim.ranks[4];
    assert_true(peer1->bucket[TC_COMM_TP] + peer1->bucket[TC_IDLE] >
                peer0->bucket[TC_COMM_TP] + peer0->bucket[TC_IDLE]);
    assert_true(test_rel_err((double)peer1->busy[TC_FWD], (double)peer0->busy[TC_FWD]) < 0.05);
    run_release(&r0);
    run_release(&r1);
    cfg_free(s0);
    cfg_free(s1);
}

/* Each rank's exclusive breakdown sums to the step time; a second run is identical. */
static void test_sim_breakdown_sums_and_deterministic(void **state)
{
    struct scenario *s = cfg_load_scenario("scenarios/70b_256gpu.yaml", NULL, 0, stderr);
    struct run r1, r2;
    int i, cat;

    (void)state;
    assert_non_null(s);
    test_simulate(s, false, &r1);
    test_simulate(s, false, &r2);
    for (i = 0; i < r1.sim.nranks; i++) {
        sim_time sum = 0;
        for (cat = 0; cat < TC_COUNT; cat++)
            sum += r1.sim.ranks[i].bucket[cat];
        assert_int_equal(sum, r1.sim.step);
        assert_int_equal(r1.sim.ranks[i].peak, r2.sim.ranks[i].peak);
    }
    assert_int_equal(r1.sim.step, r2.sim.step);
    assert_int_equal(r1.sim.events, r2.sim.events);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s);
}

/* ---- SM contention ------------------------------------------------------------------------- */

#define TP2                                                                                        \
    "hardware: dgx-h100\n"                                                                         \
    "workload: {layers: 2, hidden: 1024, heads: 8, vocab: 1000}\n"                                 \
    "cluster: {gpus: 2}\n"                                                                         \
    "training: {seq_len: 1024, global_batch: 1}\n"                                                 \
    "parallelism: {tp: 2}\n"

#define TP2_A100                                                                                   \
    "hardware: dgx-a100-80g\n"                                                                     \
    "workload: {layers: 2, hidden: 1024, heads: 8, vocab: 1000}\n"                                 \
    "cluster: {gpus: 2}\n"                                                                         \
    "training: {seq_len: 1024, global_batch: 1}\n"                                                 \
    "parallelism: {tp: 2}\n"

/*
 * A 100 us kernel next to a 256 MiB all-gather on 2 GPUs of `yaml`: its busy time (ns), the
 * share of SMs the gather's NCCL kernel holds (one block per channel) and the gather's time.
 */
static sim_time overlapped_kernel(const char *yaml, double *frac, sim_time *gather)
{
    struct scenario *s = test_load("sim-test.yaml", yaml, NULL);
    struct layout l;
    struct prog *p = prog_new("stage 0"), *progs[1];
    struct sim_opts opts = { 0 };
    struct sim_result res;
    struct comm_group g = { 2, 1, 2, true };
    struct coll_cost cost;
    struct nccl_model m;
    char reason[128];
    sim_time busy;

    layout_init(&l, s);
    prog_coll(p, ST_TP, TC_COMM_TP, COMM_TP, COLL_ALL_GATHER, 256.0 * (1 << 20),
              prog_label(p, "gather", 0), 0);
    prog_compute(p, ST_COMPUTE, TC_FWD, 100000, prog_label(p, "kernel", 0), 0);
    prog_seal(p);
    progs[0] = p;
    assert_int_equal(sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)), 0);
    coll_estimate(&s->hw, &s->nccl, &g, COLL_ALL_GATHER, 256.0 * (1 << 20), &cost);
    nccl_model_init(&s->hw, &g, COLL_ALL_GATHER, 0, &m);
    *frac = (double)m.ring.nchannels / s->hw.gpu.sm_count;
    *gather = coll_time(&cost);
    busy = res.ranks[0].busy[TC_FWD];
    sim_result_release(&res);
    prog_free(p);
    cfg_free(s);
    return busy;
}

/*
 * On an A100 the kernel runs at the SMs the NCCL kernel leaves: it ends at 100 us / (1 -
 * channels / SMs) while the gather lasts. On an H100 its persistent GEMM blocks run in two
 * waves of the free SMs (cost_overlap_rate(), pytorch/pytorch #143988): 200 us.
 */
static void test_sim_collective_slows_overlapped_kernel(void **state)
{
    double frac;
    sim_time gather, busy;

    (void)state;
    busy = overlapped_kernel(TP2_A100, &frac, &gather);
    assert_true(gather > 200000); /* the gather outlasts the kernel */
    assert_true(frac > 0 && frac < 0.5);
    if (test_rel_err((double)busy, 1e5 / (1 - frac)) > 0.01)
        fail_msg("A100: kernel took %lld ns, want %.0f", (long long)busy, 1e5 / (1 - frac));
    busy = overlapped_kernel(TP2, &frac, &gather);
    assert_true(gather > 200000);
    assert_true(frac > 0 && frac < 0.5);
    if (test_rel_err((double)busy, 2e5) > 0.001)
        fail_msg("H100: kernel took %lld ns, want 200000 (two waves)", (long long)busy);
}

/*
 * When the collectives hold every SM (a GPU with no more SMs than the gather's channels), the
 * kernel next to it makes no progress until the gather ends, then runs its 100 us in full:
 * it ends at the gather's time + 100 us (no invented floor on the compute rate).
 */
static void test_sim_kernel_waits_while_collectives_hold_every_sm(void **state)
{
    struct scenario *s = test_load("sim-test.yaml", TP2, NULL);
    struct layout l;
    struct prog *p = prog_new("stage 0"), *progs[1];
    struct sim_opts opts = { 0 };
    struct sim_result res;
    struct comm_group g = { 2, 1, 2, true };
    struct coll_cost cost;
    struct nccl_model m;
    char reason[128];

    (void)state;
    nccl_model_init(&s->hw, &g, COLL_ALL_GATHER, 0, &m);
    s->hw.gpu.sm_count = m.ring.nchannels; /* one block per channel: every SM */
    layout_init(&l, s);
    prog_coll(p, ST_TP, TC_COMM_TP, COMM_TP, COLL_ALL_GATHER, 256.0 * (1 << 20),
              prog_label(p, "gather", 0), 0);
    prog_compute(p, ST_COMPUTE, TC_FWD, 100000, prog_label(p, "kernel", 0), 0);
    prog_seal(p);
    progs[0] = p;
    assert_int_equal(sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)), 0);
    coll_estimate(&s->hw, &s->nccl, &g, COLL_ALL_GATHER, 256.0 * (1 << 20), &cost);
    assert_true(m.ring.nchannels > 0 && cost.algo == ALGO_RING);
    assert_int_equal(res.ranks[0].busy[TC_FWD], coll_time(&cost) + 100000);
    assert_int_equal(res.step, coll_time(&cost) + 100000);
    sim_result_release(&res);
    prog_free(p);
    cfg_free(s);
}

/* A host task of `dur` ns on the host stream (the framework's CPU issuing), after `dep`. */
static int host_task(struct prog *p, sim_time dur, int dep)
{
    int i = prog_host(p, TC_HOST, dur, prog_label(p, "issue", 0), -1);

    if (dep >= 0)
        prog_dep(p, i, dep);
    return i;
}

static int kernel_after(struct prog *p, sim_time dur, int dep)
{
    int k = prog_compute(p, ST_COMPUTE, TC_FWD, dur, prog_label(p, "kernel", 0), 0);

    prog_dep(p, k, dep);
    return k;
}

/*
 * The host stream against a hand-computed timeline. The CPU issues three layers of 100 us each
 * back to back (it waits for nothing); layer 1's kernel (50 us) is CPU-bound: it starts at 100
 * and the GPU waits again from 150 to 200 for layer 2's issue; layer 2 (300 us, 200-500) is
 * GPU-bound, so layer 3, issued by 300, starts at 500 and ends at 550. Then a sync point: the
 * CPU waits for layer 3's kernel (the optimizer's .item()), spends 20 us (550-570) and issues
 * a 10 us kernel: 570-580. Host-bound GPU time: 0-100, 150-200, 550-570 = 170 us; the CPU
 * itself was busy 320 us.
 */
static void test_sim_host_stream_timeline(void **state)
{
    struct scenario *s = test_load("sim-test.yaml", TP2, NULL);
    struct layout l;
    struct prog *p = prog_new("stage 0"), *progs[1];
    struct sim_opts opts = { 0 };
    struct sim_result res;
    char reason[128];
    int h1, h2, h3, k3, h4;

    (void)state;
    layout_init(&l, s);
    h1 = host_task(p, 100000, -1);
    h2 = host_task(p, 100000, -1);
    h3 = host_task(p, 100000, -1);
    kernel_after(p, 50000, h1);
    kernel_after(p, 300000, h2);
    k3 = kernel_after(p, 50000, h3);
    h4 = host_task(p, 20000, k3);
    kernel_after(p, 10000, h4);
    prog_seal(p);
    progs[0] = p;
    assert_int_equal(sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)), 0);
    assert_int_equal(res.step, 580000);
    assert_int_equal(res.ranks[0].bucket[TC_HOST], 170000);
    assert_int_equal(res.ranks[0].busy[TC_HOST], 320000);
    assert_int_equal(res.ranks[0].bucket[TC_FWD], 410000);
    assert_int_equal(res.ranks[0].bucket[TC_IDLE], 0);
    sim_result_release(&res);
    prog_free(p);
    cfg_free(s);
}

/*
 * A skewed rank: with host.jitter each rank's CPU runs at its own drawn speed (log-normal, a
 * function of seed and rank). Both TP ranks issue 100 us, then a TP all-reduce and a 10 us
 * kernel: the collective starts when the slower CPU has issued it, so both ranks end at
 * 100 us x the larger draw + the all-reduce + 10 us; without jitter every draw is 1.
 */
static void test_sim_host_jitter_waits_for_slowest_rank(void **state)
{
    const char *jit[] = { "host.jitter=0.3", "host.seed=7", NULL };
    struct scenario *s = test_load("sim-test.yaml", TP2, jit);
    struct layout l;
    struct prog *p = prog_new("stage 0"), *progs[1];
    struct sim_opts opts = { .all_ranks = true };
    struct sim_result res;
    struct comm_group g = { 2, 1, 2, true };
    struct coll_cost cost;
    char reason[128];
    double slow;
    int h, c;

    (void)state;
    layout_init(&l, s);
    h = host_task(p, 100000, -1);
    c = prog_coll(p, ST_TP, TC_COMM_TP, COMM_TP, COLL_ALL_REDUCE, 1 << 20,
                  prog_label(p, "all-reduce", 0), 0);
    prog_dep(p, c, h);
    kernel_after(p, 10000, c);
    prog_seal(p);
    progs[0] = p;
    assert_int_equal(sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)), 0);
    assert_int_equal(res.nranks, 2);
    assert_true(fabs(res.ranks[0].host_slowdown - res.ranks[1].host_slowdown) > 1e-3);
    assert_true(res.ranks[0].host_slowdown > 0.3 && res.ranks[1].host_slowdown < 3);
    slow = fmax(res.ranks[0].host_slowdown, res.ranks[1].host_slowdown);
    coll_estimate(&s->hw, &s->nccl, &g, COLL_ALL_REDUCE, 1 << 20, &cost);
    if (llabs(res.step - (sim_time)(1e5 * slow + 0.5) - coll_time(&cost) - 10000) > 2)
        fail_msg("step %lld ns, want 100 us x %.4f + %lld + 10 us", (long long)res.step, slow,
                 (long long)coll_time(&cost));
    assert_int_equal(res.ranks[0].end, res.ranks[1].end);
    sim_result_release(&res);
    cfg_free(s);
    s = test_load("sim-test.yaml", TP2, NULL);
    assert_int_equal(sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)), 0);
    assert_true(!(fabs(res.ranks[0].host_slowdown - 1) > 0) &&
                !(fabs(res.ranks[1].host_slowdown - 1) > 0));
    assert_int_equal(res.step, 100000 + coll_time(&cost) + 10000);
    sim_result_release(&res);
    prog_free(p);
    cfg_free(s);
}

/*
 * A step longer than SIM_STEP_LIMIT is refused, not reported: one task just past it, and two
 * whose durations add up past the end of the clock (no wrap: they saturate, then fail too).
 */
static void test_sim_refuses_a_step_past_the_limit(void **state)
{
    static const sim_time durs[][2] = { { SIM_STEP_LIMIT + 1, 0 },
                                        { SIM_TIME_MAX - 10, SIM_TIME_MAX - 10 } };
    struct scenario *s = test_load("sim-test.yaml", TP2, NULL);
    struct layout l;
    size_t k;

    (void)state;
    layout_init(&l, s);
    for (k = 0; k < ARRAY_LEN(durs); k++) {
        struct prog *p = prog_new("stage 0"), *progs[1] = { p };
        struct sim_opts opts = { 0 };
        struct sim_result res;
        char reason[256];
        prog_compute(p, ST_COMPUTE, TC_FWD, durs[k][0], prog_label(p, "long", 0), 0);
        if (durs[k][1] > 0)
            prog_compute(p, ST_COMPUTE, TC_FWD, durs[k][1], prog_label(p, "longer", 0), 0);
        prog_seal(p);
        assert_int_equal(sim_run(s, &l, progs, &opts, &res, reason, sizeof(reason)), -1);
        assert_non_null(strstr(reason, "the step lasts longer than 1000000 s (11.6 days)"));
        assert_true(res.step > SIM_STEP_LIMIT);
        sim_result_release(&res);
        prog_free(p);
    }
    cfg_free(s);
}

/* ---- tensor, context and expert parallelism --------------------------------------------- */

#define DENSE                                                                                      \
    "hardware: dgx-h100\n"                                                                         \
    "workload: {layers: 4, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336,\n"             \
    "           vocab: 32000, activation: swiglu, norm: rmsnorm, position: rope}\n"                \
    "cluster: {nodes: 1}\n"                                                                        \
    "training: {seq_len: 8192, global_batch: 2, micro_batch: 1, recompute: none}\n"                \
    "parallelism: {tp: 4}\n"

/*
 * Per layer and micro-batch, TP issues 2 all-reduces forward and 2 backward (SHO19 §3); with
 * sequence parallelism 2 all-gathers and 2 reduce-scatters forward, and backward 2
 * reduce-scatters and 4 all-gathers, one more per block for the weight gradient (KOR22 §4.2.2).
 * Per micro-batch the embedding all-reduces its vocabulary-parallel lookup (plus, under sequence
 * parallelism, an all-gather of its gradient) and the output layer all-reduces its input
 * gradient (under sequence parallelism: all-gather forward, reduce-scatter backward).
 */
static void test_tp_collective_counts(void **state)
{
    const char *sp[] = { "parallelism.sequence_parallel=true", NULL };
    struct scenario *s1 = test_load("sim-test.yaml", DENSE, NULL),
                    *s2 = test_load("sim-test.yaml", DENSE, sp);
    struct run r1, r2;
    int per = 4 * 1; /* layers x micro-batches per rank (dp = 2) */

    (void)state;
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    assert_int_equal(test_count_colls(r1.progs[0], COMM_TP, COLL_ALL_REDUCE), 4 * per + 2);
    assert_int_equal(test_count_colls(r2.progs[0], COMM_TP, COLL_ALL_REDUCE), 1);
    assert_int_equal(test_count_colls(r2.progs[0], COMM_TP, COLL_ALL_GATHER), 6 * per + 2);
    assert_int_equal(test_count_colls(r2.progs[0], COMM_TP, COLL_REDUCE_SCATTER), 4 * per + 1);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/* Overlapping TP communication with the GEMMs (tp_comm_overlap) hides some of it. */
static void test_tp_comm_overlap_hides_communication(void **state)
{
    const char *sp[] = { "parallelism.sequence_parallel=true", NULL };
    const char *ov[] = { "parallelism.sequence_parallel=true", "parallelism.tp_comm_overlap=true",
                         NULL };
    struct scenario *s1 = test_load("sim-test.yaml", DENSE, sp),
                    *s2 = test_load("sim-test.yaml", DENSE, ov);
    struct run r1, r2;

    (void)state;
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    assert_true(avg_bucket(&r2, TC_COMM_TP) < 0.8 * avg_bucket(&r1, TC_COMM_TP));
    assert_true(r2.sim.step < r1.sim.step);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/*
 * Megatron-LM before async_tensor_model_parallel_allreduce (tp_async_allreduce false): the
 * backward all-reduce of the column-parallel GEMM's input gradient waits for the whole linear
 * backward and blocks the next kernel (megatron/mpu/mappings.py of 2021), so more TP
 * communication is exposed and the step is longer; the collectives are the same ones.
 */
static void test_tp_sync_backward_exposes_more(void **state)
{
    const char *sync[] = { "parallelism.tp_async_allreduce=false", NULL };
    struct scenario *s1 = test_load("sim-test.yaml", DENSE, NULL),
                    *s2 = test_load("sim-test.yaml", DENSE, sync);
    struct run r1, r2;

    (void)state;
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    assert_int_equal(test_count_colls(r1.progs[0], COMM_TP, COLL_ALL_REDUCE),
                     test_count_colls(r2.progs[0], COMM_TP, COLL_ALL_REDUCE));
    assert_true(avg_bucket(&r2, TC_COMM_TP) > 1.05 * avg_bucket(&r1, TC_COMM_TP));
    assert_true(r2.sim.step > r1.sim.step);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/* Step-time increase from turning ddp.grad_accum_fusion off, with global batch `gb`. */
static double unfused_accum_cost(int gb)
{
    char g[64];
    const char *on[] = { g, NULL }, *off[] = { g, "ddp.grad_accum_fusion=false", NULL };
    struct scenario *s1, *s2;
    struct run r1, r2;
    double d;

    snprintf(g, sizeof(g), "training.global_batch=%d", gb);
    s1 = test_load("sim-test.yaml", DENSE, on);
    s2 = test_load("sim-test.yaml", DENSE, off);
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    d = (double)(r2.sim.step - r1.sim.step);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
    return d;
}

/*
 * Without gradient-accumulation fusion, Megatron's DDP hook adds every gradient into main_grad
 * once per micro-batch (megatron/model/distributed.py _make_param_hook): a memory-bound pass
 * of params x (2 + 2 x 4) bytes per micro-batch, so the extra time is positive and doubles
 * with the micro-batches (dp = 1 here: global batch 2 and 4 give 2 and 4 micro-batches).
 */
static void test_megatron_unfused_accumulation_per_microbatch(void **state)
{
    double two = unfused_accum_cost(2), four = unfused_accum_cost(4);

    (void)state;
    assert_true(two > 0);
    assert_true(test_rel_err(four, 2 * two) < 0.05);
}

/*
 * ddp.impl pytorch under Megatron (the NAR21 Table 1 scripts' --DDP-impl torch): PyTorch DDP's
 * 25 MiB buckets all-reduced during backward instead of Megatron's one all-reduce of the
 * whole buffer after it; the same bytes in total.
 */
static void test_ddp_impl_pytorch_buckets(void **state)
{
    const char *meg[] = { "parallelism.dp=2", "parallelism.tp=4", "cluster.gpus=8", NULL };
    const char *pt[] = { "parallelism.dp=2", "parallelism.tp=4", "cluster.gpus=8",
                         "ddp.impl=pytorch", NULL };
    struct scenario *s1 = test_load("sim-test.yaml", DENSE, meg),
                    *s2 = test_load("sim-test.yaml", DENSE, pt);
    struct run r1, r2;

    (void)state;
    assert_true(s2->ddp.overlap);
    assert_false(s1->ddp.overlap);
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    assert_int_equal(test_count_colls(r1.progs[0], COMM_DP, COLL_ALL_REDUCE), 1);
    assert_true(test_count_colls(r2.progs[0], COMM_DP, COLL_ALL_REDUCE) > 4);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/*
 * Context parallelism over cp ranks: cp - 1 ring steps of this rank's K/V chunk per layer
 * forward, cp - 1 of K/V with dK/dV backward plus the final dK/dV return (MEG
 * context_parallel.md); the chunk is b * s/cp * 2 * kv_heads/tp * head_dim * 2 bytes.
 */
static void test_cp_ring_traffic(void **state)
{
    const char *cp[] = { "parallelism.cp=4", "parallelism.tp=2", "parallelism.dp=1", NULL };
    struct scenario *s = test_load("sim-test.yaml", DENSE, cp);
    struct run r;
    const struct prog *p;
    double kv = 1.0 * (8192 / 4) * 2 * (8 / 2) * 128 * 2, bytes = 0;
    int i, fwd = 0, bwd = 0;

    (void)state;
    test_simulate(s, false, &r);
    p = r.progs[0];
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        if (t->kind != TASK_COLL || t->comm != COMM_CP)
            continue;
        assert_int_equal(t->op, COLL_SEND_RECV);
        bytes += t->bytes;
        if (fabs(t->bytes - kv) < 0.5)
            fwd++;
        else if (fabs(t->bytes - 2 * kv) < 0.5)
            bwd++;
        else
            fail_msg("unexpected CP transfer of %.0f bytes (chunk %.0f)", t->bytes, kv);
    }
    /* 4 layers x 2 micro-batches: forward 3 + final 1, backward 3 */
    assert_int_equal(bwd, 4 * 2 * 3);
    assert_int_equal(fwd, 4 * 2 * (3 + 1));
    assert_true(fabs(bytes - (fwd * kv + bwd * 2 * kv)) < 1); /* nothing else on the CP ring */
    assert_true(avg_bucket(&r, TC_COMM_CP) >= 0);
    assert_true(r.sim.ranks[0].comm_bytes[COMM_CP] > 0);
    run_release(&r);
    cfg_free(s);
}

/*
 * Expert parallelism: per MoE layer and micro-batch, a dispatch and a combine all-to-all
 * forward and both again backward, each moving tokens * topk * hidden * 2 bytes per rank.
 */
static void test_ep_all_to_all(void **state)
{
    struct scenario *s = test_load("sim-test.yaml", MOE_3D, NULL);
    struct run r;
    const struct prog *p;
    struct shard sh;
    struct layer_cost lc;
    int i, n = 0, m;

    (void)state;
    test_simulate(s, false, &r);
    p = r.progs[0];
    workload_shard(s, &sh);
    workload_layer(s, &sh, true, &lc);
    assert_true(test_rel_err(lc.moe_a2a_bytes, 4096.0 * 2 * 2048 * 2) < 1e-12);
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        if (t->kind == TASK_COLL && t->comm == COMM_EP) {
            assert_int_equal(t->op, COLL_ALL_TO_ALL);
            assert_true(fabs(t->bytes - lc.moe_a2a_bytes) < 0.5);
            n++;
        }
    }
    m = s->train.global_batch / (s->train.micro_batch * s->par.dp);
    assert_int_equal(n, 4 * m * 4); /* 4 layers per stage */
    run_release(&r);
    cfg_free(s);
}

/* ---- a physical cross-check ------------------------------------------------------------- */

#define K22                                                                                        \
    "hardware: dgx-a100-80g\n"                                                                     \
    "workload: {layers: 4, hidden: 6144, heads: 64, ffn_hidden: 24576, vocab: 51200,\n"            \
    "           max_seq: 2048, activation: gelu, norm: layernorm, position: learned,\n"            \
    "           bias: true, dropout: true, tied_embeddings: true}\n"                               \
    "cluster: {nodes: 1}\n"                                                                        \
    "training: {seq_len: 2048, global_batch: 4, micro_batch: 4, attention: standard}\n"            \
    "parallelism: {tp: 8, framework: megatron}\n"

/*
 * One transformer layer of the 22B model (TP 8, micro-batch 4, A100) forward plus backward, as
 * the step-time difference between 8 and 4 layers divided by 4, against KOR22 Table 4: 19.6 ms
 * without recomputation, 19.0 ms with sequence parallelism, 27.2 ms with full recomputation,
 * 20.3 ms selective + sequence parallel; within 8 %.
 */
static void test_k22_table4_layer_time(void **state)
{
    static const struct {
        const char *rc, *sp;
        double ms;
    } rows[] = {
        { "training.recompute=none", "parallelism.sequence_parallel=false", 19.6 },
        { "training.recompute=none", "parallelism.sequence_parallel=true", 19.0 },
        { "training.recompute=full", "parallelism.sequence_parallel=false", 27.2 },
        { "training.recompute=selective", "parallelism.sequence_parallel=true", 20.3 },
    };
    size_t k;

    (void)state;
    for (k = 0; k < ARRAY_LEN(rows); k++) {
        const char *four[] = { rows[k].rc, rows[k].sp, NULL };
        const char *eight[] = { rows[k].rc, rows[k].sp, "workload.layers=8", NULL };
        struct scenario *s4 = test_load("sim-test.yaml", K22, four),
                        *s8 = test_load("sim-test.yaml", K22, eight);
        struct run r4, r8;
        double ms;
        test_simulate(s4, false, &r4);
        test_simulate(s8, false, &r8);
        ms = (double)(r8.sim.step - r4.sim.step) / 4 / 1e6;
        if (test_rel_err(ms, rows[k].ms) > 0.08)
            fail_msg("%s %s: %.2f ms per layer, KOR22 Table 4 %.1f ms", rows[k].rc, rows[k].sp, ms,
                     rows[k].ms);
        run_release(&r4);
        run_release(&r8);
        cfg_free(s4);
        cfg_free(s8);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_symmetric_matches_all_ranks),
        cmocka_unit_test(test_sim_moe_3d_modes_agree),
        cmocka_unit_test(test_sim_straggler_holds_the_step),
        cmocka_unit_test(test_sim_host_stream_timeline),
        cmocka_unit_test(test_sim_host_jitter_waits_for_slowest_rank),
        cmocka_unit_test(test_sim_breakdown_sums_and_deterministic),
        cmocka_unit_test(test_sim_collective_slows_overlapped_kernel),
        cmocka_unit_test(test_sim_kernel_waits_while_collectives_hold_every_sm),
        cmocka_unit_test(test_sim_refuses_a_step_past_the_limit),
        cmocka_unit_test(test_tp_collective_counts),
        cmocka_unit_test(test_tp_comm_overlap_hides_communication),
        cmocka_unit_test(test_tp_sync_backward_exposes_more),
        cmocka_unit_test(test_megatron_unfused_accumulation_per_microbatch),
        cmocka_unit_test(test_ddp_impl_pytorch_buckets),
        cmocka_unit_test(test_cp_ring_traffic),
        cmocka_unit_test(test_ep_all_to_all),
        cmocka_unit_test(test_k22_table4_layer_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
