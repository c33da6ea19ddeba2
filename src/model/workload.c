/* workload.c - the operators of a layer, the embedding and the head; see workload.h for the model
 * and its sources. */
#include "model/workload.h"

#include <assert.h>
#include <string.h>

#include "model/cost.h"
#include "model/fp8.h"

struct ctx {
    const struct scenario *s;
    const struct gpu_spec *gpu;
    const struct efficiency *eff;
    enum dtype dt;        /* every GEMM but the FP8 projections (16-bit under FP8) */
    enum fp8_recipe fp8;  /* FP8 projections (FP8_NONE: none) */
    bool fp8_megatron;    /* TE through Megatron's modules (fused norm-linear, cached weights) */
    double micro_batches; /* per optimizer step, per rank (cached FP8 weights cast once) */
    double p;             /* bytes per activation element */
    double T;             /* tokens per rank entering GEMMs (b * s / cp) */
    double Tn;            /* tokens per rank in norms, dropout, residual (T / tp under SP) */
    double tp;
    bool lora;        /* LoRA or QLoRA: base weights frozen */
    bool qlora;       /* base projection weights stored as NF4 */
    bool int8;        /* base projection weights stored as LLM.int8 (finetune lora_int8) */
    bool quant;       /* either: bitsandbytes keeps each projection's input for backward */
    unsigned targets; /* enum lora_target bits (0 for full training) */
    bool eager;       /* unfused PyTorch modules (workload_eager()) */
    bool hf;          /* Hugging Face Transformers + PEFT model code (scenario_model_code()) */
    double window;    /* share of the causal attention pairs a windowed layer computes, <= 1 */
};

/* Append an operator to ops[0..max): the tables hold every operator a layer can have. */
static struct op *add_op(struct op *ops, int *n, int max, const char *name, int kind, int part,
                         int seg)
{
    struct op *o;

    assert(*n < max && "operator table full: raise MAX_OPS");
    if (*n >= max)
        return NULL;
    o = &ops[(*n)++];
    memset(o, 0, sizeof(*o));
    snprintf(o->name, sizeof(o->name), "%s", name);
    o->kind = kind;
    o->part = part;
    o->seg = seg;
    o->batch = 1;
    return o;
}

/* A weight GEMM: forward (m x k)(k x n), dgrad (m x n)(n x k), wgrad (k x m)(m x n). */
static void gemm(const struct ctx *c, struct op *o, double m, double n, double k, double batch,
                 double saved)
{
    o->m = m;
    o->n = n;
    o->k = k;
    o->batch = batch;
    o->flops = 2 * m * n * k * batch;
    o->hw_flops = o->flops;
    o->bytes = c->p * batch * (m * k + k * n + m * n);
    o->t_fwd = cost_gemm(c->gpu, c->eff, c->dt, m, n, k, batch);
    o->t_dgrad = cost_gemm(c->gpu, c->eff, c->dt, m, k, n, batch);
    o->t_wgrad = cost_gemm(c->gpu, c->eff, c->dt, k, n, m, batch);
    o->saved = saved;
}

/*
 * A projection: gemm() in FP8 when the recipe converts it (fp8.h), with its cast kernels in
 * forward and backward and what it saves. `saved` is its 16-bit input kept for backward
 * (elements x p); k_glob and n_glob its whole weight's in and out features.
 */
static void proj(const struct ctx *c, struct op *o, double m, double n, double k, double batch,
                 double saved, double k_glob, double n_glob, bool after_norm)
{
    struct fp8_proj pr = { m, k, n, batch, k_glob, n_glob, after_norm, c->micro_batches };
    struct fp8_cost fc;
    struct ctx f = *c;

    fp8_projection(c->s, c->fp8_megatron, &pr, &fc);
    if (fc.fp8)
        f.dt = DT_FP8;
    gemm(&f, o, m, n, k, batch, saved);
    if (!fc.fp8)
        return;
    o->fp8 = true;
    o->bias_in_cast = fc.bias_grad_fused;
    o->t_fwd = time_add(o->t_fwd, fc.fwd);
    o->t_dgrad = time_add(o->t_dgrad, fc.bwd);
    o->extra_kernels_fwd = fc.kernels_fwd;
    o->extra_kernels_bwd = fc.kernels_bwd;
    if (fc.input_bytes > 0)
        o->saved = saved / c->p * fc.input_bytes;
    o->saved += fc.weight_saved;
}

/* A memory-bound op moving `bytes` forward; backward moves about twice as much. */
static void membound(const struct ctx *c, struct op *o, double bytes, double saved)
{
    o->bytes = bytes;
    o->t_fwd = cost_membound(c->gpu, c->eff, bytes);
    o->t_dgrad = cost_membound(c->gpu, c->eff, 2 * bytes);
    o->saved = saved;
}

/*
 * The bias gradient of a projection with a bias: a reduction of the output
 * gradient over the tokens, `rows` x `cols` elements read once (Megatron
 * ColumnParallelLinear backward `grad_bias = grad_output.sum(dim=0)`; the
 * row-parallel bias is added in the fused bias-dropout-add, whose autograd
 * backward sums the same way; PyTorch nn.Linear's backward likewise).
 */
static void bias_grad(const struct ctx *c, struct op *o, double rows, double cols, bool biased)
{
    if (!biased || c->lora || o->bias_in_cast)
        return;
    o->t_wgrad = time_add(o->t_wgrad, cost_membound(c->gpu, c->eff, rows * cols * c->p));
}

double workload_nf4_bytes(bool double_quant)
{
    /*
     * NF4: 4 bits per weight, one absmax per 64-weight block. Plain: an fp32
     * constant per block, 32/64 bit. Double quantization: 8-bit constants in
     * blocks of 256 with one fp32 second-level constant, 8/64 + 32/(64*256)
     * bit (QLORA §3: 0.5 -> 0.127 bit/param; BNB functional.py blocksize 64).
     */
    if (double_quant)
        return 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0);
    return 0.5 + 4.0 / 64.0;
}

/*
 * A base projection under LoRA: frozen, so no weight gradient. PyTorch's
 * autograd saves a matmul operand only for the other operand's gradient
 * (generated VariableType: `if (grad_fn->should_compute_output(1)) self_ =
 * SavedVariable(self)`), so a frozen nn.Linear keeps its input only when an
 * adapter on it (bits `mask` of the targets) needs the same tensor.
 * bitsandbytes' MatMul4Bit saves its input whenever any input needs a
 * gradient (autograd/_functions.py: `ctx.tensors = (A, B)`), so a QLoRA
 * `quantized` projection keeps it regardless.
 */
static void freeze(const struct ctx *c, struct op *o, unsigned mask, bool quantized)
{
    if (!c->lora)
        return;
    o->t_wgrad = 0;
    if (!(c->targets & mask) && !(quantized && c->quant))
        o->saved = 0;
}

/*
 * The adapter of one targeted projection (d_in -> d_out per rank, `batch`
 * experts): forward x*A then (xA)*B; backward the input gradients of both and
 * the weight gradients of A and B; xA is saved for B's gradient. Adds its cost
 * to `o` and returns its parameters per rank, r * (d_in + d_out) * batch.
 */
/*
 * DoRA on one adapted projection (PEFT 0.19 tuners/lora/dora.py
 * DoraLinearLayer.forward via variants.py DoraLinearVariant.forward), per
 * training forward, recomputation included:
 * - the weight norm, detached from the graph (DoRA §4.3): lora_B(lora_A(eye(d_in)))
 *   as two GEMMs, d_in x r x d_in and d_in x d_out x r, then memory-bound
 *   passes over weight-sized tensors: writing eye (4 B per d_in^2), the fp32
 *   product's write and cast (4 + 4 + 2 B), `scaling * lora_weight` (2 + 2),
 *   `weight + ...` (4 + 2) and the row norm (2): 22 B per weight; a quantized
 *   base is dequantized first (dequantize_module_weight);
 * - the combination `(m / ||.|| - 1) * base + m / ||.|| * lora * scaling`:
 *   five read-and-write passes over the T x d_out output forward, twice that
 *   backward (the magnitude's gradient reduces over the tokens), saving the
 *   base and the LoRA results (2 p T d_out) for the magnitude's gradient;
 * - with lora_dropout > 0 the base result is recomputed on the dropped input
 *   (`base_result = F.linear(x, weight)`): one more base GEMM forward and its
 *   input gradient backward.
 * The transient weight-sized tensors are memory_dora_bytes(). Returns the
 * magnitude vector's trainable parameters, d_out per matrix.
 */
static double dora(const struct ctx *c, struct op *o, double T, double d_in, double d_out,
                   double batch)
{
    const struct gpu_spec *g = c->gpu;
    const struct efficiency *e = c->eff;
    double r = c->s->train.lora.rank, p = c->p, w = d_in * d_out * batch;
    double qbytes = c->int8 ? 1.0 : workload_nf4_bytes(c->s->train.lora.double_quant);
    double passes = 4 * d_in * d_in * batch + 22 * w + (c->quant ? (qbytes + 2) * w : 0);
    double out = T * d_out * batch;

    o->hw_flops += 2 * r * d_in * (d_in + d_out) * batch;
    o->bytes += passes + 10 * p * out;
    o->t_fwd = time_add(o->t_fwd, time_add(cost_gemm(g, e, c->dt, d_in, r, d_in, batch),
                                           cost_gemm(g, e, c->dt, d_in, d_out, r, batch)));
    o->t_fwd = time_add(o->t_fwd, cost_membound(g, e, passes + 10 * p * out));
    o->t_dgrad = time_add(o->t_dgrad, cost_membound(g, e, 20 * p * out));
    o->saved += 2 * p * out;
    if (c->s->train.lora.dropout > 0) {
        o->hw_flops += 2 * T * d_in * d_out * batch;
        o->t_fwd = time_add(o->t_fwd, cost_gemm(g, e, c->dt, T, d_out, d_in, batch));
        o->t_dgrad = time_add(o->t_dgrad, cost_gemm(g, e, c->dt, T, d_in, d_out, batch));
    }
    return d_out * batch;
}

static double adapter(const struct ctx *c, struct op *o, double T, double d_in, double d_out,
                      double batch)
{
    double r = c->s->train.lora.rank;
    const struct gpu_spec *g = c->gpu;
    const struct efficiency *e = c->eff;
    double flops = 2 * T * r * (d_in + d_out) * batch;

    o->flops += flops;
    o->hw_flops += flops;
    o->bytes += c->p * batch * (T * d_in + 2 * T * r + T * d_out + r * (d_in + d_out));
    o->t_fwd = time_add(o->t_fwd, time_add(cost_gemm(g, e, c->dt, T, r, d_in, batch),
                                           cost_gemm(g, e, c->dt, T, d_out, r, batch)));
    o->t_dgrad = time_add(o->t_dgrad, time_add(cost_gemm(g, e, c->dt, T, r, d_out, batch),
                                               cost_gemm(g, e, c->dt, T, d_in, r, batch)));
    o->t_wgrad = time_add(o->t_wgrad, time_add(cost_gemm(g, e, c->dt, r, d_out, T, batch),
                                               cost_gemm(g, e, c->dt, d_in, r, T, batch)));
    o->saved += c->p * T * r * batch;
    if (c->s->train.lora.dora)
        return r * (d_in + d_out) * batch + dora(c, o, T, d_in, d_out, batch);
    return r * (d_in + d_out) * batch;
}

/*
 * lora_dropout > 0 (LitGPT LoRALayer and PEFT LoraLayer compute
 * lora_B(lora_A(dropout(x)))): the adapters of one input read a dropped copy
 * of it, which autograd saves for lora_A's weight gradient together with
 * dropout's 1-byte mask, instead of x; the frozen projection `base` then keeps
 * x only when its own backward needs it (`base_needs`: QLoRA's MatMul4Bit, or
 * a fused attention output). LitGPT's fused QKV applies one lora_dropout to x
 * for all its adapters: one copy per input. PEFT wraps each targeted
 * nn.Linear in its own lora.Linear with its own `lora_dropout[adapter]`
 * module (peft/tuners/lora/layer.py, Linear.forward: `x = dropout(x)` per
 * module), so q_proj, k_proj and v_proj (and gate_proj, up_proj) each keep a
 * dropped copy and a mask of the same input: one per adapter among `mask`.
 * Each dropout is a memory-bound pass reading x and writing the copy and mask.
 */
static void adapter_dropout(const struct ctx *c, struct op *base, struct op *lora, double rows,
                            double d_in, bool base_needs, unsigned mask)
{
    unsigned sharing = c->targets & mask;
    double copies = 1, elems;

    if (!(c->s->train.lora.dropout > 0))
        return;
    if (c->hf)
        for (copies = 0; sharing; sharing &= sharing - 1)
            copies++;
    elems = copies * rows * d_in;
    if (!base_needs)
        base->saved = 0;
    lora->saved += elems * (c->p + 1);
    lora->t_fwd = time_add(lora->t_fwd, cost_membound(c->gpu, c->eff, elems * (2 * c->p + 1)));
    lora->t_dgrad = time_add(lora->t_dgrad, cost_membound(c->gpu, c->eff, elems * (2 * c->p + 1)));
}

/* NF4 -> bf16 dequantization of `weights` projection weights, before forward and backward GEMMs. */
static void dequant_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part,
                       double weights)
{
    struct op *o;

    if (!c->qlora)
        return;
    o = add_op(ops, n, MAX_OPS, name, OP_MEM, part, SEG_COL);
    membound(c, o, weights * (workload_nf4_bytes(c->s->train.lora.double_quant) + 2.0), 0);
    o->t_dgrad = o->t_fwd;
}

/*
 * LLM.int8 base projections (bitsandbytes 0.45-0.49 MatMul8bitLt,
 * autograd/_functions.py, with load_in_8bit's threshold 6.0): forward casts
 * each module's input to fp16 (`A.to(torch.float16)`, a copy when training in
 * bf16: read and write 2 B) and quantizes it row-wise (int8_vectorwise_quant:
 * read 2 B, write 1 B), then runs the int8 GEMM with its dequantizing
 * epilogue (int8_mixed_scaled_mm) at the int8 peak (int8_gemm()); the outlier
 * columns' fp16 GEMM is not counted (LLM.int8 §3.2: about 0.1 % of the
 * features). Backward dequantizes the weight to a 16-bit copy
 * (`CB.to(dtype_A, copy=True).mul_(SCB / 127)`: read 1 B, write 2 B, read and
 * write 2 B per weight) for the input-gradient GEMM at the training dtype.
 * `in_elems`: the input elements every module quantizes, summed over the
 * part's modules (Hugging Face's q, k, v and gate, up are separate modules,
 * each quantizing the same input).
 */
static void int8_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part,
                    double in_elems, double weights)
{
    double per_elem = c->dt == DT_BF16 ? 2 + 2 + 2 + 1 : 2 + 1;
    struct op *o;

    if (!c->int8)
        return;
    o = add_op(ops, n, MAX_OPS, name, OP_MEM, part, SEG_COL);
    membound(c, o, in_elems * per_elem, 0);
    o->t_dgrad = cost_membound(c->gpu, c->eff, weights * (1.0 + 2.0 + 4.0));
}

/* An LLM.int8 base GEMM's forward at the int8 peak (int8_op()); backward stays at the dtype. */
static void int8_gemm(const struct ctx *c, struct op *o)
{
    if (c->int8)
        o->t_fwd = cost_gemm(c->gpu, c->eff, DT_INT8, o->m, o->n, o->k, o->batch);
}

static double norm_stats_bytes(const struct model *m)
{
    /* fp32 per token: LayerNorm keeps mean and rstd, RMSNorm rstd only. */
    return m->norm == NORM_LAYERNORM ? 8.0 : 4.0;
}

static void ctx_init(struct ctx *c, const struct scenario *s, const struct shard *sh)
{
    c->s = s;
    c->gpu = &s->hw.gpu;
    c->eff = &s->hw.eff;
    /*
     * FP8 recipes convert the projections only (fp8_linear()); everything else runs in BF16:
     * the attention core (Transformer Engine's fp8_dpa / fp8_mha are False by default,
     * transformer_engine/common/recipe; torchao converts nn.Linear only, float8_linear.py),
     * the LM head (Megatron's output layer is not a TE module; torchtitan filters "output";
     * llm-foundry's tied head is F.linear on wte.weight), the router and LoRA adapters.
     */
    c->dt = sh->dt == DT_FP8 ? DT_BF16 : sh->dt;
    c->fp8 = sh->dt == DT_FP8 ? s->train.fp8_recipe : FP8_NONE;
    c->fp8_megatron = scenario_model_code(s) == CODE_MEGATRON;
    c->micro_batches = (double)s->train.global_batch /
                       ((double)s->train.micro_batch * (s->par.dp > 0 ? s->par.dp : 1));
    /* fp8 training keeps activations in 16 bits outside the GEMMs (Transformer Engine). */
    c->p = dtype_bytes(sh->dt) < 2 ? 2 : dtype_bytes(sh->dt);
    c->tp = sh->tp;
    c->T = (double)sh->b * sh->s / sh->cp;
    c->Tn = sh->sp ? c->T / sh->tp : c->T;
    c->lora = s->train.finetune != FT_FULL;
    c->qlora = s->train.finetune == FT_QLORA;
    c->int8 = s->train.finetune == FT_LORA_INT8;
    c->quant = c->qlora || c->int8;
    c->targets = c->lora ? s->train.lora.targets : 0;
    c->eager = workload_eager(s);
    c->hf = scenario_model_code(s) == CODE_HF;
    c->window = 1;
}

bool workload_eager(const struct scenario *s)
{
    return scenario_model_code(s) != CODE_MEGATRON;
}

void workload_shard(const struct scenario *s, struct shard *sh)
{
    sh->b = s->train.micro_batch;
    sh->s = s->train.seq_len;
    sh->tp = s->par.tp;
    sh->cp = s->par.cp;
    sh->ep = s->par.ep;
    sh->sp = s->par.sequence_parallel;
    sh->dt = s->train.precision;
}

bool workload_is_moe(const struct model *m, int layer)
{
    int f = m->moe.layer_freq > 0 ? m->moe.layer_freq : 1;

    return m->moe.experts > 0 && (layer + 1) % f == 0;
}

int workload_mlp_matrices(const struct model *m)
{
    return m->act == ACT_GELU ? 2 : 3;
}

bool workload_is_windowed(const struct scenario *s, int layer)
{
    const struct model *m = &s->model;

    if (m->window <= 0 || m->window >= s->train.seq_len)
        return false;
    return m->window_pattern <= 0 || (layer + 1) % m->window_pattern != 0;
}

double workload_window_share(int seq_len, int window)
{
    double sl = seq_len, w = window;

    /*
     * Query i attends keys max(0, i - w + 1) .. i: s*w - w^2/2 pairs against the
     * s^2/2 of full causal attention, in the continuous form the causal halving
     * uses (hw_flops = flops / 2).
     */
    if (window <= 0 || window >= seq_len)
        return 1;
    return (2 * sl * w - w * w) / (sl * sl);
}

/*
 * Norm, then residual-dropout: the replicated (or SP-sharded) memory-bound ops.
 * `max`: the capacity of ops (a layer's MAX_OPS, or an edge's table).
 */
static void norm_op(const struct ctx *c, struct op *ops, int *n, int max, const char *name,
                    int part)
{
    const struct model *m = &c->s->model;
    double act = c->Tn * m->hidden * c->p;
    double saved = act + c->Tn * norm_stats_bytes(m);
    struct op *o = add_op(ops, n, max, name, OP_MEM, part, SEG_PRE);

    /*
     * Eager RMSNorm (HF LlamaRMSNorm, LitGPT RMSNorm) upcasts its input to fp32
     * and keeps that copy for pow and mul; its 16-bit output is the next
     * projection's input, counted there when that projection keeps it.
     */
    if (c->eager && m->norm == NORM_RMSNORM)
        saved = c->Tn * m->hidden * 4 + c->Tn * norm_stats_bytes(m);
    membound(c, o, 2 * act, saved);
}

/*
 * Eager attention on a fused QKV projection with RoPE keeps the whole fused
 * output alive (LitGPT lit_gpt/model.py CausalSelfAttention.forward, commit
 * 8641822 and later): q, k and v are views of `qkv` (view, permute, split; for
 * multi-head attention the reshape to (B, nh, T, hs) is still a view),
 * apply_rope and torch.cat give Q and K new tensors, and V, a view, is saved
 * by scaled_dot_product_attention, which pins the storage of all of `qkv`. So
 * beside the Q, K, V the attention op counts, the Q and K parts of the fused
 * output stay: p*T*(q + kv), counted on the rope op. With grouped-query
 * attention LitGPT expands and reshapes K and V into copies, and V no longer
 * pins `qkv` (not modelled: the copies' extra size is not counted either).
 * Separate q/k/v projections (Hugging Face Llama, model code hf) do not pin
 * anything; other eager code follows LitGPT's fused layout.
 */
static bool fused_qkv_pinned(const struct ctx *c)
{
    const struct model *m = &c->s->model;

    return c->eager && !c->hf && m->pos == POS_ROPE && m->kv_heads == m->heads;
}

/*
 * A norm on a sublayer's output before its residual add (Gemma 2/3
 * post_attention_layernorm and post_feedforward_layernorm, transformers
 * models/gemma2/modeling_gemma2.py Gemma2DecoderLayer.forward): the same
 * operator as the pre-norm, sitting after the row-parallel projection.
 */
static void post_norm_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part)
{
    norm_op(c, ops, n, MAX_OPS, name, part);
    ops[*n - 1].seg = SEG_POST;
}

/*
 * Per-head RMSNorm of q and k over head_dim (Qwen3Attention q_norm / k_norm,
 * transformers models/qwen3/modeling_qwen3.py; Gemma 3 likewise), between the
 * QKV projection and RoPE: reads and writes T * (q + kv) elements. It saves
 * what norm_op() saves, per head instead of per token: the input (the fp32
 * upcast under eager code) and one fp32 rstd per head and token.
 */
static void qk_norm_op(const struct ctx *c, struct op *ops, int *n, double T, double heads,
                       double kvh, double d)
{
    double elems = T * (heads + kvh) * d;
    double stats = T * (heads + kvh) * 4;
    struct op *o = add_op(ops, n, MAX_OPS, "qk_norm", OP_MEM, PART_ATTN, SEG_MID);

    membound(c, o, 2 * elems * c->p, (c->eager ? 4 : c->p) * elems + stats);
}

/*
 * tanh soft-capping of `elems` 16-bit values, `cap * tanh(x / cap)` as three
 * element-wise kernels (transformers Gemma2: eager_attention_forward on the
 * scores, Gemma2ForCausalLM.forward on the logits): each reads and writes the
 * tensor forward; backward runs mul, tanh's (reading its saved output) and div
 * backward, 7 bytes-per-element passes of p; tanh saves its output. On the
 * scores it belongs to the attention core (recomputed by selective recompute).
 */
static void softcap_op(const struct ctx *c, struct op *ops, int *n, int max, const char *name,
                       int part, double elems, bool core)
{
    struct op *o = add_op(ops, n, max, name, OP_MEM, part, core ? SEG_CORE : SEG_POST);

    o->bytes = 6 * c->p * elems;
    o->t_fwd = cost_membound(c->gpu, c->eff, 6 * c->p * elems);
    o->t_dgrad = cost_membound(c->gpu, c->eff, 7 * c->p * elems);
    o->saved = c->p * elems;
    o->core = core;
}

static void residual_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part)
{
    const struct model *m = &c->s->model;
    double act = c->Tn * m->hidden * c->p;
    double mask = m->dropout ? c->Tn * m->hidden : 0;
    struct op *o = add_op(ops, n, MAX_OPS, name, OP_MEM, part, SEG_POST);

    membound(c, o, 3 * act + mask, mask);
}

/*
 * The unfused attention's softmax over `probs` scores, then its dropout, as
 * separate kernels (Megatron CoreAttention / ParallelAttention: `attention_probs
 * = self.scale_mask_softmax(...)`, then `self.attention_dropout(attention_probs)`,
 * a torch.nn.Dropout; Hugging Face eager attention the same).
 * - Softmax: Megatron's fused causal kernel (cost_fused_softmax(), measured
 *   efficiency); eager code PyTorch's softmax, reading and writing full rows
 *   forward, reading the output gradient and output and writing the input
 *   gradient backward (3p per score, not twice the forward). It saves its
 *   output for its own backward (KOR22 §4.1: 2as^2b).
 * - Dropout: PyTorch's fused_dropout kernel reads the probabilities and writes
 *   the dropped copy and a 1-byte mask; its backward (_masked_scale) reads the
 *   gradient and the mask and writes the input gradient: 2p + 1 bytes per
 *   score each way. It saves the mask and its output (the AV GEMM's input;
 *   KOR22: as^2b + 2as^2b). FlashAttention App. E.6 measures this kernel on an
 *   A100 40GB: with dropout minus without, at batch 16, 8 heads, sequence 2048,
 *   +2.24 to +2.28 ms forward and +1.94 to +1.95 ms backward (Tables 15/18,
 *   16/19; PyTorch and Megatron rows); 5 B per score at the stream rate gives
 *   2.11 ms each way (test_workload.c).
 */
static void softmax_ops(const struct ctx *c, struct op *ops, int *n, double probs)
{
    double p = c->p;
    struct op *o = add_op(ops, n, MAX_OPS, "softmax", OP_MEM, PART_ATTN, SEG_CORE);

    o->bytes = 2 * p * probs;
    if (c->eager) {
        o->t_fwd = cost_membound(c->gpu, c->eff, 2 * p * probs);
        o->t_dgrad = cost_membound(c->gpu, c->eff, 3 * p * probs);
    } else {
        o->t_fwd = cost_fused_softmax(c->gpu, c->eff, probs, p, true, false);
        o->t_dgrad = cost_fused_softmax(c->gpu, c->eff, probs, p, true, true);
    }
    o->saved = p * probs;
    o->core = true;
    if (!c->s->model.dropout)
        return;
    o = add_op(ops, n, MAX_OPS, "attn_dropout", OP_MEM, PART_ATTN, SEG_CORE);
    o->bytes = (2 * p + 1) * probs;
    o->t_fwd = cost_membound(c->gpu, c->eff, (2 * p + 1) * probs);
    o->t_dgrad = o->t_fwd;
    o->saved = (p + 1) * probs;
    o->core = true;
}

static void attention_ops(const struct ctx *c, const struct shard *sh, struct layer_cost *lc)
{
    const struct model *m = &c->s->model;
    struct op *ops = lc->ops;
    int *n = &lc->nops;
    double h = m->hidden, d = m->head_dim;
    double heads = m->heads / c->tp, kvh = m->kv_heads / c->tp;
    double q = heads * d, kv = kvh * d;
    double sq = (double)sh->s / sh->cp, sk = sh->s, b = sh->b;
    double T = c->T, p = c->p;
    unsigned tg = c->targets;
    struct op *o, *base;

    norm_op(c, ops, n, MAX_OPS, "attn_norm", PART_ATTN);
    dequant_op(c, ops, n, "nf4_dequant_attn", PART_ATTN, h * (q + 2 * kv) + q * h);
    int8_op(c, ops, n, "int8_quant_attn", PART_ATTN, T * h * (c->hf ? 3 : 1) + T * q,
            h * (q + 2 * kv) + q * h);
    o = add_op(ops, n, MAX_OPS, "qkv_proj", OP_GEMM, PART_ATTN, SEG_COL);
    proj(c, o, T, q + 2 * kv, h, 1, c->Tn * h * p, h, (q + 2 * kv) * c->tp, true);
    int8_gemm(c, o);
    bias_grad(c, o, T, q + 2 * kv, m->bias || m->qkv_bias);
    freeze(c, o, LORA_Q | LORA_K | LORA_V, true);
    base = o;
    if ((m->bias || m->qkv_bias) && !c->eager) {
        /*
         * Megatron's column-parallel linear adds its bias out of place after the
         * GEMM (`output = torch.matmul(total_input, weight.t())` then `output =
         * output + bias`: LinearWithGradAccumulationAndAsyncCommunication in
         * megatron/core/tensor_parallel/layers.py, mpu/layers.py before it): one
         * more read and write of the QKV output. The add's backward is the
         * identity; the bias gradient is bias_grad()'s reduction. The fc1 bias
         * is fused into bias-GeLU and the row-parallel biases into
         * bias-dropout-add (skip_bias_add), so only QKV pays it.
         */
        o = add_op(ops, n, MAX_OPS, "qkv_bias_add", OP_MEM, PART_ATTN, SEG_MID);
        membound(c, o, 2 * T * (q + 2 * kv) * p, 0);
        o->t_dgrad = 0;
    }
    if (tg & (LORA_Q | LORA_K | LORA_V)) {
        /* Column-parallel: A (h x r) replicated, B (r x d_out / tp) sharded. */
        o = add_op(ops, n, MAX_OPS, "lora_qkv", OP_GEMM, PART_ATTN, SEG_COL);
        adapter_dropout(c, base, o, T, h, c->quant, LORA_Q | LORA_K | LORA_V);
        if (tg & LORA_Q)
            lc->lora_params[PART_ATTN] += adapter(c, o, T, h, q, 1);
        if (tg & LORA_K)
            lc->lora_params[PART_ATTN] += adapter(c, o, T, h, kv, 1);
        if (tg & LORA_V)
            lc->lora_params[PART_ATTN] += adapter(c, o, T, h, kv, 1);
    }
    if (m->qk_norm)
        qk_norm_op(c, ops, n, T, heads, kvh, d);
    if (m->pos == POS_ROPE) {
        o = add_op(ops, n, MAX_OPS, "rope", OP_MEM, PART_ATTN, SEG_MID);
        membound(c, o, 2 * T * (q + kv) * p, fused_qkv_pinned(c) ? p * T * (q + kv) : 0);
    }
    if (c->s->train.attention == ATTN_FLASH) {
        /* Fused kernel: saves Q, K, V and fp32 log-sum-exp; O is saved as the out-proj input. */
        double flops = 4 * b * sq * sk * q * c->window;
        double io = p * T * (2 * q + 2 * kv);
        enum attn_impl impl = c->s->train.attention_impl;
        struct attn_shape shape = { d, sk, true };
        o = add_op(ops, n, MAX_OPS, "flash_attention", OP_ATTN, PART_ATTN, SEG_CORE);
        o->flops = flops;
        o->hw_flops = flops / 2; /* causal: masked blocks skipped */
        o->bytes = io;
        o->t_fwd = cost_flash_attention(c->gpu, c->eff, c->dt, impl, &shape, o->hw_flops, io);
        o->t_dgrad = time_add(
            cost_flash_attention(c->gpu, c->eff, c->dt, impl, &shape, 2.5 * o->hw_flops, 2 * io),
            cost_attn_impl_bwd_extra(c->gpu, c->eff, impl, T * q, T * (q + 2 * kv), p));
        o->saved = p * T * (q + 2 * kv) + 4 * T * heads;
        if (c->eager)
            o->saved += p * T * q; /* O; the out-proj input is a contiguous copy of it */
        o->core = false;           /* FlashAttention already recomputes S and P internally */
    } else {
        /* Unfused: batched QK^T, scale-mask-softmax (+dropout), batched AV (KOR22 §4.1). */
        double probs = b * heads * sq * sk;
        o = add_op(ops, n, MAX_OPS, "attn_scores", OP_GEMM, PART_ATTN, SEG_CORE);
        gemm(c, o, sq, sk, d, b * heads, p * T * (q + kv));
        o->t_wgrad = 0; /* no weights: both backward GEMMs are input gradients */
        o->t_dgrad = time_mul(cost_gemm(c->gpu, c->eff, c->dt, sq, d, sk, b * heads), 2);
        o->core = true;
        o->kept = o->saved; /* Q and K are the recomputation's inputs (KOR22 §5) */
        if (m->attn_softcap)
            softcap_op(c, ops, n, MAX_OPS, "attn_softcap", PART_ATTN, probs, true);
        softmax_ops(c, ops, n, probs);
        o = add_op(ops, n, MAX_OPS, "attn_values", OP_GEMM, PART_ATTN, SEG_CORE);
        gemm(c, o, sq, d, sk, b * heads, p * T * kv);
        o->t_wgrad = 0;
        o->t_dgrad = time_mul(cost_gemm(c->gpu, c->eff, c->dt, sq, sk, d, b * heads), 2);
        o->core = true;
        o->kept = o->saved; /* V */
        /*
         * [b, np, sq, hn] -> [sq, b, np, hn]: `context_layer.permute(2, 0, 1,
         * 3).contiguous()` (Megatron CoreAttention; Hugging Face eager attention
         * likewise `attn_output.transpose(1, 2).contiguous()`), a copy of the
         * output. Its backward is a view: the grad reaches the batched GEMM strided.
         */
        o = add_op(ops, n, MAX_OPS, "attn_out_layout", OP_MEM, PART_ATTN, SEG_CORE);
        membound(c, o, 2 * T * q * p, 0);
        o->t_dgrad = 0;
        o->core = true;
    }
    o = add_op(ops, n, MAX_OPS, "out_proj", OP_GEMM, PART_ATTN, SEG_ROW);
    proj(c, o, T, h, q, 1, p * T * q, q * c->tp, h, false);
    int8_gemm(c, o);
    bias_grad(c, o, c->Tn, h, m->bias); /* replicated bias, on the (sequence-sharded) output */
    /*
     * Fused (Megatron): the out-proj input is FlashAttention's O, which its
     * backward needs anyway, so a frozen out-proj cannot drop it. Eager: the
     * input is a transposed contiguous copy (HF `attn_output.reshape(...)`),
     * saved only as any other frozen projection input.
     */
    freeze(c, o, c->s->train.attention == ATTN_FLASH && !c->eager ? ~0u : LORA_O, true);
    base = o;
    if (tg & LORA_O) {
        /* Row-parallel: A (q / tp x r) sharded, B (r x h) replicated. */
        o = add_op(ops, n, MAX_OPS, "lora_o", OP_GEMM, PART_ATTN, SEG_ROW);
        adapter_dropout(c, base, o, T, q,
                        c->quant || (c->s->train.attention == ATTN_FLASH && !c->eager), LORA_O);
        lc->lora_params[PART_ATTN] += adapter(c, o, T, q, h, 1);
    }
    if (m->post_norms)
        post_norm_op(c, ops, n, "attn_post_norm", PART_ATTN);
    residual_op(c, ops, n, "attn_residual", PART_ATTN);
}

static void mlp_ops(const struct ctx *c, bool moe, struct layer_cost *lc)
{
    const struct model *m = &c->s->model;
    const struct scenario *s = c->s;
    struct op *ops = lc->ops;
    int *n = &lc->nops;
    double h = m->hidden, p = c->p, T = c->T;
    double f = (moe ? m->moe.ffn_hidden : m->ffn_hidden) / c->tp;
    bool swiglu = workload_mlp_matrices(m) == 3; /* SwiGLU or gated GeLU: gate, up and down */
    double up = swiglu ? 2 * f : f;
    double tokens = T, batch = 1, unpermute_bytes = 0;
    unsigned tg = c->targets, in_mask = swiglu ? LORA_GATE | LORA_UP : LORA_UP;
    struct op *o, *base;

    norm_op(c, ops, n, MAX_OPS, "mlp_norm", PART_MLP);
    lc->moe_a2a_bytes = 0;
    if (moe) {
        /* Router, then top-k tokens per rank spread over E/ep local experts (uniform routing). */
        double E = m->moe.experts, ep = s->par.ep, k = m->moe.topk;
        double cf = m->moe.capacity_factor > 0 ? m->moe.capacity_factor : 1.0;
        o = add_op(ops, n, MAX_OPS, "router", OP_GEMM, PART_MLP, SEG_GATE);
        gemm(c, o, T, E, h, 1, T * E * 4);
        bias_grad(c, o, T, E, m->moe.router_bias);
        batch = E / ep;
        tokens = T * k * ep / E * cf;
        lc->moe_a2a_bytes = T * k * h * p;
        /*
         * Token permutation (Megatron core moe_utils.py permute / unpermute, the
         * token dispatcher's non-fused path): permute gathers each token's k
         * copies grouped by expert (read and write T*k*h); unpermute weights the
         * expert outputs by their router probabilities (read and write T*k*h,
         * saving the expert outputs for the probabilities' gradient), then
         * scatter-adds them back into T*h (read T*k*h, read and write T*h).
         * Backward moves the same bytes in reverse.
         */
        o = add_op(ops, n, MAX_OPS, "moe_permute", OP_MEM, PART_MLP, SEG_GATE);
        membound(c, o, 2 * T * k * h * p, 0);
        o->t_dgrad = o->t_fwd;
        unpermute_bytes = (3 * k + 2) * T * h * p;
    }
    dequant_op(c, ops, n, "nf4_dequant_mlp", PART_MLP, (swiglu ? 3 : 2) * h * f * batch);
    int8_op(c, ops, n, "int8_quant_mlp", PART_MLP,
            tokens * batch * (h * (c->hf && swiglu ? 2 : 1) + f), (swiglu ? 3 : 2) * h * f * batch);
    o = add_op(ops, n, MAX_OPS, swiglu ? "gate_up_proj" : "fc1", OP_GEMM, PART_MLP, SEG_COL);
    proj(c, o, tokens, up, h, batch, (moe ? tokens * batch : c->Tn) * h * p, h, up * c->tp, true);
    int8_gemm(c, o);
    bias_grad(c, o, tokens * batch, up, m->bias);
    freeze(c, o, in_mask, true);
    base = o;
    if (tg & in_mask) {
        o = add_op(ops, n, MAX_OPS, "lora_gate_up", OP_GEMM, PART_MLP, SEG_COL);
        adapter_dropout(c, base, o, tokens * batch, h, c->quant, in_mask);
        if (swiglu && (tg & LORA_GATE))
            lc->lora_params[PART_MLP] += adapter(c, o, tokens, h, f, batch);
        if (tg & LORA_UP)
            lc->lora_params[PART_MLP] += adapter(c, o, tokens, h, f, batch);
    }
    o = add_op(ops, n, MAX_OPS,
               m->act == ACT_GEGLU ? "geglu"
               : swiglu            ? "swiglu"
                                   : "gelu",
               OP_MEM, PART_MLP, SEG_MID);
    /* fused: gate and up; eager act(gate) * up also keeps act(gate) (HF LlamaMLP, GemmaMLP) */
    if (swiglu)
        membound(c, o, 3 * tokens * batch * f * p, (c->eager ? 3 : 2) * tokens * batch * f * p);
    else
        membound(c, o, 2 * tokens * batch * f * p, tokens * batch * f * p);
    o = add_op(ops, n, MAX_OPS, swiglu ? "down_proj" : "fc2", OP_GEMM, PART_MLP, SEG_ROW);
    proj(c, o, tokens, h, f, batch, tokens * batch * f * p, f * c->tp, h, false);
    int8_gemm(c, o);
    bias_grad(c, o, moe ? tokens * batch : c->Tn, h, m->bias);
    freeze(c, o, LORA_DOWN, true);
    base = o;
    if (tg & LORA_DOWN) {
        o = add_op(ops, n, MAX_OPS, "lora_down", OP_GEMM, PART_MLP, SEG_ROW);
        adapter_dropout(c, base, o, tokens * batch, f, c->quant, LORA_DOWN);
        lc->lora_params[PART_MLP] += adapter(c, o, tokens, f, h, batch);
    }
    /*
     * The MLP backward's temporaries (autograd's formulas, PyTorch
     * tools/autograd/derivatives.yaml): the down projection's input gradient
     * dm (tokens x f), then for SwiGLU's `act(gate) * up` the mul backward's
     * two products (dm * up, dm * act(gate)) while dm is alive, then SiLU's
     * gradient in place of the first: three tokens x f at once; for GeLU dm
     * and GeLU's gradient, two. Plus the input gradient the first projections
     * write (T x h). The layer backward holds them (strategy/build.c).
     */
    lc->bwd_transient = ((swiglu ? 3 : 2) * tokens * batch * f + T * h) * p;
    if (unpermute_bytes > 0) {
        o = add_op(ops, n, MAX_OPS, "moe_unpermute", OP_MEM, PART_MLP, SEG_POST);
        membound(c, o, unpermute_bytes, T * m->moe.topk * h * p);
        o->t_dgrad = o->t_fwd;
    }
    if (m->post_norms)
        post_norm_op(c, ops, n, "mlp_post_norm", PART_MLP);
    residual_op(c, ops, n, "mlp_residual", PART_MLP);
}

/* Per-rank parameter share of a layer part (norms replicated across tp, as Megatron). */
static void layer_params(const struct scenario *s, bool moe, struct layer_cost *out)
{
    const struct model *m = &s->model;
    double tp = s->par.tp, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double norm = (m->norm == NORM_LAYERNORM ? 2 : 1) * h * (m->post_norms ? 2 : 1);
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double mats = workload_mlp_matrices(m);
    double mlp = (mats * h * f + (m->bias ? (mats - 1) * f : 0)) / tp + (m->bias ? h : 0);
    double mlp_linear = mats * h * f / tp;
    /* q/k norm weights (head_dim each) are replicated, sinks and biases follow their heads */
    double attn_extra = (m->bias       ? (q + 2 * kv) / tp + h
                         : m->qkv_bias ? (q + 2 * kv) / tp
                                       : 0) +
                        (m->qk_norm ? 2 * d : 0) + (m->attn_sinks ? m->heads / tp : 0);

    out->linear_params[PART_ATTN] = (h * (q + 2 * kv) + q * h) / tp;
    out->params[PART_ATTN] = norm + out->linear_params[PART_ATTN] + attn_extra;
    if (moe) {
        double copies = (double)m->moe.experts / s->par.ep + m->moe.shared_experts;
        mlp = mlp * copies + h * m->moe.experts + (m->moe.router_bias ? m->moe.experts : 0);
        mlp_linear *= copies;
    }
    out->linear_params[PART_MLP] = mlp_linear;
    out->params[PART_MLP] = norm + mlp;
}

/*
 * The matmuls of op `o` in the forward order torchtitan's Llama block calls them
 * (torchtitan/models/llama/model.py @9dec370: wq, wk, wv in Attention.forward L189, wo L214;
 * FeedForward.forward L253 `w2(F.silu(w1(x)) * w3(x))`: w1, w3, w2): simtrain's fused QKV is
 * three, its fused gate-up two. *share[k] is the fraction of the op's time in matmul k.
 */
static int op_mms(const struct model *m, const struct op *o, double share[3])
{
    double q = (double)m->heads * m->head_dim, kv = (double)m->kv_heads * m->head_dim;

    if (!strcmp(o->name, "qkv_proj")) {
        share[0] = q / (q + 2 * kv);
        share[1] = share[2] = kv / (q + 2 * kv);
        return 3;
    }
    if (!strcmp(o->name, "gate_up_proj")) {
        share[0] = share[1] = 0.5;
        return 2;
    }
    if (!strcmp(o->name, "out_proj") || !strcmp(o->name, "fc1") || !strcmp(o->name, "fc2") ||
        !strcmp(o->name, "down_proj")) {
        share[0] = 1;
        return 1;
    }
    return 0; /* not an aten.mm: recomputed (adapters, batched expert GEMMs, the router) */
}

/*
 * torchtitan's per-op selective checkpointing (training.selective_policy torchtitan_op;
 * torchtitan/parallelisms/parallelize_llama.py L213-276 @9dec370): inside a checkpointed block
 * the outputs of `aten.mm` are saved except every 2nd one of the block, and so are the outputs
 * of the SDPA kernels (flash and memory-efficient) and of `reduce_scatter_tensor`; every other
 * op is recomputed in backward (CheckpointPolicy.PREFER_RECOMPUTE), the rest of the block's
 * forward running again with the saved outputs in place. Kept between forward and backward:
 * the block input (the checkpoint's input), wq's, wv's, w1's and w2's outputs (mm 1, 3, 5, 7;
 * GeLU MLPs: fc1 is mm 5, fc2 mm 6), the attention output and its fp32 log-sum-exp, and under
 * sequence parallelism the two reduce-scatter outputs; recomputed: every memory-bound op, wk,
 * wo and w3 (fc2), and an unfused attention core (batched matmuls and softmax are not
 * aten.mm). A row-parallel matmul's output is its local partial sum, T x h per rank. The TP
 * all-gathers the recompute repeats (all_gather_into_tensor is not in the save list) are not
 * modelled.
 */
static void torchtitan_op_sac(const struct ctx *c, struct layer_cost *out)
{
    const struct model *m = &c->s->model;
    double q = (double)m->heads / c->tp * m->head_dim,
           kv = (double)m->kv_heads / c->tp * m->head_dim;
    double kept = c->Tn * m->hidden * c->p; /* the block input */
    sim_time redo = 0;
    int mm = 0;

    for (int i = 0; i < out->nops; i++) {
        const struct op *o = &out->ops[i];
        double share[3];
        int n = op_mms(m, o, share);

        if (o->kind == OP_ATTN) {
            kept += c->p * c->T * q + 4 * c->T * m->heads / c->tp; /* O and its log-sum-exp */
            continue;
        }
        if (n == 0) {
            redo = time_add(redo, o->t_fwd);
            continue;
        }
        for (int k = 0; k < n; k++) {
            mm++;
            if (mm % 2 == 0) {
                redo = time_add(redo, time_scale(o->t_fwd, share[k]));
                continue;
            }
            if (!strcmp(o->name, "qkv_proj"))
                kept += c->p * c->T * (k == 0 ? q : kv);
            else if (!strcmp(o->name, "out_proj") || !strcmp(o->name, "fc2") ||
                     !strcmp(o->name, "down_proj"))
                kept += c->p * c->T * m->hidden;
            else
                kept += c->p * c->T * (o->n / (n > 1 ? n : 1));
        }
    }
    if (c->s->par.tp > 1 && c->s->par.sequence_parallel)
        kept += 2 * c->Tn * m->hidden * c->p; /* the reduce-scatter outputs of both parts */
    out->act[RC_SELECTIVE] = kept;
    out->recompute_selective = redo;
}

void workload_layer(const struct scenario *s, const struct shard *sh, bool moe,
                    struct layer_cost *out)
{
    workload_layer_variant(s, sh, moe, false, out);
}

void workload_layer_variant(const struct scenario *s, const struct shard *sh, bool moe,
                            bool windowed, struct layer_cost *out)
{
    struct ctx c;
    int i;

    memset(out, 0, sizeof(*out));
    ctx_init(&c, s, sh);
    if (windowed)
        c.window = workload_window_share(sh->s, s->model.window);
    attention_ops(&c, sh, out);
    mlp_ops(&c, moe, out);
    workload_host_bound(s, out);
    for (i = 0; i < out->nops; i++) {
        const struct op *o = &out->ops[i];
        out->fwd[o->part] = time_add(out->fwd[o->part], o->t_fwd);
        out->dgrad[o->part] = time_add(out->dgrad[o->part], o->t_dgrad);
        out->wgrad[o->part] = time_add(out->wgrad[o->part], o->t_wgrad);
        out->flops_fwd += o->flops;
        out->act[RC_NONE] += o->saved;
        if (o->core)
            out->recompute_selective = time_add(out->recompute_selective, o->t_fwd);
        out->act[RC_SELECTIVE] += o->core ? o->kept : o->saved;
    }
    /* Full recompute keeps only the layer input (sequence-sharded under SP). */
    out->act[RC_FULL] = c.Tn * s->model.hidden * c.p;
    if (s->train.selective == SEL_TORCHTITAN_OP)
        torchtitan_op_sac(&c, out);
    layer_params(s, moe, out);
    out->tp_bytes = c.T * s->model.hidden * c.p;
}

void workload_embedding(const struct scenario *s, const struct shard *sh, struct edge_cost *out)
{
    const struct model *m = &s->model;
    struct ctx c;
    struct op *o;
    double act;
    int i;

    memset(out, 0, sizeof(*out));
    ctx_init(&c, s, sh);
    act = c.T * m->hidden * c.p;
    o = add_op(out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "embedding", OP_EMBED, 0, SEG_PRE);
    /* Gather rows (+ positions), dropout; backward scatter-adds into the table. */
    membound(&c, o, 2 * act + (m->pos == POS_LEARNED ? act : 0), m->dropout ? c.Tn * m->hidden : 0);
    out->params = (double)m->vocab * m->hidden / s->par.tp +
                  (m->pos == POS_LEARNED ? (double)m->max_seq * m->hidden : 0);
    /* a frozen table needs no scatter-add of gradients; a trained copy (modules_to_save) does */
    if (c.lora && !(s->train.lora.modules_to_save & LORA_SAVE_EMBED)) {
        o->t_dgrad = 0;
        o->saved = 0;
    }
    for (i = 0; i < out->nops; i++) {
        out->fwd = time_add(out->fwd, out->ops[i].t_fwd);
        out->bwd = time_add(out->bwd, out->ops[i].t_dgrad);
        out->act += out->ops[i].saved;
    }
}

void workload_head(const struct scenario *s, const struct shard *sh, struct edge_cost *out)
{
    const struct model *m = &s->model;
    struct ctx c;
    struct op *o;
    double v = (double)m->vocab / s->par.tp, logits;
    int i;

    memset(out, 0, sizeof(*out));
    ctx_init(&c, s, sh);
    logits = c.T * v;
    norm_op(&c, out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "final_norm", 0);
    o = add_op(out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "lm_head", OP_GEMM, 0, SEG_COL);
    /* The output layer keeps its (sequence-sharded) input for the weight gradient (KOR22 §4.3). */
    gemm(&c, o, c.T, v, m->hidden, 1, c.Tn * m->hidden * c.p);
    if (!(s->train.lora.modules_to_save & LORA_SAVE_HEAD)) /* a trained copy keeps its wgrad */
        freeze(&c, o, 0, false);
    if (m->logit_softcap)
        softcap_op(&c, out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "logit_softcap", 0, logits,
                   false);
    /* Vocab-parallel cross-entropy on fp32 logits (KOR22 §4.3: 4sbv/t kept for backward). */
    o = add_op(out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "cross_entropy", OP_MEM, 0,
               SEG_POST);
    membound(&c, o, logits * (c.p + 4 + 4), 0);
    if (!c.eager) {
        /*
         * Megatron: the 16-bit logits are copied to fp32 (`output.float()`), then
         * _VocabParallelCrossEntropy (mpu/cross_entropy.py) runs separate passes over
         * them: max (read), sub_ (read + write), exp (read + write), sum (read), div_
         * (read + write), 36 B per fp32 element; backward mul_ by the loss gradient
         * (read + write) and the cast back to 16 bits (read 4, write p).
         */
        o->t_fwd = cost_membound(c.gpu, c.eff, logits * (c.p + 4 + 36));
        o->t_dgrad = cost_membound(c.gpu, c.eff, logits * (8 + 4 + c.p));
    }
    out->logits_bytes = 4 * logits;
    out->transient_bytes = c.p * logits;
    if (c.hf && s->train.cross_entropy != CE_FUSED) {
        /*
         * Hugging Face LlamaForCausalLM.forward (transformers 4.38-4.45):
         * `logits = logits.float()` (the 16-bit logits die with the rebinding),
         * `shift_logits = logits[..., :-1, :].contiguous()` (a second fp32
         * copy), then CrossEntropyLoss, whose log_softmax output (fp32) is
         * saved for backward. While log_softmax runs all three are alive,
         * 12 B per logit; the saved output (logits_bytes) outlives the
         * forward, the other two (transient) die with it. Backward starts
         * with as much: the saved output, nll_loss's gradient and
         * log_softmax's. The copy reads and writes 8 B per logit forward and
         * its slice backward writes zeros, then the gradient (12 B).
         */
        out->transient_bytes = 8 * logits;
        o->t_fwd = time_add(o->t_fwd, cost_membound(c.gpu, c.eff, 8 * logits));
        o->t_dgrad = time_add(o->t_dgrad, cost_membound(c.gpu, c.eff, 12 * logits));
    }
    if (s->train.cross_entropy == CE_FUSED) {
        /*
         * flash_attn.losses.cross_entropy (llm-foundry's default loss_fn
         * fused_crossentropy): one kernel reads the 16-bit logits and writes the
         * loss and fp32 log-sum-exp per token, saving both; backward reads the
         * logits and writes their 16-bit gradient. No fp32 copy exists.
         */
        o->t_fwd = cost_membound(c.gpu, c.eff, logits * c.p);
        o->t_dgrad = cost_membound(c.gpu, c.eff, 2 * logits * c.p);
        out->logits_bytes = c.p * logits + 4 * c.T;
        out->transient_bytes = 0;
    }
    out->params =
        (m->norm == NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden +
        ((!m->tied_embeddings || s->par.pp > 1) ? (double)m->vocab * m->hidden / s->par.tp : 0);
    for (i = 0; i < out->nops; i++) {
        out->fwd = time_add(out->fwd, out->ops[i].t_fwd);
        out->bwd = time_add(out->bwd, time_add(out->ops[i].t_dgrad, out->ops[i].t_wgrad));
        out->act += out->ops[i].saved;
        out->flops_fwd += out->ops[i].flops;
    }
}
