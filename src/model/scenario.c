/*
 * scenario.c - the rules that follow from a scenario's settings alone: which
 * training software runs it and whose model code runs its layers.
 */
#include "model/scenario.h"

enum framework scenario_framework(const struct scenario *s)
{
    const struct parallelism *p = &s->par;
    enum sharding sh = p->sharding;

    if (p->framework != FW_AUTO)
        return p->framework;
    if (p->tp > 1 || p->pp > 1 || p->cp > 1 || p->ep > 1)
        return FW_MEGATRON;
    if (sh == SHARD_ZERO1 || sh == SHARD_ZERO2 || sh == SHARD_ZERO3)
        return FW_DEEPSPEED;
    return FW_PYTORCH;
}

enum model_code scenario_model_code(const struct scenario *s)
{
    enum framework fw = scenario_framework(s);

    if (s->train.model_code != CODE_AUTO)
        return s->train.model_code;
    if (fw == FW_MEGATRON)
        return CODE_MEGATRON;
    if (fw == FW_DEEPSPEED && s->train.finetune != FT_FULL)
        return CODE_HF;
    return CODE_LITGPT;
}

bool scenario_megatron_ddp(const struct scenario *s)
{
    if (s->ddp.impl != DDP_IMPL_AUTO)
        return s->ddp.impl == DDP_IMPL_MEGATRON;
    return scenario_framework(s) == FW_MEGATRON;
}
