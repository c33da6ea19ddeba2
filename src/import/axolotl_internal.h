/*
 * axolotl_internal.h - the state of one Axolotl import, shared by axolotl.c (model, batch,
 * precision, attention, adapters, optimizer, checkpointing) and axolotl_dist.c (DDP, FSDP,
 * DeepSpeed, tensor / context / expert parallelism, kernels and plugins, the key table).
 * Sources: axolotl-ai-cloud/axolotl at 067b021c8b87 (the corpus commit), src/axolotl/...,
 * cited by file and line where used. Private to src/import/.
 */
#ifndef SIMTRAIN_IMPORT_AXOLOTL_INTERNAL_H
#define SIMTRAIN_IMPORT_AXOLOTL_INTERNAL_H

#include "import/import_internal.h"

struct ax {
    struct imp *im;
    const struct imp_file *f;
    const struct yt_node *root;
    const char *used[192]; /* keys read */
    int nused;
    /* what the keys resolved to */
    const char *precision; /* "bf16", "fp16", "fp32", "fp8" */
    bool adapter, qlora, int8;
    long long micro, gas, seq;
    int tp, cp, ep, dp, gpus;
    bool fsdp, deepspeed;
    const char *optimizer; /* simtrain's name */
    const struct yt_node *optimizer_at;
    bool paged;
};

/* The value of `key` (NULL when absent or null); the key counts as read. */
const struct yt_node *ax_val(struct ax *a, const char *key);

/* The key node of `key`, or NULL. */
const struct yt_node *ax_key(struct ax *a, const char *key);

/* "file:line key" for a top-level key. */
const char *ax_from(struct ax *a, const char *key);

/* A key's boolean (false when absent); -1 on a bad value. */
int ax_bool(struct ax *a, const char *key, bool *out);

/* Distributed training, kernels and the key table (axolotl_dist.c). */
int ax_parallel(struct ax *a);
int ax_distributed(struct ax *a);
int ax_kernels(struct ax *a);
int ax_refusals(struct ax *a);

/* unfrozen_parameters: the matched share of the parameters trains (axolotl_freeze.c). */
int ax_unfrozen(struct ax *a);
void ax_list_unread(struct ax *a);

#endif
