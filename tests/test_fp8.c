/*
 * test_fp8.c - FP8 recipes (fp8.c): which projections run FP8 and the bytes and kernels of
 * their casts per recipe (TE v0.10 te.Linear, torchao roofline_utils.py), the torchao
 * small-linear filter, Megatron's fused norm-linear and cached weights, and what the
 * workload keeps in BF16 (fp8.h).
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

#include "config/config.h"
#include "config/schema.h"
#include "model/cost.h"
#include "model/fp8.h"
#include "model/memory.h"
#include "model/workload.h"
#include "support.h"

/* An H100-like part with round rates: memory-bound time is bytes / 2 TB/s + 4 us. */
static void h100ish(struct scenario *s, enum fp8_recipe r)
{
    scenario_defaults(s);
    s->hw.gpu.arch = ARCH_HOPPER;
    s->hw.gpu.sm_count = 132;
    s->hw.gpu.mem_bw_Bps = 2e12;
    s->hw.gpu.flops[DT_BF16] = 1e15;
    s->hw.gpu.flops[DT_FP8] = 2e15;
    cost_default_efficiency(&s->hw.eff);
    s->hw.eff.mem_bw = 1;
    s->hw.eff.launch = 4000;
    s->train.precision = DT_FP8;
    s->train.fp8_recipe = r;
}

/* Time of `kernels` launches moving `bytes`: the cost of fp8.c's passes(). */
static sim_time pass(double bytes, int kernels)
{
    return (sim_time)ceil(bytes / 2e12 * 1e9) + 4000 * kernels;
}

static const struct fp8_proj P = { 8192, 4096, 12288, 1, 4096, 12288, true, 4 };

/*
 * te_delayed through eager code (llm-foundry's te.Linear): X and dY cast + transpose 4 B per
 * element, W 4 B every micro-batch, one kernel each plus an amax update per direction; the
 * input is saved as its FP8 transpose (1 B) and the FP8 weight transpose (1 B per weight)
 * lives to backward; the bias gradient comes out of the dY cast.
 */
static void test_fp8_te_delayed_eager(void **state)
{
    struct scenario s;
    struct fp8_cost c;
    double x = 8192.0 * 4096, w = 4096.0 * 12288, y = 8192.0 * 12288;

    (void)state;
    h100ish(&s, FP8_TE_DELAYED);
    fp8_projection(&s, false, &P, &c);
    assert_true(c.fp8 && c.bias_grad_fused);
    assert_true(llabs(c.fwd - (pass(4 * x, 1) + pass(4 * w, 1) + 4000)) <= 2);
    assert_true(llabs(c.bwd - (pass(4 * y, 1) + 4000)) <= 1);
    assert_true(fabs(c.input_bytes - 1) < 1e-12 && fabs(c.weight_saved - w) < 1e-6);
    assert_true(fp8_weight_copy_bytes(&s, false) < 1e-12);
}

/*
 * Through Megatron's TE modules the norm writes FP8 (the linear only transposes it, 2 B per
 * element) and is_first_microbatch casts the weight once per step (a quarter of it per
 * micro-batch at 4 micro-batches), keeping two FP8 copies (2 B per weight) instead of a
 * saved transpose. te_current adds an amax pass (2 B) before each cast and no history update.
 */
static void test_fp8_te_megatron_and_current(void **state)
{
    struct scenario s;
    struct fp8_cost c;
    double x = 8192.0 * 4096, w = 4096.0 * 12288, y = 8192.0 * 12288;

    (void)state;
    h100ish(&s, FP8_TE_DELAYED);
    fp8_projection(&s, true, &P, &c);
    assert_true(llabs(c.fwd - (pass(2 * x, 1) + (sim_time)ceil(pass(4 * w, 1) / 4.0) + 4000)) <= 2);
    assert_true(c.weight_saved < 1e-12);
    assert_true(fabs(fp8_weight_copy_bytes(&s, true) - 2) < 1e-12);
    h100ish(&s, FP8_TE_CURRENT);
    fp8_projection(&s, false, &P, &c);
    assert_true(llabs(c.fwd - (pass(6 * x, 2) + pass(6 * w, 2))) <= 2);
    assert_true(llabs(c.bwd - pass(6 * y, 2)) <= 1);
}

/*
 * torchao (roofline_utils.py): tensorwise X and dY 6 B in three kernels, 4 B in two under
 * torch.compile; W 5 B forward (three kernels) and 3 B backward, never fused. Rowwise: X and
 * dY 8 B (6 compiled) in two kernels, W 3 B forward, 7 B backward. Nothing changes in what
 * is saved (BF16 input, weight reference).
 */
static void test_fp8_torchao(void **state)
{
    struct scenario s;
    struct fp8_cost c;
    double x = 8192.0 * 4096, w = 4096.0 * 12288, y = 8192.0 * 12288;

    (void)state;
    h100ish(&s, FP8_TORCHAO_TENSORWISE);
    fp8_projection(&s, false, &P, &c);
    assert_true(llabs(c.fwd - (pass(6 * x, 3) + pass(5 * w, 3))) <= 2);
    assert_true(llabs(c.bwd - (pass(3 * w, 1) + pass(6 * y, 3))) <= 2);
    assert_true(c.input_bytes < 1e-12 && c.weight_saved < 1e-12 && !c.bias_grad_fused);
    s.train.compile = true;
    fp8_projection(&s, false, &P, &c);
    assert_true(llabs(c.fwd - (pass(4 * x, 2) + pass(5 * w, 3))) <= 2);
    h100ish(&s, FP8_TORCHAO_ROWWISE);
    fp8_projection(&s, false, &P, &c);
    assert_true(llabs(c.fwd - (pass(8 * x, 2) + pass(3 * w, 1))) <= 2);
    assert_true(llabs(c.bwd - (pass(7 * w, 2) + pass(8 * y, 2))) <= 2);
}

/*
 * auto_filter_small_kn with training.fp8_filter_small: tensorwise keeps K <= 4096 and
 * N <= 1024 in BF16, rowwise N <= 2048, K <= 1024, or N <= 4096 and K <= 2048; without the
 * option every linear converts; a dimension not divisible by 16 never converts; bf16 never.
 */
static void test_fp8_small_linear_filter(void **state)
{
    struct scenario s;
    struct fp8_cost c;
    struct fp8_proj pr = P;

    (void)state;
    h100ish(&s, FP8_TORCHAO_TENSORWISE);
    pr.k_glob = 4096, pr.n_glob = 1024;
    fp8_projection(&s, false, &pr, &c);
    assert_true(c.fp8);
    s.train.fp8_filter_small = true;
    fp8_projection(&s, false, &pr, &c);
    assert_false(c.fp8);
    pr.n_glob = 1040;
    fp8_projection(&s, false, &pr, &c);
    assert_true(c.fp8);
    s.train.fp8_recipe = FP8_TORCHAO_ROWWISE;
    pr.k_glob = 2048, pr.n_glob = 4096;
    fp8_projection(&s, false, &pr, &c);
    assert_false(c.fp8);
    pr.k_glob = 4096, pr.n_glob = 4096;
    fp8_projection(&s, false, &pr, &c);
    assert_true(c.fp8);
    pr.n_glob = 4100;
    fp8_projection(&s, false, &pr, &c);
    assert_false(c.fp8);
    s.train.precision = DT_BF16;
    pr.n_glob = 4096;
    fp8_projection(&s, false, &pr, &c);
    assert_false(c.fp8);
}

/*
 * In a whole layer under te_delayed on a DGX H100: the four projections run FP8 and the LM
 * head stays BF16 (the same time as in a BF16 run), and the layer saves less (FP8 transposed
 * inputs) but keeps the FP8 weight transposes; the loader defaults fp8_recipe to te_delayed
 * for precision fp8 and refuses a recipe without fp8 precision.
 */
static void test_fp8_workload_layer(void **state)
{
    struct hardware *hw = cfg_load_hardware("dgx-h100", stderr);
    struct scenario s, b;
    struct shard sh;
    struct layer_cost l8, l16;
    struct edge_cost h8, h16;
    struct cfg_error err;
    int nfp8 = 0;

    (void)state;
    assert_non_null(hw);
    scenario_defaults(&s);
    s.hw = *hw;
    s.model.name = "m";
    s.model.layers = 4;
    s.model.hidden = 4096;
    s.model.heads = 32;
    s.model.vocab = 50368;
    s.model.max_seq = 2048;
    s.model.bias = true;
    s.nodes = 1;
    s.gpus = 8;
    s.train.seq_len = 2048;
    s.train.global_batch = 16;
    s.train.micro_batch = 2;
    s.train.precision = DT_FP8;
    cfg_derive_defaults(&s, 0);
    assert_int_equal(s.train.fp8_recipe, FP8_TE_DELAYED);
    memset(&err, 0, sizeof(err));
    assert_int_equal(scenario_finalize(&s, &err), 0);
    b = s;
    b.train.precision = DT_BF16;
    b.train.fp8_recipe = FP8_NONE;
    workload_shard(&s, &sh);
    workload_layer(&s, &sh, false, &l8);
    workload_head(&s, &sh, &h8);
    workload_shard(&b, &sh);
    workload_layer(&b, &sh, false, &l16);
    workload_head(&b, &sh, &h16);
    for (int i = 0; i < l8.nops; i++)
        nfp8 += l8.ops[i].fp8;
    assert_int_equal(nfp8, 4);
    assert_true(h8.fwd == h16.fwd && h8.bwd == h16.bwd);
    assert_true(l8.fwd[PART_MLP] < l16.fwd[PART_MLP]);
    assert_true(fabs(l8.act[RC_NONE] - l16.act[RC_NONE]) > 1e6);
    s.train.precision = DT_BF16;
    s.train.fp8_recipe = FP8_TORCHAO_ROWWISE;
    assert_int_not_equal(scenario_finalize(&s, &err), 0);
    assert_non_null(strstr(err.msg, "fp8_recipe 'torchao_rowwise' needs precision 'fp8'"));
    cfg_free_hw(hw);
}

/* The bytes of program p's data-parallel all-gathers. */
static double dp_gather_bytes(const struct prog *p)
{
    double b = 0;

    for (int i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COLL && p->tasks[i].comm == COMM_DP &&
            p->tasks[i].op == COLL_ALL_GATHER)
            b += p->tasks[i].bytes;
    return b;
}

/*
 * FP8 parameters (training.fp8_params; Megatron --fp8-param-gather, NeMo fp8_param_gather): a
 * projection weight is FP8 data + transpose, 2 B, where the 16-bit weight and its two cached
 * FP8 copies take 4 B (memory.c), so the parameters' memory falls by the projections' 2 B;
 * the distributed optimizer gathers the projections in 1 B. Without TE's recipe, refused.
 */
static void test_fp8_params_memory_and_gather(void **state)
{
    const char *text = "hardware: dgx-h100\nworkload: llama3-8b\ncluster: {nodes: 1}\n"
                       "training: {seq_len: 4096, global_batch: 16, precision: fp8, "
                       "framework: megatron}\n"
                       "parallelism: {tp: 2, sharding: zero1, sequence_parallel: true}\n";
    const char *on[] = { "training.fp8_params=true", NULL };
    const char *bad[] = { "training.fp8_params=true", "training.fp8_recipe=torchao_tensorwise",
                          NULL };
    struct scenario *a = test_load("t.yaml", text, NULL), *b = test_load("t.yaml", text, on);
    struct state_bytes sa, sb;
    struct run ra, rb;
    double share;
    struct cfg_override o[2];
    FILE *diag = tmpfile();
    char msg[512];

    (void)state;
    memory_state_bytes(a, &sa);
    memory_state_bytes(b, &sb);
    share = sa.fp8_copies / 2;               /* the projections' share of the parameters */
    assert_true(share > 0.8 && share < 0.9); /* Llama 3 8B: untied 128K-vocab embeddings */
    assert_false(sb.fp8_copies > 0);
    assert_true(test_rel_err(sa.gathered, 2) < 1e-12);
    assert_true(test_rel_err(sb.gathered, 2 - share) < 1e-12);
    test_simulate(a, false, &ra);
    test_simulate(b, false, &rb);
    assert_true(test_rel_err((double)rb.sim.ranks[0].at_peak[MC_PARAMS],
                             (double)ra.sim.ranks[0].at_peak[MC_PARAMS] * 2 / (2 + 2 * share)) <
                1e-3);
    assert_true(test_rel_err(dp_gather_bytes(rb.progs[0]),
                             dp_gather_bytes(ra.progs[0]) * (2 - share) / 2) < 1e-3);
    run_release(&ra);
    run_release(&rb);
    cfg_free(a);
    cfg_free(b);
    for (int i = 0; i < 2; i++)
        assert_int_equal(cfg_override_init(&o[i], bad[i], stderr), 0);
    assert_null(cfg_load_scenario_mem("t.yaml", text, strlen(text), o, 2, diag));
    for (int i = 0; i < 2; i++)
        cfg_override_release(&o[i]);
    rewind(diag);
    msg[fread(msg, 1, sizeof(msg) - 1, diag)] = '\0';
    fclose(diag);
    assert_non_null(strstr(msg, "fp8_params needs precision 'fp8' with a Transformer Engine "
                                "fp8_recipe (te_delayed or te_current), not 'torchao_tensorwise'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp8_te_delayed_eager),
        cmocka_unit_test(test_fp8_te_megatron_and_current),
        cmocka_unit_test(test_fp8_torchao),
        cmocka_unit_test(test_fp8_small_linear_filter),
        cmocka_unit_test(test_fp8_workload_layer),
        cmocka_unit_test(test_fp8_params_memory_and_gather),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
