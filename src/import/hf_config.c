/*
 * hf_config.c - a Hugging Face config.json to a simtrain workload (docs/import.md, "hf-config").
 *
 * transformers dispatches on model_type and fills every absent key with that type's class
 * default, which differs between types (Gemma ties its embeddings, Llama does not; Mistral
 * slides a 4096-token window unless told otherwise): the table of hf_config_tables.c holds the
 * defaults of transformers v4.57.1 (models/<type>/configuration_<type>.py, C:line in the
 * comments) and what each type's modeling code builds that no key says (Qwen2's q/k/v biases,
 * Qwen3's q/k norms, gpt-oss's sinks and router bias). Architectures the workload cannot express
 * are refused at the key that asks for them: multi-latent attention (DeepSeek-V2/V3), the parallel
 * attention + MLP block (Phi, GPT-NeoX's default), dense-then-MoE layer patterns.
 *
 * Keys that describe the checkpoint or inference (torch_dtype, quantization_config, rope
 * scaling, token ids, eps values) have no cost and are listed as ignored; keys this reader
 * does not know are listed too, and refused by --strict (transformers keeps them as
 * attributes, and a modeling file may read them).
 */
#include <stdlib.h>
#include <string.h>

#include "import/hf_config_internal.h"
#include "import/import_internal.h"
#include "model/arch.h"

struct hf {
    struct imp *im;
    const struct imp_file *f;
    const struct yt_node *root;
    const struct hf_type *t;
    const char *prefix;
    const char *used[64]; /* keys read */
    int nused;
};

static const struct yt_node *key_of(struct hf *h, const char *key)
{
    const struct yt_node *kn = NULL;

    imp_get_key(h->root, key, &kn);
    return kn;
}

static const struct yt_node *val(struct hf *h, const char *key)
{
    const struct yt_node *v = imp_get_key(h->root, key, NULL);

    if (h->nused < (int)ARRAY_LEN(h->used))
        h->used[h->nused++] = key;
    return imp_null(v) ? NULL : v;
}

/* "file:line key" for a key of the file. */
static const char *from(struct hf *h, const char *key)
{
    return imp_fmt(h->im, "%s %s", imp_at(h->im, key_of(h, key)), key);
}

static void put(struct hf *h, const char *key, const char *comment, long long v)
{
    char k[96];

    snprintf(k, sizeof(k), "%s%s", h->prefix, key);
    imp_putf(h->im, k, comment, "%lld", v);
}

static void put_text(struct hf *h, const char *key, const char *value, const char *comment)
{
    char k[96];

    snprintf(k, sizeof(k), "%s%s", h->prefix, key);
    imp_put(h->im, k, value, comment);
}

/*
 * An integer key (first of the spellings given that is present), or `deflt` when absent and
 * deflt >= 0 (-1: required); written as workload key `wkey` when wkey is not NULL.
 */
static int int_key(struct hf *h, const char *const *names, long long deflt, const char *why,
                   const char *wkey, long long *out)
{
    for (const char *const *n = names; *n; n++) {
        const struct yt_node *v = val(h, *n);
        if (!v)
            continue;
        if (imp_int(h->im, v, 0, 1LL << 30, out))
            return -1;
        if (wkey)
            put(h, wkey, from(h, *n), *out);
        return 0;
    }
    if (deflt < 0)
        return imp_error(h->im, NULL, "%s: '%s' is missing (model_type '%s' has no default)",
                         h->f->path, names[0], h->t->type);
    *out = deflt;
    if (wkey)
        put(h, wkey, imp_fmt(h->im, "%s absent: %s", names[0], why), deflt);
    return 0;
}

static int bool_key(struct hf *h, const char *key, bool deflt, bool *out)
{
    const struct yt_node *v = val(h, key);

    *out = deflt;
    return v ? imp_bool(h->im, v, out) : 0;
}

/* Refusals of what the workload cannot express, at the key that asks for it. */
static int refuse_architecture(struct hf *h)
{
    const struct yt_node *v;
    const char *t = h->t ? h->t->type : imp_str(imp_get_key(h->root, "model_type", NULL));

    if ((v = val(h, "kv_lora_rank")) || (v = val(h, "q_lora_rank")))
        return imp_error(h->im, key_of(h, val(h, "kv_lora_rank") ? "kv_lora_rank" : "q_lora_rank"),
                         "multi-latent attention ('%s', DeepSeek's low-rank query and key/value "
                         "projections with 192-wide q/k heads) is not modelled by the workload",
                         val(h, "kv_lora_rank") ? "kv_lora_rank" : "q_lora_rank");
    if (t && (strcmp(t, "phi") == 0 || strcmp(t, "phi-msft") == 0))
        return imp_error(h->im, key_of(h, "model_type"),
                         "model_type '%s': Phi's parallel attention + MLP block (one norm and one "
                         "residual per layer) and its biased LM head are not modelled",
                         t);
    return 0;
}

static const struct hf_type *find_type(struct hf *h)
{
    const struct yt_node *mt = val(h, "model_type");
    const char *t = imp_str(mt);
    const struct hf_type *found = hf_type_of(t);

    if (found)
        return found;
    if (refuse_architecture(h))
        return NULL;
    if (!mt)
        imp_error(h->im, NULL, "%s: no 'model_type' (transformers dispatches on it)", h->f->path);
    else
        imp_error(h->im, mt,
                  "model_type '%s' is not one simtrain reads (llama, mistral, mixtral, qwen2, "
                  "qwen3, qwen3_moe, gemma, gemma2, gemma3_text, phi3, gpt2, gpt_neox, gpt_oss)",
                  t ? t : "");
    return NULL;
}

/* The MLP activation: gated types by hidden_act (silu: SwiGLU, gelu*: gated GeLU). */
static int activation(struct hf *h)
{
    const char *key = val(h, "hidden_activation")     ? "hidden_activation"
                      : val(h, "activation_function") ? "activation_function"
                                                      : "hidden_act";
    const struct yt_node *v = val(h, key);
    const char *a = imp_str(v);
    const char *where = a ? from(h, key) : imp_fmt(h->im, "%s absent: the class default", key);

    if (!a)
        a = h->t->gated && strncmp(h->t->type, "gemma", 5) == 0 ? "gelu_pytorch_tanh"
            : h->t->gated                                       ? "silu"
                                                                : "gelu";
    if (h->t->gated && (strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0)) {
        put_text(h, "activation", "swiglu", imp_fmt(h->im, "%s %s in a gated MLP", where, a));
        return 0;
    }
    if (strncmp(a, "gelu", 4) == 0) {
        put_text(h, "activation", h->t->gated ? "geglu" : "gelu",
                 imp_fmt(h->im, "%s %s%s", where, a, h->t->gated ? " in a gated MLP" : ""));
        return 0;
    }
    return imp_error(h->im, v, "activation '%s' is not modelled (GeLU, SwiGLU or gated GeLU)", a);
}

static int attention_shape(struct hf *h, long long *heads)
{
    static const char *const L[] = { "num_hidden_layers", "n_layer", NULL };
    static const char *const H[] = { "hidden_size", "n_embd", NULL };
    static const char *const A[] = { "num_attention_heads", "n_head", NULL };
    static const char *const KV[] = { "num_key_value_heads", NULL };
    static const char *const D[] = { "head_dim", NULL };
    static const char *const V[] = { "vocab_size", NULL };
    static const char *const S[] = { "max_position_embeddings", "n_positions", NULL };
    long long layers, hidden, kv, d, v, s;
    const struct hf_type *t = h->t;

    if (int_key(h, L, -1, NULL, "layers", &layers) || int_key(h, H, -1, NULL, "hidden", &hidden) ||
        int_key(h, A, -1, NULL, "heads", heads) || int_key(h, V, -1, NULL, "vocab", &v))
        return -1;
    if (int_key(
            h, KV, t->kv_default > 0 ? t->kv_default : *heads,
            imp_fmt(h->im, "%s (%s)", t->kv_default > 0 ? "the class default" : "= heads", t->src),
            "kv_heads", &kv) ||
        int_key(h, D, t->head_dim > 0 ? t->head_dim : (*heads > 0 ? hidden / *heads : 0),
                imp_fmt(h->im, "%s (%s)", t->head_dim > 0 ? "the class default" : "hidden / heads",
                        t->src),
                "head_dim", &d) ||
        int_key(h, S, 2048, "2048 (the position table; RoPE models do not use it)", "max_seq", &s))
        return -1;
    h->im->model = (struct imp_model){ true,
                                       t->type,
                                       t->decoder,
                                       NULL,
                                       (int)hidden,
                                       (int)layers,
                                       (int)*heads,
                                       (int)kv,
                                       (int)v,
                                       0,
                                       false,
                                       strcmp(t->type, "phi3") == 0,
                                       strcmp(t->type, "phi3") == 0,
                                       false };
    return 0;
}

static int mlp_width(struct hf *h, long long hidden)
{
    static const char *const F[] = { "intermediate_size", "n_inner", NULL };
    long long f;

    return int_key(h, F, h->t->gated ? -1 : 4 * hidden,
                   "4 * hidden (GPT2MLP, modeling_gpt2.py:385)", "ffn_hidden", &f);
}

static int norms_and_bias(struct hf *h)
{
    const struct hf_type *t = h->t;
    bool tied, ab = false, mb = false;

    put_text(h, "norm", t->norm == NORM_RMSNORM ? "rmsnorm" : "layernorm",
             imp_fmt(h->im, "model_type %s (%s)", t->type, t->src));
    put_text(h, "position", t->pos == POS_LEARNED ? "learned" : "rope",
             imp_fmt(h->im, "model_type %s: %s", t->type,
                     t->pos == POS_LEARNED ? "a learned position table (wpe)" : "rotary"));
    if (bool_key(h, "tie_word_embeddings", t->tied, &tied))
        return -1;
    h->im->model.tied = tied;
    put_text(h, "tied_embeddings", tied ? "true" : "false",
             val(h, "tie_word_embeddings")
                 ? from(h, "tie_word_embeddings")
                 : imp_fmt(h->im, "tie_word_embeddings absent: %s for %s (%s)",
                           tied ? "true" : "false", t->type, t->src));
    switch (t->bias) {
    case HB_ALL:
        val(h, "attention_bias");
        put_text(h, "bias", "true",
                 imp_fmt(h->im, "%s: every projection biased (%s)", t->type, t->src));
        return 0;
    case HB_QKV:
        put_text(h, "bias", "false", imp_fmt(h->im, "%s: o and the MLP unbiased", t->type));
        put_text(h, "qkv_bias", "true",
                 imp_fmt(h->im, "%s: q, k and v biased (%s)", t->type, t->src));
        return 0;
    case HB_NEOX:
        if (bool_key(h, "attention_bias", true, &ab))
            return -1;
        if (!ab)
            return imp_error(h->im, key_of(h, "attention_bias"),
                             "attention_bias false with GPT-NeoX's biased MLP: an unbiased "
                             "attention beside a biased MLP is not modelled");
        if (bool_key(h, "use_parallel_residual", true, &ab))
            return -1;
        if (ab)
            return imp_error(h->im,
                             key_of(h, "use_parallel_residual") ? key_of(h, "use_parallel_residual")
                                                                : key_of(h, "model_type"),
                             "%s: GPT-NeoX's parallel attention + MLP block (one residual per "
                             "layer) is not modelled",
                             val(h, "use_parallel_residual")
                                 ? "use_parallel_residual true"
                                 : "use_parallel_residual absent: true (GPTNeoXConfig)");
        put_text(h, "bias", "true",
                 imp_fmt(h->im, "%s: attention_bias %s, MLP always biased (%s)", t->type,
                         val(h, "attention_bias") ? "set" : "absent: true", t->src));
        return 0;
    default:
        if (bool_key(h, "attention_bias", false, &ab) || bool_key(h, "mlp_bias", false, &mb))
            return -1;
        if (ab != mb)
            return imp_error(h->im, key_of(h, ab ? "attention_bias" : "mlp_bias"),
                             "biases on the %s only are not modelled (bias covers attention and "
                             "MLP projections together)",
                             ab ? "attention" : "MLP");
        put_text(h, "bias", ab ? "true" : "false",
                 val(h, "attention_bias") ? from(h, "attention_bias")
                                          : "attention_bias and mlp_bias absent: false");
        return 0;
    }
}

/* layer_types as a pattern k (global when (i+1) % k == 0, 0 = all sliding); -1: none fits. */
static int pattern_of(const struct yt_node *lt, int layers, bool *any)
{
    *any = false;
    for (size_t i = 0; i < lt->count; i++)
        *any |= imp_is(lt->items[i], "sliding_attention");
    for (int k = 0; k <= layers; k++) {
        bool ok = k != 1 && (int)lt->count == layers;
        for (int i = 0; ok && i < layers; i++) {
            bool sliding = imp_is(lt->items[i], "sliding_attention");
            ok = (imp_is(lt->items[i], "full_attention") || sliding) &&
                 sliding == (k == 0 || (i + 1) % k != 0);
        }
        if (ok)
            return k;
    }
    return -1;
}

/* Qwen: a window only with use_sliding_window, on the layers from max_window_layers up. */
static int qwen_window(struct hf *h, bool *on)
{
    const struct yt_node *mw = val(h, "max_window_layers");
    long long from_layer = 28, layers = h->im->model.layers;
    bool use;

    *on = false;
    if (bool_key(h, "use_sliding_window", false, &use))
        return -1;
    if (!use) {
        if (val(h, "sliding_window"))
            imp_note(h->im, FATE_IGNORED, key_of(h, "sliding_window"),
                     "sliding_window applies only with use_sliding_window, which is false "
                     "(%s)",
                     h->t->src);
        return 0;
    }
    if (mw && imp_int(h->im, mw, 0, 1 << 30, &from_layer))
        return -1;
    if (from_layer >= layers)
        return 0; /* layers i >= max_window_layers slide: none of them */
    return imp_error(h->im, key_of(h, "use_sliding_window"),
                     "a sliding window on the layers from max_window_layers (%lld) up is not "
                     "modelled (window_pattern puts the global layers every k-th)",
                     from_layer);
}

static int window(struct hf *h)
{
    const struct yt_node *w = val(h, "sliding_window"), *lt = val(h, "layer_types");
    const struct yt_node *sp = val(h, "sliding_window_pattern");
    long long win = h->t->window, k = h->t->pattern;
    const char *wfrom, *kfrom = imp_fmt(h->im, "the %s layer pattern (%s)", h->t->type, h->t->src);
    bool on = true, any = true;

    if (h->t->window_flag && qwen_window(h, &on))
        return -1;
    if (!on)
        return 0;
    if (imp_get_key(h->root, "sliding_window", NULL) && !w)
        return 0; /* null: no window */
    if (w && imp_int(h->im, w, 0, 1 << 30, &win))
        return -1;
    wfrom = w ? from(h, "sliding_window")
              : imp_fmt(h->im, "sliding_window absent: %lld (%s)", win, h->t->src);
    if (lt) {
        int p = lt->kind == YT_SEQ ? pattern_of(lt, h->im->model.layers, &any) : -1;
        if (p < 0)
            return imp_error(h->im, key_of(h, "layer_types"),
                             "this layer_types is not a pattern the workload expresses (every "
                             "k-th layer global, the others sliding)");
        k = p;
        kfrom = imp_fmt(h->im, "%s layer_types: global every %lld-th layer",
                        imp_at(h->im, key_of(h, "layer_types")), k);
    } else if (sp && imp_int(h->im, sp, 2, 1 << 30, &k)) {
        return -1;
    } else if (sp) {
        kfrom = from(h, "sliding_window_pattern");
    }
    if (win <= 0 || !any)
        return 0;
    h->im->model.window = true;
    put(h, "attention_window", wfrom, win);
    if (k > 0)
        put(h, "window_pattern", kfrom, k);
    return 0;
}

static int moe(struct hf *h, long long ffn)
{
    static const char *const K[] = { "num_experts_per_tok", NULL };
    static const char *const S[] = { "decoder_sparse_step", NULL };
    const struct hf_type *t = h->t;
    const char *names[2] = { t->experts_key, NULL };
    const char *fnames[2] = { t->expert_ffn_key, NULL };
    const struct yt_node *mo = val(h, "mlp_only_layers");
    long long e, k, f = ffn, step = 1;

    if (!t->experts)
        return 0;
    if (int_key(h, names, t->experts, imp_fmt(h->im, "the class default (%s)", t->src),
                "moe.experts", &e) ||
        int_key(h, K, t->topk, imp_fmt(h->im, "the class default (%s)", t->src), "moe.topk", &k))
        return -1;
    if (t->expert_ffn_key && int_key(h, fnames, -1, NULL, "moe.ffn_hidden", &f))
        return -1;
    if (!t->expert_ffn_key)
        put(h, "moe.ffn_hidden", from(h, "intermediate_size"), f);
    if (mo && mo->kind == YT_SEQ && mo->count > 0)
        return imp_error(h->im, key_of(h, "mlp_only_layers"),
                         "dense layers among MoE layers (mlp_only_layers) are not modelled");
    if (strcmp(t->type, "qwen3_moe") == 0 &&
        int_key(h, S, 1, "1 (Qwen3MoeConfig)", "moe.layer_freq", &step))
        return -1;
    if (t->router_bias)
        put_text(
            h, "moe.router_bias", "true",
            imp_fmt(h->im, "%s: the router carries a bias (modeling_gpt_oss.py:143-159)", t->type));
    h->im->model.experts = (int)e;
    return 0;
}

/* Dropout at any site sets the workload's dropout (all sites): exact when every site has it. */
static int dropout(struct hf *h)
{
    static const char *const gpt2[] = { "attn_pdrop", "resid_pdrop", "embd_pdrop", NULL };
    static const char *const neox[] = { "attention_dropout", "hidden_dropout", NULL };
    static const char *const other[] = { "attention_dropout", NULL };
    bool is_gpt2 = strcmp(h->t->type, "gpt2") == 0;
    const char *const *keys = is_gpt2 ? gpt2 : strcmp(h->t->type, "gpt_neox") == 0 ? neox : other;
    int on = 0, n = 0;
    const char *first = NULL;

    for (const char *const *k = keys; *k; k++, n++) {
        const struct yt_node *v = val(h, *k);
        double p = is_gpt2 ? 0.1 : 0.0; /* GPT2Config 0.1 each (C gpt2:147-149), others 0 */
        if (v && imp_num(h->im, v, &p))
            return -1;
        if (p > 0) {
            on++;
            first = first ? first : *k;
        }
    }
    put_text(h, "dropout", on ? "true" : "false",
             on ? imp_fmt(h->im, "%s%s > 0", val(h, first) ? imp_at(h->im, key_of(h, first)) : "",
                          val(h, first) ? imp_fmt(h->im, " %s", first)
                                        : imp_fmt(h->im, "%s absent: 0.1", first))
                : imp_fmt(h->im, "%s: 0", keys[0]));
    if (on && on < n)
        imp_note(h->im, FATE_APPROX, key_of(h, first),
                 "dropout at some sites only: the workload's dropout covers attention and hidden "
                 "sites together");
    return 0;
}

static int variants(struct hf *h)
{
    const struct hf_type *t = h->t;
    const struct yt_node *ac = val(h, "attn_logit_softcapping"),
                         *fc = val(h, "final_logit_softcapping");
    bool gemma2 = strcmp(t->type, "gemma2") == 0;

    if (t->qk_norm)
        put_text(h, "qk_norm", "true",
                 imp_fmt(h->im, "%s: q_norm and k_norm (modeling_%s.py)", t->type, t->type));
    if (t->post_norms)
        put_text(h, "post_norms", "true",
                 imp_fmt(h->im, "%s: 4 norms per layer (modeling_%s.py)", t->type, t->type));
    if (t->sinks)
        put_text(
            h, "attention_sinks", "true",
            imp_fmt(h->im, "%s: a sink logit per head (modeling_gpt_oss.py:258-298)", t->type));
    if (ac || (gemma2 && !imp_get_key(h->root, "attn_logit_softcapping", NULL)))
        put_text(h, "attention_softcap", "true",
                 ac ? from(h, "attn_logit_softcapping")
                    : "attn_logit_softcapping absent: 50 (Gemma2Config)");
    if (fc || (gemma2 && !imp_get_key(h->root, "final_logit_softcapping", NULL)))
        put_text(h, "logit_softcap", "true",
                 fc ? from(h, "final_logit_softcapping")
                    : "final_logit_softcapping absent: 30 (Gemma2Config)");
    return 0;
}

/* The keys not read: those with no cost as ignored (hf_config_tables.c), the others unknown. */
static void list_unread(struct hf *h)
{
    for (size_t i = 0; i < h->root->count; i++) {
        const struct yt_node *k = h->root->pairs[i].key;
        const char *why;
        bool read = false;

        for (int u = 0; u < h->nused && !read; u++)
            read = strcmp(h->used[u], k->text) == 0;
        if (read)
            continue;
        why = hf_free_key(k->text);
        if (why)
            imp_note(h->im, FATE_IGNORED, k, "%s: %s", k->text, why);
        else
            imp_note(h->im, FATE_DROPPED, k, "%s: not a key simtrain's config.json reader knows",
                     k->text);
    }
}

/* A sequence-classification head (a reward model) is not a causal LM. */
static int check_architectures(struct hf *h)
{
    const struct yt_node *a = val(h, "architectures");

    for (size_t i = 0; a && a->kind == YT_SEQ && i < a->count; i++) {
        const char *s = imp_str(a->items[i]);
        if (s && strstr(s, "ForSequenceClassification"))
            return imp_error(h->im, a->items[i],
                             "'%s' has a sequence-classification head instead of the LM head: "
                             "not modelled",
                             s);
    }
    return 0;
}

int imp_hf_config(struct imp *im, const struct imp_file *f, const char *prefix)
{
    struct hf h = { .im = im, .f = f, .root = f->doc->root, .prefix = prefix };
    const char *base = strrchr(f->path, '/'), *dot;
    long long heads, hidden;
    int before = im->errors;

    base = base ? base + 1 : f->path;
    dot = strstr(base, ".config.json") ? strstr(base, ".config.json") : strrchr(base, '.');
    if (refuse_architecture(&h) || !(h.t = find_type(&h)) || check_architectures(&h))
        return -1;
    put_text(
        &h, "name",
        imp_fmt(im, "\"%.*s\"", dot && dot > base ? (int)(dot - base) : (int)strlen(base), base),
        imp_fmt(im, "the base name of %s", f->path));
    if (attention_shape(&h, &heads))
        return -1;
    hidden = im->model.hidden;
    if (mlp_width(&h, hidden) || activation(&h) || norms_and_bias(&h) || window(&h) ||
        moe(&h, atoll(imp_get(im, imp_fmt(im, "%sffn_hidden", prefix)))) || dropout(&h) ||
        variants(&h))
        return -1;
    im->model.name = imp_get(im, imp_fmt(im, "%sname", prefix));
    list_unread(&h);
    return im->errors > before ? -1 : 0;
}

int imp_model_config(struct imp *im, const struct yt_node *base_model_key,
                     const struct yt_node *base_model)
{
    const struct imp_file *f;

    if (!im->rq->model_config)
        return imp_error(im, base_model ? base_model : base_model_key,
                         "'%s' is a model on the Hugging Face hub and simtrain reads no network: "
                         "pass its config.json with --model-config",
                         imp_str(base_model) ? imp_str(base_model) : "the model");
    f = imp_read(im, im->rq->model_config, "config.json, --model-config", true);
    return f ? imp_hf_config(im, f, "workload.") : -1;
}

int imp_hf_config_kind(struct imp *im)
{
    const struct imp_file *f = imp_read(im, im->rq->files[0], "config.json", true);

    if (!f)
        return -1;
    if (im->rq->model_config)
        return imp_error(im, NULL,
                         "import hf-config reads the model from its file: drop "
                         "--model-config");
    if (imp_hf_config(im, f, im->workload_only ? "" : "workload."))
        return -1;
    return im->workload_only ? 0 : imp_training_defaults(im);
}
