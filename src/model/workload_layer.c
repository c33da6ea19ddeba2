/*
 * workload_layer.c - the operators of one transformer layer: the attention block (norm, QKV
 * projection and its adapters, q/k norms, RoPE, the fused or unfused attention core, the
 * output projection, residual) and the MLP block (norm, MoE router and token permutation,
 * the gated or plain MLP projections and activation, residual), the layer's per-rank
 * parameters, torchtitan's per-op selective checkpointing, and their sums into a
 * layer_cost (workload_layer(); see workload.h for the model and its sources).
 */
#include "model/workload_internal.h"

#include <string.h>

#include "model/cost.h"

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
    wl_norm_op(c, ops, n, MAX_OPS, name, part);
    ops[*n - 1].seg = SEG_POST;
}

/*
 * Per-head RMSNorm of q and k over head_dim (Qwen3Attention q_norm / k_norm,
 * transformers models/qwen3/modeling_qwen3.py; Gemma 3 likewise), between the
 * QKV projection and RoPE: reads and writes T * (q + kv) elements. It saves
 * what wl_norm_op() saves, per head instead of per token: the input (the fp32
 * upcast under eager code) and one fp32 rstd per head and token.
 */
static void qk_norm_op(const struct ctx *c, struct op *ops, int *n, double T, double heads,
                       double kvh, double d)
{
    double elems = T * (heads + kvh) * d;
    double stats = T * (heads + kvh) * 4;
    struct op *o = wl_add_op(ops, n, MAX_OPS, "qk_norm", OP_MEM, PART_ATTN, SEG_MID);

    if (c->py_norm) {
        wl_rmsnorm_chain(c, o, elems);
        o->saved += stats;
        return;
    }
    wl_membound(c, o, 2 * elems * c->p, (c->eager ? 4 : c->p) * elems + stats);
}

/*
 * Rotary embeddings on the T x (q + kv) query and key elements. Fused (Megatron's kernel, or
 * one Inductor kernel under torch.compile): read and write each element. Eager code runs it op
 * by op (torchtitan apply_rotary_emb, torchtitan/models/llama/model.py L87-113 @9dec370: per
 * tensor `x.float()` p+4, the complex multiply by freqs_cis 8, `type_as` 4+p, three kernels;
 * its backward the same three in reverse): 16 + 2p bytes per element each way (20 B at bf16).
 * Transformers' `q * cos + rotate_half(q) * sin` (neg, cat, two muls, add: five kernels) moves
 * 10p, the same 20 B. Under LitGPT's fused-QKV layout the roped Q and K pin `qkv`
 * (fused_qkv_pinned()).
 */
static void rope_op(const struct ctx *c, struct op *ops, int *n, double q, double kv)
{
    double elems = c->T * (q + kv), p = c->p;
    struct op *o = wl_add_op(ops, n, MAX_OPS, "rope", OP_MEM, PART_ATTN, SEG_MID);

    if (c->unfused)
        wl_chain(c, o, elems, 16 + 2 * p, 6, 16 + 2 * p, 6);
    else
        wl_membound(c, o, 2 * elems * p, 0);
    o->saved = fused_qkv_pinned(c) ? p * elems : 0;
}

/*
 * Grouped-query attention in eager code hands SDPA keys and values repeated to every query
 * head (torchtitan repeat_kv, torchtitan/models/llama/model.py L116-125 @9dec370, and
 * models/llama3/model/model.py L143-152 @29624e3: `unsqueeze().expand().reshape()`, a copy;
 * Transformers' repeat_kv the same; LitGPT expands K and V likewise): each of K and V read at
 * kv and written at q width, its backward summing the copies back. Under torch.compile the
 * copies stay (SDPA is an extern kernel that needs them; Inductor folds K's into RoPE, not
 * modelled). The attention core then saves the repeated K and V (flash_attention's saved).
 */
static void repeat_kv_op(const struct ctx *c, struct op *ops, int *n, double q, double kv)
{
    struct op *o;

    if (!c->eager || kv >= q)
        return;
    o = wl_add_op(ops, n, MAX_OPS, "repeat_kv", OP_MEM, PART_ATTN, SEG_MID);
    wl_chain(c, o, c->T, 2 * (q + kv) * c->p, 2, 2 * (q + kv) * c->p, 2);
}

static void residual_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part)
{
    const struct model *m = &c->s->model;
    double act = c->Tn * m->hidden * c->p;
    double mask = m->dropout ? c->Tn * m->hidden : 0;
    struct op *o = wl_add_op(ops, n, MAX_OPS, name, OP_MEM, part, SEG_POST);

    wl_membound(c, o, 3 * act + mask, mask);
}

/*
 * Megatron's FusedScaleMaskSoftmax runs its fused causal kernel only when
 * is_kernel_available() holds: sq and sk multiples of 4, 16 < sk <= 16384, and
 * b * np (micro-batch times the heads of one tensor-parallel rank) a multiple
 * of 4 and of the kernel's batches per block (one warp per row, 128 threads: 4
 * rows per block, 8 when sk <= 128) (Megatron-LM megatron/model/fused_softmax.py,
 * the module Megatron-DeepSpeed keeps; older copies stop at sk <= 2048 or 4096,
 * not modelled, nor fp32 inputs). Otherwise forward_torch_softmax() runs eager
 * tensor ops: `input.float()` (fp16/bf16 scores, softmax_in_fp32 forced by
 * query-key layer scaling), `input * self.scale`, the mask function's
 * masked_fill_, torch.nn.Softmax, `.half()`. Example: 16 heads over tp 8 at
 * micro-batch 1 give b * np = 2.
 */
static bool softmax_fallback(const struct ctx *c, long bnp, long sq, long sk)
{
    long per_block = sk <= 128 ? 8 : 4;

    if (c->eager)
        return false;
    return !(sk > 16 && sk <= 16384 && sq % 4 == 0 && sk % 4 == 0 && bnp % per_block == 0);
}

/*
 * The fallback's five kernels per score, fp16 in and out and fp32 between:
 * forward cast 2 + 4 B, scale 4 + 4, masked_fill_ 4 + 4 + the 1-byte mask,
 * softmax 4 + 4, cast 4 + 2; backward the five nodes in reverse, softmax's
 * reading its fp32 output too (4 + 4 + 4). Softmax saves its fp32 output.
 */
static void softmax_torch(const struct ctx *c, struct op *o, double probs)
{
    static const double fwd_bytes[5] = { 6, 8, 9, 8, 6 }, bwd_bytes[5] = { 6, 12, 9, 8, 6 };

    o->t_fwd = o->t_dgrad = 0;
    for (int i = 0; i < 5; i++) {
        o->t_fwd = time_add(o->t_fwd, cost_membound(c->gpu, c->eff, fwd_bytes[i] * probs));
        o->t_dgrad = time_add(o->t_dgrad, cost_membound(c->gpu, c->eff, bwd_bytes[i] * probs));
    }
    o->bytes = 37 * probs;
    o->extra_kernels_fwd = o->extra_kernels_bwd = 4;
    o->saved = 4 * probs;
}

/*
 * The unfused attention's softmax over `probs` scores, then its dropout, as
 * separate kernels (Megatron CoreAttention / ParallelAttention: `attention_probs
 * = self.scale_mask_softmax(...)`, then `self.attention_dropout(attention_probs)`,
 * a torch.nn.Dropout; Hugging Face eager attention the same).
 * - Softmax: Megatron's fused causal kernel (cost_fused_softmax(), measured
 *   efficiency) or, where it is unavailable, its PyTorch path (softmax_torch()); eager code
 * PyTorch's softmax, reading and writing full rows forward, reading the output gradient and output
 * and writing the input gradient backward (3p per score, not twice the forward). It saves its
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
static void softmax_ops(const struct ctx *c, struct op *ops, int *n, double probs, bool fallback)
{
    double p = c->p;
    struct op *o = wl_add_op(ops, n, MAX_OPS, "softmax", OP_MEM, PART_ATTN, SEG_CORE);

    o->bytes = 2 * p * probs;
    o->saved = p * probs;
    if (c->eager) {
        o->t_fwd = cost_membound(c->gpu, c->eff, 2 * p * probs);
        o->t_dgrad = cost_membound(c->gpu, c->eff, 3 * p * probs);
    } else if (fallback) {
        softmax_torch(c, o, probs);
    } else {
        o->t_fwd = cost_fused_softmax(c->gpu, c->eff, probs, p, true, false);
        o->t_dgrad = cost_fused_softmax(c->gpu, c->eff, probs, p, true, true);
    }
    o->core = true;
    if (!c->s->model.dropout)
        return;
    o = wl_add_op(ops, n, MAX_OPS, "attn_dropout", OP_MEM, PART_ATTN, SEG_CORE);
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

    wl_norm_op(c, ops, n, MAX_OPS, "attn_norm", PART_ATTN);
    wl_dequant_op(c, ops, n, "nf4_dequant_attn", PART_ATTN, h * (q + 2 * kv) + q * h);
    wl_int8_op(c, ops, n, "int8_quant_attn", PART_ATTN, T * h * (c->hf ? 3 : 1) + T * q,
               h * (q + 2 * kv) + q * h);
    o = wl_add_op(ops, n, MAX_OPS, "qkv_proj", OP_GEMM, PART_ATTN, SEG_COL);
    wl_proj(c, o, T, q + 2 * kv, h, 1, c->Tn * h * p, h, (q + 2 * kv) * c->tp, true);
    wl_int8_gemm(c, o);
    wl_bias_grad(c, o, T, q + 2 * kv, m->bias || m->qkv_bias);
    wl_freeze(c, o, LORA_Q | LORA_K | LORA_V, true);
    base = o;
    if ((m->bias || m->qkv_bias) && !c->eager) {
        /*
         * Megatron's column-parallel linear adds its bias out of place after the
         * GEMM (`output = torch.matmul(total_input, weight.t())` then `output =
         * output + bias`: LinearWithGradAccumulationAndAsyncCommunication in
         * megatron/core/tensor_parallel/layers.py, mpu/layers.py before it): one
         * more read and write of the QKV output. The add's backward is the
         * identity; the bias gradient is wl_bias_grad()'s reduction. The fc1 bias
         * is fused into bias-GeLU and the row-parallel biases into
         * bias-dropout-add (skip_bias_add), so only QKV pays it.
         */
        o = wl_add_op(ops, n, MAX_OPS, "qkv_bias_add", OP_MEM, PART_ATTN, SEG_MID);
        wl_membound(c, o, 2 * T * (q + 2 * kv) * p, 0);
        o->t_dgrad = 0;
    }
    if (tg & (LORA_Q | LORA_K | LORA_V)) {
        /* Column-parallel: A (h x r) replicated, B (r x d_out / tp) sharded. */
        o = wl_add_op(ops, n, MAX_OPS, "lora_qkv", OP_GEMM, PART_ATTN, SEG_COL);
        wl_adapter_dropout(c, base, o, T, h, c->quant, LORA_Q | LORA_K | LORA_V);
        if (tg & LORA_Q)
            lc->lora_params[PART_ATTN] += wl_adapter(c, o, T, h, q, 1);
        if (tg & LORA_K)
            lc->lora_params[PART_ATTN] += wl_adapter(c, o, T, h, kv, 1);
        if (tg & LORA_V)
            lc->lora_params[PART_ATTN] += wl_adapter(c, o, T, h, kv, 1);
    }
    if (m->qk_norm)
        qk_norm_op(c, ops, n, T, heads, kvh, d);
    if (m->pos == POS_ROPE)
        rope_op(c, ops, n, q, kv);
    repeat_kv_op(c, ops, n, q, kv);
    if (c->s->train.attention == ATTN_FLASH) {
        /* Fused kernel: saves Q, K, V and fp32 log-sum-exp; O is saved as the out-proj input. */
        double flops = 4 * b * sq * sk * q * c->window;
        double kv_in = c->eager && kv < q ? q : kv; /* the K, V the kernels read */
        enum attn_impl impl = c->s->train.attention_impl;
        o = wl_add_op(ops, n, MAX_OPS, "flash_attention", OP_ATTN, PART_ATTN, SEG_CORE);
        o->flops = flops;
        o->hw_flops = flops / 2; /* causal: masked blocks skipped */
        o->bytes = p * T * (2 * q + 2 * kv_in);
        wl_flash_core(c, o, b, sk, sh->cp, q, T * (q + 2 * kv_in));
        o->t_dgrad = time_add(
            o->t_dgrad, cost_attn_impl_bwd_extra(c->gpu, c->eff, impl, T * q, T * (q + 2 * kv), p));
        if (c->s->train.attention_unpad && impl != ATTN_IMPL_TRITON) {
            o->t_fwd = time_add(o->t_fwd,
                                cost_attn_unpad(c->gpu, c->eff, T * q, T * (q + 2 * kv), p, false));
            o->t_dgrad = time_add(
                o->t_dgrad, cost_attn_unpad(c->gpu, c->eff, T * q, T * (q + 2 * kv), p, true));
        }
        o->saved = p * T * (q + 2 * kv_in) + 4 * T * heads;
        if (c->eager)
            o->saved += p * T * q; /* O; the out-proj input is a contiguous copy of it */
        o->core = false;           /* FlashAttention already recomputes S and P internally */
    } else {
        /* Unfused: batched QK^T, scale-mask-softmax (+dropout), batched AV (KOR22 §4.1). */
        double probs = b * heads * sq * sk;
        o = wl_add_op(ops, n, MAX_OPS, "attn_scores", OP_GEMM, PART_ATTN, SEG_CORE);
        wl_gemm(c, o, sq, sk, d, b * heads, p * T * (q + kv));
        o->t_wgrad = 0; /* no weights: both backward GEMMs are input gradients */
        o->t_dgrad = time_mul(cost_gemm(c->gpu, c->eff, c->dt, sq, d, sk, b * heads), 2);
        o->core = true;
        o->kept = o->saved; /* Q and K are the recomputation's inputs (KOR22 §5) */
        if (m->attn_softcap)
            wl_softcap_op(c, ops, n, MAX_OPS, "attn_softcap", PART_ATTN, probs, true);
        lc->softmax_torch =
            softmax_fallback(c, (long)sh->b * (m->heads / sh->tp), sh->s / sh->cp, sh->s);
        softmax_ops(c, ops, n, probs, lc->softmax_torch);
        o = wl_add_op(ops, n, MAX_OPS, "attn_values", OP_GEMM, PART_ATTN, SEG_CORE);
        wl_gemm(c, o, sq, d, sk, b * heads, p * T * kv);
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
        o = wl_add_op(ops, n, MAX_OPS, "attn_out_layout", OP_MEM, PART_ATTN, SEG_CORE);
        wl_membound(c, o, 2 * T * q * p, 0);
        o->t_dgrad = 0;
        o->core = true;
    }
    o = wl_add_op(ops, n, MAX_OPS, "out_proj", OP_GEMM, PART_ATTN, SEG_ROW);
    wl_proj(c, o, T, h, q, 1, p * T * q, q * c->tp, h, false);
    wl_int8_gemm(c, o);
    wl_bias_grad(c, o, c->Tn, h, m->bias); /* replicated bias, on the (sequence-sharded) output */
    /*
     * Fused (Megatron): the out-proj input is FlashAttention's O, which its
     * backward needs anyway, so a frozen out-proj cannot drop it. Eager: the
     * input is a transposed contiguous copy (HF `attn_output.reshape(...)`),
     * saved only as any other frozen projection input.
     */
    wl_freeze(c, o, c->s->train.attention == ATTN_FLASH && !c->eager ? ~0u : LORA_O, true);
    base = o;
    if (tg & LORA_O) {
        /* Row-parallel: A (q / tp x r) sharded, B (r x h) replicated. */
        o = wl_add_op(ops, n, MAX_OPS, "lora_o", OP_GEMM, PART_ATTN, SEG_ROW);
        wl_adapter_dropout(c, base, o, T, q,
                           c->quant || (c->s->train.attention == ATTN_FLASH && !c->eager), LORA_O);
        lc->lora_params[PART_ATTN] += wl_adapter(c, o, T, q, h, 1);
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

    wl_norm_op(c, ops, n, MAX_OPS, "mlp_norm", PART_MLP);
    lc->moe_a2a_bytes = 0;
    if (moe) {
        /* Router, then top-k tokens per rank spread over E/ep local experts (uniform routing). */
        double E = m->moe.experts, ep = s->par.ep, k = m->moe.topk;
        double cf = m->moe.capacity_factor > 0 ? m->moe.capacity_factor : 1.0;
        o = wl_add_op(ops, n, MAX_OPS, "router", OP_GEMM, PART_MLP, SEG_GATE);
        wl_gemm(c, o, T, E, h, 1, T * E * 4);
        wl_bias_grad(c, o, T, E, m->moe.router_bias);
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
        o = wl_add_op(ops, n, MAX_OPS, "moe_permute", OP_MEM, PART_MLP, SEG_GATE);
        wl_membound(c, o, 2 * T * k * h * p, 0);
        o->t_dgrad = o->t_fwd;
        unpermute_bytes = (3 * k + 2) * T * h * p;
    }
    wl_dequant_op(c, ops, n, "nf4_dequant_mlp", PART_MLP, (swiglu ? 3 : 2) * h * f * batch);
    wl_int8_op(c, ops, n, "int8_quant_mlp", PART_MLP,
               tokens * batch * (h * (c->hf && swiglu ? 2 : 1) + f),
               (swiglu ? 3 : 2) * h * f * batch);
    o = wl_add_op(ops, n, MAX_OPS, swiglu ? "gate_up_proj" : "fc1", OP_GEMM, PART_MLP, SEG_COL);
    wl_proj(c, o, tokens, up, h, batch, (moe ? tokens * batch : c->Tn) * h * p, h, up * c->tp,
            true);
    wl_int8_gemm(c, o);
    wl_bias_grad(c, o, tokens * batch, up, m->bias);
    wl_freeze(c, o, in_mask, true);
    base = o;
    if (tg & in_mask) {
        o = wl_add_op(ops, n, MAX_OPS, "lora_gate_up", OP_GEMM, PART_MLP, SEG_COL);
        wl_adapter_dropout(c, base, o, tokens * batch, h, c->quant, in_mask);
        if (swiglu && (tg & LORA_GATE))
            lc->lora_params[PART_MLP] += wl_adapter(c, o, tokens, h, f, batch);
        if (tg & LORA_UP)
            lc->lora_params[PART_MLP] += wl_adapter(c, o, tokens, h, f, batch);
    }
    o = wl_add_op(ops, n, MAX_OPS,
                  m->act == ACT_GEGLU ? "geglu"
                  : swiglu            ? "swiglu"
                                      : "gelu",
                  OP_MEM, PART_MLP, SEG_MID);
    /*
     * Fused (Megatron's bias-SwiGLU, one Inductor kernel): read gate and up, write the product;
     * keeps gate and up. Eager `act(gate) * up` (HF LlamaMLP, GemmaMLP; torchtitan FeedForward
     * `F.silu(self.w1(x)) * self.w3(x)`, model.py L253 @9dec370) is two kernels, the activation
     * 2p and the mul 3p per element, and its backward three (the mul's two products 3p each,
     * silu_backward 3p); it also keeps act(gate).
     */
    if (swiglu && c->unfused) {
        wl_chain(c, o, tokens * batch * f, 5 * p, 2, 9 * p, 3);
        o->saved = 3 * tokens * batch * f * p;
    } else if (swiglu)
        wl_membound(c, o, 3 * tokens * batch * f * p, 2 * tokens * batch * f * p);
    else
        wl_membound(c, o, 2 * tokens * batch * f * p, tokens * batch * f * p);
    o = wl_add_op(ops, n, MAX_OPS, swiglu ? "down_proj" : "fc2", OP_GEMM, PART_MLP, SEG_ROW);
    wl_proj(c, o, tokens, h, f, batch, tokens * batch * f * p, f * c->tp, h, false);
    wl_int8_gemm(c, o);
    wl_bias_grad(c, o, moe ? tokens * batch : c->Tn, h, m->bias);
    wl_freeze(c, o, LORA_DOWN, true);
    base = o;
    if (tg & LORA_DOWN) {
        o = wl_add_op(ops, n, MAX_OPS, "lora_down", OP_GEMM, PART_MLP, SEG_ROW);
        wl_adapter_dropout(c, base, o, tokens * batch, f, c->quant, LORA_DOWN);
        lc->lora_params[PART_MLP] += wl_adapter(c, o, tokens, f, h, batch);
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
        o = wl_add_op(ops, n, MAX_OPS, "moe_unpermute", OP_MEM, PART_MLP, SEG_POST);
        wl_membound(c, o, unpermute_bytes, T * m->moe.topk * h * p);
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
    wl_ctx_init(&c, s, sh);
    if (windowed)
        c.window = workload_window_share(sh->s, s->model.window);
    attention_ops(&c, sh, out);
    mlp_ops(&c, moe, out);
    workload_host_times(s, out);
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
