/*
 * workload.c - the operators of the embedding and of the LM head with its loss, and the pieces
 * every operator list is built from: the per-rank context of a shard, weight GEMMs,
 * projections (in FP8 where the recipe converts them, fp8.h), memory-bound passes, bias
 * gradients, norms and tanh soft-capping. A layer's attention and MLP operators are
 * workload_layer.c, LoRA adapters and quantized base weights workload_lora.c; see workload.h
 * for the model and its sources.
 */
#include "model/workload_internal.h"

#include <assert.h>
#include <string.h>

#include "model/cost.h"
#include "model/fp8.h"

/* Append an operator to ops[0..max): the tables hold every operator a layer can have. */
struct op *wl_add_op(struct op *ops, int *n, int max, const char *name, int kind, int part, int seg)
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
void wl_gemm(const struct ctx *c, struct op *o, double m, double n, double k, double batch,
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
    if (c->frozen > 0) /* a frozen share has no weight gradient (Axolotl unfrozen_parameters) */
        o->t_wgrad = time_scale(o->t_wgrad, 1 - c->frozen);
    o->saved = saved;
}

/*
 * A projection: wl_gemm() in FP8 when the recipe converts it (fp8.h), with its cast kernels in
 * forward and backward and what it saves. `saved` is its 16-bit input kept for backward
 * (elements x p); k_glob and n_glob its whole weight's in and out features.
 */
void wl_proj(const struct ctx *c, struct op *o, double m, double n, double k, double batch,
             double saved, double k_glob, double n_glob, bool after_norm)
{
    struct fp8_proj pr = { m, k, n, batch, k_glob, n_glob, after_norm, c->micro_batches };
    struct fp8_cost fc;
    struct ctx f = *c;

    fp8_projection(c->s, c->fp8_megatron, &pr, &fc);
    if (fc.fp8)
        f.dt = DT_FP8;
    wl_gemm(&f, o, m, n, k, batch, saved);
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
void wl_membound(const struct ctx *c, struct op *o, double bytes, double saved)
{
    o->bytes = bytes;
    o->t_fwd = cost_membound(c->gpu, c->eff, bytes);
    o->t_dgrad = cost_membound(c->gpu, c->eff, 2 * bytes);
    o->saved = saved;
}

void wl_chain(const struct ctx *c, struct op *o, double elems, double fwd, int kf, double bwd,
              int kb)
{
    o->bytes = fwd * elems;
    o->t_fwd = 0;
    o->t_dgrad = 0;
    /* each kernel of the chain is its own launch and pass */
    for (int i = 0; i < kf; i++)
        o->t_fwd = time_add(o->t_fwd, cost_membound(c->gpu, c->eff, fwd * elems / kf));
    for (int i = 0; i < kb; i++)
        o->t_dgrad = time_add(o->t_dgrad, cost_membound(c->gpu, c->eff, bwd * elems / kb));
    o->extra_kernels_fwd = kf - 1;
    o->extra_kernels_bwd = kb - 1;
}

/*
 * The bias gradient of a projection with a bias: a reduction of the output
 * gradient over the tokens, `rows` x `cols` elements read once (Megatron
 * ColumnParallelLinear backward `grad_bias = grad_output.sum(dim=0)`; the
 * row-parallel bias is added in the fused bias-dropout-add, whose autograd
 * backward sums the same way; PyTorch nn.Linear's backward likewise).
 */
void wl_bias_grad(const struct ctx *c, struct op *o, double rows, double cols, bool biased)
{
    if (!biased || c->lora || o->bias_in_cast)
        return;
    o->t_wgrad = time_add(o->t_wgrad, cost_membound(c->gpu, c->eff, rows * cols * c->p));
}

static double norm_stats_bytes(const struct model *m)
{
    /* fp32 per token: LayerNorm keeps mean and rstd, RMSNorm rstd only. */
    return m->norm == NORM_LAYERNORM ? 8.0 : 4.0;
}

void wl_ctx_init(struct ctx *c, const struct scenario *s, const struct shard *sh)
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
    c->frozen = c->lora ? 0 : 1 - s->train.trainable_fraction;
    c->qlora = s->train.finetune == FT_QLORA;
    c->int8 = s->train.finetune == FT_LORA_INT8;
    c->quant = c->qlora || c->int8;
    c->targets = c->lora ? s->train.lora.targets : 0;
    c->eager = workload_eager(s);
    c->unfused = c->eager && !s->train.compile;
    c->py_norm = c->unfused && s->train.rmsnorm_impl == RMSNORM_PYTHON;
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
void wl_norm_op(const struct ctx *c, struct op *ops, int *n, int max, const char *name, int part)
{
    const struct model *m = &c->s->model;
    double act = c->Tn * m->hidden * c->p;
    double saved = act + c->Tn * norm_stats_bytes(m);
    struct op *o = wl_add_op(ops, n, max, name, OP_MEM, part, SEG_PRE);

    if (m->norm == NORM_RMSNORM && c->py_norm) {
        wl_rmsnorm_chain(c, o, c->Tn * m->hidden);
        o->saved += c->Tn * norm_stats_bytes(m);
        return;
    }
    wl_membound(c, o, 2 * act, saved);
}

/*
 * RMSNorm as its tensor ops over `elems` elements (training.rmsnorm_impl python, eager code
 * without compile): torchtitan's RMSNorm (torchtitan/models/norms.py @9dec370:
 * `self._norm(x.float()).type_as(x) * self.weight`, _norm = `x * torch.rsqrt(x.pow(2).mean(-1,
 * keepdim=True) + eps)`), Transformers' LlamaRMSNorm and torch's composite nn.RMSNorm before
 * 2.9 (aten/src/ATen/native/layer_norm.cpp rms_norm_composite) issue the same kernels, each
 * reading and writing whole tensors (p bytes per 16-bit element, 4 per fp32 one):
 *   forward, 6 kernels: float() p+4, pow 8, mean 4, mul by rstd 8, type_as 4+p, mul by the
 *     weight 2p: 28 + 4p (36 B at bf16; one fused kernel moves 2p);
 *   backward, autograd's formulas in reverse (tools/autograd/derivatives.yaml), 13 kernels:
 *     weight mul: grad x weight 2p, grad x input then a sum over tokens 4p; type_as p+4; rstd
 *     mul: grad x rstd 8, grad x input then a sum over the row 16; mean's expand 4; pow's
 *     `grad * 2 * x.pow(1)` three kernels 28; the two input gradients added 12; float() 4+p:
 *     76 + 8p (92 B; fused about 4p).
 * It keeps the fp32 copy (pow and the rstd mul) and, where the norm's weight trains, the 16-bit
 * normalised tensor the weight mul needs for the weight's gradient (not under LoRA, whose
 * norms are frozen): 4 + p per element; rstd per token is added by the caller.
 */
void wl_rmsnorm_chain(const struct ctx *c, struct op *o, double elems)
{
    double p = c->p;

    wl_chain(c, o, elems, 28 + 4 * p, 6, 76 + 8 * p, 13);
    o->saved = (4 + (c->lora ? 0 : p)) * elems;
}

/*
 * tanh soft-capping of `elems` 16-bit values, `cap * tanh(x / cap)` as three
 * element-wise kernels (transformers Gemma2: eager_attention_forward on the
 * scores, Gemma2ForCausalLM.forward on the logits): each reads and writes the
 * tensor forward; backward runs mul, tanh's (reading its saved output) and div
 * backward, 7 bytes-per-element passes of p; tanh saves its output. On the
 * scores it belongs to the attention core (recomputed by selective recompute).
 */
void wl_softcap_op(const struct ctx *c, struct op *ops, int *n, int max, const char *name, int part,
                   double elems, bool core)
{
    struct op *o = wl_add_op(ops, n, max, name, OP_MEM, part, core ? SEG_CORE : SEG_POST);

    o->bytes = 6 * c->p * elems;
    o->t_fwd = cost_membound(c->gpu, c->eff, 6 * c->p * elems);
    o->t_dgrad = cost_membound(c->gpu, c->eff, 7 * c->p * elems);
    o->saved = c->p * elems;
    o->core = core;
}

void workload_embedding(const struct scenario *s, const struct shard *sh, struct edge_cost *out)
{
    const struct model *m = &s->model;
    struct ctx c;
    struct op *o;
    double act;
    int i;

    memset(out, 0, sizeof(*out));
    wl_ctx_init(&c, s, sh);
    act = c.T * m->hidden * c.p;
    o = wl_add_op(out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "embedding", OP_EMBED, 0,
                  SEG_PRE);
    /* Gather rows (+ positions), dropout; backward scatter-adds into the table. */
    wl_membound(&c, o, 2 * act + (m->pos == POS_LEARNED ? act : 0),
                m->dropout ? c.Tn * m->hidden : 0);
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
    wl_ctx_init(&c, s, sh);
    logits = c.T * v;
    wl_norm_op(&c, out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "final_norm", 0);
    o = wl_add_op(out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "lm_head", OP_GEMM, 0, SEG_COL);
    /* The output layer keeps its (sequence-sharded) input for the weight gradient (KOR22 §4.3). */
    wl_gemm(&c, o, c.T, v, m->hidden, 1, c.Tn * m->hidden * c.p);
    if (!(s->train.lora.modules_to_save & LORA_SAVE_HEAD)) /* a trained copy keeps its wgrad */
        wl_freeze(&c, o, 0, false);
    if (m->logit_softcap)
        wl_softcap_op(&c, out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "logit_softcap", 0,
                      logits, false);
    /* Vocab-parallel cross-entropy on fp32 logits (KOR22 §4.3: 4sbv/t kept for backward). */
    o = wl_add_op(out->ops, &out->nops, (int)ARRAY_LEN(out->ops), "cross_entropy", OP_MEM, 0,
                  SEG_POST);
    wl_membound(&c, o, logits * (c.p + 4 + 4), 0);
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
