/*
 * topo.h - the physical graph of a cluster and routes between its GPUs.
 *
 * Built from a struct hardware (config.h) for a number of identical nodes.
 * Per node: the GPUs; one logical NVSwitch vertex (all GPUs one NVLink hop
 * from it) or, without NVSwitch, a full NVLink mesh that splits each GPU's
 * bandwidth evenly over its peers; a PCIe tree (one switch per
 * `gpus_per_switch` GPUs under one CPU root complex, or GPUs straight on the
 * root complex when gpus_per_switch is 1); host DRAM behind the CPU; NICs, NIC
 * k on the PCIe switch of GPU k * gpus / nics (GPU-NIC affinity as on DGX
 * systems). The fabric: with `rail_optimized`, one leaf switch per rail (NIC
 * index) shared by all nodes, so same-index GPUs are one switch apart
 * (NVIDIA InfiniBand cluster bring-up, formulas.md §5.4); otherwise one leaf
 * per node. Leaves meet in one logical spine whose per-leaf uplink is the
 * leaf's downlink capacity divided by the oversubscription ratio; a fabric
 * of more than two levels is folded into that spine, only its latency grows
 * (two extra switch hops per extra level). One fabric level = one switch.
 *
 * Simplifications, on purpose: one CPU socket per node (no inter-socket
 * link), the spine never blocks beyond its oversubscription, and every link
 * is full duplex with the same bandwidth each way.
 *
 * Routes follow what NCCL's transports do: NVLink when present (P2P over
 * NVLink); else PCIe peer-to-peer through the shared switch or the root
 * complex when `pcie.p2p`; else staged through host memory (NCCL's SHM
 * transport, the only way on GeForce cards where NVIDIA disables P2P).
 * Between nodes the data leaves through a NIC; with rail optimization and
 * NVLink, a GPU first hands the data over NVLink to the GPU on the peer's
 * rail (NCCL's PXN, "P2P_PXN_LEVEL" 2), so traffic stays on one leaf.
 *
 * Memory: topo_new() returns an object the caller frees with topo_free(); it
 * copies what it needs from the hardware description.
 */
#ifndef SIMTRAIN_TOPO_H
#define SIMTRAIN_TOPO_H

#include <stdbool.h>

#include "model/hardware.h"

/* Link tiers a collective's traffic is charged to (per-GPU resources). */
enum link_tier {
    TIER_NVLINK, /* the GPU's NVLink ports */
    TIER_PCIE,   /* the GPU's PCIe link (P2P or host-staged) */
    TIER_NET,    /* the GPU's share of its node's NICs */
    TIER_COUNT
};

/* A communicator as placed on the cluster. */
struct comm_group {
    int nranks;        /* members */
    int nnodes;        /* nodes spanned */
    int ppn;           /* members per node (groups are balanced: nranks = nnodes * ppn) */
    bool rail_aligned; /* inter-node peers use the same NIC rail (same local GPU index) */
};

enum topo_vertex_kind {
    TV_GPU,
    TV_NVSWITCH,
    TV_PCIE_SWITCH,
    TV_CPU,     /* root complex */
    TV_HOSTMEM, /* host DRAM */
    TV_NIC,
    TV_LEAF, /* fabric leaf switch */
    TV_SPINE /* the rest of the fabric, folded into one vertex */
};

enum topo_link_kind {
    TL_NVLINK,
    TL_PCIE,
    TL_HOST, /* CPU <-> DRAM */
    TL_NET
};

struct topo_vertex {
    enum topo_vertex_kind kind;
    int node;  /* node index; -1 for fabric switches */
    int index; /* index among the node's vertices of this kind (GPU: local index) */
};

struct topo_link {
    int a, b; /* vertex indices into topo->v[] */
    enum topo_link_kind kind;
    double bw_Bps;    /* bandwidth per direction, bytes/s */
    sim_time latency; /* one-way, ns */
};

struct topo {
    int nodes;
    int gpus_per_node;
    int nics_per_node;
    struct topo_vertex *v;
    int nv;
    struct topo_link *l;
    int nl;
    /* what routing needs from the hardware description */
    bool nvlink, nvswitch, p2p, rail_optimized;
    int gpus_per_switch;
    int fabric_levels;
    /* vertex lookups */
    int *gpu_v;  /* global GPU id -> vertex */
    int *node_v; /* per node: first vertex of the node (its GPU 0) */
    int *nvs_v;  /* per node: NVSwitch vertex or -1 */
    int *cpu_v;  /* per node */
    int *mem_v;  /* per node */
    int *psw_v;  /* per node * switches per node, or NULL */
    int *nic_v;  /* per node * nics_per_node */
    int *leaf_v; /* per leaf */
    int nleaves;
    int spine_v;   /* -1 when there is none */
    int nswitches; /* PCIe switches per node */
};

/* One traversal of a link: resource id 2 * link + dir (dir 0 = a -> b). */
struct route_hop {
    int link;
    int dir;
};

#define ROUTE_MAX_HOPS 16

struct route {
    int nhops;
    struct route_hop hop[ROUTE_MAX_HOPS];
    double bw_Bps;       /* narrowest link on the path, bytes/s per direction */
    sim_time latency;    /* sum of link latencies, ns */
    enum link_tier tier; /* NVLink, PCIe or network */
    bool pxn;            /* the first hop hands data to the peer's rail GPU over NVLink */
    bool spine;          /* crosses the fabric spine (not rail-aligned or not rail-optimized) */
    const char *path;    /* static text, e.g. "NVLink/NVSwitch" */
};

/*
 * Build the graph of `nodes` (>= 1) nodes of `hw`. Never NULL; the caller
 * frees it with topo_free().
 */
struct topo *topo_new(const struct hardware *hw, int nodes);

/* Free a topology; NULL is accepted. */
void topo_free(struct topo *t);

/* Total GPUs (nodes * gpus per node). */
int topo_gpus(const struct topo *t);

/* Node and local index of a global GPU id. */
int topo_node_of(const struct topo *t, int gpu);

/*
 * The route from GPU `a` to GPU `b` (global ids). Fills *r and returns its
 * hop count; a == b gives an empty route with infinite bandwidth.
 */
int topo_route(const struct topo *t, int a, int b, struct route *r);

/*
 * The group shape of GPUs `gpus[0..n)`: members, nodes spanned, members per
 * node (the largest count on one node), and rail alignment (every node holds
 * the same set of local GPU indices).
 */
void topo_group(const struct topo *t, const int *gpus, int n, struct comm_group *g);

/* Name of a link kind ("NVLink", "PCIe", "host memory", "network"). */
const char *topo_link_kind_name(enum topo_link_kind k);

#endif
