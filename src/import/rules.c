/*
 * rules.c - rules the importers share: bf16 on the --hardware GPU, the cluster from --gpus,
 * paths named inside configs, the decoder class of the model (accelerate's FSDP wrap check).
 */
#define _POSIX_C_SOURCE 200809L /* stat() */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "import/import_internal.h"

bool imp_hw_bf16(const struct imp *im)
{
    /* torch.cuda.is_bf16_supported(): compute capability >= 8.0 (Ampere and later) */
    return im->hw && im->hw->gpu.arch >= ARCH_AMPERE && im->hw->gpu.flops[DT_BF16] > 0;
}

int imp_gpus(const struct imp *im)
{
    const char *g = imp_get(im, "cluster.gpus");

    return g ? atoi(g) : im->rq->gpus > 0 ? im->rq->gpus : 1;
}

int imp_cluster(struct imp *im, int deflt, const struct yt_node *from, const char *why)
{
    int gpus = im->rq->gpus > 0 ? im->rq->gpus : deflt, gpn = im->hw ? im->hw->gpus_per_node : 1;
    const char *comment;

    if (gpus <= 0)
        return imp_error(im, NULL, "the %s does not say how many GPUs run it: pass --gpus",
                         im->files[0].role);
    if (im->rq->gpus > 0 && deflt > 0 && deflt != im->rq->gpus)
        return imp_error(im, from, "%s says %d GPU%s but --gpus is %d", why, deflt,
                         deflt == 1 ? "" : "s", im->rq->gpus);
    comment = im->rq->gpus > 0
                  ? (from ? imp_fmt(im, "--gpus (= %s %s)", imp_at(im, from), why) : "--gpus")
                  : imp_fmt(im, "%s %s", imp_at(im, from), why);
    if (gpus > gpn) {
        if (gpus % gpn)
            return imp_error(im, from,
                             "%d GPUs are not a whole number of '%s' nodes (%d GPUs each)", gpus,
                             im->hw->name, gpn);
        imp_putf(im, "cluster.nodes",
                 imp_fmt(im, "%d GPUs / %d per node of %s", gpus, gpn, im->hw->name), "%d",
                 gpus / gpn);
    } else {
        imp_put(im, "cluster.nodes", "1",
                imp_fmt(im, "%d GPU%s of one %s node", gpus, gpus == 1 ? "" : "s",
                        im->hw ? im->hw->name : "hardware"));
    }
    imp_putf(im, "cluster.gpus", comment, "%d", gpus);
    return 0;
}

static bool is_file(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *imp_resolve_path(struct imp *im, const char *name, const struct imp_file *from,
                             const char **tried, bool *from_cwd)
{
    const char *slash = strrchr(from->path, '/');
    const char *beside;

    *from_cwd = true;
    if (name[0] == '/' || is_file(name)) {
        *tried = imp_fmt(im, "'%s'", name);
        return is_file(name) ? name : NULL;
    }
    beside = slash ? imp_fmt(im, "%.*s/%s", (int)(slash - from->path), from->path, name) : name;
    *tried = imp_fmt(im, "'%s' (from the working directory) and '%s' (beside %s)", name, beside,
                     from->path);
    if (slash && is_file(beside)) {
        *from_cwd = false;
        return beside;
    }
    return NULL;
}

/*
 * Is `name` a class inside the decoder layer `decoder` ("MixtralDecoderLayer"): the model's
 * prefix and the suffix of a submodule Hugging Face's decoder layers hold (attention, MLP,
 * MoE block and experts, norms)?
 */
static bool submodule_of(const char *name, size_t len, const char *decoder)
{
    static const char *const suffix[] = {
        "Attention",          "SdpaAttention", "FlashAttention2", "MLP",       "SparseMoeBlock",
        "BlockSparseTop2MLP", "Experts",       "RMSNorm",         "LayerNorm",
    };
    const char *end = strstr(decoder, "DecoderLayer");
    size_t plen = end ? (size_t)(end - decoder) : 0;

    if (!plen || len <= plen || strncmp(name, decoder, plen) != 0)
        return false;
    for (size_t i = 0; i < ARRAY_LEN(suffix); i++)
        if (strlen(suffix[i]) == len - plen && strncmp(name + plen, suffix[i], len - plen) == 0)
            return true;
    return false;
}

enum imp_wrap imp_wrap_class(struct imp *im, const char *cls, const char **bad)
{
    enum imp_wrap w = WRAP_DECODER;
    const char *p = cls;

    *bad = NULL;
    if (!im->model.known || !im->model.decoder)
        return WRAP_DECODER;
    while (*p) { /* accelerate splits the names at commas and looks for each in the model */
        size_t len = strcspn(p, ","), lead = strspn(p, " ");
        const char *name = p + lead;
        size_t n = len > lead ? len - lead : 0;

        while (n && name[n - 1] == ' ')
            n--;
        if (n == strlen(im->model.decoder) && strncmp(name, im->model.decoder, n) == 0)
            ;
        else if (submodule_of(name, n, im->model.decoder))
            w = WRAP_SUBMODULE;
        else {
            *bad = imp_fmt(im, "%.*s", (int)n, name);
            return WRAP_NONE;
        }
        p += len + (p[len] == ',');
    }
    return w;
}

const char *imp_set_value(const struct imp *im, const char *key)
{
    const char *v = NULL;

    for (int i = 0; i < im->rq->nsets; i++) /* the last one wins, as the loader applies them */
        if (strcmp(im->rq->sets[i].key, key) == 0)
            v = im->rq->sets[i].value;
    return v;
}

int imp_from_set(struct imp *im, const char *key, const char *what)
{
    const char *v = imp_set_value(im, key);

    if (!v)
        return imp_error(im, NULL, "%s gives no %s: pass --set %s=VALUE", im->files[0].path, what,
                         key);
    imp_put(im, key, v, imp_fmt(im, "--set %s=%s (not in the sources)", key, v));
    return 0;
}

/*
 * A bare config.json says nothing of the training: without --set, simtrain's stated defaults
 * for it (docs/import.md, "A bare config.json"): sequences of 4096 tokens (the model's
 * max_position_embeddings when shorter), micro-batch 1, and one micro-batch per GPU per step
 * (global batch = GPUs x micro-batch), as `accelerate estimate-memory` answers for a bare model.
 */
#define HF_DEFAULT_SEQ 4096

int imp_training_defaults(struct imp *im)
{
    const char *max = imp_get(im, "workload.max_seq");
    int seq = HF_DEFAULT_SEQ, micro = 1, gpus;

    if (imp_cluster(im, 0, NULL, NULL))
        return -1;
    gpus = imp_gpus(im);
    if (max && atoi(max) > 0 && atoi(max) < seq)
        seq = atoi(max);
    if (imp_set_value(im, "training.micro_batch")) {
        if (imp_from_set(im, "training.micro_batch", "micro-batch"))
            return -1;
        micro = atoi(imp_get(im, "training.micro_batch"));
    }
    if (imp_set_value(im, "training.seq_len")) {
        if (imp_from_set(im, "training.seq_len", "sequence length"))
            return -1;
    } else {
        imp_putf(im, "training.seq_len",
                 imp_fmt(im, "default for a bare config.json: %d tokens%s (docs/import.md)", seq,
                         seq < HF_DEFAULT_SEQ ? " = max_position_embeddings" : ""),
                 "%d", seq);
        imp_note(im, FATE_NOTE, NULL,
                 "training.seq_len %d: a bare config.json gives no sequence length; "
                 "--set training.seq_len=VALUE for another",
                 seq);
    }
    if (imp_set_value(im, "training.global_batch")) {
        if (imp_from_set(im, "training.global_batch", "global batch (sequences per step)"))
            return -1;
    } else if (micro > 0 && gpus <= INT32_MAX / micro) {
        imp_putf(im, "training.global_batch",
                 imp_fmt(im,
                         "default for a bare config.json: %d GPU%s x micro-batch %d, one "
                         "micro-batch per step (docs/import.md)",
                         gpus, gpus == 1 ? "" : "s", micro),
                 "%d", gpus * micro);
        imp_note(im, FATE_NOTE, NULL,
                 "training.global_batch %d: a bare config.json gives no batch; "
                 "--set training.global_batch=VALUE for another",
                 gpus * micro);
    }
    imp_put(im, "training.model_code", "hf", "a Hugging Face model: transformers' modules");
    imp_put_framework(im, "hf", "a Hugging Face model");
    return 0;
}

int imp_check_wrap(struct imp *im, const struct yt_node *at, const char *key, const char *cls)
{
    const char *bad = NULL;
    enum imp_wrap w = imp_wrap_class(im, cls, &bad);

    if (w == WRAP_NONE)
        return imp_error(im, at,
                         "%s '%s' is not a class of this %s model (its decoder layer is %s): "
                         "accelerate raises \"Could not find the transformer layer class %s in "
                         "the model\" (utils/dataclasses.py:2074-2078)",
                         key, bad, im->model.type, im->model.decoder, bad);
    if (w == WRAP_SUBMODULE)
        imp_note(im, FATE_APPROX, at,
                 "%s '%s' wraps modules inside the decoder layer: timed as one FSDP unit per "
                 "decoder layer",
                 key, cls);
    return 0;
}
