/*
 * deepspeed.c - a DeepSpeed config JSON (DeepSpeed v0.18.9 runtime/zero/config.py and
 * runtime/config.py) to simtrain's ZeRO stage, offload and bucket keys, the precision and the
 * batch (docs/import.md, "deepspeed").
 *
 * "auto" is not a DeepSpeed value: the HF Trainer or accelerate replaces it before DeepSpeed
 * sees the dict (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig): the batch
 * keys and the precision from the trainer (Axolotl's YAML under `simtrain import axolotl`),
 * reduce_bucket_size from hidden^2, stage3_prefetch_bucket_size from 0.9 hidden^2 and
 * stage3_param_persistence_threshold from 10 hidden. A standalone import takes the batch and
 * precision from --set instead, and says so when they are missing. The zero_optimization,
 * bf16 and fp16 blocks are pydantic models with extra="forbid" (runtime/config_utils.py): an
 * unknown key there is DeepSpeed's own error, refused here too.
 */
#include <stdlib.h>
#include <string.h>

#include "import/import_internal.h"

struct ds {
    struct imp *im;
    const struct imp_file *f;
    const struct ds_trainer *tr;
    const struct yt_node *root, *zero;
    int stage;
    bool offload_opt, offload_param;
};

static const struct yt_node *get(const struct yt_node *map, const char *key,
                                 const struct yt_node **kn)
{
    const struct yt_node *v = imp_get_key(map, key, kn);

    return imp_null(v) ? NULL : v;
}

static bool is_auto(const struct yt_node *v)
{
    return v && v->kind == YT_SCALAR && v->style == YT_QUOTED && strcmp(v->text, "auto") == 0;
}

static const char *from(struct ds *d, const struct yt_node *kn)
{
    return imp_fmt(d->im, "%s %s", imp_at(d->im, kn), kn ? kn->text : "");
}

/* The same for a key inside block `block` ("zero_optimization.stage"). */
static const char *from_in(struct ds *d, const char *block, const struct yt_node *kn)
{
    return imp_fmt(d->im, "%s %s.%s", imp_at(d->im, kn), block, kn ? kn->text : "");
}

/* A bool of block `map` (or DeepSpeed's `deflt` when absent). */
static int flag(struct ds *d, const struct yt_node *map, const char *key, bool deflt, bool *out,
                const struct yt_node **kn)
{
    const struct yt_node *v = get(map, key, kn);

    *out = deflt;
    return v ? imp_bool(d->im, v, out) : 0;
}

/* ---- precision --------------------------------------------------------------------------- */

/* bf16.enabled / fp16.enabled: "auto" takes the trainer's; neither means fp32 (DeepSpeed). */
static int precision(struct ds *d)
{
    const struct yt_node *bk = NULL, *fk = NULL, *b = get(d->root, "bf16", NULL),
                         *h = get(d->root, "fp16", NULL), *be = NULL, *fe = NULL;
    const struct yt_node *legacy = get(d->root, "bfloat16", NULL);
    bool bon = false, fon = false;
    const char *p, *why;

    if (!b && legacy)
        b = legacy;
    be = b ? get(b, "enabled", &bk) : NULL;
    fe = h ? get(h, "enabled", &fk) : NULL;
    if (is_auto(be) || is_auto(fe)) {
        p = d->tr->precision;
        if (!p && !imp_set_value(d->im, "training.precision"))
            return imp_error(d->im, is_auto(be) ? be : fe,
                             "\"auto\" precision is the trainer's, and a standalone DeepSpeed "
                             "config has none: pass --set training.precision=bf16|fp16|fp32");
        p = p ? p : imp_set_value(d->im, "training.precision");
        why = imp_fmt(d->im, "%s \"auto\" -> %s, the %s's (transformers HfTrainerDeepSpeedConfig)",
                      from_in(d, is_auto(be) ? "bf16" : "fp16", is_auto(be) ? bk : fk), p,
                      d->tr->name ? d->tr->name : "--set");
        if (!d->tr->name)
            why = imp_fmt(d->im, "--set training.precision=%s (%s \"auto\")", p,
                          from_in(d, is_auto(be) ? "bf16" : "fp16", is_auto(be) ? bk : fk));
        if ((!is_auto(be) && be && imp_bool(d->im, be, &bon)) ||
            (!is_auto(fe) && fe && imp_bool(d->im, fe, &fon)))
            return -1;
        if ((bon && strcmp(p, "bf16") != 0) || (fon && strcmp(p, "fp16") != 0))
            return imp_error(d->im, bon ? be : fe, "%s.enabled is true but the %s trains in %s",
                             bon ? "bf16" : "fp16", d->tr->name ? d->tr->name : "scenario", p);
        imp_put(d->im, "training.precision", p, why);
        return 0;
    }
    if ((be && imp_bool(d->im, be, &bon)) || (fe && imp_bool(d->im, fe, &fon)))
        return -1;
    if (bon && fon)
        return imp_error(d->im, fk,
                         "fp16 and bf16 are both enabled; DeepSpeed refuses the pair (runtime/"
                         "config.py: \"bfloat16 and fp16 modes cannot be simultaneously "
                         "enabled\"): enable one");
    p = bon ? "bf16" : fon ? "fp16" : "fp32";
    if (d->tr->precision && strcmp(p, d->tr->precision) != 0)
        return imp_error(d->im,
                         bon   ? be
                         : fon ? fe
                               : NULL,
                         "DeepSpeed trains in %s but the %s says %s (transformers refuses the "
                         "mismatch: HfTrainerDeepSpeedConfig fill_match)",
                         p, d->tr->name, d->tr->precision);
    imp_put(d->im, "training.precision", p,
            bon   ? from_in(d, "bf16", bk)
            : fon ? from_in(d, "fp16", fk)
                  : "bf16 and fp16 not enabled: DeepSpeed trains in fp32 "
                    "(runtime/precision_config.py)");
    return 0;
}

/* ---- batch -------------------------------------------------------------------------------- */

/* An integer batch key, or "auto" from the trainer (out 0 when neither). */
static int batch_key(struct ds *d, const char *key, long long trainer, long long *out,
                     const struct yt_node **kn)
{
    const struct yt_node *v = get(d->root, key, kn);
    double x;

    *out = 0;
    if (!v || is_auto(v)) {
        *out = trainer;
        return 0;
    }
    if (imp_num(d->im, v, &x))
        return -1;
    if (x < 1 || x > 1 << 30 || x - (double)(long long)x > 0)
        return imp_error(d->im, v, "%s must be a positive whole number", key);
    *out = (long long)x;
    if (trainer > 0 && *out != trainer)
        return imp_error(d->im, v, "%s is %lld but the %s gives %lld", key, *out, d->tr->name,
                         trainer);
    return 0;
}

static int batch(struct ds *d)
{
    const struct yt_node *mk, *gk, *tk;
    const char *dps = imp_get(d->im, "parallelism.dp"), *tp = imp_get(d->im, "parallelism.tp");
    long long micro, gas, train, dp = dps ? atoll(dps) : imp_gpus(d->im) / (tp ? atoll(tp) : 1);

    if (batch_key(d, "train_micro_batch_size_per_gpu", d->tr->has_batch ? d->tr->micro : 0, &micro,
                  &mk) ||
        batch_key(d, "gradient_accumulation_steps", d->tr->has_batch ? d->tr->gas : 0, &gas, &gk) ||
        batch_key(d, "train_batch_size", d->tr->has_batch ? d->tr->micro * d->tr->gas * dp : 0,
                  &train, &tk))
        return -1;
    if (d->tr->has_batch)
        return 0; /* the trainer wrote micro_batch and global_batch */
    if (micro > 0)
        imp_putf(d->im, "training.micro_batch", from(d, mk), "%lld", micro);
    else if (imp_from_set(d->im, "training.micro_batch", "micro-batch (it is \"auto\")"))
        return -1;
    micro = atoll(imp_get(d->im, "training.micro_batch"));
    if (!gas && !get(d->root, "gradient_accumulation_steps", NULL))
        gas = 1; /* DeepSpeed completes the triple (runtime/config.py:891-934) */
    if (train > 0)
        imp_putf(d->im, "training.global_batch", from(d, tk), "%lld", train);
    else if (gas > 0)
        /* a refusal of the product points at its source key: the accumulation, else the micro-batch
         */
        imp_putf(d->im, "training.global_batch",
                 imp_fmt(d->im, "= micro %lld x gradient_accumulation_steps %lld (%s) x dp %lld",
                         micro, gas,
                         gk ? imp_at(d->im, gk)
                            : imp_fmt(d->im, "absent: 1; micro at %s", imp_at(d->im, mk)),
                         dp),
                 "%lld", micro * gas * dp);
    else if (imp_from_set(d->im, "training.global_batch", "global batch (it is \"auto\")"))
        return -1;
    return 0;
}

/* ---- zero_optimization ------------------------------------------------------------------ */

/* A bucket-size key: an element count, or "auto" from the model's hidden size. */
static int bucket(struct ds *d, const char *key, const char *alias, const char *skey,
                  double auto_value, const char *auto_rule)
{
    const struct yt_node *kn = NULL, *v = get(d->zero, key, &kn);
    double x;

    if (!v && alias)
        v = get(d->zero, alias, &kn);
    if (!v)
        return 0;
    if (is_auto(v)) {
        imp_putf(d->im, skey,
                 imp_fmt(d->im, "%s \"auto\" -> %s = %.0f (HfTrainerDeepSpeedConfig)",
                         from_in(d, "zero_optimization", kn), auto_rule, auto_value),
                 "%.0f", auto_value);
        return 0;
    }
    if (imp_num(d->im, v, &x))
        return -1;
    if (x < 0)
        return imp_error(d->im, v, "%s must not be negative", kn->text);
    imp_putf(d->im, skey, from_in(d, "zero_optimization", kn), "%.0f", x);
    return 0;
}

static int offload_device(struct ds *d, const char *block, bool *on)
{
    const struct yt_node *b = get(d->zero, block, NULL), *dk = NULL, *dev;

    *on = false;
    if (!b)
        return 0;
    dev = get(b, "device", &dk);
    if (!dev || imp_is(dev, "none"))
        return 0;
    if (!imp_is(dev, "cpu"))
        return imp_error(d->im, dev, "%s.device '%s': only cpu offload is modelled", block,
                         imp_str(dev) ? imp_str(dev) : "");
    if (get(b, "ratio", NULL))
        return imp_error(d->im, get(b, "ratio", NULL),
                         "offload_optimizer.ratio (a partial optimizer offload) is not modelled");
    *on = true;
    return 0;
}

static int offload(struct ds *d)
{
    const struct yt_node *ok = NULL, *pk = NULL;

    imp_get_key(d->zero, "offload_optimizer", &ok);
    imp_get_key(d->zero, "offload_param", &pk);
    if (offload_device(d, "offload_optimizer", &d->offload_opt) ||
        offload_device(d, "offload_param", &d->offload_param))
        return -1;
    if (d->offload_param && d->stage != 3)
        return imp_error(d->im, pk, "offload_param is a ZeRO stage 3 feature (stage %d)", d->stage);
    if (d->offload_param)
        imp_put(d->im, "training.offload", d->offload_opt ? "params" : "params_only",
                d->offload_opt
                    ? imp_fmt(d->im, "%s and %s: cpu", from_in(d, "zero_optimization", ok),
                              from_in(d, "zero_optimization", pk))
                    : imp_fmt(d->im,
                              "%s: cpu without offload_optimizer: the 16-bit partitions "
                              "only",
                              from_in(d, "zero_optimization", pk)));
    else if (d->offload_opt)
        imp_put(d->im, "training.offload", "optimizer",
                imp_fmt(d->im, "%s: cpu", from_in(d, "zero_optimization", ok)));
    return 0;
}

/* zero_optimization keys with no first-order cost, or with one that is approximated. */
static const char *const zero_free[] = {
    "stage",
    "offload_optimizer",
    "offload_param",
    "overlap_comm",
    "contiguous_gradients",
    "reduce_bucket_size",
    "allgather_bucket_size",
    "stage3_prefetch_bucket_size",
    "prefetch_bucket_size",
    "stage3_param_persistence_threshold",
    "param_persistence_threshold",
    "stage3_max_live_parameters",
    "max_live_parameters",
    "stage3_max_reuse_distance",
    "max_reuse_distance",
    "stage3_gather_16bit_weights_on_model_save",
    "gather_16bit_weights_on_model_save",
    "load_from_fp32_weights",
    "elastic_checkpoint",
    "round_robin_gradients",
    "ignore_unused_parameters",
    "use_multi_rank_bucket_allreduce",
    "memory_efficient_linear",
    "reduce_scatter",
    "allgather_partitions",
    "sub_group_size",
    "model_persistence_threshold",
    "stage3_model_persistence_threshold",
    "zero_hpz_partition_size",
    "zero_quantized_weights",
    "zero_quantized_gradients",
    "mics_shard_size",
    "cpu_offload",
    "legacy_stage1",
};

static int zero_keys(struct ds *d)
{
    const struct yt_node *v;
    const struct yt_node *kn;

    for (size_t i = 0; i < d->zero->count; i++) {
        const char *k = d->zero->pairs[i].key->text;
        bool known = false;
        for (size_t j = 0; j < ARRAY_LEN(zero_free) && !known; j++)
            known = strcmp(k, zero_free[j]) == 0;
        if (!known)
            return imp_error(d->im, d->zero->pairs[i].key,
                             "'%s' is not a zero_optimization key (DeepSpeed refuses unknown "
                             "keys there: extra=\"forbid\")",
                             k);
    }
    if ((v = get(d->zero, "sub_group_size", &kn)))
        imp_note(d->im, FATE_APPROX, kn,
                 "sub_group_size: the size of ZeRO-3's fp32 optimizer-step tiles; only their "
                 "transient buffers change (not counted)");
    if ((v = get(d->zero, "reduce_scatter", &kn)) && imp_is(v, "false"))
        return imp_error(d->im, v,
                         "reduce_scatter false (an all-reduce of the gradients) is not "
                         "modelled");
    if ((v = get(d->zero, "allgather_partitions", &kn)) && imp_is(v, "false"))
        return imp_error(d->im, v, "allgather_partitions false (broadcasts) is not modelled");
    for (const char *const *k =
             (const char *const[]){ "zero_hpz_partition_size", "zero_quantized_weights",
                                    "zero_quantized_gradients", "mics_shard_size", NULL };
         *k; k++) {
        const struct yt_node *q = get(d->zero, *k, &kn);
        if (q && !imp_is(q, "false") && !imp_is(q, "1") && !imp_is(q, "-1") && !imp_is(q, "0"))
            return imp_error(d->im, kn, "'%s' (ZeRO++ / MiCS) is not modelled", *k);
    }
    return 0;
}

static int zero(struct ds *d)
{
    const struct yt_node *sk = NULL, *s = get(d->zero, "stage", &sk), *kn;
    double h = d->im->model.hidden;
    long long stage = 0;
    bool b;
    static const char *const shard[] = { "none", "zero1", "zero2", "zero3" };

    if (s && imp_int(d->im, s, 0, 3, &stage))
        return -1;
    d->stage = (int)stage;
    imp_put(d->im, "parallelism.sharding", shard[stage],
            s ? from_in(d, "zero_optimization", sk)
              : "zero_optimization.stage absent: 0 (runtime/zero/config.py:95)");
    imp_put(d->im, "parallelism.framework", "deepspeed",
            imp_fmt(d->im, "DeepSpeed's engine (%s)", d->f->path));
    if (zero_keys(d) || offload(d))
        return -1;
    if (get(d->zero, "overlap_comm", &kn)) {
        if (flag(d, d->zero, "overlap_comm", stage == 3, &b, &kn))
            return -1;
        imp_put(d->im, "zero.overlap_comm", b ? "true" : "false",
                from_in(d, "zero_optimization", kn));
    }
    if (get(d->zero, "contiguous_gradients", &kn)) {
        if (flag(d, d->zero, "contiguous_gradients", true, &b, &kn))
            return -1;
        imp_put(d->im, "zero.contiguous_gradients", b ? "true" : "false",
                from_in(d, "zero_optimization", kn));
    }
    return bucket(d, "reduce_bucket_size", NULL, "zero.reduce_bucket_size", h * h, "hidden^2") ||
                   bucket(d, "allgather_bucket_size", NULL, "zero.allgather_bucket_size", h * h,
                          "hidden^2") ||
                   bucket(d, "stage3_prefetch_bucket_size", "prefetch_bucket_size",
                          "zero.stage3_prefetch_bucket_size", (double)(long long)(0.9 * h * h),
                          "int(0.9 hidden^2)") ||
                   bucket(d, "stage3_param_persistence_threshold", "param_persistence_threshold",
                          "zero.stage3_param_persistence_threshold", 10 * h, "10 hidden") ||
                   bucket(d, "stage3_max_live_parameters", "max_live_parameters",
                          "zero.stage3_max_live_parameters", 1e9, "1e9") ||
                   bucket(d, "stage3_max_reuse_distance", "max_reuse_distance",
                          "zero.stage3_max_reuse_distance", 1e9, "1e9")
               ? -1
               : 0;
}

/* ---- optimizer, precision details, the rest ----------------------------------------------- */

static int optimizer(struct ds *d)
{
    const struct yt_node *ok = NULL, *o = get(d->root, "optimizer", &ok), *t, *fk = NULL;
    bool force = true;

    if (flag(d, d->root, "zero_force_ds_cpu_optimizer", true, &force, &fk))
        return -1;
    if (o) {
        t = get(o, "type", NULL);
        if (!imp_is(t, "AdamW") && !imp_is(t, "Adam") && !imp_is(t, "adamw") && !imp_is(t, "adam"))
            return imp_error(d->im, t ? t : ok,
                             "DeepSpeed optimizer '%s' is not modelled "
                             "(Adam, AdamW)",
                             imp_str(t) ? imp_str(t) : "");
        imp_put(d->im, "training.optimizer", "adamw",
                imp_fmt(d->im,
                        "%s %s: DeepSpeed builds it (FusedAdam; DeepSpeedCPUAdam with "
                        "offload)",
                        from(d, ok), imp_str(t)));
        return 0;
    }
    if (d->offload_opt && force && d->tr->optimizer) {
        imp_put(d->im, "training.optimizer", "adamw",
                imp_fmt(d->im,
                        "DeepSpeedCPUAdam: with offload_optimizer accelerate replaces "
                        "the %s's optimizer (accelerator.py:2364-2375; "
                        "zero_force_ds_cpu_optimizer defaults to true)",
                        d->tr->name));
        imp_note(d->im, FATE_NOTE, d->tr->optimizer_at,
                 "optimizer: replaced by DeepSpeedCPUAdam under offload_optimizer (fp32 states "
                 "on the host)");
        imp_unset(d->im, "training.paged_optimizer");
    }
    if (d->offload_opt && !force)
        imp_note(d->im, FATE_APPROX, fk,
                 "zero_force_ds_cpu_optimizer false: the trainer's optimizer steps on host "
                 "tensors; timed at DeepSpeedCPUAdam's host rate");
    return 0;
}

static int grad_dtype(struct ds *d)
{
    const struct yt_node *dt = get(d->root, "data_types", NULL), *gk = NULL, *g;
    const char *p = imp_get(d->im, "training.precision");

    g = dt ? get(dt, "grad_accum_dtype", &gk) : NULL;
    imp_put(d->im, "training.master_weights", "true",
            "DeepSpeed's ZeRO optimizer keeps an fp32 partition of the weights");
    if (g) {
        const char *s = imp_str(g);
        const char *v = s && (strcmp(s, "fp32") == 0 || strcmp(s, "float32") == 0)    ? "fp32"
                        : s && (strcmp(s, "bf16") == 0 || strcmp(s, "bfloat16") == 0) ? "bf16"
                        : s && (strcmp(s, "fp16") == 0 || strcmp(s, "float16") == 0)  ? "fp16"
                                                                                      : NULL;
        if (!v)
            return imp_error(d->im, g, "grad_accum_dtype '%s' is not fp32, bf16 or fp16",
                             s ? s : "");
        imp_put(d->im, "training.grad_dtype", v, from_in(d, "data_types", gk));
        return 0;
    }
    imp_put(d->im, "training.grad_dtype", p && strcmp(p, "fp32") != 0 ? p : "fp32",
            "data_types.grad_accum_dtype absent: the model dtype (runtime/engine.py:1252-1263)");
    return 0;
}

/* Top-level keys and their fates. */
static const char *const free_top[][2] = {
    { "gradient_clipping", "a norm pass, inside the optimizer time" },
    { "steps_per_print", "logging" },
    { "wall_clock_breakdown", "logging" },
    { "scheduler", "learning-rate schedule" },
    { "zero_allow_untested_optimizer", "a permission" },
    { "zero_force_ds_cpu_optimizer", "read with offload_optimizer" },
    { "prescale_gradients", "numerics only" },
    { "gradient_predivide_factor", "numerics only" },
    { "activation_checkpointing", "used by deepspeed.checkpointing users only; the HF Trainer "
                                  "checkpoints through the model" },
    { "dump_state", "debugging" },
    { "flops_profiler", "profiling" },
    { "tensorboard", "logging" },
    { "wandb", "logging" },
    { "csv_monitor", "logging" },
};

static void top_keys(struct ds *d)
{
    static const char *const used[] = { "zero_optimization",
                                        "bf16",
                                        "bfloat16",
                                        "fp16",
                                        "train_micro_batch_size_per_gpu",
                                        "gradient_accumulation_steps",
                                        "train_batch_size",
                                        "optimizer",
                                        "data_types",
                                        "tensor_parallel" };
    for (size_t i = 0; i < d->root->count; i++) {
        const struct yt_node *k = d->root->pairs[i].key;
        const char *why = NULL;
        bool u = false;

        for (size_t j = 0; j < ARRAY_LEN(used) && !u; j++)
            u = strcmp(used[j], k->text) == 0;
        for (size_t j = 0; j < ARRAY_LEN(free_top) && !why; j++)
            if (strcmp(free_top[j][0], k->text) == 0)
                why = free_top[j][1];
        if (u)
            continue;
        if (why)
            imp_note(d->im, FATE_IGNORED, k, "%s: %s", k->text, why);
        else if (strcmp(k->text, "compile") == 0)
            imp_note(d->im, FATE_DROPPED, k,
                     "compile: DeepSpeed's torch.compile of the model (kernel fusion) is not "
                     "modelled");
        else if (strcmp(k->text, "communication_data_type") == 0)
            imp_note(d->im, FATE_APPROX, k,
                     "communication_data_type: gradients are reduced at training.grad_dtype");
        else if (strcmp(k->text, "seq_parallel_communication_data_type") == 0)
            imp_note(d->im, FATE_DROPPED, k,
                     "seq_parallel_communication_data_type: DeepSpeed Ulysses sequence "
                     "parallelism (set up by the script) is not modelled");
        else
            imp_note(d->im, FATE_DROPPED, k, "%s: not a key simtrain's DeepSpeed reader knows",
                     k->text);
    }
}

static int autotp(struct ds *d)
{
    const struct yt_node *t = get(d->root, "tensor_parallel", NULL), *ak = NULL, *a;
    long long tp;

    a = t ? get(t, "autotp_size", &ak) : NULL;
    if (!a)
        return 0;
    if (imp_int(d->im, a, 1, 1 << 20, &tp))
        return -1;
    imp_putf(d->im, "parallelism.tp", from_in(d, "tensor_parallel", ak), "%lld", tp);
    imp_note(d->im, FATE_APPROX, ak,
             "tensor_parallel.autotp_size: DeepSpeed AutoTP timed as Megatron-style tensor "
             "parallelism without sequence parallelism");
    return 0;
}

int imp_deepspeed(struct imp *im, const struct imp_file *f, const struct ds_trainer *tr)
{
    struct ds d = { .im = im, .f = f, .tr = tr, .root = f->doc->root };
    const struct yt_node *zk = NULL;
    /* no block: an empty one, alive for the whole import (a compound literal in the `if` below
     * died with its statement: zero_keys() then read a dangling node, a crash at -O2) */
    static const struct yt_node no_zero = { .kind = YT_MAP };

    d.zero = get(d.root, "zero_optimization", &zk);
    if (!d.zero && tr->force_cpu_adam_ok)
        return imp_error(im, NULL,
                         "%s: no zero_optimization block (accelerate refuses it: \"Please "
                         "specify the ZeRO optimization config\", utils/dataclasses.py:1276)",
                         f->path);
    if (d.zero && d.zero->kind != YT_MAP)
        return imp_error(im, d.zero, "zero_optimization must be a mapping, not %s",
                         yt_describe(d.zero));
    if (!d.zero)
        d.zero = &no_zero;
    if (autotp(&d) || zero(&d) || precision(&d) || batch(&d) || grad_dtype(&d) || optimizer(&d))
        return -1;
    top_keys(&d);
    return im->errors ? -1 : 0;
}

int imp_deepspeed_kind(struct imp *im)
{
    const struct imp_file *f = imp_read(im, im->rq->files[0], "DeepSpeed config", true);
    struct ds_trainer none = { 0 };

    if (!f)
        return -1;
    if (!im->rq->model_config)
        return imp_error(im, NULL,
                         "a DeepSpeed config has no model: pass its config.json with "
                         "--model-config");
    if (imp_model_config(im, NULL, NULL) || imp_cluster(im, 0, NULL, NULL) ||
        imp_from_set(im, "training.seq_len", "sequence length"))
        return -1;
    imp_put(im, "training.model_code", "hf",
            "a Hugging Face model under DeepSpeed: transformers' modules");
    imp_put_framework(im, "hf",
                      "a DeepSpeed config alone: the HF Trainer / accelerate integration runs it "
                      "(it resolves the \"auto\" values)");
    return imp_deepspeed(im, f, &none);
}
