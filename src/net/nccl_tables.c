/*
 * nccl_tables.c - NCCL's own performance model, re-derived from its sources
 * (see collective.h): what the topology search finds (channels, per-channel
 * bandwidth), then the latency and bandwidth tables of ncclTopoTuneModel and
 * the time formula of ncclTopoGetAlgoTime. Facts, not code: constants are
 * NCCL's, cited by file; the search is reduced to closed-form capacity checks
 * on the per-GPU links it would consume. Units follow NCCL: GB/s (1e9 B/s)
 * and microseconds.
 */
#include <math.h>
#include <string.h>

#include "net/collective.h"

enum {
    ARCH_IDX_VOLTA,
    ARCH_IDX_AMPERE,
    ARCH_IDX_HOPPER,
    ARCH_IDX_BLACKWELL,
    NARCH
};
enum {
    HW_NVLINK,
    HW_PCI,
    HW_NET,
    NHW
};

#define MAXCHANNELS    64 /* NCCL device.h since 2.19; rings get MAXCHANNELS / 2 */
#define MAX_NVLS_ARITY 32

/* ---- constants (NCCL 2.30.7 unless noted; formulas.md §5.3) ---------------- */

/* baseLatencies, us [algo][proto] (src/graph/tuning.cc). */
static const double base_lat[ALGO_COUNT][PROTO_COUNT] = {
    [ALGO_RING] = { [PROTO_LL] = 6.6, [PROTO_LL128] = 14.0, [PROTO_SIMPLE] = 8.4 },
    [ALGO_TREE] = { [PROTO_LL] = 6.8, [PROTO_LL128] = 14.0, [PROTO_SIMPLE] = 8.4 },
};

/* hwLatencies, us [NVLINK/PCI/NET][algo][proto] (src/graph/tuning.cc). */
static const double hw_lat[NHW][ALGO_COUNT][PROTO_COUNT] = {
    [HW_NVLINK] = {
        [ALGO_TREE] = { [PROTO_LL] = .6, [PROTO_LL128] = 1.25, [PROTO_SIMPLE] = 4.0 },
        [ALGO_RING] = { [PROTO_LL] = .6, [PROTO_LL128] = 1.9, [PROTO_SIMPLE] = 3.4 },
        [ALGO_NVLS] = { [PROTO_SIMPLE] = 25 },
        [ALGO_NVLS_TREE] = { [PROTO_SIMPLE] = 25 },
    },
    [HW_PCI] = {
        [ALGO_TREE] = { [PROTO_LL] = 1.0, [PROTO_LL128] = 1.9, [PROTO_SIMPLE] = 4.0 },
        [ALGO_RING] = { [PROTO_LL] = 1.0, [PROTO_LL128] = 2.5, [PROTO_SIMPLE] = 5.7 },
    },
    [HW_NET] = {
        [ALGO_TREE] = { [PROTO_LL] = 5.0, [PROTO_LL128] = 8.5, [PROTO_SIMPLE] = 14 },
        [ALGO_RING] = { [PROTO_LL] = 2.7, [PROTO_LL128] = 4.0, [PROTO_SIMPLE] = 14.0 },
        [ALGO_NVLS] = { [PROTO_SIMPLE] = 18 },
        [ALGO_NVLS_TREE] = { [PROTO_SIMPLE] = 20.9 },
    },
};

/*
 * llMaxBws, GB/s: one node uses the GPU row (Volta 39.0, Ampere 87.7, Hopper
 * 141.0, Blackwell 282.0); several nodes use the CPU row, Intel {39.0, 20.4}
 * and AMD {22.5, 19.0} for 2 and >= 3 nodes (src/graph/tuning.cc).
 */
static const double ll_max_1node[NARCH] = { 39.0, 87.7, 141.0, 282.0 };
static const double ll_max_intel[2] = { 39.0, 20.4 };
static const double ll_max_amd[2] = { 22.5, 19.0 };

/* Per-channel caps, GB/s, by [arch][1 node, 2 nodes, >= 3 nodes] (src/graph/tuning.cc). */
static const double per_ch_ring_ll128[NARCH][3] = {
    { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 36.7 }, { 40.0, 40.0, 40.0 }
};
static const double per_ch_tree_ll128[NARCH][3] = {
    { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 }, { 55.6, 31.67, 20.0 }
};
static const double per_ch_tree[NARCH][3] = {
    { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 }, { 70.0, 42.8, 24.0 }
};
static const double per_ch_nvls_tree[NARCH][3] = {
    { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 0, 57.7, 45.5 }, { 0, 96.0, 80.0 }
};

/* nvlsEfficiency (src/tuning/nvls.cc): NVLink SHARP only from Hopper on. */
static const double nvls_eff[NARCH] = { 0, 0, 0.85, 0.74 };

/* treeCorrectionFactor[proto][log2(bytes / 64)], 64 B .. 512 MiB (src/graph/tuning.cc). */
static const double tree_corr[PROTO_COUNT][24] = {
    [PROTO_LL] = { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
                   .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0 },
    [PROTO_LL128] = { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
                      .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0 },
    [PROTO_SIMPLE] = { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                       .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 },
};

/* Search speed arrays, GB/s per channel (src/graph/search.cc). */
static const double speed_intra[] = { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                      9.0,  7.0,  6.0,  5.0,  4.0,  3.0 };
static const double speed_inter[] = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                      7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double sm90_intra[] = {
    60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0
};
static const double sm90_inter[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                     15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double sm100_intra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                      40.0, 30.0, 24.0, 20.0, 19.0, 18.0 };
static const double sm100_inter[] = { 96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                      20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };

double nccl_nvlink_bw(enum gpu_arch arch)
{
    /* SM70_NVLINK_BW 20.0, SM80 20.0, SM90 20.6, SM100 40.1 (src/graph/topo.h) */
    switch (arch) {
    case ARCH_VOLTA:
    case ARCH_AMPERE:
    case ARCH_ADA:
        return 20.0;
    case ARCH_HOPPER:
        return 20.6;
    case ARCH_BLACKWELL:
        return 40.1;
    }
    return 20.0;
}

double nccl_pcie_bw(int generation, int lanes)
{
    /* kvDictPciGen: 15, 30, 60, 120, 240, 480 (x100 Mb/s per lane) for Gen1..6, and
       bw = lanes * value / 80 GB/s; Gen3 x16 = 12 GB/s = PCI_BW (src/graph/topo.cc, topo.h) */
    int gen = generation < 1 ? 3 : generation > 6 ? 6 : generation;
    return (lanes > 0 ? lanes : 16) * 15.0 * (double)(1 << (gen - 1)) / 80.0;
}

/* ---- what the search consumes ------------------------------------------------ */

/* Per-node resources of a group as NCCL's search sees them, GB/s. */
struct res {
    int arch, cc; /* table index; compute capability x10 */
    int ppn, nnodes;
    bool nvlink; /* GPU-GPU paths over NVLink */
    bool nvswitch;
    double nvl;      /* NVLink per GPU: links x per-link bandwidth */
    double pci;      /* GPU PCIe link */
    double pci_oh;   /* PCIe cost multiplier for P2P through an Intel root complex */
    double nicpath;  /* GPU -> NET path: min(PCIe, NIC) */
    int nics;        /* NICs reachable by the group's GPUs on a node */
    double max_bw;   /* best path bandwidth (search start) */
    double total_bw; /* per-GPU injection ceiling: max(PCIe, sum of NVLink) */
    const double *speeds;
    int nspeeds;
};

static int arch_index(enum gpu_arch a)
{
    switch (a) {
    case ARCH_VOLTA:
        return ARCH_IDX_VOLTA;
    case ARCH_AMPERE:
    case ARCH_ADA: /* sm_86/sm_89 >= 80 use the Ampere rows */
        return ARCH_IDX_AMPERE;
    case ARCH_HOPPER:
        return ARCH_IDX_HOPPER;
    case ARCH_BLACKWELL:
        return ARCH_IDX_BLACKWELL;
    }
    return ARCH_IDX_AMPERE;
}

static int arch_cc(enum gpu_arch a)
{
    static const int cc[] = { 70, 80, 89, 90, 100 };
    return (unsigned)a < ARRAY_LEN(cc) ? cc[a] : 80;
}

/*
 * NCCL per-GPU NVLink aggregate, GB/s: NCCL's per-link figure times the links the
 * hardware's bandwidth amounts to (25 GB/s per direction per link for NVLink 2-4, 50 for
 * NVLink 5: 18 x 25 = 450 GB/s on H100). NCCL's topology detection counts the links it
 * finds; deriving them from node.nvlink.bandwidth makes a bandwidth what-if reach NCCL's
 * channel search (an NVLink at 45 GB/s is 1.8 links' worth: 37 GB/s to NCCL).
 */
static double nccl_nvl(const struct hardware *hw)
{
    double raw = hw->nvlink.generation >= 5 ? 50e9 : 25e9;

    if (hw->nvlink.bw_Bps <= 0)
        return 0;
    return hw->nvlink.bw_Bps / raw * nccl_nvlink_bw(hw->gpu.arch);
}

static void build_res(const struct hardware *hw, const struct comm_group *g, struct res *r)
{
    int G = hw->gpus_per_node > 0 ? hw->gpus_per_node : 1;
    int K = hw->net.nic_bw_Bps > 0 ? hw->net.nics_per_node : 0;
    int gps = hw->pcie.gpus_per_switch > 1 ? hw->pcie.gpus_per_switch : 1;

    memset(r, 0, sizeof(*r));
    r->arch = arch_index(hw->gpu.arch);
    r->cc = arch_cc(hw->gpu.arch);
    r->ppn = g->ppn > 0 ? g->ppn : 1;
    r->nnodes = g->nnodes > 0 ? g->nnodes : 1;
    r->nvl = nccl_nvl(hw);
    r->nvlink = r->nvl > 0 && r->ppn > 1;
    r->nvswitch = r->nvlink && hw->nvlink.nvswitch;
    r->pci = nccl_pcie_bw(hw->pcie.generation, hw->pcie.lanes);
    /* INTEL_P2P_OVERHEAD: P2P through an Intel root complex costs bw * 6/5 (topo.h) */
    r->pci_oh = (!r->nvlink && r->ppn > gps && !hw->net.amd_cpu) ? 1.2 : 1.0;
    r->nicpath = K > 0 ? MIN(r->pci, hw->net.nic_bw_Bps / 1e9) : 0;
    r->nics = K > 0 ? (int)MIN((double)K, ceil((double)r->ppn * K / G)) : 0;
    if (r->nnodes > 1)
        r->max_bw = r->nicpath;
    else if (r->nvlink)
        r->max_bw = r->nvswitch || G <= 2 ? r->nvl : r->nvl / (G - 1);
    else
        r->max_bw = r->pci;
    r->total_bw = MAX(r->nvl, r->pci);
    if (r->cc >= 100) {
        r->speeds = r->nnodes > 1 ? sm100_inter : sm100_intra;
        r->nspeeds = r->nnodes > 1 ? (int)ARRAY_LEN(sm100_inter) : (int)ARRAY_LEN(sm100_intra);
    } else if (r->cc >= 90) {
        r->speeds = r->nnodes > 1 ? sm90_inter : sm90_intra;
        r->nspeeds = r->nnodes > 1 ? (int)ARRAY_LEN(sm90_inter) : (int)ARRAY_LEN(sm90_intra);
    } else {
        r->speeds = r->nnodes > 1 ? speed_inter : speed_intra;
        r->nspeeds = r->nnodes > 1 ? (int)ARRAY_LEN(speed_inter) : (int)ARRAY_LEN(speed_intra);
    }
}

/* How many times `s` fits in `cap` (NCCL subtracts with 1e-3 rounding). */
static int fits(double cap, double s)
{
    return (int)floor(cap / s + 1e-6);
}

/*
 * Channels at intra speed si and inter speed sn: every channel crosses each
 * GPU's NVLink (or PCIe) once each way, and enters and leaves the node
 * through one NIC each way.
 */
static int channels_at(const struct res *r, double si, double sn, int maxch)
{
    int n = maxch;

    if (r->ppn > 1)
        n = MIN(n, r->nvlink ? fits(r->nvl, si) : fits(r->pci, si * r->pci_oh));
    if (r->nnodes > 1) {
        n = MIN(n, r->nics * fits(r->nicpath, sn));
        if (!r->nvlink)
            n = MIN(n, fits(r->pci, sn));
    }
    return n;
}

static int start_index(const struct res *r, double total, int minch)
{
    int i = 0;

    while ((r->speeds[i] > r->max_bw || r->speeds[i] * minch > total) && i < r->nspeeds - 1)
        i++;
    return i;
}

/* ncclTopoDupChannels (src/graph/search.cc): double fast channels, halving their bandwidth. */
static void dup_channels(const struct res *r, struct nccl_graph *gr, int maxch)
{
    int dup, f;

    if (gr->nchannels == 0 || gr->bw_intra < 25.0)
        return;
    if (r->cc > 80 && gr->bw_intra < 50.0 && gr->nchannels > 4)
        return;
    dup = MIN(gr->nchannels * 2, maxch);
    f = (dup + gr->nchannels - 1) / gr->nchannels;
    gr->bw_intra /= f;
    gr->bw_inter /= f;
    gr->nchannels = dup;
}

/*
 * The ring search of ncclTopoCompute: from the fastest speed the paths allow,
 * keep the best channels x speed, stop when it reaches the per-GPU ceiling or
 * when the next speed is below 0.49 of the best; duplicate channels; then try
 * faster speeds with at least as many channels (pass 2).
 */
static struct nccl_graph search_ring(const struct res *r)
{
    struct nccl_graph best = { 0, 0, 0 };
    int maxch = MAXCHANNELS / 2, i = start_index(r, r->total_bw, 1), n;

    for (;;) {
        double s = r->speeds[i];
        n = channels_at(r, s, s, maxch);
        if (n >= 1 && n * s > best.nchannels * best.bw_intra) {
            best.nchannels = n;
            best.bw_intra = best.bw_inter = s;
        }
        if (best.nchannels == maxch || best.nchannels * best.bw_inter >= r->total_bw)
            break;
        if (i < r->nspeeds - 1 && (best.nchannels == 0 || r->speeds[i + 1] / best.bw_inter > .49))
            i++;
        else
            break;
    }
    if (best.nchannels == 0) { /* "falling back to simple order" */
        best.nchannels = 1;
        best.bw_intra = best.bw_inter = 0.1;
        return best;
    }
    dup_channels(r, &best, maxch);
    for (i = 0; i < r->nspeeds && r->speeds[i] > best.bw_inter; i++)
        ;
    while (--i >= 0) {
        double s = r->speeds[i];
        n = channels_at(r, s, s, maxch);
        if (n >= best.nchannels && n * s > best.nchannels * best.bw_intra) {
            best.nchannels = n;
            best.bw_intra = best.bw_inter = s;
        }
    }
    return best;
}

/*
 * The tree search: exactly the ring's channel count; non-ring patterns see a
 * per-GPU ceiling raised by G/(G-1); pass 2 raises only the intra-node speed,
 * up to twice the inter-node one.
 */
static struct nccl_graph search_tree(const struct res *r, int nring)
{
    struct nccl_graph gr = { 0, 0, 0 };
    double total = r->ppn > 1 ? r->total_bw * r->ppn / (r->ppn - 1) : r->total_bw;
    int i = start_index(r, total, nring);

    for (; i < r->nspeeds; i++)
        if (channels_at(r, r->speeds[i], r->speeds[i], nring) >= nring)
            break;
    if (i == r->nspeeds)
        return gr;
    gr.nchannels = nring;
    gr.bw_intra = gr.bw_inter = r->speeds[i];
    dup_channels(r, &gr, nring);
    while (i > 0 && gr.bw_intra < 2 * gr.bw_inter &&
           channels_at(r, r->speeds[i - 1], gr.bw_inter, nring) >= nring)
        gr.bw_intra = r->speeds[--i];
    return gr;
}

/*
 * NVLS: one channel per head GPU (all local GPUs on one node, one per NIC
 * otherwise). Each channel costs its head twice and every other GPU once on
 * its NVSwitch port: (ppn + 1) x speed per GPU. Pass 2 raises the inter
 * speed up to twice the intra one; on one node nothing consumes it.
 */
static struct nccl_graph search_nvls(const struct res *r, bool hw_ok)
{
    struct nccl_graph gr = { 0, 0, 0 };
    int heads = r->nnodes > 1 ? MIN(r->ppn, r->nics) : r->ppn, i;

    heads = MIN(heads, MAX_NVLS_ARITY);
    if (!hw_ok || !r->nvswitch || heads < 2)
        return gr;
    for (i = 0; i < r->nspeeds; i++)
        if (r->speeds[i] <= r->max_bw && fits(r->nvl, r->speeds[i] * (r->ppn + 1)) >= 1)
            break;
    if (i == r->nspeeds)
        return gr;
    gr.nchannels = heads;
    gr.bw_intra = gr.bw_inter = r->speeds[i];
    if (r->nnodes > 1) {
        int j = 0;
        while (j < r->nspeeds - 1 && r->speeds[j] > r->nicpath)
            j++;
        gr.bw_inter = r->speeds[j];
        return gr;
    }
    while (i > 0 && gr.bw_inter < 2 * gr.bw_intra)
        gr.bw_inter = r->speeds[--i];
    return gr;
}

/* ---- tuning ----------------------------------------------------------------- */

static int log2i(double x)
{
    int l = 0;
    while (x >= 2) {
        x /= 2;
        l++;
    }
    return l;
}

static int nsteps_of(enum coll_op op, int n)
{
    if (op == COLL_ALL_REDUCE)
        return 2 * (n - 1);
    if (op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER)
        return n - 1;
    return n;
}

static int inter_steps_of(enum coll_op op, int nodes)
{
    if (op == COLL_ALL_REDUCE)
        return nodes > 1 ? 2 * (nodes - 1) : 0;
    if (op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER)
        return nodes - 1;
    return nodes;
}

static bool algo_allowed(const struct nccl_model *m, enum coll_algo a, enum coll_proto p)
{
    bool ar = m->op == COLL_ALL_REDUCE;
    bool agrs = m->op == COLL_ALL_GATHER || m->op == COLL_REDUCE_SCATTER;

    if (p == PROTO_LL128 && !m->ll128)
        return false;
    switch (a) {
    case ALGO_RING:
        return m->ring.nchannels > 0;
    case ALGO_TREE:
        return ar && m->tree.nchannels > 0;
    case ALGO_NVLS:
        return p == PROTO_SIMPLE && m->nvls.nchannels >= 2 && m->nnodes == 1 && (ar || agrs);
    case ALGO_NVLS_TREE:
        return p == PROTO_SIMPLE && m->nvls.nchannels >= 2 && m->nnodes > 1 && ar;
    default:
        return false;
    }
}

struct tune_ctx {
    const struct res *r;
    const struct hardware *hw;
    double extra_inter_us;
    int idx2; /* 0: 1 node, 1: 2 nodes, 2: >= 3 nodes */
    double ll_max;
};

static void tune_bw(const struct tune_ctx *c, struct nccl_model *m, enum coll_algo a,
                    enum coll_proto p)
{
    const struct res *r = c->r;
    const struct nccl_graph *gr = a == ALGO_RING ? &m->ring : a == ALGO_TREE ? &m->tree : &m->nvls;
    int nsteps = nsteps_of(m->op, m->nranks), nch = gr->nchannels;
    double bw = m->nnodes <= 2 ? gr->bw_intra : gr->bw_inter, bus = nch * bw, alg;

    if (a == ALGO_RING && p == PROTO_LL)
        bus = MIN(c->ll_max, bus * 0.5);
    if (a == ALGO_RING && p == PROTO_LL128)
        bus = MIN(bus * 0.92, nch * per_ch_ring_ll128[r->arch][c->idx2]);
    if (a == ALGO_TREE)
        bus = MIN(bus * 0.92, nch * per_ch_tree[r->arch][c->idx2]);
    if (a == ALGO_TREE && p == PROTO_LL)
        bus = MIN(bus / 3.8, c->ll_max);
    if (a == ALGO_TREE && p == PROTO_LL128)
        bus = MIN(bus * (m->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                  nch * per_ch_tree_ll128[r->arch][c->idx2]);
    if (a == ALGO_NVLS || a == ALGO_NVLS_TREE) {
        double intra = gr->bw_intra * nvls_eff[r->arch] * (nch - 1) / nch;
        double inter = gr->bw_inter * (m->nnodes <= 2 && a == ALGO_NVLS_TREE ? 2 : 1);
        double cap = a == ALGO_NVLS_TREE ? per_ch_nvls_tree[r->arch][c->idx2] : INFINITY;
        intra *= m->op == COLL_ALL_REDUCE ? 2.0 : (double)(m->ppn - 1) / m->ppn;
        bus = MIN(MIN(intra, inter), cap) * nch;
    }
    if (a == ALGO_RING)
        alg = bus * m->nranks / nsteps;
    else if (a == ALGO_TREE)
        alg = bus * 0.5;
    else
        alg = m->op == COLL_ALL_REDUCE ? bus * m->nranks / nsteps : bus;
    m->bus_GBps[a][p] = bus;
    m->alg_GBps[a][p] = alg > 0 ? alg : 0;
}

static void tune_lat(const struct tune_ctx *c, struct nccl_model *m, enum coll_algo a,
                     enum coll_proto p)
{
    const struct res *r = c->r;
    int intra_hw = r->nvlink ? HW_NVLINK : HW_PCI, hw = m->nnodes == 1 ? intra_hw : HW_NET;
    int nsteps = nsteps_of(m->op, m->nranks), ninter = inter_steps_of(m->op, m->nnodes);
    double lat = base_lat[a][p], intra = hw_lat[intra_hw][a][p];
    double inter = hw_lat[HW_NET][m->ppn == 1 && a == ALGO_RING ? ALGO_TREE : a][p];

    inter += c->extra_inter_us * (p == PROTO_SIMPLE ? 2 : 1); /* latencyInter, + flush */
    inter = MAX(inter, 0);                                    /* a fabric faster than 2 us */
    if (a == ALGO_RING) {
        if (m->op == COLL_BROADCAST || m->op == COLL_REDUCE) {
            if (m->nnodes == 1) /* sameChannels */
                lat += hw_lat[hw][ALGO_RING][p];
            else
                lat += nsteps * hw_lat[hw][p == PROTO_SIMPLE ? ALGO_TREE : ALGO_RING][p];
        } else {
            /* inter-node rings still launch nsteps x net overhead (1 us Intel, 2 us AMD, x3 Simple)
             */
            double ovh = m->nnodes > 1 ? (c->hw->net.amd_cpu ? 2.0 : 1.0) : 0;
            if (p == PROTO_SIMPLE)
                ovh *= 3;
            intra = MAX(intra, ovh);
            lat += (nsteps - ninter) * intra + ninter * inter;
        }
    } else if (a == ALGO_TREE) {
        lat += 2 * ((m->ppn - 1) * intra + log2i(m->nnodes) * inter);
    } else if (a == ALGO_NVLS) {
        lat = intra + (m->nnodes > 1 ? inter : 0);
    } else if (a == ALGO_NVLS_TREE) {
        lat += intra + 2 * log2i(m->nnodes) * inter;
    }
    m->lat_us[a][p] = lat;
}

void nccl_model_init(const struct hardware *hw, const struct comm_group *g, enum coll_op op,
                     double extra_inter_us, struct nccl_model *m)
{
    static const enum coll_algo algos[] = { ALGO_RING, ALGO_TREE, ALGO_NVLS, ALGO_NVLS_TREE };
    struct res r;
    struct tune_ctx c;
    size_t a;
    int p;

    memset(m, 0, sizeof(*m));
    m->op = op;
    m->nranks = g->nranks;
    m->nnodes = g->nnodes > 0 ? g->nnodes : 1;
    m->ppn = g->ppn > 0 ? g->ppn : 1;
    if (g->nranks <= 1)
        return;
    build_res(hw, g, &r);
    m->arch = r.arch;
    m->nvlink = r.nvlink;
    /* LL128 by default only with NVLink inside the node, on tested architectures */
    m->ll128 = r.nvlink || m->ppn == 1;
    if (hw->nvlink.bw_Bps <= 0)
        m->ll128 = false;
    m->ring = search_ring(&r);
    m->tree = search_tree(&r, m->ring.nchannels);
    m->nvls = search_nvls(&r, nvls_eff[r.arch] > 0);
    c.r = &r;
    c.hw = hw;
    c.extra_inter_us = extra_inter_us;
    c.idx2 = m->nnodes <= 2 ? m->nnodes - 1 : 2;
    if (m->nnodes == 1)
        c.ll_max = ll_max_1node[r.arch];
    else
        c.ll_max = (hw->net.amd_cpu ? ll_max_amd : ll_max_intel)[m->nnodes > 2];
    for (a = 0; a < ARRAY_LEN(algos); a++)
        for (p = PROTO_LL; p < PROTO_COUNT; p++) {
            if (!algo_allowed(m, algos[a], (enum coll_proto)p))
                continue;
            tune_bw(&c, m, algos[a], (enum coll_proto)p);
            tune_lat(&c, m, algos[a], (enum coll_proto)p);
        }
}

void nccl_version_limits(struct nccl_model *m, int version)
{
    bool agrs = m->op == COLL_ALL_GATHER || m->op == COLL_REDUCE_SCATTER;
    bool no_nvls =
        version > 0 && (version < 21701 || (agrs && version < 21900 && version >= 21800));
    bool no_nvls_tree = version > 0 && version < 21800;

    for (int p = 0; p < PROTO_COUNT; p++) {
        if (no_nvls)
            m->alg_GBps[ALGO_NVLS][p] = 0;
        if (no_nvls_tree)
            m->alg_GBps[ALGO_NVLS_TREE][p] = 0;
    }
}

int nccl_cost(const struct nccl_model *m, enum coll_algo algo, enum coll_proto proto, double bytes,
              double *lat_us, double *alg_GBps)
{
    double bw, lat;
    int lg;

    if ((unsigned)algo >= ALGO_COUNT || (unsigned)proto >= PROTO_COUNT)
        return -1;
    bw = m->alg_GBps[algo][proto];
    lat = m->lat_us[algo][proto];
    if (bw <= 0)
        return -1;
    lg = log2i(bytes / 64);
    if (algo == ALGO_TREE && lg < 24)
        bw *= tree_corr[proto][lg];
    /* plateau effect of multi-node Simple rings (ncclTopoGetAlgoTime) */
    if (algo == ALGO_RING && proto == PROTO_SIMPLE && m->nnodes > 1 && m->op == COLL_ALL_REDUCE &&
        bytes / ((double)m->ring.nchannels * m->nranks) >= 64)
        lat *= m->arch >= ARCH_IDX_AMPERE ? 1.4 : 1.9;
    *lat_us = lat;
    *alg_GBps = bw;
    return 0;
}

double nccl_time_us(const struct nccl_model *m, enum coll_algo algo, enum coll_proto proto,
                    double bytes)
{
    double lat, bw;

    if (nccl_cost(m, algo, proto, bytes, &lat, &bw) < 0)
        return -1;
    return lat + bytes / (1000.0 * bw);
}

void nccl_select(const struct nccl_model *m, const struct nccl_cfg *cfg, double bytes,
                 enum coll_algo *algo, enum coll_proto *proto)
{
    /* NCCL's loop order: Tree, Ring, ..., NVLS, NVLS-Tree; strictly faster wins */
    static const enum coll_algo order[] = { ALGO_TREE, ALGO_RING, ALGO_NVLS, ALGO_NVLS_TREE };
    enum coll_algo fa = cfg ? cfg->algo : ALGO_AUTO;
    enum coll_proto fp = cfg ? cfg->proto : PROTO_AUTO;
    double best = INFINITY;
    size_t i;
    int p, pass;

    *algo = ALGO_RING;
    *proto = PROTO_SIMPLE;
    for (pass = 0; pass < 3 && !isfinite(best); pass++) {
        for (i = 0; i < ARRAY_LEN(order); i++) {
            if (pass == 0 && fa != ALGO_AUTO && order[i] != fa)
                continue;
            if (pass > 0 && order[i] != ALGO_RING) /* NCCL's ring backup */
                continue;
            for (p = PROTO_LL; p < PROTO_COUNT; p++) {
                double t;
                if (pass < 2 && fp != PROTO_AUTO && p != (int)fp)
                    continue;
                t = nccl_time_us(m, order[i], (enum coll_proto)p, bytes);
                if (t >= 0 && t < best) {
                    best = t;
                    *algo = order[i];
                    *proto = (enum coll_proto)p;
                }
            }
        }
    }
}
