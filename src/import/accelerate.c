/*
 * accelerate.c - an `accelerate config` YAML to a simtrain scenario (docs/import.md,
 * "accelerate"). Sources: huggingface/accelerate at 16cb6eb80dd9 (the corpus commit),
 * src/accelerate/...: commands/config/config_args.py (the file), commands/launch.py (the
 * launcher's defaults for keys the file leaves out), utils/dataclasses.py (the plugins).
 *
 * An accelerate config holds no model, batch or sequence length (the training script does):
 * the model comes from --model-config and the training keys from --set, and a missing one is
 * an error naming it. It holds the process count (num_processes, the total over all machines),
 * the distributed type (DDP, FSDP with its launcher defaults, DeepSpeed with its JSON, followed
 * relative to the working directory, then to the YAML's folder), the mixed precision around
 * the script's fp32 parameters, FSDP2's parallelism_config and the fp8 recipe. Unknown
 * top-level keys are accelerate's own error (config_args.py:154-159), refused here too.
 */
#include <stdlib.h>
#include <string.h>

#include "import/import_internal.h"

struct acc {
    struct imp *im;
    const struct imp_file *f;
    const struct yt_node *root;
    const char *precision; /* "bf16", "fp16", "fp32", "fp8", or NULL when absent */
    int tp, cp;
};

static const struct yt_node *get(const struct yt_node *map, const char *key,
                                 const struct yt_node **kn)
{
    const struct yt_node *v = imp_get_key(map, key, kn);

    return imp_null(v) ? NULL : v;
}

/* ASCII case-insensitive comparison (accelerate upper-cases strategy names). */
static int strcasecmp_ascii(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = *a >= 'a' && *a <= 'z' ? *a - 32 : *a, y = *b >= 'a' && *b <= 'z' ? *b - 32 : *b;
        if (x != y)
            return x - y;
    }
    return *a - *b;
}

static const char *from(struct acc *c, const char *block, const struct yt_node *kn)
{
    return imp_fmt(c->im, "%s %s%s%s", imp_at(c->im, kn), block ? block : "", block ? "." : "",
                   kn ? kn->text : "");
}

/* The ClusterConfig fields (commands/config/config_args.py:75-232), and whether the field is
 * launcher plumbing that costs nothing (listed as ignored). */
static const struct {
    const char *name;
    bool plumbing;
} cluster_fields[] = {
    { "compute_environment", true },
    { "distributed_type", false },
    { "mixed_precision", false },
    { "use_cpu", false },
    { "debug", true },
    { "num_processes", false },
    { "machine_rank", true },
    { "num_machines", false },
    { "gpu_ids", true },
    { "main_process_ip", true },
    { "main_process_port", true },
    { "rdzv_backend", true },
    { "same_network", true },
    { "main_training_function", true },
    { "enable_cpu_affinity", true },
    { "fp8_config", false },
    { "deepspeed_config", false },
    { "fsdp_config", false },
    { "parallelism_config", false },
    { "megatron_lm_config", false },
    { "mpirun_config", true },
    { "downcast_bf16", true },
    { "tpu_name", true },
    { "tpu_zone", true },
    { "tpu_use_cluster", true },
    { "tpu_use_sudo", true },
    { "command_file", true },
    { "commands", true },
    { "tpu_vm", true },
    { "tpu_env", true },
    { "dynamo_config", false },
};

static int check_keys(struct acc *c)
{
    for (size_t i = 0; i < c->root->count; i++) {
        const struct yt_node *k = c->root->pairs[i].key;
        size_t j = 0;

        while (j < ARRAY_LEN(cluster_fields) && strcmp(k->text, cluster_fields[j].name) != 0)
            j++;
        if (j == ARRAY_LEN(cluster_fields))
            return imp_error(c->im, k,
                             "'%s' is not an accelerate config key (accelerate refuses unknown "
                             "keys: commands/config/config_args.py:154-159)",
                             k->text);
        if (cluster_fields[j].plumbing)
            imp_note(c->im, FATE_IGNORED, k, "%s: launcher plumbing", k->text);
    }
    return 0;
}

/* num_processes (total over all machines) and num_machines against --gpus and the hardware. */
static int processes(struct acc *c, bool single)
{
    const struct yt_node *nk = NULL, *n = get(c->root, "num_processes", &nk), *mk = NULL,
                         *m = get(c->root, "num_machines", &mk);
    long long procs = single ? 1 : 0, machines = 1;

    if ((n && imp_int(c->im, n, -1, 1 << 20, &procs)) ||
        (m && imp_int(c->im, m, 1, 1 << 20, &machines)))
        return -1;
    if (procs == -1)
        procs = 0; /* accelerate launch then needs --num_processes: --gpus */
    if (procs > 0 && machines > 1 && procs / machines != c->im->hw->gpus_per_node)
        return imp_error(c->im, mk,
                         "%lld processes on %lld machines is %lld per machine, but '%s' has %d "
                         "GPUs per node",
                         procs, machines, procs / machines, c->im->hw->name,
                         c->im->hw->gpus_per_node);
    return imp_cluster(c->im, (int)procs, n ? nk : NULL,
                       single ? "distributed_type NO: one process"
                              : "num_processes (the total over all machines)");
}

static int precision(struct acc *c)
{
    const struct yt_node *pk = NULL, *p = get(c->root, "mixed_precision", &pk);
    const char *s = imp_str(p);

    if (!p) {
        c->precision = NULL;
        return 0;
    }
    if (strcmp(s, "no") == 0)
        c->precision = "fp32";
    else if (strcmp(s, "bf16") == 0 || strcmp(s, "fp16") == 0 || strcmp(s, "fp8") == 0)
        c->precision = s;
    else
        return imp_error(c->im, p, "mixed_precision '%s' is not no, fp16, bf16 or fp8", s);
    if (strcmp(c->precision, "fp8") == 0 && !(c->im->hw->gpu.flops[DT_FP8] > 0))
        return imp_error(c->im, p, "mixed_precision fp8 needs an fp8 peak, and '%s' has none",
                         c->im->hw->name);
    return 0;
}

/* Autocast around the script's fp32 parameters: they are the master copy. */
static void put_precision(struct acc *c)
{
    const struct yt_node *pk = NULL;

    get(c->root, "mixed_precision", &pk);
    imp_put(c->im, "training.precision", c->precision ? c->precision : "fp32",
            c->precision ? from(c, NULL, pk)
                         : "mixed_precision absent: \"no\", fp32 (commands/launch.py:1281-1286)");
    imp_put(c->im, "training.master_weights", "true",
            "accelerate autocasts around the script's fp32 parameters");
    imp_put(c->im, "training.grad_dtype", "fp32", "the fp32 parameters' gradients");
}

static int fp8(struct acc *c)
{
    const struct yt_node *f = get(c->root, "fp8_config", NULL), *kn, *v;

    if (!f)
        return 0;
    if (!c->precision || strcmp(c->precision, "fp8") != 0) {
        imp_note(c->im, FATE_IGNORED, NULL, "fp8_config: read with mixed_precision fp8 only");
        return 0;
    }
    v = get(f, "backend", &kn);
    if (v && !imp_is(v, "TE"))
        imp_note(c->im, FATE_APPROX, kn, "fp8_config.backend %s timed as Transformer Engine's fp8",
                 imp_str(v));
    if ((v = get(f, "fp8_format", &kn)))
        imp_note(c->im, FATE_APPROX, kn,
                 "fp8_config.fp8_format %s: the fp8 recipe is not modelled (GEMMs at the fp8 "
                 "peak)",
                 imp_str(v) ? imp_str(v) : "");
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(f->pairs[i].key->text, "fp8_format") != 0 &&
            strcmp(f->pairs[i].key->text, "backend") != 0)
            imp_note(c->im, FATE_IGNORED, f->pairs[i].key, "fp8_config.%s: fp8 recipe detail",
                     f->pairs[i].key->text);
    return 0;
}

/* ---- parallelism_config (FSDP2) --------------------------------------------------------- */

static int size(struct acc *c, const struct yt_node *pc, const char *key, int *out,
                const struct yt_node **kn)
{
    const struct yt_node *v = get(pc, key, kn);
    long long n = 1;

    if (v && imp_int(c->im, v, 1, 1 << 20, &n))
        return -1;
    *out = (int)n;
    return 0;
}

static int parallelism(struct acc *c, int version)
{
    const struct yt_node *pk = NULL, *pc = get(c->root, "parallelism_config", &pk);
    const struct yt_node *tk, *ck, *rk, *sk;
    int rep, shard, gpus = imp_gpus(c->im), gpn = c->im->hw->gpus_per_node;

    c->tp = c->cp = 1;
    if (!pc)
        return 0;
    if (version != 2)
        return imp_error(c->im, pk,
                         "parallelism_config needs FSDP2 (accelerate refuses it "
                         "otherwise: commands/launch.py:1205-1206)");
    if (size(c, pc, "parallelism_config_tp_size", &c->tp, &tk) ||
        size(c, pc, "parallelism_config_cp_size", &c->cp, &ck) ||
        size(c, pc, "parallelism_config_dp_replicate_size", &rep, &rk) ||
        size(c, pc, "parallelism_config_dp_shard_size", &shard, &sk))
        return -1;
    if ((long long)c->tp * c->cp * rep * shard != gpus)
        return imp_error(c->im, pk,
                         "dp_replicate x dp_shard x tp x cp = %d, not the %d processes "
                         "(parallelism_config.py:372-377)",
                         c->tp * c->cp * rep * shard, gpus);
    if (c->tp > 1) {
        imp_putf(c->im, "parallelism.tp", from(c, "parallelism_config", tk), "%d", c->tp);
        imp_note(c->im, FATE_APPROX, tk,
                 "parallelism_config_tp_size: transformers' DTensor TP plan timed as "
                 "Megatron-style TP without sequence parallelism");
    }
    if (c->cp > 1) {
        imp_putf(c->im, "parallelism.cp", from(c, "parallelism_config", ck), "%d", c->cp);
        imp_note(c->im, FATE_APPROX, ck,
                 "parallelism_config_cp_size: PyTorch context_parallel with the allgather "
                 "strategy (commands/launch.py:936-940) timed as a point-to-point ring");
    }
    if (rep > 1 && (shard <= 1 || shard != gpn / (c->tp * c->cp) || gpus <= gpn))
        return imp_error(c->im, rk,
                         "HSDP with %d replicas of %d shards: simtrain's hsdp shards over the "
                         "data-parallel peers of one node (%d on '%s') across more than one node",
                         rep, shard, gpn / (c->tp * c->cp), c->im->hw->name);
    if (rep > 1)
        imp_put(c->im, "parallelism.sharding", "hsdp",
                imp_fmt(c->im, "%s dp_replicate x dp_shard", imp_at(c->im, rk)));
    for (size_t i = 0; i < pc->count; i++) {
        const char *k = pc->pairs[i].key->text;
        if (strstr(k, "_cp_backend") || strstr(k, "_cp_comm_strategy") || strstr(k, "_sp_"))
            imp_note(c->im, FATE_APPROX, pc->pairs[i].key, "parallelism_config.%s: not modelled",
                     k);
    }
    return 0;
}

/* ---- FSDP -------------------------------------------------------------------------------- */

/* FULL_SHARD ... HYBRID_SHARD_ZERO2 or their 1-based digits (utils/constants.py:38). */
static const char *strategy_of(const struct yt_node *v)
{
    static const char *const names[][2] = {
        { "FULL_SHARD", "fsdp" },
        { "SHARD_GRAD_OP", "fsdp_grad_op" },
        { "NO_SHARD", "fsdp_no_shard" },
        { "HYBRID_SHARD", "hsdp" },
        { "1", "fsdp" },
        { "2", "fsdp_grad_op" },
        { "3", "fsdp_no_shard" },
        { "4", "hsdp" },
    };
    const char *s = imp_str(v);

    for (size_t i = 0; s && i < ARRAY_LEN(names); i++)
        if (strcasecmp_ascii(s, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

static int fsdp_bool(struct acc *c, const struct yt_node *f, const char *key, bool deflt, bool *out,
                     const struct yt_node **kn)
{
    const struct yt_node *v = get(f, key, kn);

    *out = deflt;
    if (!v)
        return 0;
    if (v->style == YT_QUOTED) { /* the launcher passes strings: "true" / "false" */
        *out = imp_is(v, "true") || imp_is(v, "True");
        return 0;
    }
    return imp_bool(c->im, v, out);
}

static int fsdp(struct acc *c)
{
    const struct yt_node *f = get(c->root, "fsdp_config", NULL), *kn, *v;
    long long version = 1;
    const char *sh = "fsdp", *hsdp = imp_get(c->im, "parallelism.sharding");
    bool b;

    if (!f)
        f = &(struct yt_node){ .kind = YT_MAP };
    if ((v = get(f, "fsdp_version", &kn)) && imp_int(c->im, v, 1, 2, &version))
        return -1;
    imp_putf(c->im, "fsdp.version",
             v ? from(c, "fsdp_config", kn) : "fsdp_version absent: 1 (commands/launch.py:514)",
             "%lld", version);
    if (parallelism(c, (int)version))
        return -1;
    hsdp = imp_get(c->im, "parallelism.sharding");
    if ((v = get(f, "fsdp_sharding_strategy", &kn)) && !(sh = strategy_of(v)))
        return imp_error(c->im, v,
                         "fsdp_sharding_strategy '%s' is not modelled (FULL_SHARD, "
                         "SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD)",
                         imp_str(v) ? imp_str(v) : "");
    if (!hsdp)
        imp_put(c->im, "parallelism.sharding", sh ? sh : "fsdp",
                v ? from(c, "fsdp_config", kn)
                  : "fsdp_sharding_strategy absent: FULL_SHARD, always exported by the launcher "
                    "(utils/launch.py:313)");
    if (sh && strcmp(sh, "hsdp") == 0 && !hsdp && imp_gpus(c->im) <= c->im->hw->gpus_per_node)
        imp_note(c->im, FATE_NOTE, kn,
                 "HYBRID_SHARD on one node: one replica group, which shards over every "
                 "data-parallel rank as FULL_SHARD does (docs/sharding.md)");
    imp_put(c->im, "parallelism.framework", "pytorch", "PyTorch FSDP through accelerate");
    v = get(f, "fsdp_reshard_after_forward", &kn);
    if (version == 2) {
        if (fsdp_bool(c, f, "fsdp_reshard_after_forward", true, &b, &kn))
            return -1;
        imp_put(c->im, "fsdp.reshard_after_forward", b ? "true" : "false",
                v ? from(c, "fsdp_config", kn)
                  : "fsdp_reshard_after_forward absent: \"true\" (commands/launch.py:540-545)");
    } else if (v) {
        imp_note(c->im, FATE_IGNORED, kn,
                 "fsdp_reshard_after_forward under FSDP1: the launcher's sharding strategy "
                 "wins (accelerator.py:1937-1940)");
    }
    if (version == 1) {
        const struct yt_node *bp = get(f, "fsdp_backward_prefetch", &kn);
        const char *p = !bp                                              ? "none"
                        : imp_is(bp, "BACKWARD_PRE") || imp_is(bp, "1")  ? "backward_pre"
                        : imp_is(bp, "BACKWARD_POST") || imp_is(bp, "2") ? "backward_post"
                        : imp_is(bp, "NO_PREFETCH") || imp_is(bp, "3")   ? "none"
                                                                         : NULL;
        if (!p)
            return imp_error(c->im, bp,
                             "fsdp_backward_prefetch '%s' is not BACKWARD_PRE, "
                             "BACKWARD_POST or NO_PREFETCH",
                             imp_str(bp) ? imp_str(bp) : "");
        imp_put(c->im, "fsdp.backward_prefetch", p,
                bp ? from(c, "fsdp_config", kn)
                   : "fsdp_backward_prefetch absent: not exported, no prefetch "
                     "(utils/dataclasses.py:1884-1893)");
        if (fsdp_bool(c, f, "fsdp_forward_prefetch", false, &b, &kn))
            return -1;
        if (b)
            imp_put(c->im, "fsdp.forward_prefetch", "true", from(c, "fsdp_config", kn));
    } else if (fsdp_bool(c, f, "fsdp_forward_prefetch", false, &b, &kn) || b) {
        return b ? imp_error(c->im, kn,
                             "fsdp_forward_prefetch with FSDP2 (accelerate refuses "
                             "it: utils/dataclasses.py:1947-1948)")
                 : -1;
    }
    if (fsdp_bool(c, f, "fsdp_offload_params", false, &b, &kn))
        return -1;
    if (b)
        imp_put(c->im, "training.offload", "params", from(c, "fsdp_config", kn));
    if (fsdp_bool(c, f, "fsdp_activation_checkpointing", false, &b, &kn))
        return -1;
    imp_put(c->im, "training.recompute", b ? "full" : "none",
            kn ? from(c, "fsdp_config", kn)
               : "fsdp_activation_checkpointing absent: false (commands/launch.py:599-604)");
    v = get(f, "fsdp_auto_wrap_policy", &kn);
    if (!v || imp_is(v, "NO_WRAP"))
        return imp_error(c->im, v ? v : NULL,
                         "%s: the whole model is one FSDP unit (NO_WRAP, "
                         "utils/dataclasses.py:1901-1928): not modelled; simtrain shards per "
                         "decoder layer (TRANSFORMER_BASED_WRAP)",
                         v ? "fsdp_auto_wrap_policy NO_WRAP" : "no fsdp_auto_wrap_policy");
    if (imp_is(v, "SIZE_BASED_WRAP"))
        imp_note(c->im, FATE_APPROX, kn, "SIZE_BASED_WRAP units timed as one per decoder layer");
    v = get(f, "fsdp_transformer_layer_cls_to_wrap", &kn);
    if (imp_str(v) && imp_check_wrap(c->im, kn, "fsdp_transformer_layer_cls_to_wrap", imp_str(v)))
        return -1;
    for (size_t i = 0; i < f->count; i++) {
        const char *k = f->pairs[i].key->text;
        if (strcmp(k, "fsdp_limit_all_gathers") == 0 || strcmp(k, "fsdp_use_orig_params") == 0 ||
            strcmp(k, "fsdp_cpu_ram_efficient_loading") == 0 ||
            strcmp(k, "fsdp_sync_module_states") == 0 || strcmp(k, "fsdp_state_dict_type") == 0 ||
            strcmp(k, "fsdp_ignored_modules") == 0 || strcmp(k, "fsdp_min_num_params") == 0)
            imp_note(c->im, FATE_IGNORED, f->pairs[i].key,
                     "fsdp_config.%s: loading, saving or a launcher default with no step cost", k);
    }
    return 0;
}

/* ---- DeepSpeed ------------------------------------------------------------------------------ */

static int deepspeed(struct acc *c)
{
    const struct yt_node *d = get(c->root, "deepspeed_config", NULL), *fk = NULL, *file;
    struct ds_trainer tr = { .name = "accelerate", .force_cpu_adam_ok = true };
    const struct imp_file *f;
    const char *path, *tried;
    bool cwd;

    tr.precision = c->precision && strcmp(c->precision, "fp8") == 0 ? "bf16" : c->precision;
    file = d ? get(d, "deepspeed_config_file", &fk) : NULL;
    if (!imp_str(file))
        return imp_error(c->im, d,
                         "distributed_type DEEPSPEED without a deepspeed_config_file: "
                         "the inline zero_stage settings are not modelled");
    for (size_t i = 0; i < d->count; i++)
        if (strcmp(d->pairs[i].key->text, "deepspeed_config_file") != 0)
            imp_note(c->im, FATE_IGNORED, d->pairs[i].key, "deepspeed_config.%s: %s",
                     d->pairs[i].key->text,
                     strcmp(d->pairs[i].key->text, "zero3_init_flag") == 0
                         ? "deepspeed.zero.Init at load (memory at load only)"
                         : "launcher");
    path = imp_resolve_path(c->im, imp_str(file), c->f, &tried, &cwd);
    if (!path)
        return imp_error(c->im, file,
                         "DeepSpeed config '%s' not found: accelerate opens it relative to the "
                         "training process's working directory (utils/launch.py:580-581); tried "
                         "%s",
                         imp_str(file), tried);
    imp_note(c->im, FATE_NOTE, file,
             cwd ? "deepspeed_config_file '%s' read relative to the working directory, as "
                   "accelerate opens it"
                 : "deepspeed_config_file '%s' read beside the YAML; accelerate itself opens it "
                   "relative to the working directory only",
             path);
    f = imp_read(c->im, path, "DeepSpeed config, deepspeed_config_file", true);
    if (!f || imp_from_set(c->im, "training.seq_len", "sequence length (the script's)"))
        return -1;
    return imp_deepspeed(c->im, f, &tr);
}

/* ---- the import ------------------------------------------------------------------------- */

static int training_from_set(struct acc *c)
{
    return imp_from_set(c->im, "training.seq_len", "sequence length (the script's)") ||
                   imp_from_set(c->im, "training.micro_batch", "micro-batch (the script's)") ||
                   imp_from_set(c->im, "training.global_batch",
                                "global batch (the script's: micro-batch x accumulation x dp)")
               ? -1
               : 0;
}

int imp_accelerate(struct imp *im)
{
    struct acc c = { .im = im };
    const struct yt_node *dk = NULL, *dt, *u;
    const char *t;
    bool single, cpu = false;

    c.f = imp_read(im, im->rq->files[0], "accelerate config", false);
    if (!c.f)
        return -1;
    c.root = c.f->doc->root;
    if (check_keys(&c))
        return -1;
    dt = get(c.root, "distributed_type", &dk);
    if (!(t = imp_str(dt)))
        return imp_error(im, NULL,
                         "%s: no distributed_type (accelerate requires it: "
                         "config_args.py:102-126)",
                         c.f->path);
    if ((u = get(c.root, "use_cpu", NULL)) && imp_bool(im, u, &cpu))
        return -1;
    if (cpu)
        return imp_error(im, u, "use_cpu: training on the CPU is not modelled");
    if (!im->rq->model_config)
        return imp_error(im, NULL,
                         "an accelerate config has no model: pass its config.json with "
                         "--model-config");
    single = strcmp(t, "NO") == 0;
    if (imp_model_config(im, NULL, NULL) || processes(&c, single) || precision(&c) || fp8(&c))
        return -1;
    imp_put(im, "training.model_code", "hf",
            "a Hugging Face model (--model-config): transformers' modules");
    imp_put_framework(im, "hf", "the HF Trainer / accelerate profile");
    if ((u = get(c.root, "dynamo_config", &dk)) && u->kind == YT_MAP && u->count &&
        !imp_is(imp_get_key(u, "dynamo_backend", NULL), "no") &&
        !imp_is(imp_get_key(u, "dynamo_backend", NULL), "NO"))
        imp_note(im, FATE_DROPPED, dk, "dynamo_config: torch.compile is not modelled");
    dk = NULL;
    get(c.root, "distributed_type", &dk);
    if (strcmp(t, "DEEPSPEED") == 0)
        return deepspeed(&c);
    put_precision(&c);
    if (training_from_set(&c))
        return -1;
    if (strcmp(t, "FSDP") == 0)
        return fsdp(&c);
    if (strcmp(t, "MEGATRON_LM") == 0)
        return imp_error(im, dt,
                         "distributed_type MEGATRON_LM: import the script's Megatron-LM "
                         "arguments with `simtrain import megatron`");
    if (strcmp(t, "XLA") == 0 || strcmp(t, "MULTI_CPU") == 0)
        return imp_error(im, dt, "distributed_type %s is not a GPU run", t);
    if (!single && strcmp(t, "MULTI_GPU") != 0)
        imp_note(im, FATE_APPROX, dk,
                 "distributed_type %s: another device kind, timed as DDP on the --hardware GPUs",
                 t);
    imp_put(im, "parallelism.sharding", "none",
            single ? from(&c, NULL, dk) : imp_fmt(im, "%s: DDP", from(&c, NULL, dk)));
    imp_put(im, "parallelism.framework", "pytorch", "PyTorch DDP through accelerate");
    if (get(c.root, "fsdp_config", NULL) || get(c.root, "parallelism_config", NULL))
        imp_note(im, FATE_IGNORED, NULL,
                 "fsdp_config and parallelism_config apply with distributed_type FSDP only");
    return 0;
}
