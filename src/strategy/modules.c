/*
 * modules.c - which module of the model the bytes of each activation mark belong to (the
 * per-module view of the peak: `simtrain memory`): the operators' saved tensors grouped by
 * module (embedding, attention, MLP, norms, head and loss, recompute checkpoints), and the
 * attributions build.c hangs on its marks (prog_mem_modules()), computed once per stage.
 */
#include "strategy/strategy.h"

#include <assert.h>
#include <string.h>

int strategy_op_module(const struct op *o, bool layer)
{
    if (o->kind == OP_EMBED)
        return MM_EMBED;
    if (o->kind == OP_MEM && o->seg == SEG_PRE)
        return MM_NORM; /* the norm before a block's first projection (workload.c wl_norm_op) */
    if (!layer)
        return MM_HEAD;
    return o->part == PART_ATTN ? MM_ATTN : MM_MLP;
}

void strategy_layer_modules(const struct layer_cost *lc, enum recompute rc, double out[MM_COUNT])
{
    memset(out, 0, sizeof(double) * MM_COUNT);
    if (rc == RC_FULL) {
        out[MM_CKPT] = lc->act[RC_FULL]; /* only the layer input stays (workload_layer()) */
        return;
    }
    for (int i = 0; i < lc->nops; i++) {
        const struct op *o = &lc->ops[i];
        out[strategy_op_module(o, true)] += rc == RC_SELECTIVE && o->core ? o->kept : o->saved;
    }
}

void strategy_edge_modules(const struct edge_cost *ec, bool layer, double out[MM_COUNT])
{
    memset(out, 0, sizeof(double) * MM_COUNT);
    for (int i = 0; i < ec->nops; i++)
        out[strategy_op_module(&ec->ops[i], layer)] += ec->ops[i].saved;
}

void strategy_modules_whole(const double v[MM_COUNT], double total, int64_t out[MM_COUNT])
{
    int64_t want = bytes_i64(total), sum = 0;
    int big = 0;

    for (int m = 0; m < MM_COUNT; m++) {
        out[m] = bytes_i64(v[m] > 0 ? v[m] : 0);
        sum += out[m];
        if (out[m] > out[big])
            big = m;
    }
    out[big] += want - sum;
}

/* One module holding all of `total`. */
static void all_in(int m, double total, int64_t out[MM_COUNT])
{
    memset(out, 0, sizeof(int64_t) * MM_COUNT);
    out[m] = bytes_i64(total);
}

static void layer_mods(const struct layer_cost *lc, struct layer_mods *out)
{
    for (int rc = RC_NONE; rc <= RC_FULL; rc++) {
        double v[MM_COUNT];
        strategy_layer_modules(lc, (enum recompute)rc, v);
        strategy_modules_whole(v, lc->act[rc], out->saved[rc]);
        memset(out->extra[rc], 0, sizeof(out->extra[rc]));
        if (rc != RC_NONE) {
            /* What the recomputation brings back: the full set less what was kept; under full
             * recompute the kept layer input is the first norm's input, taken from the norms. */
            double none[MM_COUNT];
            strategy_layer_modules(lc, RC_NONE, none);
            for (int m = 0; m < MM_COUNT; m++)
                v[m] = none[m] - (rc == RC_SELECTIVE ? v[m] : 0);
            if (rc == RC_FULL)
                v[MM_NORM] -= lc->act[RC_FULL];
            strategy_modules_whole(v, lc->act[RC_NONE] - lc->act[rc], out->extra[rc]);
        }
    }
    all_in(MM_MLP, lc->bwd_transient, out->transient); /* the MLP backward's gradients */
}

/* What a zero-bubble B pass keeps for its W, for each layer variant the stage has. */
static void w_pending_mods(struct build *b)
{
    const struct model *m = &b->s->model;
    bool win = m->window > 0 && m->window < b->s->train.seq_len;
    const struct layer_cost *lc[4] = { &b->layer, &b->layer_moe, &b->layer_win, &b->layer_moe_win };

    for (int v = 0; v < 4; v++) {
        double bytes[MM_COUNT], total = 0;
        if (((v & 1) && m->moe.experts == 0) || ((v & 2) && !win))
            continue;
        layer_w_pending(lc[v], &b->sh, bytes);
        for (int k = 0; k < MM_COUNT; k++)
            total += bytes[k];
        strategy_modules_whole(bytes, total, b->mods.w_pending[v]);
        b->mods.w_pending_bytes[v] = bytes_i64(total);
    }
}

void strategy_modules_init(struct build *b)
{
    struct build_mods *bm = &b->mods;
    double v[MM_COUNT];

    layer_mods(&b->layer, &bm->layer[0]);
    if (b->s->model.moe.experts > 0)
        layer_mods(&b->layer_moe, &bm->layer[1]);
    if (b->s->par.schedule == SCHED_ZB_H1)
        w_pending_mods(b);
    strategy_edge_modules(&b->embed, false, v);
    strategy_modules_whole(v, b->embed.act, bm->embed);
    strategy_edge_modules(&b->head, false, v);
    strategy_modules_whole(v, b->head.act, bm->head_act);
    all_in(MM_HEAD, b->head.logits_bytes, bm->logits);
    all_in(MM_HEAD, b->head.transient_bytes, bm->logits_transient);
}

void strategy_mark_modules(struct build *b, int task, bool at_end, const int64_t bytes[MM_COUNT],
                           int sign)
{
    /* The memo key names the piece by its place in b->mods, which fixes its bytes for the
     * stage (an offset within the struct, not an address), and by its sign. */
    size_t off = (size_t)((const char *)bytes - (const char *)&b->mods) / sizeof(bytes[0]);

    assert(off < sizeof(b->mods) / sizeof(bytes[0]));
    prog_mem_modules(b->p, task, at_end, bytes, sign, (uint32_t)(2 * off + (sign < 0) + 1));
}
