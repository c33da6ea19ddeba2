/*
 * transfer.c - link resources and flows (sim_internal.h). Every simulated rank has one link
 * resource per tier (NVLink, PCIe, network) and its PCIe host-to-device and device-to-host
 * directions. A collective's bus bytes move as one flow over its members' links of the
 * bottleneck tier; a copy as one flow over its PCIe direction. Concurrent flows share links
 * max-min fairly (net/flow.h, the only solver): a flow alone on its links runs at its own
 * rate; otherwise the component of flows connected to it through shared links is re-solved,
 * once per simulated instant, when a flow starts or ends.
 *
 * The live flow graph (the flows on each link) is kept here, and flow.c solves each component
 * handed to it on a net that holds only the link capacities between solves. Keeping the graph
 * in flow.c instead (flows added and removed there as they start and end, a component search
 * of its own) was measured at +2.8 % of the flagship's instructions (200.6 M vs 195.1 M,
 * callgrind), most flows being alone on their links and never solved.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sim_internal.h"
#include "net/flow.h"

/*
 * Link ids in (rank, tier) order. A tier the hardware lacks (no NVLink on a PCIe machine, no
 * network on a single-node one) gets no link: the collective model never routes over it
 * (collective.c picks NVLink only where it has bandwidth, the network only across nodes,
 * which config/check.c allows only with a network), and a flow over it is a broken invariant.
 */
void transfer_setup(struct sim *sm)
{
    const struct hardware *hw = &sm->sc->hw;
    int ri, t;

    sm->net = flow_new();
    for (ri = 0; ri < sm->nr; ri++) {
        for (t = 0; t < TIER_COUNT + 2; t++) {
            double cap = t < TIER_COUNT ? coll_tier_bw(hw, (enum link_tier)t) : hw->pcie.bw_Bps;
            sm->r[ri].res[t] = cap > 0 ? flow_link_add(sm->net, cap) : -1;
        }
    }
    sm->nres = flow_link_count(sm->net);
    sm->res_flows = xcalloc((size_t)(sm->nres ? sm->nres : 1), sizeof(*sm->res_flows));
}

static void ev_flow_done(struct engine *e, void *ctx, int64_t data);

static const int *links_of(const struct sflow *f)
{
    return f->nres > (int)ARRAY_LEN(f->res) ? f->res_many : f->res;
}

/* Its end: its bytes left at its rate, from now or from the end of its latency. */
static inline void schedule_end(struct sim *sm, int fi)
{
    struct sflow *f = &sm->flows[fi];
    sim_time from = MAX(f->last, sm->eng.now);

    f->gen++;
    engine_at(&sm->eng, time_add(from, ns_from_s(f->remaining / f->rate)), ev_flow_done, sm,
              ((int64_t)f->gen << 32) | fi);
}

/* A flow's rate changes: account for what it moved and reschedule its end. */
static void rerate(struct sim *sm, int fi, double rate)
{
    struct sflow *f = &sm->flows[fi];

    if (!(rate < f->rate || rate > f->rate))
        return;
    if (sm->eng.now > f->last) { /* a flow still in its latency has moved nothing yet */
        f->remaining -= f->rate * ((double)(sm->eng.now - f->last) / NS_PER_S);
        if (f->remaining < 0)
            f->remaining = 0;
        f->last = sm->eng.now;
    }
    /* links and caps are positive (transfer_setup(), the collective model, pcie.bandwidth > 0
       at load), so max-min gives every flow a positive share */
    assert(rate > 0 && "a flow without bandwidth");
    f->rate = rate;
    schedule_end(sm, fi);
}

/*
 * Re-solve the max-min allocation of the flows connected to the seeds
 * through shared link resources, and reschedule those whose rate moved.
 * Max-min fairness decomposes over connected components, so solving only
 * the component a change touched gives the global allocation at a cost that
 * does not grow with the number of ranks (--ranks all on 16k GPUs).
 */
static void solve_component(struct sim *sm, const int *seeds, int nseeds)
{
    int ncomp = 0, k, i, j;

    if (++sm->stamp == 0)
        sm->stamp = 1;
    for (k = 0; k < nseeds; k++) {
        struct sflow *f = &sm->flows[seeds[k]];
        if (!f->active || f->mark == sm->stamp)
            continue;
        f->mark = sm->stamp;
        grow_array((void **)&sm->comp, &sm->cap_comp, (size_t)ncomp + 1, sizeof(int));
        sm->comp[ncomp++] = seeds[k];
    }
    for (k = 0; k < ncomp; k++) {
        const struct sflow *f = &sm->flows[sm->comp[k]];
        const int *res = links_of(f);
        for (i = 0; i < f->nres; i++) {
            const struct rflows *rl = &sm->res_flows[res[i]];
            for (j = 0; j < rl->n; j++) {
                struct sflow *g = &sm->flows[rl->f[j]];
                if (g->mark == sm->stamp)
                    continue;
                g->mark = sm->stamp;
                grow_array((void **)&sm->comp, &sm->cap_comp, (size_t)ncomp + 1, sizeof(int));
                sm->comp[ncomp++] = rl->f[j];
            }
        }
    }
    if (ncomp == 0)
        return;
    /* The component's flows alone in the shared net (its links were added at setup). */
    grow_array((void **)&sm->fids, &sm->cap_fids, (size_t)ncomp, sizeof(int));
    for (k = 0; k < ncomp; k++) {
        const struct sflow *f = &sm->flows[sm->comp[k]];
        sm->fids[k] = flow_add(sm->net, f->cap, links_of(f), f->nres);
    }
    flow_solve(sm->net);
    for (k = 0; k < ncomp; k++)
        rerate(sm, sm->comp[k], flow_rate(sm->net, sm->fids[k]));
    for (k = 0; k < ncomp; k++)
        flow_remove(sm->net, sm->fids[k]);
}

/*
 * Flows start and end in bursts at one instant (every data-parallel replica
 * sends its activations at the same time): queue their components and solve
 * once, from an event at the same time that runs after those already queued.
 * Rates are stale for zero simulated time, so results do not change.
 */
static void ev_solve(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int n = sm->npending;

    (void)e;
    (void)data;
    sm->npending = 0;
    grow_array((void **)&sm->seeds, &sm->cap_seeds, (size_t)n + 1, sizeof(int));
    memcpy(sm->seeds, sm->pending, sizeof(int) * (size_t)n);
    solve_component(sm, sm->seeds, n);
    exec_drain(sm);
}

static void solve_later(struct sim *sm, const int *flows, int n)
{
    if (n <= 0)
        return;
    if (sm->npending == 0)
        engine_at(&sm->eng, sm->eng.now, ev_solve, sm, 0);
    grow_array((void **)&sm->pending, &sm->cap_pending, (size_t)(sm->npending + n), sizeof(int));
    memcpy(sm->pending + sm->npending, flows, sizeof(int) * (size_t)n);
    sm->npending += n;
}

static void res_flows_add(struct sim *sm, int r, int fi)
{
    struct rflows *rl = &sm->res_flows[r];

    if (rl->n == rl->cap) {
        rl->cap = rl->cap ? 2 * rl->cap : 4;
        rl->f = xrealloc(rl->f, sizeof(int) * (size_t)rl->cap);
    }
    rl->f[rl->n++] = fi;
}

/* Remove fi, keeping the order of the others (determinism of the search order). */
static void res_flows_remove(struct sim *sm, int r, int fi)
{
    struct rflows *rl = &sm->res_flows[r];
    int i;

    for (i = 0; i < rl->n; i++)
        if (rl->f[i] == fi)
            break;
    assert(i < rl->n);
    for (rl->n--; i < rl->n; i++) /* a few entries: no call to memmove */
        rl->f[i] = rl->f[i + 1];
}

/*
 * A flow slot (*fi) over nres link resources: returns the array the caller fills with the
 * resource ids before begin().
 */
static inline int *reserve(struct sim *sm, int nres, int *fi)
{
    struct sflow *f;

    if (sm->nfree > 0) {
        *fi = sm->free_flows[--sm->nfree];
    } else {
        grow_array((void **)&sm->flows, &sm->cap_flows, (size_t)sm->nflows + 1, sizeof(*sm->flows));
        *fi = sm->nflows++;
        memset(&sm->flows[*fi], 0, sizeof(sm->flows[*fi]));
    }
    f = &sm->flows[*fi];
    f->nres = nres;
    if (nres <= (int)ARRAY_LEN(f->res))
        return f->res;
    if (nres > f->cap_many) {
        free(f->res_many);
        f->res_many = xmalloc(sizeof(int) * (size_t)nres);
        f->cap_many = nres;
    }
    return f->res_many;
}

/*
 * Start flow fi (resources filled in) of `bytes` at `cap` bytes/s in isolation, for
 * communicator `comm`, or (comm = -1) for copy task ti of rank ri; its bytes move from
 * now + delay.
 */
static inline void begin(struct sim *sm, int fi, int comm, int ri, int ti, double bytes, double cap,
                         sim_time delay)
{
    struct sflow *f = &sm->flows[fi];
    const int *res = links_of(f);
    int nres = f->nres, i, shared = 0;

    f->comm = comm;
    f->rank = ri;
    f->task = ti;
    f->remaining = bytes;
    f->last = time_add(sm->eng.now, delay);
    f->active = 1;
    assert(cap > 0 && "a flow without bandwidth");
    f->cap = cap;
    for (i = 0; i < nres; i++) {
        res_flows_add(sm, res[i], fi);
        shared |= sm->res_flows[res[i]].n > 1;
    }
    if (shared) {
        f->rate = 0;
        solve_later(sm, &fi, 1);
    } else {
        /* Alone on its links: a flow runs at its own solo bandwidth. */
        f->rate = cap;
        schedule_end(sm, fi);
    }
}

/*
 * The operation's bytes as one flow over its members' links of the bottleneck tier,
 * starting after the latency (`delay`): the flow holds its links from now, which saves an
 * event per operation; its bytes start to move at now + delay.
 */
void transfer_coll(struct sim *sm, int ci, sim_time delay)
{
    const struct comm *c = &sm->comms[ci];
    int fi, i;
    int *res = reserve(sm, c->nsim, &fi);

    for (i = 0; i < c->nsim; i++) {
        res[i] = sm->r[c->members[i]].res[c->cost.tier];
        assert(res[i] >= 0 && "a flow over a tier without bandwidth");
    }
    begin(sm, fi, ci, -1, -1, c->cost.bus_bytes, c->cost.bus_bw_Bps, delay);
}

/* A copy over its rank's PCIe link of its direction, at the PCIe bandwidth or the rank's share
   of the host DRAM (hw_host_copy_Bps). */
void transfer_copy(struct sim *sm, int ri, int ti)
{
    const struct task *t = &sm->r[ri].prog->tasks[ti];
    int fi;

    *reserve(sm, 1, &fi) = sm->r[ri].res[t->stream == ST_D2H ? TIER_COUNT + 1 : TIER_COUNT];
    begin(sm, fi, -1, ri, ti, t->bytes, hw_host_copy_Bps(&sm->sc->hw, sm->sc->gpus), 0);
}

static void ev_flow_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int fi = (int)(data & 0xffffffff);
    struct sflow *f = &sm->flows[fi];
    const int *res;
    int i, nseeds;

    (void)e;
    if (!f->active || (uint32_t)(data >> 32) != f->gen)
        return; /* superseded by a rate change */
    res = links_of(f);
    nseeds = 0;
    /* the flows left on its links, whose shares grow: none when it was alone on them */
    for (i = 0; i < f->nres; i++) {
        const struct rflows *rl;
        res_flows_remove(sm, res[i], fi);
        rl = &sm->res_flows[res[i]];
        if (rl->n == 0)
            continue;
        grow_array((void **)&sm->seeds, &sm->cap_seeds, (size_t)(nseeds + rl->n), sizeof(int));
        memcpy(sm->seeds + nseeds, rl->f, sizeof(int) * (size_t)rl->n);
        nseeds += rl->n;
    }
    f->active = 0;
    grow_array((void **)&sm->free_flows, &sm->cap_free, (size_t)sm->nfree + 1, sizeof(int));
    sm->free_flows[sm->nfree++] = fi;
    if (f->comm >= 0) {
        comms_finish(sm, f->comm);
    } else {
        exec_account(sm, f->rank);
        exec_complete(sm, f->rank, f->task);
    }
    if (nseeds > 0)
        solve_later(sm, sm->seeds, nseeds);
    exec_drain(sm);
}

void transfer_release(struct sim *sm)
{
    int i;

    for (i = 0; i < sm->nflows; i++)
        free(sm->flows[i].res_many);
    free(sm->flows);
    free(sm->free_flows);
    for (i = 0; i < sm->nres; i++)
        free(sm->res_flows[i].f);
    free(sm->res_flows);
    free(sm->fids);
    free(sm->pending);
    flow_free(sm->net);
    free(sm->comp);
    free(sm->seeds);
}
