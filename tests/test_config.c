/*
 * test_config.c - the scenario/hardware/workload loader: good files and their
 * defaults, references, --set overrides, cfg_set, scenario_finalize rules,
 * byte-exact diagnostics, the table of bad inputs (tests/bad/), hostile input,
 * and the generated key reference in docs/yaml-reference.md.
 *
 * Runs from the repository root with SIMTRAIN_DATA=tests/fixtures, so bare
 * names resolve to the test fixtures, never to the shipped hardware/.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, mkdtemp */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/schema.h"
#include "model/cost.h"
#include "base/util.h"

#define GiB 1073741824.0

/* ---- helpers ---------------------------------------------------------------------------- */

static char *slurp(FILE *f)
{
    long n = ftell(f);
    char *s = xmalloc((size_t)n + 1);

    rewind(f);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Load `path` with `--set` arguments; return the diagnostics printed (heap string). */
static char *load(const char *path, const char *const *sets, int nsets, struct scenario **out)
{
    struct cfg_override ovr[8];
    FILE *f = tmpfile();

    assert_non_null(f);
    assert_true(nsets <= 8);
    for (int i = 0; i < nsets; i++)
        assert_int_equal(cfg_override_init(&ovr[i], sets[i], f), 0);
    *out = cfg_load_scenario(path, ovr, nsets, f);
    for (int i = 0; i < nsets; i++)
        cfg_override_release(&ovr[i]);
    return slurp(f);
}

/* Load a file that must be valid. */
static struct scenario *load_ok(const char *path, const char *const *sets, int nsets)
{
    struct scenario *s;
    char *diag = load(path, sets, nsets, &s);

    if (!s)
        fail_msg("%s did not load:\n%s", path, diag);
    assert_string_equal(diag, "");
    free(diag);
    return s;
}

static char *load_mem(const char *path, const char *text, size_t len, struct scenario **out)
{
    FILE *f = tmpfile();

    *out = cfg_load_scenario_mem(path, text, len, NULL, 0, f);
    return slurp(f);
}

static void assert_near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want)))
        fail_msg("got %.17g, want %.17g", got, want);
}

static int setup(void **state)
{
    (void)state;
    return setenv("SIMTRAIN_DATA", "tests/fixtures", 1);
}

/* ---- good files ------------------------------------------------------------------------ */

/* good.yaml: every given key lands in its field, in base units; references resolve next to the
 * scenario folder; the calibration file overrides only the efficiencies it names. */
static void test_cfg_load_full_scenario(void **state)
{
    struct scenario *s = load_ok("tests/fixtures/scenarios/good.yaml", NULL, 0);

    (void)state;
    assert_string_equal(s->name, "good");
    assert_string_equal(s->description, "tiny-llama on two tiny-box nodes");
    assert_string_equal(s->hw.name, "tiny-box");
    assert_string_equal(s->hw.path, "tests/fixtures/hardware/tiny-box.yaml");
    assert_string_equal(s->model.name, "tiny-llama");
    assert_int_equal(s->nodes, 2);
    assert_int_equal(s->gpus, 16);
    assert_int_equal(s->par.tp, 2);
    assert_int_equal(s->par.pp, 2);
    assert_int_equal(s->par.dp, 4);
    assert_true(s->par.sequence_parallel);
    assert_int_equal(s->par.sharding, SHARD_ZERO1);
    assert_int_equal(s->train.seq_len, 2048);
    assert_int_equal(s->train.global_batch, 64);
    assert_int_equal(s->train.micro_batch, 2);
    assert_int_equal(s->train.recompute, RC_SELECTIVE);
    assert_near(s->train.tokens, 2e12);
    assert_near(s->train.price_gpu_hour, 2.5);
    assert_near(s->train.overhead_bytes, 2 * GiB);
    assert_near(s->ddp.bucket_bytes, 50 * 1048576.0);
    assert_int_equal(s->sim.step_overhead, 1500000);
    /* hardware */
    assert_string_equal(s->hw.gpu.model, "Tiny GPU 80GB");
    assert_int_equal(s->hw.gpu.arch, ARCH_HOPPER);
    assert_near(s->hw.gpu.mem_bytes, 80 * GiB);
    assert_near(s->hw.gpu.mem_bw_Bps, 3.35e12);
    assert_near(s->hw.gpu.flops[DT_BF16], 989e12);
    assert_near(s->hw.gpu.flops[DT_FP8], 1979e12);
    assert_true(!(s->hw.gpu.flops[DT_FP32] > 0));
    assert_near(s->hw.nvlink.bw_Bps, 450e9);
    assert_int_equal(s->hw.nvlink.latency, 700);
    assert_near(s->hw.net.nic_bw_Bps, 50e9); /* 400 Gb/s */
    assert_int_equal(s->hw.net.fabric_levels, 2);
    assert_int_equal(s->hw.nodes, 4);
    /* calibration: gemm_max and launch replaced; tile_n from the hardware file kept */
    assert_string_equal(s->hw.calibration, "tests/fixtures/hardware/calibration/tiny-box.yaml");
    assert_near(s->hw.eff.gemm_max, 0.75);
    assert_int_equal(s->hw.eff.launch, 3000);
    assert_int_equal(s->hw.eff.tile_n, 256);
    assert_int_equal(s->hw.eff.gemm_latency, 5000);
    assert_int_equal(s->hw.ncoll_cal, 2);
    assert_int_equal(s->hw.coll_cal[0].op, COLL_ALL_REDUCE);
    assert_int_equal(s->hw.coll_cal[0].algo, ALGO_NVLS);
    assert_int_equal(s->hw.coll_cal[0].proto, PROTO_SIMPLE);
    assert_false(s->hw.coll_cal[0].inter_node);
    assert_int_equal(s->hw.coll_cal[0].latency, 20000);
    assert_near(s->hw.coll_cal[0].bus_bw_Bps, 480e9);
    assert_int_equal(s->hw.coll_cal[1].algo, ALGO_AUTO);
    assert_true(s->hw.coll_cal[1].inter_node);
    /* workload and derived values */
    assert_int_equal(s->model.kv_heads, 4);
    assert_int_equal(s->model.head_dim, 64);
    assert_int_equal(s->model.act, ACT_SWIGLU);
    cfg_free(s);
}

/* minimal.yaml: every documented default appears, derived values follow the file. */
static void test_cfg_load_minimal_defaults(void **state)
{
    struct scenario *s = load_ok("tests/fixtures/scenarios/minimal.yaml", NULL, 0);
    static const int order[DIM_COUNT] = { DIM_TP, DIM_CP, DIM_EP, DIM_DP, DIM_PP };

    (void)state;
    assert_string_equal(s->name, "minimal");
    assert_int_equal(s->nodes, 1);
    assert_int_equal(s->gpus, 4);
    assert_int_equal(s->par.dp, 4);
    assert_int_equal(s->par.tp, 1);
    assert_int_equal(s->par.vpp, 1);
    assert_int_equal(s->par.schedule, SCHED_1F1B);
    assert_memory_equal(s->par.order, order, sizeof(order));
    assert_int_equal(s->train.micro_batch, 1);
    assert_int_equal(s->train.precision, DT_BF16);
    assert_true(s->train.master_weights);
    assert_int_equal(s->train.grad_dtype, DT_FP32);
    assert_int_equal(s->train.lora.rank, 16);
    assert_near(s->train.lora.alpha, 32);
    assert_int_equal(s->train.lora.targets, LORA_Q | LORA_V);
    assert_near(s->train.overhead_bytes, 1.5 * GiB);
    assert_true(!(s->train.tokens > 0));
    assert_near(s->ddp.bucket_bytes, 25 * 1048576.0);
    assert_near(s->ddp.first_bucket_bytes, 1048576.0);
    assert_near(s->zero.reduce_bucket_size, 5e8);
    assert_near(s->zero.prefetch_bucket_size, 5e7);
    assert_near(s->zero.param_persistence_threshold, 1e5);
    assert_false(s->zero.overlap_comm);
    assert_true(s->zero.contiguous_gradients);
    assert_int_equal(s->fsdp.param_dtype, DT_BF16);
    assert_int_equal(s->fsdp.version, 1);
    assert_int_equal(s->sim.straggler_rank, -1);
    assert_near(s->sim.straggler_slowdown, 1);
    /* hardware without nvlink, network or efficiency blocks */
    assert_true(!(s->hw.nvlink.bw_Bps > 0));
    assert_int_equal(s->hw.net.nics_per_node, 0);
    assert_int_equal(s->hw.pcie.lanes, 16);
    assert_false(s->hw.pcie.p2p);
    assert_int_equal(s->hw.pcie.latency, 1000);
    assert_near(s->hw.host.mem_bw_Bps, 200e9);
    assert_near(s->hw.host.adam_Pps, 1e9);
    assert_null(s->hw.calibration);
    /* workload defaults and derivations */
    assert_int_equal(s->model.kv_heads, 6);
    assert_int_equal(s->model.head_dim, 64);
    assert_int_equal(s->model.ffn_hidden, 4 * 384);
    assert_int_equal(s->model.max_seq, 1024);
    assert_int_equal(s->model.pos, POS_LEARNED);
    assert_int_equal(s->model.norm, NORM_LAYERNORM);
    cfg_free(s);
}

/* The schema's efficiency defaults are exactly cost_default_efficiency() (cost.c). */
static void test_cfg_efficiency_defaults_match_cost(void **state)
{
    struct hardware *hw = cfg_load_hardware("tiny-pcie", stderr);
    struct efficiency want;

    (void)state;
    assert_non_null(hw);
    cost_default_efficiency(&want);
    assert_near(hw->eff.gemm_max, want.gemm_max);
    assert_int_equal(hw->eff.gemm_latency, want.gemm_latency);
    assert_int_equal(hw->eff.tile_m, want.tile_m);
    assert_int_equal(hw->eff.tile_n, want.tile_n);
    assert_near(hw->eff.attn_flash, want.attn_flash);
    assert_near(hw->eff.attn_standard, want.attn_standard);
    assert_near(hw->eff.mem_bw, want.mem_bw);
    assert_near(hw->eff.softmax_fwd, want.softmax_fwd);
    assert_near(hw->eff.softmax_bwd, want.softmax_bwd);
    assert_int_equal(hw->eff.launch, want.launch);
    cfg_free_hw(hw);
}

/* Every enumeration word the loader accepts is the one names.c prints for the value. */
static void test_cfg_enum_spellings_match_names(void **state)
{
    struct scenario *s = load_ok("tests/fixtures/scenarios/good.yaml", NULL, 0);
    static const char *const shardings[] = { "none", "zero1",        "zero2", "zero3",
                                             "fsdp", "fsdp_grad_op", "hsdp",  "fsdp_no_shard" };
    static const char *const schedules[] = { "1f1b", "gpipe", "interleaved", "zb-h1" };
    static const char *const recomputes[] = { "none", "selective", "full" };
    static const char *const optimizers[] = {
        "adamw",           "adam8bit", "sgd", "adafactor", "torchao_adamw8bit", "torchao_adamw4bit",
        "torchao_adamwfp8"
    };
    static const char *const finetunes[] = { "full", "lora", "qlora" };
    static const char *const algos[] = { "auto", "ring", "tree", "nvls", "nvls_tree", "hier" };
    static const char *const protos[] = { "auto", "ll", "ll128", "simple" };
    static const char *const archs[] = { "volta", "ampere", "ada", "hopper", "blackwell" };
    static const char *const dtypes[] = { "bf16", "fp16", "fp8", "fp32" };
    struct cfg_error err;

    (void)state;
#define CHECK_NAMES(key, list, field, namefn)                                                      \
    for (size_t i = 0; i < ARRAY_LEN(list); i++) {                                                 \
        assert_int_equal(cfg_set(s, key, list[i], &err), 0);                                       \
        assert_string_equal(namefn(field), list[i]);                                               \
    }
    /* good.yaml pipelines: zero2 as DeepSpeed's stage keeps its word (else it reads as FSDP2) */
    assert_int_equal(cfg_set(s, "parallelism.zero2_impl", "deepspeed", &err), 0);
    CHECK_NAMES("parallelism.sharding", shardings, s->par.sharding, sharding_name);
    CHECK_NAMES("parallelism.schedule", schedules, s->par.schedule, schedule_name);
    CHECK_NAMES("training.recompute", recomputes, s->train.recompute, recompute_name);
    CHECK_NAMES("training.optimizer", optimizers, s->train.optimizer, optimizer_name);
    CHECK_NAMES("training.finetune", finetunes, s->train.finetune, finetune_name);
    CHECK_NAMES("nccl.algo", algos, s->nccl.algo, algo_name);
    CHECK_NAMES("nccl.proto", protos, s->nccl.proto, proto_name);
    CHECK_NAMES("hardware.gpu.arch", archs, s->hw.gpu.arch, arch_name);
    CHECK_NAMES("training.precision", dtypes, s->train.precision, dtype_name);
#undef CHECK_NAMES
    cfg_free(s);
}

/* A path reference is relative to the scenario file; an inline mapping is a workload too. */
static void test_cfg_references_path_and_inline(void **state)
{
    struct scenario *s = load_ok("tests/fixtures/scenarios/paths.yaml", NULL, 0);

    (void)state;
    assert_string_equal(s->hw.name, "tiny-pcie");
    assert_string_equal(s->hw.path, "tests/fixtures/hardware/tiny-pcie.yaml");
    assert_string_equal(s->model.name, "inline-mini");
    assert_int_equal(s->model.layers, 4);
    assert_int_equal(s->model.head_dim, 64);
    cfg_free(s);
}

/* Bare names fall back to $SIMTRAIN_DATA; without it, the error lists every place tried. */
static void test_cfg_reference_search(void **state)
{
    const char *text = "hardware: tiny-pcie\nworkload: tiny-gpt\n"
                       "training: {seq_len: 1024, global_batch: 8}\n";
    struct scenario *s;
    char *diag, *want;

    (void)state;
    diag = load_mem("/nonexistent/scenarios/x.yaml", text, strlen(text), &s);
    assert_string_equal(diag, "");
    assert_non_null(s);
    assert_string_equal(s->hw.path, "tests/fixtures/hardware/tiny-pcie.yaml");
    cfg_free(s);
    free(diag);

    unsetenv("SIMTRAIN_DATA");
    diag = load_mem("/nonexistent/scenarios/x.yaml", text, strlen(text), &s);
    setenv("SIMTRAIN_DATA", "tests/fixtures", 1);
    assert_null(s);
    want =
        xasprintf("/nonexistent/scenarios/x.yaml:1:11: error: hardware 'tiny-pcie' not found\n"
                  "    1 | hardware: tiny-pcie\n"
                  "      |           ^~~~~~~~~\n"
                  "note: tried /nonexistent/hardware/tiny-pcie.yaml, %s/hardware/tiny-pcie.yaml\n",
                  cfg_data_dir());
    assert_memory_equal(diag, want, strlen(want));
    free(want);
    free(diag);
}

/* ---- overrides and cfg_set ------------------------------------------------------------------ */

/* --set edits the tree before typed extraction: scenario keys, absent sections, lists,
 * the referenced hardware and workload, and the reference itself. */
static void test_cfg_overrides_edit_tree(void **state)
{
    const char *sets[] = { "parallelism.tp=4",
                           "hardware.gpu.memory=40 GiB",
                           "workload.layers=16",
                           "zero.overlap_comm=true",
                           "training.lora.targets=[q, k, v, o]",
                           "hardware.network.nic_bandwidth=200 Gb/s" };
    struct scenario *s = load_ok("tests/fixtures/scenarios/good.yaml", sets, ARRAY_LEN(sets));

    (void)state;
    assert_int_equal(s->par.tp, 4);
    assert_int_equal(s->par.dp, 2);
    assert_near(s->hw.gpu.mem_bytes, 40 * GiB);
    assert_int_equal(s->model.layers, 16);
    assert_true(s->zero.overlap_comm);
    assert_int_equal(s->train.lora.targets, LORA_Q | LORA_K | LORA_V | LORA_O);
    assert_near(s->hw.net.nic_bw_Bps, 25e9);
    cfg_free(s);

    {
        const char *swap[] = { "hardware=tiny-pcie",   "workload=tiny-gpt",
                               "cluster.nodes=1",      "parallelism.tp=1",
                               "parallelism.pp=1",     "parallelism.sequence_parallel=false",
                               "training.seq_len=1024" };

        s = load_ok("tests/fixtures/scenarios/good.yaml", swap, ARRAY_LEN(swap));
        assert_string_equal(s->hw.name, "tiny-pcie");
        assert_string_equal(s->model.name, "tiny-gpt");
        assert_int_equal(s->gpus, 4);
        cfg_free(s);
    }
}

/* Override errors point into the argument, shown as a --set command line. */
static void test_cfg_override_diagnostics(void **state)
{
    static const struct {
        const char *set, *want;
    } cases[] = {
        { "parallelism.tpp=2",
          "<command line>:1:19: error: unknown key 'tpp' in 'parallelism' (did you mean 'tp'?)\n"
          "    1 | --set parallelism.tpp=2\n"
          "      |                   ^~~\n" },
        { "hardware.network.nic_bandwidth=400 Gb",
          "<command line>:1:42: error: unknown unit 'Gb' for a bandwidth (did you mean 'Gb/s'?)\n"
          "    1 | --set hardware.network.nic_bandwidth=400 Gb\n"
          "      |                                          ^~\n" },
        { "parallelism.tp=3",
          "<command line>:1:22: error: tp * pp * cp (3 * 2 * 1 = 6) does not divide the GPU "
          "count (16)\n"
          "    1 | --set parallelism.tp=3\n"
          "      |                      ^\n" },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct scenario *s;
        char *diag = load("tests/fixtures/scenarios/good.yaml", &cases[i].set, 1, &s);

        assert_null(s);
        assert_string_equal(diag, cases[i].want);
        free(diag);
    }
}

/* key=value arguments split at the first '='; a missing '=' or key is an error. */
static void test_cfg_override_init(void **state)
{
    struct cfg_override o;
    FILE *f = tmpfile();
    char *diag;

    (void)state;
    assert_int_equal(cfg_override_init(&o, "hardware.network.cpu=amd=x", NULL), 0);
    assert_string_equal(o.key, "hardware.network.cpu");
    assert_string_equal(o.value, "amd=x");
    cfg_override_release(&o);
    assert_int_equal(cfg_override_init(&o, "training.tokens=", NULL), 0);
    assert_string_equal(o.value, "");
    cfg_override_release(&o);
    assert_int_equal(cfg_override_init(&o, "parallelism.dp", f), -1);
    assert_int_equal(cfg_override_init(&o, "=4", f), -1);
    diag = slurp(f);
    assert_string_equal(diag,
                        "<command line>:1:7: error: expected key=value, got 'parallelism.dp'\n"
                        "    1 | --set parallelism.dp\n"
                        "      |       ^~~~~~~~~~~~~~\n"
                        "<command line>:1:7: error: missing key before '=' in '=4'\n"
                        "    1 | --set =4\n"
                        "      |       ^~\n");
    free(diag);
}

/* cfg_set applies the loader's checks and re-derives what depended on the key it changed. */
static void test_cfg_set_checks_and_rederives(void **state)
{
    struct scenario *s = load_ok("tests/fixtures/scenarios/good.yaml", NULL, 0);
    struct cfg_error err;

    (void)state;
    assert_int_equal(cfg_set(s, "cluster.nodes", "4", &err), 0);
    assert_int_equal(scenario_finalize(s, &err), 0);
    assert_int_equal(s->gpus, 32);
    assert_int_equal(s->par.dp, 8);
    assert_int_equal(cfg_set(s, "parallelism.tp", "4", &err), 0);
    assert_int_equal(scenario_finalize(s, &err), 0);
    assert_int_equal(s->par.dp, 4);
    /* A key set through cfg_set stays set when a later cfg_set re-derives the defaults. */
    assert_int_equal(cfg_set(s, "parallelism.framework", "megatron", &err), 0);
    assert_false(s->ddp.overlap); /* Megatron's overlap_grad_reduce default */
    assert_int_equal(cfg_set(s, "ddp.overlap", "true", &err), 0);
    assert_int_equal(cfg_set(s, "parallelism.tp", "4", &err), 0);
    assert_int_equal(scenario_finalize(s, &err), 0);
    assert_true(s->ddp.overlap);
    assert_int_equal(cfg_set(s, "parallelism.sharding", "zero3", &err), 0);
    assert_true(s->zero.overlap_comm); /* DeepSpeed default for stage 3 */
    assert_int_equal(cfg_set(s, "zero.stage3_gather", "per_param_sync", &err), 0);
    assert_false(s->zero.overlap_comm); /* the 2021 releases' default for every stage */
    assert_int_equal(cfg_set(s, "zero.stage3_gather", "coalesced", &err), 0);
    assert_true(s->zero.overlap_comm);
    assert_int_equal(cfg_set(s, "training.precision", "fp16", &err), 0);
    assert_int_equal(s->fsdp.reduce_dtype, DT_FP16);
    assert_int_equal(cfg_set(s, "simulation.step_overhead", "2 ms", &err), 0);
    assert_int_equal(s->sim.step_overhead, 2000000);
    assert_int_equal(cfg_set(s, "name", "renamed", &err), 0);
    assert_string_equal(s->name, "renamed");

    assert_int_equal(cfg_set(s, "parallelism.tpp", "2", &err), -1);
    assert_string_equal(err.msg, "unknown key 'tpp' in 'parallelism' (did you mean 'tp'?)");
    assert_int_equal(cfg_set(s, "training.memory_overhead", "3", &err), -1);
    assert_string_equal(err.path, "training.memory_overhead");
    assert_string_equal(err.msg, "missing unit in '3' (expected bytes, e.g. '80 GiB')");
    assert_int_equal(cfg_set(s, "parallelism.tp", "0", &err), -1);
    assert_string_equal(err.msg, "'tp' must be positive, got '0'");
    assert_int_equal(cfg_set(s, "hardware", "tiny-pcie", &err), -1);
    assert_int_equal(cfg_set(s, "training.seq_len", "[1,", &err), -1);
    assert_int_equal(s->par.tp, 4); /* failed sets change nothing */
    cfg_free(s);
}

/* ---- scenario_finalize on scenarios built in code ---------------------------------------------
 */

static void build(struct scenario *s, struct hardware **hw, struct model **m)
{
    *hw = cfg_load_hardware("tiny-box", stderr);
    *m = cfg_load_model("tests/fixtures/workloads/tiny-llama.yaml", stderr);
    assert_non_null(*hw);
    assert_non_null(*m);
    scenario_defaults(s);
    s->hw = **hw;
    s->model = **m;
    s->nodes = 1;
    s->train.seq_len = 1024;
    s->train.global_batch = 32;
}

/* scenario_defaults + finalize derive dp, gpus and the interleaved schedule; a copy can be
 * mutated and re-checked without any YAML. */
static void test_cfg_finalize_code_built(void **state)
{
    struct hardware *hw;
    struct model *m;
    struct scenario s, copy;
    struct cfg_error err;
    FILE *f = tmpfile();
    char *diag;

    (void)state;
    build(&s, &hw, &m);
    assert_int_equal(scenario_finalize(&s, &err), 0);
    assert_int_equal(s.gpus, 8);
    assert_int_equal(s.par.dp, 8);
    copy = s;
    copy.par.tp = 2;
    copy.par.pp = 2;
    copy.par.vpp = 2;
    copy.par.dp = 0;
    assert_int_equal(scenario_finalize(&copy, &err), 0);
    assert_int_equal(copy.par.dp, 2);
    assert_int_equal(copy.par.schedule, SCHED_INTERLEAVED);
    copy.par.tp = 3;
    copy.par.dp = 0;
    assert_int_equal(scenario_finalize(&copy, &err), -1);
    assert_string_equal(err.path, "parallelism.tp");
    cfg_report_error(&copy, &err, f);
    diag = slurp(f);
    assert_string_equal(diag, "error: parallelism.tp: tp * pp * cp (3 * 2 * 1 = 6) does not "
                              "divide the GPU count (8)\n");
    free(diag);
    cfg_free_hw(hw);
    cfg_free_model(m);
}

/* Nonsense in a code-built scenario is an error, never a crash: zeros, negatives, products
 * that overflow 32 bits, a GPU-less node, an empty model. */
static void test_cfg_finalize_rejects_nonsense(void **state)
{
    struct hardware *hw;
    struct model *m;
    struct scenario base, s;
    struct cfg_error err;

    (void)state;
    build(&base, &hw, &m);
#define REJECT(stmt, where)                                                                        \
    do {                                                                                           \
        s = base;                                                                                  \
        stmt;                                                                                      \
        assert_int_equal(scenario_finalize(&s, &err), -1);                                         \
        assert_string_equal(err.path, where);                                                      \
    } while (0)
    REJECT(s.par.tp = 0, "parallelism.tp");
    REJECT(s.par.pp = -1, "parallelism.pp");
    REJECT((s.par.dp = 1 << 30, s.par.tp = 1 << 30, s.par.pp = 1 << 30, s.par.cp = 1 << 30),
           "parallelism.dp");
    REJECT(s.hw.gpus_per_node = 0, "hardware.node.gpus");
    REJECT(s.model.heads = 0, "workload.heads");
    REJECT(s.model.kv_heads = -3, "workload.kv_heads");
    REJECT(s.train.micro_batch = 0, "training.micro_batch");
    REJECT(s.nodes = 1 << 30, "cluster.nodes");
    REJECT(s.par.order[0] = 7, "parallelism.order");
    REJECT(s.train.precision = DT_NF4, "training.precision");
    REJECT(s.sim.straggler_rank = -2, "simulation.straggler_rank");
    REJECT(s.sim.straggler_slowdown = NAN, "simulation.straggler_slowdown");
#undef REJECT
    cfg_free_hw(hw);
    cfg_free_model(m);
}

/* Semantic errors are reported at the key's value; a defaulted key at its section, a
 * defaulted hardware key at the scenario's reference, a workload key in the workload file. */
static void test_cfg_report_error_locations(void **state)
{
    struct scenario *s = load_ok("tests/fixtures/scenarios/good.yaml", NULL, 0);
    static const struct {
        const char *path, *want;
    } cases[] = {
        { "parallelism.tp", "tests/fixtures/scenarios/good.yaml:18:7: error: m\n"
                            "   18 |   tp: 2\n"
                            "      |       ^\n" },
        { "parallelism.cp", "tests/fixtures/scenarios/good.yaml:17:1: error: m\n"
                            "   17 | parallelism:\n"
                            "      | ^~~~~~~~~~~\n" },
        { "workload.heads", "tests/fixtures/workloads/tiny-llama.yaml:5:8: error: m\n"
                            "    5 | heads: 8\n"
                            "      |        ^\n" },
        { "hardware.gpu.flops.fp32", "tests/fixtures/hardware/tiny-box.yaml:10:3: error: m\n"
                                     "   10 |   flops:\n"
                                     "      |   ^~~~~\n" },
        { "hardware.nosuch", "tests/fixtures/scenarios/good.yaml:4:11: error: m\n"
                             "    4 | hardware: tiny-box\n"
                             "      |           ^~~~~~~~\n" },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct cfg_error err = { .msg = "m" };
        FILE *f = tmpfile();
        char *diag;

        snprintf(err.path, sizeof(err.path), "%s", cases[i].path);
        cfg_report_error(s, &err, f);
        diag = slurp(f);
        assert_string_equal(diag, cases[i].want);
        free(diag);
    }
    cfg_free(s);
}

/* ---- the bad-input table ----------------------------------------------------------------------
 */

/* Check one case of the table; print what differs. Returns 1 on a mismatch. */
static int check_bad_case(const char *file, const char *set, const char *first)
{
    char *path = xasprintf("tests/bad/%s.yaml", file);
    struct scenario *s;
    char *diag = load(path, set ? &set : NULL, set ? 1 : 0, &s);
    char *nl = strchr(diag, '\n');
    int bad;

    if (nl)
        *nl = '\0';
    bad = s || strcmp(diag, first) != 0;
    if (bad)
        print_error("case %s%s%s:\n  want: %s\n  got:  %s%s\n", file, set ? " --set " : "",
                    set ? set : "", first, diag, s ? " (and it loaded)" : "");
    cfg_free(s);
    free(diag);
    free(path);
    return bad;
}

/* Every line of tests/bad/cases.tsv (file, --set argument or -, first line) fails to load with
 * exactly that first diagnostic line; the table has at least 30 cases. */
static void test_cfg_bad_inputs_table(void **state)
{
    char *table = read_file("tests/bad/cases.tsv", NULL);
    int cases = 0, failures = 0;

    (void)state;
    assert_non_null(table);
    for (char *line = table, *next; *line; line = next) {
        char *set, *first;

        next = strchr(line, '\n');
        next = next ? (*next = '\0', next + 1) : line + strlen(line);
        if (line[0] == '#' || line[0] == '\0')
            continue;
        set = strchr(line, '\t');
        assert_non_null(set);
        *set++ = '\0';
        first = strchr(set, '\t');
        assert_non_null(first);
        *first++ = '\0';
        failures += check_bad_case(line, strcmp(set, "-") == 0 ? NULL : set, first);
        cases++;
    }
    free(table);
    assert_true(cases >= 30);
    assert_int_equal(failures, 0);
}

/* Full diagnostics are byte-exact: the error, the source line, the caret, and notes. */
static void test_cfg_full_diagnostics(void **state)
{
    static const struct {
        const char *file, *want;
    } cases[] = {
        { "tests/bad/unknown_key.yaml",
          "tests/bad/unknown_key.yaml:7:3: error: unknown key 'seq_lenn' in 'training' (did you "
          "mean 'seq_len'?)\n"
          "    7 |   seq_lenn: 2048\n"
          "      |   ^~~~~~~~\n"
          "tests/bad/unknown_key.yaml:6:1: error: missing required key 'seq_len' in 'training'\n"
          "    6 | training:\n"
          "      | ^~~~~~~~\n" },
        { "tests/bad/duplicate_key.yaml",
          "tests/bad/duplicate_key.yaml:12:3: error: duplicate key 'tp' (first defined at line "
          "10)\n"
          "   12 |   tp: 4\n"
          "      |   ^~\n"
          "tests/bad/duplicate_key.yaml:10:3: note: 'tp' first defined here\n"
          "   10 |   tp: 2\n"
          "      |   ^~\n" },
        { "tests/bad/syntax_error.yaml",
          "tests/bad/syntax_error.yaml:11:1: error: invalid YAML: did not find expected ',' or "
          "']'\n"
          "   11 | \n"
          "      | ^\n"
          "tests/bad/syntax_error.yaml:10:10: note: while parsing a flow sequence\n"
          "   10 |   order: [tp, dp\n"
          "      |          ^\n" },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct scenario *s;
        char *diag = load(cases[i].file, NULL, 0, &s);

        assert_null(s);
        assert_string_equal(diag, cases[i].want);
        free(diag);
    }
}

/* ---- hostile input ------------------------------------------------------------------------------
 */

/* Deep nesting, huge and odd numbers, overflowing degree products, control bytes and broken
 * UTF-8 give diagnostics and NULL, never a crash (run under ASan/UBSan in CI). */
static void test_cfg_hostile_inputs(void **state)
{
    static const char *const prefix =
        "hardware: tiny-box\nworkload: tiny-llama\ntraining: {seq_len: 2048, global_batch: 64}\n";
    static const char *const bodies[] = {
        "parallelism: {dp: 1073741824, tp: 1073741824, pp: 1073741824, cp: 1073741824}\n",
        "parallelism: {tp: 99999999999999999999999}\n",
        "parallelism: {tp: 1e999}\n",
        "parallelism: {tp: -0}\n",
        "training: {memory_overhead: -0 GiB}\n",
        "training: {tokens: 1e308 E}\n",
        "simulation: {step_overhead: 1e300 s}\n",
        "cluster: {nodes: 1073741824}\n",
        "name: \"\\xff\\uD800\"\n",
        "workload: {layers: 1, hidden: 1073741824, heads: 1, vocab: 1}\n",
        "\x01\x02\n",
        "key: \xc3\x28\n",
        "? [complex, key]\n: value\n",
        "training: !!str {a: b}\n",
        "&anchor hardware: x\n",
    };
    char deep[1000];
    size_t n = 0;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(bodies); i++) {
        char *text = xasprintf("%s%s", prefix, bodies[i]);
        struct scenario *s;
        char *diag = load_mem("hostile.yaml", text, strlen(text), &s);

        if (s)
            fail_msg("hostile input %zu loaded:\n%s", i, text);
        assert_true(strncmp(diag, "hostile.yaml", 12) == 0 || strncmp(diag, "error", 5) == 0);
        free(diag);
        free(text);
    }
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{a: ");
    {
        struct scenario *s;
        char *diag = load_mem("deep.yaml", deep, n, &s);

        assert_null(s);
        assert_non_null(strstr(diag, "nesting deeper than 32 levels"));
        free(diag);
    }
    {
        struct strbuf sb;
        struct scenario *s;
        char *diag;

        sb_init(&sb);
        for (int i = 0; i < 5000; i++)
            sb_addf(&sb, "k%d: %d\n", i, i);
        diag = load_mem("wide.yaml", sb.buf, sb.len, &s);
        assert_null(s);
        assert_non_null(strstr(diag, "error: more than 4096 keys in one mapping"));
        free(diag);
        sb_release(&sb);
    }
    {
        const char *dev = "hardware: /dev/zero\nworkload: tiny-llama\n";
        struct scenario *s;
        char *diag = load_mem("dev.yaml", dev, strlen(dev), &s);

        assert_null(s);
        assert_non_null(strstr(diag, "cannot read hardware file '/dev/zero': not a regular file"));
        free(diag);
    }
    {
        const char nul[] = "hardware: tiny-box\0workload: x\n";
        struct scenario *s;
        char *diag = load_mem("nul.yaml", nul, sizeof(nul) - 1, &s);

        assert_null(s);
        assert_non_null(strstr(diag, "control characters are not allowed"));
        free(diag);
    }
}

/* ---- standalone hardware and workloads, and the reference ---------------------------------- */

/* cfg_load_hardware / cfg_load_model accept names (data directories) and paths; errors give
 * NULL and a diagnostic. */
static void test_cfg_standalone_loads(void **state)
{
    struct hardware *hw = cfg_load_hardware("tiny-box", stderr);
    struct model *m = cfg_load_model("tiny-moe", stderr);
    FILE *f = tmpfile();
    char *diag;

    (void)state;
    assert_non_null(hw);
    assert_string_equal(hw->name, "tiny-box");
    assert_int_equal(hw->gpus_per_node, 8);
    assert_int_equal(hw->ncoll_cal, 2);
    cfg_free_hw(hw);
    assert_non_null(m);
    assert_string_equal(m->name, "tiny-moe");
    assert_int_equal(m->moe.experts, 4);
    assert_int_equal(m->moe.ffn_hidden, 896); /* defaults to the model's ffn_hidden */
    assert_int_equal(m->kv_heads, 2);
    cfg_free_model(m);
    hw = cfg_load_hardware("tests/bad/hw/bad-memory.yaml", f);
    assert_null(hw);
    assert_null(cfg_load_model("no-such-model-xyz", f));
    cfg_free_hw(NULL);
    cfg_free_model(NULL);
    cfg_free(NULL);
    diag = slurp(f);
    assert_non_null(strstr(diag, "tests/bad/hw/bad-memory.yaml:6:11: error: missing unit in '80'"));
    assert_non_null(strstr(diag, "error: workload 'no-such-model-xyz' not found\n"));
    free(diag);
}

/* docs/yaml-reference.md embeds the reference generated from the schema, unchanged. */
static void test_cfg_reference_doc_is_current(void **state)
{
    FILE *f = tmpfile();
    char *gen, *doc;

    (void)state;
    cfg_write_reference(f);
    gen = slurp(f);
    doc = read_file("docs/yaml-reference.md", NULL);
    assert_non_null(doc);
    if (!strstr(doc, gen))
        fail_msg("docs/yaml-reference.md is out of date: paste the output of "
                 "cfg_write_reference() (simtrain schema) into its key reference section");
    assert_non_null(strstr(gen, "| `parallelism.dp` | integer >= 1 | GPUs / (tp * pp * cp) |"));
    free(gen);
    free(doc);
}

/* The yaml block that follows `heading` in the reference (heap string). */
static char *doc_block(const char *doc, const char *heading)
{
    const char *h = strstr(doc, heading), *b, *e;

    assert_non_null(h);
    b = strstr(h, "```yaml\n");
    assert_non_null(b);
    b += 8;
    e = strstr(b, "```\n");
    assert_non_null(e);
    return xstrndup(b, (size_t)(e - b));
}

/* The examples in docs/yaml-reference.md load: hardware with the calibration example, the
 * workload, and the scenario (its references swapped for fixtures of a fitting shape). */
static void test_cfg_doc_examples_load(void **state)
{
    char *doc = read_file("docs/yaml-reference.md", NULL);
    char *hw_text, *cal_text, *model_text, *scen_text, *dir, *cal_path, *hw_with_cal;
    char tmpl[] = "/tmp/simtrain-docXXXXXX";
    struct hardware *hw;
    struct model *m;
    struct scenario *s;
    struct cfg_override ovr[2];
    FILE *f;

    (void)state;
    assert_non_null(doc);
    hw_text = doc_block(doc, "## Hardware file");
    cal_text = doc_block(doc, "## Calibration file");
    model_text = doc_block(doc, "## Workload file");
    scen_text = doc_block(doc, "## Scenario file");

    dir = mkdtemp(tmpl);
    assert_non_null(dir);
    cal_path = xasprintf("%s/cal.yaml", dir);
    f = fopen(cal_path, "w");
    assert_non_null(f);
    fputs(cal_text, f);
    fclose(f);
    hw_with_cal = xasprintf("%scalibration: cal.yaml\n", hw_text);
    {
        char *hw_path = xasprintf("%s/dgx-h100.yaml", dir);

        hw = cfg_load_hardware_mem(hw_path, hw_with_cal, strlen(hw_with_cal), stderr);
        free(hw_path);
    }
    assert_non_null(hw);
    assert_near(hw->gpu.flops[DT_FP8], 1979e12);
    assert_near(hw->eff.gemm_max, 0.81);
    assert_int_equal(hw->ncoll_cal, 1);
    cfg_free_hw(hw);
    remove(cal_path);
    remove(dir);

    m = cfg_load_model_mem("docs/llama2-7b.yaml", model_text, strlen(model_text), stderr);
    assert_non_null(m);
    assert_int_equal(m->ffn_hidden, 11008);
    cfg_free_model(m);

    assert_int_equal(cfg_override_init(&ovr[0], "hardware=tiny-box", NULL), 0);
    assert_int_equal(cfg_override_init(&ovr[1],
                                       "workload={layers: 80, hidden: 8192, heads: 64, "
                                       "kv_heads: 8, ffn_hidden: 28672, vocab: 128256}",
                                       NULL),
                     0);
    s = cfg_load_scenario_mem("docs/70b_256gpu.yaml", scen_text, strlen(scen_text), ovr, 2, stderr);
    assert_non_null(s);
    assert_int_equal(s->gpus, 256);
    assert_int_equal(s->par.schedule, SCHED_INTERLEAVED);
    cfg_free(s);
    cfg_override_release(&ovr[0]);
    cfg_override_release(&ovr[1]);
    free(hw_text);
    free(cal_text);
    free(model_text);
    free(scen_text);
    free(cal_path);
    free(hw_with_cal);
    free(doc);
}

/*
 * A peak so low that one step could not fit the clock is refused where it is written
 * (`bf16: 1e-20 FLOPS` gave a faster step and MFU 1.9e37 %): below 1 GFLOP/s by the floor of
 * every FLOP/s key; above it, 70b_256gpu's model FLOPs per step over 2 GFLOP/s by the step
 * range (on tiny-box, which has no clock model for the peak to contradict). A slow but
 * representable peak (1 TFLOP/s) loads there; on dgx-h100 its clock model (1.07 PFLOP/s at
 * the highest clock) contradicts it, and that is refused too.
 */
static void test_cfg_step_range_tiny_flops(void **state)
{
    const char *tiny = "hardware.gpu.flops.bf16=1e-20 FLOPS";
    const char *low[] = { "hardware=tests/fixtures/hardware/tiny-box.yaml",
                          "hardware.gpu.flops.bf16=2e9 FLOPS" };
    const char *slow[] = { "hardware=tests/fixtures/hardware/tiny-box.yaml",
                           "hardware.gpu.flops.bf16=1 TFLOPS" };
    struct scenario *s;
    char *diag = load("scenarios/gpt2_1gpu.yaml", &tiny, 1, &s);

    (void)state;
    assert_null(s);
    assert_string_equal(diag,
                        "<command line>:1:31: error: 'bf16' must be at least 1.00 GFLOP/s, got "
                        "'1e-20 FLOPS'\n"
                        "    1 | --set hardware.gpu.flops.bf16=1e-20 FLOPS\n"
                        "      |                               ^~~~~~~~~~~\n");
    free(diag);
    diag = load("scenarios/70b_256gpu.yaml", low, 2, &s);
    assert_null(s);
    assert_string_equal(diag,
                        "<command line>:1:31: error: a bf16 peak of 2.00 GFLOP/s makes one step "
                        "last at least 3.68e+06 s even at 100 % MFU; a step may last at most "
                        "1000000 s (11.6 days)\n"
                        "    1 | --set hardware.gpu.flops.bf16=2e9 FLOPS\n"
                        "      |                               ^~~~~~~~~\n");
    free(diag);
    cfg_free(load_ok("scenarios/gpt2_1gpu.yaml", slow, 2));
    diag = load("scenarios/gpt2_1gpu.yaml", &slow[1], 1, &s);
    assert_null(s);
    assert_non_null(strstr(diag, "the clock model gives a bf16 peak of 1.07 PFLOP/s"));
    free(diag);
}

/*
 * A UTF-8 byte-order mark may open a YAML 1.2 stream: a scenario that starts with one loads
 * like the same text without it, and a diagnostic on its first line counts columns after the
 * mark (libyaml, told the encoding, read the mark as a column and misplaced the first key).
 */
static void test_cfg_byte_order_mark(void **state)
{
    static const char text[] = "\xEF\xBB\xBFhardware: tiny-pcie\n"
                               "workload: tiny-gpt\n"
                               "training:\n  seq_len: 1024\n  global_batch: 8\n";
    static const char typo[] = "\xEF\xBB\xBFhardwar: tiny-pcie\n";
    struct scenario *s, *plain;
    char *diag;

    (void)state;
    diag = load_mem("bom.yaml", text, sizeof(text) - 1, &s);
    assert_string_equal(diag, "");
    free(diag);
    assert_non_null(s);
    diag = load_mem("plain.yaml", text + 3, sizeof(text) - 4, &plain);
    free(diag);
    assert_non_null(plain);
    assert_int_equal(s->gpus, plain->gpus);
    assert_int_equal(s->train.global_batch, plain->train.global_batch);
    assert_string_equal(s->model.name, plain->model.name);
    cfg_free(s);
    cfg_free(plain);
    diag = load_mem("bom.yaml", typo, sizeof(typo) - 1, &s);
    assert_null(s);
    assert_non_null(strstr(diag, "bom.yaml:1:1: error: unknown key 'hardwar' (did you mean "
                                 "'hardware'?)\n"
                                 "    1 | hardwar: tiny-pcie\n"
                                 "      | ^~~~~~~\n"));
    free(diag);
}

/* A list of flags names each once: `targets: [q, q, q]` is refused at the repeated item. */
static void test_cfg_flags_listed_twice(void **state)
{
    const char *set = "training.lora.targets=[q, v, q]";
    struct scenario *s;
    char *diag = load("scenarios/qlora_7b_4090.yaml", &set, 1, &s);

    (void)state;
    assert_null(s);
    assert_string_equal(diag, "<command line>:1:36: error: 'q' is listed twice in 'targets' "
                              "(first at 1:30)\n"
                              "    1 | --set training.lora.targets=[q, v, q]\n"
                              "      |                                    ^\n");
    free(diag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfg_byte_order_mark),
        cmocka_unit_test(test_cfg_flags_listed_twice),
        cmocka_unit_test(test_cfg_step_range_tiny_flops),
        cmocka_unit_test(test_cfg_load_full_scenario),
        cmocka_unit_test(test_cfg_load_minimal_defaults),
        cmocka_unit_test(test_cfg_efficiency_defaults_match_cost),
        cmocka_unit_test(test_cfg_enum_spellings_match_names),
        cmocka_unit_test(test_cfg_references_path_and_inline),
        cmocka_unit_test(test_cfg_reference_search),
        cmocka_unit_test(test_cfg_overrides_edit_tree),
        cmocka_unit_test(test_cfg_override_diagnostics),
        cmocka_unit_test(test_cfg_override_init),
        cmocka_unit_test(test_cfg_set_checks_and_rederives),
        cmocka_unit_test(test_cfg_finalize_code_built),
        cmocka_unit_test(test_cfg_finalize_rejects_nonsense),
        cmocka_unit_test(test_cfg_report_error_locations),
        cmocka_unit_test(test_cfg_bad_inputs_table),
        cmocka_unit_test(test_cfg_full_diagnostics),
        cmocka_unit_test(test_cfg_hostile_inputs),
        cmocka_unit_test(test_cfg_standalone_loads),
        cmocka_unit_test(test_cfg_reference_doc_is_current),
        cmocka_unit_test(test_cfg_doc_examples_load),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
