/*
 * megatron.c - Megatron-LM (core_v0.14.0 megatron/training/arguments.py, A:line below) or
 * NeMo 1 (megatron_gpt_config.yaml, v2.3.0) arguments to a scenario and its workload
 * (docs/import.md, "megatron"). Megatron's defaults differ from simtrain's and from Hugging
 * Face's: biases on, embeddings tied, dropout 0.1, LayerNorm, learned positions, fp32 without
 * --bf16/--fp16, the SwiGLU FFN width int(4h * 2/3 / 64) * 64, the vocabulary padded to a
 * multiple of 128 * tp. argparse runs with allow_abbrev=False (A:91-92): a flag close to a
 * known one is taken for a misspelling and refused with a did-you-mean; others this reader
 * does not know are listed (and refused by --strict). The words of the file are
 * megatron_args.c's, their matching to the flags megatron_flags.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "import/megatron_internal.h"

/* Flag `name` as given, or NULL when absent. */
static struct meg_opt *opt(struct meg *m, const char *name)
{
    int i = meg_flag_index(name);

    return i >= 0 && m->opts[i].key ? &m->opts[i] : NULL;
}

static bool on(struct meg *m, const char *name)
{
    struct meg_opt *o = opt(m, name);

    return o &&
           (!o->val || imp_is(o->val, "true") || imp_is(o->val, "True") || imp_is(o->val, "1"));
}

static const char *from(struct meg *m, const char *name)
{
    struct meg_opt *o = opt(m, name);

    return o ? imp_fmt(m->im, "%s %s", imp_at(m->im, o->key), o->key->text) : "";
}

/* Flags whose 0 means "none" (vpp, a stage's layers, a shared expert); the others count. */
static bool zero_ok(const char *name)
{
    static const char *const zero[] = {
        "num-virtual-stages-per-pipeline-rank", "num-layers-per-virtual-pipeline-stage",
        "decoder-first-pipeline-num-layers",    "decoder-last-pipeline-num-layers",
        "moe-shared-expert-intermediate-size",  "recompute-num-layers",
    };

    for (size_t i = 0; i < ARRAY_LEN(zero); i++)
        if (strcmp(zero[i], name) == 0)
            return true;
    return false;
}

/*
 * An integer flag, or `deflt` (-1: required, with `why`): 1 to 2^30 (0 too for zero_ok()
 * flags), so that no product of two of them (vocab padding, degrees) can overflow.
 */
static int int_opt(struct meg *m, const char *name, long long deflt, long long *out)
{
    struct meg_opt *o = opt(m, name);

    if (!o || !o->val) {
        if (deflt < 0)
            return imp_error(m->im, NULL, "%s: --%s is required (Megatron asserts it)",
                             m->file->path, name);
        *out = deflt;
        return 0;
    }
    return imp_int(m->im, o->val, zero_ok(name) ? 0 : 1, 1LL << 30, out);
}

static int num_opt(struct meg *m, const char *name, double deflt, double *out)
{
    struct meg_opt *o = opt(m, name);

    *out = deflt;
    return o && o->val ? imp_num(m->im, o->val, out) : 0;
}

/* ---- refusals --------------------------------------------------------------------------- */

static int refusals(struct meg *m)
{
    static const char *const no[][2] = {
        { "multi-latent-attention", "multi-latent attention is not modelled by the workload" },
        { "q-lora-rank", "multi-latent attention (q_lora_rank) is not modelled by the workload" },
        { "kv-lora-rank", "multi-latent attention (kv_lora_rank) is not modelled by the workload" },
        { "mtp-num-layers", "multi-token prediction is not modelled" },
        { "squared-relu", "the squared-ReLU MLP is not modelled (GeLU, SwiGLU, gated GeLU)" },
        { "rampup-batch-size", "a batch that ramps up is not modelled (one step is simulated)" },
        { "pipeline-model-parallel-layout", "an explicit pipeline layout is not modelled" },
        { "use-precision-aware-optimizer", "lower-precision optimizer states (precision-aware "
                                           "optimizer) are not modelled" },
    };
    int before = m->im->errors;

    for (size_t i = 0; i < ARRAY_LEN(no); i++)
        if (opt(m, no[i][0]) && (on(m, no[i][0]) || opt(m, no[i][0])->val))
            imp_error(m->im, opt(m, no[i][0])->key, "--%s: %s", no[i][0], no[i][1]);
    return m->im->errors > before ? -1 : 0;
}

/* ---- the workload --------------------------------------------------------------------------- */

static void put_w(struct meg *m, const char *key, const char *comment, long long v)
{
    imp_putf(m->im, imp_fmt(m->im, "workload.%s", key), comment, "%lld", v);
}

static int vocab(struct meg *m, long long tp)
{
    long long v, div = 128, padded;
    struct meg_opt *pv = opt(m, "padded-vocab-size"), *vs = opt(m, "vocab-size");
    bool null_tok =
        opt(m, "tokenizer-type") && imp_is(opt(m, "tokenizer-type")->val, "NullTokenizer");

    if (pv)
        return int_opt(m, "padded-vocab-size", 0, &v)
                   ? -1
                   : (put_w(m, "vocab", from(m, "padded-vocab-size"), v), 0);
    if (!vs)
        return imp_from_set(m->im, "workload.vocab",
                            "vocabulary size (the tokenizer decides: --vocab-size, or "
                            "--padded-vocab-size)");
    if (int_opt(m, "vocab-size", 0, &v) || int_opt(m, "make-vocab-size-divisible-by", 128, &div))
        return -1;
    v += null_tok; /* NullTokenizer adds the EOD token (tokenizer.py:801-826) */
    padded = (v + div * tp - 1) / (div * tp) * div * tp;
    put_w(m, "vocab",
          imp_fmt(m->im, "%s%s padded to a multiple of %lld x tp %lld (tokenizer.py:115-128)",
                  from(m, "vocab-size"), null_tok ? " + 1 (NullTokenizer's EOD)" : "", div, tp),
          padded);
    return 0;
}

static int shape(struct meg *m, long long *h, long long *heads)
{
    long long layers, f, kvc, groups, pos;
    bool gqa = on(m, "group-query-attention") || opt(m, "num-query-groups");
    bool swiglu = on(m, "swiglu") ||
                  imp_is(opt(m, "activation") ? opt(m, "activation")->val : NULL, "swiglu");

    if (int_opt(m, "num-layers", -1, &layers) || int_opt(m, "hidden-size", -1, h) ||
        int_opt(m, "num-attention-heads", -1, heads) ||
        int_opt(m, "max-position-embeddings", -1, &pos))
        return -1;
    put_w(m, "layers", from(m, "num-layers"), layers);
    put_w(m, "hidden", from(m, "hidden-size"), *h);
    put_w(m, "heads", from(m, "num-attention-heads"), *heads);
    if (gqa && int_opt(m, "num-query-groups", 1, &groups))
        return -1;
    put_w(m, "kv_heads",
          gqa ? (opt(m, "num-query-groups") ? from(m, "num-query-groups")
                                            : "--group-query-attention without "
                                              "--num-query-groups: 1 group (A:1434)")
              : "no --group-query-attention: multi-head attention (A:1183-1186)",
          gqa ? groups : *heads);
    if (!opt(m, "kv-channels") && *h % *heads)
        return imp_error(m->im, opt(m, "num-attention-heads")->key,
                         "--num-attention-heads %lld does not divide --hidden-size %lld (Megatron "
                         "asserts it without --kv-channels: A:753-755)",
                         *heads, *h);
    if (int_opt(m, "kv-channels", *h / *heads, &kvc))
        return -1;
    put_w(m, "head_dim",
          opt(m, "kv-channels") ? from(m, "kv-channels") : "hidden / heads (A:753-755)", kvc);
    if (int_opt(m, "ffn-hidden-size", swiglu ? (4 * *h * 2 / 3) / 64 * 64 : 4 * *h, &f))
        return -1;
    put_w(m, "ffn_hidden",
          opt(m, "ffn-hidden-size") ? from(m, "ffn-hidden-size")
          : swiglu                  ? "int(4 hidden 2/3 / 64) * 64 with --swiglu (A:742-751)"
                                    : "4 hidden (A:742-751)",
          f);
    put_w(m, "max_seq", from(m, "max-position-embeddings"), pos);
    imp_put(m->im, "workload.activation", swiglu ? "swiglu" : "gelu",
            swiglu ? (on(m, "swiglu") ? from(m, "swiglu") : from(m, "activation"))
                   : "no --swiglu: GeLU (A:1497)");
    if (opt(m, "activation") && imp_is(opt(m, "activation")->val, "geglu"))
        imp_put(m->im, "workload.activation", "geglu", from(m, "activation"));
    return 0;
}

static int layer_kind(struct meg *m)
{
    struct meg_opt *pe = opt(m, "position-embedding-type"), *nm = opt(m, "normalization");
    const char *p = pe ? imp_str(pe->val) : on(m, "use-rotary-position-embeddings") ? "rope" : NULL;
    const char *n = nm ? imp_str(nm->val) : NULL;
    bool bias = !on(m, "disable-bias-linear"), tied = !on(m, "untie-embeddings-and-output-weights");
    double ad, hd;

    if (p && strcmp(p, "learned_absolute") != 0 && strcmp(p, "rope") != 0 && strcmp(p, "none") != 0)
        return imp_error(m->im, pe->val,
                         "position embedding '%s' is not modelled (learned, rope, "
                         "none)",
                         p);
    imp_put(m->im, "workload.position", !p || strcmp(p, "learned_absolute") == 0 ? "learned" : p,
            pe  ? from(m, "position-embedding-type")
            : p ? from(m, "use-rotary-position-embeddings")
                : "--position-embedding-type absent: learned_absolute (A:1439-1441)");
    if (n && strcmp(n, "LayerNorm") != 0 && strcmp(n, "RMSNorm") != 0 &&
        strcmp(n, "layernorm") != 0 && strcmp(n, "rmsnorm") != 0)
        return imp_error(m->im, nm->val, "normalization '%s' is not LayerNorm or RMSNorm", n);
    imp_put(m->im, "workload.norm", n && (n[0] == 'R' || n[0] == 'r') ? "rmsnorm" : "layernorm",
            nm ? from(m, "normalization") : "--normalization absent: LayerNorm (A:1479-1481)");
    if (opt(m, "bias") && opt(m, "bias")->val)
        bias = imp_is(opt(m, "bias")->val, "True") || imp_is(opt(m, "bias")->val, "true");
    imp_put(m->im, "workload.bias", bias ? "true" : "false",
            opt(m, "disable-bias-linear") ? from(m, "disable-bias-linear")
            : opt(m, "bias")              ? from(m, "bias")
                                          : "biases on unless --disable-bias-linear (A:1963-1965)");
    if (on(m, "add-qkv-bias") && !bias)
        imp_put(m->im, "workload.qkv_bias", "true", from(m, "add-qkv-bias"));
    if (opt(m, "share-embeddings-and-output-weights") &&
        opt(m, "share-embeddings-and-output-weights")->val)
        tied = !imp_is(opt(m, "share-embeddings-and-output-weights")->val, "False") &&
               !imp_is(opt(m, "share-embeddings-and-output-weights")->val, "false");
    imp_put(m->im, "workload.tied_embeddings", tied ? "true" : "false",
            opt(m, "untie-embeddings-and-output-weights")
                ? from(m, "untie-embeddings-and-output-weights")
                : "embeddings tied unless --untie-embeddings-and-output-weights (A:1505)");
    if (num_opt(m, "attention-dropout", 0.1, &ad) || num_opt(m, "hidden-dropout", 0.1, &hd))
        return -1;
    imp_put(m->im, "workload.dropout", ad > 0 || hd > 0 ? "true" : "false",
            imp_fmt(m->im, "attention %g, hidden %g (defaults 0.1: A:1714-1717)", ad, hd));
    if ((ad > 0) != (hd > 0))
        imp_note(m->im, FATE_APPROX,
                 opt(m, ad > 0 ? "attention-dropout" : "hidden-dropout")
                     ? opt(m, ad > 0 ? "attention-dropout" : "hidden-dropout")->key
                     : NULL,
                 "dropout at one site only: the workload's dropout covers both");
    if (on(m, "qk-layernorm"))
        imp_put(m->im, "workload.qk_norm", "true", from(m, "qk-layernorm"));
    return 0;
}

static int moe(struct meg *m, long long f)
{
    long long e, k, ef, freq, shared = 0;
    double cf;

    if (!opt(m, "num-experts"))
        return 0;
    if (int_opt(m, "num-experts", 0, &e) || int_opt(m, "moe-router-topk", 2, &k) ||
        int_opt(m, "moe-ffn-hidden-size", f, &ef) || int_opt(m, "moe-layer-freq", 1, &freq) ||
        num_opt(m, "moe-expert-capacity-factor", 0, &cf) ||
        int_opt(m, "moe-shared-expert-intermediate-size", 0, &shared))
        return -1;
    put_w(m, "moe.experts", from(m, "num-experts"), e);
    put_w(m, "moe.topk",
          opt(m, "moe-router-topk") ? from(m, "moe-router-topk")
                                    : "--moe-router-topk absent: 2 (A:2832)",
          k);
    put_w(m, "moe.ffn_hidden",
          opt(m, "moe-ffn-hidden-size") ? from(m, "moe-ffn-hidden-size")
                                        : "the FFN width (A:942-944)",
          ef);
    if (freq > 1) {
        put_w(m, "moe.layer_freq", from(m, "moe-layer-freq"), freq);
        imp_note(m->im, FATE_APPROX, opt(m, "moe-layer-freq")->key,
                 "--moe-layer-freq %lld: Megatron's MoE layers are i %% N == 0, simtrain's "
                 "(i+1) %% N == 0: the same count, another placement over pipeline stages",
                 freq);
    }
    if (shared > 0) {
        if (shared % ef)
            return imp_error(m->im, opt(m, "moe-shared-expert-intermediate-size")->val,
                             "the shared-expert width (%lld) is not a multiple of the expert "
                             "width (%lld)",
                             shared, ef);
        put_w(m, "moe.shared_experts", from(m, "moe-shared-expert-intermediate-size"), shared / ef);
    }
    if (cf > 0)
        imp_putf(m->im, "workload.moe.capacity_factor", from(m, "moe-expert-capacity-factor"), "%g",
                 cf);
    if (on(m, "moe-grouped-gemm") || opt(m, "moe-token-dispatcher-type"))
        imp_note(m->im, FATE_APPROX,
                 opt(m, "moe-grouped-gemm") ? opt(m, "moe-grouped-gemm")->key
                                            : opt(m, "moe-token-dispatcher-type")->key,
                 "the expert GEMM kernel and the token dispatcher are timed as batched GEMMs "
                 "and an all-to-all");
    return 0;
}

static int workload(struct meg *m, long long tp)
{
    long long h, heads;
    const char *base = strrchr(m->file->path, '/');

    if (m->im->rq->model_config)
        return imp_model_config(m->im, NULL, NULL);
    imp_put(m->im, "workload.name", imp_fmt(m->im, "\"%s\"", base ? base + 1 : m->file->path),
            "the arguments file");
    if (shape(m, &h, &heads) || layer_kind(m) || vocab(m, tp) ||
        moe(m, atoll(imp_get(m->im, "workload.ffn_hidden"))))
        return -1;
    m->im->model = (struct imp_model){
        .known = true, .type = "megatron", .hidden = (int)h, .heads = (int)heads
    };
    return 0;
}

/* ---- parallelism and training ------------------------------------------------------------ */

static int degrees(struct meg *m, long long *tp)
{
    long long pp, cp, ep, etp, vpp = 0, per = 0, first, last;

    if (int_opt(m, "tensor-model-parallel-size", 1, tp) ||
        int_opt(m, "pipeline-model-parallel-size", 1, &pp) ||
        int_opt(m, "context-parallel-size", 1, &cp) ||
        int_opt(m, "expert-model-parallel-size", 1, &ep) ||
        int_opt(m, "expert-tensor-parallel-size", *tp, &etp) ||
        int_opt(m, "num-virtual-stages-per-pipeline-rank", 0, &vpp) ||
        int_opt(m, "num-layers-per-virtual-pipeline-stage", 0, &per) ||
        int_opt(m, "decoder-first-pipeline-num-layers", 0, &first) ||
        int_opt(m, "decoder-last-pipeline-num-layers", 0, &last))
        return -1;
    if (etp != *tp)
        return imp_error(m->im, opt(m, "expert-tensor-parallel-size")->key,
                         "--expert-tensor-parallel-size %lld differs from tp %lld: not modelled",
                         etp, *tp);
    if (*tp > 1)
        imp_putf(m->im, "parallelism.tp", from(m, "tensor-model-parallel-size"), "%lld", *tp);
    if (pp > 1)
        imp_putf(m->im, "parallelism.pp", from(m, "pipeline-model-parallel-size"), "%lld", pp);
    if (cp > 1)
        imp_putf(m->im, "parallelism.cp", from(m, "context-parallel-size"), "%lld", cp);
    if (ep > 1)
        imp_putf(m->im, "parallelism.ep", from(m, "expert-model-parallel-size"), "%lld", ep);
    if (per > 0) {
        long long layers =
            atoll(imp_get(m->im, "workload.layers") ? imp_get(m->im, "workload.layers") : "0");
        if (!layers || layers % (pp * per))
            return imp_error(m->im, opt(m, "num-layers-per-virtual-pipeline-stage")->val,
                             "%lld layers per virtual stage do not divide the layers per "
                             "pipeline stage",
                             per);
        vpp = layers / pp / per;
    }
    if (vpp > 1)
        imp_putf(m->im, "parallelism.vpp",
                 per ? imp_fmt(m->im, "(layers / pp) / %s",
                               from(m, "num-layers-per-virtual-pipeline-stage"))
                     : from(m, "num-virtual-stages-per-pipeline-rank"),
                 "%lld", vpp);
    if (first)
        imp_putf(m->im, "parallelism.first_stage_layers",
                 from(m, "decoder-first-pipeline-num-layers"), "%lld", first);
    if (last)
        imp_putf(m->im, "parallelism.last_stage_layers",
                 from(m, "decoder-last-pipeline-num-layers"), "%lld", last);
    if (on(m, "sequence-parallel") && *tp > 1)
        imp_put(m->im, "parallelism.sequence_parallel", "true", from(m, "sequence-parallel"));
    if (on(m, "tp-comm-overlap"))
        imp_put(m->im, "parallelism.tp_comm_overlap", "true", from(m, "tp-comm-overlap"));
    if (opt(m, "cp-comm-type") && !imp_is(opt(m, "cp-comm-type")->val, "p2p"))
        imp_note(m->im, FATE_APPROX, opt(m, "cp-comm-type")->key,
                 "--cp-comm-type %s timed as the p2p ring", imp_str(opt(m, "cp-comm-type")->val));
    if (on(m, "account-for-embedding-in-pipeline-split") !=
        on(m, "account-for-loss-in-pipeline-split"))
        imp_note(m->im, FATE_APPROX, NULL,
                 "only one of --account-for-{embedding,loss}-in-pipeline-split: simtrain splits "
                 "layers + 2 only with both");
    imp_put(m->im, "parallelism.framework", "megatron", "Megatron-LM");
    return 0;
}

static int gpus(struct meg *m)
{
    long long dev = 0, nodes = 1;

    if (opt(m, "devices") && (int_opt(m, "devices", 0, &dev) || int_opt(m, "num-nodes", 1, &nodes)))
        return -1;
    if (dev > 0)
        return imp_cluster(m->im, (int)(dev * nodes), opt(m, "devices")->key,
                           "trainer.devices x trainer.num_nodes");
    return imp_cluster(m->im, m->launcher_gpus, m->launcher_at,
                       "torchrun --nproc_per_node x --nnodes");
}

static int precision(struct meg *m)
{
    struct meg_opt *np = opt(m, "precision");
    const char *p = on(m, "bf16") ? "bf16" : on(m, "fp16") ? "fp16" : "fp32", *why;
    bool fp32grad;

    why = on(m, "bf16")   ? from(m, "bf16")
          : on(m, "fp16") ? from(m, "fp16")
                          : "neither --bf16 nor --fp16: fp32 (A:642)";
    if (np) {
        const char *s = imp_str(np->val);
        p = s && strstr(s, "bf16") ? "bf16" : s && strstr(s, "16") ? "fp16" : "fp32";
        why = from(m, "precision");
    }
    if (opt(m, "fp8-format")) {
        if (!(m->im->hw->gpu.flops[DT_FP8] > 0))
            return imp_error(m->im, opt(m, "fp8-format")->key,
                             "fp8 training needs an fp8 peak, and '%s' has none", m->im->hw->name);
        p = "fp8";
        why = from(m, "fp8-format");
        imp_note(m->im, FATE_APPROX, opt(m, "fp8-format")->key,
                 "the fp8 recipe (--fp8-recipe, default delayed scaling) is not modelled: GEMMs "
                 "at the fp8 peak");
    }
    imp_put(m->im, "training.precision", p, why);
    imp_put(m->im, "training.master_weights", "true",
            "Megatron's optimizer keeps fp32 main parameters");
    fp32grad = strcmp(p, "fp32") == 0 || on(m, "accumulate-allreduce-grads-in-fp32") ||
               ((strcmp(p, "bf16") == 0 || strcmp(p, "fp8") == 0) && !on(m, "grad-reduce-in-bf16"));
    imp_put(m->im, "training.grad_dtype",
            fp32grad                 ? "fp32"
            : strcmp(p, "fp16") == 0 ? "fp16"
                                     : "bf16",
            fp32grad && strcmp(p, "bf16") == 0
                ? "--bf16 sets accumulate_allreduce_grads_in_fp32 (A:653-668)"
                : "main_grad in the parameter dtype unless accumulated in fp32");
    return 0;
}

static int batch(struct meg *m)
{
    long long seq, micro, global, iters;
    const char *sk = opt(m, "seq-length") ? "seq-length" : "encoder-seq-length";

    if (int_opt(m, sk, -1, &seq) || int_opt(m, "micro-batch-size", -1, &micro))
        return -1;
    imp_putf(m->im, "training.seq_len", from(m, sk), "%lld", seq);
    imp_putf(m->im, "training.micro_batch", from(m, "micro-batch-size"), "%lld", micro);
    if (opt(m, "global-batch-size")) {
        if (int_opt(m, "global-batch-size", 0, &global))
            return -1;
        imp_putf(m->im, "training.global_batch", from(m, "global-batch-size"), "%lld", global);
    } else {
        const char *tp = imp_get(m->im, "parallelism.tp"), *pp = imp_get(m->im, "parallelism.pp"),
                   *cp = imp_get(m->im, "parallelism.cp");
        long long dp =
            imp_gpus(m->im) / ((tp ? atoll(tp) : 1) * (pp ? atoll(pp) : 1) * (cp ? atoll(cp) : 1));
        global = micro * (dp > 0 ? dp : 1);
        imp_putf(m->im, "training.global_batch",
                 imp_fmt(m->im, "--global-batch-size absent: micro-batch (%s) x dp (A:457-462)",
                         from(m, "micro-batch-size")),
                 "%lld", global);
    }
    if (opt(m, "train-iters") && !int_opt(m, "train-iters", 0, &iters))
        imp_putf(m->im, "training.tokens",
                 imp_fmt(m->im, "%s x global batch x seq", from(m, "train-iters")), "%.0f",
                 (double)iters * (double)global * (double)seq);
    return 0;
}

static int recompute(struct meg *m)
{
    struct meg_opt *g = opt(m, "recompute-granularity"), *me = opt(m, "recompute-method");
    long long n = 0;
    const char *gran = g ? imp_str(g->val) : on(m, "recompute-activations") ? "selective" : NULL;

    if (!gran) {
        imp_put(m->im, "training.recompute", "none", "no --recompute-granularity");
        return 0;
    }
    if (strcmp(gran, "selective") == 0) {
        imp_put(m->im, "training.recompute", "selective",
                g ? from(m, "recompute-granularity") : from(m, "recompute-activations"));
        if (opt(m, "recompute-modules") && !imp_is(opt(m, "recompute-modules")->val, "core_attn"))
            imp_note(m->im, FATE_APPROX, opt(m, "recompute-modules")->key,
                     "--recompute-modules other than core_attn: timed as the attention core's "
                     "recompute");
        return 0;
    }
    if (strcmp(gran, "full") != 0)
        return imp_error(m->im, g->val, "--recompute-granularity '%s' is not full or selective",
                         gran);
    if (!me || int_opt(m, "recompute-num-layers", -1, &n))
        return imp_error(m->im, g->key,
                         "--recompute-granularity full needs --recompute-method "
                         "and --recompute-num-layers (TC:837-849)");
    imp_put(m->im, "training.recompute", "full", from(m, "recompute-granularity"));
    if (imp_is(me->val, "block"))
        imp_putf(m->im, "training.recompute_layers",
                 imp_fmt(m->im, "%s block: %s", from(m, "recompute-method"),
                         from(m, "recompute-num-layers")),
                 "%lld", n);
    else if (n > 1)
        imp_note(m->im, FATE_APPROX, me->key,
                 "--recompute-method uniform with --recompute-num-layers %lld checkpoints "
                 "chunks of layers: timed as every layer checkpointed",
                 n);
    return 0;
}

static int rest(struct meg *m)
{
    struct meg_opt *ab = opt(m, "attention-backend"), *o = opt(m, "optimizer");
    long long bucket;
    bool unfused = ab && imp_is(ab->val, "unfused");

    imp_put(m->im, "training.attention", unfused ? "standard" : "flash",
            ab                        ? from(m, "attention-backend")
            : on(m, "use-flash-attn") ? from(m, "use-flash-attn")
                                      : "--attention-backend absent: auto, Transformer "
                                        "Engine's flash or fused attention (A:1426)");
    imp_put(m->im, "training.model_code", "megatron",
            opt(m, "transformer-impl") ? from(m, "transformer-impl")
                                       : "--transformer-impl absent: transformer_engine (A:1245)");
    if (o && !imp_is(o->val, "adam") && !imp_is(o->val, "sgd"))
        return imp_error(m->im, o->val, "--optimizer '%s' is not modelled (adam, sgd)",
                         imp_str(o->val) ? imp_str(o->val) : "");
    imp_put(m->im, "training.optimizer", o && imp_is(o->val, "sgd") ? "sgd" : "adamw",
            o ? from(m, "optimizer") : "--optimizer absent: adam, decoupled weight decay (A:1969)");
    if (on(m, "use-torch-fsdp2"))
        imp_put(m->im, "parallelism.sharding", "fsdp", from(m, "use-torch-fsdp2"));
    else
        imp_put(m->im, "parallelism.sharding",
                on(m, "use-distributed-optimizer") ? "zero1" : "none",
                on(m, "use-distributed-optimizer") ? from(m, "use-distributed-optimizer")
                                                   : "no --use-distributed-optimizer");
    if (on(m, "optimizer-cpu-offload"))
        imp_put(m->im, "training.offload", "optimizer", from(m, "optimizer-cpu-offload"));
    imp_put(m->im, "ddp.overlap", on(m, "overlap-grad-reduce") ? "true" : "false",
            opt(m, "overlap-grad-reduce") ? from(m, "overlap-grad-reduce")
                                          : "--overlap-grad-reduce absent: false (A:2359)");
    if (opt(m, "ddp-bucket-size")) {
        const char *g = imp_get(m->im, "training.grad_dtype");
        if (int_opt(m, "ddp-bucket-size", 0, &bucket))
            return -1;
        imp_putf(m->im, "ddp.bucket_size",
                 imp_fmt(m->im, "%s elements x %d B", from(m, "ddp-bucket-size"),
                         g && strcmp(g, "fp32") == 0 ? 4 : 2),
                 "%lld B", bucket * (g && strcmp(g, "fp32") == 0 ? 4 : 2));
    }
    if (on(m, "overlap-param-gather"))
        imp_note(m->im, FATE_APPROX, opt(m, "overlap-param-gather")->key,
                 "--overlap-param-gather: the distributed optimizer's all-gather is timed after "
                 "the step, not overlapped with the next forward");
    if (on(m, "no-gradient-accumulation-fusion"))
        imp_put(m->im, "ddp.grad_accum_fusion", "false",
                from(m, "no-gradient-accumulation-fusion"));
    if (on(m, "cross-entropy-loss-fusion"))
        imp_put(m->im, "training.cross_entropy", "fused", from(m, "cross-entropy-loss-fusion"));
    if (opt(m, "fp8-recipe") || on(m, "fp8-param-gather"))
        imp_note(m->im, FATE_APPROX,
                 opt(m, "fp8-recipe") ? opt(m, "fp8-recipe")->key : opt(m, "fp8-param-gather")->key,
                 "fp8 recipe details are not modelled");
    return 0;
}

int imp_megatron(struct imp *im)
{
    struct meg m = { .im = im };
    struct meg_args a;
    long long tp;

    int rc;

    m.file = imp_read_text(im, im->rq->files[0], "Megatron-LM arguments");
    memset(&a, 0, sizeof(a));
    rc = !m.file || meg_words(im, m.file, &a) || meg_read_flags(&m, &a) || refusals(&m) ||
                 int_opt(&m, "tensor-model-parallel-size", 1, &tp) || workload(&m, tp) ||
                 gpus(&m) || degrees(&m, &tp) || precision(&m) || batch(&m) || recompute(&m) ||
                 rest(&m)
             ? -1
             : 0;
    free(a.w);
    if (rc == 0)
        imp_put_framework(im, "megatron", "Megatron-LM");
    return rc || im->errors ? -1 : 0;
}
