/*
 * test_workload.c - the operator model of a transformer layer: Korthikanti's
 * activation formulas reproduced tensor by tensor, their GQA / SwiGLU /
 * FlashAttention generalisations, LoRA and QLoRA effects on compute and saved
 * tensors, and adapter parameter counts against published figures.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "model/attn_table.h"
#include "model/cost.h"
#include "model/workload.h"

static struct hardware *a100;

static int setup(void **state)
{
    (void)state;
    a100 = cfg_load_hardware("dgx-a100-80g", stderr);
    return a100 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cfg_free_hw(a100);
    return 0;
}

/* A Megatron GPT layer as Korthikanti describe it (KOR22 §4: LayerNorm, GeLU 4h, dropout). */
static void gpt(struct scenario *s, int h, int a, int seq, int b, int tp, bool sp,
                enum attn_kind attn)
{
    struct cfg_error err;

    scenario_defaults(s);
    s->hw = *a100;
    s->model.name = "gpt";
    s->model.layers = 8;
    s->model.hidden = h;
    s->model.heads = a;
    s->model.ffn_hidden = 4 * h;
    s->model.vocab = 51200;
    s->model.max_seq = seq;
    s->model.act = ACT_GELU;
    s->model.norm = NORM_LAYERNORM;
    s->model.pos = POS_LEARNED;
    s->model.tied_embeddings = true;
    s->model.bias = true;
    s->model.dropout = true;
    s->nodes = 1;
    s->gpus = tp;
    s->par.tp = tp;
    s->par.dp = 1;
    s->par.sequence_parallel = sp;
    s->par.framework = FW_MEGATRON;
    s->train.seq_len = seq;
    s->train.global_batch = b;
    s->train.micro_batch = b;
    s->train.attention = attn;
    assert_int_equal(scenario_finalize(s, &err), 0);
}

/* A Llama-style layer (RMSNorm, SwiGLU, RoPE, GQA, no bias or dropout), one GPU. */
static void llama(struct scenario *s, int h, int a, int kv, int f, int layers, int seq, int b,
                  enum framework fw)
{
    struct cfg_error err;

    scenario_defaults(s);
    s->hw = *a100;
    s->model.name = "llama";
    s->model.layers = layers;
    s->model.hidden = h;
    s->model.heads = a;
    s->model.kv_heads = kv;
    s->model.ffn_hidden = f;
    s->model.vocab = 32000;
    s->model.max_seq = seq;
    s->model.act = ACT_SWIGLU;
    s->model.norm = NORM_RMSNORM;
    s->model.pos = POS_ROPE;
    s->nodes = 1;
    s->gpus = 1;
    s->par.dp = 1;
    s->par.framework = fw;
    s->train.seq_len = seq;
    s->train.global_batch = b;
    s->train.micro_batch = b;
    assert_int_equal(scenario_finalize(s, &err), 0);
}

static void layer_of(const struct scenario *s, struct layer_cost *lc)
{
    struct shard sh;

    workload_shard(s, &sh);
    workload_layer(s, &sh, false, lc);
}

static const struct op *find_op(const struct layer_cost *lc, const char *name)
{
    int i;

    for (i = 0; i < lc->nops; i++)
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

static void assert_rel(double got, double want, double tol)
{
    if (fabs(got - want) > tol * fabs(want))
        fail_msg("got %.6g, want %.6g (tolerance %.3g %%)", got, want, 100 * tol);
}

/* The configurations of KOR22 Table 3: hidden, heads; s = 2048, t = 8, b = 1 (22B: b = 4). */
static const struct {
    const char *name;
    int h, a, b;
} kor_models[] = {
    { "22B", 6144, 64, 4 },
    { "175B", 12288, 96, 1 },
    { "530B", 20480, 128, 1 },
    { "1T", 25600, 160, 1 },
};

/*
 * KOR22 eq. 2, 4, Table 2 per layer for each Table 3 model: tensor parallel
 * sbh(10 + 24/t + 5as/(ht)); with sequence parallelism sbh/t (34 + 5as/h);
 * selective recompute sbh(10 + 24/t) and 34 sbh/t; full recompute 2 sbh
 * (2 sbh / t when the layer input is sequence-sharded). simtrain also counts
 * the fp32 LayerNorm statistics (8 B per token per norm) Korthikanti ignore.
 */
static void test_workload_korthikanti_formulas(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(kor_models); i++) {
        double s = 2048, t = 8, h = kor_models[i].h, a = kor_models[i].a, b = kor_models[i].b;
        double sbh = s * b * h, stats = 2 * 8 * s * b;
        struct scenario sc;
        struct layer_cost lc;

        gpt(&sc, (int)h, (int)a, (int)s, (int)b, (int)t, false, ATTN_STANDARD);
        layer_of(&sc, &lc);
        assert_rel(lc.act[RC_NONE], sbh * (10 + 24 / t + 5 * a * s / (h * t)) + stats, 1e-12);
        assert_rel(lc.act[RC_SELECTIVE], sbh * (10 + 24 / t) + stats, 1e-12);
        assert_rel(lc.act[RC_FULL], 2 * sbh, 1e-12);
        gpt(&sc, (int)h, (int)a, (int)s, (int)b, (int)t, true, ATTN_STANDARD);
        layer_of(&sc, &lc);
        assert_rel(lc.act[RC_NONE], sbh / t * (34 + 5 * a * s / h) + stats / t, 1e-12);
        assert_rel(lc.act[RC_SELECTIVE], 34 * sbh / t + stats / t, 1e-12);
        assert_rel(lc.act[RC_FULL], 2 * sbh / t, 1e-12);
    }
}

/*
 * FlashAttention stores O and the fp32 log-sum-exp instead of the s^2 softmax,
 * mask and dropout output (FA1 §3.1, formulas.md §2.5): the 5as^2b term of
 * KOR22 becomes 4 B per query row per head, and nothing is left to recompute
 * selectively.
 */
static void test_workload_flash_removes_quadratic_terms(void **state)
{
    double s = 2048, t = 8, h = 12288, a = 96, b = 1, sbh = s * b * h;
    struct scenario sc;
    struct layer_cost std, fa;

    (void)state;
    gpt(&sc, (int)h, (int)a, (int)s, (int)b, (int)t, false, ATTN_STANDARD);
    layer_of(&sc, &std);
    gpt(&sc, (int)h, (int)a, (int)s, (int)b, (int)t, false, ATTN_FLASH);
    layer_of(&sc, &fa);
    assert_rel(fa.act[RC_NONE], std.act[RC_NONE] - 5 * a * s * s * b / t + 4 * s * b * a / t,
               1e-12);
    assert_rel(fa.act[RC_SELECTIVE], fa.act[RC_NONE], 1e-12);
    assert_true(fa.recompute_selective == 0);
    assert_true(std.act[RC_NONE] > 3 * sbh * 34 / t); /* the s^2 term dominates at s = 2048 */
}

/* GQA: K and V shrink to kv_heads * head_dim; Q, and every other tensor, do not. */
static void test_workload_gqa_shrinks_kv(void **state)
{
    double s = 4096, h = 4096, p = 2, kv = 1024;
    struct scenario mha, gqa;
    struct layer_cost a, g;

    (void)state;
    llama(&mha, 4096, 32, 32, 14336, 2, 4096, 1, FW_MEGATRON);
    llama(&gqa, 4096, 32, 8, 14336, 2, 4096, 1, FW_MEGATRON);
    layer_of(&mha, &a);
    layer_of(&gqa, &g);
    /* flash saves Q, K, V: K and V lose (h - kv) each */
    assert_rel(a.act[RC_NONE] - g.act[RC_NONE], 2 * p * s * (h - kv), 1e-12);
    assert_rel(a.params[PART_MLP], g.params[PART_MLP], 1e-15);
    assert_rel(a.params[PART_ATTN] - g.params[PART_ATTN], 2 * h * (h - kv), 1e-12);
}

/*
 * SwiGLU (fused, Megatron's bias_swiglu): gate and up outputs, 2 x f per token.
 * Eager (HF LlamaMLP act_fn(gate) * up): silu(gate) is kept too, 3 x f; eager
 * RMSNorm keeps an fp32 copy of its input (4 B) instead of the bf16 one.
 */
static void test_workload_swiglu_and_eager_modules(void **state)
{
    double T = 2048, f = 11008, h = 4096;
    struct scenario fused, eager;
    struct layer_cost a, e;

    (void)state;
    llama(&fused, 4096, 32, 32, 11008, 2, 2048, 1, FW_MEGATRON);
    llama(&eager, 4096, 32, 32, 11008, 2, 2048, 1, FW_PYTORCH);
    assert_false(workload_eager(&fused));
    assert_true(workload_eager(&eager));
    layer_of(&fused, &a);
    layer_of(&eager, &e);
    assert_rel(find_op(&a, "swiglu")->saved, 2 * T * f * 2, 1e-12);
    assert_rel(find_op(&e, "swiglu")->saved, 3 * T * f * 2, 1e-12);
    assert_rel(find_op(&a, "attn_norm")->saved, T * h * 2 + T * 4, 1e-12);
    /* the fp32 input and, for the weight's gradient, the bf16 normalised tensor */
    assert_rel(find_op(&e, "attn_norm")->saved, T * h * (4 + 2) + T * 4, 1e-12);
    /* eager: the out-proj input is a contiguous copy of O, saved besides FlashAttention's O */
    assert_rel(find_op(&e, "flash_attention")->saved - find_op(&a, "flash_attention")->saved,
               T * h * 2, 1e-12);
    /* compiled, the eager modules run the fused kernels and save what they save */
    eager.train.compile = true;
    layer_of(&eager, &e);
    assert_true(a.fwd[PART_MLP] == e.fwd[PART_MLP]);
    assert_rel(find_op(&e, "swiglu")->saved, 2 * T * f * 2, 1e-12);
    assert_rel(find_op(&e, "attn_norm")->saved, T * h * 2 + T * 4, 1e-12);
}

/*
 * Eager element-wise chains without torch.compile, op by op (workload.c wl_rmsnorm_chain(),
 * workload_layer.c rope_op(), mlp_ops()): RMSNorm 6 kernels moving 36 B per element forward
 * and 13 moving 92 B backward at bf16; RoPE 20 B each way in 6 kernels (q and k); SwiGLU's
 * silu and mul 10 B forward, 18 B backward per f element. GQA adds the K/V repeat copies and
 * the core saves the repeated K and V. Compiled they are single fused passes; with
 * rmsnorm_impl fused only the norm is.
 */
static void test_workload_eager_chains_unfused(void **state)
{
    double T = 2048, f = 14336, h = 4096, q = 4096, kv = 1024;
    struct scenario s;
    struct layer_cost e, c, n;
    const struct efficiency *eff;
    const struct gpu_spec *g;
    sim_time t;

    (void)state;
    llama(&s, 4096, 32, 8, 14336, 1, 2048, 1, FW_PYTORCH);
    g = &s.hw.gpu;
    eff = &s.hw.eff;
    layer_of(&s, &e);
    t = 6 * cost_membound(g, eff, 36 * T * h / 6);
    assert_true(find_op(&e, "attn_norm")->t_fwd == t);
    assert_true(find_op(&e, "attn_norm")->t_dgrad == 13 * cost_membound(g, eff, 92 * T * h / 13));
    assert_int_equal(find_op(&e, "attn_norm")->extra_kernels_bwd, 12);
    assert_true(find_op(&e, "rope")->t_fwd == 6 * cost_membound(g, eff, 20 * T * (q + kv) / 6));
    assert_true(find_op(&e, "swiglu")->t_dgrad == 3 * cost_membound(g, eff, 18 * T * f / 3));
    assert_true(find_op(&e, "repeat_kv")->t_fwd == 2 * cost_membound(g, eff, 4 * T * (q + kv) / 2));
    assert_rel(find_op(&e, "flash_attention")->saved, 2 * T * (3 * q) + 4 * T * 32 + 2 * T * q,
               1e-12);
    s.train.compile = true;
    layer_of(&s, &c);
    assert_true(find_op(&c, "attn_norm")->t_fwd == cost_membound(g, eff, 4 * T * h));
    assert_true(find_op(&c, "rope")->t_fwd == cost_membound(g, eff, 4 * T * (q + kv)));
    assert_true(has_op(&c, "repeat_kv"));
    assert_true(c.fwd[PART_MLP] < e.fwd[PART_MLP] && c.dgrad[PART_ATTN] < e.dgrad[PART_ATTN]);
    s.train.compile = false;
    s.train.rmsnorm_impl = RMSNORM_FUSED;
    layer_of(&s, &n);
    assert_true(find_op(&n, "attn_norm")->t_fwd == find_op(&c, "attn_norm")->t_fwd);
    assert_true(find_op(&n, "rope")->t_fwd == find_op(&e, "rope")->t_fwd);
}

/*
 * Eager Llama-3.1-8B keeps about 28 hidden-state copies per layer (bf16
 * activation memory / 2bsh, measured by the ml-engineering script that runs one
 * HF decoder layer forward with grads; formulas.md §2.4 "Limits"). The script's
 * delta also holds the layer output (one copy). simtrain's eager count is
 * within 15 % of it; the fused (Megatron) count is far below, as it should be.
 */
static void test_workload_eager_matches_hf_copies(void **state)
{
    double s = 8192, h = 4096;
    struct scenario eager, fused;
    struct layer_cost e, f;
    double copies_e, copies_f;

    (void)state;
    llama(&eager, 4096, 32, 8, 14336, 2, 8192, 1, FW_PYTORCH);
    llama(&fused, 4096, 32, 8, 14336, 2, 8192, 1, FW_MEGATRON);
    layer_of(&eager, &e);
    layer_of(&fused, &f);
    copies_e = e.act[RC_NONE] / (2 * s * h) + 1;
    copies_f = f.act[RC_NONE] / (2 * s * h) + 1;
    assert_rel(copies_e, 28, 0.15);
    assert_true(copies_f < 0.75 * 28);
}

/*
 * training.model_code: `auto` is Megatron's code under the Megatron framework, Hugging Face +
 * PEFT for adapters under DeepSpeed, LitGPT's layout for other eager runs; set explicitly it
 * wins over the framework. LitGPT's fused QKV (multi-head attention, RoPE) pins T*(q + kv)*2 B
 * that Hugging Face's separate projections do not, and Megatron's fused modules are not eager.
 */
static void test_workload_model_code(void **state)
{
    struct scenario lit, hf, mega;
    struct layer_cost a, b;
    double T = 2048, h = 4096;

    (void)state;
    llama(&lit, (int)h, 32, 32, 11008, 2, (int)T, 1, FW_PYTORCH);
    assert_int_equal(scenario_model_code(&lit), CODE_LITGPT);
    hf = lit;
    hf.train.model_code = CODE_HF;
    assert_int_equal(scenario_model_code(&hf), CODE_HF);
    layer_of(&lit, &a);
    layer_of(&hf, &b);
    assert_rel(a.act[RC_NONE] - b.act[RC_NONE], T * (h + h) * 2, 1e-9);
    mega = lit;
    mega.par.framework = FW_MEGATRON;
    assert_int_equal(scenario_model_code(&mega), CODE_MEGATRON);
    assert_false(workload_eager(&mega));
    mega.train.model_code = CODE_LITGPT;
    assert_true(workload_eager(&mega));
    hf.train.model_code = CODE_AUTO;
    hf.par.framework = FW_DEEPSPEED;
    hf.train.finetune = FT_LORA;
    assert_int_equal(scenario_model_code(&hf), CODE_HF);
    hf.train.finetune = FT_FULL;
    assert_int_equal(scenario_model_code(&hf), CODE_LITGPT);
}

/*
 * The MLP backward's activation gradients: three tokens x f/tp for SwiGLU (dm, then the mul
 * backward's two products), two for GeLU (dm and GeLU's gradient), plus the T x h input
 * gradient, in the activation dtype.
 */
static void test_workload_mlp_backward_transient(void **state)
{
    struct scenario sw, ge;
    struct layer_cost a, b;
    double T = 2048, h = 4096, f = 11008;

    (void)state;
    llama(&sw, (int)h, 32, 8, (int)f, 2, (int)T, 1, FW_PYTORCH);
    gpt(&ge, (int)h, 32, (int)T, 1, 4, false, ATTN_FLASH);
    layer_of(&sw, &a);
    layer_of(&ge, &b);
    assert_rel(a.bwd_transient, (3 * T * f + T * h) * 2, 1e-12);
    assert_rel(b.bwd_transient, (2 * T * 4 * h / 4 + T * h) * 2, 1e-12);
}

/*
 * LoRA trainable parameters r * (d_in + d_out) per adapted matrix (LORA §4.1):
 * Llama 2 7B and 13B with r = 8 on q and v have 4,194,304 and 6,553,600
 * (LitGPT tutorials/resource-tables.md, "Trainable parameters" column).
 */
static void test_workload_lora_params_match_litgpt(void **state)
{
    struct scenario s7, s13;

    (void)state;
    llama(&s7, 4096, 32, 32, 11008, 32, 1024, 1, FW_PYTORCH);
    llama(&s13, 5120, 40, 40, 13824, 40, 1024, 1, FW_PYTORCH);
    s7.train.finetune = s13.train.finetune = FT_LORA;
    s7.train.lora.rank = s13.train.lora.rank = 8;
    s7.train.lora.targets = s13.train.lora.targets = LORA_Q | LORA_V;
    assert_int_equal((int64_t)workload_lora_params_total(&s7), 4194304);
    assert_int_equal((int64_t)workload_lora_params_total(&s13), 6553600);
    assert_int_equal((int64_t)workload_params_trainable(&s7), 4194304);
    s7.train.finetune = FT_FULL;
    assert_rel(workload_params_trainable(&s7), workload_params_total(&s7.model), 1e-15);
    assert_false(workload_lora_params_total(&s7) > 0);
}

/*
 * LoRA freezes the base: no weight gradients except the adapters', the same
 * input gradients plus the adapters', and a frozen projection no longer keeps
 * its input (q, v targeted: the QKV input stays for the adapters; the MLP
 * inputs go) while each adapter keeps xA (T x r). The per-rank adapter count
 * equals the unsharded one on one GPU.
 */
static void test_workload_lora_freezes_base(void **state)
{
    double T = 2048, h = 4096, f = 11008, r = 16, p = 2;
    struct scenario full, lora;
    struct layer_cost a, l;
    int i;

    (void)state;
    llama(&full, 4096, 32, 32, 11008, 2, 2048, 1, FW_MEGATRON);
    lora = full;
    lora.train.finetune = FT_LORA;
    lora.train.lora.rank = (int)r;
    lora.train.lora.targets = LORA_Q | LORA_V;
    layer_of(&full, &a);
    layer_of(&lora, &l);
    for (i = 0; i < l.nops; i++)
        if (strncmp(l.ops[i].name, "lora_", 5) != 0)
            assert_true(l.ops[i].t_wgrad == 0);
    assert_true(find_op(&l, "lora_qkv")->t_wgrad > 0);
    assert_true(l.wgrad[PART_MLP] == 0);
    assert_true(l.dgrad[PART_MLP] == a.dgrad[PART_MLP]);
    assert_true(l.dgrad[PART_ATTN] > a.dgrad[PART_ATTN]);
    assert_rel(l.act[RC_NONE], a.act[RC_NONE] - T * h * p - T * f * p + 2 * T * r * p, 1e-12);
    assert_rel(l.lora_params[PART_ATTN] + l.lora_params[PART_MLP],
               workload_lora_params_layer(&lora, false), 1e-12);
    assert_false(l.lora_params[PART_MLP] > 0);
}

/*
 * QLoRA: bitsandbytes' MatMul4Bit keeps its input whenever any input needs a
 * gradient, so no projection input is dropped; each NF4 weight is
 * dequantized (read 0.516 B, write 2 B) before the forward and again before
 * the backward GEMM; NF4 with double quantization is 4.127 bits per weight
 * (QLORA §3: 4 + 0.127).
 */
static void test_workload_qlora_dequantizes(void **state)
{
    double T = 2048, r = 16, p = 2;
    struct scenario full, lora, qlora;
    struct layer_cost a, l, q;
    const struct op *dq;

    (void)state;
    llama(&full, 4096, 32, 32, 11008, 2, 2048, 1, FW_MEGATRON);
    lora = qlora = full;
    lora.train.finetune = FT_LORA;
    qlora.train.finetune = FT_QLORA;
    lora.train.lora.rank = qlora.train.lora.rank = (int)r;
    lora.train.lora.targets = qlora.train.lora.targets = LORA_Q | LORA_V;
    qlora.train.lora.double_quant = true;
    layer_of(&full, &a);
    layer_of(&lora, &l);
    layer_of(&qlora, &q);
    assert_rel(q.act[RC_NONE], a.act[RC_NONE] + 2 * T * r * p, 1e-12);
    dq = find_op(&q, "nf4_dequant_mlp");
    assert_true(dq->t_fwd > 0 && dq->t_dgrad == dq->t_fwd);
    assert_rel(dq->bytes, 3.0 * 4096 * 11008 * (workload_nf4_bytes(true) + 2), 1e-12);
    assert_true(q.fwd[PART_MLP] == l.fwd[PART_MLP] + dq->t_fwd);
    assert_rel(8 * workload_nf4_bytes(true), 4.127, 1e-3);
    assert_rel(8 * workload_nf4_bytes(false), 4.5, 1e-12);
}

/*
 * A projection with a bias reduces its output gradient over the tokens in backward
 * (Megatron ColumnParallelLinear `grad_output.sum(dim=0)`): the QKV projection of a
 * tp = 8 GPT layer (T = 2048, 3h/t outputs) pays one memory-bound read of that gradient,
 * the bias-free layer none.
 */
static void test_workload_bias_gradient_reads_output(void **state)
{
    struct scenario with, without;
    struct layer_cost a, b;
    double T = 2048, h = 4096;

    (void)state;
    gpt(&with, (int)h, 32, (int)T, 1, 8, false, ATTN_FLASH);
    without = with;
    without.model.bias = false;
    layer_of(&with, &a);
    layer_of(&without, &b);
    assert_int_equal(find_op(&a, "qkv_proj")->t_wgrad - find_op(&b, "qkv_proj")->t_wgrad,
                     cost_membound(&with.hw.gpu, &with.hw.eff, T * 3 * h / 8 * 2));
    assert_true(find_op(&a, "fc2")->t_wgrad > find_op(&b, "fc2")->t_wgrad);
    assert_true(find_op(&a, "qkv_proj")->t_fwd == find_op(&b, "qkv_proj")->t_fwd);
}

/*
 * Megatron's local linear layers add the QKV bias out of place (one read and write of the
 * QKV output, forward only) and its unfused attention copies the context into [s, b, h]
 * (one read and write of the output); a bias-free model has no bias pass, and
 * FlashAttention no layout copy.
 */
static void test_workload_megatron_bias_and_layout_copies(void **state)
{
    struct scenario std, flash, nobias;
    struct layer_cost a, b, c;
    double T = 2048, h = 4096, tp = 8;
    const struct op *o;

    (void)state;
    gpt(&std, (int)h, 32, (int)T, 1, (int)tp, false, ATTN_STANDARD);
    gpt(&flash, (int)h, 32, (int)T, 1, (int)tp, false, ATTN_FLASH);
    nobias = std;
    nobias.model.bias = false;
    layer_of(&std, &a);
    layer_of(&flash, &b);
    layer_of(&nobias, &c);
    o = find_op(&a, "qkv_bias_add");
    assert_rel(o->bytes, 2 * T * 3 * h / tp * 2, 1e-12);
    assert_int_equal(o->t_fwd, cost_membound(&std.hw.gpu, &std.hw.eff, o->bytes));
    assert_int_equal(o->t_dgrad, 0);
    o = find_op(&a, "attn_out_layout");
    assert_rel(o->bytes, 2 * T * h / tp * 2, 1e-12);
    assert_true(o->core);
    assert_true(has_op(&b, "qkv_bias_add"));
    assert_false(has_op(&b, "attn_out_layout"));
    assert_false(has_op(&c, "qkv_bias_add"));
    assert_true(has_op(&c, "attn_out_layout"));
}

/*
 * The attention dropout is its own kernel: 2p + 1 bytes per score each way
 * (read, write, 1-byte mask; backward read gradient and mask, write). On an
 * A100 40GB at batch 16, 8 heads of 64, fp16 (FlashAttention arXiv:2205.14135
 * App. E.6, dropout minus no dropout, PyTorch and Megatron rows of Tables
 * 15/18 and 16/19): sequence 2048 forward +2.24 / +2.28 ms, backward +1.95 /
 * +1.94 ms; sequence 1024 forward +0.53 / +0.55 ms. Each within 10 %. Without
 * dropout the op is absent and the saved bytes drop by the mask and the copy.
 */
static void test_workload_attention_dropout_fa1(void **state)
{
    static const double rows[][3] = { { 2048, 2.26, 1.945 }, { 1024, 0.54, 0 } };
    struct hardware *hw = cfg_load_hardware("dgx-a100-40g", stderr);
    struct scenario sc, nodrop;
    struct layer_cost a, b;
    const struct op *o;
    size_t i;

    (void)state;
    assert_non_null(hw);
    for (i = 0; i < ARRAY_LEN(rows); i++) {
        double s = rows[i][0], probs = 16 * 8 * s * s;

        gpt(&sc, 512, 8, (int)s, 16, 1, false, ATTN_STANDARD);
        sc.hw = *hw;
        layer_of(&sc, &a);
        o = find_op(&a, "attn_dropout");
        assert_rel(o->bytes, 5 * probs, 1e-12);
        assert_rel(o->t_fwd / 1e6, rows[i][1], 0.10);
        if (rows[i][2] > 0)
            assert_rel(o->t_dgrad / 1e6, rows[i][2], 0.10);
        assert_rel(o->saved, 3 * probs, 1e-12);
        nodrop = sc;
        nodrop.model.dropout = false;
        layer_of(&nodrop, &b);
        assert_false(has_op(&b, "attn_dropout"));
        assert_rel(find_op(&b, "softmax")->saved, 2 * probs, 1e-12);
    }
    cfg_free_hw(hw);
}

/*
 * Megatron's vocabulary-parallel cross-entropy: the 16-bit logits are copied to fp32 and
 * passed over by max, sub, exp, sum and div (p + 4 + 36 B per logit forward), then mul and
 * the cast back (8 + 4 + p B backward); eager PyTorch keeps the single fused pass (p + 8 B).
 */
static void test_workload_megatron_cross_entropy_passes(void **state)
{
    struct scenario meg, eager;
    struct shard sh;
    struct edge_cost hm, he;
    double logits = 2048.0 * 51200 / 8;
    const struct op *ce = NULL;

    (void)state;
    gpt(&meg, 4096, 32, 2048, 1, 8, false, ATTN_FLASH);
    eager = meg;
    eager.par.framework = FW_PYTORCH;
    workload_shard(&meg, &sh);
    workload_head(&meg, &sh, &hm);
    workload_head(&eager, &sh, &he);
    for (int i = 0; i < hm.nops; i++)
        if (!strcmp(hm.ops[i].name, "cross_entropy"))
            ce = &hm.ops[i];
    assert_non_null(ce);
    assert_int_equal(ce->t_fwd, cost_membound(&meg.hw.gpu, &meg.hw.eff, logits * (2 + 4 + 36)));
    assert_int_equal(ce->t_dgrad, cost_membound(&meg.hw.gpu, &meg.hw.eff, logits * (8 + 4 + 2)));
    assert_true(he.fwd < hm.fwd);
    assert_rel(hm.logits_bytes, 4 * logits, 1e-12);
}

/*
 * flash_attn's fused cross-entropy (llm-foundry's default loss) keeps the 16-bit logits and
 * one fp32 log-sum-exp per token instead of an fp32 copy, with no transient 16-bit buffer.
 */
static void test_workload_fused_cross_entropy_keeps_16bit_logits(void **state)
{
    struct scenario fp32, fused;
    struct shard sh;
    struct edge_cost a, b;
    double T = 4096, V = 32000;

    (void)state;
    llama(&fp32, 4096, 32, 8, 14336, 2, (int)T, 1, FW_PYTORCH);
    fused = fp32;
    fused.train.cross_entropy = CE_FUSED;
    workload_shard(&fp32, &sh);
    workload_head(&fp32, &sh, &a);
    workload_head(&fused, &sh, &b);
    assert_rel(a.logits_bytes, 4 * T * V, 1e-12);
    assert_rel(b.logits_bytes, 2 * T * V + 4 * T, 1e-12);
    assert_true(!(b.transient_bytes > 0) && a.transient_bytes > 0);
    assert_true(b.fwd < a.fwd && b.bwd < a.bwd);
}

/*
 * Triton FlashAttention runs at its published rate (attn_table.c): at head dimension 128, an
 * 8k causal sequence, the attention core takes FA2's rate over Triton's at that point as long
 * (A100: 182 / 78 TFLOP/s, FA2 paper Fig. 4), the projections are unchanged; under FP8 the
 * core keeps its 16-bit time while the projections speed up.
 */
static void test_workload_triton_attention_slower(void **state)
{
    struct scenario cuda, triton, fp8;
    struct layer_cost a, b, c;
    struct hardware *h100;
    const struct op *fa, *ft;
    double ratio, want;
    enum gpu_arch arch;

    (void)state;
    llama(&cuda, 4096, 32, 32, 11008, 2, 8192, 1, FW_PYTORCH);
    triton = cuda;
    triton.train.attention_impl = ATTN_IMPL_TRITON;
    layer_of(&cuda, &a);
    layer_of(&triton, &b);
    fa = find_op(&a, "flash_attention");
    ft = find_op(&b, "flash_attention");
    arch = cuda.hw.gpu.arch;
    ratio = (double)(ft->t_fwd - triton.hw.eff.launch) / (double)(fa->t_fwd - cuda.hw.eff.launch);
    want = attn_rel_rate(arch, ATTN_IMPL_CUDA, 128, true, 8192) /
           attn_rel_rate(arch, ATTN_IMPL_TRITON, 128, true, 8192);
    assert_rel(ratio, want, 1e-3);
    assert_true(want > 2.3 && want < 2.4);
    assert_true(find_op(&b, "qkv_proj")->t_fwd == find_op(&a, "qkv_proj")->t_fwd);
    h100 = cfg_load_hardware("dgx-h100", stderr);
    assert_non_null(h100);
    cuda.hw = *h100;
    fp8 = cuda;
    fp8.train.precision = DT_FP8;
    fp8.train.fp8_recipe = FP8_TE_DELAYED;
    layer_of(&cuda, &a);
    layer_of(&fp8, &c);
    assert_true(find_op(&c, "flash_attention")->t_fwd == find_op(&a, "flash_attention")->t_fwd);
    assert_true(find_op(&c, "qkv_proj")->t_fwd < find_op(&a, "qkv_proj")->t_fwd);
    cfg_free_hw(h100);
}

/*
 * Unpadded CUDA attention (training.attention_unpad, MPT's flash_attn_fn): the attention op's
 * forward grows by the gathers and pad (cost_attn_unpad, 18 B per Q element in MHA) and its
 * backward by the scatters and cat (34 B); the kernel and the projections are unchanged, and the
 * Triton path, which calls its kernel on the padded tensors, ignores the key.
 */
static void test_workload_attention_unpad(void **state)
{
    struct scenario base, unpad, triton, triton_unpad;
    struct layer_cost a, b, c, d;
    const struct op *fa, *fu;
    double T, q;

    (void)state;
    llama(&base, 4096, 32, 32, 11008, 2, 2048, 1, FW_PYTORCH);
    unpad = base;
    unpad.train.attention_unpad = true;
    layer_of(&base, &a);
    layer_of(&unpad, &b);
    fa = find_op(&a, "flash_attention");
    fu = find_op(&b, "flash_attention");
    T = 2048;
    q = 4096;
    assert_true(fu->t_fwd - fa->t_fwd ==
                cost_attn_unpad(&base.hw.gpu, &base.hw.eff, T * q, 3 * T * q, 2, false));
    assert_true(fu->t_dgrad - fa->t_dgrad ==
                cost_attn_unpad(&base.hw.gpu, &base.hw.eff, T * q, 3 * T * q, 2, true));
    assert_true(fu->t_dgrad - fa->t_dgrad > fu->t_fwd - fa->t_fwd);
    assert_true(find_op(&b, "qkv_proj")->t_fwd == find_op(&a, "qkv_proj")->t_fwd);
    triton = base;
    triton.train.attention_impl = ATTN_IMPL_TRITON;
    triton_unpad = triton;
    triton_unpad.train.attention_unpad = true;
    layer_of(&triton, &c);
    layer_of(&triton_unpad, &d);
    assert_true(find_op(&c, "flash_attention")->t_fwd == find_op(&d, "flash_attention")->t_fwd);
    assert_true(find_op(&c, "flash_attention")->t_dgrad == find_op(&d, "flash_attention")->t_dgrad);
}

/*
 * Host time per layer part (workload_host.c): a 768-wide Llama layer at one 128-token sequence
 * under FSDP1 takes tens of microseconds per part on an A100, less than the host's bookkeeping
 * of its 7 parameter tensors (two RMSNorm weights, fused QKV, output, gate, up, down: 10.7 + 6.9
 * us each to unshard and reshard, PR #96958), charged to the attention part (where the unit
 * starts) in forward and the MLP part in backward; the layer's GPU durations stay what they are
 * (the engine's host stream makes the GPU wait, strategy/layer.c). Without FSDP the 4 us per
 * kernel the eager host spends is never more than the GPU (every kernel costs at least a launch
 * there); torch.compile adds a 44.3 us compiled-region call per part; a checkpointed forward
 * (no_grad) creates no autograd nodes; at 64 sequences of 2048 the GPU dominates.
 */
static void test_workload_host_time_small_layers(void **state)
{
    struct scenario tiny, fsdp, compiled, big;
    struct layer_cost a, f, c, b;
    int part;

    (void)state;
    llama(&tiny, 768, 12, 12, 2048, 2, 128, 1, FW_PYTORCH);
    layer_of(&tiny, &a);
    for (part = 0; part < PART_COUNT; part++)
        assert_true(a.host[HOST_FWD][part] < a.fwd[part] && a.host[HOST_BWD][part] < a.dgrad[part]);
    fsdp = tiny;
    fsdp.par.sharding = SHARD_FSDP;
    layer_of(&fsdp, &f);
    assert_true(f.host[HOST_FWD][PART_ATTN] >= 7 * (10700 + 6900));
    assert_true(f.host[HOST_FWD][PART_ATTN] > f.fwd[PART_ATTN]);
    assert_true(f.host[HOST_BWD][PART_MLP] >= 7 * (10700 + 6900 + 2700));
    assert_true(f.fwd[PART_ATTN] == a.fwd[PART_ATTN] && f.dgrad[PART_MLP] == a.dgrad[PART_MLP]);
    tiny.host.autograd_node = 1000;
    layer_of(&tiny, &a);
    assert_true(a.host[HOST_FWD_CKPT][PART_ATTN] < a.host[HOST_FWD][PART_ATTN]);
    assert_true(a.host[HOST_RECOMPUTE][PART_ATTN] == a.host[HOST_FWD][PART_ATTN]);
    compiled = tiny;
    compiled.train.compile = true;
    layer_of(&compiled, &c);
    assert_true(c.host[HOST_FWD][PART_MLP] >= 44300 &&
                c.fwd[PART_MLP] < c.host[HOST_FWD][PART_MLP]);
    llama(&big, 4096, 32, 32, 11008, 2, 2048, 64, FW_PYTORCH);
    big.par.sharding = SHARD_FSDP;
    layer_of(&big, &b);
    for (part = 0; part < PART_COUNT; part++)
        assert_true(b.host[HOST_FWD][part] < b.fwd[part] / 100);
}

/*
 * Megatron's fused softmax needs b * np, the micro-batch times one tensor-parallel rank's heads,
 * to be a multiple of 4 (FusedScaleMaskSoftmax.is_kernel_available, workload_layer.c): 16 heads
 * over tp 8 at micro-batch 1 give 2, so the PyTorch path runs; micro-batch 2 (4) and tp 4 (4)
 * keep the kernel. By hand, 1 x 2 x 1024 x 1024 = 2,097,152 scores: forward five kernels of
 * 6, 8, 9, 8 and 6 bytes per score, backward 6, 12, 9, 8 and 6; the fp32 output saved, 4 B per
 * score = 8 MiB instead of the fused kernel's 2 B (4 MiB). On the host (python_op 64 us,
 * kernel_launch 4 us): forward 4 Python ops and 4 kernels more than at micro-batch 2 (+272 us),
 * backward 1 Python op fewer and 4 kernels more (-48 us).
 */
static void test_workload_megatron_softmax_fallback(void **state)
{
    double probs = 1.0 * 2 * 1024 * 1024;
    static const double fwd[5] = { 6, 8, 9, 8, 6 }, bwd[5] = { 6, 12, 9, 8, 6 };
    struct scenario tp8b1, tp8b2, tp4b1;
    struct layer_cost a, b, c;
    const struct op *o;
    sim_time tf = 0, tb = 0;

    (void)state;
    gpt(&tp8b1, 1024, 16, 1024, 1, 8, false, ATTN_STANDARD);
    gpt(&tp8b2, 1024, 16, 1024, 2, 8, false, ATTN_STANDARD);
    gpt(&tp4b1, 1024, 16, 1024, 1, 4, false, ATTN_STANDARD);
    tp8b1.host.python_op = tp8b2.host.python_op = 64000;
    tp8b1.host.kernel_launch = tp8b2.host.kernel_launch = 4000;
    layer_of(&tp8b1, &a);
    layer_of(&tp8b2, &b);
    layer_of(&tp4b1, &c);
    assert_true(a.softmax_torch);
    assert_false(b.softmax_torch);
    assert_false(c.softmax_torch);
    o = find_op(&a, "softmax");
    for (int i = 0; i < 5; i++) {
        tf = time_add(tf, cost_membound(&tp8b1.hw.gpu, &tp8b1.hw.eff, fwd[i] * probs));
        tb = time_add(tb, cost_membound(&tp8b1.hw.gpu, &tp8b1.hw.eff, bwd[i] * probs));
    }
    assert_true(o->t_fwd == tf && o->t_dgrad == tb);
    assert_rel(o->saved, 8.0 * 1024 * 1024, 1e-12);
    assert_rel(find_op(&b, "softmax")->saved, 2 * 4.0 * 1024 * 1024, 1e-12);
    assert_true(o->t_fwd > 5 * find_op(&b, "softmax")->t_fwd / 2);
    assert_int_equal(a.host[HOST_FWD][PART_ATTN] - b.host[HOST_FWD][PART_ATTN], 272000);
    assert_int_equal(a.host[HOST_RECOMPUTE][PART_ATTN] - b.host[HOST_RECOMPUTE][PART_ATTN], 272000);
    assert_int_equal(a.host[HOST_BWD][PART_ATTN] - b.host[HOST_BWD][PART_ATTN], -48000);
    assert_int_equal(a.host[HOST_FWD][PART_MLP], b.host[HOST_FWD][PART_MLP]);
}

/*
 * lora_dropout > 0: the q, v adapters read a dropped copy of the QKV input, saved with its
 * 1-byte mask, so LoRA keeps T*h more bytes per layer (the frozen QKV no longer needs x) and
 * QLoRA, whose MatMul4Bit keeps x anyway, T*h*(p + 1) more.
 */
static void test_workload_lora_dropout_keeps_copy_and_mask(void **state)
{
    double T = 2048, h = 4096, p = 2;
    struct scenario lora, lorad, qlora, qlorad;
    struct layer_cost a, b, c, d;

    (void)state;
    llama(&lora, (int)h, 32, 32, 11008, 2, (int)T, 1, FW_PYTORCH);
    lora.train.finetune = FT_LORA;
    lora.train.lora.rank = 8;
    lora.train.lora.targets = LORA_Q | LORA_V;
    lorad = lora;
    lorad.train.lora.dropout = 0.05;
    qlora = lora;
    qlora.train.finetune = FT_QLORA;
    qlorad = qlora;
    qlorad.train.lora.dropout = 0.05;
    layer_of(&lora, &a);
    layer_of(&lorad, &b);
    layer_of(&qlora, &c);
    layer_of(&qlorad, &d);
    assert_rel(b.act[RC_NONE] - a.act[RC_NONE], T * h, 1e-9);
    assert_rel(d.act[RC_NONE] - c.act[RC_NONE], T * h * (p + 1), 1e-9);
    assert_true(find_op(&b, "lora_qkv")->t_fwd > find_op(&a, "lora_qkv")->t_fwd);
}

/*
 * Context parallelism as the ring runs it (workload_attn.c): on cp = 4 ranks the core is four
 * kernels on (s/4)^2 / 2 pairs each (one causal at sequence s/4, three not), not one causal
 * kernel at sequence s, plus the log-sum-exp merges: Transformer Engine's one fused
 * correction per step (8 + p bytes per output element), PyTorch's _SDPAMerger more (its fp32
 * passes, partial updates and the ring's buffer copies). The executed FLOPs are the same.
 */
static void test_workload_cp_ring_kernels_and_merges(void **state)
{
    double s = 32768, T = s / 4, q = 4096, chunk = s / 4, d = 128;
    struct scenario mega, eager, one;
    struct layer_cost a, b, c;
    const struct op *fa, *fe;
    struct attn_shape causal = { d, chunk, true }, full = { d, chunk, false };
    const struct gpu_spec *g;
    const struct efficiency *e;
    sim_time want;

    (void)state;
    llama(&mega, 4096, 32, 32, 14336, 2, 32768, 1, FW_MEGATRON);
    mega.par.cp = 4;
    mega.par.dp = 1;
    mega.gpus = 4;
    eager = mega;
    eager.par.framework = FW_PYTORCH;
    layer_of(&mega, &a);
    layer_of(&eager, &b);
    fa = find_op(&a, "flash_attention");
    fe = find_op(&b, "flash_attention");
    g = &mega.hw.gpu;
    e = &mega.hw.eff;
    want = cost_flash_attention(g, e, DT_BF16, ATTN_IMPL_CUDA, &causal, 4 * chunk * chunk / 2 * q,
                                2 * T * 2 * q / 4);
    for (int i = 1; i < 4; i++)
        want = time_add(want, cost_flash_attention(g, e, DT_BF16, ATTN_IMPL_CUDA, &full,
                                                   4 * chunk * chunk / 2 * q, 2 * T * 2 * q / 4));
    want = time_add(want, time_mul(cost_membound(g, e, 3 * (8 + 2) * T * q / 3), 3));
    assert_true(llabs(fa->t_fwd - want) <= 4);
    assert_rel(fa->hw_flops, 2 * s * s * q / 4, 1e-12);
    assert_true(fe->t_fwd > fa->t_fwd && fe->t_dgrad > fa->t_dgrad);
    assert_int_equal(fe->extra_kernels_fwd, 5 * 3 + 2 + 3);
    /* one rank with the whole sequence: one causal kernel at sequence s */
    one = mega;
    one.par.cp = 1;
    one.train.seq_len = 8192;
    layer_of(&one, &c);
    causal.seq = 8192;
    assert_true(find_op(&c, "flash_attention")->t_fwd ==
                cost_flash_attention(g, e, DT_BF16, ATTN_IMPL_CUDA, &causal,
                                     4 * 8192.0 * 8192 / 2 * q, 2 * 8192 * 2 * q));
}

/*
 * torchtitan's op save list (parallelize_llama.py L213-276 @9dec370) on a Llama layer (h 4096,
 * 32 heads, 8 KV heads, FFN 14336, seq 4096, one sequence): between forward and backward a
 * block keeps its input, wq's, wv's, w1's and w2's outputs (matmuls 1, 3, 5, 7), the flash
 * attention output and its fp32 log-sum-exp; its recomputation is everything else: the
 * norms, RoPE, SwiGLU, residuals, wk, wo and w3. Under TP 2 with sequence parallelism the two
 * reduce-scatter outputs are kept too and the matmul outputs are the rank's shares.
 */
static void test_workload_torchtitan_op_sac(void **state)
{
    struct scenario s;
    struct layer_cost lc;
    double T = 4096, h = 4096, q = 4096, kv = 1024, f = 14336, p = 2;
    sim_time redo = 0;

    (void)state;
    llama(&s, 4096, 32, 8, 14336, 32, 4096, 1, FW_PYTORCH);
    s.train.recompute = RC_SELECTIVE;
    s.train.selective = SEL_TORCHTITAN_OP;
    layer_of(&s, &lc);
    assert_rel(lc.act[RC_SELECTIVE],
               p * T * h + p * T * q + p * T * kv + (p * T * q + 4 * T * 32) + p * T * f +
                   p * T * h,
               1e-12);
    for (int i = 0; i < lc.nops; i++) {
        const struct op *o = &lc.ops[i];
        if (o->kind == OP_MEM)
            redo += o->t_fwd;
    }
    redo += time_scale(find_op(&lc, "qkv_proj")->t_fwd, kv / (q + 2 * kv)); /* wk */
    redo += find_op(&lc, "out_proj")->t_fwd;                                /* wo */
    redo += time_scale(find_op(&lc, "gate_up_proj")->t_fwd, 0.5);           /* w3 */
    assert_true(lc.recompute_selective - redo <= 2 && redo - lc.recompute_selective <= 2);
    assert_true(lc.act[RC_SELECTIVE] < lc.act[RC_NONE]);
    assert_true(lc.act[RC_SELECTIVE] > lc.act[RC_FULL]);

    s.par.tp = 2;
    s.par.sequence_parallel = true;
    s.gpus = 2;
    layer_of(&s, &lc);
    assert_rel(lc.act[RC_SELECTIVE],
               p * T / 2 * h + p * T * q / 2 + p * T * kv / 2 + (p * T * q / 2 + 4 * T * 16) +
                   p * T * f / 2 + p * T * h + 2 * p * T / 2 * h,
               1e-12);
}

/*
 * MoE token permutation (Megatron moe_utils.py): permute reads and writes the T*k routed
 * copies; unpermute weights them by the router probabilities (saving them) and scatter-adds
 * them into T tokens, (3k + 2)*T*h*p bytes; backward moves the same bytes.
 */
static void test_workload_moe_permutation(void **state)
{
    struct scenario s;
    struct shard sh;
    struct layer_cost lc;
    struct cfg_error err;
    const struct op *pm, *um;
    double T = 4096, h = 4096, k = 2, p = 2;

    (void)state;
    llama(&s, (int)h, 32, 8, 14336, 2, (int)T, 1, FW_MEGATRON);
    s.model.moe.experts = 8;
    s.model.moe.topk = (int)k;
    s.model.moe.ffn_hidden = 14336;
    s.model.moe.layer_freq = 1;
    assert_int_equal(scenario_finalize(&s, &err), 0);
    workload_shard(&s, &sh);
    workload_layer(&s, &sh, true, &lc);
    pm = find_op(&lc, "moe_permute");
    um = find_op(&lc, "moe_unpermute");
    assert_rel(pm->bytes, 2 * T * k * h * p, 1e-12);
    assert_rel(um->bytes, (3 * k + 2) * T * h * p, 1e-12);
    assert_rel(um->saved, T * k * h * p, 1e-12);
    assert_true(pm->t_dgrad == pm->t_fwd && um->t_dgrad == um->t_fwd);
    assert_int_equal(pm->seg, SEG_GATE);
}

/* ---- model and hardware FLOPs (MFU, HFU) ---------------------------------------------- */

/*
 * Full training of an MHA GeLU-4h model counts exactly Korthikanti App. A eq. 7:
 * 72·B·L·s·h²·(1 + s/6h + V/12hL) (forward and both gradients, no recomputation).
 */
static void test_workload_model_flops_korthikanti(void **state)
{
    struct scenario s;
    double h = 1024, L = 8, sq = 2048, B = 4, V = 51200, want;

    (void)state;
    gpt(&s, 1024, 16, 2048, 4, 1, false, ATTN_FLASH);
    want = 72 * B * L * sq * h * h * (1 + sq / (6 * h) + V / (12 * h * L));
    assert_true(fabs(workload_model_flops(&s) / want - 1) < 1e-12);
    assert_true(fabs(workload_hardware_flops(&s) / want - 1) < 1e-12); /* nothing recomputed */
}

/*
 * LoRA and QLoRA count what runs: frozen weights forward and input gradient (2 x their
 * forward FLOPs, no weight gradient), the attention core and the adapters forward and both
 * gradients (3 x). Per sequence and layer the weights' forward is 24·s·h², the core's
 * 4·s²·h; an adapter on q and on v adds 2·s·r·(h + h) each. (The old count, 3 x everything,
 * put a 4090's LoRA step at 83 % MFU.)
 */
static void test_workload_model_flops_lora_frozen(void **state)
{
    struct scenario s;
    double h = 1024, L = 8, sq = 2048, B = 4, V = 51200, r = 16;
    double weights = L * 24 * sq * h * h + 2 * sq * h * V, core = L * 4 * sq * sq * h;
    double adapters = L * 2 * (2 * sq * r * (h + h)), want;

    (void)state;
    gpt(&s, 1024, 16, 2048, 4, 1, false, ATTN_FLASH);
    s.train.finetune = FT_LORA;
    s.train.lora.rank = (int)r;
    s.train.lora.targets = LORA_Q | LORA_V;
    want = B * (2 * weights + 3 * core + 3 * adapters);
    assert_true(fabs(workload_model_flops(&s) / want - 1) < 1e-12);
    s.train.finetune = FT_QLORA; /* NF4 storage changes no FLOP count */
    assert_true(fabs(workload_model_flops(&s) / want - 1) < 1e-12);
    assert_non_null(strstr(workload_flops_convention(&s), "frozen weights 4N"));
}

/*
 * HFU adds the recomputation: full runs every layer's forward again (the head not), or the
 * first recompute_layers of each chunk; selective the unfused attention core; with
 * FlashAttention selective recomputes nothing.
 */
static void test_workload_hardware_flops_recompute(void **state)
{
    struct scenario s;
    double h = 1024, L = 8, sq = 2048, B = 4, layer = 24 * sq * h * h + 4 * sq * sq * h;
    double model;

    (void)state;
    gpt(&s, 1024, 16, 2048, 4, 1, false, ATTN_STANDARD);
    model = workload_model_flops(&s);
    s.train.recompute = RC_FULL;
    assert_true(fabs(workload_hardware_flops(&s) / (model + B * L * layer) - 1) < 1e-12);
    s.train.recompute_layers = 3;
    assert_true(fabs(workload_hardware_flops(&s) / (model + B * 3 * layer) - 1) < 1e-12);
    s.train.recompute_layers = 0;
    s.train.recompute = RC_SELECTIVE;
    assert_true(fabs(workload_hardware_flops(&s) / (model + B * L * 4 * sq * sq * h) - 1) < 1e-12);
    s.train.attention = ATTN_FLASH;
    assert_true(fabs(workload_hardware_flops(&s) / model - 1) < 1e-12);
    assert_true(fabs(workload_model_flops(&s) / model - 1) < 1e-12); /* MFU ignores recompute */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_korthikanti_formulas),
        cmocka_unit_test(test_workload_flash_removes_quadratic_terms),
        cmocka_unit_test(test_workload_gqa_shrinks_kv),
        cmocka_unit_test(test_workload_swiglu_and_eager_modules),
        cmocka_unit_test(test_workload_eager_chains_unfused),
        cmocka_unit_test(test_workload_eager_matches_hf_copies),
        cmocka_unit_test(test_workload_model_code),
        cmocka_unit_test(test_workload_mlp_backward_transient),
        cmocka_unit_test(test_workload_lora_params_match_litgpt),
        cmocka_unit_test(test_workload_lora_freezes_base),
        cmocka_unit_test(test_workload_qlora_dequantizes),
        cmocka_unit_test(test_workload_bias_gradient_reads_output),
        cmocka_unit_test(test_workload_megatron_bias_and_layout_copies),
        cmocka_unit_test(test_workload_attention_dropout_fa1),
        cmocka_unit_test(test_workload_megatron_cross_entropy_passes),
        cmocka_unit_test(test_workload_fused_cross_entropy_keeps_16bit_logits),
        cmocka_unit_test(test_workload_triton_attention_slower),
        cmocka_unit_test(test_workload_attention_unpad),
        cmocka_unit_test(test_workload_host_time_small_layers),
        cmocka_unit_test(test_workload_megatron_softmax_fallback),
        cmocka_unit_test(test_workload_lora_dropout_keeps_copy_and_mask),
        cmocka_unit_test(test_workload_cp_ring_kernels_and_merges),
        cmocka_unit_test(test_workload_torchtitan_op_sac),
        cmocka_unit_test(test_workload_moe_permutation),
        cmocka_unit_test(test_workload_model_flops_korthikanti),
        cmocka_unit_test(test_workload_model_flops_lora_frozen),
        cmocka_unit_test(test_workload_hardware_flops_recompute),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
