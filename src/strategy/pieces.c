/*
 * pieces.c - a layer's operators sorted into the pieces between which layer.c
 * places the communication (struct seg_times), and what a zero-bubble B pass
 * leaves alive for its deferred W pass.
 *
 * A part (attention, MLP) reads: norm | router | column-parallel projection |
 * what lies between it and the core | core | row-parallel projection |
 * residual; the first projection of a part is the column-parallel one, its
 * last the row-parallel one, any between them goes with the middle piece.
 */
#include <string.h>

#include "strategy/strategy.h"

enum piece {
    PC_PRE,
    PC_GATE,
    PC_COL,
    PC_MID,
    PC_CORE,
    PC_ROW,
    PC_POST
};

static sim_time *piece(struct seg_times *t, int pc)
{
    switch (pc) {
    case PC_PRE:
        return &t->pre;
    case PC_GATE:
        return &t->gate;
    case PC_COL:
        return &t->col;
    case PC_MID:
        return &t->mid;
    case PC_CORE:
        return &t->core;
    case PC_ROW:
        return &t->row;
    default:
        return &t->post;
    }
}

static bool is_core(const struct op *o)
{
    return o->kind == OP_ATTN || o->core;
}

/* The router and what sits with it before the dispatch (MoE token permutation). */
static bool is_router(const struct op *o)
{
    return o->seg == SEG_GATE;
}

/* A projection with weights (the router excluded). */
static bool is_proj(const struct op *o)
{
    return o->kind == OP_GEMM && !o->core && !is_router(o);
}

static void split_part(const struct layer_cost *lc, int part, struct part_split *ps)
{
    int col = -1, row = -1, i;

    memset(ps, 0, sizeof(*ps));
    for (i = 0; i < lc->nops; i++) {
        const struct op *o = &lc->ops[i];
        if (o->part != part || !is_proj(o))
            continue;
        if (col < 0)
            col = i;
        row = i;
    }
    for (i = 0; i < lc->nops; i++) {
        const struct op *o = &lc->ops[i];
        int pc;
        if (o->part != part)
            continue;
        if (is_core(o))
            pc = PC_CORE;
        else if (is_router(o))
            pc = PC_GATE;
        else if (col < 0 || i < col)
            pc = PC_PRE;
        else if (i == col)
            pc = PC_COL;
        else if (i < row)
            pc = PC_MID;
        else if (i == row)
            pc = PC_ROW;
        else
            pc = PC_POST;
        *piece(&ps->fwd, pc) = time_add(*piece(&ps->fwd, pc), o->t_fwd);
        *piece(&ps->dgrad, pc) = time_add(*piece(&ps->dgrad, pc), o->t_dgrad);
        *piece(&ps->wgrad, pc) = time_add(*piece(&ps->wgrad, pc), o->t_wgrad);
    }
}

void layer_split(struct build *b)
{
    int part;
    const struct model *m = &b->s->model;
    bool win = m->window > 0 && m->window < b->s->train.seq_len;

    for (part = 0; part < PART_COUNT; part++) {
        split_part(&b->layer, part, &b->split[0][part]);
        if (m->moe.experts > 0)
            split_part(&b->layer_moe, part, &b->split[1][part]);
        if (win)
            split_part(&b->layer_win, part, &b->split[2][part]);
        if (win && m->moe.experts > 0)
            split_part(&b->layer_moe_win, part, &b->split[3][part]);
    }
}

/*
 * A W pass needs, of what the forward saved, the inputs of the weight GEMMs, and the output
 * gradients the B pass computed for them: sail-sg's WeightGradStore.put keeps both per
 * linear layer (zero-bubble-pipeline-parallelism commit a84d634a, layers.py); a
 * row-parallel projection under sequence parallelism keeps its output gradient sharded
 * (reshard_for_sequence_parallel) and the W pass re-gathers it. That is most of a layer:
 * sail-sg's runtime.py (@39f2c186, L1336-1338) counts a layer's forward as 34h + 5as bytes
 * per token and what its W frees as 32h (KOR22's terms, h hidden, a heads, s sequence).
 */
void layer_w_pending(const struct layer_cost *lc, const struct shard *sh, double out[MM_COUNT])
{
    double p = dtype_bytes(sh->dt) < 2 ? 2 : dtype_bytes(sh->dt); /* activations in 16 bits */
    int row[PART_COUNT], i;

    memset(out, 0, sizeof(double) * MM_COUNT);
    for (i = 0; i < PART_COUNT; i++)
        row[i] = -1;
    for (i = 0; i < lc->nops; i++)
        if (is_proj(&lc->ops[i]))
            row[lc->ops[i].part] = i;
    for (i = 0; i < lc->nops; i++) {
        const struct op *o = &lc->ops[i];
        bool experts = o->part == PART_MLP && lc->moe_a2a_bytes > 0;
        double grad;
        if (!is_proj(o) || o->t_wgrad <= 0)
            continue;
        grad = o->m * o->n * o->batch * p;
        if (i == row[o->part] && sh->sp && !experts)
            grad /= sh->tp;
        out[strategy_op_module(o, true)] += o->saved + grad;
    }
}
