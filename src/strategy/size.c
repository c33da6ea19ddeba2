/*
 * size.c - the estimate of size.h: the tasks of the largest stage program, counted term by
 * term from the layout as the builders emit them (build.c per micro-batch and chunk, layer.c
 * per layer pass, ddp.c / zero.c / fsdp.c per unit and per bucket). Each term is an upper
 * bound of what its emitter adds; the sum is compared with the real programs in
 * tests/test_size.c.
 */
#include "strategy/size.h"

#include "model/memory.h"
#include "model/workload.h"
#include "strategy/rules.h"

/* The layout's switches that decide which communication a layer pass emits (layer.c). */
struct flags {
    double tp, sp, overlap, async, cp, ep; /* 0 or 1, but cp: the degree when > 1, else 0 */
};

static double one(bool v)
{
    return v ? 1 : 0;
}

static void flags_of(const struct scenario *s, struct flags *f)
{
    const struct parallelism *p = &s->par;

    f->tp = one(p->tp > 1);
    f->sp = one(p->tp > 1 && p->sequence_parallel);
    f->overlap = one(p->tp > 1 && p->tp_comm_overlap);
    f->async = one(p->tp > 1 && (p->sequence_parallel || p->tp_async_allreduce));
    f->cp = p->cp > 1 ? p->cp : 0;
    f->ep = one(p->ep > 1 && s->model.moe.experts > 0);
}

/*
 * One layer forward (part_forward of both parts): the communication points (an all-gather
 * before the column GEMM, the dispatch and combine of the experts, the cp - 1 ring steps of
 * the attention core, the closing reduction, the userbuffers exchange), the compute between
 * and beside them (an overlapped GEMM is three tasks, a ring step one), and the mark joining
 * the last reduction with the last GEMM.
 */
static double forward_tasks(const struct flags *f)
{
    double split = 0, ring = 0, extra = 0;

    for (int part = 0; part < 2; part++) {
        bool attn = part == 0;

        split += f->sp + (attn ? 0 : 2 * f->ep) + f->tp + f->overlap; /* compute between */
        ring += attn && f->cp > 0 ? f->cp - 1 : 0; /* ring steps, each beside a compute */
        extra += 3 * f->overlap + (attn ? f->cp : 0);
    }
    return split + ring + (split + 1) + extra + one(split + ring > 0);
}

/* One layer backward (part_backward of both parts, col_backward's async reduction). */
static double backward_tasks(const struct flags *f)
{
    double split = 0, ring = 0, extra = 0;

    for (int part = 0; part < 2; part++) {
        bool attn = part == 0;

        split += 3 * f->tp + (attn ? 0 : 2 * f->ep) + 2 * f->overlap;
        ring += attn ? f->cp : 0; /* cp - 1 steps and the last dK/dV home */
        extra += 3 * f->overlap + (attn ? f->cp : 0) + f->async;
    }
    return split + ring + (split + 2) + extra + one(split + ring > 0);
}

/*
 * Tasks of one layer in one micro-batch: its passes and what the recomputation adds. Not the
 * host's issue tasks (layer.c em_host()): one per pass where the host is not hidden behind the
 * GPU (build.c host_hidden()), i.e. on layers of a few GPU tasks too small for any limit.
 */
static double layer_pass_tasks(const struct scenario *s)
{
    struct flags f;
    double fwd, bwd, n;

    flags_of(s, &f);
    fwd = forward_tasks(&f);
    bwd = backward_tasks(&f);
    n = fwd + bwd;
    if (s->train.recompute == RC_FULL)
        n += fwd;
    else if (s->train.recompute == RC_SELECTIVE)
        n += 1;
    if (s->par.schedule == SCHED_ZB_H1) {
        /* A W pass: per part a re-gather under SP and a GEMM, twice, and the mark after it;
         * a stage splits p of its m backwards at most (schedule.c). */
        double m = (double)s->train.global_batch / ((double)s->train.micro_batch * s->par.dp);
        n += (2 * (2 * f.sp + 2) + 1) * (m > s->par.pp ? s->par.pp / m : 1);
    }
    return n;
}

/*
 * Tasks a data-parallel strategy adds per unit and micro-batch, besides its buckets: DDP's
 * gradient accumulation; ZeRO-3's gathers per weight tensor (at most four) before forward,
 * backward and a recomputation, with their marks (in the 2021 path four tasks each: fill,
 * views, gather, copy-out) and its reductions per tensor; FSDP's gathers, reduce-scatter,
 * copies and frees.
 */
static double dp_unit_tasks(const struct scenario *s)
{
    switch (rules_dp_impl(s)) {
    case DPI_DDP:
        return 1;
    case DPI_ZERO3:
        return s->zero.stage3_gather == ZERO3_GATHER_PER_PARAM_SYNC ? 3 * 4 * 4 + 4 * 3 + 6 : 16;
    case DPI_FSDP:
        return 16;
    default:
        return 1;
    }
}

/* Trainable elements on the largest stage, after tensor parallelism (the reduced gradients). */
static double stage_trainable(const struct scenario *s, double stage_layers)
{
    const struct model *m = &s->model;
    double layer = s->train.finetune == FT_FULL ? workload_params_layer(m, m->moe.experts > 0)
                                                : workload_lora_params_layer(s, false);
    double edges =
        s->train.finetune == FT_FULL ? workload_params_embedding(m) + workload_params_head(m) : 0;

    return (stage_layers * layer + edges) / s->par.tp;
}

/*
 * Bucket collectives per step: the reduced gradients over the bucket size, plus the flushes
 * (DDP: the first bucket and the last, partly filled one; ZeRO: one per model chunk, where
 * backward ends), per micro-batch where the strategy reduces every micro-batch. DDP's
 * distributed optimizer gathers the parameters after the step in as many buckets again; the
 * 2021 ZeRO path copies into each bucket first; offload moves each bucket's share.
 */
static double buckets(const struct scenario *s, double stage_layers, double micro,
                      enum size_cause *cause)
{
    enum dp_impl impl = rules_dp_impl(s);
    double grads, cap, first, per, times, mult;
    struct state_bytes sb;

    if (s->par.dp * s->par.cp <= 1)
        return 0;
    memory_state_bytes(s, &sb);
    if (impl == DPI_DDP) {
        rules_ddp_buckets(s, &first, &cap);
        grads = stage_trainable(s, stage_layers) * dtype_bytes(s->train.grad_dtype);
        per = (cap > 0 ? grads / cap : grads) + 3;
        mult = rules_grad_reduce_op(s) == COLL_REDUCE_SCATTER ? 2 : 1;
        *cause = SIZE_DDP_BUCKETS;
    } else if (impl == DPI_ZERO12 || impl == DPI_ZERO3) {
        cap = s->zero.reduce_bucket_size * sb.params;
        grads = stage_trainable(s, stage_layers) * sb.params;
        per = (cap > 0 ? grads / cap : grads) + s->par.vpp + 1;
        mult = (s->zero.stage3_gather == ZERO3_GATHER_PER_PARAM_SYNC ? 2 : 1) +
               (s->train.offload != OFFLOAD_NONE ? 2 : 0);
        *cause = SIZE_ZERO_BUCKETS;
    } else {
        return 0; /* FSDP reduces one flat gradient per unit: dp_unit_tasks() counts it */
    }
    times = rules_reduce_every_microbatch(s) ? micro : 1;
    return 1.02 * per * times * mult + 8; /* 2 % and 8: the units' trainable shares rounded */
}

/* Layers on the largest stage: the given first and last stages', or an even share of the rest. */
static double largest_stage_layers(const struct scenario *s)
{
    const struct parallelism *p = &s->par;
    double layers = s->model.layers, rest = layers, stages = p->pp, most;

    if (p->first_stage_layers > 0) {
        rest -= p->first_stage_layers;
        stages--;
    }
    if (p->last_stage_layers > 0) {
        rest -= p->last_stage_layers;
        stages--;
    }
    most = stages > 0 ? (rest + stages - 1) / stages + 2 : 0; /* +2: embedding and loss */
    if (p->first_stage_layers > most)
        most = p->first_stage_layers;
    if (p->last_stage_layers > most)
        most = p->last_stage_layers;
    return most < layers ? most : layers;
}

void strategy_program_size(const struct scenario *s, struct prog_size *out)
{
    double micro = (double)s->train.global_batch / ((double)s->train.micro_batch * s->par.dp);
    double layers = largest_stage_layers(s), per_mb;
    enum size_cause bucket_cause = SIZE_DDP_BUCKETS;

    out->microbatches = micro;
    out->stage_layers = layers;
    out->layer_tasks = layer_pass_tasks(s) + dp_unit_tasks(s);
    out->buckets = buckets(s, layers, micro, &bucket_cause);
    /* per micro-batch: the layers, the embedding and the head (about ten tasks with their
     * TP collectives and marks), pipeline transfers per chunk (receive, regather, send in
     * both directions) */
    per_mb = layers * out->layer_tasks + 10 + 2 * dp_unit_tasks(s) + 6.0 * s->par.vpp;
    /* 64: model states, optimizer, marks; 5 %: a margin where the counts are exact (the
     * context-parallel ring's tasks as cp grows) */
    out->tasks = 1.05 * (micro * per_mb + out->buckets + 64);
    if (out->buckets > micro * per_mb)
        out->cause = bucket_cause;
    else
        out->cause = micro >= layers ? SIZE_MICROBATCHES : SIZE_LAYERS;
}
