/*
 * workload_params.c - counts of the model as a whole, unsharded: parameters per layer, of the
 * embedding and head, in total and active per token, projection and LoRA adapter parameters,
 * and the model FLOPs of a step (see workload.h for the sources). The operators of a layer
 * and their costs are workload.c.
 */
#include "model/workload.h"

double workload_params_layer(const struct model *m, bool moe)
{
    double h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double norms = (m->norm == NORM_LAYERNORM ? 2 : 1) * h * (m->post_norms ? 4 : 2);
    double attn = h * (q + 2 * kv) + q * h + (m->bias ? q + 2 * kv + h : 0) +
                  (!m->bias && m->qkv_bias ? q + 2 * kv : 0) + (m->qk_norm ? 2 * d : 0) +
                  (m->attn_sinks ? m->heads : 0);
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double mats = workload_mlp_matrices(m);
    double mlp = mats * h * f + (m->bias ? (mats - 1) * f + h : 0);

    if (moe)
        mlp = mlp * (m->moe.experts + m->moe.shared_experts) + h * m->moe.experts +
              (m->moe.router_bias ? m->moe.experts : 0);
    return norms + attn + mlp;
}

double workload_params_expert(const struct model *m)
{
    double mats = workload_mlp_matrices(m), h = m->hidden, f = m->moe.ffn_hidden;

    return mats * h * f + (m->bias ? (mats - 1) * f + h : 0);
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
                     (m->moe.topk + m->moe.shared_experts - 1) * workload_params_expert(m) +
                     (double)m->hidden * m->moe.experts + (m->moe.router_bias ? m->moe.experts : 0);
        } else {
            total += workload_params_layer(m, false);
        }
    }
    return total;
}

double workload_linear_params_layer(const struct model *m, bool moe)
{
    double h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double mats = workload_mlp_matrices(m);
    double copies = moe ? m->moe.experts + m->moe.shared_experts : 1;

    return h * (q + 2 * kv) + q * h + mats * h * f * copies;
}

double workload_lora_params_layer(const struct scenario *s, bool moe)
{
    const struct model *m = &s->model;
    unsigned tg = s->train.lora.targets;
    double r = s->train.lora.rank, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double copies = moe ? m->moe.experts + m->moe.shared_experts : 1;
    double attn = 0, mlp = 0;

    if (s->train.finetune == FT_FULL)
        return 0;
    /* LORA §4.1: B (d_out x r) and A (r x d_in) per adapted matrix; DoRA a magnitude per row. */
    double dm = s->train.lora.dora ? 1 : 0;
    attn += (tg & LORA_Q) ? r * (h + q) + dm * q : 0;
    attn += (tg & LORA_K) ? r * (h + kv) + dm * kv : 0;
    attn += (tg & LORA_V) ? r * (h + kv) + dm * kv : 0;
    attn += (tg & LORA_O) ? r * (q + h) + dm * h : 0;
    mlp += (tg & LORA_GATE) && workload_mlp_matrices(m) == 3 ? r * (h + f) + dm * f : 0;
    mlp += (tg & LORA_UP) ? r * (h + f) + dm * f : 0;
    mlp += (tg & LORA_DOWN) ? r * (f + h) + dm * h : 0;
    return attn + mlp * copies;
}

double workload_lora_params_total(const struct scenario *s)
{
    double total = 0;
    int i;

    for (i = 0; i < s->model.layers; i++)
        total += workload_lora_params_layer(s, workload_is_moe(&s->model, i));
    return total;
}

double workload_saved_module_params(const struct scenario *s, bool embedding)
{
    const struct model *m = &s->model;
    unsigned bit = embedding ? LORA_SAVE_EMBED : LORA_SAVE_HEAD;

    if (s->train.finetune == FT_FULL || !(s->train.lora.modules_to_save & bit))
        return 0;
    /* PEFT ModulesToSaveWrapper deep-copies the module: its V x h weight (tied or not) */
    return (double)m->vocab * m->hidden;
}

double workload_params_trainable(const struct scenario *s)
{
    if (s->train.finetune == FT_FULL)
        return workload_params_total(&s->model);
    return workload_lora_params_total(s) + workload_saved_module_params(s, true) +
           workload_saved_module_params(s, false);
}

double workload_model_flops(const struct scenario *s)
{
    const struct model *m = &s->model;
    double sq = s->train.seq_len, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double proj = 2 * sq * h * (q + 2 * kv) + 2 * sq * q * h, core = 4 * sq * sq * q;
    double win = workload_window_share(s->train.seq_len, m->window);
    double mats = workload_mlp_matrices(m);
    double fwd = 0;
    int i;

    for (i = 0; i < m->layers; i++) {
        /* a sliding window computes a share of the pairs (workload_layer_variant()) */
        fwd += proj + (workload_is_windowed(s, i) ? core * win : core);
        if (workload_is_moe(m, i))
            fwd += 2 * sq * h * m->moe.experts +
                   (m->moe.topk + m->moe.shared_experts) * mats * 2 * sq * h * m->moe.ffn_hidden;
        else
            fwd += mats * 2 * sq * h * m->ffn_hidden;
    }
    fwd += 2 * sq * h * m->vocab;
    return 3 * fwd * s->train.global_batch;
}
