/*
 * scenario.c - the rules that follow from a scenario's settings alone: which
 * training software runs it and whose model code runs its layers.
 */
#include "model/scenario.h"

#include <string.h>

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
    /* DeepSpeed with tensor or pipeline parallelism is Megatron-DeepSpeed: Megatron's modules */
    if (fw == FW_DEEPSPEED && (s->par.tp > 1 || s->par.pp > 1))
        return CODE_MEGATRON;
    return CODE_LITGPT;
}

bool scenario_megatron_ddp(const struct scenario *s)
{
    if (s->ddp.impl != DDP_IMPL_AUTO)
        return s->ddp.impl == DDP_IMPL_MEGATRON;
    return scenario_framework(s) == FW_MEGATRON;
}

enum fw_status fw_setting_status(const struct fw_state *fw, int i)
{
    if (fw_bit(fw->overridden, i))
        return FWS_OVERRIDDEN;
    if (!fw_bit(fw->applied, i))
        return FWS_INACTIVE;
    for (int k = i + 1; k < fw->nsettings; k++)
        if (fw_bit(fw->applied, k) && strcmp(fw->settings[k].key, fw->settings[i].key) == 0)
            return FWS_REPLACED;
    return FWS_APPLIED;
}

const char *fw_status_name(enum fw_status st)
{
    static const char *const n[] = { "applied", "overridden", "replaced", "inactive" };
    return (unsigned)st < ARRAY_LEN(n) ? n[st] : "?";
}

int fw_count(const struct fw_state *fw, enum fw_status st)
{
    int n = 0;

    for (int i = 0; i < fw->nsettings; i++) {
        bool seen = false;
        if (fw_setting_status(fw, i) != st)
            continue;
        for (int k = 0; k < i && !seen; k++)
            seen = fw_setting_status(fw, k) == st &&
                   strcmp(fw->settings[k].key, fw->settings[i].key) == 0;
        n += !seen;
    }
    return n;
}
