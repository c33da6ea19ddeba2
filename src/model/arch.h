/*
 * arch.h - a model architecture (a workload file): a decoder-only transformer
 * with MHA / GQA attention, a GeLU, SwiGLU or gated-GeLU MLP, LayerNorm or
 * RMSNorm, and optional mixture-of-experts layers; and the variants imported
 * Hugging Face configs need (docs/workloads.md, "Architecture variants"):
 * q/k/v-only biases, per-head q/k norms, post-sublayer norms, attention sinks,
 * soft-capped logits and sliding-window attention on a pattern of layers.
 * Plain data, filled by config/ from workloads/NAME.yaml; model/workload.c
 * turns it into operators.
 */
#ifndef SIMTRAIN_MODEL_ARCH_H
#define SIMTRAIN_MODEL_ARCH_H

#include <stdbool.h>

enum ffn_act {
    ACT_GELU,   /* two matrices h->f->h */
    ACT_SWIGLU, /* three matrices: gate, up, down; silu(gate) * up */
    ACT_GEGLU   /* three matrices like SwiGLU, gelu(gate) * up (Gemma's GemmaMLP) */
};

enum norm_kind {
    NORM_LAYERNORM,
    NORM_RMSNORM
};

enum pos_emb {
    POS_LEARNED,
    POS_ROPE,
    POS_NONE
};

struct moe_spec {
    int experts;            /* routed experts per MoE layer; 0 = dense model */
    int topk;               /* experts per token */
    int ffn_hidden;         /* expert MLP inner width */
    int layer_freq;         /* every k-th layer is MoE (1 = all) */
    int shared_experts;     /* always-active experts (DeepSeek style) */
    double capacity_factor; /* token capacity per expert vs uniform share; 0 = dropless */
    double load_imbalance;  /* busiest expert's tokens / the uniform share, >= 1 */
    bool router_bias;       /* the router carries a bias per expert (gpt-oss) */
};

struct model {
    const char *name;
    int layers;
    int hidden;
    int heads;
    int kv_heads; /* = heads for MHA */
    int head_dim; /* = hidden / heads unless given */
    int ffn_hidden;
    int vocab;
    int max_seq; /* learned position table size (POS_LEARNED) */
    enum ffn_act act;
    enum norm_kind norm;
    enum pos_emb pos;
    bool tied_embeddings;
    bool bias;    /* linear layers carry biases (GPT-2/3 style) */
    bool dropout; /* dropout layers present (Korthikanti's 1-byte masks) */
    struct moe_spec moe;
    /* Variants of imported architectures (docs/workloads.md "Architecture variants"). */
    bool qkv_bias;      /* q, k and v projections carry biases, the rest not (Qwen2) */
    bool qk_norm;       /* RMSNorm over each head of q and of k (Qwen3, Gemma 3) */
    bool post_norms;    /* a norm on the attention and MLP outputs too: 4 per layer (Gemma 2/3) */
    bool attn_sinks;    /* one learned sink logit per head in the softmax (gpt-oss) */
    bool attn_softcap;  /* tanh soft-capping of the attention scores (Gemma 2) */
    bool logit_softcap; /* tanh soft-capping of the final logits (Gemma 2) */
    int window;         /* sliding-window attention: keys per query; 0 = full causal */
    int window_pattern; /* with a window: layer i attends globally when (i+1) % k == 0; 0 = none */
};

#endif
