/* workload.c - see workload.h for the model and its sources. */
#include "workload.h"

#include <string.h>

#include "cost.h"

struct ctx {
    const struct scenario *s;
    const struct gpu_spec *gpu;
    const struct efficiency *eff;
    enum dtype dt;
    double p;  /* bytes per activation element */
    double T;  /* tokens per rank entering GEMMs (b * s / cp) */
    double Tn; /* tokens per rank in norms, dropout, residual (T / tp under SP) */
    double tp;
};

static struct op *add_op(struct op *ops, int *n, int max, const char *name, int kind, int part)
{
    struct op *o;

    if (*n >= max)
        return NULL;
    o = &ops[(*n)++];
    memset(o, 0, sizeof(*o));
    snprintf(o->name, sizeof(o->name), "%s", name);
    o->kind = kind;
    o->part = part;
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

/* A memory-bound op moving `bytes` forward; backward moves about twice as much. */
static void membound(const struct ctx *c, struct op *o, double bytes, double saved)
{
    o->bytes = bytes;
    o->t_fwd = cost_membound(c->gpu, c->eff, bytes);
    o->t_dgrad = cost_membound(c->gpu, c->eff, 2 * bytes);
    o->saved = saved;
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
    c->dt = sh->dt;
    /* fp8 training keeps activations in 16 bits outside the GEMMs (Transformer Engine). */
    c->p = dtype_bytes(sh->dt) < 2 ? 2 : dtype_bytes(sh->dt);
    c->tp = sh->tp;
    c->T = (double)sh->b * sh->s / sh->cp;
    c->Tn = sh->sp ? c->T / sh->tp : c->T;
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

/* Norm, then residual-dropout: the replicated (or SP-sharded) memory-bound ops. */
static void norm_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part)
{
    const struct model *m = &c->s->model;
    double act = c->Tn * m->hidden * c->p;
    struct op *o = add_op(ops, n, MAX_OPS, name, OP_MEM, part);

    membound(c, o, 2 * act, act + c->Tn * norm_stats_bytes(m));
}

static void residual_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part)
{
    const struct model *m = &c->s->model;
    double act = c->Tn * m->hidden * c->p;
    double mask = m->dropout ? c->Tn * m->hidden : 0;
    struct op *o = add_op(ops, n, MAX_OPS, name, OP_MEM, part);

    membound(c, o, 3 * act + mask, mask);
}

static void attention_ops(const struct ctx *c, const struct shard *sh, struct op *ops, int *n)
{
    const struct model *m = &c->s->model;
    double h = m->hidden, d = m->head_dim;
    double heads = m->heads / c->tp, kvh = m->kv_heads / c->tp;
    double q = heads * d, kv = kvh * d;
    double sq = (double)sh->s / sh->cp, sk = sh->s, b = sh->b;
    double T = c->T, p = c->p;
    struct op *o;

    norm_op(c, ops, n, "attn_norm", PART_ATTN);
    o = add_op(ops, n, MAX_OPS, "qkv_proj", OP_GEMM, PART_ATTN);
    gemm(c, o, T, q + 2 * kv, h, 1, c->Tn * h * p);
    if (m->pos == POS_ROPE) {
        o = add_op(ops, n, MAX_OPS, "rope", OP_MEM, PART_ATTN);
        membound(c, o, 2 * T * (q + kv) * p, 0);
    }
    if (c->s->train.attention == ATTN_FLASH) {
        /* Fused kernel: saves Q, K, V and fp32 log-sum-exp; O is saved as the out-proj input. */
        double flops = 4 * b * sq * sk * q;
        double io = p * T * (2 * q + 2 * kv);
        o = add_op(ops, n, MAX_OPS, "flash_attention", OP_ATTN, PART_ATTN);
        o->flops = flops;
        o->hw_flops = flops / 2; /* causal: masked blocks skipped */
        o->bytes = io;
        o->t_fwd = cost_attention(c->gpu, c->eff, c->dt, ATTN_FLASH, o->hw_flops, io);
        o->t_dgrad = cost_attention(c->gpu, c->eff, c->dt, ATTN_FLASH, 2.5 * o->hw_flops, 2 * io);
        o->saved = p * T * (q + 2 * kv) + 4 * T * heads;
        o->core = false; /* FlashAttention already recomputes S and P internally */
    } else {
        /* Unfused: batched QK^T, scale-mask-softmax (+dropout), batched AV (KOR22 §4.1). */
        double probs = b * heads * sq * sk;
        double mask = m->dropout ? probs : 0;
        o = add_op(ops, n, MAX_OPS, "attn_scores", OP_GEMM, PART_ATTN);
        gemm(c, o, sq, sk, d, b * heads, p * T * (q + kv));
        o->t_wgrad = 0; /* no weights: both backward GEMMs are input gradients */
        o->t_dgrad = 2 * cost_gemm(c->gpu, c->eff, c->dt, sq, d, sk, b * heads);
        o->core = true;
        o = add_op(ops, n, MAX_OPS, "softmax_dropout", OP_MEM, PART_ATTN);
        membound(c, o, p * probs * 2 + mask + (m->dropout ? p * probs : 0),
                 p * probs + mask + (m->dropout ? p * probs : 0));
        o->core = true;
        o = add_op(ops, n, MAX_OPS, "attn_values", OP_GEMM, PART_ATTN);
        gemm(c, o, sq, d, sk, b * heads, p * T * kv);
        o->t_wgrad = 0;
        o->t_dgrad = 2 * cost_gemm(c->gpu, c->eff, c->dt, sq, sk, d, b * heads);
        o->core = true;
    }
    o = add_op(ops, n, MAX_OPS, "out_proj", OP_GEMM, PART_ATTN);
    gemm(c, o, T, h, q, 1, p * T * q);
    residual_op(c, ops, n, "attn_residual", PART_ATTN);
}

static void mlp_ops(const struct ctx *c, bool moe, struct op *ops, int *n, double *a2a)
{
    const struct model *m = &c->s->model;
    const struct scenario *s = c->s;
    double h = m->hidden, p = c->p, T = c->T;
    double f = (moe ? m->moe.ffn_hidden : m->ffn_hidden) / c->tp;
    double up = m->act == ACT_SWIGLU ? 2 * f : f;
    double tokens = T, batch = 1;
    struct op *o;

    norm_op(c, ops, n, "mlp_norm", PART_MLP);
    *a2a = 0;
    if (moe) {
        /* Router, then top-k tokens per rank spread over E/ep local experts (uniform routing). */
        double E = m->moe.experts, ep = s->par.ep, k = m->moe.topk;
        double cf = m->moe.capacity_factor > 0 ? m->moe.capacity_factor : 1.0;
        o = add_op(ops, n, MAX_OPS, "router", OP_GEMM, PART_MLP);
        gemm(c, o, T, E, h, 1, T * E * 4);
        batch = E / ep;
        tokens = T * k * ep / E * cf;
        *a2a = T * k * h * p;
    }
    o = add_op(ops, n, MAX_OPS, m->act == ACT_SWIGLU ? "gate_up_proj" : "fc1", OP_GEMM, PART_MLP);
    gemm(c, o, tokens, up, h, batch, (moe ? tokens * batch : c->Tn) * h * p);
    o = add_op(ops, n, MAX_OPS, m->act == ACT_SWIGLU ? "swiglu" : "gelu", OP_MEM, PART_MLP);
    if (m->act == ACT_SWIGLU)
        membound(c, o, 3 * tokens * batch * f * p, 2 * tokens * batch * f * p);
    else
        membound(c, o, 2 * tokens * batch * f * p, tokens * batch * f * p);
    o = add_op(ops, n, MAX_OPS, m->act == ACT_SWIGLU ? "down_proj" : "fc2", OP_GEMM, PART_MLP);
    gemm(c, o, tokens, h, f, batch, tokens * batch * f * p);
    residual_op(c, ops, n, "mlp_residual", PART_MLP);
}

double workload_params_layer(const struct model *m, bool moe)
{
    double h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double norms = (m->norm == NORM_LAYERNORM ? 2 : 1) * h * 2;
    double attn = h * (q + 2 * kv) + q * h + (m->bias ? q + 2 * kv + h : 0);
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double mats = m->act == ACT_SWIGLU ? 3 : 2;
    double mlp = mats * h * f + (m->bias ? (mats - 1) * f + h : 0);

    if (moe)
        mlp = mlp * (m->moe.experts + m->moe.shared_experts) + h * m->moe.experts;
    return norms + attn + mlp;
}

double workload_params_embedding(const struct model *m)
{
    return (double)m->vocab * m->hidden +
           (m->pos == POS_LEARNED ? (double)m->max_seq * m->hidden : 0);
}

double workload_params_head(const struct model *m)
{
    double norm = (m->norm == NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden;

    return norm + (m->tied_embeddings ? 0 : (double)m->vocab * m->hidden);
}

double workload_params_total(const struct model *m)
{
    double total = workload_params_embedding(m) + workload_params_head(m);
    int i;

    for (i = 0; i < m->layers; i++)
        total += workload_params_layer(m, workload_is_moe(m, i));
    return total;
}

double workload_params_active(const struct model *m)
{
    double total = workload_params_embedding(m) + workload_params_head(m);
    int i;

    for (i = 0; i < m->layers; i++) {
        if (workload_is_moe(m, i)) {
            struct model dense = *m;
            dense.ffn_hidden = m->moe.ffn_hidden;
            /* the router runs for every token */
            total += workload_params_layer(&dense, false) +
                     (m->moe.topk + m->moe.shared_experts - 1) *
                         (m->act == ACT_SWIGLU ? 3.0 : 2.0) * m->hidden * m->moe.ffn_hidden +
                     (double)m->hidden * m->moe.experts;
        } else {
            total += workload_params_layer(m, false);
        }
    }
    return total;
}

/* Per-rank parameter share of a layer part (norms replicated across tp, as Megatron). */
static void layer_params(const struct scenario *s, bool moe, double out[PART_COUNT])
{
    const struct model *m = &s->model;
    double tp = s->par.tp, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double norm = (m->norm == NORM_LAYERNORM ? 2 : 1) * h;
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double mats = m->act == ACT_SWIGLU ? 3 : 2;
    double mlp = (mats * h * f + (m->bias ? (mats - 1) * f : 0)) / tp + (m->bias ? h : 0);

    out[PART_ATTN] =
        norm + (h * (q + 2 * kv) + q * h + (m->bias ? q + 2 * kv : 0)) / tp + (m->bias ? h : 0);
    if (moe)
        mlp =
            mlp * ((double)m->moe.experts / s->par.ep + m->moe.shared_experts) + h * m->moe.experts;
    out[PART_MLP] = norm + mlp;
}

void workload_layer(const struct scenario *s, const struct shard *sh, bool moe,
                    struct layer_cost *out)
{
    struct ctx c;
    int i;

    memset(out, 0, sizeof(*out));
    ctx_init(&c, s, sh);
    attention_ops(&c, sh, out->ops, &out->nops);
    mlp_ops(&c, moe, out->ops, &out->nops, &out->moe_a2a_bytes);
    for (i = 0; i < out->nops; i++) {
        const struct op *o = &out->ops[i];
        out->fwd[o->part] += o->t_fwd;
        out->dgrad[o->part] += o->t_dgrad;
        out->wgrad[o->part] += o->t_wgrad;
        out->flops_fwd += o->flops;
        out->act[RC_NONE] += o->saved;
        if (o->core)
            out->recompute_selective += o->t_fwd;
        else
            out->act[RC_SELECTIVE] += o->saved;
    }
    /* Full recompute keeps only the layer input (sequence-sharded under SP). */
    out->act[RC_FULL] = c.Tn * s->model.hidden * c.p;
    layer_params(s, moe, out->params);
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
    o = add_op(out->ops, &out->nops, 8, "embedding", OP_EMBED, 0);
    /* Gather rows (+ positions), dropout; backward scatter-adds into the table. */
    membound(&c, o, 2 * act + (m->pos == POS_LEARNED ? act : 0), m->dropout ? c.Tn * m->hidden : 0);
    out->params = (double)m->vocab * m->hidden / s->par.tp +
                  (m->pos == POS_LEARNED ? (double)m->max_seq * m->hidden : 0);
    for (i = 0; i < out->nops; i++) {
        out->fwd += out->ops[i].t_fwd;
        out->bwd += out->ops[i].t_dgrad;
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
    norm_op(&c, out->ops, &out->nops, "final_norm", 0);
    o = add_op(out->ops, &out->nops, 8, "lm_head", OP_GEMM, 0);
    gemm(&c, o, c.T, v, m->hidden, 1, c.T * m->hidden * c.p);
    /* Vocab-parallel cross-entropy on fp32 logits (KOR22 §4.3: 4sbv/t kept for backward). */
    o = add_op(out->ops, &out->nops, 8, "cross_entropy", OP_MEM, 0);
    membound(&c, o, logits * (c.p + 4 + 4), 0);
    out->logits_bytes = 4 * logits;
    out->transient_bytes = c.p * logits;
    out->params =
        (m->norm == NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden +
        ((!m->tied_embeddings || s->par.pp > 1) ? (double)m->vocab * m->hidden / s->par.tp : 0);
    for (i = 0; i < out->nops; i++) {
        out->fwd += out->ops[i].t_fwd;
        out->bwd += out->ops[i].t_dgrad + out->ops[i].t_wgrad;
        out->act += out->ops[i].saved;
        out->flops_fwd += out->ops[i].flops;
    }
}

double workload_model_flops(const struct scenario *s)
{
    const struct model *m = &s->model;
    double sq = s->train.seq_len, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double attn = 2 * sq * h * (q + 2 * kv) + 2 * sq * q * h + 4 * sq * sq * q;
    double mats = m->act == ACT_SWIGLU ? 3 : 2;
    double fwd = 0;
    int i;

    for (i = 0; i < m->layers; i++) {
        fwd += attn;
        if (workload_is_moe(m, i))
            fwd += 2 * sq * h * m->moe.experts +
                   (m->moe.topk + m->moe.shared_experts) * mats * 2 * sq * h * m->moe.ffn_hidden;
        else
            fwd += mats * 2 * sq * h * m->ffn_hidden;
    }
    fwd += 2 * sq * h * m->vocab;
    return 3 * fwd * s->train.global_batch;
}
