/*
 * hf_config_internal.h - the tables of the config.json reader (hf_config_tables.c) for the
 * reader (hf_config.c): transformers' class defaults per model_type, with what each type's
 * modeling code builds that no key says, and the keys that have no cost. Private to
 * src/import/.
 */
#ifndef SIMTRAIN_IMPORT_HF_CONFIG_INTERNAL_H
#define SIMTRAIN_IMPORT_HF_CONFIG_INTERNAL_H

#include <stdbool.h>

#include "model/arch.h"

enum hf_bias {
    HB_KEYS, /* attention_bias / mlp_bias keys (default false) */
    HB_ALL,  /* every projection biased (GPT-2, gpt-oss: attention_bias forced true) */
    HB_QKV,  /* q, k, v biased, o and the MLP not (Qwen2Attention) */
    HB_NEOX  /* attention_bias default true, MLP always biased (GPT-NeoX) */
};

struct hf_type {
    const char *type;
    const char *decoder; /* the decoder layer class (FSDP wrap) */
    bool gated;          /* gate, up, down MLP (SwiGLU or gated GeLU by hidden_act) */
    enum norm_kind norm;
    enum pos_emb pos;
    int kv_default; /* num_key_value_heads absent: this, 0 = heads */
    int head_dim;   /* head_dim absent: this, 0 = hidden / heads */
    bool tied;      /* tie_word_embeddings absent */
    enum hf_bias bias;
    bool qk_norm, post_norms, sinks, router_bias;
    int window;        /* sliding_window absent: this (0 = none) */
    int pattern;       /* layer_types absent: global every k-th layer, 0 = all windowed */
    bool window_flag;  /* the window applies only with use_sliding_window (Qwen) */
    int experts, topk; /* defaults of the MoE keys; experts 0 = dense type */
    const char *experts_key, *expert_ffn_key; /* NULL expert_ffn_key: intermediate_size */
    const char *src;                          /* where the defaults are */
};

/* The defaults of model_type `type` (NULL: none), or NULL when simtrain does not read it. */
const struct hf_type *hf_type_of(const char *type);

/* Why config.json key `key` has no cost, or NULL when it is not one of those keys. */
const char *hf_free_key(const char *key);

#endif
