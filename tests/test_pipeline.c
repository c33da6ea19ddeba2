/*
 * test_pipeline.c - pipeline parallelism end to end: the layer split over
 * stages, and the bubble and in-flight activation memory that emerge from
 * simulated schedules, against the closed forms of NAR21 §2.2 and KOR22
 * §4.2.3 (formulas.md §4).
 *
 * The test model is compute-bound with a tiny vocabulary (embedding and head
 * negligible) and its stages sit inside one NVLink node, so transfers are a
 * small fraction of a step: the simulated bubble should match the closed
 * forms, which ignore communication, within a few percent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support.h"

#include "config/schema.h"
#include "run/run.h"
#include "strategy/rules.h"
#include "strategy/strategy.h"
#include "model/workload.h"

#define BASE                                                                                       \
    "hardware: dgx-h100\n"                                                                         \
    "workload: {layers: 16, hidden: 4096, heads: 32, vocab: 256, max_seq: 2048,\n"                 \
    "           activation: gelu, norm: layernorm, position: rope, bias: false, dropout: false}\n" \
    "cluster: {gpus: 4}\n"                                                                         \
    "training: {seq_len: 2048, micro_batch: 1, recompute: none, attention: flash}\n"               \
    "parallelism: {pp: 4, tp: 1, dp: 1, order: pp-tp-cp-ep-dp}\n"

/* Idle time of stage `st` over its compute time (the bubble relative to ideal time). */
static double bubble(const struct run *r, int st)
{
    const struct rank_result *rr = &r->sim.ranks[st];
    double compute = (double)(rr->bucket[TC_FWD] + rr->bucket[TC_BWD] + rr->bucket[TC_RECOMPUTE]);

    assert_int_equal(rr->coords[DIM_PP], st);
    return (double)rr->bucket[TC_IDLE] / compute;
}

/* ---- the layer split ---------------------------------------------------------------------- */

/* 126 layers on 16 stages x 8 chunks with 7 + 7 on the end stages: Llama 3 405B's split. */
static void test_partition_llama3_405b(void **state)
{
    int out[128], st, c, sum = 0;
    char reason[128];

    (void)state;
    assert_int_equal(pp_partition(126, 16, 8, 7, 7, out, reason, sizeof(reason)), 0);
    for (st = 0; st < 16; st++)
        for (c = 0; c < 8; c++) {
            int want = (st == 0 && c == 0) || (st == 15 && c == 7) ? 0 : 1;
            assert_int_equal(out[c * 16 + st], want);
            sum += out[c * 16 + st];
        }
    assert_int_equal(sum, 126);
}

/* Uneven chunks inside a stage: the embedding's chunk (stage 0) gets the shortfall first. */
static void test_partition_chunks_and_errors(void **state)
{
    int out[16];
    char reason[128];

    (void)state;
    assert_int_equal(pp_partition(20, 2, 3, 0, 0, out, reason, sizeof(reason)), 0);
    /* stage 0: 3, 3, 4 over its chunks; stage 1: 4, 3, 3 (out[c * pp + stage]) */
    assert_int_equal(out[0], 3);
    assert_int_equal(out[2], 3);
    assert_int_equal(out[4], 4);
    assert_int_equal(out[1], 4);
    assert_int_equal(out[3], 3);
    assert_int_equal(out[5], 3);
    /* first and last given: the middle stages share the rest */
    assert_int_equal(pp_partition(30, 4, 1, 6, 6, out, reason, sizeof(reason)), 0);
    assert_int_equal(out[1], 9);
    assert_int_equal(out[2], 9);
    assert_int_equal(pp_partition(10, 4, 1, 0, 0, out, reason, sizeof(reason)), -1);
    assert_non_null(strstr(reason, "do not split evenly"));
    assert_int_equal(pp_partition(10, 2, 1, 6, 6, out, reason, sizeof(reason)), -1);
}

/* pp_layers() of a scenario with `layers` on pp x v under rule r; -1 when it is refused. */
static int split(int layers, int pp, int v, enum pp_split_rule r, int *out)
{
    struct scenario s;
    char reason[200];

    memset(&s, 0, sizeof(s));
    s.model.layers = layers;
    s.par.pp = pp;
    s.par.vpp = v;
    s.par.pp_split = r;
    return pp_layers(&s, out, reason, sizeof(reason));
}

/* Virtual stages of out (pp x v, index c * pp + stage) in pipeline order equal want[]. */
static void expect_split(const int *out, int pp, int v, const int *want)
{
    for (int c = 0; c < v; c++)
        for (int st = 0; st < pp; st++)
            assert_int_equal(out[c * pp + st], want[c * pp + st]);
}

/*
 * Each framework's rule: Llama 3.1 405B's 126 layers on pp 8 x vpp 2 are 7, 8 x 14, 7 by
 * Megatron's account_for_embedding/loss (core_v0.12.0), torchtitan 2024-12's split points
 * and torchtitan v0.1's weighted split alike (its virtual stage 0 is chunk 0 of stage 0,
 * stage 15 chunk 1 of stage 7), and so on pp 16; an even split refuses them. 80 layers on pp 8:
 * even 10 x 8, weighted 10, 11, 10 x 5, 9 (torchtitan/distributed/pipeline.py, the
 * embedding and the output a layer each, extras to the first stages), Megatron's accounting
 * refuses (82 is no multiple of 8); 32 layers on pp 4 weighted: 8, 9, 8, 7; torchtitan 2024-12
 * on 11 layers over 4 stages: 2, 3, 3, 3.
 */
static void test_partition_framework_rules(void **state)
{
    int out[64], want[64];
    static const enum pp_split_rule uneven[] = { SPLIT_AUTO, SPLIT_MEGATRON, SPLIT_TORCHTITAN,
                                                 SPLIT_TORCHTITAN_W };

    (void)state;
    for (int i = 0; i < 16; i++)
        want[i] = i == 0 || i == 15 ? 7 : 8;
    for (size_t r = 0; r < ARRAY_LEN(uneven); r++) {
        assert_int_equal(split(126, 8, 2, uneven[r], out), 0);
        expect_split(out, 8, 2, want);
        assert_int_equal(split(126, 16, 1, uneven[r], out), 0);
        expect_split(out, 16, 1, want);
    }
    assert_int_equal(split(126, 8, 2, SPLIT_EVEN, out), -1);
    assert_int_equal(split(80, 8, 1, SPLIT_EVEN, out), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], 10);
    assert_int_equal(split(80, 8, 1, SPLIT_TORCHTITAN, out), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], 10);
    assert_int_equal(split(80, 8, 1, SPLIT_TORCHTITAN_W, out), 0);
    expect_split(out, 8, 1, (const int[]){ 10, 11, 10, 10, 10, 10, 10, 9 });
    assert_int_equal(split(80, 8, 1, SPLIT_MEGATRON, out), -1);
    assert_int_equal(split(32, 4, 1, SPLIT_TORCHTITAN_W, out), 0);
    expect_split(out, 4, 1, (const int[]){ 8, 9, 8, 7 });
    assert_int_equal(split(11, 4, 1, SPLIT_TORCHTITAN, out), 0);
    expect_split(out, 4, 1, (const int[]){ 2, 3, 3, 3 });
    assert_int_equal(split(3, 4, 1, SPLIT_TORCHTITAN, out), -1); /* more stages than layers */
}

/*
 * Megatron-Core's get_num_layers_to_build (transformer_block.py L52-160 @core_v0.12.0):
 * 126 layers on pp 8 x vpp 8 (Megatron-Bridge's 405B H100 configuration) with the embedding
 * and the loss counted are 1, 2 x 62, 1 per virtual stage; the embedding alone: 127 layers on
 * pp 8 (128 / 8 = 16, the first stage 15); the loss alone: 15 on the last stage; a count that
 * pp does not divide, or a stage share vpp does not, is refused. First/last stage sizes: each
 * stage's chunks even under Megatron's rule (an odd stage share refused), refused beside the
 * embedding or loss accounting.
 */
static void test_partition_megatron_rules(void **state)
{
    int out[64], want[64];
    struct scenario s;
    char reason[200];

    (void)state;
    for (int i = 0; i < 64; i++)
        want[i] = i == 0 || i == 63 ? 1 : 2;
    assert_int_equal(split(126, 8, 8, SPLIT_MEGATRON, out), 0);
    expect_split(out, 8, 8, want);
    assert_int_equal(split(126, 8, 8, SPLIT_AUTO, out), 0);
    expect_split(out, 8, 8, want);
    assert_int_equal(split(127, 8, 1, SPLIT_MEGATRON_EMB, out), 0);
    expect_split(out, 8, 1, (const int[]){ 15, 16, 16, 16, 16, 16, 16, 16 });
    assert_int_equal(split(127, 8, 1, SPLIT_MEGATRON_LOSS, out), 0);
    expect_split(out, 8, 1, (const int[]){ 16, 16, 16, 16, 16, 16, 16, 15 });
    assert_int_equal(split(127, 8, 1, SPLIT_MEGATRON, out), -1);
    assert_int_equal(split(126, 4, 3, SPLIT_MEGATRON, out), -1); /* 32 per stage, 3 chunks */
    memset(&s, 0, sizeof(s));
    s.model.layers = 30;
    s.par.pp = 4;
    s.par.vpp = 2;
    s.par.pp_split = SPLIT_EVEN;
    s.par.first_stage_layers = 6;
    s.par.last_stage_layers = 8;
    assert_int_equal(pp_layers(&s, out, reason, sizeof(reason)), 0);
    expect_split(out, 4, 2, (const int[]){ 3, 4, 4, 4, 3, 4, 4, 4 });
    s.par.first_stage_layers = 5;
    s.par.last_stage_layers = 9;
    assert_int_equal(pp_layers(&s, out, reason, sizeof(reason)), -1);
    assert_non_null(strstr(reason, "vpp (2) does not divide the 5 layers of pipeline stage 0"));
    s.par.pp_split = SPLIT_MEGATRON;
    assert_int_equal(pp_layers(&s, out, reason, sizeof(reason)), -1);
    assert_non_null(strstr(reason, "cannot be combined with the embedding or loss counted"));
}

/* The program of a cp 4 run of BASE (one stage, 16 layers, seq 8192) under `method`. */
static struct scenario *cp_run(const char *method, struct run *r)
{
    char m[64];
    const char *sets[] = { "parallelism.pp=1",
                           "parallelism.cp=4",
                           "training.seq_len=8192",
                           "workload.max_seq=8192",
                           "training.global_batch=1",
                           m,
                           NULL };
    struct scenario *s;

    snprintf(m, sizeof(m), "parallelism.cp_method=%s", method);
    s = test_load("pipeline-test.yaml", BASE, sets);
    test_simulate(s, false, r);
    return s;
}

/* Bytes of every CP collective `op` of a program, and their count. */
static double cp_bytes(const struct prog *p, int op, int *n)
{
    double bytes = 0;

    *n = 0;
    for (int i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COLL && p->tasks[i].comm == COMM_CP && p->tasks[i].op == op) {
            bytes += p->tasks[i].bytes;
            (*n)++;
        }
    return bytes;
}

/*
 * Context parallelism by method, 16 layers on cp 4 (K/V of one rank kv bytes): Transformer
 * Engine's p2p ring sends 3 K/V chunks a layer forward and 3 K/V + dK/dV pairs plus the last
 * dK/dV backward (3 kv + 3 * 2 kv + kv = 10 kv); torchtitan's alltoall the same ring with fp32
 * dK/dV (3 kv + 3 * 3 kv + 2 kv = 14 kv); its allgather one all-gather of 4 kv a layer each way,
 * the dK/dV ring in backward (3 * 2 kv + 2 kv = 8 kv), and the gathered buffer (4 kv) as
 * workspace from the gather to the core's last step.
 */
static void test_pipeline_cp_methods(void **state)
{
    struct run r;
    struct scenario *s;
    double kv, sr, ag;
    int n, nag, marked = 0;

    (void)state;
    s = cp_run("p2p", &r);
    kv = rules_cp_kv_bytes(s);
    sr = cp_bytes(r.progs[0], COLL_SEND_RECV, &n);
    assert_int_equal(cp_bytes(r.progs[0], COLL_ALL_GATHER, &nag), 0);
    assert_true(test_rel_err(sr, 16 * 10 * kv) < 1e-9);
    run_release(&r);
    cfg_free(s);
    s = cp_run("alltoall", &r);
    sr = cp_bytes(r.progs[0], COLL_SEND_RECV, &n);
    assert_true(test_rel_err(sr, 16 * 14 * kv) < 1e-9);
    run_release(&r);
    cfg_free(s);
    s = cp_run("allgather", &r);
    sr = cp_bytes(r.progs[0], COLL_SEND_RECV, &n);
    ag = cp_bytes(r.progs[0], COLL_ALL_GATHER, &nag);
    assert_int_equal(nag, 2 * 16);
    assert_true(test_rel_err(ag, 2 * 16 * 4 * kv) < 1e-9);
    assert_true(test_rel_err(sr, 16 * 8 * kv) < 1e-9);
    for (int i = 0; i < r.progs[0]->ntasks; i++) {
        const struct task *t = &r.progs[0]->tasks[i];
        if (t->kind == TASK_COLL && t->comm == COMM_CP && t->op == COLL_ALL_GATHER) {
            assert_int_equal(t->mcat0, MC_WORKSPACE);
            assert_true(t->mem0 == bytes_i64(4 * kv));
            marked++;
        }
    }
    assert_int_equal(marked, 2 * 16);
    run_release(&r);
    cfg_free(s);
}

/* 14 layers on 4 stages: embedding and loss count as layers, so the end stages hold 3 each. */
static void test_partition_scenario_accounts_embedding(void **state)
{
    const char *sets[] = { "workload.layers=14", "training.global_batch=8", NULL };
    struct scenario *s = test_load("pipeline-test.yaml", BASE, sets);
    struct run r;
    int st, total = 0;

    (void)state;
    for (st = 0; st < 4; st++)
        total += strategy_stage_layers(s, st);
    assert_int_equal(strategy_stage_layers(s, 0), 3);
    assert_int_equal(strategy_stage_layers(s, 1), 4);
    assert_int_equal(strategy_stage_layers(s, 3), 3);
    assert_int_equal(total, 14);
    test_simulate(s, false, &r);
    assert_true(r.step_s > 0);
    run_release(&r);
    cfg_free(s);
}

/* ---- bubble -------------------------------------------------------------------------------------
 */

/* 1F1B: bubble / ideal = (p - 1) / m on every stage (NAR21 §2.2.1); it shrinks as m grows. */
static void test_pipeline_1f1b_bubble_closed_form(void **state)
{
    static const char *const m8[] = { "training.global_batch=8", NULL };
    static const char *const m16[] = { "training.global_batch=16", NULL };
    static const char *const m32[] = { "training.global_batch=32", NULL };
    const char *const *sets[] = { m8, m16, m32 };
    const int ms[] = { 8, 16, 32 };
    double prev = 1e9;
    size_t k;

    (void)state;
    for (k = 0; k < ARRAY_LEN(ms); k++) {
        struct scenario *s = test_load("pipeline-test.yaml", BASE, sets[k]);
        struct run r;
        double want = 3.0 / ms[k], got;
        test_simulate(s, false, &r);
        got = bubble(&r, 1);
        if (test_rel_err(got, want) > 0.08)
            fail_msg("m=%d: 1F1B bubble %.4f, closed form (p-1)/m = %.4f", ms[k], got, want);
        assert_true(got < prev);
        prev = got;
        run_release(&r);
        cfg_free(s);
    }
}

/* GPipe has the same bubble as 1F1B (NAR21 §2.2.1). */
static void test_pipeline_gpipe_bubble(void **state)
{
    const char *sets[] = { "training.global_batch=16", "parallelism.schedule=gpipe", NULL };
    struct scenario *s = test_load("pipeline-test.yaml", BASE, sets);
    struct run r;
    double got;

    (void)state;
    test_simulate(s, false, &r);
    got = bubble(&r, 1);
    if (test_rel_err(got, 3.0 / 16) > 0.08)
        fail_msg("GPipe bubble %.4f, closed form %.4f", got, 3.0 / 16);
    run_release(&r);
    cfg_free(s);
}

/*
 * Interleaving with v chunks divides the bubble by v (NAR21 §2.2.2) and multiplies the
 * point-to-point traffic by v.
 */
static void test_pipeline_interleaved_bubble_and_traffic(void **state)
{
    const char *plain[] = { "training.global_batch=16", NULL };
    const char *inter[] = { "training.global_batch=16", "parallelism.vpp=2", NULL };
    struct scenario *s1 = test_load("pipeline-test.yaml", BASE, plain),
                    *s2 = test_load("pipeline-test.yaml", BASE, inter);
    struct run r1, r2;
    double got, want = 3.0 / (16 * 2), b1, b2;

    (void)state;
    assert_int_equal(s2->par.schedule, SCHED_INTERLEAVED);
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    got = bubble(&r2, 1);
    if (test_rel_err(got, want) > 0.12)
        fail_msg("interleaved bubble %.4f, closed form (p-1)/(m v) = %.4f", got, want);
    assert_true(got < bubble(&r1, 1));
    b1 = r1.sim.ranks[1].comm_bytes[COMM_PP_NEXT];
    b2 = r2.sim.ranks[1].comm_bytes[COMM_PP_NEXT];
    assert_true(b1 > 0);
    assert_true(test_rel_err(b2 / b1, 2.0) < 1e-9);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/*
 * ZB-H1 on the toy pipeline (tp 1, so splitting a backward costs no collective): the bubble
 * against (p - 1)(F + B - W) (tests/test_schedule.c), which with 1F1B's (p - 1)(F + B + W) makes
 * the ratio (F + B - W) / (F + B + W), F, B and W a stage's forward, input-gradient and
 * weight-gradient time per micro-batch from the workload's operators; within 5 % (transfers, the
 * embedding and head). The activations at stage 0's peak stay 1F1B's (ZB: 1x 1F1B); every stage's
 * peak stays within stage 0's, the queued W's included.
 */
static void test_pipeline_zb_h1_bubble(void **state)
{
    const char *plain[] = { "training.global_batch=16", NULL };
    const char *zb[] = { "training.global_batch=16", "parallelism.schedule=zb-h1", NULL };
    struct scenario *s1 = test_load("pipeline-test.yaml", BASE, plain),
                    *s2 = test_load("pipeline-test.yaml", BASE, zb);
    struct shard sh;
    struct layer_cost lc;
    struct run r1, r2;
    double f = 0, b = 0, w = 0, want, got;

    (void)state;
    workload_shard(s1, &sh);
    workload_layer(s1, &sh, false, &lc);
    for (int part = 0; part < PART_COUNT; part++) {
        f += (double)lc.fwd[part];
        b += (double)lc.dgrad[part];
        w += (double)lc.wgrad[part];
    }
    assert_true(w > 0.5 * b && w < b); /* a realistic split: W a bit under B */
    want = (f + b - w) / (f + b + w);
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    for (int st = 1; st < 3; st++) {
        got = bubble(&r2, st) / bubble(&r1, st);
        if (test_rel_err(got, want) > 0.05)
            fail_msg("stage %d: ZB-H1 / 1F1B bubble %.4f, closed form (F+B-W)/(F+B+W) = %.4f", st,
                     got, want);
    }
    assert_true(test_rel_err((double)r2.sim.ranks[0].at_peak[MC_ACT],
                             (double)r1.sim.ranks[0].at_peak[MC_ACT]) < 0.02);
    for (int st = 1; st < 4; st++)
        assert_true(r2.sim.ranks[st].at_peak[MC_ACT] <= r1.sim.ranks[0].at_peak[MC_ACT]);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/* One step of lab 7's scenario (70b_256gpu.yaml at vpp 1) under `schedule`, global batch gb. */
static void lab7_step(const char *schedule, int gb, double *step_s, double *idle_s)
{
    char sched[64], batch[64];
    const char *sets[] = { "parallelism.vpp=1", sched, batch, NULL };
    struct scenario *s;
    struct run r;

    snprintf(sched, sizeof(sched), "parallelism.schedule=%s", schedule);
    snprintf(batch, sizeof(batch), "training.global_batch=%d", gb);
    s = test_load("scenarios/70b_256gpu.yaml", NULL, sets);
    test_simulate(s, false, &r);
    *step_s = r.step_s;
    *idle_s = run_metrics(&r)->breakdown_s[TC_IDLE];
    run_release(&r);
    cfg_free(s);
}

/*
 * Issue 30's bar on lab 7's scenario (Llama 3 70B, tp 8 x pp 4 x dp 8, vpp 1): ZB-H1 is no
 * slower than 1F1B at 8, 32 and 128 micro-batches, saves about as much at 128 as at 8 (a
 * stage splits at most p backwards, whatever m), and idles at most 0.6 of 1F1B's time at 8.
 */
static void test_pipeline_zb_h1_lab7_bar(void **state)
{
    static const int gb[] = { 64, 256, 1024 };
    double one[3], zb[3], idle_one, idle_zb, idle;

    (void)state;
    for (int i = 0; i < 3; i++) {
        lab7_step("1f1b", gb[i], &one[i], i == 0 ? &idle_one : &idle);
        lab7_step("zb-h1", gb[i], &zb[i], i == 0 ? &idle_zb : &idle);
        if (!(zb[i] <= one[i]))
            fail_msg("global batch %d: ZB-H1 %.3f s, 1F1B %.3f s", gb[i], zb[i], one[i]);
    }
    assert_true(one[2] - zb[2] > 0.5 * (one[0] - zb[0]));
    if (!(idle_zb <= 0.6 * idle_one))
        fail_msg("ZB-H1 idle %.1f ms, 1F1B %.1f ms", 1e3 * idle_zb, 1e3 * idle_one);
}

/*
 * ZB-H1 reduces every gradient 1F1B does: each stage's data-parallel bytes are the same under
 * DDP, the distributed optimizer and FSDP2, the head's and the embedding's included (their
 * weight gradients are done in B, so their readiness is reported there).
 */
static void test_pipeline_zb_h1_reduces_every_gradient(void **state)
{
    static const char *const sharding[][2] = {
        { "parallelism.sharding=none", "fsdp.version=1" },
        { "parallelism.sharding=zero1", "fsdp.version=1" },
        { "parallelism.sharding=fsdp", "fsdp.version=2" },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(sharding); i++) {
        const char *one[] = { "parallelism.vpp=1", "training.global_batch=64",  sharding[i][0],
                              sharding[i][1],      "parallelism.schedule=1f1b", NULL };
        const char *zb[] = { "parallelism.vpp=1", "training.global_batch=64",   sharding[i][0],
                             sharding[i][1],      "parallelism.schedule=zb-h1", NULL };
        struct scenario *s1 = test_load("scenarios/70b_256gpu.yaml", NULL, one),
                        *s2 = test_load("scenarios/70b_256gpu.yaml", NULL, zb);
        struct run r1, r2;
        test_simulate(s1, false, &r1);
        test_simulate(s2, false, &r2);
        for (int st = 0; st < 4; st++) {
            assert_true(r1.sim.ranks[st].comm_bytes[COMM_DP] > 0);
            assert_true(test_rel_err(r2.sim.ranks[st].comm_bytes[COMM_DP],
                                     r1.sim.ranks[st].comm_bytes[COMM_DP]) < 1e-12);
        }
        run_release(&r1);
        run_release(&r2);
        cfg_free(s1);
        cfg_free(s2);
    }
}

/* ---- activations in flight ------------------------------------------------------------------ */

/* Saved activations of one micro-batch on stage 0 (4 layers and the embedding). */
static double stage0_act_per_mb(const struct scenario *s, double *bwd_transient)
{
    struct shard sh;
    struct layer_cost lc;
    struct edge_cost emb;

    workload_shard(s, &sh);
    workload_layer(s, &sh, false, &lc);
    workload_embedding(s, &sh, &emb);
    *bwd_transient = lc.bwd_transient;
    return 4 * lc.act[RC_NONE] + emb.act;
}

/*
 * The memory peak of stage 0 holds p micro-batches of activations under 1F1B (KOR22 §4.2.3),
 * all m under GPipe, and p * v + p - 1 chunks, i.e. 1 + (p - 1) / (p v) times 1F1B's, when
 * interleaved; at the peak the first backward's MLP gradients (workload_layer.c bwd_transient) are
 * alive too.
 */
static void test_pipeline_in_flight_activations(void **state)
{
    const char *f1b[] = { "training.global_batch=16", NULL };
    const char *gp[] = { "training.global_batch=16", "parallelism.schedule=gpipe", NULL };
    const char *il[] = { "training.global_batch=16", "parallelism.vpp=2", NULL };
    struct scenario *s1 = test_load("pipeline-test.yaml", BASE, f1b),
                    *s2 = test_load("pipeline-test.yaml", BASE, gp),
                    *s3 = test_load("pipeline-test.yaml", BASE, il);
    struct run r1, r2, r3;
    double tr, per_mb = stage0_act_per_mb(s1, &tr), a1, a2, a3;

    (void)state;
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    test_simulate(s3, false, &r3);
    a1 = (double)r1.sim.ranks[0].at_peak[MC_ACT];
    a2 = (double)r2.sim.ranks[0].at_peak[MC_ACT];
    a3 = (double)r3.sim.ranks[0].at_peak[MC_ACT];
    if (test_rel_err(a1, 4 * per_mb + tr) > 0.01)
        fail_msg("1F1B stage 0 holds %.3g B of activations, want p = 4 micro-batches (%.3g B)", a1,
                 4 * per_mb + tr);
    if (test_rel_err(a2, 16 * per_mb + tr) > 0.01)
        fail_msg("GPipe stage 0 holds %.3g B, want m = 16 micro-batches (%.3g B)", a2,
                 16 * per_mb + tr);
    /* interleaved: chunks carry half the layers; the embedding rides in chunk 0 */
    if (test_rel_err(a3, a1 * (1 + 3.0 / 8)) > 0.05)
        fail_msg("interleaved stage 0 holds %.3g B, want 1F1B x (1 + (p-1)/(p v)) = %.3g B", a3,
                 a1 * (1 + 3.0 / 8));
    run_release(&r1);
    run_release(&r2);
    run_release(&r3);
    cfg_free(s1);
    cfg_free(s2);
    cfg_free(s3);
}

/*
 * host.micro_batch_sync (DeepSpeed's engine forward syncs the device before each micro-batch):
 * one layer stage, 4 micro-batches of 1, a host cost per Python op large enough to bind.
 * Micro-batches 1-3 each start with a zero-length host task that waits for the GPU's last
 * kernel so far (the previous micro-batch's backward; the first micro-batch has no kernel
 * before it); the sync only removes overlap, so the step is no shorter.
 */
static void test_pipeline_micro_batch_sync(void **state)
{
    const char *off[] = { "parallelism.pp=1", "cluster.gpus=1", "training.global_batch=4",
                          "host.python_op=200 us", NULL };
    const char *on[] = { "parallelism.pp=1",           "cluster.gpus=1",
                         "training.global_batch=4",    "host.python_op=200 us",
                         "host.micro_batch_sync=true", NULL };
    struct scenario *s1 = test_load("pipeline-test.yaml", BASE, off),
                    *s2 = test_load("pipeline-test.yaml", BASE, on);
    struct run r1, r2;
    char text[64];
    int n = 0, last;

    (void)state;
    test_simulate(s1, false, &r1);
    test_simulate(s2, false, &r2);
    for (int i = 0; i < r2.progs[0]->ntasks; i++) {
        const struct prog *p = r2.progs[0];
        const struct task *t = &p->tasks[i], *dep;

        prog_label_text(p, t->label, text, sizeof(text));
        if (strcmp(text, "host: micro-batch sync") != 0)
            continue;
        n++;
        assert_int_equal(t->stream, ST_HOST);
        assert_int_equal(t->dur, 0);
        assert_int_equal(t->npred, 1);
        for (last = i - 1; last >= 0; last--)
            if (p->tasks[last].stream == ST_COMPUTE && p->tasks[last].dur > 0)
                break;
        assert_int_equal(p->preds[t->pred0], last);
        dep = &p->tasks[last];
        assert_true(dep->mb == t->mb - 1 || dep->mb < 0);
    }
    assert_int_equal(n, 3);
    assert_true(r2.sim.step >= r1.sim.step);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/*
 * The CPU's issue of the parts outside the layers, per micro-batch (workload_edge_host(),
 * Megatron code, tp 2 without sequence parallelism), by hand at 4 us a kernel, 100 us a Python
 * op and 32 us a collective call: embedding forward 23 kernels, 19 ops, 3 calls (two
 * get_batch broadcasts, the lookup's all-reduce) = 2088 us; its backward 11 kernels, 1 op =
 * 144 us; head and loss forward 31 kernels, 23 ops, 4 calls = 2552 us; their backward 17
 * kernels, 7 ops, 1 call = 800 us. The last stage's program issues the head's on its host
 * stream before the head's kernels; Hugging Face code counts none yet.
 */
static void test_pipeline_edge_host_time(void **state)
{
    const char *sets[] = {
        "parallelism.tp=2",      "parallelism.pp=2",        "training.model_code=megatron",
        "host.python_op=100 us", "training.global_batch=2", NULL
    };
    struct scenario *s = test_load("pipeline-test.yaml", BASE, sets);
    struct edge_cost e;
    struct run r;
    char text[64];
    int n = 0;

    (void)state;
    workload_edge_host(s, &e, false);
    assert_int_equal(e.host_fwd, 2088000);
    assert_int_equal(e.host_bwd, 144000);
    workload_edge_host(s, &e, true);
    assert_int_equal(e.host_fwd, 2552000);
    assert_int_equal(e.host_bwd, 800000);
    test_simulate(s, false, &r);
    for (int i = 0; i < r.progs[1]->ntasks; i++) {
        const struct task *t = &r.progs[1]->tasks[i];

        prog_label_text(r.progs[1], t->label, text, sizeof(text));
        if (strcmp(text, "host: head+loss fwd") == 0) {
            assert_int_equal(t->stream, ST_HOST);
            assert_int_equal(t->dur, 2552000);
            n++;
        }
    }
    assert_int_equal(n, 2);
    run_release(&r);
    cfg_free(s);
    s = test_load("pipeline-test.yaml", BASE,
                  (const char *[]){ "training.model_code=hf", "training.global_batch=4", NULL });
    workload_edge_host(s, &e, true);
    assert_int_equal(e.host_fwd + e.host_bwd, 0);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition_llama3_405b),
        cmocka_unit_test(test_partition_chunks_and_errors),
        cmocka_unit_test(test_partition_framework_rules),
        cmocka_unit_test(test_partition_megatron_rules),
        cmocka_unit_test(test_pipeline_cp_methods),
        cmocka_unit_test(test_partition_scenario_accounts_embedding),
        cmocka_unit_test(test_pipeline_1f1b_bubble_closed_form),
        cmocka_unit_test(test_pipeline_gpipe_bubble),
        cmocka_unit_test(test_pipeline_interleaved_bubble_and_traffic),
        cmocka_unit_test(test_pipeline_zb_h1_bubble),
        cmocka_unit_test(test_pipeline_zb_h1_lab7_bar),
        cmocka_unit_test(test_pipeline_zb_h1_reduces_every_gradient),
        cmocka_unit_test(test_pipeline_in_flight_activations),
        cmocka_unit_test(test_pipeline_micro_batch_sync),
        cmocka_unit_test(test_pipeline_edge_host_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
