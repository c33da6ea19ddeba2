/* flow.c - see flow.h. Progressive filling with a lazy min-heap of link shares. */
#include "net/flow.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct flow {
    double cap; /* own rate cap, bytes/s; INFINITY = uncapped */
    int *links; /* distinct link ids, ascending */
    int nlinks;
    size_t cap_links;
    double rate; /* bytes/s, from the last solve */
    bool live;
};

/* A heap entry: the share of a link when it was pushed; stale when ver moved on. */
struct share {
    double share; /* remaining capacity / unfixed flows, bytes/s */
    int link;
    unsigned ver;
};

/* A flow with a finite own cap, for the sorted list of caps. */
struct capped {
    double cap; /* bytes/s */
    int id;
};

struct flow_net {
    double *link_cap; /* bytes/s per link */
    int nlinks;
    size_t cap_links;
    struct flow *flows; /* slots */
    int nslots;
    size_t cap_slots;
    int nlive;
    int free_hint; /* no free slot below this index */
    bool dirty;
    /* scratch for flow_solve, grown on demand; only links some live flow
       crosses are touched, so a solve costs O(flow-link pairs), not O(links) */
    double *rem;          /* remaining capacity per link */
    int *cnt;             /* unfixed flows per link */
    unsigned *ver;        /* bumped whenever rem or cnt of a link changes */
    unsigned *mark;       /* == stamp: the link is active in this solve */
    unsigned *dirty_mark; /* == batch: the link changed in this fixing batch */
    unsigned stamp, batch;
    int *act, nact;         /* active links, in first-seen order */
    int *changed, nchanged; /* links changed in the current batch */
    int *off, *end, *adj;   /* flows per active link: adj[off[l] .. end[l]), ids ascending */
    struct capped *capped;  /* capped live flows, by (cap, id) */
    bool *fixed;
    struct share *heap;
    size_t nheap, cap_heap;
    size_t cap_scratch_links, cap_scratch_flows, cap_adj;
};

struct flow_net *flow_new(void)
{
    return xcalloc(1, sizeof(struct flow_net));
}

void flow_free(struct flow_net *net)
{
    int i;

    if (!net)
        return;
    for (i = 0; i < net->nslots; i++)
        free(net->flows[i].links);
    free(net->flows);
    free(net->link_cap);
    free(net->rem);
    free(net->cnt);
    free(net->ver);
    free(net->off);
    free(net->end);
    free(net->adj);
    free(net->mark);
    free(net->dirty_mark);
    free(net->act);
    free(net->changed);
    free(net->capped);
    free(net->fixed);
    free(net->heap);
    free(net);
}

int flow_link_add(struct flow_net *net, double cap_Bps)
{
    assert(cap_Bps > 0 && isfinite(cap_Bps));
    VEC_PUSH(net->link_cap, net->nlinks, net->cap_links, cap_Bps);
    return net->nlinks - 1;
}

int flow_link_count(const struct flow_net *net)
{
    return net->nlinks;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int flow_add(struct flow_net *net, double cap_Bps, const int *links, int nlinks)
{
    struct flow *f;
    int id, i, n = 0;

    for (id = net->free_hint; id < net->nslots; id++)
        if (!net->flows[id].live)
            break;
    net->free_hint = id + 1;
    if (id == net->nslots) {
        grow_array((void **)&net->flows, &net->cap_slots, (size_t)net->nslots + 1,
                   sizeof(*net->flows));
        memset(&net->flows[net->nslots], 0, sizeof(*net->flows));
        net->nslots++;
    }
    f = &net->flows[id];
    grow_array((void **)&f->links, &f->cap_links, (size_t)(nlinks > 0 ? nlinks : 1),
               sizeof(*f->links));
    for (i = 0; i < nlinks; i++) {
        assert(links[i] >= 0 && links[i] < net->nlinks);
        f->links[i] = links[i];
    }
    qsort(f->links, (size_t)nlinks, sizeof(*f->links), cmp_int);
    for (i = 0; i < nlinks; i++)
        if (n == 0 || f->links[n - 1] != f->links[i])
            f->links[n++] = f->links[i];
    f->nlinks = n;
    f->cap = cap_Bps > 0 ? cap_Bps : INFINITY;
    assert(n > 0 || isfinite(f->cap));
    f->rate = 0;
    f->live = true;
    net->nlive++;
    net->dirty = true;
    return id;
}

void flow_remove(struct flow_net *net, int flow)
{
    assert(flow >= 0 && flow < net->nslots && net->flows[flow].live);
    net->flows[flow].live = false;
    net->flows[flow].rate = 0;
    if (flow < net->free_hint)
        net->free_hint = flow;
    net->nlive--;
    net->dirty = true;
}

double flow_rate(const struct flow_net *net, int flow)
{
    assert(flow >= 0 && flow < net->nslots && net->flows[flow].live);
    return net->flows[flow].rate;
}

int flow_count(const struct flow_net *net)
{
    return net->nlive;
}

/* ---- heap of link shares ---------------------------------------------------- */

static bool share_less(const struct share *a, const struct share *b)
{
    if (a->share < b->share)
        return true;
    if (b->share < a->share)
        return false;
    return a->link < b->link;
}

static void heap_push(struct flow_net *net, double share, int link)
{
    struct share e = { share, link, net->ver[link] };
    size_t i;

    grow_array((void **)&net->heap, &net->cap_heap, net->nheap + 1, sizeof(*net->heap));
    i = net->nheap++;
    while (i > 0 && share_less(&e, &net->heap[(i - 1) / 2])) {
        net->heap[i] = net->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    net->heap[i] = e;
}

static void heap_pop(struct flow_net *net)
{
    struct share last = net->heap[--net->nheap];
    size_t i = 0, n = net->nheap;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && share_less(&net->heap[c + 1], &net->heap[c]))
            c++;
        if (!share_less(&net->heap[c], &last))
            break;
        net->heap[i] = net->heap[c];
        i = c;
    }
    if (n > 0)
        net->heap[i] = last;
}

/* The most constrained link with unfixed flows, or -1; *share receives its share. */
static int heap_top(struct flow_net *net, double *share)
{
    while (net->nheap > 0) {
        const struct share *t = &net->heap[0];
        if (t->ver == net->ver[t->link] && net->cnt[t->link] > 0) {
            *share = t->share;
            return t->link;
        }
        heap_pop(net);
    }
    return -1;
}

/* ---- solve ---------------------------------------------------------------- */

static void grow_scratch(struct flow_net *net, size_t nadj)
{
    size_t nl = (size_t)net->nlinks, nf = (size_t)net->nslots, old = net->cap_scratch_links;

    if (nl > old || !net->rem) {
        net->cap_scratch_links = nl > 2 * old ? nl : 2 * old + 1;
        nl = net->cap_scratch_links;
        net->rem = xrealloc(net->rem, nl * sizeof(*net->rem));
        net->cnt = xrealloc(net->cnt, nl * sizeof(*net->cnt));
        net->ver = xrealloc(net->ver, nl * sizeof(*net->ver));
        net->mark = xrealloc(net->mark, nl * sizeof(*net->mark));
        net->dirty_mark = xrealloc(net->dirty_mark, nl * sizeof(*net->dirty_mark));
        net->act = xrealloc(net->act, nl * sizeof(*net->act));
        net->changed = xrealloc(net->changed, nl * sizeof(*net->changed));
        net->off = xrealloc(net->off, nl * sizeof(*net->off));
        net->end = xrealloc(net->end, nl * sizeof(*net->end));
        memset(net->mark + old, 0, (nl - old) * sizeof(*net->mark));
        memset(net->dirty_mark + old, 0, (nl - old) * sizeof(*net->dirty_mark));
    }
    if (nf > net->cap_scratch_flows || !net->fixed) {
        net->cap_scratch_flows = nf > 0 ? nf : 1;
        net->capped = xrealloc(net->capped, net->cap_scratch_flows * sizeof(*net->capped));
        net->fixed = xrealloc(net->fixed, net->cap_scratch_flows * sizeof(*net->fixed));
    }
    if (nadj > net->cap_adj || !net->adj) {
        net->cap_adj = nadj > 0 ? nadj : 1;
        net->adj = xrealloc(net->adj, net->cap_adj * sizeof(*net->adj));
    }
}

static int cmp_capped(const void *a, const void *b)
{
    const struct capped *x = a, *y = b;

    if (x->cap < y->cap)
        return -1;
    if (y->cap < x->cap)
        return 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Activate the links of live flows, build their flow lists, sort the capped flows. */
static int prepare(struct flow_net *net)
{
    size_t nadj = 0;
    int i, j, ncapped = 0, pos = 0;

    for (i = 0; i < net->nslots; i++)
        if (net->flows[i].live)
            nadj += (size_t)net->flows[i].nlinks;
    grow_scratch(net, nadj);
    if (++net->stamp == 0) { /* wrapped: forget every old mark */
        memset(net->mark, 0, net->cap_scratch_links * sizeof(*net->mark));
        net->stamp = 1;
    }
    net->nact = 0;
    for (i = 0; i < net->nslots; i++) {
        const struct flow *f = &net->flows[i];
        net->fixed[i] = !f->live;
        if (!f->live)
            continue;
        for (j = 0; j < f->nlinks; j++) {
            int l = f->links[j];
            if (net->mark[l] != net->stamp) {
                net->mark[l] = net->stamp;
                net->act[net->nact++] = l;
                net->cnt[l] = 0;
                net->rem[l] = net->link_cap[l];
                net->ver[l] = 0;
            }
            net->cnt[l]++;
        }
        if (isfinite(f->cap)) {
            net->capped[ncapped].cap = f->cap;
            net->capped[ncapped++].id = i;
        }
    }
    for (i = 0; i < net->nact; i++) {
        int l = net->act[i];
        net->off[l] = net->end[l] = pos;
        pos += net->cnt[l];
    }
    for (i = 0; i < net->nslots; i++) { /* ascending ids, so each list is sorted */
        const struct flow *f = &net->flows[i];
        if (!f->live)
            continue;
        for (j = 0; j < f->nlinks; j++)
            net->adj[net->end[f->links[j]]++] = i;
    }
    qsort(net->capped, (size_t)ncapped, sizeof(*net->capped), cmp_capped);
    return ncapped;
}

/* Fix one flow's rate and take it off its links; changed links are re-queued later. */
static void fix_flow(struct flow_net *net, int id, double rate)
{
    struct flow *f = &net->flows[id];
    int j;

    f->rate = rate;
    net->fixed[id] = true;
    for (j = 0; j < f->nlinks; j++) {
        int l = f->links[j];
        net->rem[l] -= rate;
        if (net->rem[l] < 0)
            net->rem[l] = 0; /* rounding */
        net->cnt[l]--;
        net->ver[l]++;
        if (net->dirty_mark[l] != net->batch) {
            net->dirty_mark[l] = net->batch;
            net->changed[net->nchanged++] = l;
        }
    }
}

/* Start a fixing batch. */
static void batch_begin(struct flow_net *net)
{
    if (++net->batch == 0) {
        memset(net->dirty_mark, 0, net->cap_scratch_links * sizeof(*net->dirty_mark));
        net->batch = 1;
    }
    net->nchanged = 0;
}

/* Re-queue the new share of every link the batch changed. */
static void batch_end(struct flow_net *net)
{
    int i;

    for (i = 0; i < net->nchanged; i++) {
        int l = net->changed[i];
        if (net->cnt[l] > 0)
            heap_push(net, net->rem[l] / net->cnt[l], l);
    }
}

void flow_solve(struct flow_net *net)
{
    int ncapped, next_cap = 0, unfixed = net->nlive, i;

    if (!net->dirty)
        return;
    net->dirty = false;
    ncapped = prepare(net);
    net->nheap = 0;
    for (i = 0; i < net->nact; i++)
        heap_push(net, net->rem[net->act[i]] / net->cnt[net->act[i]], net->act[i]);
    while (unfixed > 0) {
        double share = INFINITY;
        int link = heap_top(net, &share), j;

        while (next_cap < ncapped && net->fixed[net->capped[next_cap].id])
            next_cap++;
        batch_begin(net);
        if (next_cap < ncapped && (link < 0 || net->capped[next_cap].cap < share)) {
            int id = net->capped[next_cap++].id;
            fix_flow(net, id, net->flows[id].cap);
            unfixed--;
        } else {
            assert(link >= 0 && "an uncapped flow without links");
            for (j = net->off[link]; j < net->end[link]; j++) {
                int id = net->adj[j];
                if (net->fixed[id])
                    continue;
                fix_flow(net, id, share);
                unfixed--;
            }
        }
        batch_end(net);
    }
}
