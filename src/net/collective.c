/*
 * collective.c - see collective.h. NCCL's choice and timing (nccl_tables.c),
 * then the physical corrections, the bottleneck tier and calibration.
 */
#include "net/collective.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Staging buffer per channel and peer (NCCL init.cc): DEFAULT_BUFFSIZE 4 MiB
   (Simple), DEFAULT_LL128_BUFFSIZE 120*640*8*8 B, DEFAULT_LL_BUFFSIZE 8*512*8*16 B. */
static const double buffer_bytes[PROTO_COUNT] = {
    [PROTO_LL] = 524288.0, [PROTO_LL128] = 4915200.0, [PROTO_SIMPLE] = 4194304.0
};

double coll_bus_factor(enum coll_op op, int nranks)
{
    double n = nranks > 1 ? nranks : 1;

    switch (op) {
    case COLL_ALL_REDUCE:
        return 2 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL:
        return (n - 1) / n;
    default:
        return 1;
    }
}

double coll_tier_bw(const struct hardware *hw, enum link_tier tier)
{
    switch (tier) {
    case TIER_NVLINK:
        return hw->nvlink.bw_Bps;
    case TIER_PCIE:
        return hw->pcie.bw_Bps;
    case TIER_NET:
        if (hw->net.nics_per_node <= 0 || hw->gpus_per_node <= 0)
            return 0;
        return hw->net.nics_per_node * hw->net.nic_bw_Bps / hw->gpus_per_node;
    default:
        return 0;
    }
}

sim_time coll_time(const struct coll_cost *c)
{
    double s = c->bus_bw_Bps > 0 ? c->bus_bytes / c->bus_bw_Bps : 0;
    return time_add(c->latency, ns_from_s(s));
}

bool coll_algo_available(const struct hardware *hw, enum coll_algo a)
{
    if (a == ALGO_NVLS || a == ALGO_NVLS_TREE)
        return hw->nvlink.nvswitch && hw->gpu.arch >= ARCH_HOPPER;
    return true;
}

const char *coll_launch_name(int launch)
{
    static const char *const names[LAUNCH_COUNT] = { "per-rank", "single-process" };
    return launch >= 0 && launch < LAUNCH_COUNT ? names[launch] : "?";
}

sim_time coll_bench_time(sim_time gpu, sim_time launch, int host_gpus, int iters)
{
    sim_time host = time_mul(MAX(launch, 0), MAX(host_gpus, 1));
    sim_time slow = MAX(host, gpu), fast = MIN(host, gpu);

    assert(iters >= 1);
    return time_add(slow, fast / iters + (fast % iters != 0)); /* ns, amortized part rounded up */
}

/* ---- placement facts ------------------------------------------------------ */

struct place {
    bool nvlink;      /* members of a node talk over NVLink */
    bool staged;      /* no NVLink and no GPU P2P: copies through host memory */
    bool spine;       /* inter-node traffic crosses the fabric spine */
    double extra_us;  /* fabric latency beyond one switch, per network step */
    double net_scale; /* NIC bandwidth factor (1 / oversubscription on the spine) */
    const char *path;
};

/* The one-way network latency NCCL's NET latency constants stand for: network.latency's
   default (config/schema.c), ns. */
#define NET_TABLE_LATENCY_NS 2000.0

static const char *intra_path(const struct hardware *hw, int ppn)
{
    int gps = hw->pcie.gpus_per_switch > 1 ? hw->pcie.gpus_per_switch : 1;

    if (hw->nvlink.bw_Bps > 0)
        return hw->nvlink.nvswitch ? "NVLink/NVSwitch" : "NVLink";
    if (!hw->pcie.p2p)
        return "PCIe via host memory (no GPU P2P)";
    return ppn <= gps ? "PCIe switch (GPU P2P)" : "PCIe via CPU root complex (GPU P2P)";
}

static void place_group(const struct hardware *hw, const struct comm_group *g, struct place *pl)
{
    const struct network_spec *net = &hw->net;
    int levels = net->fabric_levels > 0 ? net->fabric_levels : 1;

    memset(pl, 0, sizeof(*pl));
    pl->nvlink = hw->nvlink.bw_Bps > 0 && g->ppn > 1;
    pl->staged = hw->nvlink.bw_Bps <= 0 && !hw->pcie.p2p && g->ppn > 1;
    pl->net_scale = 1;
    pl->path = intra_path(hw, g->ppn);
    if (g->nnodes <= 1)
        return;
    /* NCCL's NET latencies (nccl_tables.c hw_lat) are its tuner's constants for a fabric of
       the key's default one-way latency; a slower or faster fabric moves each network step by
       the difference (assumption: the constants hold the fabric's share at 2 us) */
    pl->extra_us = ((double)net->latency - NET_TABLE_LATENCY_NS) / 1e3;
    pl->spine = levels >= 2 && (!net->rail_optimized || !g->rail_aligned);
    if (pl->spine) {
        pl->net_scale = net->oversubscription > 1 ? 1 / net->oversubscription : 1;
        pl->extra_us += 2.0 * (levels - 1) * (double)net->hop_latency / 1e3;
    }
    if (hw->nvlink.bw_Bps > 0)
        pl->path =
            pl->spine ? "NVLink + network through the spine" : "NVLink + network, rail-aligned";
    else
        pl->path = pl->spine ? "PCIe + network through the spine" : "PCIe + network, one leaf";
}

/* The hardware as NCCL sees it once the fabric's oversubscription is applied. */
static void fabric_view(const struct hardware *hw, const struct place *pl, struct hardware *out)
{
    *out = *hw;
    out->net.nic_bw_Bps *= pl->net_scale;
}

/* ---- bottleneck tier -------------------------------------------------------- */

/*
 * Per-rank traffic on each tier during the bandwidth phase of duration
 * t_bw, from the algorithm's bus rate `bus` (bytes/s): inside a node every
 * rank moves the bus rate over NVLink/PCIe; across nodes a node's NICs carry
 * one of every ppn ring hops, so each GPU's NIC share carries bus / ppn.
 * The bottleneck is the tier with the highest utilization of its capacity.
 */
static void set_tier(const struct hardware *hw, const struct comm_group *g, const struct place *pl,
                     double bus, double net_rate, double t_bw, struct coll_cost *out)
{
    enum link_tier intra =
        pl->nvlink || (hw->nvlink.bw_Bps > 0 && g->ppn <= 1) ? TIER_NVLINK : TIER_PCIE;
    double rate = bus, cap;

    out->tier = intra;
    if (g->nnodes > 1) {
        double net_cap = coll_tier_bw(hw, TIER_NET);
        double u_net = net_cap > 0 ? net_rate / net_cap : INFINITY;
        double intra_cap = coll_tier_bw(hw, intra);
        double u_intra = g->ppn > 1 && intra_cap > 0 ? bus * (g->ppn - 1) / g->ppn / intra_cap : 0;
        if (u_net >= u_intra) {
            out->tier = TIER_NET;
            rate = net_rate;
        }
    }
    cap = coll_tier_bw(hw, out->tier);
    out->bus_bytes = rate * t_bw; /* what the algorithm moves over the tier */
    /* never faster than the link: a tier slower than NCCL's rate stretches the transfer */
    out->bus_bw_Bps = cap > 0 && rate > cap ? cap : rate;
}

/* ---- calibration ------------------------------------------------------------ */

static const struct coll_calib *find_calib(const struct hardware *hw, enum coll_op op,
                                           enum coll_algo a, enum coll_proto p, bool inter)
{
    const struct coll_calib *best = NULL;
    int i, best_score = -1;

    for (i = 0; i < hw->ncoll_cal; i++) {
        const struct coll_calib *c = &hw->coll_cal[i];
        int score;
        if (c->op != (int)op || c->inter_node != inter)
            continue;
        if ((c->algo != ALGO_AUTO && c->algo != (int)a) ||
            (c->proto != PROTO_AUTO && c->proto != (int)p))
            continue;
        score = (c->algo != ALGO_AUTO) * 2 + (c->proto != PROTO_AUTO);
        if (score > best_score) {
            best = c;
            best_score = score;
        }
    }
    return best;
}

/* ---- NCCL collectives --------------------------------------------------------- */

/*
 * Physical ceiling of host-staged transfers (NCCL SHM transport): each
 * member writes into and reads from host DRAM at the ring rate, and the
 * copies cross PCIe at its achieved rate.
 */
static double staged_cap_Bps(const struct hardware *hw, int ppn)
{
    double cap = hw->pcie.bw_Bps;

    if (hw->host.mem_bw_Bps > 0)
        cap = MIN(cap, hw->host.mem_bw_Bps / (2.0 * ppn));
    return cap;
}

/*
 * Pipeline fill, from the measurements of each generation. Everywhere but the case below:
 * one staging buffer per channel at the per-channel rate (the all-reduce tables of
 * tests/validation/nccl.csv, 8 x A100 ring and 8 x H100 NVLS: without it the model is
 * 20-30 % fast at 64-128 MiB). Ring all-gather and reduce-scatter on Hopper and later: one
 * slice per channel (ALLGATHER_SLICESTEPS = REDUCESCATTER_SLICESTEPS = NCCL_STEPS/4 steps of
 * buffer/NCCL_STEPS, 1 MiB for Simple; src/include/collectives.h), or each rank's piece of
 * a channel when smaller: the 8 x H100 tables (XLA's sm_90 table, nccl #1047 ring) reach
 * 270-310 GB/s at 64-128 MiB, where a whole buffer per channel (140 us at 64 MiB) would
 * cap them at 175-236. No A100 all-gather / reduce-scatter table and no H100 ring
 * all-reduce table are among the sources to tell whether the difference is the operation's
 * or the generation's; Korthikanti's A100 runs (sequence-parallel all-gathers and
 * reduce-scatters, tests/validation/runs.csv) keep the buffer (docs/collectives.md).
 */
static double fill_seconds(const struct hardware *hw, enum coll_op op, enum coll_algo a,
                           enum coll_proto p, double bytes, double ch, int nranks, double chan_Bps)
{
    bool agrs = op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER;

    if (agrs && a == ALGO_RING && hw->gpu.arch >= ARCH_HOPPER) {
        double slice = p == PROTO_SIMPLE ? buffer_bytes[p] / 4 : buffer_bytes[p] / 8;
        return MIN(slice, bytes / (ch * (nranks > 1 ? nranks : 1))) / chan_Bps;
    }
    return MIN(buffer_bytes[p], bytes / ch) / chan_Bps;
}

static void nccl_collective(const struct hardware *hw, const struct nccl_cfg *cfg,
                            const struct comm_group *g, enum coll_op op, double bytes,
                            const struct place *pl, struct coll_cost *out)
{
    struct hardware view;
    struct nccl_model m;
    const struct nccl_graph *gr;
    const struct coll_calib *cal;
    double lat_us, alg_GBps, alg_Bps, bus_Bps, chan_Bps, fill_s, ch;
    enum coll_algo a;
    enum coll_proto p;
    int rc;

    fabric_view(hw, pl, &view);
    nccl_model_init(&view, g, op, pl->extra_us, &m);
    nccl_version_limits(&m, cfg ? cfg->version : 0);
    nccl_select(&m, cfg, bytes, &a, &p);
    rc = nccl_cost(&m, a, p, bytes, &lat_us, &alg_GBps);
    assert(rc == 0 && "nccl_select returns an available pair");
    (void)rc;
    gr = a == ALGO_RING ? &m.ring : a == ALGO_TREE ? &m.tree : &m.nvls;
    ch = gr->nchannels > 0 ? gr->nchannels : 1;
    alg_Bps = alg_GBps * 1e9;
    chan_Bps = m.bus_GBps[a][p] * 1e9 / ch;
    if (pl->staged) {
        double factor = coll_bus_factor(op, g->nranks), cap = staged_cap_Bps(hw, g->ppn);
        if (alg_Bps * factor > cap)
            alg_Bps = cap / factor;
        chan_Bps = MIN(chan_Bps, cap / ch);
    }
    fill_s = fill_seconds(hw, op, a, p, bytes, ch, g->nranks, chan_Bps);
    cal = find_calib(hw, op, a, p, g->nnodes > 1);
    if (cal) {
        lat_us = (double)cal->latency / 1e3;
        alg_Bps = cal->bus_bw_Bps / coll_bus_factor(op, g->nranks);
        fill_s = 0;
    }
    if (a == ALGO_RING)
        bus_Bps = alg_Bps * coll_bus_factor(op, g->nranks); /* = nsteps / n */
    else if (a == ALGO_TREE)
        bus_Bps = alg_Bps * 2;      /* NCCL's tree ratio 0.5 */
    else if (op == COLL_ALL_REDUCE) /* NVLS: each GPU sends and receives (n+1)/n of the data */
        bus_Bps = alg_Bps * (g->ppn + 1.0) / g->ppn;
    else
        bus_Bps = alg_Bps * coll_bus_factor(op, g->ppn);
    out->algo = a;
    out->proto = p;
    out->latency = ns_from_s(lat_us * 1e-6 + fill_s);
    out->path = pl->path;
    if (a == ALGO_NVLS || a == ALGO_NVLS_TREE)
        out->path = g->nnodes > 1 ? "NVLink SHARP + network" : "NVLink SHARP (NVSwitch reduction)";
    set_tier(hw, g, pl, bus_Bps, bus_Bps / g->ppn, bytes / alg_Bps, out);
}

/* Seconds of the bandwidth phase of a cost. */
static double bw_seconds(const struct coll_cost *c)
{
    return c->bus_bw_Bps > 0 ? c->bus_bytes / c->bus_bw_Bps : 0;
}

/*
 * Two-level all-reduce (modelling option, formulas.md §5.4): reduce-scatter
 * inside each node, all-reduce of 1/ppn of the data across nodes on every
 * rail at once (ppn groups of one GPU per node), all-gather inside the node.
 */
static void hier_allreduce(const struct hardware *hw, const struct comm_group *g, double bytes,
                           const struct place *pl, struct coll_cost *out)
{
    struct comm_group intra = { g->ppn, 1, g->ppn, true };
    struct comm_group inter = { g->nnodes, g->nnodes, 1, g->rail_aligned };
    struct nccl_cfg any = { .algo = ALGO_AUTO, .proto = PROTO_AUTO };
    struct place pi, pn;
    struct coll_cost c1, c2, c3;
    double t_bw;

    place_group(hw, &intra, &pi);
    place_group(hw, &inter, &pn);
    pn.spine = pl->spine;
    pn.net_scale = pl->net_scale;
    pn.extra_us = pl->extra_us;
    nccl_collective(hw, &any, &intra, COLL_REDUCE_SCATTER, bytes, &pi, &c1);
    nccl_collective(hw, &any, &inter, COLL_ALL_REDUCE, bytes / g->ppn, &pn, &c2);
    nccl_collective(hw, &any, &intra, COLL_ALL_GATHER, bytes, &pi, &c3);
    t_bw = bw_seconds(&c1) + bw_seconds(&c2) + bw_seconds(&c3);
    out->algo = ALGO_HIER;
    out->proto = c2.proto;
    out->latency = time_add(time_add(c1.latency, c2.latency), c3.latency);
    out->path = pl->path;
    out->tier = TIER_NET;
    out->bus_bytes = c2.bus_bytes;
    out->bus_bw_Bps = t_bw > 0 ? c2.bus_bytes / t_bw : c2.bus_bw_Bps;
}

/* ---- point-to-point ------------------------------------------------------------ */

/*
 * Latency of grouped point-to-point: NCCL's Ring/Simple base (8.4 us) plus
 * one hop of its hardware table: NVLink 3.4, PCI 5.7, network 14 us
 * (tuning.cc). NCCL does not tune p2p with these; the choice is ours.
 */
static double p2p_latency_us(const struct place *pl, bool net)
{
    return 8.4 + (net ? 14.0 : pl->nvlink ? 3.4 : 5.7);
}

/* Intra-node p2p rate of `ppn` GPUs: NCCL's ring channels x speed, bytes/s. */
static double intra_p2p_Bps(const struct hardware *hw, int ppn, const struct place *pl)
{
    struct comm_group one = { ppn, 1, ppn, true };
    struct nccl_model m;
    double r;

    nccl_model_init(hw, &one, COLL_ALL_GATHER, 0, &m);
    r = m.ring.nchannels * m.ring.bw_intra * 1e9;
    if (pl->staged)
        r = MIN(r, staged_cap_Bps(hw, ppn));
    return r;
}

/* A rank's path to the network: one NIC (PCIe-limited), after the spine factor, bytes/s. */
static double nic_Bps(const struct hardware *hw, const struct place *pl)
{
    double pci = nccl_pcie_bw(hw->pcie.generation, hw->pcie.lanes) * 1e9;
    return MIN(pci, hw->net.nic_bw_Bps * pl->net_scale);
}

/*
 * All-to-all as NCCL runs it, grouped send/recv: every rank sends bytes/n to
 * each peer at once; peers on the node over NVLink/PCIe, the rest through
 * the rank's own NIC (one NIC per GPU, nccl-tests #267).
 */
static void alltoall(const struct hardware *hw, const struct comm_group *g, double bytes,
                     const struct place *pl, struct coll_cost *out)
{
    double n = g->nranks, intra_b = bytes * (g->ppn - 1) / n, inter_b = bytes * (n - g->ppn) / n;
    double t_intra = 0, t_inter = 0, t_bw;

    if (g->ppn > 1)
        t_intra = intra_b / intra_p2p_Bps(hw, g->ppn, pl);
    if (g->nnodes > 1)
        t_inter = inter_b / nic_Bps(hw, pl);
    t_bw = MAX(t_intra, t_inter);
    out->algo = ALGO_AUTO;
    out->proto = PROTO_SIMPLE;
    out->latency = ns_from_s(p2p_latency_us(pl, g->nnodes > 1) * 1e-6);
    out->path = pl->path;
    set_tier(hw, g, pl, t_bw > 0 ? intra_b / t_bw : 0, t_bw > 0 ? inter_b / t_bw : 0, t_bw, out);
    if (out->tier == TIER_NET && t_bw > 0) { /* a2a moves its own bytes, not ring traffic */
        out->bus_bytes = inter_b;
        out->bus_bw_Bps = inter_b / t_bw;
    }
}

/* Send/recv of `bytes` between two ranks (or each rank to one peer). */
static void sendrecv(const struct hardware *hw, const struct comm_group *g, double bytes,
                     const struct place *pl, struct coll_cost *out)
{
    bool net = g->nnodes > 1;
    double rate = net ? nic_Bps(hw, pl) : intra_p2p_Bps(hw, MAX(g->ppn, 2), pl);

    out->algo = ALGO_AUTO;
    out->proto = PROTO_SIMPLE;
    out->latency = ns_from_s(p2p_latency_us(pl, net) * 1e-6);
    out->path = net ? (hw->nvlink.bw_Bps > 0 && hw->net.rail_optimized ? "network, one NIC (PXN)"
                                                                       : "network, one NIC")
                    : pl->path;
    out->tier = net ? TIER_NET : pl->nvlink || hw->nvlink.bw_Bps > 0 ? TIER_NVLINK : TIER_PCIE;
    out->bus_bytes = bytes;
    /* per-GPU tier capacity: with fewer NICs than GPUs a GPU's share is less than a NIC */
    out->bus_bw_Bps =
        coll_tier_bw(hw, out->tier) > 0 ? MIN(rate, coll_tier_bw(hw, out->tier)) : rate;
}

/*
 * A calibrated figure for a point-to-point operation (entries with algorithm
 * `auto`): its latency, and its bus bandwidth over the same bus bytes.
 */
static void p2p_calib(const struct hardware *hw, const struct comm_group *g, enum coll_op op,
                      double bytes, struct coll_cost *out)
{
    const struct coll_calib *cal = find_calib(hw, op, ALGO_AUTO, PROTO_SIMPLE, g->nnodes > 1);
    double t_bw, cap = coll_tier_bw(hw, out->tier);

    if (!cal || cal->bus_bw_Bps <= 0)
        return;
    t_bw = bytes * coll_bus_factor(op, g->nranks) / cal->bus_bw_Bps;
    out->latency = cal->latency;
    out->bus_bw_Bps = out->bus_bytes / t_bw;
    if (cap > 0 && out->bus_bw_Bps > cap) {
        out->bus_bw_Bps = cap;
        out->bus_bytes = cap * t_bw;
    }
}

/* ---- entry ------------------------------------------------------------------------ */

void coll_estimate(const struct hardware *hw, const struct nccl_cfg *cfg,
                   const struct comm_group *g, enum coll_op op, double bytes, struct coll_cost *out)
{
    struct place pl;

    memset(out, 0, sizeof(*out));
    place_group(hw, g, &pl);
    out->algo = ALGO_RING;
    out->proto = PROTO_SIMPLE;
    out->tier = hw->nvlink.bw_Bps > 0 ? TIER_NVLINK : TIER_PCIE;
    out->path = pl.path;
    if (g->nranks <= 1 || bytes <= 0) {
        out->path = g->nranks <= 1 ? "single rank, no transfer" : pl.path;
        out->bus_bw_Bps = coll_tier_bw(hw, out->tier) > 0 ? coll_tier_bw(hw, out->tier) : 1;
        return;
    }
    if (op == COLL_SEND_RECV && g->nnodes > 1 && hw->nvlink.bw_Bps > 0 && hw->net.rail_optimized) {
        pl.spine = false; /* PXN keeps point-to-point traffic on the peer's rail */
        pl.net_scale = 1;
    }
    switch (op) {
    case COLL_ALL_TO_ALL:
        alltoall(hw, g, bytes, &pl, out);
        p2p_calib(hw, g, op, bytes, out);
        break;
    case COLL_SEND_RECV:
        sendrecv(hw, g, bytes, &pl, out);
        p2p_calib(hw, g, op, bytes, out);
        break;
    default:
        if (cfg && cfg->algo == ALGO_HIER && op == COLL_ALL_REDUCE && g->nnodes > 1 && g->ppn > 1)
            hier_allreduce(hw, g, bytes, &pl, out);
        else
            nccl_collective(hw, cfg, g, op, bytes, &pl, out);
        break;
    }
}
