/* test_size.c - the program-size estimate (strategy/size.h) against the programs built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "strategy/size.h"
#include "strategy/strategy.h"
#include "support.h"

struct size_case {
    const char *path;
    const char *sets[12];
};

/*
 * Every shipped scenario, and layouts that switch on each source of tasks the estimate
 * counts: TP with and without sequence parallelism, asynchronous reductions and userbuffers
 * overlap, context-parallel rings, expert all-to-alls, full and selective recomputation,
 * interleaved and zero-bubble schedules, uneven stages, DDP with small buckets (PyTorch and
 * Megatron), ZeRO 1-3 with small buckets, the 2021 ZeRO-3 path, offload, FSDP 1 and 2, HSDP.
 */
static const struct size_case cases[] = {
    { "scenarios/405b_16k.yaml", { NULL } },
    { "scenarios/405b_16k.yaml", { "training.recompute=full", NULL } },
    { "scenarios/70b_256gpu.yaml", { NULL } },
    { "scenarios/70b_256gpu.yaml", { "parallelism.tp_comm_overlap=true", NULL } },
    { "scenarios/70b_256gpu.yaml", { "parallelism.cp=2", "parallelism.dp=4", NULL } },
    { "scenarios/70b_256gpu.yaml",
      { "parallelism.cp=4", "parallelism.dp=2", "parallelism.tp_comm_overlap=true", NULL } },
    { "scenarios/70b_256gpu.yaml", { "training.recompute=full", NULL } },
    { "scenarios/70b_256gpu.yaml", { "training.recompute=selective", NULL } },
    { "scenarios/70b_256gpu.yaml",
      { "parallelism.sequence_parallel=false", "parallelism.tp_async_allreduce=false", NULL } },
    { "scenarios/70b_256gpu.yaml",
      { "parallelism.schedule=zb-h1", "parallelism.vpp=1", "training.recompute=full", NULL } },
    { "scenarios/70b_256gpu.yaml",
      { "parallelism.schedule=zb-h1", "parallelism.vpp=1", "training.global_batch=32", NULL } },
    { "scenarios/70b_256gpu.yaml", { "parallelism.schedule=gpipe", "parallelism.vpp=1", NULL } },
    { "scenarios/70b_256gpu_fsdp.yaml", { NULL } },
    { "scenarios/70b_256gpu_tp4pp8.yaml", { NULL } },
    { "scenarios/7b_ddp_8gpu.yaml", { NULL } },
    { "scenarios/7b_ddp_8gpu.yaml", { "ddp.bucket_size=1 MiB", "ddp.overlap=false", NULL } },
    { "scenarios/7b_ddp_8gpu.yaml", { "ddp.impl=megatron", "ddp.grad_accum_fusion=false", NULL } },
    { "scenarios/7b_ddp_8gpu.yaml",
      { "parallelism.sharding=zero1", "parallelism.framework=megatron", "ddp.impl=megatron",
        NULL } },
    { "scenarios/ddp_16gpu_2node.yaml", { NULL } },
    { "scenarios/ddp_8gpu.yaml", { NULL } },
    { "scenarios/ddp_8gpu.yaml",
      { "ddp.bucket_size=64 KiB", "ddp.first_bucket_size=1 KiB", NULL } },
    { "scenarios/finetune_7b_1gpu.yaml", { "training.lora.dropout=0.1", NULL } },
    { "scenarios/gpt2_1gpu.yaml", { NULL } },
    { "scenarios/gpt2_1gpu.yaml", { "workload.layers=1000", NULL } },
    { "scenarios/mixtral_8x7b_64gpu.yaml", { NULL } },
    { "scenarios/mixtral_8x7b_64gpu.yaml", { "training.recompute=full", NULL } },
    { "scenarios/mixtral_8x7b_64gpu.yaml", { "parallelism.cp=2", "parallelism.dp=8", NULL } },
    { "scenarios/mixtral_8x7b_64gpu.yaml",
      { "parallelism.tp=2", "parallelism.dp=8", "parallelism.ep=4",
        "parallelism.sequence_parallel=true", "parallelism.tp_comm_overlap=true",
        "training.recompute=full" } },
    { "scenarios/qlora_7b_4090.yaml", { NULL } },
    { "scenarios/qlora_7b_4090.yaml", { "training.recompute=none", NULL } },
    { "scenarios/sharding_7b_64gpu.yaml", { NULL } },
    { "scenarios/sharding_7b_64gpu.yaml",
      { "parallelism.sharding=hsdp", "training.global_batch=512", NULL } },
    { "scenarios/sharding_7b_8gpu.yaml", { NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=zero2", "zero.reduce_bucket_size=1e6", NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=zero1", "zero.reduce_bucket_size=1e6", NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=zero3", "zero.stage3_gather=per_param_sync",
        "training.recompute=full", NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=zero3", "training.recompute=full", "training.global_batch=64",
        NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=fsdp", "fsdp.version=2", "training.global_batch=64", NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=fsdp_grad_op", "training.global_batch=64", NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=zero3", "training.offload=params", "training.global_batch=64",
        NULL } },
    { "scenarios/sharding_7b_8gpu.yaml",
      { "parallelism.sharding=zero2", "training.offload=optimizer", "training.global_batch=64",
        "zero.reduce_bucket_size=1e6", NULL } },
    { "scenarios/sharding_offload_13b_1gpu.yaml", { "training.recompute=full", NULL } },
    /* context parallelism wide enough that its ring dominates: the estimate is exact there */
    { "scenarios/70b_256gpu.yaml",
      { "parallelism.cp=32", "parallelism.dp=8", "parallelism.tp=1", "parallelism.pp=1",
        "parallelism.vpp=1", "parallelism.schedule=1f1b", "parallelism.sequence_parallel=false",
        "training.recompute=full", "parallelism.sharding=none", "training.global_batch=32" } },
    { "tests/fixtures/scenarios/good.yaml", { NULL } },
    { "tests/fixtures/scenarios/minimal.yaml", { NULL } },
};

/*
 * The estimate is an upper bound of the largest stage program on every case, and within a
 * factor of 4 of it (a bound that allowed anything would refuse nothing).
 */
static void test_size_bounds_real_programs(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct scenario *s = test_load(cases[i].path, NULL, cases[i].sets);
        struct prog **progs = xcalloc((size_t)s->par.pp, sizeof(*progs));
        struct prog_size z;
        struct layout l;
        char reason[256];
        int most = 0;

        layout_init(&l, s);
        strategy_program_size(s, &z);
        if (strategy_build(s, &l, progs, reason, sizeof(reason)))
            fail_msg("case %zu (%s): %s", i, cases[i].path, reason);
        for (int st = 0; st < s->par.pp; st++) {
            most = progs[st]->ntasks > most ? progs[st]->ntasks : most;
            prog_free(progs[st]);
        }
        if (!(z.tasks >= most && z.tasks <= 4.0 * most))
            fail_msg("case %zu (%s %s): estimate %.0f, largest program %d tasks", i, cases[i].path,
                     cases[i].sets[0] ? cases[i].sets[0] : "", z.tasks, most);
        free(progs);
        cfg_free(s);
    }
}

/* The first error line `simtrain FILE --set ...` would print, from the loader itself. */
static void load_error(const char *path, const char *const *sets, char *out, size_t n)
{
    struct cfg_override ovr[4];
    FILE *diag = tmpfile();
    struct scenario *s;
    int k = 0;

    for (; sets[k]; k++)
        assert_int_equal(cfg_override_init(&ovr[k], sets[k], stderr), 0);
    s = cfg_load_scenario(path, ovr, k, diag);
    assert_null(s);
    rewind(diag);
    if (!fgets(out, (int)n, diag))
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(diag);
    for (int i = 0; i < k; i++)
        cfg_override_release(&ovr[i]);
}

/*
 * The loader refuses each way of asking for an unreasonable program, at the setting that
 * causes it, with the limit: one-byte DDP buckets, one-element ZeRO buckets, a billion
 * micro-batches, a hundred million layers; at once (no program is built).
 */
static void test_size_limits_refused_at_load(void **state)
{
    static const struct {
        const char *path, *sets[4], *want;
    } refused[] = {
        { "scenarios/ddp_8gpu.yaml",
          { "ddp.bucket_size=1 B", NULL },
          "<command line>:1:23: error: ddp.bucket_size 1 B makes 6.36e+09 gradient buckets per "
          "step, each a collective of its own: a GPU's program would hold about 6.67e+09 tasks, "
          "more than the 8388608 (2^23) a program may hold: about 0.8 GiB of memory" },
        { "scenarios/sharding_7b_8gpu.yaml",
          { "parallelism.sharding=zero2", "zero.reduce_bucket_size=1", NULL },
          "<command line>:1:31: error: zero.reduce_bucket_size 1 makes 6.87e+09 gradient "
          "buckets per step, each a collective of its own: a GPU's program would hold about "
          "7.22e+09 tasks, more than the 8388608 (2^23) a program may hold: about 0.8 GiB of "
          "memory" },
        { "scenarios/gpt2_1gpu.yaml",
          { "training.global_batch=1073741824", "training.micro_batch=1", NULL },
          "<command line>:1:29: error: global_batch / (micro_batch * dp) = 1073741824 / (1 * 1) "
          "= 1073741824 micro-batches per step, each simulated as its own tasks: a GPU's program "
          "would hold about 7.44e+10 tasks, more than the 8388608 (2^23) a program may hold: "
          "about 0.8 GiB of memory" },
        { "tests/fixtures/scenarios/minimal.yaml",
          { "workload.layers=100000000", NULL },
          "<command line>:1:23: error: 100000000 layers (100000000 on the largest pipeline "
          "stage) in 2 micro-batches: a GPU's program would hold about 8.69e+08 tasks, more "
          "than the 8388608 (2^23) a program may hold: about 0.8 GiB of memory" },
        /* a hundred million GPT-2 layers: the step's FLOPs are refused first, at the workload */
        { "scenarios/gpt2_1gpu.yaml",
          { "workload.layers=100000000", NULL },
          "scenarios/gpt2_1gpu.yaml:13:11: error: one step of 'gpt2-124m' (2.72e+21 model FLOPs) "
          "lasts at least 2.75e+06 s on 1 GPU of 989 TFLOP/s bf16 even at 100 % MFU; a step may "
          "last at most 1000000 s (11.6 days)" },
    };
    char got[1024];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(refused); i++) {
        load_error(refused[i].path, refused[i].sets, got, sizeof(got));
        assert_string_equal(got, refused[i].want);
    }
}

/* The 100,000-layer GPT-2 of tests/cli/deep_model.sh stays within the limit. */
static void test_size_deep_model_within_limit(void **state)
{
    static const char *const sets[] = { "workload.layers=100000", NULL };
    struct scenario *s = test_load("scenarios/gpt2_1gpu.yaml", NULL, sets);
    struct prog_size z;

    (void)state;
    strategy_program_size(s, &z);
    assert_true(z.tasks <= STRATEGY_MAX_TASKS);
    assert_true(z.tasks >= 4.8e6);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_bounds_real_programs),
        cmocka_unit_test(test_size_limits_refused_at_load),
        cmocka_unit_test(test_size_deep_model_within_limit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
