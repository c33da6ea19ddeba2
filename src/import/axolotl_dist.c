/*
 * axolotl_dist.c - the distributed part of an Axolotl import: tensor, context and expert
 * parallelism and HSDP from the parallel sizes, then DDP, FSDP (fsdp, fsdp_config) or
 * DeepSpeed (deepspeed:, followed), and the kernels and plugins; also the refusals up front
 * and the table of every other Axolotl key with what becomes of it.
 *
 * Axolotl picks FSDP when fsdp or fsdp_config is present, else DeepSpeed when deepspeed is
 * set, else DDP on more than one GPU (utils/trainer.py:658-690). Its FSDPConfig keeps only its
 * own fields (utils/schemas/fsdp.py:10-82, the fsdp_ prefix stripped first,
 * validation.py:1084-1103): sharding_strategy, limit_all_gathers, backward_prefetch and
 * forward_prefetch are dropped, so every FSDP1 run has transformers' backward_prefetch
 * NO_PREFETCH; an fsdp_config without a version is FSDP1 (validation.py:1106-1124); FSDP2's
 * reshard_after_forward defaults to false in transformers 5.x (training_args.py:2750-2754).
 */
#include <stdlib.h>
#include <string.h>

#include "import/axolotl_internal.h"

/* ---- refusals --------------------------------------------------------------------------- */

static bool truthy(const struct yt_node *v)
{
    if (imp_null(v))
        return false;
    if (v->kind != YT_SCALAR)
        return v->count > 0;
    return !imp_is(v, "false") && !imp_is(v, "False") && !imp_is(v, "FALSE") && !imp_is(v, "0") &&
           !imp_is(v, "no");
}

int ax_refusals(struct ax *a)
{
    static const char *const refuse[][2] = {
        { "reward_model", "a reward model (a sequence-classification head, chosen and rejected "
                          "sequences per sample: TRL DataCollatorForPreference) is not modelled" },
        { "layer_offloading", "layer_offloading (parameters to the CPU between uses) is not "
                              "modelled" },
        { "selective_checkpointing", "selective_checkpointing of listed ops is not modelled" },
        { "relora", "ReLoRA is not modelled" },
        { "rl", "preference / RL training (rl) is not modelled" },
    };
    int before = a->im->errors;

    for (size_t i = 0; i < a->root->count; i++) {
        const struct yt_node *k = a->root->pairs[i].key, *v = a->root->pairs[i].value;
        for (size_t j = 0; j < ARRAY_LEN(refuse); j++)
            if (strcmp(k->text, refuse[j][0]) == 0 && truthy(v)) {
                ax_val(a, refuse[j][0]);
                imp_error(a->im, k, "%s", refuse[j][1]);
            }
        if (strcmp(k->text, "model_type") == 0 && imp_is(v, "AutoModelForSequenceClassification"))
            imp_error(a->im, v,
                      "AutoModelForSequenceClassification: a sequence-classification "
                      "head is not modelled");
    }
    if (truthy(ax_val(a, "unfrozen_parameters")) && truthy(ax_val(a, "adapter")))
        imp_error(a->im, ax_key(a, "unfrozen_parameters"),
                  "unfrozen_parameters with an adapter (listed base parameters training beside "
                  "the adapters) is not modelled");
    if (ax_val(a, "deepspeed") && (ax_val(a, "fsdp") || ax_val(a, "fsdp_config")))
        imp_error(a->im, ax_key(a, "deepspeed"),
                  "deepspeed together with fsdp (Axolotl refuses both: "
                  "utils/schemas/validation.py:1226-1228)");
    return a->im->errors > before ? -1 : 0;
}

/* ---- parallel degrees ------------------------------------------------------------------- */

static int size_key(struct ax *a, const char *key, int *out)
{
    const struct yt_node *v = ax_val(a, key);
    long long n = 1;

    *out = 1;
    if (v && imp_int(a->im, v, 1, 1 << 20, &n))
        return -1;
    *out = (int)n;
    return 0;
}

/* The GPU count: --gpus, or Ray's workers. */
static int gpus(struct ax *a)
{
    bool ray;
    long long w = 1;
    const struct yt_node *rw;

    if (ax_bool(a, "use_ray", &ray))
        return -1;
    rw = ax_val(a, "ray_num_workers");
    if (ray && rw && imp_int(a->im, rw, 1, 1 << 20, &w))
        return -1;
    if (ray)
        return imp_cluster(a->im, (int)w, ax_key(a, "ray_num_workers"),
                           "ray_num_workers (one GPU each)");
    return imp_cluster(a->im, 0, NULL, NULL);
}

static int hsdp(struct ax *a, int shard, int replicate)
{
    int gpn = a->im->hw->gpus_per_node, per_node = gpn / (a->tp * a->cp);

    if (replicate <= 1)
        return 0;
    if (shard <= 1)
        return imp_error(a->im, ax_key(a, "dp_replicate_size"),
                         "dp_replicate_size without dp_shard_size is plain DDP over FSDP: not "
                         "modelled");
    if (shard != per_node || a->gpus <= gpn)
        return imp_error(a->im, ax_key(a, "dp_shard_size"),
                         "HSDP with a shard group of %d: simtrain's hsdp shards over the "
                         "data-parallel peers of one node (%d on '%s') across more than one node",
                         shard, per_node, a->im->hw->name);
    imp_put(a->im, "parallelism.sharding", "hsdp",
            imp_fmt(a->im,
                    "%s x %s: HSDP, shards within a node (accelerate "
                    "parallelism_config.py:61-66)",
                    ax_from(a, "dp_replicate_size"), ax_from(a, "dp_shard_size")));
    return 0;
}

int ax_parallel(struct ax *a)
{
    int shard, replicate, world;

    if (gpus(a) || size_key(a, "tensor_parallel_size", &a->tp) ||
        size_key(a, "context_parallel_size", &a->cp) || size_key(a, "dp_shard_size", &shard) ||
        size_key(a, "dp_replicate_size", &replicate))
        return -1;
    if (a->cp == 1 && ax_val(a, "sequence_parallel_degree") &&
        size_key(a, "sequence_parallel_degree", &a->cp))
        return -1;
    a->gpus = imp_gpus(a->im);
    world = a->gpus;
    if (world % (a->tp * a->cp))
        return imp_error(a->im,
                         ax_key(a, a->tp > 1 ? "tensor_parallel_size" : "context_parallel_size"),
                         "tensor_parallel_size x context_parallel_size (%d) does not divide the "
                         "%d GPUs",
                         a->tp * a->cp, world);
    a->dp = world / (a->tp * a->cp);
    if ((shard > 1 || replicate > 1) && shard * replicate != a->dp)
        return imp_error(a->im, ax_key(a, shard > 1 ? "dp_shard_size" : "dp_replicate_size"),
                         "dp_shard_size x dp_replicate_size x tensor_parallel_size x "
                         "context_parallel_size = %d, not the %d GPUs (accelerate refuses it: "
                         "parallelism_config.py:372-377)",
                         shard * replicate * a->tp * a->cp, world);
    if (a->tp > 1) {
        imp_putf(a->im, "parallelism.tp", ax_from(a, "tensor_parallel_size"), "%d", a->tp);
        imp_note(a->im, FATE_APPROX, ax_key(a, "tensor_parallel_size"),
                 "tensor_parallel_size: transformers' DTensor TP plan (colwise q/k/v/gate/up, "
                 "rowwise o/down, no sequence parallelism) timed as Megatron-style TP");
    }
    if (a->cp > 1) {
        imp_putf(a->im, "parallelism.cp",
                 ax_from(a, ax_val(a, "context_parallel_size") ? "context_parallel_size"
                                                               : "sequence_parallel_degree"),
                 "%d", a->cp);
        imp_note(a->im, FATE_APPROX,
                 ax_key(a, ax_val(a, "context_parallel_size") ? "context_parallel_size"
                                                              : "sequence_parallel_degree"),
                 "context parallelism: ring-flash-attn's varlen_llama3 (an all-gather of K/V, "
                 "utils/schemas/validation.py:1733-1754) timed as a point-to-point ring");
    }
    imp_putf(a->im, "parallelism.dp",
             imp_fmt(a->im, "= %d GPUs / (tp %d x cp %d) (utils/config/__init__.py:222-230)", world,
                     a->tp, a->cp),
             "%d", a->dp);
    return hsdp(a, shard, replicate);
}

/* ---- FSDP --------------------------------------------------------------------------------- */

/* The fields Axolotl's FSDPConfig keeps (utils/schemas/fsdp.py:10-82), after the prefix. */
static const char *const fsdp_fields[] = {
    "fsdp_version",
    "version",
    "activation_checkpointing",
    "offload_params",
    "sync_module_states",
    "cpu_ram_efficient_loading",
    "cpu_offload_pin_memory",
    "use_orig_params",
    "state_dict_type",
    "final_state_dict_type",
    "auto_wrap_policy",
    "transformer_layer_cls_to_wrap",
    "min_num_params",
    "reshard_after_forward",
    "mixed_precision_policy",
};

/* fsdp_config's value for bare field `field` (its key spelled with or without fsdp_). */
static const struct yt_node *fsdp_get(const struct yt_node *cfg, const char *field,
                                      const struct yt_node **kn)
{
    char pre[64];
    const struct yt_node *v;

    *kn = NULL;
    if (!cfg)
        return NULL;
    snprintf(pre, sizeof(pre), "fsdp_%s", field);
    v = imp_get_key(cfg, field, kn);
    if (!*kn)
        v = imp_get_key(cfg, pre, kn);
    return imp_null(v) ? NULL : v;
}

static void fsdp_dropped(struct ax *a, const struct yt_node *cfg)
{
    for (size_t i = 0; cfg && i < cfg->count; i++) {
        const char *k = cfg->pairs[i].key->text, *bare = k;
        bool kept = false;
        if (strncmp(k, "fsdp_", 5) == 0 && strcmp(k, "fsdp_version") != 0)
            bare = k + 5;
        for (size_t j = 0; j < ARRAY_LEN(fsdp_fields) && !kept; j++)
            kept = strcmp(bare, fsdp_fields[j]) == 0;
        if (!kept)
            imp_note(a->im, FATE_IGNORED, cfg->pairs[i].key,
                     "fsdp_config.%s: dropped by Axolotl's FSDPConfig (utils/schemas/fsdp.py), "
                     "so it has no effect",
                     k);
        else if (strcmp(bare, "sync_module_states") == 0 ||
                 strcmp(bare, "cpu_ram_efficient_loading") == 0 ||
                 strcmp(bare, "state_dict_type") == 0 ||
                 strcmp(bare, "final_state_dict_type") == 0 ||
                 strcmp(bare, "use_orig_params") == 0 ||
                 strcmp(bare, "cpu_offload_pin_memory") == 0)
            imp_note(a->im, FATE_IGNORED, cfg->pairs[i].key,
                     "fsdp_config.%s: loading and saving (no step cost)", k);
    }
}

/* The strategy words of the fsdp list (TrainingArguments.fsdp). */
static int fsdp_list(struct ax *a, const char **sharding, bool *offload)
{
    const struct yt_node *l = ax_val(a, "fsdp");

    *sharding = "fsdp";
    *offload = false;
    for (size_t i = 0; l && l->kind == YT_SEQ && i < l->count; i++) {
        const char *w = imp_str(l->items[i]);
        if (!w)
            continue;
        if (strcmp(w, "full_shard") == 0)
            *sharding = "fsdp";
        else if (strcmp(w, "shard_grad_op") == 0)
            *sharding = "fsdp_grad_op";
        else if (strcmp(w, "hybrid_shard") == 0)
            *sharding = "hsdp";
        else if (strcmp(w, "no_shard") == 0)
            *sharding = "fsdp_no_shard";
        else if (strcmp(w, "offload") == 0)
            *offload = true;
        else if (strcmp(w, "auto_wrap") != 0)
            return imp_error(a->im, l->items[i],
                             "fsdp option '%s' is not one transformers "
                             "knows (full_shard, shard_grad_op, "
                             "hybrid_shard, no_shard, offload, auto_wrap)",
                             w);
    }
    return 0;
}

static int fsdp_wrap(struct ax *a, const struct yt_node *cfg)
{
    const struct yt_node *kn, *cls = fsdp_get(cfg, "transformer_layer_cls_to_wrap", &kn),
                              *pol = fsdp_get(cfg, "auto_wrap_policy", &kn);
    const struct yt_node *ck;

    fsdp_get(cfg, "transformer_layer_cls_to_wrap", &ck);
    if (imp_str(cls) && imp_check_wrap(a->im, ck, "transformer_layer_cls_to_wrap", imp_str(cls)))
        return -1;
    if (imp_is(pol, "SIZE_BASED_WRAP"))
        imp_note(a->im, FATE_APPROX, kn,
                 "auto_wrap_policy SIZE_BASED_WRAP: its units are timed as one per decoder "
                 "layer");
    return 0;
}

static int fsdp(struct ax *a)
{
    const struct yt_node *cfg = ax_val(a, "fsdp_config"), *kn, *v;
    const struct yt_node *top_v = ax_val(a, "fsdp_version");
    const char *sharding, *hsdp_set = imp_get(a->im, "parallelism.sharding");
    long long version = 1;
    bool offload, ac = false, reshard = false;

    a->fsdp = true;
    if (cfg && cfg->kind != YT_MAP)
        return imp_error(a->im, cfg, "fsdp_config must be a mapping, not %s", yt_describe(cfg));
    if (fsdp_list(a, &sharding, &offload) || fsdp_wrap(a, cfg))
        return -1;
    v = top_v ? top_v : fsdp_get(cfg, "fsdp_version", &kn);
    if (!v)
        v = fsdp_get(cfg, "version", &kn);
    if (v && imp_int(a->im, v, 1, 2, &version))
        return -1;
    imp_putf(
        a->im, "fsdp.version",
        v ? imp_fmt(a->im, "%s fsdp_version", imp_at(a->im, top_v ? ax_key(a, "fsdp_version") : kn))
          : "fsdp_config without a version: FSDP1 (utils/schemas/validation.py:1106-1124)",
        "%lld", version);
    if (!hsdp_set)
        imp_put(a->im, "parallelism.sharding", sharding,
                ax_val(a, "fsdp") ? ax_from(a, "fsdp")
                                  : "fsdp_config alone: fsdp=True, full_shard (transformers "
                                    "training_args.py:2650-2655)");
    imp_put(a->im, "parallelism.framework", "pytorch", "PyTorch FSDP through accelerate");
    if ((v = fsdp_get(cfg, "offload_params", &kn)) && imp_bool(a->im, v, &offload))
        return -1;
    if (offload)
        imp_put(a->im, "training.offload", "params",
                kn ? imp_fmt(a->im, "%s fsdp_config.offload_params: CPUOffload(offload_params)",
                             imp_at(a->im, kn))
                   : "fsdp: offload");
    if ((v = fsdp_get(cfg, "activation_checkpointing", &kn)) && imp_bool(a->im, v, &ac))
        return -1;
    if (ac)
        imp_put(a->im, "training.recompute", "full",
                imp_fmt(a->im, "%s fsdp_config.activation_checkpointing", imp_at(a->im, kn)));
    v = fsdp_get(cfg, "reshard_after_forward", &kn);
    if (version == 2) {
        if (v && imp_bool(a->im, v, &reshard))
            return -1;
        imp_put(a->im, "fsdp.reshard_after_forward", reshard ? "true" : "false",
                v ? imp_fmt(a->im, "%s fsdp_config.reshard_after_forward", imp_at(a->im, kn))
                  : "FSDP2 without reshard_after_forward: false in transformers 5.x "
                    "(training_args.py:2750-2754)");
        if (a->optimizer && strcmp(a->optimizer, "adam8bit") == 0 && a->optimizer_at)
            return imp_error(a->im, a->optimizer_at,
                             "bitsandbytes 8-bit AdamW with FSDP2 (Axolotl refuses it: "
                             "utils/schemas/validation.py:1139-1153)");
    } else {
        if (v)
            imp_note(a->im, FATE_IGNORED, kn,
                     "fsdp_config.reshard_after_forward: FSDP1 takes the strategy from the fsdp "
                     "list (accelerate accelerator.py:1937-1940)");
        imp_put(a->im, "fsdp.backward_prefetch", "none",
                "Axolotl drops backward_prefetch, transformers then passes NO_PREFETCH "
                "(training_args.py:2028-2029)");
    }
    fsdp_dropped(a, cfg);
    return 0;
}

/* ---- DeepSpeed ------------------------------------------------------------------------------ */

static int deepspeed(struct ax *a)
{
    const struct yt_node *v = ax_val(a, "deepspeed");
    const struct imp_file *f;
    struct ds_trainer tr = { "Axolotl",
                             true,
                             a->micro,
                             a->gas,
                             strcmp(a->precision, "fp8") == 0 ? "bf16" : a->precision,
                             a->optimizer,
                             a->optimizer_at,
                             true };
    const char *tried, *path;
    bool cwd;

    a->deepspeed = true;
    if (v->kind == YT_MAP) {
        struct imp_file *inl = arena_alloc(&a->im->a, sizeof(*inl));
        struct yt_doc *doc = arena_alloc(&a->im->a, sizeof(*doc));
        doc->src = a->f->doc->src;
        doc->root = yt_map_find(a->root, "deepspeed")->value;
        *inl = (struct imp_file){ a->f->path, "DeepSpeed config (inline)", doc };
        return imp_deepspeed(a->im, inl, &tr);
    }
    if (!imp_str(v))
        return imp_error(a->im, v, "deepspeed: expected a path or a mapping");
    path = imp_resolve_path(a->im, imp_str(v), a->f, &tried, &cwd);
    if (!path)
        return imp_error(a->im, v,
                         "DeepSpeed config '%s' not found: Axolotl opens it relative to the "
                         "working directory (utils/config/__init__.py:236-240; run from where "
                         "its deepspeed_configs/ is, as Axolotl's examples are); tried %s",
                         imp_str(v), tried);
    imp_note(a->im, FATE_NOTE, v,
             cwd ? "deepspeed: '%s' read relative to the working directory, as Axolotl opens it"
                 : "deepspeed: '%s' read beside the YAML; Axolotl itself opens it relative to the "
                   "working directory only (utils/config/__init__.py:236-240)",
             path);
    f = imp_read(a->im, path, "DeepSpeed config, Axolotl deepspeed:", true);
    return f ? imp_deepspeed(a->im, f, &tr) : -1;
}

int ax_distributed(struct ax *a)
{
    ax_val(a, "ddp");
    if (ax_val(a, "fsdp") || ax_val(a, "fsdp_config"))
        return fsdp(a);
    if (ax_val(a, "deepspeed"))
        return deepspeed(a);
    if (!imp_get(a->im, "parallelism.sharding"))
        imp_put(a->im, "parallelism.sharding", "none",
                a->dp > 1 ? "no fsdp or deepspeed: DDP (utils/config/__init__.py:221)"
                          : "one data-parallel rank: no wrapper");
    imp_put(a->im, "parallelism.framework", "pytorch", "the HF Trainer on PyTorch DDP");
    return 0;
}

/* ---- kernels and plugins ------------------------------------------------------------------ */

static bool has_plugin(struct ax *a, const char *name)
{
    const struct yt_node *p = imp_get_key(a->root, "plugins", NULL);

    for (size_t i = 0; p && p->kind == YT_SEQ && i < p->count; i++)
        if (imp_str(p->items[i]) && strstr(imp_str(p->items[i]), name))
            return true;
    return false;
}

static const char *const liger_keys[] = {
    "liger_rope",
    "liger_rms_norm",
    "liger_glu_activation",
    "liger_swiglu",
    "liger_layer_norm",
    "liger_cross_entropy",
    "liger_fused_linear_cross_entropy",
};

static int plugins(struct ax *a)
{
    const struct yt_node *p = ax_val(a, "plugins");
    bool liger = has_plugin(a, "LigerPlugin"), cce = has_plugin(a, "CutCrossEntropyPlugin");
    bool flce = false;

    for (size_t i = 0; p && p->kind == YT_SEQ && i < p->count; i++) {
        const char *n = imp_str(p->items[i]);
        if (n && (strstr(n, "LigerPlugin") || strstr(n, "CutCrossEntropyPlugin") ||
                  strstr(n, "ExpertParallelPlugin")))
            continue;
        imp_note(a->im, FATE_DROPPED, p->items[i], "plugin '%s' is not modelled", n ? n : "");
    }
    for (size_t i = 0; i < ARRAY_LEN(liger_keys); i++) {
        bool on;
        if (ax_bool(a, liger_keys[i], &on))
            return -1;
        if (on && !liger)
            imp_note(a->im, FATE_IGNORED, ax_key(a, liger_keys[i]),
                     "%s: a LigerPlugin key, dropped without the plugin", liger_keys[i]);
        else if (on && strstr(liger_keys[i], "fused_linear_cross_entropy"))
            flce = true;
        else if (on)
            imp_note(a->im, FATE_APPROX, ax_key(a, liger_keys[i]),
                     "%s: Liger's fused Triton kernel (fewer passes and saved tensors) timed as "
                     "transformers' module",
                     liger_keys[i]);
    }
    if (cce || flce) {
        imp_put(a->im, "training.cross_entropy", "fused",
                imp_fmt(a->im, "%s (approximated)",
                        cce ? imp_fmt(a->im, "%s CutCrossEntropyPlugin",
                                      imp_at(a->im, ax_key(a, "plugins")))
                            : ax_from(a, "liger_fused_linear_cross_entropy")));
        imp_note(a->im, FATE_APPROX,
                 cce ? ax_key(a, "plugins") : ax_key(a, "liger_fused_linear_cross_entropy"),
                 "%s computes the loss chunk by chunk without the tokens x vocab logits; timed "
                 "as a fused cross-entropy over 16-bit logits, which keeps them",
                 cce ? "Cut Cross-Entropy" : "Liger's fused linear cross-entropy");
    }
    return 0;
}

static int expert_parallel(struct ax *a)
{
    const struct yt_node *v = ax_val(a, "expert_parallel_size");
    long long ep;

    if (!v)
        return 0;
    if (!has_plugin(a, "ExpertParallelPlugin")) {
        imp_note(a->im, FATE_IGNORED, ax_key(a, "expert_parallel_size"),
                 "expert_parallel_size: an ExpertParallelPlugin key, dropped without the plugin");
        return 0;
    }
    if (imp_int(a->im, v, 1, 1 << 20, &ep))
        return -1;
    if (ep > 1)
        imp_putf(a->im, "parallelism.ep",
                 imp_fmt(a->im,
                         "%s (ExpertParallelPlugin; each EP rank takes its own batch, "
                         "inside dp here)",
                         ax_from(a, "expert_parallel_size")),
                 "%lld", ep);
    if (ax_val(a, "expert_parallel_backend"))
        imp_note(a->im, FATE_APPROX, ax_key(a, "expert_parallel_backend"),
                 "expert_parallel_backend: the dispatch is timed as NCCL all-to-all");
    return 0;
}

/* Keys that matter when set: refused or dropped with their reason. */
static int feature_keys(struct ax *a)
{
    static const char *const dropped[][2] = {
        { "torch_compile", "torch.compile (Inductor fusion) is not modelled" },
        { "tiled_mlp", "ALST's tiled MLP (the MLP over sequence shards, recomputed) is not "
                       "modelled" },
        { "flash_attn_fuse_mlp", "flash-attn's fused SwiGLU MLP is not modelled" },
        { "experts_implementation", "the expert GEMM implementation (grouped_mm) is not "
                                    "modelled" },
        { "use_kernels", "hub kernels (MegaBlocks experts) are not modelled" },
        { "fp8_enable_fsdp_float8_all_gather", "FSDP2's fp8 all-gather (half the gathered "
                                               "bytes) is not modelled" },
        { "resize_token_embeddings_to_32x", "the embedding rounded up to a multiple of 32 "
                                            "tokens is not counted" },
        { "tokens", "added tokens grow the embedding; not counted" },
        { "flex_attn_compile_kwargs", "torch.compile of flex attention is not modelled" },
    };
    bool on;

    for (size_t i = 0; i < ARRAY_LEN(dropped); i++) {
        const struct yt_node *v = ax_val(a, dropped[i][0]);
        if (!truthy(v))
            continue;
        imp_note(a->im, FATE_DROPPED, ax_key(a, dropped[i][0]), "%s: %s", dropped[i][0],
                 dropped[i][1]);
    }
    if (ax_bool(a, "flash_attn_cross_entropy", &on))
        return -1;
    if (on)
        imp_put(a->im, "training.cross_entropy", "fused",
                imp_fmt(a->im, "%s: flash_attn's fused cross-entropy",
                        ax_from(a, "flash_attn_cross_entropy")));
    return 0;
}

static int quantized_checkpoint(struct ax *a)
{
    const struct yt_node *q = ax_val(a, "model_quantization_config"),
                         *kw = ax_val(a, "model_quantization_config_kwargs"), *dq = NULL;
    bool deq = false;

    if (!q)
        return 0;
    if (kw && kw->kind == YT_MAP)
        dq = imp_get_key(kw, "dequantize", NULL);
    if (dq && imp_bool(a->im, dq, &deq))
        return -1;
    if (!imp_is(q, "Mxfp4Config") || !deq)
        return imp_error(a->im, q,
                         "training on a quantized checkpoint (%s) is not modelled; "
                         "with Mxfp4Config and dequantize: true it trains bf16",
                         imp_str(q) ? imp_str(q) : "");
    imp_note(a->im, FATE_NOTE, ax_key(a, "model_quantization_config"),
             "model_quantization_config Mxfp4Config with dequantize: the MXFP4 checkpoint is "
             "dequantized at load and trained in the training dtype");
    return 0;
}

int ax_kernels(struct ax *a)
{
    return plugins(a) || expert_parallel(a) || feature_keys(a) || quantized_checkpoint(a) ? -1 : 0;
}

/* ---- every other key ----------------------------------------------------------------------- */

/* Axolotl keys with no effect on step memory or time (data, schedule, logging, saving, eval). */
static const char *const free_keys[][2] = {
    { "tokenizer_type", "loading" },
    { "tokenizer_config", "loading" },
    { "model_type", "loading (the class)" },
    { "trust_remote_code", "loading" },
    { "datasets", "data" },
    { "pretraining_dataset", "data" },
    { "dataset_prepared_path", "data" },
    { "val_set_size", "evaluation data" },
    { "test_datasets", "evaluation data" },
    { "chat_template", "data" },
    { "train_on_inputs", "the loss mask" },
    { "group_by_length", "batch order" },
    { "min_sample_len", "data filtering" },
    { "special_tokens", "tokenizer" },
    { "eot_tokens", "tokenizer" },
    { "output_dir", "saving" },
    { "hub_model_id", "saving" },
    { "resume_from_checkpoint", "loading" },
    { "lora_model_dir", "loading adapters" },
    { "saves_per_epoch", "saving" },
    { "save_steps", "saving" },
    { "save_total_limit", "saving" },
    { "save_only_model", "saving" },
    { "save_strategy", "saving" },
    { "num_epochs", "run length" },
    { "learning_rate", "schedule" },
    { "lr_scheduler", "schedule" },
    { "warmup_ratio", "schedule" },
    { "warmup_steps", "schedule" },
    { "cosine_min_lr_ratio", "schedule" },
    { "cosine_constant_lr_ratio", "schedule" },
    { "weight_decay", "optimizer numerics" },
    { "adam_beta1", "optimizer numerics" },
    { "adam_beta2", "optimizer numerics" },
    { "adam_epsilon", "optimizer numerics" },
    { "max_grad_norm", "a norm pass, inside the "
                       "optimizer time" },
    { "seed", "randomness" },
    { "logging_steps", "logging" },
    { "wandb_project", "logging" },
    { "wandb_entity", "logging" },
    { "wandb_watch", "logging" },
    { "wandb_name", "logging" },
    { "wandb_log_model", "logging" },
    { "trackio_project_name", "logging" },
    { "trackio_run_name", "logging" },
    { "trackio_space_id", "logging" },
    { "evals_per_epoch", "evaluation" },
    { "eval_steps", "evaluation" },
    { "eval_batch_size", "evaluation" },
    { "eval_sample_packing", "evaluation" },
    { "eval_table_size", "evaluation" },
    { "eval_max_new_tokens", "evaluation" },
    { "eval_causal_lm_metrics", "evaluation" },
    { "do_causal_lm_eval", "evaluation" },
    { "early_stopping_patience", "stopping rule" },
    { "loss_watchdog_threshold", "stopping "
                                 "rule" },
    { "loss_watchdog_patience", "stopping rule" },
    { "debug", "logging" },
    { "strict", "Axolotl's own config check" },
    { "model_config", "router loss options" },
    { "reinit_weights", "initialisation (same cost)" },
    { "experimental_skip_move_to_device", "loading" },
    { "ddp_find_unused_parameters", "a graph walk on the CPU per step" },
    { "center_rewards_coefficient", "reward models (refused)" },
    { "num_labels", "classification heads (refused)" },
    { "peft_use_rslora", "the adapters' scaling" },
    { "lora_fan_in_fan_out", "a layout flag" },
    { "expert_parallel_backend", "read with expert_parallel_size" },
};

void ax_list_unread(struct ax *a)
{
    for (size_t i = 0; i < a->root->count; i++) {
        const struct yt_node *k = a->root->pairs[i].key, *v = a->root->pairs[i].value;
        const char *why = NULL;
        bool read = false;

        for (int u = 0; u < a->nused && !read; u++)
            read = strcmp(a->used[u], k->text) == 0;
        if (read)
            continue;
        for (size_t j = 0; j < ARRAY_LEN(free_keys) && !why; j++)
            if (strcmp(free_keys[j][0], k->text) == 0)
                why = free_keys[j][1];
        if (why)
            imp_note(a->im, FATE_IGNORED, k, "%s: %s", k->text, why);
        else if (imp_null(v))
            imp_note(a->im, FATE_IGNORED, k, "%s: null, as absent", k->text);
        else
            imp_note(a->im, FATE_DROPPED, k, "%s: not a key simtrain's Axolotl reader knows",
                     k->text);
    }
}
