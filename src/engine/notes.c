/*
 * notes.c - what the simulator records besides the totals (sim_internal.h): with --trace,
 * every task interval and each memory change of the traced ranks (every simulated rank, or
 * those sim_opts.trace_ranks lists); always, the list of distinct collective shapes the
 * report prints, each with its count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_internal.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

int notes_select(struct sim *sm, char *reason, size_t reason_len)
{
    const struct sim_opts *o = sm->opts;
    double bytes = 0;
    int ri, n = 0;

    for (ri = 0; ri < sm->nr && o->trace; ri++) {
        int rank = sm->res->ranks[ri].rank;
        bool on = !o->trace_ranks || bsearch(&rank, o->trace_ranks, (size_t)o->ntrace_ranks,
                                             sizeof(int), cmp_int) != NULL;
        sm->r[ri].traced = sm->res->ranks[ri].traced = on;
        if (on) {
            bytes += SIM_TRACE_BYTES_PER_TASK * sm->r[ri].ntasks;
            n++;
        }
    }
    if (bytes <= SIM_TRACE_MAX_BYTES)
        return 0;
    snprintf(reason, reason_len,
             "a trace of %d ranks would take about %.0f GiB, more than the %.0f GiB a trace may "
             "take; choose fewer ranks with --trace-ranks (for example --trace-ranks 0-7)",
             n, bytes / (1024.0 * 1024 * 1024), SIM_TRACE_MAX_BYTES / (1024.0 * 1024 * 1024));
    return -1;
}

void notes_task_record(struct sim *sm, int ri, int task, sim_time t0)
{
    struct sim_result *res = sm->res;
    struct trace_rec *tr;

    grow_array((void **)&res->trace, &res->cap_trace, res->ntrace + 1, sizeof(*res->trace));
    tr = &res->trace[res->ntrace++];
    tr->rank_idx = ri;
    tr->task = task;
    tr->t0 = t0;
    tr->t1 = sm->eng.now;
}

/* A sample of rank ri's memory by category now; changes at one instant share a sample. */
void notes_memory(struct sim *sm, int ri)
{
    struct rank_result *rr = &sm->res->ranks[ri];
    struct mem_sample *s;

    if (rr->ntl == 0 || rr->tl[rr->ntl - 1].t != sm->eng.now) {
        grow_array((void **)&rr->tl, &rr->cap_tl, rr->ntl + 1, sizeof(*rr->tl));
        rr->ntl++;
    }
    s = &rr->tl[rr->ntl - 1];
    s->t = sm->eng.now;
    memcpy(s->cur, rr->cur, sizeof(rr->cur));
}

/* The first operation of its shape on a communicator of this kind: a new note. */
int notes_coll_first(struct sim *sm, const struct comm *c, const struct inst *in,
                     struct cost_ent *ent)
{
    struct sim_result *res = sm->res;
    struct coll_note *n;

    if (res->nnotes >= SIM_MAX_NOTES)
        return -1;
    grow_array((void **)&res->notes, &res->cap_notes, (size_t)res->nnotes + 1, sizeof(*res->notes));
    ent->note[c->kind] = res->nnotes;
    n = &res->notes[res->nnotes++];
    memset(n, 0, sizeof(*n));
    n->comm_kind = c->kind;
    n->op = in->op;
    n->nranks = c->g.nranks;
    n->nnodes = c->g.nnodes;
    n->algo = c->cost.algo;
    n->proto = c->cost.proto;
    n->path = c->cost.path;
    n->bytes = in->bytes;
    n->time = coll_time(&c->cost);
    n->count = 1;
    return res->nnotes - 1;
}

void notes_count_ranks(struct sim *sm)
{
    struct sim_result *res = sm->res;

    for (int ci = 0; ci < sm->ncomms; ci++) {
        const struct comm *c = &sm->comms[ci];

        for (int k = 0; k < res->nnotes && !c->p2p; k++)
            if (c->noted[k / 64] & (uint64_t)1 << (k % 64))
                res->notes[k].ranks += c->nsim;
    }
    for (int k = 0; k < res->nnotes; k++)
        res->notes[k].per_rank =
            res->notes[k].ranks > 0 ? res->notes[k].member_ops / res->notes[k].ranks : 0;
}
