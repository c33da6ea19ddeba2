/*
 * dp.c - choosing a data-parallel strategy, and the pieces the strategies
 * share (see dp_internal.h): process groups in issue order, gradient buckets and memory
 * marks.
 */
#include "strategy/dp_internal.h"

#include <stdlib.h>
#include <string.h>

#include "model/memory.h"
#include "model/workload.h"

/* The dp_ops of the implementation rules_dp_impl() names (rules.c gives the reasons). */
const struct dp_ops *strategy_dp_ops(const struct scenario *s, char *reason, size_t reason_len)
{
    switch (rules_dp_impl(s)) {
    case DPI_DDP:
        return &dp_ddp;
    case DPI_ZERO12:
        return &dp_zero12;
    case DPI_ZERO3:
        return &dp_zero3;
    case DPI_FSDP:
        return &dp_fsdp;
    case DPI_NONE:
    default:
        break;
    }
    snprintf(reason, reason_len, "sharding '%s' is not modelled", sharding_name(s->par.sharding));
    return NULL;
}

/* ---- process groups ----------------------------------------------------------------------- */

void dp_pg_init(struct dp_pg *pg, const struct build *b, int comm)
{
    pg->comm = comm;
    pg->size = layout_group_size(b->l, comm);
    pg->last = -1;
}

int dp_pg_coll(struct build *b, struct dp_pg *pg, int stream, int op, double bytes,
               const char *label, int arg, int dep)
{
    struct prog *p = b->p;
    int t;

    if (pg->size <= 1 || bytes <= 0)
        return -1;
    t = prog_coll(p, stream, TC_COMM_DP, pg->comm, op, bytes, prog_label(p, label, arg), -1);
    if (dep >= 0)
        prog_dep(p, t, dep);
    if (pg->last >= 0 && pg->last != dep)
        prog_dep(p, t, pg->last);
    pg->last = t;
    return t;
}

/* ---- buckets ------------------------------------------------------------------------------ */

void dp_bucket_init(struct dp_bucket *bk, double first_bytes, double bytes)
{
    bk->first = first_bytes > 0 ? first_bytes : bytes;
    bk->cap = bytes;
    bk->fill = 0;
    bk->issued = 0;
}

double dp_bucket_pour(struct dp_bucket *bk, double *bytes)
{
    double cap = bk->issued == 0 ? bk->first : bk->cap;
    double take = cap - bk->fill < *bytes ? cap - bk->fill : *bytes;

    bk->fill += take;
    *bytes -= take;
    if (bk->fill < cap)
        return 0;
    return dp_bucket_flush(bk);
}

double dp_bucket_flush(struct dp_bucket *bk)
{
    double full = bk->fill;

    if (full <= 0)
        return 0;
    bk->fill = 0;
    bk->issued++;
    return full;
}

/* ---- memory and units --------------------------------------------------------------------- */

int dp_mem_mark(struct build *b, int stream, int dep, int cat, double bytes, const char *label)
{
    struct prog *p = b->p;
    int t = prog_mark(p, stream, prog_label(p, label, 0));

    if (dep >= 0)
        prog_dep(p, t, dep);
    task_mem_start(&p->tasks[t], cat, bytes_i64(bytes));
    return t;
}

double dp_unit_gather_bytes(const struct build *b, int unit, double param_bytes)
{
    struct param_roles r;

    states_unit_roles(b, unit, &r);
    return r.trainable * param_bytes + r.frozen * memory_frozen_bytes(b->s, false) +
           r.frozen_quant * memory_frozen_bytes(b->s, true);
}

double dp_unit_grad_elems(const struct build *b, int unit)
{
    return states_unit_trainable(b, unit);
}

bool dp_unit_ends_backward(const struct build *b, int ui)
{
    return ui == b->chunk_first[b->units[ui].chunk];
}
