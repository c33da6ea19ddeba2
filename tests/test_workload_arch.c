/*
 * test_workload_arch.c - the architecture variants the workload grew for imported Hugging Face
 * configs (model/arch.h): parameter counts of the corpus models against the counts computed
 * from their modeling code (research for issue 16, architectures.md, which reproduce the
 * published totals), sliding-window attention in the cost and in the simulated step, per-head
 * q/k norms, gated GeLU and soft-capping.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/schema.h"
#include "model/workload.h"
#include "run/run.h"

static struct hardware *h100;

/* Equal to the byte or element: counts and byte totals are whole numbers held in doubles. */
static bool same(double a, double b)
{
    return fabs(a - b) < 0.5;
}

static int setup(void **state)
{
    (void)state;
    h100 = cfg_load_hardware("dgx-h100", stderr);
    return h100 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cfg_free_hw(h100);
    return 0;
}

/* One architecture: shapes, the variant flags, and the expected counts. */
struct arch_case {
    const char *name;
    int layers, hidden, heads, kv_heads, head_dim, ffn, vocab, max_seq;
    enum ffn_act act;
    enum norm_kind norm;
    enum pos_emb pos;
    bool tied, bias, qkv_bias, qk_norm, sinks;
    int experts, topk, expert_ffn;
    bool router_bias;
    double total, active; /* active 0: dense (= total) */
};

/*
 * Counts from the research of issue 16 (architectures.md: the modeling code's structure,
 * embedding + projections, biases, norms, experts, router + final norm + head; they reproduce
 * Llama 3.1 8B 8,030,261,248, Mixtral 46.70 B / 12.88 B active, Qwen3-30B-A3B 30.5 B / 3.3 B,
 * gpt-oss-20b 20.91 B).
 */
static const struct arch_case cases[] = {
    { "Meta-Llama-3.1-8B",
      32,
      4096,
      32,
      8,
      128,
      14336,
      128256,
      131072,
      ACT_SWIGLU,
      NORM_RMSNORM,
      POS_ROPE,
      false,
      false,
      false,
      false,
      false,
      0,
      0,
      0,
      false,
      8030261248.0,
      0 },
    { "Llama-3.2-1B", 16,           2048, 32,    8,     64,    8192,  128256, 131072, ACT_SWIGLU,
      NORM_RMSNORM,   POS_ROPE,     true, false, false, false, false, 0,      0,      0,
      false,          1235814400.0, 0 },
    { "TinyLlama-1.1B",
      22,
      2048,
      32,
      4,
      64,
      5632,
      32000,
      2048,
      ACT_SWIGLU,
      NORM_RMSNORM,
      POS_ROPE,
      false,
      false,
      false,
      false,
      false,
      0,
      0,
      0,
      false,
      1100048384.0,
      0 },
    { "Mistral-7B-v0.1",
      32,
      4096,
      32,
      8,
      128,
      14336,
      32000,
      32768,
      ACT_SWIGLU,
      NORM_RMSNORM,
      POS_ROPE,
      false,
      false,
      false,
      false,
      false,
      0,
      0,
      0,
      false,
      7241732096.0,
      0 },
    { "Mixtral-8x7B",
      32,
      4096,
      32,
      8,
      128,
      14336,
      32000,
      32768,
      ACT_SWIGLU,
      NORM_RMSNORM,
      POS_ROPE,
      false,
      false,
      false,
      false,
      false,
      8,
      2,
      14336,
      false,
      46702792704.0,
      12879925248.0 },
    { "Qwen2-0.5B", 24,          896,  14,    2,    64,    4864,  151936, 32768, ACT_SWIGLU,
      NORM_RMSNORM, POS_ROPE,    true, false, true, false, false, 0,      0,     0,
      false,        494032768.0, 0 },
    { "Qwen3-0.6B", 28,          1024, 16,    8,     128,  3072,  151936, 40960, ACT_SWIGLU,
      NORM_RMSNORM, POS_ROPE,    true, false, false, true, false, 0,      0,     0,
      false,        596049920.0, 0 },
    { "Qwen3-8B",   36,           4096,  32,    8,     128,  12288, 151936, 40960, ACT_SWIGLU,
      NORM_RMSNORM, POS_ROPE,     false, false, false, true, false, 0,      0,     0,
      false,        8190735360.0, 0 },
    { "Qwen3-30B-A3B", 48,          2048,       32,           4,        128,   6144,
      151936,          40960,       ACT_SWIGLU, NORM_RMSNORM, POS_ROPE, false, false,
      false,           true,        false,      128,          8,        768,   false,
      30532122624.0,   3353032704.0 },
    { "Gemma-2B",   18,           2048, 8,     1,     256,   16384, 256000, 8192, ACT_GEGLU,
      NORM_RMSNORM, POS_ROPE,     true, false, false, false, false, 0,      0,    0,
      false,        2506172416.0, 0 },
    { "gpt-oss-20b", 24,          2880,       64,           8,        64,    2880,
      201088,        131072,      ACT_SWIGLU, NORM_RMSNORM, POS_ROPE, false, true,
      false,         false,       true,       32,           4,        2880,  true,
      20914757184.0, 4187440704.0 },
    { "RedPajama-INCITE-3B",
      32,
      2560,
      32,
      32,
      80,
      10240,
      50432,
      2048,
      ACT_GELU,
      NORM_LAYERNORM,
      POS_ROPE,
      false,
      true,
      false,
      false,
      false,
      0,
      0,
      0,
      false,
      2775864320.0,
      0 },
    { "GPT-2 124M",   12,          768,  12,   12,    64,    3072,  50257, 1024, ACT_GELU,
      NORM_LAYERNORM, POS_LEARNED, true, true, false, false, false, 0,     0,    0,
      false,          124439808.0, 0 },
};

static void model_of(const struct arch_case *c, struct model *m)
{
    struct cfg_error err;

    memset(m, 0, sizeof(*m));
    m->name = c->name;
    m->layers = c->layers;
    m->hidden = c->hidden;
    m->heads = c->heads;
    m->kv_heads = c->kv_heads;
    m->head_dim = c->head_dim;
    m->ffn_hidden = c->ffn;
    m->vocab = c->vocab;
    m->max_seq = c->max_seq;
    m->act = c->act;
    m->norm = c->norm;
    m->pos = c->pos;
    m->tied_embeddings = c->tied;
    m->bias = c->bias;
    m->qkv_bias = c->qkv_bias;
    m->qk_norm = c->qk_norm;
    m->attn_sinks = c->sinks;
    m->moe.experts = c->experts;
    m->moe.topk = c->topk;
    m->moe.ffn_hidden = c->expert_ffn;
    m->moe.router_bias = c->router_bias;
    m->moe.load_imbalance = 1;
    assert_int_equal(cfg_model_finalize(m, &err), 0);
}

/* Every corpus architecture the workload expresses counts exactly its published parameters. */
static void test_arch_param_counts_match_modeling_code(void **state)
{
    struct model m;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct arch_case *c = &cases[i];
        model_of(c, &m);
        if (!same(workload_params_total(&m), c->total))
            fail_msg("%s: %.0f parameters, expected %.0f", c->name, workload_params_total(&m),
                     c->total);
        if (!same(workload_params_active(&m), c->active > 0 ? c->active : c->total))
            fail_msg("%s: %.0f active parameters, expected %.0f", c->name,
                     workload_params_active(&m), c->active);
    }
}

/* A Mistral-like scenario on one H100 with the given window, pattern and attention kernel. */
static void mistral(struct scenario *s, int seq, int window, int pattern, enum attn_kind attn)
{
    struct cfg_error err;

    scenario_defaults(s);
    s->hw = *h100;
    model_of(&cases[3], &s->model);
    s->model.layers = 4;
    s->model.window = window;
    s->model.window_pattern = pattern;
    s->nodes = 1;
    s->gpus = 1;
    s->par.dp = 1;
    s->train.seq_len = seq;
    s->train.global_batch = 1;
    s->train.micro_batch = 1;
    s->train.attention = attn;
    s->train.model_code = CODE_HF;
    assert_int_equal(scenario_finalize(s, &err), 0);
}

static const struct op *find_op(const struct layer_cost *lc, const char *name)
{
    for (int i = 0; i < lc->nops; i++)
        if (strcmp(lc->ops[i].name, name) == 0)
            return &lc->ops[i];
    fail_msg("no op '%s'", name);
    return NULL;
}

static bool has_op(const struct layer_cost *lc, const char *name)
{
    for (int i = 0; i < lc->nops; i++)
        if (strcmp(lc->ops[i].name, name) == 0)
            return true;
    return false;
}

/*
 * Window 4096 over 8192 tokens: s*w - w^2/2 = 25.2 M of the s^2/2 = 33.6 M causal pairs, 3/4
 * (architectures.md, Mistral 7B v0.1); FlashAttention does 3/4 of the work, saves the same;
 * unfused attention computes every score and masks them: unchanged.
 */
static void test_arch_window_cuts_flash_attention_only(void **state)
{
    struct scenario s;
    struct shard sh;
    struct layer_cost full, win;
    const struct op *a, *b;

    (void)state;
    assert_true(fabs(workload_window_share(8192, 4096) - 0.75) < 1e-12);
    assert_true(same(workload_window_share(4096, 4096), 1.0));
    assert_true(same(workload_window_share(4096, 0), 1.0));
    mistral(&s, 8192, 4096, 0, ATTN_FLASH);
    workload_shard(&s, &sh);
    workload_layer_variant(&s, &sh, false, false, &full);
    workload_layer_variant(&s, &sh, false, true, &win);
    a = find_op(&full, "flash_attention");
    b = find_op(&win, "flash_attention");
    assert_true(fabs(b->flops / a->flops - 0.75) < 1e-12);
    assert_true(fabs(b->hw_flops / a->hw_flops - 0.75) < 1e-12);
    assert_true(b->t_fwd < a->t_fwd && b->t_dgrad < a->t_dgrad);
    assert_true(same(win.act[RC_NONE], full.act[RC_NONE]));
    assert_true(same(find_op(&win, "qkv_proj")->t_fwd, find_op(&full, "qkv_proj")->t_fwd));

    mistral(&s, 8192, 4096, 0, ATTN_STANDARD);
    workload_shard(&s, &sh);
    workload_layer_variant(&s, &sh, false, false, &full);
    workload_layer_variant(&s, &sh, false, true, &win);
    assert_true(same(find_op(&win, "attn_scores")->t_fwd, find_op(&full, "attn_scores")->t_fwd));
    assert_true(same(win.act[RC_NONE], full.act[RC_NONE]));
}

/*
 * The pattern picks the global layers: gpt-oss alternates sliding and full attention from a
 * sliding first layer (layer_types), Gemma 3 has five local layers then one global
 * (sliding_window_pattern 6): with k, layer i is global when (i+1) % k == 0. A window at
 * least the sequence long windows nothing.
 */
static void test_arch_window_pattern(void **state)
{
    struct scenario s;

    (void)state;
    mistral(&s, 4096, 128, 2, ATTN_FLASH);
    assert_true(workload_is_windowed(&s, 0));
    assert_false(workload_is_windowed(&s, 1));
    assert_true(workload_is_windowed(&s, 2));
    mistral(&s, 4096, 1024, 6, ATTN_FLASH);
    for (int i = 0; i < 5; i++)
        assert_true(workload_is_windowed(&s, i));
    assert_false(workload_is_windowed(&s, 5));
    mistral(&s, 4096, 4096, 0, ATTN_FLASH);
    assert_false(workload_is_windowed(&s, 0));
}

/*
 * The simulated step: all layers windowed < half of them < none, by the attention the windows
 * skip; MFU counts only the attention computed (model FLOPs shrink with the window); memory
 * is the same.
 */
static void test_arch_window_in_the_step(void **state)
{
    struct scenario s;
    struct sim_opts opts = { 0 };
    struct run r;
    char why[256];
    double t[3], flops[3], peak[3];
    const int patterns[3] = { 0, 2, -1 };

    (void)state;
    for (int i = 0; i < 3; i++) {
        mistral(&s, 8192, patterns[i] < 0 ? 0 : 1024, patterns[i] < 0 ? 0 : patterns[i],
                ATTN_FLASH);
        assert_int_equal(run_scenario(&s, &opts, &r, why, sizeof(why)), 0);
        t[i] = r.step_s;
        flops[i] = r.model_flops;
        peak[i] = r.peak_bytes;
        run_release(&r);
    }
    assert_true(t[0] < t[1] && t[1] < t[2]);
    assert_true(flops[0] < flops[1] && flops[1] < flops[2]);
    assert_true(fabs(peak[0] - peak[2]) < 1 && fabs(peak[1] - peak[2]) < 1);
}

/*
 * Qwen3's q_norm / k_norm: one RMSNorm pass over q and k per layer; under Hugging Face's eager
 * RMSNorm it keeps the fp32 input, the bf16 normalised tensor its trained weight's gradient
 * needs and an fp32 rstd per head and token, T (a + kv) (6 d + 4).
 */
static void test_arch_qk_norm_saves_fp32_input(void **state)
{
    struct scenario s;
    struct shard sh;
    struct layer_cost lc, plain;
    const struct op *o;
    double T = 4096, d = 128;

    (void)state;
    mistral(&s, 4096, 0, 0, ATTN_FLASH);
    workload_shard(&s, &sh);
    workload_layer(&s, &sh, false, &plain);
    s.model.qk_norm = true;
    workload_layer(&s, &sh, false, &lc);
    o = find_op(&lc, "qk_norm");
    assert_true(same(o->saved, T * (32 + 8) * (6 * d + 4)));
    assert_true(same(lc.act[RC_NONE], plain.act[RC_NONE] + o->saved));
    assert_true(same(lc.params[PART_ATTN], plain.params[PART_ATTN] + 2 * d));
    assert_false(has_op(&plain, "qk_norm"));
}

/* Gated GeLU (Gemma) has SwiGLU's three matrices, FLOPs and saved tensors; plain GeLU two. */
static void test_arch_geglu_is_gated(void **state)
{
    struct scenario s;
    struct shard sh;
    struct layer_cost sw, ge;

    (void)state;
    mistral(&s, 2048, 0, 0, ATTN_FLASH);
    workload_shard(&s, &sh);
    workload_layer(&s, &sh, false, &sw);
    s.model.act = ACT_GEGLU;
    workload_layer(&s, &sh, false, &ge);
    assert_int_equal(workload_mlp_matrices(&s.model), 3);
    assert_true(same(ge.flops_fwd, sw.flops_fwd));
    assert_true(same(ge.act[RC_NONE], sw.act[RC_NONE]));
    assert_true(same(ge.params[PART_MLP], sw.params[PART_MLP]));
    assert_true(same(find_op(&ge, "geglu")->saved, find_op(&sw, "swiglu")->saved));
    s.model.act = ACT_GELU;
    assert_int_equal(workload_mlp_matrices(&s.model), 2);
}

/*
 * Gemma 2 soft-capping: on the unfused scores one more saved 16-bit tensor of b*a*s^2 (tanh's
 * output); on the logits p*T*V more in the head's saved activations; the post-sublayer norms
 * add two norms per layer (2 h RMSNorm weights).
 */
static void test_arch_softcap_and_post_norms(void **state)
{
    struct scenario s;
    struct shard sh;
    struct layer_cost lc, plain;
    struct edge_cost head, head0;
    double T = 1024;

    (void)state;
    mistral(&s, 1024, 0, 0, ATTN_STANDARD);
    workload_shard(&s, &sh);
    workload_layer(&s, &sh, false, &plain);
    workload_head(&s, &sh, &head0);
    s.model.attn_softcap = true;
    s.model.logit_softcap = true;
    s.model.post_norms = true;
    workload_layer(&s, &sh, false, &lc);
    workload_head(&s, &sh, &head);
    assert_true(same(find_op(&lc, "attn_softcap")->saved, 2 * 32 * T * T));
    assert_true(find_op(&lc, "attn_softcap")->core);
    assert_true(same(head.act, head0.act + 2 * T * 32000));
    assert_true(has_op(&lc, "attn_post_norm") && has_op(&lc, "mlp_post_norm"));
    assert_true(same(lc.params[PART_ATTN] + lc.params[PART_MLP],
                     plain.params[PART_ATTN] + plain.params[PART_MLP] + 2 * 4096));
    s.model.post_norms = false;
    {
        double without = workload_params_layer(&s.model, false);
        s.model.post_norms = true;
        assert_true(same(workload_params_layer(&s.model, false), without + 2 * 4096));
    }
}

/*
 * A layer with every operator variant at once (biases, q/k norms, post norms, sinks,
 * soft-capping, dropout, MoE, DoRA adapters with dropout on every target, each base
 * quantization, each model code, both attention kinds) fits the operator table MAX_OPS.
 */
static void test_arch_every_variant_fits_the_op_table(void **state)
{
    static const enum finetune fts[] = { FT_FULL, FT_LORA, FT_QLORA, FT_LORA_INT8 };
    static const enum model_code codes[] = { CODE_MEGATRON, CODE_HF, CODE_LITGPT };
    int most = 0;

    (void)state;
    for (int a = 0; a < 2; a++)
        for (int f = 0; f < 4; f++)
            for (int c = 0; c < 3; c++)
                for (int moe = 0; moe < 2; moe++) {
                    struct scenario s;
                    struct shard sh;
                    struct layer_cost lc;

                    mistral(&s, 1024, 256, 4, a ? ATTN_STANDARD : ATTN_FLASH);
                    s.model.bias = true;
                    s.model.qkv_bias = true;
                    s.model.qk_norm = true;
                    s.model.post_norms = true;
                    s.model.attn_sinks = true;
                    s.model.attn_softcap = true;
                    s.model.dropout = true;
                    s.model.moe.experts = 8;
                    s.model.moe.topk = 2;
                    s.model.moe.ffn_hidden = 1024;
                    s.model.moe.router_bias = true;
                    s.train.finetune = fts[f];
                    s.train.model_code = codes[c];
                    s.train.lora.rank = 16;
                    s.train.lora.alpha = 32;
                    s.train.lora.targets = 0x7f;
                    s.train.lora.dropout = 0.05;
                    s.train.lora.dora = true;
                    workload_shard(&s, &sh);
                    workload_layer_variant(&s, &sh, moe, true, &lc);
                    assert_true(lc.nops > 0 && lc.nops <= MAX_OPS);
                    most = lc.nops > most ? lc.nops : most;
                }
    print_message("most operators in a layer: %d of %d\n", most, MAX_OPS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arch_param_counts_match_modeling_code),
        cmocka_unit_test(test_arch_window_cuts_flash_attention_only),
        cmocka_unit_test(test_arch_window_pattern),
        cmocka_unit_test(test_arch_window_in_the_step),
        cmocka_unit_test(test_arch_qk_norm_saves_fp32_input),
        cmocka_unit_test(test_arch_geglu_is_gated),
        cmocka_unit_test(test_arch_softcap_and_post_norms),
        cmocka_unit_test(test_arch_every_variant_fits_the_op_table),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
