/* topo.c - see topo.h. Graph construction, then routing by the rules there. */
#include "model/topo.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct builder {
    struct topo *t;
    size_t cap_v, cap_l;
};

static int add_vertex(struct builder *b, enum topo_vertex_kind kind, int node, int index)
{
    struct topo_vertex v = { kind, node, index };
    VEC_PUSH(b->t->v, b->t->nv, b->cap_v, v);
    return b->t->nv - 1;
}

static void add_link(struct builder *b, int x, int y, enum topo_link_kind kind, double bw_Bps,
                     sim_time latency)
{
    struct topo_link l = { x, y, kind, bw_Bps, latency };
    assert(bw_Bps > 0);
    VEC_PUSH(b->t->l, b->t->nl, b->cap_l, l);
}

/* Local GPU that NIC k is attached next to (DGX-style affinity). */
static int nic_gpu(const struct topo *t, int k)
{
    return k * t->gpus_per_node / t->nics_per_node;
}

/* NIC (local index) closest to local GPU g. */
static int gpu_nic(const struct topo *t, int g)
{
    return g * t->nics_per_node / t->gpus_per_node;
}

/* The PCIe parent (switch or root complex) vertex of local GPU g on node n. */
static int pcie_parent(const struct topo *t, int n, int g)
{
    if (t->nswitches == 0)
        return t->cpu_v[n];
    return t->psw_v[n * t->nswitches + g / t->gpus_per_switch];
}

static void build_node(struct builder *b, const struct hardware *hw, int n)
{
    struct topo *t = b->t;
    int G = t->gpus_per_node, g, s, k;
    double nvl_bw = hw->nvlink.bw_Bps, pcie_bw = hw->pcie.bw_Bps;

    t->node_v[n] = t->nv;
    for (g = 0; g < G; g++)
        t->gpu_v[n * G + g] = add_vertex(b, TV_GPU, n, g);
    t->cpu_v[n] = add_vertex(b, TV_CPU, n, 0);
    t->mem_v[n] = add_vertex(b, TV_HOSTMEM, n, 0);
    /* DRAM is shared by reads and writes: half the bandwidth each way */
    add_link(b, t->cpu_v[n], t->mem_v[n], TL_HOST,
             hw->host.mem_bw_Bps > 0 ? hw->host.mem_bw_Bps / 2 : pcie_bw, 0);
    for (s = 0; s < t->nswitches; s++) {
        t->psw_v[n * t->nswitches + s] = add_vertex(b, TV_PCIE_SWITCH, n, s);
        add_link(b, t->psw_v[n * t->nswitches + s], t->cpu_v[n], TL_PCIE, pcie_bw,
                 hw->pcie.latency);
    }
    for (g = 0; g < G; g++)
        add_link(b, t->gpu_v[n * G + g], pcie_parent(t, n, g), TL_PCIE, pcie_bw, hw->pcie.latency);
    if (t->nvswitch) {
        t->nvs_v[n] = add_vertex(b, TV_NVSWITCH, n, 0);
        for (g = 0; g < G; g++)
            add_link(b, t->gpu_v[n * G + g], t->nvs_v[n], TL_NVLINK, nvl_bw,
                     hw->nvlink.latency / 2);
    } else if (t->nvlink && G > 1) {
        int h;
        for (g = 0; g < G; g++)
            for (h = g + 1; h < G; h++)
                add_link(b, t->gpu_v[n * G + g], t->gpu_v[n * G + h], TL_NVLINK, nvl_bw / (G - 1),
                         hw->nvlink.latency);
    }
    for (k = 0; k < t->nics_per_node; k++) {
        int v = add_vertex(b, TV_NIC, n, k);
        t->nic_v[n * t->nics_per_node + k] = v;
        add_link(b, v, pcie_parent(t, n, nic_gpu(t, k)), TL_PCIE, pcie_bw, hw->pcie.latency);
    }
}

/* Leaves, spine and NIC uplinks. */
static void build_fabric(struct builder *b, const struct hardware *hw)
{
    struct topo *t = b->t;
    const struct network_spec *net = &hw->net;
    int n, k, i, per_leaf;
    double over = net->oversubscription >= 1 ? net->oversubscription : 1;

    if (t->nics_per_node == 0 || net->nic_bw_Bps <= 0)
        return;
    if (t->fabric_levels <= 1)
        t->nleaves = 1;
    else
        t->nleaves = t->rail_optimized ? t->nics_per_node : t->nodes;
    t->leaf_v = xcalloc((size_t)t->nleaves, sizeof(*t->leaf_v));
    for (i = 0; i < t->nleaves; i++)
        t->leaf_v[i] = add_vertex(b, TV_LEAF, -1, i);
    for (n = 0; n < t->nodes; n++)
        for (k = 0; k < t->nics_per_node; k++) {
            int leaf = t->nleaves == 1 ? 0 : t->rail_optimized ? k : n;
            add_link(b, t->nic_v[n * t->nics_per_node + k], t->leaf_v[leaf], TL_NET,
                     net->nic_bw_Bps, net->latency / 2);
        }
    if (t->nleaves == 1)
        return;
    t->spine_v = add_vertex(b, TV_SPINE, -1, 0);
    per_leaf = t->rail_optimized ? t->nodes : t->nics_per_node;
    for (i = 0; i < t->nleaves; i++)
        add_link(b, t->leaf_v[i], t->spine_v, TL_NET, per_leaf * net->nic_bw_Bps / over,
                 net->hop_latency * (t->fabric_levels - 1));
}

struct topo *topo_new(const struct hardware *hw, int nodes)
{
    struct builder b = { 0 };
    struct topo *t = xcalloc(1, sizeof(*t));
    int G = hw->gpus_per_node > 0 ? hw->gpus_per_node : 1, n;

    assert(nodes >= 1);
    b.t = t;
    t->nodes = nodes;
    t->gpus_per_node = G;
    t->nics_per_node = hw->net.nic_bw_Bps > 0 ? hw->net.nics_per_node : 0;
    t->nvlink = hw->nvlink.bw_Bps > 0;
    t->nvswitch = t->nvlink && hw->nvlink.nvswitch;
    t->p2p = hw->pcie.p2p;
    t->rail_optimized = hw->net.rail_optimized;
    t->gpus_per_switch = hw->pcie.gpus_per_switch > 1 ? hw->pcie.gpus_per_switch : 1;
    t->nswitches = t->gpus_per_switch > 1 ? (G + t->gpus_per_switch - 1) / t->gpus_per_switch : 0;
    t->fabric_levels = hw->net.fabric_levels > 0 ? hw->net.fabric_levels : 1;
    t->spine_v = -1;
    t->gpu_v = xcalloc((size_t)(nodes * G), sizeof(int));
    t->node_v = xcalloc((size_t)nodes, sizeof(int));
    t->nvs_v = xcalloc((size_t)nodes, sizeof(int));
    t->cpu_v = xcalloc((size_t)nodes, sizeof(int));
    t->mem_v = xcalloc((size_t)nodes, sizeof(int));
    t->psw_v = xcalloc((size_t)(nodes * (t->nswitches ? t->nswitches : 1)), sizeof(int));
    t->nic_v = xcalloc((size_t)(nodes * (t->nics_per_node ? t->nics_per_node : 1)), sizeof(int));
    for (n = 0; n < nodes; n++) {
        t->nvs_v[n] = -1;
        build_node(&b, hw, n);
    }
    build_fabric(&b, hw);
    return t;
}

void topo_free(struct topo *t)
{
    if (!t)
        return;
    free(t->v);
    free(t->l);
    free(t->gpu_v);
    free(t->node_v);
    free(t->nvs_v);
    free(t->cpu_v);
    free(t->mem_v);
    free(t->psw_v);
    free(t->nic_v);
    free(t->leaf_v);
    free(t);
}

int topo_gpus(const struct topo *t)
{
    return t->nodes * t->gpus_per_node;
}

int topo_node_of(const struct topo *t, int gpu)
{
    return gpu / t->gpus_per_node;
}

const char *topo_link_kind_name(enum topo_link_kind k)
{
    static const char *const n[] = { "NVLink", "PCIe", "host memory", "network" };
    return (unsigned)k < ARRAY_LEN(n) ? n[k] : "?";
}

/* ---- routing -------------------------------------------------------------- */

/* Append the hop over the link joining vertices x -> y (which must exist). */
static void hop(const struct topo *t, struct route *r, int x, int y)
{
    int i;

    for (i = 0; i < t->nl; i++) {
        const struct topo_link *l = &t->l[i];
        if ((l->a == x && l->b == y) || (l->a == y && l->b == x)) {
            assert(r->nhops < ROUTE_MAX_HOPS);
            r->hop[r->nhops].link = i;
            r->hop[r->nhops].dir = l->a == x ? 0 : 1;
            r->nhops++;
            if (l->bw_Bps < r->bw_Bps)
                r->bw_Bps = l->bw_Bps;
            r->latency += l->latency;
            return;
        }
    }
    assert(!"no link between the vertices");
}

/* GPU (node n, local g) up to the root complex: through its switch if any. */
static void up_to_cpu(const struct topo *t, struct route *r, int n, int g)
{
    int gv = t->gpu_v[n * t->gpus_per_node + g], p = pcie_parent(t, n, g);

    hop(t, r, gv, p);
    if (p != t->cpu_v[n])
        hop(t, r, p, t->cpu_v[n]);
}

static void down_from_cpu(const struct topo *t, struct route *r, int n, int g)
{
    int gv = t->gpu_v[n * t->gpus_per_node + g], p = pcie_parent(t, n, g);

    if (p != t->cpu_v[n])
        hop(t, r, t->cpu_v[n], p);
    hop(t, r, p, gv);
}

static void route_pcie(const struct topo *t, struct route *r, int n, int ga, int gb)
{
    int pa = pcie_parent(t, n, ga), pb = pcie_parent(t, n, gb);

    r->tier = TIER_PCIE;
    if (!t->p2p) {
        up_to_cpu(t, r, n, ga);
        hop(t, r, t->cpu_v[n], t->mem_v[n]);
        hop(t, r, t->mem_v[n], t->cpu_v[n]);
        down_from_cpu(t, r, n, gb);
        r->path = "PCIe via host memory (no GPU P2P)";
    } else if (pa == pb && pa != t->cpu_v[n]) {
        hop(t, r, t->gpu_v[n * t->gpus_per_node + ga], pa);
        hop(t, r, pa, t->gpu_v[n * t->gpus_per_node + gb]);
        r->path = "PCIe switch (GPU P2P)";
    } else {
        up_to_cpu(t, r, n, ga);
        down_from_cpu(t, r, n, gb);
        r->path = "PCIe via CPU root complex (GPU P2P)";
    }
}

static void route_intra(const struct topo *t, struct route *r, int n, int ga, int gb)
{
    int G = t->gpus_per_node;

    if (t->nvswitch) {
        hop(t, r, t->gpu_v[n * G + ga], t->nvs_v[n]);
        hop(t, r, t->nvs_v[n], t->gpu_v[n * G + gb]);
        r->tier = TIER_NVLINK;
        r->path = "NVLink/NVSwitch";
    } else if (t->nvlink) {
        hop(t, r, t->gpu_v[n * G + ga], t->gpu_v[n * G + gb]);
        r->tier = TIER_NVLINK;
        r->path = "NVLink";
    } else {
        route_pcie(t, r, n, ga, gb);
    }
}

/* Leaf of NIC k on node n. */
static int leaf_of(const struct topo *t, int n, int k)
{
    if (t->nleaves == 1)
        return t->leaf_v[0];
    return t->leaf_v[t->rail_optimized ? k : n];
}

static void route_inter(const struct topo *t, struct route *r, int na, int ga, int nb, int gb)
{
    int K = t->nics_per_node, ka = gpu_nic(t, ga), kb = gpu_nic(t, gb), la, lb, src = ga;

    assert(K > 0 && "inter-node route on hardware without NICs");
    /* PXN: hand the data to the GPU on the peer's rail, then stay on that rail */
    if (t->rail_optimized && t->nvlink && ka != kb) {
        src = nic_gpu(t, kb);
        route_intra(t, r, na, ga, src);
        ka = kb;
        r->pxn = true;
    }
    hop(t, r, t->gpu_v[na * t->gpus_per_node + src], pcie_parent(t, na, src));
    hop(t, r, pcie_parent(t, na, src), t->nic_v[na * K + ka]);
    la = leaf_of(t, na, ka);
    lb = leaf_of(t, nb, kb);
    hop(t, r, t->nic_v[na * K + ka], la);
    if (la != lb) {
        hop(t, r, la, t->spine_v);
        hop(t, r, t->spine_v, lb);
        r->spine = true;
    }
    hop(t, r, lb, t->nic_v[nb * K + kb]);
    hop(t, r, t->nic_v[nb * K + kb], pcie_parent(t, nb, gb));
    hop(t, r, pcie_parent(t, nb, gb), t->gpu_v[nb * t->gpus_per_node + gb]);
    r->tier = TIER_NET;
    if (r->pxn)
        r->path = "NVLink to the rail GPU (PXN), then network on one rail";
    else if (r->spine)
        r->path = "PCIe to NIC, network through the spine";
    else
        r->path = "PCIe to NIC, network through one leaf switch";
}

int topo_route(const struct topo *t, int a, int b, struct route *r)
{
    int G = t->gpus_per_node, na = a / G, nb = b / G;

    assert(a >= 0 && b >= 0 && a < topo_gpus(t) && b < topo_gpus(t));
    memset(r, 0, sizeof(*r));
    r->bw_Bps = INFINITY;
    r->tier = TIER_NVLINK;
    r->path = "same GPU";
    if (a == b)
        return 0;
    if (na == nb)
        route_intra(t, r, na, a % G, b % G);
    else
        route_inter(t, r, na, a % G, nb, b % G);
    return r->nhops;
}

/* ---- group shape ---------------------------------------------------------- */

void topo_group(const struct topo *t, const int *gpus, int n, struct comm_group *g)
{
    int G = t->gpus_per_node, i, node;
    int *count = xcalloc((size_t)t->nodes, sizeof(int));
    unsigned char *has = xcalloc((size_t)(t->nodes * G), 1);
    int first = -1;

    memset(g, 0, sizeof(*g));
    g->nranks = n;
    for (i = 0; i < n; i++) {
        assert(gpus[i] >= 0 && gpus[i] < topo_gpus(t));
        node = gpus[i] / G;
        if (count[node]++ == 0)
            g->nnodes++;
        if (count[node] > g->ppn)
            g->ppn = count[node];
        has[gpus[i]] = 1;
        if (first < 0)
            first = node;
    }
    g->rail_aligned = true;
    for (node = 0; node < t->nodes && first >= 0; node++) {
        if (count[node] == 0)
            continue;
        if (memcmp(&has[node * G], &has[first * G], (size_t)G) != 0)
            g->rail_aligned = false;
    }
    if (g->nranks != g->nnodes * g->ppn)
        g->rail_aligned = false;
    free(count);
    free(has);
}
