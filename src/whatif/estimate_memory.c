/*
 * estimate_memory.c - peak memory per pipeline stage for the closed-form
 * estimate (estimate.h): model states with the sharding factors of
 * memory.c, gathered parameters of ZeRO-3 / FSDP, communication buffers, the
 * activations of the micro-batches in flight from the stage's schedule, the
 * logits on the last stage and the fixed overhead.
 */
#include "whatif/estimate_internal.h"

#include "strategy/rules.h"

/*
 * The parameters of a stage by role (trainable, frozen, NF4, expert): the
 * model's roles (memory.c) in the proportion of the stage's share.
 */
void est_stage_roles(const struct cand *c, const struct stage_sum *st, struct param_roles *r)
{
    double f = c->model_params > 0 ? st->params / c->model_params : 0;

    r->trainable = c->roles.trainable * f;
    r->frozen = c->roles.frozen * f;
    r->frozen_quant = c->roles.frozen_quant * f;
    r->expert = c->roles.expert * f;
}

/*
 * DeepSpeed's gradient buckets (rules_zero_bucket_bytes()). Approximation: the estimate
 * counts none without data-parallel peers, and ZeRO-1's only under framework deepspeed,
 * where the engine runs zero.c, buckets included, for every framework but Megatron.
 */
static double zero_buffers(const struct cand *c)
{
    const struct scenario *s = c->s;

    if (c->dp_g.nranks <= 1 ||
        (s->par.sharding == SHARD_ZERO1 && scenario_framework(s) != FW_DEEPSPEED))
        return 0;
    return rules_zero_bucket_bytes(s);
}

/*
 * The stage's peak is the model load when a QLoRA model under ZeRO-3 is whole
 * on the GPU before it is partitioned (memory_qlora_load_bytes()) and that
 * outweighs the step's `total`: then `mem` becomes the load's breakdown.
 */
static double load_peak(const struct scenario *s, const struct param_roles *r, double mem[MC_COUNT],
                        double total)
{
    double load = memory_qlora_load_bytes(s, r);

    if (load + s->train.overhead_bytes <= total)
        return total;
    for (int k = 0; k < MC_COUNT; k++)
        mem[k] = 0;
    mem[MC_PARAMS] = load;
    mem[MC_OVERHEAD] = s->train.overhead_bytes;
    return load + s->train.overhead_bytes;
}

double est_stage_memory(const struct cand *c, const struct stage_sum *st, int stage,
                        double mem[MC_COUNT])
{
    const struct scenario *s = c->s;
    int pp = s->par.pp, v = s->par.vpp;
    struct sched_profile prof = est_sched_profile(c->e, s, stage, c->m);
    struct param_roles roles;
    struct state_bytes sb;
    /* selective over whole blocks recomputes them as full does (rules_layer_recompute) */
    enum recompute rc = s->train.recompute == RC_SELECTIVE && s->train.selective == SEL_BLOCKS
                            ? RC_FULL
                            : s->train.recompute;
    double total = 0;

    est_stage_roles(c, st, &roles);
    memory_state_bytes(s, &sb);
    memory_model_states(s, &roles, &c->f, mem);
    if (rules_gathers_per_unit(s)) {
        int layers = st->dense + st->moe > 0 ? st->dense + st->moe : 1;
        double unit = st->params / layers * dtype_bytes(s->fsdp.param_dtype);
        /* Without a reshard after forward every unit stays gathered from forward to backward;
         * otherwise the current unit and the prefetched one (PyTorch limit_all_gathers;
         * formulas.md §3.3). */
        mem[MC_GATHERED] = rules_reshard_after_forward(s) ? 2 * unit : unit * layers;
        /* FSDP2 under pipelining accumulates each unit's gradient unsharded (fsdp.c) */
        if (rules_fsdp_pipelined(s))
            mem[MC_GRADS] += roles.trainable * dtype_bytes(s->fsdp.reduce_dtype);
    }
    mem[MC_COMM] = zero_buffers(c);
    if (s->par.sharding == SHARD_NONE)
        mem[MC_COMM] += memory_ddp_bucket_bytes(s, roles.trainable * sb.grads);
    mem[MC_ACT] = prof.max_layers * st->act / v +
                  memory_qlora_retained_bytes(s, st->dense + st->moe); /* the last micro-batch */
    if (s->train.activation_offload != ACT_OFFLOAD_NONE) /* the layer in use and the one moving */
        mem[MC_ACT] = 2 * st->act / (st->dense + st->moe > 0 ? st->dense + st->moe : 1);
    if (rc != RC_NONE)
        mem[MC_ACT] += c->ld->act[RC_NONE] - c->ld->act[rc]; /* one layer recomputed */
    mem[MC_ACT] += c->ld->bwd_transient;                     /* the layer in backward (build.c) */
    if (stage == 0)
        mem[MC_ACT] += prof.max_first * c->edge->e_act;
    if (stage == pp - 1) {
        mem[MC_ACT] += prof.max_last * c->edge->h_act;
        mem[MC_LOGITS] = prof.max_last * c->edge->h_logits + c->edge->h_transient;
    }
    mem[MC_OVERHEAD] = s->train.overhead_bytes;
    for (int k = 0; k < MC_COUNT; k++)
        total += mem[k];
    /* the caching allocator's reserve for the step's churn, within what is free (sim.c) */
    mem[MC_RESERVE] = MIN(s->train.fragmentation / (1 - s->train.fragmentation) *
                              (mem[MC_ACT] + mem[MC_LOGITS] + mem[MC_GATHERED]),
                          MAX(0, s->hw.gpu.mem_bytes - total));
    total += mem[MC_RESERVE];
    return load_peak(s, &roles, mem, total);
}
