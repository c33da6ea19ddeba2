/* metrics.c - the metrics of a simulated step, once from its result; see metrics.h. */
#include "run/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "model/workload.h"

/* ---- time ----------------------------------------------------------------------------- */

/* Per category, the average over the simulated ranks of their breakdown or busy time, s. */
static void average(const struct sim_result *sim, bool busy, double out[TC_COUNT])
{
    int i, c;

    for (c = 0; c < TC_COUNT; c++)
        out[c] = 0;
    for (i = 0; i < sim->nranks; i++) {
        const sim_time *v = busy ? sim->ranks[i].busy : sim->ranks[i].bucket;
        for (c = 0; c < TC_COUNT; c++)
            out[c] += (double)v[c] / NS_PER_S / sim->nranks;
    }
}

/* ---- data-parallel traffic ------------------------------------------------------------ */

static bool dp_comm(int comm)
{
    return comm == COMM_DP || comm == COMM_DP_INTRA || comm == COMM_DP_INTER;
}

void metrics_prog_dp(const struct scenario *s, const struct prog *p, struct prog_dp_traffic *out)
{
    int i;

    memset(out, 0, sizeof(*out));
    /* Ψ as ZERO §7 counts it: the model replica a data-parallel rank holds, in 16-bit. */
    out->psi_bytes = 2.0 * workload_params_total(&s->model) / ((double)s->par.tp * s->par.pp);
    for (i = 0; i < p->ntasks; i++) {
        const struct task *t = &p->tasks[i];
        if (t->kind == TASK_COLL && dp_comm(t->comm)) {
            out->volume_bytes += t->bytes * (t->op == COLL_ALL_REDUCE ? 2 : 1);
            out->collectives++;
        } else if (t->kind == TASK_COPY) {
            if (t->stream == ST_H2D)
                out->h2d_bytes += t->bytes;
            else
                out->d2h_bytes += t->bytes;
        }
    }
}

static bool spans_nodes(const struct layout *l, int rank, int kind)
{
    int n = layout_group_size(l, kind), *m, i;
    bool span = false;

    if (n <= 1)
        return false;
    m = xmalloc(sizeof(int) * (size_t)n);
    n = layout_group(l, rank, kind, m, n);
    for (i = 1; i < n && !span; i++)
        span = layout_node(l, m[i]) != layout_node(l, m[0]);
    free(m);
    return span;
}

double metrics_dp_nic_bytes(const struct layout *l, int rank,
                            const double comm_bytes[COMM_KIND_COUNT])
{
    static const int kinds[] = { COMM_DP, COMM_DP_INTRA, COMM_DP_INTER };
    double sum = 0;
    size_t i;

    for (i = 0; i < ARRAY_LEN(kinds); i++)
        if (comm_bytes[kinds[i]] > 0 && spans_nodes(l, rank, kinds[i]))
            sum += comm_bytes[kinds[i]];
    return sum;
}

double metrics_dp_link_bytes(const double comm_bytes[COMM_KIND_COUNT])
{
    return comm_bytes[COMM_DP] + comm_bytes[COMM_DP_INTRA] + comm_bytes[COMM_DP_INTER];
}

/*
 * The average over the simulated ranks. Every rank of a stage runs its stage's program
 * (sim.h): each program is scanned once, not once per rank (16,384 times for 405b_16k
 * --ranks all).
 */
static void dp_traffic(const struct scenario *s, const struct layout *l, struct prog *const *progs,
                       int nprogs, const struct sim_result *sim, struct metrics_dp *out)
{
    int i, n = sim->nranks;
    struct prog_dp_traffic *memo = xcalloc((size_t)MAX(nprogs, 1), sizeof(*memo));
    bool *have = xcalloc((size_t)MAX(nprogs, 1), sizeof(*have));

    memset(out, 0, sizeof(*out));
    for (i = 0; i < n; i++) {
        const struct rank_result *rr = &sim->ranks[i];
        int k = rr->coords[DIM_PP];
        struct prog_dp_traffic t;
        if (k >= 0 && k < nprogs && progs[k] == rr->prog) {
            if (!have[k]) {
                metrics_prog_dp(s, rr->prog, &memo[k]);
                have[k] = true;
            }
            t = memo[k];
        } else {
            metrics_prog_dp(s, rr->prog, &t);
        }
        out->volume_bytes += t.volume_bytes / n;
        out->psi_bytes += t.psi_bytes / n;
        out->collectives += (double)t.collectives / n;
        out->h2d_bytes += t.h2d_bytes / n;
        out->d2h_bytes += t.d2h_bytes / n;
        out->link_bytes += metrics_dp_link_bytes(rr->comm_bytes) / n;
        out->nic_bytes += metrics_dp_nic_bytes(l, rr->rank, rr->comm_bytes) / n;
        out->exposed_s += (double)rr->bucket[TC_COMM_DP] / NS_PER_S / n;
        out->offload_s += (double)rr->bucket[TC_OFFLOAD] / NS_PER_S / n;
    }
    free(memo);
    free(have);
}

/* ---- all of them ------------------------------------------------------------------------ */

void metrics_compute(const struct scenario *s, const struct layout *l, struct prog *const *progs,
                     int nprogs, const struct sim_result *sim, double step_s,
                     struct run_metrics *out)
{
    memset(out, 0, sizeof(*out));
    average(sim, false, out->breakdown_s);
    average(sim, true, out->busy_s);
    dp_traffic(s, l, progs, progs ? nprogs : 0, sim, &out->dp);
    train_totals(s, step_s, &out->totals);
}
