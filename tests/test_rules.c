/*
 * test_rules.c - the framework rules the builders and the closed-form estimate share
 * (strategy/rules.h): the table of implementations and collectives per sharding mode, the
 * programs the builders emit follow it (which collective reduces, how often, what gathers),
 * and the bucket sizes and buffers of DDP and ZeRO.
 */
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

#include "strategy/rules.h"
#include "strategy/strategy.h"

#define SCENARIO "scenarios/sharding_7b_8gpu.yaml" /* Llama 2 7B, dp 8, one node */

/* The rules of each sharding mode, as rules.c cites them. */
static void test_rules_table(void **state)
{
    static const struct {
        const char *sharding, *framework;
        enum dp_impl impl;
        enum coll_op reduce;
        bool every_mb, gather_after_step, per_unit, reshard;
        int comm;
    } rows[] = {
        { "none", "pytorch", DPI_DDP, COLL_ALL_REDUCE, false, false, false, false, COMM_DP },
        { "zero1", "megatron", DPI_DDP, COLL_REDUCE_SCATTER, false, true, false, false, COMM_DP },
        { "zero1", "deepspeed", DPI_ZERO12, COLL_REDUCE_SCATTER, false, true, false, false,
          COMM_DP },
        { "zero2", "deepspeed", DPI_ZERO12, COLL_REDUCE_SCATTER, true, true, false, false,
          COMM_DP },
        { "zero3", "deepspeed", DPI_ZERO3, COLL_REDUCE_SCATTER, true, false, true, true, COMM_DP },
        { "fsdp", "pytorch", DPI_FSDP, COLL_REDUCE_SCATTER, true, false, true, true, COMM_DP },
        { "fsdp_grad_op", "pytorch", DPI_FSDP, COLL_REDUCE_SCATTER, true, false, true, false,
          COMM_DP },
        { "fsdp_no_shard", "pytorch", DPI_FSDP, COLL_ALL_REDUCE, true, false, false, false,
          COMM_DP },
        { "hsdp", "pytorch", DPI_FSDP, COLL_REDUCE_SCATTER, true, false, true, true,
          COMM_DP_INTRA },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char sh[64], fw[64];
        const char *sets[] = {
            sh, fw, "cluster.nodes=2", "parallelism.dp=16", "training.global_batch=16", NULL
        };
        struct scenario *s;

        snprintf(sh, sizeof(sh), "parallelism.sharding=%s", rows[i].sharding);
        snprintf(fw, sizeof(fw), "parallelism.framework=%s", rows[i].framework);
        s = test_load(SCENARIO, NULL, sets);
        assert_int_equal(rules_dp_impl(s), rows[i].impl);
        assert_int_equal(rules_grad_reduce_op(s), rows[i].reduce);
        assert_int_equal(rules_reduce_every_microbatch(s), rows[i].every_mb);
        assert_int_equal(rules_param_gather_after_step(s), rows[i].gather_after_step);
        assert_int_equal(rules_gathers_per_unit(s), rows[i].per_unit);
        assert_int_equal(rules_reshard_after_forward(s), rows[i].reshard);
        assert_int_equal(rules_shard_comm(s), rows[i].comm);
        cfg_free(s);
    }
}

/* Data-parallel collectives of the first stage's program doing `op` (any DP communicator). */
/*
 * Which blocks recompute: Megatron's block method (recompute_layers 2: the first two of each
 * chunk), torchtitan's layer mode (recompute_every 2: blocks 2, 4, 6 of the model, 1-based),
 * fms-fsdp's fraction (ac_handler.py: 1/2 -> blocks 1, 3, 5; 1/3 -> blocks 2, 5, 8), the same
 * through selective with selective_policy blocks; the other policies recompute in every layer.
 */
static void test_rules_which_blocks_recompute(void **state)
{
    struct scenario s;
    static const bool every2[9] = { 0, 1, 0, 1, 0, 1, 0, 1, 0 };
    static const bool half[9] = { 1, 0, 1, 0, 1, 0, 1, 0, 1 };
    static const bool third[9] = { 0, 1, 0, 0, 1, 0, 0, 1, 0 };

    (void)state;
    scenario_defaults(&s);
    s.train.recompute = RC_FULL;
    s.train.recompute_layers = 2;
    assert_int_equal(rules_layer_recompute(&s, 7, 1), RC_FULL);
    assert_int_equal(rules_layer_recompute(&s, 8, 2), RC_NONE);
    s.train.recompute_layers = 0;
    s.train.recompute_every = 2;
    for (int l = 0; l < 9; l++)
        assert_int_equal(rules_layer_recompute(&s, l, l), every2[l] ? RC_FULL : RC_NONE);
    s.train.recompute_every = 0;
    s.train.recompute_fraction = 0.5;
    for (int l = 0; l < 9; l++)
        assert_int_equal(rules_layer_recompute(&s, l, l), half[l] ? RC_FULL : RC_NONE);
    s.train.recompute = RC_SELECTIVE;
    s.train.selective = SEL_BLOCKS;
    s.train.recompute_fraction = 1.0 / 3;
    for (int l = 0; l < 9; l++)
        assert_int_equal(rules_layer_recompute(&s, l, l), third[l] ? RC_FULL : RC_NONE);
    s.train.selective = SEL_TORCHTITAN_OP;
    assert_int_equal(rules_layer_recompute(&s, 0, 0), RC_SELECTIVE);
    s.train.recompute = RC_NONE;
    assert_int_equal(rules_layer_recompute(&s, 1, 1), RC_NONE);
}

/*
 * The engine recomputes the blocks the rule picks: with recompute_every 2 a stage's recompute
 * time is half that of full recomputation (the layers are identical).
 */
static void test_rules_recompute_every_in_the_engine(void **state)
{
    const char *full[] = { "training.recompute=full", NULL };
    const char *every[] = { "training.recompute=full", "training.recompute_every=2", NULL };
    struct scenario *a = test_load(SCENARIO, NULL, full), *b = test_load(SCENARIO, NULL, every);
    struct run ra, rb;
    double fa, fb;

    (void)state;
    test_simulate(a, false, &ra);
    test_simulate(b, false, &rb);
    fa = (double)ra.sim.ranks[0].busy[TC_RECOMPUTE];
    fb = (double)rb.sim.ranks[0].busy[TC_RECOMPUTE];
    assert_true(fa > 0);
    assert_true(fabs(fb / fa - 0.5) < 0.01);
    assert_true(rb.sim.ranks[0].at_peak[MC_ACT] > ra.sim.ranks[0].at_peak[MC_ACT]);
    run_release(&ra);
    run_release(&rb);
    cfg_free(a);
    cfg_free(b);
}

/* Index of the last backward compute task of program p. */
static int last_backward(const struct prog *p)
{
    int last = -1;

    for (int i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COMPUTE && p->tasks[i].tcat == TC_BWD)
            last = i;
    return last;
}

/*
 * DeepSpeed's engine at ZeRO stage 0 (parallelism.framework deepspeed, sharding none) reduces
 * after the whole backward in 5e8-element buffers (engine.py buffered_allreduce_fallback):
 * Llama 2 7B's 6.7e9 bf16 gradients make 14 all-reduces, every one issued after the last
 * backward kernel, and ddp.overlap derives false; PyTorch DDP overlaps 25 MiB buckets with
 * backward. The engine's flattened buffer is a transient, not a persistent bucket copy.
 */
static void test_rules_deepspeed_stage0_after_backward(void **state)
{
    const char *ds[] = { "parallelism.sharding=none", "parallelism.framework=deepspeed", NULL };
    const char *pt[] = { "parallelism.sharding=none", "parallelism.framework=pytorch", NULL };
    struct scenario *a = test_load(SCENARIO, NULL, ds), *b = test_load(SCENARIO, NULL, pt);
    double first, bytes, params = workload_params_total(&a->model);
    struct run ra, rb;
    const struct prog *p;
    int last, n = 0;

    (void)state;
    assert_false(a->ddp.overlap);
    assert_true(b->ddp.overlap);
    rules_ddp_buckets(a, &first, &bytes);
    assert_true(test_rel_err(bytes, 5e8 * 2) < 1e-12);
    test_simulate(a, false, &ra);
    test_simulate(b, false, &rb);
    p = ra.progs[0];
    last = last_backward(p);
    for (int i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COLL && p->tasks[i].comm == COMM_DP) {
            assert_true(i > last);
            n++;
        }
    assert_int_equal(n, (int)ceil(params * 2 / bytes));
    assert_int_equal(ra.sim.ranks[0].at_peak[MC_COMM], 0);
    assert_true(ra.sim.ranks[0].bucket[TC_COMM_DP] > rb.sim.ranks[0].bucket[TC_COMM_DP]);
    run_release(&ra);
    run_release(&rb);
    cfg_free(a);
    cfg_free(b);
}

static int dp_colls(const struct run *r, int op)
{
    return test_count_colls(r->progs[0], COMM_DP, op) +
           test_count_colls(r->progs[0], COMM_DP_INTRA, op);
}

/* One step of SCENARIO under `sharding` with `mb` micro-batches per step, and one more override. */
static void simulate(const char *sharding, int mb, const char *extra, struct scenario **s,
                     struct run *r)
{
    char sh[64], gb[64];
    const char *sets[] = { sh, gb, extra, NULL };

    snprintf(sh, sizeof(sh), "parallelism.sharding=%s", sharding);
    snprintf(gb, sizeof(gb), "training.global_batch=%d", 8 * mb);
    *s = test_load(SCENARIO, NULL, sets);
    test_simulate(*s, false, r);
}

/*
 * The builders follow the rules: gradients are reduced by rules_grad_reduce_op() only, once
 * per step or once per micro-batch as rules_reduce_every_microbatch() says (two micro-batches
 * double the reductions, or not), and all-gathers appear exactly when parameters are
 * gathered per unit or after the step.
 */
static void test_rules_programs_follow_them(void **state)
{
    static const char *const modes[] = { "none", "zero1",        "zero2",        "zero3",
                                         "fsdp", "fsdp_grad_op", "fsdp_no_shard" };

    (void)state;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        struct scenario *s1, *s2;
        struct run r1, r2;
        int op, other, red1, red2;

        simulate(modes[i], 1, "zero.overlap_comm=true", &s1, &r1);
        simulate(modes[i], 2, "zero.overlap_comm=true", &s2, &r2);
        op = rules_grad_reduce_op(s1);
        other = op == COLL_ALL_REDUCE ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
        red1 = dp_colls(&r1, op);
        red2 = dp_colls(&r2, op);
        if (red1 <= 0 || dp_colls(&r1, other) != 0)
            fail_msg("%s: %d reductions by the rule's collective, %d by the other", modes[i], red1,
                     dp_colls(&r1, other));
        if (rules_reduce_every_microbatch(s1) ? red2 != 2 * red1 : red2 != red1)
            fail_msg("%s: %d reductions with one micro-batch, %d with two", modes[i], red1, red2);
        assert_int_equal(dp_colls(&r1, COLL_ALL_GATHER) > 0,
                         rules_gathers_per_unit(s1) || rules_param_gather_after_step(s1));
        run_release(&r1);
        run_release(&r2);
        cfg_free(s1);
        cfg_free(s2);
    }
}

/* FSDP gathers each unit twice per micro-batch when it reshards after forward, once if not. */
static void test_rules_reshard_gathers_twice(void **state)
{
    struct scenario *s1, *s2;
    struct run r1, r2;

    (void)state;
    simulate("fsdp", 1, "fsdp.reshard_after_forward=true", &s1, &r1);
    simulate("fsdp", 1, "fsdp.reshard_after_forward=false", &s2, &r2);
    assert_true(rules_reshard_after_forward(s1));
    assert_false(rules_reshard_after_forward(s2));
    /* the root unit (embedding + head) never reshards after forward: 2 (n - 1) + 1 against n */
    assert_int_equal(dp_colls(&r1, COLL_ALL_GATHER), 2 * dp_colls(&r2, COLL_ALL_GATHER) - 1);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s1);
    cfg_free(s2);
}

/*
 * Bucket sizes: PyTorch DDP's 25 MiB with a 1 MiB first bucket (distributed.py); Megatron's
 * max(40M, 1M * dp) parameters at the gradient dtype, fp32 here: 40M x 4 B on 8 GPUs, 64M x
 * 4 B on 64.
 */
static void test_rules_ddp_buckets(void **state)
{
    static const char *const pt[] = { "parallelism.framework=pytorch", NULL };
    static const char *const mg8[] = { "parallelism.framework=megatron", "training.grad_dtype=fp32",
                                       NULL };
    static const char *const mg64[] = { "parallelism.framework=megatron",
                                        "training.grad_dtype=fp32",
                                        "cluster.nodes=8",
                                        "parallelism.dp=64",
                                        "training.global_batch=64",
                                        NULL };
    struct scenario *s;
    double first, cap;

    (void)state;
    s = test_load(SCENARIO, NULL, pt);
    rules_ddp_buckets(s, &first, &cap);
    assert_true(fabs(first - 1048576.0) < 0.5 && fabs(cap - 25 * 1048576.0) < 0.5);
    cfg_free(s);
    s = test_load(SCENARIO, NULL, mg8);
    rules_ddp_buckets(s, &first, &cap);
    assert_true(fabs(first - 40e6 * 4) < 0.5 && fabs(cap - 40e6 * 4) < 0.5);
    cfg_free(s);
    s = test_load(SCENARIO, NULL, mg64);
    rules_ddp_buckets(s, &first, &cap);
    assert_true(fabs(cap - 64e6 * 4) < 0.5);
    cfg_free(s);
}

/*
 * DeepSpeed's ipg buffers (reduce_bucket_size elements at 16 bits; two for stages 1 and 2
 * with overlap_comm, one for stage 3; none without contiguous_gradients) are the whole of the
 * communication-buffer memory the engine's ZeRO programs hold at the end of the step.
 */
static void test_rules_zero_buckets_are_the_comm_memory(void **state)
{
    static const struct {
        const char *sharding, *overlap, *contiguous;
        double buffers;
    } rows[] = {
        { "zero1", "zero.overlap_comm=false", "zero.contiguous_gradients=true", 1 },
        { "zero2", "zero.overlap_comm=true", "zero.contiguous_gradients=true", 2 },
        { "zero3", "zero.overlap_comm=true", "zero.contiguous_gradients=true", 1 },
        { "zero2", "zero.overlap_comm=true", "zero.contiguous_gradients=false", 0 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char sh[64];
        const char *sets[] = { sh, rows[i].overlap, rows[i].contiguous, NULL };
        struct scenario *s;
        struct run r;
        double want;

        snprintf(sh, sizeof(sh), "parallelism.sharding=%s", rows[i].sharding);
        s = test_load(SCENARIO, NULL, sets);
        want = rows[i].buffers * s->zero.reduce_bucket_size * 2; /* bf16 */
        assert_true(fabs(rules_zero_bucket_bytes(s) - want) < 0.5);
        test_simulate(s, false, &r);
        assert_true(fabs((double)r.sim.ranks[0].cur[MC_COMM] - want) < 1);
        run_release(&r);
        cfg_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_table),
        cmocka_unit_test(test_rules_which_blocks_recompute),
        cmocka_unit_test(test_rules_recompute_every_in_the_engine),
        cmocka_unit_test(test_rules_deepspeed_stage0_after_backward),
        cmocka_unit_test(test_rules_programs_follow_them),
        cmocka_unit_test(test_rules_reshard_gathers_twice),
        cmocka_unit_test(test_rules_ddp_buckets),
        cmocka_unit_test(test_rules_zero_buckets_are_the_comm_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
