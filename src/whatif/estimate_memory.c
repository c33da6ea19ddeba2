/*
 * estimate_memory.c - peak memory per pipeline stage for the closed-form
 * estimate (estimate.h): model states with the sharding factors of
 * memory.c, gathered parameters of ZeRO-3 / FSDP, communication buffers, the
 * activations of the micro-batches in flight from the stage's schedule, the
 * logits on the last stage and the fixed overhead.
 */
#include "whatif/estimate_internal.h"

bool est_gathers_per_layer(enum sharding sh)
{
    return sh == SHARD_ZERO3 || sh == SHARD_FSDP || sh == SHARD_FSDP_GRAD_OP || sh == SHARD_HSDP;
}

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

/* DeepSpeed's gradient buckets (zero.c; DS config defaults, formulas.md §2.3). */
static double zero_buffers(const struct cand *c)
{
    const struct scenario *s = c->s;
    enum sharding sh = s->par.sharding;
    bool ds = scenario_framework(s) == FW_DEEPSPEED;
    double pb = dtype_bytes(s->train.precision) < 2 ? 2 : dtype_bytes(s->train.precision);

    if (c->dp_g.nranks <= 1 || !s->zero.contiguous_gradients)
        return 0;
    if (sh == SHARD_ZERO3)
        return s->zero.reduce_bucket_size * pb;
    if ((sh == SHARD_ZERO1 && ds) || sh == SHARD_ZERO2)
        return (s->zero.overlap_comm ? 2 : 1) * s->zero.reduce_bucket_size * pb;
    return 0;
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
    enum recompute rc = s->train.recompute;
    double total = 0;

    est_stage_roles(c, st, &roles);
    memory_state_bytes(s, &sb);
    memory_model_states(s, &roles, &c->f, mem);
    if (est_gathers_per_layer(s->par.sharding)) {
        int layers = st->dense + st->moe > 0 ? st->dense + st->moe : 1;
        double unit = st->params / layers * dtype_bytes(s->fsdp.param_dtype);
        /* SHARD_GRAD_OP keeps every unit gathered from forward to backward; the others keep the
         * current unit and the prefetched one (PyTorch limit_all_gathers; formulas.md §3.3). */
        mem[MC_GATHERED] = s->par.sharding == SHARD_FSDP_GRAD_OP ? unit * layers : 2 * unit;
    }
    mem[MC_COMM] = zero_buffers(c);
    if (s->par.sharding == SHARD_NONE)
        mem[MC_COMM] += memory_ddp_bucket_bytes(s, roles.trainable * sb.grads);
    mem[MC_ACT] = prof.max_layers * st->act / v +
                  memory_qlora_retained_bytes(s, st->dense + st->moe); /* the last micro-batch */
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
