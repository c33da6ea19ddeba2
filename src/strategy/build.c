/*
 * build.c - the model-parallel program builder (see strategy.h): the layer
 * split over pipeline stages and model chunks, the units of each stage, the
 * pipeline steps with their point-to-point transfers, and one program per
 * stage. The inside of a transformer layer, with its tensor-, context- and
 * expert-parallel communication, is layer.c.
 *
 * Activations move between stages point to point: the stage output of
 * b*s*h/cp elements, sent as 1/tp per rank (NAR21 §4.1 scatter/gather; with
 * sequence parallelism the output is already sharded). The embedding lives on
 * the first chunk of stage 0, the LM head and loss on the last chunk of the
 * last stage (NAR21 §2.2).
 * Recomputation: full recomputes the layer forward (with its TP collectives,
 * ZERO §8) before its backward; selective recomputes the attention core only
 * (KOR22 §5).
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "model/memory.h"
#include "model/partition.h"
#include "model/workload.h"
#include "strategy/dp_internal.h"
#include "strategy/rules.h"
#include "strategy/size.h"
#include "strategy/strategy.h"

int64_t bytes_i64(double bytes)
{
    /* at most SIM_MARK_MAX either way (util.h): a cast of more would overflow */
    if (!(bytes < (double)SIM_MARK_MAX))
        return isnan(bytes) ? 0 : SIM_MARK_MAX;
    if (!(bytes > -(double)SIM_MARK_MAX))
        return -SIM_MARK_MAX;
    return (int64_t)(bytes + 0.5);
}

double unit_grad_bytes(const struct build *b, int unit)
{
    /* only trainable parameters have gradients (LoRA: the adapters) */
    return states_unit_trainable(b, unit) * dtype_bytes(b->s->train.grad_dtype);
}

/* The last task on the compute stream so far (with `timed`, the last that lasts), or -1. */
static int last_compute(const struct prog *p, bool timed)
{
    for (int i = p->ntasks - 1; i >= 0; i--)
        if (p->tasks[i].stream == ST_COMPUTE && (!timed || p->tasks[i].dur > 0))
            return i;
    return -1;
}

/*
 * The step's sync point: before the optimizer the framework reads values off the GPU (the
 * fp16 loss scaler's overflow flag, the gradient norm for clipping: `.item()`), so its CPU
 * waits for the gradients (`dep`) and the GPU's last kernel, then spends host.step on the
 * step's Python (scaler, clipping, scheduler) before it issues the optimizer. Returns the host
 * task, or -1 when host.step is 0 (a sync that costs nothing changes no time).
 */
static int host_sync(struct build *b, int dep)
{
    struct prog *p = b->p;
    int i, last;

    if (b->s->host.step <= 0)
        return -1;
    last = last_compute(p, false);
    i = prog_host(p, TC_HOST, b->s->host.step, prog_label(p, "host: step sync", 0), -1);
    if (dep >= 0)
        prog_dep(p, i, dep);
    if (last >= 0 && last != dep)
        prog_dep(p, i, last);
    return i;
}

int emit_optimizer(struct build *b, double params, double bytes_per_param, int dep)
{
    struct prog *p = b->p;
    sim_time dur = workload_optimizer_time(b->s, params, bytes_per_param);
    int h = host_sync(b, dep);
    int t = prog_compute(p, ST_COMPUTE, TC_OPTIMIZER, dur, prog_label(p, "optimizer step", 0), -1);

    if (dep >= 0)
        prog_dep(p, t, dep);
    if (h >= 0)
        prog_dep(p, t, h);
    return t;
}

static int *partition_of(const struct scenario *s, char *reason, size_t reason_len)
{
    int *out = xcalloc((size_t)s->par.pp * (size_t)s->par.vpp, sizeof(int));

    if (pp_layers(s, out, reason, reason_len) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

int strategy_stage_layers(const struct scenario *s, int stage)
{
    char reason[160];
    int *part = partition_of(s, reason, sizeof(reason));
    int c, n = 0;

    if (!part)
        return s->model.layers / s->par.pp;
    for (c = 0; c < s->par.vpp; c++)
        n += part[c * s->par.pp + stage];
    free(part);
    return n;
}

/* ---- units ---------------------------------------------------------------- */

static void add_unit(struct build *b, int kind, int layer, int chunk, bool moe, bool window,
                     double params, double expert)
{
    struct unit *u;

    b->units = xrealloc(b->units, sizeof(*b->units) * (size_t)(b->nunits + 1));
    u = &b->units[b->nunits++];
    memset(u, 0, sizeof(*u));
    u->kind = kind;
    u->layer = layer;
    u->chunk = chunk;
    u->moe = moe;
    u->window = window;
    u->params = params;
    u->expert_params = expert;
}

static void make_units(struct build *b, const int *part)
{
    const struct scenario *s = b->s;
    int pp = s->par.pp, c, i, k;

    b->chunk_first = xcalloc((size_t)b->v + 1, sizeof(int));
    b->chunk_layers = xcalloc((size_t)b->v, sizeof(int));
    for (c = 0; c < b->v; c++) {
        int first_layer = 0;
        for (k = 0; k < c * pp + b->stage; k++)
            first_layer += part[k];
        b->chunk_layers[c] = part[c * pp + b->stage];
        b->chunk_first[c] = b->nunits;
        if (b->stage == 0 && c == 0)
            add_unit(b, UNIT_EMBED, -1, c, false, false, b->embed.params, 0);
        for (i = 0; i < b->chunk_layers[c]; i++) {
            int layer = first_layer + i;
            bool moe = workload_is_moe(&s->model, layer);
            const struct layer_cost *lc = moe ? &b->layer_moe : &b->layer;
            double total = lc->params[PART_ATTN] + lc->params[PART_MLP];
            double expert = 0;
            if (moe) {
                const struct model *m = &s->model;
                double mats = workload_mlp_matrices(m), f = m->moe.ffn_hidden;
                double each = (mats * m->hidden * f + (m->bias ? (mats - 1) * f : 0)) / s->par.tp +
                              (m->bias ? m->hidden : 0); /* as workload_layer.c layer_params() */
                expert = each * ((double)m->moe.experts / s->par.ep);
            }
            add_unit(b, UNIT_LAYER, layer, c, moe, workload_is_windowed(s, layer), total, expert);
        }
        if (b->stage == pp - 1 && c == b->v - 1)
            add_unit(b, UNIT_HEAD, -1, c, false, false, b->head.params, 0);
    }
    b->chunk_first[b->v] = b->nunits;
}

/* ---- forward and backward of one unit ------------------------------------------ */

/* Recomputation of a layer unit: the scenario's, resolved per block (rules.h). */
enum recompute strategy_unit_recompute(const struct build *b, int ui)
{
    const struct unit *u = &b->units[ui];
    int first = b->chunk_first[u->chunk];

    if (b->units[first].kind == UNIT_EMBED)
        first++;
    return rules_layer_recompute(b->s, u->layer, ui - first);
}

static const struct layer_cost *unit_cost(const struct build *b, int ui)
{
    return strategy_unit_cost(b, &b->units[ui]);
}

static const struct layer_mods *unit_mods(const struct build *b, int ui)
{
    return &b->mods.layer[b->units[ui].moe];
}

/*
 * The tensor-parallel collectives of the embedding and the LM head (Megatron,
 * tp > 1): VocabParallelEmbedding sums the partial lookups of the vocabulary
 * shards with an all-reduce of b*s*h in forward (mpu/layers.py,
 * reduce_from_tensor_model_parallel_region), and under sequence parallelism
 * its output is split to the sequence shards, whose backward all-gathers the
 * gradient. parallel_lm_logits (model/language_model.py) feeds the vocabulary-
 * parallel output layer like a column-parallel linear: with sequence
 * parallelism an all-gather of the final norm output in forward and a
 * reduce-scatter of its gradient in backward; without it an all-reduce of the
 * input gradient in backward. Each is blocking here. Returns the collective
 * after `dep`, or `dep` when there is none.
 */
static int edge_tp_coll(struct build *b, const struct unit *u, bool backward, int mb, int dep)
{
    struct prog *p = b->p;
    bool sp = b->s->par.sequence_parallel;
    int op, t;

    if (b->s->par.tp <= 1)
        return dep;
    if (u->kind == UNIT_EMBED)
        op = backward ? (sp ? COLL_ALL_GATHER : -1) : COLL_ALL_REDUCE;
    else
        op = backward ? (sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE) : (sp ? COLL_ALL_GATHER : -1);
    if (op < 0)
        return dep;
    t = prog_coll(
        p, ST_TP, TC_COMM_TP, COMM_TP, op, b->tp_bytes,
        prog_label(p, u->kind == UNIT_EMBED ? "TP embedding %d" : "TP output layer %d", backward),
        mb);
    if (dep >= 0)
        prog_dep(p, t, dep);
    return t;
}

/* The CPU's issue of an edge pass (workload_edge_host()), its kernels wait; -1 if free. */
static int edge_host(struct build *b, sim_time dur, const char *label, int mb)
{
    return dur > 0 ? prog_host(b->p, TC_HOST, dur, prog_label(b->p, label, 0), mb) : -1;
}

/*
 * Forward of the embedding or the head after `prev` and `dep` (-1 = none):
 * returns what the next unit waits for; *compute is the compute task.
 */
static int edge_forward(struct build *b, const struct unit *u, int mb, int prev, int dep,
                        int *compute)
{
    struct prog *p = b->p;
    int t, w, h;

    if (u->kind == UNIT_EMBED) {
        h = edge_host(b, b->embed.host_fwd, "host: embedding fwd", mb);
        t = prog_compute(p, ST_COMPUTE, TC_FWD, b->embed.fwd, prog_label(p, "embedding fwd", 0),
                         mb);
        if (h >= 0)
            prog_dep(p, t, h);
        task_mem_end(&p->tasks[t], MC_ACT, bytes_i64(b->embed.act));
        strategy_mark_modules(b, t, true, b->mods.embed, 1);
        if (prev >= 0)
            prog_dep(p, t, prev);
        if (dep >= 0)
            prog_dep(p, t, dep);
        *compute = t;
        return edge_tp_coll(b, u, false, mb, t);
    }
    prev = edge_tp_coll(b, u, false, mb, prev);
    h = edge_host(b, b->head.host_fwd, "host: head+loss fwd", mb);
    t = prog_compute(p, ST_COMPUTE, TC_FWD, b->head.fwd, prog_label(p, "head+loss fwd", 0), mb);
    if (h >= 0)
        prog_dep(p, t, h);
    if (prev >= 0)
        prog_dep(p, t, prev);
    if (dep >= 0)
        prog_dep(p, t, dep);
    *compute = t;
    task_mem_start(&p->tasks[t], MC_LOGITS, bytes_i64(b->head.logits_bytes));
    strategy_mark_modules(b, t, false, b->mods.logits, 1);
    /* Transient 16-bit logits before the fp32 upcast live only during the forward. */
    w = prog_mark(p, ST_COMPUTE, prog_label(p, "free logits workspace", 0));
    task_mem_start(&p->tasks[t], MC_LOGITS, bytes_i64(b->head.transient_bytes));
    strategy_mark_modules(b, t, false, b->mods.logits_transient, 1);
    task_mem_end(&p->tasks[w], MC_LOGITS, -bytes_i64(b->head.transient_bytes));
    strategy_mark_modules(b, w, true, b->mods.logits_transient, -1);
    prog_dep(p, w, t);
    task_mem_end(&p->tasks[t], MC_ACT, bytes_i64(b->head.act));
    strategy_mark_modules(b, t, true, b->mods.head_act, 1);
    return t;
}

static int unit_forward(struct build *b, int ui, int mb, int prev)
{
    const struct unit *u = &b->units[ui];
    struct prog *p = b->p;
    int dep = b->dp && b->dp->pre_forward ? b->dp->pre_forward(b, ui, mb) : -1;
    int t, first, last;

    if (u->kind == UNIT_LAYER) {
        const struct layer_cost *lc = unit_cost(b, ui);
        enum recompute rc = strategy_unit_recompute(b, ui);
        double saved = lc->act[rc];
        t = layer_forward(b, ui, mb, TC_FWD, prev, dep, &first, &last);
        task_mem_end(&p->tasks[last], MC_ACT, bytes_i64(saved));
        strategy_mark_modules(b, last, true, unit_mods(b, ui)->saved[rc], 1);
        t = offload_activations(b, ui, saved, t, last);
    } else {
        t = edge_forward(b, u, mb, prev, dep, &last);
    }
    if (b->dp && b->dp->post_forward)
        b->dp->post_forward(b, ui, mb, last);
    b->last_fwd = last;
    return t;
}

enum bwd_mode {
    BWD_FULL,
    BWD_INPUT,
    BWD_WEIGHT
};

static int unit_layer_backward(struct build *b, int ui, int mb, int prev, int mode, int dep)
{
    const struct layer_cost *lc = unit_cost(b, ui);
    const struct layer_mods *mods = unit_mods(b, ui);
    struct prog *p = b->p;
    enum recompute rc = strategy_unit_recompute(b, ui);
    double saved = lc->act[rc], extra = 0;
    int t = prev, first, last, variant = strategy_unit_variant(&b->units[ui]);

    if (mode == BWD_WEIGHT) {
        t = layer_backward(b, ui, mb, 2, t, -1, &first, &last);
        task_mem_end(&p->tasks[last], MC_ACT, -b->mods.w_pending_bytes[variant]);
        strategy_mark_modules(b, last, true, b->mods.w_pending[variant], -1);
        b->last_bwd = last;
        return t;
    }
    t = offload_fetch_activations(b, ui, saved, t);
    if (rc == RC_FULL) {
        extra = lc->act[RC_NONE] - lc->act[RC_FULL];
        t = layer_forward(b, ui, mb, TC_RECOMPUTE, t, dep, &first, &last);
        task_mem_start(&p->tasks[first], MC_ACT, bytes_i64(extra));
        strategy_mark_modules(b, first, false, mods->extra[rc], 1);
        dep = -1;
    } else if (rc == RC_SELECTIVE && lc->recompute_selective > 0) {
        int c = prog_compute(p, ST_COMPUTE, TC_RECOMPUTE, lc->recompute_selective,
                             prog_label(p, "attn core recompute L%d", b->units[ui].layer), mb);
        extra = lc->act[RC_NONE] - lc->act[RC_SELECTIVE];
        task_mem_start(&p->tasks[c], MC_ACT, bytes_i64(extra));
        strategy_mark_modules(b, c, false, mods->extra[rc], 1);
        if (t >= 0)
            prog_dep(p, c, t);
        if (dep >= 0)
            prog_dep(p, c, dep);
        dep = -1;
        t = c;
    }
    t = layer_backward(b, ui, mb, mode == BWD_FULL ? 0 : 1, t, dep, &first, &last);
    /* The MLP backward's activation gradients live through this pass (workload_layer.c). */
    if (lc->bwd_transient > 0) {
        task_mem_start(&p->tasks[first], MC_ACT, bytes_i64(lc->bwd_transient));
        strategy_mark_modules(b, first, false, mods->transient, 1);
        task_mem_end(&p->tasks[last], MC_ACT, -bytes_i64(lc->bwd_transient));
        strategy_mark_modules(b, last, true, mods->transient, -1);
    }
    /* Recomputed and saved tensors die with this backward; a B pass leaves its W's inputs. */
    if (extra > 0) {
        task_mem_end(&p->tasks[last], MC_ACT, -bytes_i64(extra));
        strategy_mark_modules(b, last, true, mods->extra[rc], -1);
    }
    task_mem_end(&p->tasks[last], MC_ACT, -bytes_i64(saved));
    strategy_mark_modules(b, last, true, mods->saved[rc], -1);
    if (mode == BWD_INPUT) {
        task_mem_end(&p->tasks[last], MC_ACT, b->mods.w_pending_bytes[variant]);
        strategy_mark_modules(b, last, true, b->mods.w_pending[variant], 1);
    }
    b->last_bwd = last;
    return t;
}

static int unit_backward(struct build *b, int ui, int mb, int prev, int mode)
{
    const struct unit *u = &b->units[ui];
    struct prog *p = b->p;
    int dep = -1, t, next = -1, h = -1;

    if (mode != BWD_WEIGHT && b->dp && b->dp->pre_backward)
        dep = b->dp->pre_backward(b, ui, mb);
    if (u->kind == UNIT_LAYER) {
        t = unit_layer_backward(b, ui, mb, prev, mode, dep);
    } else {
        if (mode == BWD_WEIGHT)
            return prev; /* embedding and head do their weight gradients with the input pass */
        if (u->kind == UNIT_EMBED) {
            prev = edge_tp_coll(b, u, true, mb, prev);
            h = edge_host(b, b->embed.host_bwd, "host: embedding bwd", mb);
            t = prog_compute(p, ST_COMPUTE, TC_BWD, b->embed.bwd, prog_label(p, "embedding bwd", 0),
                             mb);
            task_mem_end(&p->tasks[t], MC_ACT, -bytes_i64(b->embed.act));
            strategy_mark_modules(b, t, true, b->mods.embed, -1);
        } else {
            int w;
            h = edge_host(b, b->head.host_bwd, "host: head+loss bwd", mb);
            t = prog_compute(p, ST_COMPUTE, TC_BWD, b->head.bwd, prog_label(p, "head+loss bwd", 0),
                             mb);
            task_mem_end(&p->tasks[t], MC_LOGITS, -bytes_i64(b->head.logits_bytes));
            strategy_mark_modules(b, t, true, b->mods.logits, -1);
            /* a task frees one category: the head's saved inputs go with a mark after it */
            w = prog_mark(p, ST_COMPUTE, prog_label(p, "free head activations", 0));
            task_mem_end(&p->tasks[w], MC_ACT, -bytes_i64(b->head.act));
            strategy_mark_modules(b, w, true, b->mods.head_act, -1);
            prog_dep(p, w, t);
        }
        if (prev >= 0)
            prog_dep(p, t, prev);
        if (dep >= 0)
            prog_dep(p, t, dep);
        if (h >= 0)
            prog_dep(p, t, h);
        b->last_bwd = t;
        if (u->kind == UNIT_HEAD)
            next = edge_tp_coll(b, u, true, mb, t);
    }
    /* A layer's weight gradients are complete after its W pass, the embedding's and head's
     * after their B pass (they do their weight gradients with it). */
    if ((u->kind != UNIT_LAYER || mode != BWD_INPUT) && b->dp && b->dp->post_backward)
        b->dp->post_backward(b, ui, mb, b->last_bwd);
    return next >= 0 ? next : t;
}

/* ---- pipeline steps ---------------------------------------------------------------- */

/*
 * Bytes of one activation (or gradient) transfer between stages: b*s*h/cp
 * elements, 1/tp of it per rank (NAR21 §4.1 scatter/gather; under sequence
 * parallelism the stage output is already sharded).
 */
static bool first_chunk(const struct build *b, int chunk)
{
    return b->stage == 0 && chunk == 0;
}

static bool last_chunk(const struct build *b, int chunk)
{
    return b->stage == b->s->par.pp - 1 && chunk == b->v - 1;
}

static int p2p(struct build *b, int kind, int stream, int comm, const char *label, int chunk,
               int mb, int dep)
{
    struct prog *p = b->p;
    struct task t;
    int i;

    memset(&t, 0, sizeof(t));
    t.kind = (uint8_t)kind;
    t.stream = (uint8_t)stream;
    t.tcat = TC_COMM_PP;
    t.comm = (uint8_t)comm;
    t.bytes = rules_pp_send_bytes(b->s);
    t.label = prog_label(p, label, chunk);
    t.mb = mb;
    i = prog_add(p, &t);
    if (dep >= 0)
        prog_dep(p, i, dep);
    return i;
}

/*
 * Pipeline transfers follow Megatron-LM's p2p_communication without
 * overlap_p2p_comm: a receive is posted only when the schedule reaches it
 * (after the previous step's compute, batched with that step's send), so the
 * transfer shows between compute steps instead of hiding behind them. In the
 * interleaved schedule's steady state one batched call after each backward
 * posts the receives of the next forward and the next backward, so a
 * backward's receive is posted one step earlier
 * (forward_backward_pipelining_with_interleaving). Sends stay asynchronous.
 */
static int recv_after(const struct build *b, bool backward)
{
    if (backward && b->s->par.schedule == SCHED_INTERLEAVED && b->step_prev >= 0)
        return b->step_prev;
    return b->step_last;
}

static void step_done(struct build *b, int last)
{
    if (last < 0)
        return;
    b->step_prev = b->step_last;
    b->step_last = last;
}

/*
 * After a receive without sequence parallelism, the TP ranks all-gather the
 * 1/tp slices they received into the full stage input (NAR21 §4.1, Megatron's
 * scatter_gather_tensors_in_pipeline).
 */
static int regather(struct build *b, int recv, int mb)
{
    struct prog *p = b->p;
    int t;

    if (recv < 0 || b->s->par.tp == 1 || b->s->par.sequence_parallel)
        return recv;
    t = prog_coll(p, ST_TP, TC_COMM_PP, COMM_TP, COLL_ALL_GATHER,
                  rules_pp_send_bytes(b->s) * b->s->par.tp, prog_label(p, "pipeline all-gather", 0),
                  mb);
    prog_dep(p, t, recv);
    return t;
}

/* Host time of a layer's pass, and the least GPU compute time of any of its passes. */
static void layer_host_gpu(const struct layer_cost *lc, sim_time *host, sim_time *gpu)
{
    sim_time f = 0, d = 0;

    for (int part = 0; part < PART_COUNT; part++) {
        f = time_add(f, lc->fwd[part]);
        d = time_add(d, lc->dgrad[part]);
    }
    for (int pass = 0; pass < HOST_PASSES; pass++) {
        sim_time h = 0;
        for (int part = 0; part < PART_COUNT; part++)
            h = time_add(h, lc->host[pass][part]);
        *host = h > *host ? h : *host;
    }
    f = f < d ? f : d;
    *gpu = f < *gpu ? f : *gpu;
}

/*
 * Is the host's issue of every layer pass shorter than any layer pass's GPU compute? Then,
 * after a run's first layer, the CPU stays ahead of the GPU whatever comes (communication and
 * contention only delay the GPU), so the layers after the first of each run need no host task
 * of their own: the same timeline with fewer tasks (layer.c). Not with host jitter, which can
 * slow a rank's CPU past its GPU.
 */
static bool host_hidden(const struct build *b)
{
    const struct scenario *s = b->s;
    sim_time host = 0, gpu = INT64_MAX;

    if (s->host.jitter > 0)
        return false;
    layer_host_gpu(&b->layer, &host, &gpu);
    if (s->model.moe.experts > 0)
        layer_host_gpu(&b->layer_moe, &host, &gpu);
    if (s->model.window > 0 && s->model.window < s->train.seq_len) {
        layer_host_gpu(&b->layer_win, &host, &gpu);
        if (s->model.moe.experts > 0)
            layer_host_gpu(&b->layer_moe_win, &host, &gpu);
    }
    return host <= gpu;
}

/*
 * With host.p2p_sync the framework's CPU waits for a pipeline receive before it issues the
 * step's layers (Megatron-LM's p2p_communication: torch.cuda.synchronize() after
 * batch_isend_irecv, "to protect against race condition"): a host task after the receive.
 */
static void host_wait(struct build *b, int recv, int mb)
{
    struct prog *p = b->p;

    if (recv < 0 || !b->s->host.p2p_sync)
        return;
    prog_dep(p, prog_host(p, TC_HOST, 0, prog_label(p, "host: wait for receive", 0), mb), recv);
}

/*
 * host.micro_batch_sync: the CPU waits for the GPU's last kernel before it issues each
 * micro-batch's forward (DeepSpeedEngine.forward()'s tput_timer.start() synchronizes; Megatron's
 * get_batch() copies the broadcast sizes to the CPU; sources in the frameworks/ profiles), so what
 * the GPU still had queued no longer overlaps the next micro-batch's issue.
 */
static void host_mb_sync(struct build *b, int mb)
{
    struct prog *p = b->p;
    int last;

    if (!b->s->host.micro_batch_sync)
        return;
    last = last_compute(p, true);
    if (last < 0)
        return;
    prog_dep(p, prog_host(p, TC_HOST, 0, prog_label(p, "host: micro-batch sync", 0), mb), last);
}

static void step_forward(struct build *b, int mb, int chunk)
{
    int prev = -1, ui;

    host_mb_sync(b, mb);

    if (!first_chunk(b, chunk))
        prev = regather(b,
                        p2p(b, TASK_RECV, ST_PP_RECV_PREV, COMM_PP_PREV, "recv act chunk %d", chunk,
                            mb, recv_after(b, false)),
                        mb);
    host_wait(b, prev, mb);
    for (ui = b->chunk_first[chunk]; ui < b->chunk_first[chunk + 1]; ui++)
        prev = unit_forward(b, ui, mb, prev);
    step_done(b, prev);
    if (!last_chunk(b, chunk))
        p2p(b, TASK_SEND, ST_PP_SEND_NEXT, COMM_PP_NEXT, "send act chunk %d", chunk, mb, prev);
}

static void step_backward(struct build *b, int mb, int chunk, int mode)
{
    int prev = -1, ui;

    if (mode != BWD_WEIGHT && !last_chunk(b, chunk))
        prev = regather(b,
                        p2p(b, TASK_RECV, ST_PP_RECV_NEXT, COMM_PP_NEXT, "recv grad chunk %d",
                            chunk, mb, recv_after(b, true)),
                        mb);
    host_wait(b, prev, mb);
    for (ui = b->chunk_first[chunk + 1] - 1; ui >= b->chunk_first[chunk]; ui--)
        prev = unit_backward(b, ui, mb, prev, mode);
    step_done(b, prev);
    if (mode != BWD_WEIGHT && !first_chunk(b, chunk))
        p2p(b, TASK_SEND, ST_PP_SEND_PREV, COMM_PP_PREV, "send grad chunk %d", chunk, mb, prev);
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

/* Communication sizes of context and expert parallelism. */
static void mp_sizes(struct build *b)
{
    const struct model *m = &b->s->model;

    b->kv_bytes = rules_cp_kv_bytes(b->s);
    b->a2a_bytes = b->layer_moe.moe_a2a_bytes;
    b->moe_imbalance = m->moe.load_imbalance >= 1 ? m->moe.load_imbalance : 1.0;
}

/*
 * The program of one stage into *out; `like` (or NULL), a neighbouring stage's, sizes it.
 * Returns 0, or -1 when the program outgrows STRATEGY_MAX_TASKS (the loader's estimate,
 * strategy/size.h, should have refused the scenario; this keeps the limit if it did not).
 */
static int build_stage(const struct scenario *s, const struct layout *l, const struct dp_ops *dp,
                       const int *part, int stage, const struct prog *like, struct prog **out)
{
    struct build b;
    struct pp_step *steps;
    int nsteps, i, maxsteps, rc = 0;
    char role[48];

    memset(&b, 0, sizeof(b));
    b.s = s;
    b.l = l;
    b.stage = stage;
    b.v = s->par.vpp;
    b.m = s->train.global_batch / (s->train.micro_batch * s->par.dp);
    b.dp = dp;
    b.last_bwd = b.last_fwd = -1;
    b.act_d2h = -1;
    b.step_last = b.step_prev = -1;
    workload_shard(s, &b.sh);
    workload_layer(s, &b.sh, false, &b.layer);
    if (s->model.moe.experts > 0)
        workload_layer(s, &b.sh, true, &b.layer_moe);
    if (s->model.window > 0 && s->model.window < s->train.seq_len) {
        workload_layer_variant(s, &b.sh, false, true, &b.layer_win);
        if (s->model.moe.experts > 0)
            workload_layer_variant(s, &b.sh, true, true, &b.layer_moe_win);
    }
    workload_embedding(s, &b.sh, &b.embed);
    workload_head(s, &b.sh, &b.head);
    workload_edge_host(s, &b.embed, false);
    workload_edge_host(s, &b.head, true);
    b.tp_bytes = b.layer.tp_bytes;
    b.host_hidden = host_hidden(&b);
    strategy_modules_init(&b);
    layer_split(&b);
    mp_sizes(&b);
    make_units(&b, part);
    snprintf(role, sizeof(role), "stage %d", stage);
    b.p = prog_new(role);
    if (like)
        prog_reserve(b.p, like->ntasks, like->npreds);
    static_memory(&b);
    /* simulation.step_overhead: the host's data loading and logging before it issues the step's
     * first kernel (the GPU waits: host-bound time, as whatif/estimate.c adds it) */
    if (s->sim.step_overhead > 0)
        prog_host(b.p, TC_HOST, s->sim.step_overhead, prog_label(b.p, "host: step overhead", 0),
                  -1);

    assert((int64_t)b.m * b.v <= STRATEGY_MAX_TASKS); /* the loader's limit (size.h) */
    maxsteps = 3 * b.m * b.v + 8;
    steps = xmalloc(sizeof(*steps) * (size_t)maxsteps);
    nsteps = schedule_steps(s->par.schedule, s->par.pp, stage, b.m, b.v, steps, maxsteps);
    for (i = 0; i < nsteps && rc == 0; i++) {
        const struct pp_step *st = &steps[i];
        if (b.p->ntasks > STRATEGY_MAX_TASKS)
            rc = -1;
        else if (st->kind == STEP_F)
            step_forward(&b, st->mb, st->chunk);
        else
            step_backward(&b, st->mb, st->chunk,
                          st->kind == STEP_B    ? BWD_FULL
                          : st->kind == STEP_BI ? BWD_INPUT
                                                : BWD_WEIGHT);
    }
    free(steps);
    b.grads_ready = b.last_bwd;
    if (rc == 0 && dp && dp->step)
        dp->step(&b);
    if (dp && dp->release)
        dp->release(&b);
    if (b.p->ntasks > STRATEGY_MAX_TASKS)
        rc = -1;
    prog_seal(b.p);
    free(b.units);
    free(b.chunk_first);
    free(b.chunk_layers);
    *out = b.p;
    return rc;
}

int strategy_build(const struct scenario *s, const struct layout *l, struct prog **out,
                   char *reason, size_t reason_len)
{
    const struct dp_ops *dp = strategy_dp_ops(s, reason, reason_len);
    int *part, stage;

    if (!dp)
        return -1;
    part = partition_of(s, reason, reason_len);
    if (!part)
        return -1;
    for (stage = 0; stage < s->par.pp; stage++)
        if (build_stage(s, l, dp, part, stage, stage > 0 ? out[stage - 1] : NULL, &out[stage])) {
            snprintf(reason, reason_len,
                     "the program of pipeline stage %d outgrew the %d tasks a program may hold",
                     stage, STRATEGY_MAX_TASKS);
            for (int k = 0; k <= stage; k++) {
                prog_free(out[k]);
                out[k] = NULL;
            }
            free(part);
            return -1;
        }
    free(part);
    return 0;
}
