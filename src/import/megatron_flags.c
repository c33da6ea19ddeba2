/*
 * megatron_flags.c - the flags of a Megatron-LM / NeMo 1 argument file matched to the ones
 * simtrain reads (the table, NeMo's names beside) for the translation (megatron.c): a flag's
 * value is the word after it or after its `=`, the last one given wins as in argparse; flags
 * of data, logging, checkpoints and the LR schedule are listed as ignored; a flag close to a
 * known one is refused as a misspelling with a did-you-mean (argparse runs with
 * allow_abbrev=False, arguments.py:91-92), and any other is listed. The launcher before the
 * script (torchrun's --nproc_per_node and --nnodes) gives the GPU count.
 */
#include <string.h>

#include "import/megatron_internal.h"

enum mk {
    MK_FLAG, /* store_true (store_false for the disable flags) */
    MK_VAL   /* takes a value */
};

/* The flags read; NeMo's names beside (model.* and trainer.*). */
static const struct meg_flag {
    const char *name, *nemo;
    enum mk kind;
} flags[] = {
    { "num-layers", "model.num_layers", MK_VAL },
    { "hidden-size", "model.hidden_size", MK_VAL },
    { "ffn-hidden-size", "model.ffn_hidden_size", MK_VAL },
    { "num-attention-heads", "model.num_attention_heads", MK_VAL },
    { "kv-channels", "model.kv_channels", MK_VAL },
    { "group-query-attention", NULL, MK_FLAG },
    { "num-query-groups", "model.num_query_groups", MK_VAL },
    { "seq-length", NULL, MK_VAL },
    { "encoder-seq-length", "model.encoder_seq_length", MK_VAL },
    { "max-position-embeddings", "model.max_position_embeddings", MK_VAL },
    { "position-embedding-type", "model.position_embedding_type", MK_VAL },
    { "use-rotary-position-embeddings", NULL, MK_FLAG },
    { "normalization", "model.normalization", MK_VAL },
    { "swiglu", NULL, MK_FLAG },
    { "squared-relu", NULL, MK_FLAG },
    { "activation", "model.activation", MK_VAL },
    { "disable-bias-linear", NULL, MK_FLAG },
    { "bias", "model.bias", MK_VAL },
    { "add-qkv-bias", NULL, MK_FLAG },
    { "untie-embeddings-and-output-weights", NULL, MK_FLAG },
    { "share-embeddings-and-output-weights", "model.share_embeddings_and_output_weights", MK_VAL },
    { "attention-dropout", "model.attention_dropout", MK_VAL },
    { "hidden-dropout", "model.hidden_dropout", MK_VAL },
    { "vocab-size", NULL, MK_VAL },
    { "padded-vocab-size", NULL, MK_VAL },
    { "make-vocab-size-divisible-by", "model.make_vocab_size_divisible_by", MK_VAL },
    { "tokenizer-type", NULL, MK_VAL },
    { "micro-batch-size", "model.micro_batch_size", MK_VAL },
    { "global-batch-size", "model.global_batch_size", MK_VAL },
    { "rampup-batch-size", NULL, MK_VAL },
    { "train-iters", NULL, MK_VAL },
    { "train-samples", NULL, MK_VAL },
    { "tensor-model-parallel-size", "model.tensor_model_parallel_size", MK_VAL },
    { "pipeline-model-parallel-size", "model.pipeline_model_parallel_size", MK_VAL },
    { "num-layers-per-virtual-pipeline-stage", NULL, MK_VAL },
    { "num-virtual-stages-per-pipeline-rank", "model.virtual_pipeline_model_parallel_size",
      MK_VAL },
    { "decoder-first-pipeline-num-layers", NULL, MK_VAL },
    { "decoder-last-pipeline-num-layers", NULL, MK_VAL },
    { "pipeline-model-parallel-layout", NULL, MK_VAL },
    { "account-for-embedding-in-pipeline-split", NULL, MK_FLAG },
    { "account-for-loss-in-pipeline-split", NULL, MK_FLAG },
    { "context-parallel-size", "model.context_parallel_size", MK_VAL },
    { "cp-comm-type", NULL, MK_VAL },
    { "sequence-parallel", "model.sequence_parallel", MK_FLAG },
    { "tp-comm-overlap", NULL, MK_FLAG },
    { "use-distributed-optimizer", NULL, MK_FLAG },
    { "overlap-grad-reduce", NULL, MK_FLAG },
    { "overlap-param-gather", NULL, MK_FLAG },
    { "ddp-bucket-size", NULL, MK_VAL },
    { "bf16", NULL, MK_FLAG },
    { "fp16", NULL, MK_FLAG },
    { "precision", "trainer.precision", MK_VAL },
    { "grad-reduce-in-bf16", NULL, MK_FLAG },
    { "accumulate-allreduce-grads-in-fp32", NULL, MK_FLAG },
    { "fp8-format", NULL, MK_VAL },
    { "fp8-recipe", NULL, MK_VAL },
    { "fp8-param-gather", NULL, MK_FLAG },
    { "transformer-impl", NULL, MK_VAL },
    { "use-flash-attn", "model.use_flash_attention", MK_FLAG },
    { "attention-backend", NULL, MK_VAL },
    { "recompute-activations", NULL, MK_FLAG },
    { "recompute-granularity", "model.activations_checkpoint_granularity", MK_VAL },
    { "recompute-method", "model.activations_checkpoint_method", MK_VAL },
    { "recompute-num-layers", "model.activations_checkpoint_num_layers", MK_VAL },
    { "recompute-modules", NULL, MK_VAL },
    { "no-gradient-accumulation-fusion", NULL, MK_FLAG },
    { "gradient-accumulation-fusion", "model.gradient_accumulation_fusion", MK_VAL },
    { "cross-entropy-loss-fusion", NULL, MK_FLAG },
    { "num-experts", NULL, MK_VAL },
    { "moe-router-topk", NULL, MK_VAL },
    { "moe-ffn-hidden-size", NULL, MK_VAL },
    { "moe-shared-expert-intermediate-size", NULL, MK_VAL },
    { "moe-layer-freq", NULL, MK_VAL },
    { "moe-expert-capacity-factor", NULL, MK_VAL },
    { "expert-model-parallel-size", NULL, MK_VAL },
    { "expert-tensor-parallel-size", NULL, MK_VAL },
    { "moe-grouped-gemm", NULL, MK_FLAG },
    { "moe-token-dispatcher-type", NULL, MK_VAL },
    { "multi-latent-attention", NULL, MK_FLAG },
    { "q-lora-rank", NULL, MK_VAL },
    { "kv-lora-rank", NULL, MK_VAL },
    { "mtp-num-layers", NULL, MK_VAL },
    { "qk-layernorm", NULL, MK_FLAG },
    { "optimizer", NULL, MK_VAL },
    { "use-precision-aware-optimizer", NULL, MK_FLAG },
    { "optimizer-cpu-offload", NULL, MK_FLAG },
    { "use-torch-fsdp2", NULL, MK_FLAG },
    { "devices", "trainer.devices", MK_VAL },
    { "num-nodes", "trainer.num_nodes", MK_VAL },
    { "megatron-amp-O2", "model.megatron_amp_O2", MK_VAL },
};

/* Flags with no effect on step memory or time (data, logging, checkpoints, LR schedule). */
static const char *const free_flags[] = {
    "data-path",
    "split",
    "lr",
    "min-lr",
    "lr-decay-style",
    "lr-warmup-iters",
    "lr-warmup-fraction",
    "lr-warmup-samples",
    "lr-decay-iters",
    "lr-decay-samples",
    "weight-decay",
    "clip-grad",
    "adam-beta1",
    "adam-beta2",
    "adam-eps",
    "init-method-std",
    "save",
    "load",
    "save-interval",
    "eval-interval",
    "eval-iters",
    "log-interval",
    "tensorboard-dir",
    "seed",
    "num-workers",
    "distributed-backend",
    "tokenizer-model",
    "vocab-file",
    "merge-file",
    "data-cache-path",
    "no-mmap-bin-files",
    "log-throughput",
    "log-params-norm",
    "log-num-zeros-in-grad",
    "log-timers-to-tensorboard",
    "log-validation-ppl-to-tensorboard",
    "wandb-project",
    "wandb-exp-name",
    "wandb-save-dir",
    "exit-interval",
    "exit-duration-in-mins",
    "timing-log-level",
    "distributed-timeout-minutes",
    "no-load-optim",
    "no-load-rng",
    "finetune",
    "use-mcore-models",
    "use-checkpoint-args",
    "ckpt-format",
    "no-create-attention-mask-in-dataloader",
    "manual-gc",
    "manual-gc-interval",
    "tensorboard-log-interval",
    "log-memory-to-tensorboard",
    "use-dist-ckpt",
    "dist-ckpt-format",
    "async-save",
    "rotary-base",
    "rotary-percent",
    "rope-scaling-factor",
    "use-rope-scaling",
    "norm-epsilon",
    "layernorm-epsilon",
    "apply-layernorm-1p",
    "no-masked-softmax-fusion",
    "no-bias-gelu-fusion",
    "no-bias-swiglu-fusion",
    "no-bias-dropout-fusion",
    "no-rope-fusion",
    "bias-dropout-fusion",
    "attention-softmax-in-fp32",
    "reset-position-ids",
    "reset-attention-mask",
    "eod-mask-loss",
    "no-async-tensor-model-parallel-allreduce",
    "hysteresis",
    "loss-scale",
    "initial-loss-scale",
    "min-loss-scale",
    "loss-scale-window",
    "train-data-path",
    "valid-data-path",
    "test-data-path",
    "mock-data",
    "overlap-p2p-communication",
    "defer-embedding-wgrad-compute",
    "microbatch-group-size-per-virtual-pipeline-stage",
    "tp-comm-overlap-cfg",
};

_Static_assert(ARRAY_LEN(flags) == MEG_NFLAGS, "MEG_NFLAGS counts the flag table");

int meg_flag_index(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(flags); i++)
        if (strcmp(flags[i].name, name) == 0)
            return (int)i;
    return -1;
}

static const struct meg_flag *find(const char *name, size_t len, bool nemo)
{
    for (size_t i = 0; i < ARRAY_LEN(flags); i++) {
        const char *n = nemo ? flags[i].nemo : flags[i].name;
        if (n && strlen(n) == len && strncmp(n, name, len) == 0)
            return &flags[i];
    }
    return NULL;
}

static bool is_free(const char *name, size_t len)
{
    for (size_t i = 0; i < ARRAY_LEN(free_flags); i++)
        if (strlen(free_flags[i]) == len && strncmp(free_flags[i], name, len) == 0)
            return true;
    return false;
}

/* A flag simtrain does not know: a misspelling of one it knows is refused, else listed. */
static int unknown(struct meg *m, const struct yt_node *w, const char *name, size_t len)
{
    const char *cands[ARRAY_LEN(flags)], *near;
    char buf[96];

    for (size_t i = 0; i < ARRAY_LEN(flags); i++)
        cands[i] = flags[i].name;
    snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
    near = diag_did_you_mean(buf, cands, ARRAY_LEN(flags));
    if (near)
        return imp_error(m->im, w,
                         "unknown flag '--%s' (did you mean '--%s'?; Megatron's "
                         "argparse takes no abbreviations)",
                         buf, near);
    imp_note(m->im, FATE_DROPPED, w, "--%s: not a flag simtrain's Megatron reader knows", buf);
    return 0;
}

/* The launcher before the script: torchrun's --nproc_per_node and --nnodes. */
static size_t launcher(struct meg *m, const struct meg_args *a)
{
    size_t script = a->n;
    long long per = 0, nodes = 1;

    for (size_t i = 0; i < a->n && script == a->n; i++) {
        size_t l = a->w[i]->len;
        if (l > 3 && strcmp(a->w[i]->text + l - 3, ".py") == 0)
            script = i;
    }
    if (script == a->n)
        return 0;
    for (size_t i = 0; i + 1 < script; i++) {
        if (strcmp(a->w[i]->text, "--nproc_per_node") == 0 ||
            strcmp(a->w[i]->text, "--nproc-per-node") == 0)
            imp_int(m->im, a->w[i + 1], 1, 1 << 20, &per);
        if (strcmp(a->w[i]->text, "--nnodes") == 0)
            imp_int(m->im, a->w[i + 1], 1, 1 << 20, &nodes);
    }
    if (per > 0) {
        m->launcher_gpus = (int)(per * nodes);
        m->launcher_at = a->w[0];
    }
    return script + 1;
}

int meg_read_flags(struct meg *m, const struct meg_args *a)
{
    size_t first = launcher(m, a);

    for (size_t i = first; i < a->n; i++) {
        const struct yt_node *w = a->w[i];
        const char *t = w->text, *eq = strchr(t, '=');
        bool dash = strncmp(t, "--", 2) == 0;
        const char *name = dash ? t + 2 : t;
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct meg_flag *f = find(name, len, !dash);
        const struct yt_node *val = NULL;

        if (!dash && !eq && i == first) { /* not an arguments file: its text is not echoed */
            struct diag_mark at = yt_mark(w);

            at.len = DIAG_NO_EXCERPT;
            diag_error(m->im->diag, at,
                       "not a file of Megatron-LM arguments: its first word is neither a --flag "
                       "nor a NeMo key=value");
            m->im->errors++;
            return -1;
        }
        if (!dash && !eq)
            return imp_error(m->im, w, "'%s' is neither a --flag nor a NeMo key=value", t);
        if (!f) {
            if ((dash && is_free(name, len)) || !dash) {
                imp_note(m->im, dash ? FATE_IGNORED : FATE_DROPPED, w, "%.*s: %s", (int)len, name,
                         dash ? "data, logging, checkpoints or schedule (no step cost)"
                              : "a NeMo key simtrain's reader does not know");
                if (dash && !eq && i + 1 < a->n && strncmp(a->w[i + 1]->text, "--", 2) != 0)
                    i++; /* its value */
                continue;
            }
            if (unknown(m, w, name, len))
                return -1;
            if (!eq && i + 1 < a->n && strncmp(a->w[i + 1]->text, "--", 2) != 0)
                i++;
            continue;
        }
        if (eq) {
            val = yt_new_scalar(&m->im->a, w->src, eq + 1, strlen(eq + 1),
                                w->off + (size_t)(eq + 1 - t), w->end);
        } else if (f->kind == MK_VAL) {
            if (i + 1 >= a->n)
                return imp_error(m->im, w, "--%s needs a value", f->name);
            val = a->w[++i];
        }
        if (m->opts[f - flags].key) {
            int line, col;

            diag_locate(m->opts[f - flags].key->src, m->opts[f - flags].key->off, &line, &col);
            return imp_error(m->im, w,
                             "--%s given twice (first at line %d:%d); argparse would keep the "
                             "last silently: give it once",
                             f->name, line, col);
        }
        m->opts[f - flags] = (struct meg_opt){ f, w, val };
    }
    return 0;
}
