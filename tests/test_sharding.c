/*
 * test_sharding.c - data-parallel sharding (strategy/dp.c, zero.c, fsdp.c,
 * offload.c): the strategy chosen per mode, buckets, process-group order,
 * ZeRO's model-state and communication figures, FSDP's prefetch and limiter
 * rules, HYBRID_SHARD's network traffic, and CPU offload.
 *
 * Scenarios are the shipped teaching files (scenarios/sharding_*.yaml) with
 * --set style overrides, so the tests also keep those files honest.
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

#include "config/config.h"
#include "base/csv.h"
#include "model/memory.h"
#include "report/report.h"
#include "run/run.h"
#include "strategy/strategy.h"
#include "strategy/dp_internal.h"
#include "fit/validate.h"
#include "model/workload.h"

#define DATA(rel) SIMTRAIN_SOURCE_DIR "/" rel
#define MAX_SET   8

/* A loaded scenario and its simulated step. */
struct sim_case {
    struct scenario *s;
    struct run r;
};

enum {
    SYMMETRIC = 0,
    ALL_RANKS = 1, /* simulate every rank */
    TIMELINE = 2   /* record the memory timeline */
};

/*
 * Load scenarios/NAME.yaml with "key=value" overrides (NULL-terminated) and
 * simulate one step; `mode` is a mask of ALL_RANKS and TIMELINE.
 */
static void run_case(struct sim_case *c, const char *name, int mode, ...)
{
    struct cfg_override ovr[MAX_SET];
    char keys[MAX_SET][128], path[512], reason[256];
    struct sim_opts opts = { 0 };
    const char *kv;
    va_list ap;
    int n = 0;

    va_start(ap, mode);
    while ((kv = va_arg(ap, const char *)) != NULL) {
        const char *eq = strchr(kv, '=');
        assert_non_null(eq);
        assert_true(n < MAX_SET);
        snprintf(keys[n], sizeof(keys[n]), "%.*s", (int)(eq - kv), kv);
        ovr[n].key = keys[n];
        ovr[n].value = eq + 1;
        ovr[n].arg = kv;
        n++;
    }
    va_end(ap);
    snprintf(path, sizeof(path), DATA("scenarios/%s.yaml"), name);
    c->s = cfg_load_scenario(path, ovr, n, stderr);
    if (!c->s)
        fail_msg("scenario '%s' did not load", name);
    opts.all_ranks = (mode & ALL_RANKS) != 0;
    opts.trace = (mode & TIMELINE) != 0;
    if (run_scenario(c->s, &opts, &c->r, reason, sizeof(reason)) != 0)
        fail_msg("scenario '%s' did not run: %s", name, reason);
}

static void free_case(struct sim_case *c)
{
    run_release(&c->r);
    cfg_free(c->s);
}

static const struct rank_result *rank0(const struct sim_case *c)
{
    return &c->r.sim.ranks[0];
}

/* Model-state bytes (parameters, master, gradients, optimizer) at the rank's peak. */
static double model_states(const struct sim_case *c)
{
    const struct rank_result *rr = rank0(c);

    return (double)(rr->at_peak[MC_PARAMS] + rr->at_peak[MC_MASTER] + rr->at_peak[MC_GRADS] +
                    rr->at_peak[MC_OPTIM]);
}

/* The most bytes of category `cat` alive at once on rank 0 (needs TIMELINE). */
static double timeline_max(const struct sim_case *c, int cat)
{
    const struct rank_result *rr = rank0(c);
    double most = 0;
    size_t i;

    assert_true(rr->ntl > 0);
    for (i = 0; i < rr->ntl; i++)
        if ((double)rr->tl[i].cur[cat] > most)
            most = (double)rr->tl[i].cur[cat];
    return most;
}

/* ---- strategy choice, buckets, order --------------------------------------------------- */

/* zero1 runs as Megatron's distributed optimizer only under Megatron; the rest map one to one. */
static void test_sharding_dp_ops_choice(void **state)
{
    struct scenario s;
    char reason[128];
    static const struct {
        enum sharding sh;
        enum framework fw;
        int tp;
        const struct dp_ops *want;
    } cases[] = {
        { SHARD_NONE, FW_AUTO, 1, &dp_ddp },     { SHARD_ZERO1, FW_AUTO, 1, &dp_zero12 },
        { SHARD_ZERO1, FW_AUTO, 2, &dp_ddp },    { SHARD_ZERO1, FW_MEGATRON, 1, &dp_ddp },
        { SHARD_ZERO2, FW_AUTO, 1, &dp_zero12 }, { SHARD_ZERO3, FW_DEEPSPEED, 1, &dp_zero3 },
        { SHARD_FSDP, FW_AUTO, 1, &dp_fsdp },    { SHARD_FSDP_GRAD_OP, FW_AUTO, 1, &dp_fsdp },
        { SHARD_HSDP, FW_AUTO, 1, &dp_fsdp },    { SHARD_FSDP_NO_SHARD, FW_AUTO, 1, &dp_fsdp },
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(cases); i++) {
        scenario_defaults(&s);
        s.par.sharding = cases[i].sh;
        s.par.framework = cases[i].fw;
        s.par.tp = cases[i].tp;
        assert_ptr_equal(strategy_dp_ops(&s, reason, sizeof(reason)), cases[i].want);
    }
}

/* 60 MB poured into 25 MB buckets with a 1 MB first bucket: 1, 25, 25 issued, 9 left open. */
static void test_sharding_bucket_pour(void **state)
{
    struct dp_bucket bk;
    double bytes = 60e6, full[4];
    int n = 0;

    (void)state;
    dp_bucket_init(&bk, 1e6, 25e6);
    while (n < 4 && (full[n] = dp_bucket_pour(&bk, &bytes)) > 0)
        n++;
    assert_int_equal(n, 3);
    assert_true(fabs(full[0] - 1e6) < 1 && fabs(full[1] - 25e6) < 1 && fabs(full[2] - 25e6) < 1);
    assert_true(fabs(bytes) < 1);
    assert_true(fabs(dp_bucket_flush(&bk) - 9e6) < 1);
    assert_true(dp_bucket_flush(&bk) <= 0);
}

/* One NCCL stream per process group: every data-parallel collective waits for the previous one. */
static void test_sharding_collectives_in_issue_order(void **state)
{
    struct sim_case c;
    const struct prog *p;
    int i, prev = -1, chained = 0, colls = 0;

    (void)state;
    run_case(&c, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp",
             "training.global_batch=16", NULL);
    p = c.r.progs[0];
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        int k;
        if (t->kind != TASK_COLL || t->comm != COMM_DP)
            continue;
        colls++;
        for (k = 0; k < t->npred && prev >= 0; k++)
            if (p->preds[t->pred0 + k] == prev)
                chained++;
        prev = i;
    }
    assert_true(colls > 100);
    assert_int_equal(chained, colls - 1);
    free_case(&c);
}

/* ---- ZeRO: memory and traffic ---------------------------------------------------------- */

/*
 * ZeRO Fig. 1 / §5 at N_d = 8 with K = 12: model states per parameter are
 * 16 (DDP), 4 + 12/8 = 5.5 (ZeRO-1), 2 + 14/8 = 3.75 (ZeRO-2), 16/8 = 2
 * (ZeRO-3); the simulated peaks keep those ratios to DDP within 1 %, and
 * the per-GPU peak falls stage by stage.
 */
static void test_sharding_zero_model_state_ratios(void **state)
{
    static const char *const modes[] = { "parallelism.sharding=none", "parallelism.sharding=zero1",
                                         "parallelism.sharding=zero2",
                                         "parallelism.sharding=zero3" };
    static const double want[] = { 16, 5.5, 3.75, 2 };
    double states[4], peak[4];
    size_t i;

    (void)state;
    for (i = 0; i < 4; i++) {
        struct sim_case c;
        run_case(&c, "sharding_7b_8gpu", SYMMETRIC, modes[i], NULL);
        states[i] = model_states(&c);
        peak[i] = c.r.peak_bytes;
        free_case(&c);
    }
    for (i = 1; i < 4; i++) {
        double ratio = states[i] / states[0];
        assert_true(fabs(ratio / (want[i] / 16) - 1) < 0.01);
        assert_true(peak[i] < peak[i - 1]);
    }
}

/*
 * ZeRO §7: per step (one micro-batch) DDP and ZeRO-1/2 move 2 Psi, ZeRO-3
 * 3 Psi (all-gather in forward and backward, reduce-scatter); with
 * stage3_max_reuse_distance 0 nothing is kept between forward and backward.
 */
static void test_sharding_zero_volume(void **state)
{
    static const char *const modes[] = { "parallelism.sharding=none", "parallelism.sharding=zero1",
                                         "parallelism.sharding=zero2",
                                         "parallelism.sharding=zero3" };
    static const double want[] = { 2, 2, 2, 3 };
    size_t i;

    (void)state;
    for (i = 0; i < 4; i++) {
        struct sim_case c;
        struct metrics_dp d;
        run_case(&c, "sharding_7b_8gpu", SYMMETRIC, modes[i], "zero.stage3_max_reuse_distance=0",
                 NULL);
        d = run_metrics(&c.r)->dp;
        assert_true(fabs(d.volume_bytes / d.psi_bytes - want[i]) < 0.02 * want[i]);
        free_case(&c);
    }
}

/* At 1,024 tokens per GPU ZeRO-3's extra all-gathers cost step time over ZeRO-2 (8 GPUs). */
static void test_sharding_zero3_gathers_cost_time(void **state)
{
    struct sim_case z2, z3;

    (void)state;
    run_case(&z2, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=zero2", NULL);
    run_case(&z3, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=zero3", NULL);
    assert_true(z3.r.step_s > z2.r.step_s);
    assert_true(rank0(&z3)->busy[TC_COMM_DP] > 1.3 * rank0(&z2)->busy[TC_COMM_DP]);
    free_case(&z2);
    free_case(&z3);
}

/*
 * stage3_param_persistence_threshold keeps any parameter at or below it whole (DeepSpeed
 * ds_persist, whatever the tensor): above every matrix of the model nothing is gathered
 * and the parameters are whole on every rank (issue 25: it covered norms and biases only).
 */
static void test_sharding_zero3_persistence_covers_matrices(void **state)
{
    struct sim_case def, all;

    (void)state;
    run_case(&def, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=zero3", NULL);
    run_case(&all, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=zero3",
             "zero.stage3_param_persistence_threshold=1e12", NULL);
    assert_true(rank0(&all)->busy[TC_COMM_DP] < 0.7 * rank0(&def)->busy[TC_COMM_DP]);
    assert_true(model_states(&all) > model_states(&def));
    free_case(&def);
    free_case(&all);
}

/* Stage 1 reduces only in the last micro-batch's backward; stage 2 in every one. */
static void test_sharding_zero1_reduces_at_boundary(void **state)
{
    struct sim_case z1, z2;
    int n1, n2;

    (void)state;
    run_case(&z1, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=zero1",
             "training.global_batch=32", NULL);
    run_case(&z2, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=zero2",
             "training.global_batch=32", NULL);
    n1 = test_count_colls(z1.r.progs[0], COMM_DP, COLL_REDUCE_SCATTER);
    n2 = test_count_colls(z2.r.progs[0], COMM_DP, COLL_REDUCE_SCATTER);
    assert_true(n1 > 0);
    assert_int_equal(n2, 4 * n1);
    assert_int_equal(test_count_colls(z1.r.progs[0], COMM_DP, COLL_ALL_GATHER), 1);
    free_case(&z1);
    free_case(&z2);
}

/*
 * The ZeRO-3 rows of tests/validation/runs.csv (SC'21 Table 2: GPT-3 175B and
 * the 530B model on 384-2240 A100s) simulate and fit in 80 GB: the
 * coordinator's fetches follow the compute, so at most the unit being
 * computed and the prefetched ones are gathered (here no more than two).
 */
static void test_sharding_sc21_zero3_rows_fit(void **state)
{
    struct csv_error err;
    struct csv_table *t = csv_read_file(DATA("tests/validation/runs.csv"), &err);
    struct hardware *hw = cfg_load_hardware(DATA("hardware/dgx-a100-80g.yaml"), stderr);
    struct validate_profiles *vp = validate_profiles_new();
    int id, row, seen = 0;

    (void)state;
    assert_non_null(t);
    assert_non_null(hw);
    id = csv_column(t, "id");
    for (row = 0; row < t->nrows; row++) {
        struct scenario s;
        struct sim_opts opts = { 0 };
        struct run r;
        char reason[256];
        double layer;
        if (!strstr(csv_field(t, row, id), "zero3"))
            continue;
        assert_int_equal(validate_row_scenario(t, row, hw, vp, &s, reason, sizeof(reason)), 0);
        assert_int_equal(run_scenario(&s, &opts, &r, reason, sizeof(reason)), 0);
        layer = 2 * workload_params_layer(&s.model, false);
        assert_true(r.fits);
        assert_true((double)r.sim.ranks[0].at_peak[MC_GATHERED] <= 2 * layer * (1 + 1e-6));
        run_release(&r);
        seen++;
    }
    assert_true(seen > 0); /* the file has ZeRO-3 rows, and each was checked */
    validate_profiles_free(vp);
    cfg_free_hw(hw);
    csv_free(t);
}

/* ---- DeepSpeed ZeRO-3 of 2021 (zero.stage3_gather: per_param_sync) ------------------------ */

#define PER_PARAM "zero.stage3_gather=per_param_sync"

/*
 * DeepSpeed 0.3.13-0.4.x gathers and reduces one parameter at a time: Llama 2
 * 7B on 64 GPUs has 130 weight tensors (32 layers x QKV, output projection,
 * gate+up, down; the embedding; the head), so 130 reduce-scatters, and each
 * layer fetch becomes 4 all-gathers (9 fetches are of a one-tensor edge
 * unit: embedding and head in forward, embedding in backward); the bytes
 * moved do not change.
 */
static void test_sharding_zero3_ds2021_per_tensor(void **state)
{
    struct sim_case now, old;
    struct metrics_dp dn, d0;
    int gathers;

    (void)state;
    run_case(&now, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", NULL);
    run_case(&old, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", PER_PARAM, NULL);
    gathers = test_count_colls(now.r.progs[0], COMM_DP, COLL_ALL_GATHER);
    assert_int_equal(test_count_colls(old.r.progs[0], COMM_DP, COLL_ALL_GATHER), 4 * gathers - 9);
    assert_int_equal(test_count_colls(old.r.progs[0], COMM_DP, COLL_REDUCE_SCATTER), 4 * 32 + 2);
    dn = run_metrics(&now.r)->dp;
    d0 = run_metrics(&old.r)->dp;
    assert_true(fabs(d0.volume_bytes - dn.volume_bytes) <= 1e-9 * dn.volume_bytes);
    free_case(&now);
    free_case(&old);
}

/*
 * 2021: every gather synchronizes the device, so nothing overlaps: the step
 * is at least compute plus data-parallel time (DeepSpeed 0.16's prefetch
 * overlaps them: less). Each all-gather has three tasks on the gather stream
 * (the zero fill, DeepSpeed's CPU loop of narrow views and PyTorch <= 1.8's
 * copy-out of the list collective) and each reduce-scatter one copy-in on the
 * reduction stream, each copy task world_size (64) kernels of at least the
 * `launch` cost.
 */
static void test_sharding_zero3_ds2021_serial_copies(void **state)
{
    struct sim_case now, old;
    const struct rank_result *rn, *r0;
    const struct prog *p;
    double sum_now, sum_old, launch;
    int i, gathers, reduces, on_gather = 0, on_reduce = 0;

    (void)state;
    run_case(&now, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", NULL);
    run_case(&old, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", PER_PARAM,
             "zero.overlap_comm=false", NULL); /* the scenario sets it true */
    rn = rank0(&now);
    r0 = rank0(&old);
    sum_now = (double)(rn->busy[TC_FWD] + rn->busy[TC_BWD] + rn->busy[TC_COMM_DP]) / NS_PER_S;
    sum_old = (double)(r0->busy[TC_FWD] + r0->busy[TC_BWD] + r0->busy[TC_COMM_DP]) / NS_PER_S;
    assert_true(now.r.step_s < 0.95 * sum_now);
    assert_true(old.r.step_s >= 0.999 * sum_old);
    p = old.r.progs[0];
    gathers = test_count_colls(p, COMM_DP, COLL_ALL_GATHER);
    reduces = test_count_colls(p, COMM_DP, COLL_REDUCE_SCATTER);
    launch = (double)old.s->hw.eff.launch;
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        if (t->kind != TASK_COMPUTE || t->tcat != TC_COMM_DP)
            continue;
        on_gather += t->stream == ST_DP_GATHER;
        on_reduce += t->stream == ST_COMPUTE; /* overlap_comm false */
        if (t->stream == ST_COMPUTE)
            assert_true((double)t->dur >= 64 * launch);
    }
    assert_int_equal(on_gather, 3 * gathers);
    assert_int_equal(on_reduce, reduces);
    free_case(&now);
    free_case(&old);
}

/*
 * A full recompute re-runs the layer's forward inside backward, and the
 * sub-module hooks release what is reused stage3_max_reuse_distance elements
 * or more later. Llama 2 7B (h 4096): 2 x (elements after it in the layer)
 * is 304 M for QKV, 270 M for the output projection, 90 M for gate+up, 0
 * for down. With the distance at 1e8 QKV and the projection (4 h^2 =
 * 67.1 M elements, 2 B each) are gathered again in each of the 32 layers; at
 * the default 1e9 nothing is.
 */
static void test_sharding_zero3_recompute_regather(void **state)
{
    static const char *const dist[] = { "zero.stage3_max_reuse_distance=1e8",
                                        "zero.stage3_max_reuse_distance=1e9" };
    static const double want[] = { 32.0 * 4 * 4096 * 4096 * 2, 0 };
    int k;

    (void)state;
    for (k = 0; k < 2; k++) {
        struct sim_case none, full;
        struct metrics_dp dn, df;
        run_case(&none, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", PER_PARAM,
                 dist[k], "training.recompute=none", NULL);
        run_case(&full, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", PER_PARAM,
                 dist[k], "training.recompute=full", NULL);
        dn = run_metrics(&none.r)->dp;
        df = run_metrics(&full.r)->dp;
        assert_true(fabs(df.volume_bytes - dn.volume_bytes - want[k]) <= 1e-6 * dn.volume_bytes);
        free_case(&none);
        free_case(&full);
    }
}

/*
 * 2021: _allgather_param takes one narrow view per rank on the CPU after its
 * torch.cuda.synchronize(), so every per-parameter all-gather waits for a
 * world_size-view loop after its zero fill: 64 views on 64 ranks, between
 * 1.05 and 1.5 us each (PyTorch #5388 and #29973 timings of a view op), none
 * on one rank; the loop grows with world_size (24x from 64 to 1,536 ranks).
 */
static void test_sharding_zero3_ds2021_view_loop(void **state)
{
    struct sim_case old;
    const struct prog *p;
    sim_time loop = zero_ds2021_view_loop_time(64);
    int i, j, gathers, waited = 0;

    (void)state;
    assert_int_equal(zero_ds2021_view_loop_time(1), 0);
    assert_true(loop >= 64 * 1050 && loop <= 64 * 1500);
    assert_int_equal(zero_ds2021_view_loop_time(1536), 24 * loop);
    run_case(&old, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=zero3", PER_PARAM, NULL);
    p = old.r.progs[0];
    gathers = test_count_colls(p, COMM_DP, COLL_ALL_GATHER);
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        if (t->kind != TASK_COLL || t->comm != COMM_DP || t->op != COLL_ALL_GATHER)
            continue;
        for (j = 0; j < t->npred; j++) {
            const struct task *v = &p->tasks[p->preds[t->pred0 + j]];
            const struct task *fill;
            if (v->kind != TASK_COMPUTE || v->stream != ST_DP_GATHER || v->dur != loop)
                continue;
            assert_int_equal(v->npred, 1);
            fill = &p->tasks[p->preds[v->pred0]];
            assert_true(fill->kind == TASK_COMPUTE && fill->stream == ST_DP_GATHER);
            waited++;
            break;
        }
    }
    assert_true(gathers > 0);
    assert_int_equal(waited, gathers);
    free_case(&old);
}

/* ---- FSDP ----------------------------------------------------------------------------------- */

/*
 * FULL_SHARD frees each block after its forward: with the rate limiter the root (never
 * resharded after forward) and two blocks are unsharded at once (_limiter_utils.py: two
 * in-flight all-gathers), plus at the turn to backward the last block's forward copy while the
 * CPU, ahead, re-gathers it and prefetches the next (the limiter waits on the free two units
 * back, not on that one; on Hopper, where the GEMMs next to a collective run in two waves, the
 * last forward outlasts both gathers): at most root + 3 blocks. SHARD_GRAD_OP keeps every
 * block from its forward to its backward (the whole model).
 */
static void test_sharding_fsdp_gathered_memory(void **state)
{
    struct sim_case full, gradop;
    const struct model *m;
    double psi, block, root;

    (void)state;
    run_case(&full, "sharding_7b_8gpu", TIMELINE, "parallelism.sharding=fsdp", NULL);
    run_case(&gradop, "sharding_7b_8gpu", TIMELINE, "parallelism.sharding=fsdp_grad_op", NULL);
    m = &full.s->model;
    psi = 2 * workload_params_total(m);
    block = 2 * workload_params_layer(m, false);
    root = 2 * (workload_params_embedding(m) + workload_params_head(m));
    if (!(timeline_max(&full, MC_GATHERED) <= (root + 3 * block) * (1 + 1e-6)))
        fail_msg("FULL_SHARD gathered peak %.0f B > root %.0f + 3 blocks of %.0f",
                 timeline_max(&full, MC_GATHERED), root, block);
    assert_true(timeline_max(&full, MC_GATHERED) >= (root + block) * (1 - 1e-6));
    assert_true(timeline_max(&gradop, MC_GATHERED) >= psi * (1 - 1e-6));
    free_case(&full);
    free_case(&gradop);
}

/*
 * Without limit_all_gathers the forward all-gathers run ahead of compute
 * (here a block's all-gather takes less than its forward, at 4,096 tokens)
 * and more blocks are unsharded at once than the limiter's two.
 */
static void test_sharding_fsdp_limiter(void **state)
{
    struct sim_case on, off;
    double block;

    (void)state;
    run_case(&on, "sharding_7b_8gpu", TIMELINE, "parallelism.sharding=fsdp",
             "training.seq_len=4096", NULL);
    run_case(&off, "sharding_7b_8gpu", TIMELINE, "parallelism.sharding=fsdp",
             "training.seq_len=4096", "fsdp.limit_all_gathers=false", NULL);
    block = 2 * workload_params_layer(&on.s->model, false);
    assert_true(timeline_max(&off, MC_GATHERED) > timeline_max(&on, MC_GATHERED) + 2 * block);
    free_case(&on);
    free_case(&off);
}

/* backward_prefetch none leaves each backward all-gather behind the previous reduce-scatter. */
static void test_sharding_fsdp_backward_prefetch(void **state)
{
    struct sim_case pre, none;

    (void)state;
    run_case(&pre, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp", NULL);
    run_case(&none, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp",
             "fsdp.backward_prefetch=none", NULL);
    assert_true(rank0(&none)->bucket[TC_COMM_DP] > rank0(&pre)->bucket[TC_COMM_DP]);
    assert_true(none.r.step_s > pre.r.step_s);
    free_case(&pre);
    free_case(&none);
}

/* FSDP2 copies each all-gather out on the compute stream: one per block in forward and backward. */
static void test_sharding_fsdp2_copy_out(void **state)
{
    struct sim_case v1, v2;
    const struct prog *p;
    int i, copies = 0;

    (void)state;
    run_case(&v1, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp", NULL);
    run_case(&v2, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp", "fsdp.version=2",
             NULL);
    p = v2.r.progs[0];
    for (i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COMPUTE && p->tasks[i].tcat == TC_COMM_DP &&
            p->tasks[i].stream == ST_COMPUTE)
            copies++;
    /* 32 blocks twice, and the root (not resharded after forward) once. */
    assert_int_equal(copies, 2 * 32 + 1);
    assert_true(v2.r.step_s > v1.r.step_s);
    free_case(&v1);
    free_case(&v2);
}

/*
 * FSDP2's other copies (_fsdp_collectives.py @010ae4a): before each all-gather its rank's
 * shards are cast and copied into the all-gather input on the gather stream (4 + 3 x 2 B per
 * local element: 1/8 of the unit on 8 ranks); after each backward the gradients are copied
 * into the reduce-scatter input on the compute stream (chunk_cat, 2 + 2 B per element at a
 * bf16 reduce), and bf16 and fp32 reductions average in NCCL: no divide kernels.
 */
static void test_sharding_fsdp2_copy_in(void **state)
{
    struct sim_case v2;
    const struct prog *p;
    char label[128];
    int i, agin = 0, rsin = 0, div = 0;
    sim_time out = 0, in = 0;

    (void)state;
    run_case(&v2, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp", "fsdp.version=2",
             NULL);
    p = v2.r.progs[0];
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        if (t->kind != TASK_COMPUTE)
            continue;
        prog_label_text(p, t->label, label, sizeof(label));
        if (strstr(label, "FSDP2 copy-in") && t->stream == ST_DP_GATHER) {
            agin++;
            in = t->dur;
        }
        if (strstr(label, "FSDP2 copy-out"))
            out = t->dur;
        if (strstr(label, "reduce-scatter copy-in") && t->stream == ST_COMPUTE)
            rsin++;
        if (t->stream == ST_DP)
            div++;
    }
    assert_int_equal(agin, 2 * 32 + 1);
    assert_int_equal(rsin, 33);
    assert_int_equal(div, 0);
    /* the last copy-in and copy-out are the root's: 10 B per local element against 4 B per
       unsharded one, 10 / 8 / 4 of the copy-out's bytes (launch aside) */
    assert_true(in > 0 && out > in);
    free_case(&v2);
}

/*
 * FSDP1 assembles each unit's flat gradient (split backward: a cat) on the
 * compute stream, once per unit per micro-batch: 32 blocks + root tasks,
 * each moving 2 x 2 B per trainable element; FSDP2 has none. Before each
 * reduce-scatter (8 ranks: pre-divide factor 4 > 1) a cast/divide task runs
 * on the reduction stream; 7B at fp32 reduce_dtype moves 2+4 B more per
 * element there than at bf16.
 */
static void test_sharding_fsdp_gradient_passes(void **state)
{
    struct sim_case v1, v2, fp32;
    const struct prog *p;
    sim_time flat = 0, div16 = 0, div32 = 0;
    char label[128];
    int i, nflat = 0, ndiv = 0;

    (void)state;
    run_case(&v1, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp", NULL);
    run_case(&v2, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp", "fsdp.version=2",
             NULL);
    run_case(&fp32, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=fsdp",
             "fsdp.reduce_dtype=fp32", NULL);
    p = v1.r.progs[0];
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        prog_label_text(p, t->label, label, sizeof(label));
        if (t->kind == TASK_COMPUTE && t->stream == ST_COMPUTE && strstr(label, "flat gradient")) {
            nflat++;
            flat += t->dur;
        }
        if (t->kind == TASK_COMPUTE && t->stream == ST_DP) {
            ndiv++;
            div16 += t->dur;
        }
    }
    assert_int_equal(nflat, 33);
    assert_int_equal(ndiv, 33);
    p = fp32.r.progs[0];
    for (i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COMPUTE && p->tasks[i].stream == ST_DP)
            div32 += p->tasks[i].dur;
    /* bf16: 2*2 + 2*2/8 B per element; fp32: 2+4 + 2*4 + 2*4/8 B per element */
    assert_true(fabs((double)div32 / (double)div16 - 15.0 / 4.5) < 0.05);
    /* flat gradient 4 B per element vs pre-divide 4.5 B: same elements */
    assert_true(fabs((double)div16 / (double)flat - 4.5 / 4.0) < 0.05);
    p = v2.r.progs[0];
    for (i = 0; i < p->ntasks; i++) {
        prog_label_text(p, p->tasks[i].label, label, sizeof(label));
        assert_null(strstr(label, "flat gradient"));
    }
    free_case(&v1);
    free_case(&v2);
    free_case(&fp32);
}

/* Collectives `op` on the data-parallel groups of program p. */
static int dp_colls(const struct prog *p, int op)
{
    return test_count_colls(p, COMM_DP, op) + test_count_colls(p, COMM_DP_INTRA, op);
}

/*
 * FSDP2 under pipeline parallelism (Llama 2 7B, pp 2 x dp 4, 8 micro-batches; torchtitan's
 * reshard_after_forward false): each of a stage's 16 blocks and its root unit is gathered once
 * a step and reduce-scattered once, after its last backward, however many micro-batches run;
 * resharding after forward gathers a block again for every micro-batch's backward and forward;
 * the unsharded fp32 gradient accumulators of the stage's blocks are alive at the peak.
 * FSDP1 is refused with pipeline parallelism (zero2 there: tests/test_sharding_words.c).
 */
static void test_sharding_fsdp2_under_pipelining(void **state)
{
    struct sim_case keep, reshard;
    const struct prog *p;
    double accum;
    FILE *diag = tmpfile();
    struct cfg_override o[3] = {
        { "parallelism.pp", "2", "parallelism.pp=2" },
        { "parallelism.sharding", "fsdp", "parallelism.sharding=fsdp" },
        { "parallelism.dp", "4", "parallelism.dp=4" },
    };
    char msg[1024];

    (void)state;
    run_case(&keep, "sharding_7b_8gpu", SYMMETRIC, "parallelism.pp=2", "parallelism.dp=4",
             "parallelism.sharding=fsdp", "fsdp.version=2", "fsdp.reshard_after_forward=false",
             "training.global_batch=32", "training.micro_batch=1", "fsdp.reduce_dtype=fp32", NULL);
    p = keep.r.progs[0];
    assert_int_equal(dp_colls(p, COLL_ALL_GATHER), 16 + 1);
    assert_int_equal(dp_colls(p, COLL_REDUCE_SCATTER), 16 + 1);
    accum = 4 * 16 * workload_params_layer(&keep.s->model, false);
    assert_true((double)rank0(&keep)->at_peak[MC_GRADS] >= accum);
    run_case(&reshard, "sharding_7b_8gpu", SYMMETRIC, "parallelism.pp=2", "parallelism.dp=4",
             "parallelism.sharding=fsdp", "fsdp.version=2", "fsdp.reshard_after_forward=true",
             "training.global_batch=32", "training.micro_batch=1", NULL);
    p = reshard.r.progs[0];
    assert_int_equal(dp_colls(p, COLL_REDUCE_SCATTER), 16 + 1);
    assert_int_equal(dp_colls(p, COLL_ALL_GATHER), 16 * (8 + 1) + 1);
    free_case(&keep);
    free_case(&reshard);

    assert_null(cfg_load_scenario(DATA("scenarios/sharding_7b_8gpu.yaml"), o, 3, diag));
    rewind(diag);
    msg[fread(msg, 1, sizeof(msg) - 1, diag)] = '\0';
    assert_non_null(strstr(msg, "FSDP1 (fsdp.version 1) has no pipeline-parallel composition"));
    fclose(diag);
}

/*
 * HYBRID_SHARD on 64 GPUs keeps gathers and reduce-scatters inside the node:
 * its NICs carry only the replicate all-reduce, less than FULL_SHARD's.
 */
static void test_sharding_hsdp_less_nic(void **state)
{
    struct sim_case full, hybrid;
    struct metrics_dp df, dh;

    (void)state;
    run_case(&full, "sharding_7b_64gpu", SYMMETRIC, NULL);
    run_case(&hybrid, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=hsdp", NULL);
    df = run_metrics(&full.r)->dp;
    dh = run_metrics(&hybrid.r)->dp;
    assert_true(df.nic_bytes > 0 && dh.nic_bytes > 0);
    assert_true(dh.nic_bytes < 0.75 * df.nic_bytes);
    assert_true(rank0(&hybrid)->comm_bytes[COMM_DP_INTER] > 0);
    assert_true(rank0(&hybrid)->comm_bytes[COMM_DP] <= 0);
    free_case(&full);
    free_case(&hybrid);
}

/*
 * HSDP with a shard-group size (fsdp.shard_group, torchtitan's data_parallel_shard_degree):
 * 64 ranks in groups of 16 shard the model states 16 ways and all-reduce across the 4 groups;
 * the default is the 8 peers of a node; a group of 4 runs HSDP inside one node.
 */
static void test_sharding_hsdp_shard_group(void **state)
{
    struct sim_case node, g16, one;
    struct layout l;

    (void)state;
    run_case(&node, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=hsdp", NULL);
    run_case(&g16, "sharding_7b_64gpu", SYMMETRIC, "parallelism.sharding=hsdp",
             "fsdp.shard_group=16", NULL);
    layout_init(&l, g16.s);
    assert_int_equal(layout_group_size(&l, COMM_DP_INTRA), 16);
    assert_int_equal(layout_group_size(&l, COMM_DP_INTER), 4);
    layout_init(&l, node.s);
    assert_int_equal(layout_group_size(&l, COMM_DP_INTRA), 8);
    assert_true(test_rel_err((double)rank0(&node)->at_peak[MC_OPTIM],
                             2.0 * (double)rank0(&g16)->at_peak[MC_OPTIM]) < 1e-6);
    assert_true(rank0(&g16)->comm_bytes[COMM_DP_INTER] > 0);
    run_case(&one, "sharding_7b_8gpu", SYMMETRIC, "parallelism.sharding=hsdp", "fsdp.shard_group=4",
             NULL);
    layout_init(&l, one.s);
    assert_int_equal(layout_group_size(&l, COMM_DP_INTER), 2);
    assert_true(rank0(&one)->comm_bytes[COMM_DP_INTER] > 0);
    free_case(&node);
    free_case(&g16);
    free_case(&one);
}

/* Simulating every rank gives the symmetric answer (DESIGN.md "Scale"), for FSDP and HSDP. */
static void test_sharding_all_ranks_matches_symmetric(void **state)
{
    static const char *const modes[] = { "parallelism.sharding=fsdp", "parallelism.sharding=hsdp",
                                         "parallelism.sharding=zero3" };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(modes); i++) {
        struct sim_case sym, all;
        run_case(&sym, "sharding_7b_64gpu", SYMMETRIC, modes[i], "cluster.nodes=2",
                 "parallelism.dp=16", "training.global_batch=32", NULL);
        run_case(&all, "sharding_7b_64gpu", ALL_RANKS, modes[i], "cluster.nodes=2",
                 "parallelism.dp=16", "training.global_batch=32", NULL);
        assert_int_equal(all.r.sim.nranks, 16);
        assert_true(sym.r.sim.step == all.r.sim.step);
        assert_true(fabs(sym.r.peak_bytes - all.r.peak_bytes) < 0.5);
        free_case(&sym);
        free_case(&all);
    }
}

/* The same scenario twice gives the same step, events and peak (STYLE.md "Time and determinism").
 */
static void test_sharding_deterministic(void **state)
{
    static const char *const modes[] = { "parallelism.sharding=zero3", "parallelism.sharding=fsdp",
                                         "parallelism.sharding=hsdp" };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(modes); i++) {
        struct sim_case a, b;
        run_case(&a, "sharding_7b_64gpu", SYMMETRIC, modes[i], "training.global_batch=256", NULL);
        run_case(&b, "sharding_7b_64gpu", SYMMETRIC, modes[i], "training.global_batch=256", NULL);
        assert_true(a.r.sim.step == b.r.sim.step);
        assert_true(a.r.sim.events == b.r.sim.events);
        assert_true(rank0(&a)->peak == rank0(&b)->peak);
        free_case(&a);
        free_case(&b);
    }
}

/* ---- offload ----------------------------------------------------------------------------------
 */

/*
 * ZeRO-Offload makes Llama 2 13B fit one H100 ("up to 13 billion parameters
 * ... on a single GPU", ZeRO-Offload tutorial), and its PCIe and CPU time
 * appear in the breakdown.
 */
static void test_sharding_offload_fits(void **state)
{
    struct sim_case on, off;
    struct metrics_dp d;

    (void)state;
    run_case(&on, "sharding_offload_13b_1gpu", SYMMETRIC, NULL);
    run_case(&off, "sharding_offload_13b_1gpu", SYMMETRIC, "training.offload=none", NULL);
    assert_true(on.r.fits);
    assert_false(off.r.fits);
    assert_true(rank0(&on)->bucket[TC_OFFLOAD] > 0);
    assert_true(rank0(&off)->bucket[TC_OFFLOAD] == 0);
    d = run_metrics(&on.r)->dp;
    /* The updated bf16 weights come back once; gradients go out every micro-batch. */
    assert_true(d.h2d_bytes >= 2 * workload_params_total(&on.s->model));
    assert_true(d.d2h_bytes > d.h2d_bytes);
    free_case(&on);
    free_case(&off);
}

/* CPU Adam: params / host.adam_throughput (1.7 Gparam/s on a DGX H100); torch's is 6x slower. */
static void test_sharding_cpu_adam_time(void **state)
{
    struct sim_case c;
    sim_time ds, pt;

    (void)state;
    run_case(&c, "sharding_offload_13b_1gpu", SYMMETRIC, NULL);
    ds = rules_host_step_time(c.s, 1.7e9);
    assert_true(llabs(ds - (sim_time)1000000000) < 1000);
    c.s->par.sharding = SHARD_FSDP;
    pt = rules_host_step_time(c.s, 1.7e9);
    assert_true(llabs(pt - 6 * ds) < 1000);
    free_case(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sharding_dp_ops_choice),
        cmocka_unit_test(test_sharding_bucket_pour),
        cmocka_unit_test(test_sharding_collectives_in_issue_order),
        cmocka_unit_test(test_sharding_zero_model_state_ratios),
        cmocka_unit_test(test_sharding_zero_volume),
        cmocka_unit_test(test_sharding_zero3_gathers_cost_time),
        cmocka_unit_test(test_sharding_zero3_persistence_covers_matrices),
        cmocka_unit_test(test_sharding_zero1_reduces_at_boundary),
        cmocka_unit_test(test_sharding_sc21_zero3_rows_fit),
        cmocka_unit_test(test_sharding_zero3_ds2021_per_tensor),
        cmocka_unit_test(test_sharding_zero3_ds2021_serial_copies),
        cmocka_unit_test(test_sharding_zero3_recompute_regather),
        cmocka_unit_test(test_sharding_zero3_ds2021_view_loop),
        cmocka_unit_test(test_sharding_fsdp_gathered_memory),
        cmocka_unit_test(test_sharding_fsdp_limiter),
        cmocka_unit_test(test_sharding_fsdp_backward_prefetch),
        cmocka_unit_test(test_sharding_fsdp2_copy_out),
        cmocka_unit_test(test_sharding_fsdp2_copy_in),
        cmocka_unit_test(test_sharding_fsdp_gradient_passes),
        cmocka_unit_test(test_sharding_fsdp2_under_pipelining),
        cmocka_unit_test(test_sharding_hsdp_less_nic),
        cmocka_unit_test(test_sharding_hsdp_shard_group),
        cmocka_unit_test(test_sharding_all_ranks_matches_symmetric),
        cmocka_unit_test(test_sharding_deterministic),
        cmocka_unit_test(test_sharding_offload_fits),
        cmocka_unit_test(test_sharding_cpu_adam_time),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
