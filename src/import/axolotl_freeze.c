/*
 * axolotl_freeze.c - Axolotl's unfrozen_parameters: every parameter is frozen but those whose
 * name matches one of the listed regexes (utils/freeze.py freeze_layers_except, called from
 * loaders/model.py when cfg.unfrozen_parameters is set). The patterns are matched here
 * against the parameter names transformers gives the imported architecture
 * (modeling_llama.py / modeling_mixtral.py / modeling_qwen2_moe.py: model.embed_tokens,
 * model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj or
 * block_sparse_moe.{gate,experts.E.w1,w2,w3}, the norms, model.norm, lm_head), and the
 * matched share of the parameters becomes training.trainable_fraction.
 *
 * freeze.py's LayerNamePattern: a trailing "[a:b]" index range is cut off (the parameter
 * still has requires_grad, a hook zeroes the other rows' gradients, so its states are
 * whole); every "." not followed by "+" is a literal dot; re.match anchors at the start only.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "import/axolotl_internal.h"

#define MAX_PATTERNS 64

struct pat {
    regex_t re;
    const struct yt_node *at;
    double matched; /* parameters it matches */
};

/* Axolotl's pattern as a POSIX extended regex anchored at the start, or NULL after an error. */
static char *translate(struct ax *a, const struct yt_node *n)
{
    const char *p = imp_str(n);
    size_t len = p ? strlen(p) : 0, i, o = 0;
    char *out;

    if (!p || len == 0) {
        imp_error(a->im, n, "unfrozen_parameters: an empty pattern");
        return NULL;
    }
    if (p[len - 1] == ']') { /* freeze.py _parse_pattern: ^(.+)\[([0-9]*)(?::([0-9]*))?\]$ */
        size_t j = len - 1;
        int colons = 0;
        while (j > 0 && ((p[j - 1] >= '0' && p[j - 1] <= '9') || p[j - 1] == ':')) {
            colons += p[j - 1] == ':';
            j--;
        }
        if (j > 1 && p[j - 1] == '[' && colons <= 1)
            len = j - 1;
    }
    if (strstr(p, "(?")) {
        imp_error(a->im, n, "unfrozen_parameters: '%s': Python's (?...) groups have no POSIX form",
                  p);
        return NULL;
    }
    out = arena_alloc(&a->im->a, 4 * len + 8);
    out[o++] = '^';
    out[o++] = '(';
    for (i = 0; i < len; i++) {
        if (p[i] == '.' && p[i + 1] != '+') {
            out[o++] = '\\';
            out[o++] = '.';
        } else if (p[i] == '\\' && i + 1 < len && p[i + 1] == 'd') {
            memcpy(out + o, "[0-9]", 5);
            o += 5;
            i++;
        } else {
            out[o++] = p[i];
        }
    }
    out[o++] = ')';
    out[o] = '\0';
    return out;
}

/* Parameter `name` of `count` elements: counted, and matched against every pattern. */
static void param(struct pat *ps, int np, double *total, double *trained, const char *name,
                  double count)
{
    bool hit = false;

    *total += count;
    for (int i = 0; i < np; i++)
        if (regexec(&ps[i].re, name, 0, NULL, 0) == 0) {
            ps[i].matched += count;
            hit = true;
        }
    if (hit)
        *trained += count;
}

static double key_num(struct ax *a, const char *key, double deflt)
{
    const char *v = imp_get(a->im, key);

    return v ? atof(v) : deflt;
}

/* Every parameter of the imported model, by its transformers name. */
static void walk(struct ax *a, struct pat *ps, int np, double *total, double *trained)
{
    const struct imp_model *m = &a->im->model;
    double h = m->hidden, hd = key_num(a, "workload.head_dim", h / m->heads);
    double q = m->heads * hd, kv = m->kv_heads * hd, f = key_num(a, "workload.ffn_hidden", 0);
    double fe = key_num(a, "workload.moe.ffn_hidden", f);
    double shared = key_num(a, "workload.moe.shared_experts", 0);
    int freq = (int)key_num(a, "workload.moe.layer_freq", 1); /* as workload_is_moe() */
    const char *act = imp_get(a->im, "workload.activation"),
               *bias = imp_get(a->im, "workload.bias");
    bool gated = !act || strcmp(act, "gelu") != 0, biased = bias && strcmp(bias, "true") == 0;
    bool mixtral = m->type && strcmp(m->type, "mixtral") == 0;
    static const char *const proj[] = { "q_proj", "k_proj", "v_proj", "o_proj" };
    static const char *const mlp[] = { "gate_proj", "up_proj", "down_proj" };
    static const char *const w[] = { "w1", "w3", "w2" };
    char n[160];

    param(ps, np, total, trained, "model.embed_tokens.weight", (double)m->vocab * h);
    for (int l = 0; l < m->layers; l++) {
        const double shape[4][2] = { { h, q }, { h, kv }, { h, kv }, { q, h } };
        for (int i = 0; i < 4; i++) {
            snprintf(n, sizeof(n), "model.layers.%d.self_attn.%s.weight", l, proj[i]);
            param(ps, np, total, trained, n, shape[i][0] * shape[i][1]);
            snprintf(n, sizeof(n), "model.layers.%d.self_attn.%s.bias", l, proj[i]);
            if (biased)
                param(ps, np, total, trained, n, shape[i][1]);
        }
        snprintf(n, sizeof(n), "model.layers.%d.input_layernorm.weight", l);
        param(ps, np, total, trained, n, h);
        snprintf(n, sizeof(n), "model.layers.%d.post_attention_layernorm.weight", l);
        param(ps, np, total, trained, n, h);
        if (m->experts > 0 && (l + 1) % (freq > 0 ? freq : 1) == 0) {
            snprintf(n, sizeof(n), "model.layers.%d.%s.gate.weight", l,
                     mixtral ? "block_sparse_moe" : "mlp");
            param(ps, np, total, trained, n, (double)m->experts * h);
            for (int e = 0; e < m->experts; e++)
                for (int i = 0; i < 3; i++) {
                    if (mixtral)
                        snprintf(n, sizeof(n),
                                 "model.layers.%d.block_sparse_moe.experts.%d.%s.weight", l, e,
                                 w[i]);
                    else
                        snprintf(n, sizeof(n), "model.layers.%d.mlp.experts.%d.%s.weight", l, e,
                                 mlp[i]);
                    param(ps, np, total, trained, n, h * fe);
                }
            for (int i = 0; i < 3 && shared > 0; i++) {
                snprintf(n, sizeof(n), "model.layers.%d.mlp.shared_expert.%s.weight", l, mlp[i]);
                param(ps, np, total, trained, n, shared * h * fe);
            }
            continue;
        }
        for (int i = gated ? 0 : 1; i < 3; i++) {
            snprintf(n, sizeof(n), "model.layers.%d.mlp.%s.weight", l, mlp[i]);
            param(ps, np, total, trained, n, h * f);
        }
    }
    param(ps, np, total, trained, "model.norm.weight", h);
    if (!m->tied) /* a tied head is the embedding: named_parameters() lists it once */
        param(ps, np, total, trained, "lm_head.weight", (double)m->vocab * h);
}

int ax_unfrozen(struct ax *a)
{
    const struct yt_node *v = ax_val(a, "unfrozen_parameters");
    const struct yt_node *const *items;
    struct pat ps[MAX_PATTERNS];
    int np = 0, before = a->im->errors;
    size_t count;
    double total = 0, trained = 0;

    if (!v || (v->kind != YT_SCALAR && v->count == 0))
        return 0;
    /* with an adapter: refused up front (ax_refusals) */
    if (v->kind == YT_MAP)
        return imp_error(a->im, v, "unfrozen_parameters: a list of regexes expected");
    items = v->kind == YT_SCALAR ? (const struct yt_node *const *)&v : (const void *)v->items;
    count = v->kind == YT_SCALAR ? 1 : v->count;
    if (count > MAX_PATTERNS)
        return imp_error(a->im, v, "unfrozen_parameters: more than %d patterns", MAX_PATTERNS);
    for (size_t i = 0; i < count; i++) {
        char *re = items[i]->kind == YT_SCALAR ? translate(a, items[i]) : NULL;
        if (items[i]->kind != YT_SCALAR)
            imp_error(a->im, items[i], "unfrozen_parameters: a regex (a string) expected");
        if (!re)
            continue;
        if (regcomp(&ps[np].re, re, REG_EXTENDED | REG_NOSUB) != 0) {
            imp_error(a->im, items[i], "unfrozen_parameters: '%s' is not a regex simtrain reads",
                      imp_str(items[i]));
            continue;
        }
        ps[np].at = items[i];
        ps[np++].matched = 0;
    }
    if (a->im->errors == before)
        walk(a, ps, np, &total, &trained);
    for (int i = 0; i < np; i++) {
        if (a->im->errors == before && !(ps[i].matched > 0))
            imp_error(a->im, ps[i].at,
                      "unfrozen_parameters: '%s' matches no parameter of this %s model (names "
                      "as transformers gives them: model.layers.N.self_attn.q_proj.weight, ...)",
                      imp_str(ps[i].at), a->im->model.type ? a->im->model.type : "");
    }
    for (int i = 0; i < np; i++)
        regfree(&ps[i].re);
    if (a->im->errors > before)
        return -1;
    if (trained < total)
        imp_note(a->im, FATE_APPROX, ax_key(a, "unfrozen_parameters"),
                 "unfrozen_parameters: the trained share is spread evenly over the layers and "
                 "their parts; the backward still runs below the lowest trained parameter "
                 "(docs/memory.md)");
    imp_putf(a->im, "training.trainable_fraction",
             imp_fmt(a->im,
                     "%s: %.0f of %.0f parameters match and train, the rest frozen "
                     "(utils/freeze.py freeze_layers_except)",
                     ax_from(a, "unfrozen_parameters"), trained, total),
             "%.6g", trained / total);
    return 0;
}
