/*
 * arch.h - a model architecture (a workload file): a decoder-only transformer
 * with MHA / GQA attention, a GeLU or SwiGLU MLP, LayerNorm or RMSNorm, and
 * optional mixture-of-experts layers. Plain data, filled by config/ from
 * workloads/NAME.yaml; model/workload.c turns it into operators.
 */
#ifndef SIMTRAIN_MODEL_ARCH_H
#define SIMTRAIN_MODEL_ARCH_H

#include <stdbool.h>

enum ffn_act {
    ACT_GELU,  /* two matrices h->f->h */
    ACT_SWIGLU /* three matrices: gate, up, down */
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
};

#endif
