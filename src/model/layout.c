/* layout.c - see layout.h. */
#include "model/layout.h"

#include <assert.h>

void layout_init(struct layout *l, const struct scenario *s)
{
    int stride = 1, i;

    l->deg[DIM_TP] = s->par.tp;
    l->deg[DIM_CP] = s->par.cp;
    l->deg[DIM_EP] = 1;
    l->deg[DIM_DP] = s->par.dp;
    l->deg[DIM_PP] = s->par.pp;
    l->ep = s->par.ep;
    l->gpus_per_node = s->hw.gpus_per_node > 0 ? s->hw.gpus_per_node : 1;
    if (l->gpus_per_node > s->gpus)
        l->gpus_per_node = s->gpus;
    for (i = 0; i < DIM_COUNT; i++) {
        int d = s->par.order[i];
        l->stride[d] = stride;
        stride *= l->deg[d];
    }
    l->world = stride;
    assert(l->world == s->gpus);
    /* HSDP shards over fsdp.shard_group consecutive DP ranks (torchtitan's
       data_parallel_shard_degree, a 2-D device mesh), by default the DP peers that share a
       node (FSDP1 HYBRID_SHARD's default process groups). */
    l->hsdp_shard = 0;
    if (s->par.sharding == SHARD_HSDP && s->fsdp.shard_group > 0) {
        l->hsdp_shard = s->fsdp.shard_group < l->deg[DIM_DP] ? s->fsdp.shard_group : l->deg[DIM_DP];
    } else if (s->par.sharding == SHARD_HSDP) {
        int within = l->gpus_per_node /
                     (l->stride[DIM_DP] < l->gpus_per_node ? l->stride[DIM_DP] : l->gpus_per_node);
        l->hsdp_shard = within < 1 ? 1 : (within > l->deg[DIM_DP] ? l->deg[DIM_DP] : within);
    }
}

const char *layout_sharding_reading(const struct scenario *s)
{
    struct layout l;

    if (s->par.zero2_read)
        return s->par.pp > 1 ? "zero2 read as FSDP2 without resharding after forward under "
                               "pipelining (parallelism.zero2_impl)"
                             : "zero2 read as FSDP without resharding after forward "
                               "(parallelism.zero2_impl)";
    if (s->par.sharding != SHARD_HSDP)
        return NULL;
    layout_init(&l, s);
    return l.hsdp_shard >= l.deg[DIM_DP] ? "one replica group: hsdp shards over all of dp, as fsdp"
                                         : NULL;
}

void layout_coords(const struct layout *l, int rank, int c[DIM_COUNT])
{
    int d;

    for (d = 0; d < DIM_COUNT; d++)
        c[d] = (rank / l->stride[d]) % l->deg[d];
    c[DIM_EP] = c[DIM_DP] % l->ep;
}

int layout_rank(const struct layout *l, const int c[DIM_COUNT])
{
    int d, r = 0;

    for (d = 0; d < DIM_COUNT; d++)
        if (d != DIM_EP)
            r += c[d] * l->stride[d];
    return r;
}

int layout_group_size(const struct layout *l, int kind)
{
    switch (kind) {
    case COMM_TP:
        return l->deg[DIM_TP];
    case COMM_CP:
        return l->deg[DIM_CP];
    case COMM_EP:
        return l->ep;
    case COMM_DP:
        return l->deg[DIM_DP] * l->deg[DIM_CP];
    case COMM_DP_INTRA:
        return l->hsdp_shard ? l->hsdp_shard : l->deg[DIM_DP];
    case COMM_DP_INTER:
        return l->hsdp_shard ? l->deg[DIM_DP] / l->hsdp_shard : 1;
    case COMM_EDP:
        return l->deg[DIM_DP] / l->ep;
    default:
        return 2;
    }
}

int layout_peer(const struct layout *l, int rank, int kind)
{
    int c[DIM_COUNT], pp = l->deg[DIM_PP];

    layout_coords(l, rank, c);
    if (kind == COMM_PP_NEXT)
        c[DIM_PP] = (c[DIM_PP] + 1) % pp;
    else
        c[DIM_PP] = (c[DIM_PP] + pp - 1) % pp;
    return layout_rank(l, c);
}

/* Does member index `i` of a group of `kind` around coordinates c exist; fill its coords. */
static int member_coords(const struct layout *l, int kind, const int base[DIM_COUNT], int i,
                         int c[DIM_COUNT])
{
    int d, dp;

    for (d = 0; d < DIM_COUNT; d++)
        c[d] = base[d];
    switch (kind) {
    case COMM_TP:
        c[DIM_TP] = i;
        break;
    case COMM_CP:
        c[DIM_CP] = i;
        break;
    case COMM_EP:
        c[DIM_DP] = base[DIM_DP] - base[DIM_DP] % l->ep + i;
        break;
    case COMM_DP:
        c[DIM_DP] = i % l->deg[DIM_DP];
        c[DIM_CP] = i / l->deg[DIM_DP];
        break;
    case COMM_DP_INTRA: {
        int shard = l->hsdp_shard ? l->hsdp_shard : l->deg[DIM_DP];
        c[DIM_DP] = base[DIM_DP] - base[DIM_DP] % shard + i;
        break;
    }
    case COMM_DP_INTER: {
        int shard = l->hsdp_shard ? l->hsdp_shard : l->deg[DIM_DP];
        c[DIM_DP] = base[DIM_DP] % shard + i * shard;
        break;
    }
    case COMM_EDP:
        dp = base[DIM_DP] % l->ep;
        c[DIM_DP] = dp + i * l->ep;
        break;
    default:
        return 0;
    }
    return 1;
}

static void sort_ints(int *a, int n)
{
    int i, j;

    for (i = 1; i < n; i++) {
        int v = a[i];
        for (j = i; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

int layout_group(const struct layout *l, int rank, int kind, int *out, int max)
{
    int base[DIM_COUNT], c[DIM_COUNT], n, i;

    (void)max; /* checked by the asserts below */
    if (kind == COMM_PP_NEXT || kind == COMM_PP_PREV) {
        int peer = layout_peer(l, rank, kind);
        assert(max >= 2);
        out[0] = rank < peer ? rank : peer;
        out[1] = rank < peer ? peer : rank;
        return peer == rank ? 1 : 2;
    }
    layout_coords(l, rank, base);
    n = layout_group_size(l, kind);
    assert(n <= max);
    for (i = 0; i < n; i++) {
        member_coords(l, kind, base, i, c);
        out[i] = layout_rank(l, c);
    }
    sort_ints(out, n);
    return n;
}

void layout_group_shape(const struct layout *l, const int *members, int n, struct comm_group *g)
{
    int gpn = l->gpus_per_node;
    int first_node = layout_node(l, members[0]);
    int ppn0 = 0, nodes = 1, cur = 0, maxppn = 0, rail = 1, i;

    while (ppn0 < n && layout_node(l, members[ppn0]) == first_node)
        ppn0++;
    for (i = 0; i < n; i++) {
        if (i > 0 && layout_node(l, members[i]) != layout_node(l, members[i - 1])) {
            nodes++;
            cur = 0;
        }
        /* the k-th member of every node has the local index of the first node's k-th */
        if (cur >= ppn0 || members[i] % gpn != members[cur] % gpn)
            rail = 0;
        cur++;
        if (cur > maxppn)
            maxppn = cur;
    }
    g->nranks = n;
    g->nnodes = nodes;
    g->ppn = maxppn;
    g->rail_aligned = rail && n == nodes * ppn0;
}
