/*
 * validate_internal.h - what validate.c (evaluating the rows, statistics) and validate_row.c
 * (reading one row of a runs file into a scenario) share beyond validate.h, private to
 * src/fit/: the columns of the runs format (docs/runs-format.md) and the header checks.
 */
#ifndef SIMTRAIN_VALIDATE_INTERNAL_H
#define SIMTRAIN_VALIDATE_INTERNAL_H

#include "fit/validate.h"

/* The columns of the runs format, indices into validate_find_columns()'s array. */

enum col {
    C_ID,
    C_SOURCE,
    C_HARDWARE,
    C_NUM_GPUS,
    C_LAYERS,
    C_HIDDEN,
    C_HEADS,
    C_KV_HEADS,
    C_FFN_HIDDEN,
    C_VOCAB,
    C_FFN_ACT,
    C_MOE_EXPERTS,
    C_MOE_TOPK,
    C_SEQ_LEN,
    C_GLOBAL_BATCH,
    C_MICRO_BATCH,
    C_DP,
    C_TP,
    C_PP,
    C_VPP,
    C_CP,
    C_EP,
    C_SHARDING,
    C_SEQUENCE_PARALLEL,
    C_RECOMPUTE,
    C_PRECISION,
    C_ATTENTION,
    C_FRAMEWORK,
    C_FRAMEWORK_VERSION,
    C_METRIC,
    C_VALUE,
    C_NORM,
    C_POSITION,
    C_BIAS,
    C_DROPOUT,
    C_TIED,
    C_FINETUNE,
    C_LORA_RANK,
    C_LORA_TARGETS,
    C_LORA_DOUBLE_QUANT,
    C_LORA_PAGED,
    C_OFFLOAD,
    C_OPTIMIZER,
    C_MASTER_WEIGHTS,
    C_GRAD_DTYPE,
    C_OVERHEAD,
    C_LORA_DROPOUT,
    C_DDP_IMPL,
    C_FSDP_REDUCE_DTYPE,
    C_MODEL_CODE,
    C_ATTENTION_IMPL,
    C_FRAGMENTATION,
    C_SET,
    C_COUNT
};

/* The index of each column of `t` into col[C_COUNT], -1 where the header lacks it. */
void validate_find_columns(const struct csv_table *t, int *col);

/* 0 when every required column is present; else -1, each missing one printed to `diag`. */
int validate_check_header(const struct csv_table *t, const int *col, FILE *diag);

#endif
