/*
 * build.c - the model-parallel program builder (see strategy.h).
 *
 * Tensor parallelism follows Megatron-LM: per layer, an all-reduce after the
 * attention block and after the MLP in forward, and two in backward (SHO19 §3,
 * NAR21 §2.3); with sequence parallelism each all-reduce becomes an
 * all-gather before the block and a reduce-scatter after it (KOR22 §4.2.2).
 * Activations move between stages point to point: the stage output of
 * b*s*h elements, sent as 1/tp per rank (NAR21 §4.1 scatter/gather; with
 * sequence parallelism the output is already sharded).
 * Recomputation: full recomputes the layer forward (with its TP collectives,
 * ZERO §8) before its backward; selective recomputes the attention core only
 * (KOR22 §5).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "strategy.h"

int64_t bytes_i64(double bytes)
{
    return (int64_t)(bytes + 0.5);
}

double unit_grad_bytes(const struct build *b, int unit)
{
    return b->units[unit].params * dtype_bytes(b->s->train.grad_dtype);
}

int emit_optimizer(struct build *b, double params, double bytes_per_param, int dep)
{
    struct prog *p = b->p;
    sim_time dur = cost_membound(&b->s->hw.gpu, &b->s->hw.eff, params * bytes_per_param);
    int t = prog_compute(p, ST_COMPUTE, TC_OPTIMIZER, dur, prog_label(p, "optimizer step", 0), -1);

    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/* ---- units ---------------------------------------------------------------- */

static void add_unit(struct build *b, int kind, int layer, int chunk, bool moe, double params,
                     double expert)
{
    struct unit *u;

    b->units = xrealloc(b->units, sizeof(*b->units) * (size_t)(b->nunits + 1));
    u = &b->units[b->nunits++];
    u->kind = kind;
    u->layer = layer;
    u->chunk = chunk;
    u->moe = moe;
    u->params = params;
    u->expert_params = expert;
}

static void make_units(struct build *b)
{
    const struct scenario *s = b->s;
    int pp = s->par.pp, per_chunk = s->model.layers / (pp * b->v), c, i;

    b->chunk_first = xcalloc((size_t)b->v + 1, sizeof(int));
    for (c = 0; c < b->v; c++) {
        int first_layer = (c * pp + b->stage) * per_chunk;
        b->chunk_first[c] = b->nunits;
        if (b->stage == 0 && c == 0)
            add_unit(b, UNIT_EMBED, -1, c, false, b->embed.params, 0);
        for (i = 0; i < per_chunk; i++) {
            int layer = first_layer + i;
            bool moe = workload_is_moe(&s->model, layer);
            const struct layer_cost *lc = moe ? &b->layer_moe : &b->layer;
            double total = lc->params[PART_ATTN] + lc->params[PART_MLP];
            double expert = 0;
            if (moe) {
                const struct model *m = &s->model;
                double mats = m->act == ACT_SWIGLU ? 3 : 2;
                expert = mats * m->hidden * m->moe.ffn_hidden / s->par.tp *
                         ((double)m->moe.experts / s->par.ep);
            }
            add_unit(b, UNIT_LAYER, layer, c, moe, total, expert);
        }
        if (b->stage == pp - 1 && c == b->v - 1)
            add_unit(b, UNIT_HEAD, -1, c, false, b->head.params, 0);
    }
    b->chunk_first[b->v] = b->nunits;
}

/* ---- tensor-parallel collectives --------------------------------------------- */

static int tp_coll(struct build *b, int op, int dep, int mb, int layer)
{
    struct prog *p = b->p;
    const char *what = op == COLL_ALL_GATHER       ? "TP all-gather L%d"
                       : op == COLL_REDUCE_SCATTER ? "TP reduce-scatter L%d"
                                                   : "TP all-reduce L%d";
    int t =
        prog_coll(p, ST_TP, TC_COMM_TP, COMM_TP, op, b->tp_bytes, prog_label(p, what, layer), mb);

    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/*
 * One block (attention or MLP) in forward or backward with its TP collectives.
 * `prev` is the task the block waits for; returns the block's last task.
 */
static int block(struct build *b, int part, int tcat, sim_time dur, int prev, int mb, int layer,
                 int *compute_task)
{
    struct prog *p = b->p;
    const struct scenario *s = b->s;
    bool tp = s->par.tp > 1, sp = s->par.sequence_parallel;
    bool overlap = s->par.tp_comm_overlap;
    static const char *const names[PART_COUNT][3] = {
        { "attn fwd L%d", "attn bwd L%d", "attn recompute L%d" },
        { "mlp fwd L%d", "mlp bwd L%d", "mlp recompute L%d" },
    };
    const char *name = names[part][tcat == TC_FWD ? 0 : tcat == TC_BWD ? 1 : 2];
    int t;

    if (tp && sp) {
        int ag = tp_coll(b, COLL_ALL_GATHER, prev, mb, layer);
        if (!overlap)
            prev = ag;
    }
    t = prog_compute(p, ST_COMPUTE, tcat, dur, prog_label(p, name, layer), mb);
    if (prev >= 0)
        prog_dep(p, t, prev);
    *compute_task = t;
    if (tp) {
        int op = sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
        int c = tp_coll(b, op, t, mb, layer);
        if (!overlap)
            t = c;
    }
    return t;
}

/* ---- forward and backward of one unit ------------------------------------------ */

static double saved_bytes(const struct build *b, const struct layer_cost *lc)
{
    enum recompute rc = b->s->train.recompute;

    return lc->act[rc];
}

static int unit_forward(struct build *b, int ui, int mb, int prev)
{
    const struct unit *u = &b->units[ui];
    struct prog *p = b->p;
    int dep = b->dp && b->dp->pre_forward ? b->dp->pre_forward(b, ui, mb) : -1;
    int t, c;

    if (u->kind == UNIT_EMBED) {
        t = prog_compute(p, ST_COMPUTE, TC_FWD, b->embed.fwd, prog_label(p, "embedding fwd", 0),
                         mb);
        task_mem_end(&p->tasks[t], MC_ACT, bytes_i64(b->embed.act));
        c = t;
    } else if (u->kind == UNIT_HEAD) {
        t = prog_compute(p, ST_COMPUTE, TC_FWD, b->head.fwd, prog_label(p, "head+loss fwd", 0), mb);
        task_mem_start(&p->tasks[t], MC_LOGITS, bytes_i64(b->head.logits_bytes));
        c = t;
        /* Transient 16-bit logits before the fp32 upcast live only during the forward. */
        {
            int w = prog_mark(p, ST_COMPUTE, prog_label(p, "free logits workspace", 0));
            task_mem_start(&p->tasks[t], MC_LOGITS, bytes_i64(b->head.transient_bytes));
            task_mem_end(&p->tasks[w], MC_LOGITS, -bytes_i64(b->head.transient_bytes));
            prog_dep(p, w, t);
        }
        task_mem_end(&p->tasks[t], MC_ACT, bytes_i64(b->head.act));
    } else {
        const struct layer_cost *lc = u->moe ? &b->layer_moe : &b->layer;
        int a;
        t = block(b, PART_ATTN, TC_FWD, lc->fwd[PART_ATTN], prev, mb, u->layer, &a);
        if (dep >= 0)
            prog_dep(p, a, dep);
        prev = t;
        t = block(b, PART_MLP, TC_FWD, lc->fwd[PART_MLP], prev, mb, u->layer, &c);
        task_mem_end(&p->tasks[c], MC_ACT, bytes_i64(saved_bytes(b, lc)));
        if (b->dp && b->dp->post_forward)
            b->dp->post_forward(b, ui, mb, c);
        b->last_fwd = c;
        return t;
    }
    if (dep >= 0)
        prog_dep(p, t, dep);
    if (prev >= 0)
        prog_dep(p, t, prev);
    if (b->dp && b->dp->post_forward)
        b->dp->post_forward(b, ui, mb, c);
    b->last_fwd = c;
    return t;
}

enum bwd_mode {
    BWD_FULL,
    BWD_INPUT,
    BWD_WEIGHT
};

static int layer_backward(struct build *b, const struct unit *u, int mb, int prev, int mode,
                          int dep)
{
    const struct layer_cost *lc = u->moe ? &b->layer_moe : &b->layer;
    struct prog *p = b->p;
    enum recompute rc = b->s->train.recompute;
    int t = prev, c = -1, part;
    double extra = 0;

    if (mode == BWD_WEIGHT) {
        t = prog_compute(p, ST_COMPUTE, TC_BWD, lc->wgrad[PART_ATTN] + lc->wgrad[PART_MLP],
                         prog_label(p, "wgrad L%d", u->layer), mb);
        if (prev >= 0)
            prog_dep(p, t, prev);
        task_mem_end(&p->tasks[t], MC_ACT, -bytes_i64(saved_bytes(b, lc)));
        return t;
    }
    if (rc == RC_FULL) {
        int a;
        extra = lc->act[RC_NONE] - lc->act[RC_FULL];
        t = block(b, PART_ATTN, TC_RECOMPUTE, lc->fwd[PART_ATTN], t, mb, u->layer, &a);
        if (dep >= 0)
            prog_dep(p, a, dep);
        dep = -1;
        task_mem_start(&p->tasks[a], MC_ACT, bytes_i64(extra));
        t = block(b, PART_MLP, TC_RECOMPUTE, lc->fwd[PART_MLP], t, mb, u->layer, &a);
    } else if (rc == RC_SELECTIVE && lc->recompute_selective > 0) {
        extra = lc->act[RC_NONE] - lc->act[RC_SELECTIVE];
        c = prog_compute(p, ST_COMPUTE, TC_RECOMPUTE, lc->recompute_selective,
                         prog_label(p, "attn core recompute L%d", u->layer), mb);
        task_mem_start(&p->tasks[c], MC_ACT, bytes_i64(extra));
        if (t >= 0)
            prog_dep(p, c, t);
        if (dep >= 0)
            prog_dep(p, c, dep);
        dep = -1;
        t = c;
    }
    for (part = PART_MLP; part >= PART_ATTN; part--) {
        sim_time dur = lc->dgrad[part] + (mode == BWD_FULL ? lc->wgrad[part] : 0);
        t = block(b, part, TC_BWD, dur, t, mb, u->layer, &c);
        if (dep >= 0) {
            prog_dep(p, c, dep);
            dep = -1;
        }
    }
    /* Recomputed tensors die with this backward; the saved set dies with the weight grads. */
    if (extra > 0)
        task_mem_end(&p->tasks[c], MC_ACT, -bytes_i64(extra));
    if (mode == BWD_FULL)
        task_mem_end(&p->tasks[c], MC_ACT, -bytes_i64(saved_bytes(b, lc)));
    b->last_bwd = c;
    return t;
}

static int unit_backward(struct build *b, int ui, int mb, int prev, int mode)
{
    const struct unit *u = &b->units[ui];
    struct prog *p = b->p;
    int dep = -1, t;

    if (mode != BWD_WEIGHT && b->dp && b->dp->pre_backward)
        dep = b->dp->pre_backward(b, ui, mb);
    if (u->kind == UNIT_LAYER) {
        t = layer_backward(b, u, mb, prev, mode, dep);
    } else {
        if (mode == BWD_WEIGHT)
            return prev; /* embedding and head do their weight gradients with the input pass */
        if (u->kind == UNIT_EMBED) {
            t = prog_compute(p, ST_COMPUTE, TC_BWD, b->embed.bwd, prog_label(p, "embedding bwd", 0),
                             mb);
            task_mem_end(&p->tasks[t], MC_ACT, -bytes_i64(b->embed.act));
        } else {
            t = prog_compute(p, ST_COMPUTE, TC_BWD, b->head.bwd, prog_label(p, "head+loss bwd", 0),
                             mb);
            int w;
            task_mem_end(&p->tasks[t], MC_LOGITS, -bytes_i64(b->head.logits_bytes));
            /* A task carries one category per end: free the head's saved input with a mark. */
            w = prog_mark(p, ST_COMPUTE, prog_label(p, "free head activations", 0));
            task_mem_end(&p->tasks[w], MC_ACT, -bytes_i64(b->head.act));
            prog_dep(p, w, t);
        }
        if (prev >= 0)
            prog_dep(p, t, prev);
        if (dep >= 0)
            prog_dep(p, t, dep);
        b->last_bwd = t;
    }
    if (mode != BWD_INPUT && b->dp && b->dp->post_backward)
        b->dp->post_backward(b, ui, mb, b->last_bwd);
    return t;
}

/* ---- pipeline steps ---------------------------------------------------------------- */

static double p2p_bytes(const struct build *b)
{
    double act = (double)b->sh.b * b->sh.s / b->sh.cp * b->s->model.hidden *
                 (dtype_bytes(b->sh.dt) < 2 ? 2 : dtype_bytes(b->sh.dt));

    return act / b->sh.tp;
}

static bool first_chunk(const struct build *b, int chunk)
{
    return b->stage == 0 && chunk == 0;
}

static bool last_chunk(const struct build *b, int chunk)
{
    return b->stage == b->s->par.pp - 1 && chunk == b->v - 1;
}

static void step_forward(struct build *b, int mb, int chunk)
{
    struct prog *p = b->p;
    int prev = -1, ui;

    if (!first_chunk(b, chunk)) {
        struct task t;
        memset(&t, 0, sizeof(t));
        t.kind = TASK_RECV;
        t.stream = ST_PP_RECV_PREV;
        t.tcat = TC_COMM_PP;
        t.comm = COMM_PP_PREV;
        t.bytes = p2p_bytes(b);
        t.label = prog_label(p, "recv act chunk %d", chunk);
        t.mb = mb;
        prev = prog_add(p, &t);
    }
    for (ui = b->chunk_first[chunk]; ui < b->chunk_first[chunk + 1]; ui++)
        prev = unit_forward(b, ui, mb, prev);
    if (!last_chunk(b, chunk)) {
        struct task t;
        int s;
        memset(&t, 0, sizeof(t));
        t.kind = TASK_SEND;
        t.stream = ST_PP_SEND_NEXT;
        t.tcat = TC_COMM_PP;
        t.comm = COMM_PP_NEXT;
        t.bytes = p2p_bytes(b);
        t.label = prog_label(p, "send act chunk %d", chunk);
        t.mb = mb;
        s = prog_add(p, &t);
        prog_dep(p, s, prev);
    }
}

static void step_backward(struct build *b, int mb, int chunk, int mode)
{
    struct prog *p = b->p;
    int prev = -1, ui;

    if (mode != BWD_WEIGHT && !last_chunk(b, chunk)) {
        struct task t;
        memset(&t, 0, sizeof(t));
        t.kind = TASK_RECV;
        t.stream = ST_PP_RECV_NEXT;
        t.tcat = TC_COMM_PP;
        t.comm = COMM_PP_NEXT;
        t.bytes = p2p_bytes(b);
        t.label = prog_label(p, "recv grad chunk %d", chunk);
        t.mb = mb;
        prev = prog_add(p, &t);
    }
    for (ui = b->chunk_first[chunk + 1] - 1; ui >= b->chunk_first[chunk]; ui--)
        prev = unit_backward(b, ui, mb, prev, mode);
    if (mode != BWD_WEIGHT && !first_chunk(b, chunk)) {
        struct task t;
        int s;
        memset(&t, 0, sizeof(t));
        t.kind = TASK_SEND;
        t.stream = ST_PP_SEND_PREV;
        t.tcat = TC_COMM_PP;
        t.comm = COMM_PP_PREV;
        t.bytes = p2p_bytes(b);
        t.label = prog_label(p, "send grad chunk %d", chunk);
        t.mb = mb;
        s = prog_add(p, &t);
        prog_dep(p, s, prev);
    }
}

/* ---- stage programs ------------------------------------------------------------------- */

static void static_memory(struct build *b)
{
    struct prog *p = b->p;
    int t = prog_mark(p, ST_COMPUTE, prog_label(p, "CUDA context, NCCL, allocator reserve", 0));

    task_mem_start(&p->tasks[t], MC_OVERHEAD, bytes_i64(b->s->train.overhead_bytes));
    if (b->dp && b->dp->init)
        b->dp->init(b);
}

static int build_stage(const struct scenario *s, const struct layout *l, const struct dp_ops *dp,
                       int stage, struct prog **out)
{
    struct build b;
    struct pp_step *steps;
    int nsteps, i, maxsteps;
    char role[48];

    memset(&b, 0, sizeof(b));
    b.s = s;
    b.l = l;
    b.stage = stage;
    b.v = s->par.vpp;
    b.m = s->train.global_batch / (s->train.micro_batch * s->par.dp);
    b.dp = dp;
    b.last_bwd = b.last_fwd = -1;
    workload_shard(s, &b.sh);
    workload_layer(s, &b.sh, false, &b.layer);
    if (s->model.moe.experts > 0)
        workload_layer(s, &b.sh, true, &b.layer_moe);
    workload_embedding(s, &b.sh, &b.embed);
    workload_head(s, &b.sh, &b.head);
    b.tp_bytes = b.layer.tp_bytes;
    make_units(&b);
    snprintf(role, sizeof(role), "stage %d", stage);
    b.p = prog_new(role);
    static_memory(&b);

    maxsteps = 3 * b.m * b.v + 8;
    steps = xmalloc(sizeof(*steps) * (size_t)maxsteps);
    nsteps = schedule_steps(s->par.schedule, s->par.pp, stage, b.m, b.v, steps, maxsteps);
    for (i = 0; i < nsteps; i++) {
        const struct pp_step *st = &steps[i];
        if (st->kind == STEP_F)
            step_forward(&b, st->mb, st->chunk);
        else
            step_backward(&b, st->mb, st->chunk,
                          st->kind == STEP_B    ? BWD_FULL
                          : st->kind == STEP_BI ? BWD_INPUT
                                                : BWD_WEIGHT);
    }
    free(steps);
    b.grads_ready = b.last_bwd;
    if (dp && dp->step)
        dp->step(&b);
    if (dp && dp->release)
        dp->release(&b);
    prog_seal(b.p);
    free(b.units);
    free(b.chunk_first);
    *out = b.p;
    return 0;
}

const struct dp_ops *strategy_dp_ops(const struct scenario *s, char *reason, size_t reason_len)
{
    switch (s->par.sharding) {
    case SHARD_NONE:
    case SHARD_FSDP_NO_SHARD:
        return &dp_ddp;
    case SHARD_ZERO1:
        if (s->par.framework != FW_DEEPSPEED)
            return &dp_ddp; /* Megatron's distributed optimizer */
        break;
    default:
        break;
    }
    snprintf(reason, reason_len, "sharding '%s' is not modelled yet",
             sharding_name(s->par.sharding));
    return NULL;
}

int strategy_build(const struct scenario *s, const struct layout *l, struct prog **out,
                   char *reason, size_t reason_len)
{
    const struct dp_ops *dp = strategy_dp_ops(s, reason, reason_len);
    int stage;

    if (!dp)
        return -1;
    if (s->par.cp > 1 || s->par.ep > 1) {
        snprintf(reason, reason_len, "context and expert parallelism are not modelled yet");
        return -1;
    }
    for (stage = 0; stage < s->par.pp; stage++)
        build_stage(s, l, dp, stage, &out[stage]);
    return 0;
}
