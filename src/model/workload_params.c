/*
 * workload_params.c - counts of the model as a whole, unsharded: parameters per layer, of the
 * embedding and head, in total and active per token, projection and LoRA adapter parameters,
 * and the model FLOPs of a step (see workload.h for the sources). The operators of a layer
 * and their costs are workload.c.
 */
#include "model/workload.h"

#include <string.h>

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

/*
 * LoRA adapter parameters of one layer's attention and of one copy of its MLP (an expert's),
 * r * (d_in + d_out) per targeted matrix (LORA §4.1), and with DoRA a magnitude per output
 * row; 0 for full fine-tuning.
 */
static void lora_split(const struct scenario *s, bool moe, double *attn, double *mlp)
{
    const struct model *m = &s->model;
    unsigned tg = s->train.lora.targets;
    double r = s->train.lora.rank, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double f = moe ? m->moe.ffn_hidden : m->ffn_hidden;
    double dm = s->train.lora.dora ? 1 : 0;

    *attn = *mlp = 0;
    if (s->train.finetune == FT_FULL)
        return;
    *attn += (tg & LORA_Q) ? r * (h + q) + dm * q : 0;
    *attn += (tg & LORA_K) ? r * (h + kv) + dm * kv : 0;
    *attn += (tg & LORA_V) ? r * (h + kv) + dm * kv : 0;
    *attn += (tg & LORA_O) ? r * (q + h) + dm * h : 0;
    *mlp += (tg & LORA_GATE) && workload_mlp_matrices(m) == 3 ? r * (h + f) + dm * f : 0;
    *mlp += (tg & LORA_UP) ? r * (h + f) + dm * f : 0;
    *mlp += (tg & LORA_DOWN) ? r * (f + h) + dm * h : 0;
}

double workload_lora_params_layer(const struct scenario *s, bool moe)
{
    const struct model *m = &s->model;
    double copies = moe ? m->moe.experts + m->moe.shared_experts : 1, attn, mlp;

    lora_split(s, moe, &attn, &mlp);
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
        return workload_params_total(&s->model) * s->train.trainable_fraction;
    return workload_lora_params_total(s) + workload_saved_module_params(s, true) +
           workload_saved_module_params(s, false);
}

/*
 * Forward FLOPs of one sequence (formulas.md §1.3, no causal discount; a sliding window
 * computes its share of the pairs), split by what the backward does with them: GEMMs with
 * frozen or trained weights (`weights`: projections, router, logits; `head`: the logits
 * alone), the attention core without weights (`core`: QK^T and PV), the LoRA adapters
 * (`adapters`), and one layer's share of each (`layer`: what a full recomputation runs again
 * per layer).
 */
struct fwd_flops {
    double weights, head, core, adapters;
    double layer_dense, layer_moe; /* forward of one dense / MoE layer, everything in it */
};

static void forward_flops(const struct scenario *s, struct fwd_flops *out)
{
    const struct model *m = &s->model;
    double sq = s->train.seq_len, h = m->hidden, d = m->head_dim;
    double q = m->heads * d, kv = m->kv_heads * d;
    double proj = 2 * sq * h * (q + 2 * kv) + 2 * sq * q * h, core = 4 * sq * sq * q;
    double win = workload_window_share(s->train.seq_len, m->window);
    double mats = workload_mlp_matrices(m);
    double active = m->moe.topk + m->moe.shared_experts;
    double dense = mats * 2 * sq * h * m->ffn_hidden;
    double moe = 2 * sq * h * m->moe.experts + active * mats * 2 * sq * h * m->moe.ffn_hidden;
    double attn_a, mlp_a, attn_am, mlp_am;

    memset(out, 0, sizeof(*out));
    lora_split(s, false, &attn_a, &mlp_a);
    lora_split(s, true, &attn_am, &mlp_am);
    out->layer_dense = proj + core + dense + 2 * sq * (attn_a + mlp_a);
    out->layer_moe = proj + core + moe + 2 * sq * (attn_am + mlp_am * active);
    for (int i = 0; i < m->layers; i++) {
        bool is_moe = workload_is_moe(m, i);

        out->weights += proj + (is_moe ? moe : dense);
        out->core += workload_is_windowed(s, i) ? core * win : core;
        out->adapters += 2 * sq * (is_moe ? attn_am + mlp_am * active : attn_a + mlp_a);
    }
    out->head = 2 * sq * h * m->vocab;
}

double workload_model_flops(const struct scenario *s)
{
    struct fwd_flops f;

    forward_flops(s, &f);
    if (s->train.finetune == FT_FULL) /* forward, input and weight gradients: 3x; a frozen
                                         share of the weights (trainable_fraction) 2x */
        return ((2 + s->train.trainable_fraction) * (f.weights + f.head) + 3 * f.core) *
               s->train.global_batch;
    /* frozen base weights: forward and input gradient (2x); the core (no weights), the
     * trainable adapters and a head PEFT trains (modules_to_save) 3x */
    if (workload_saved_module_params(s, false) > 0)
        f.adapters += f.head;
    else
        f.weights += f.head;
    return (2 * f.weights + 3 * (f.core + f.adapters)) * s->train.global_batch;
}

double workload_hardware_flops(const struct scenario *s)
{
    const struct training *t = &s->train;
    const struct model *m = &s->model;
    struct fwd_flops f;
    double again = 0;

    forward_flops(s, &f);
    if (t->recompute == RC_FULL) {
        /* recompute_layers k: the first k layers of each model chunk (Megatron block method) */
        double layers = m->layers, chunks = (double)s->par.pp * s->par.vpp, moe_share;

        if (t->recompute_layers > 0 && t->recompute_layers * chunks < layers)
            layers = t->recompute_layers * chunks;
        moe_share = m->moe.experts > 0 && m->moe.layer_freq > 0 ? 1.0 / m->moe.layer_freq : 0;
        again = layers * ((1 - moe_share) * f.layer_dense + moe_share * f.layer_moe);
    } else if (t->recompute == RC_SELECTIVE && t->attention != ATTN_FLASH) {
        again = f.core; /* KOR22 §5: the unfused attention core; FlashAttention keeps nothing */
    }
    return workload_model_flops(s) + again * t->global_batch;
}

const char *workload_flops_convention(const struct scenario *s)
{
    if (s->train.finetune == FT_FULL)
        return "6N + 12·L·s·q per token (PaLM App. B, Megatron-LM), no causal discount";
    return "6N + 12·L·s·q per token (PaLM App. B, Megatron-LM), no causal discount; frozen "
           "weights 4N (no weight gradients)";
}
