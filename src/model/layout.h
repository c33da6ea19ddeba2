/*
 * layout.h - where each rank sits: global rank <-> parallel coordinates
 * (tp, cp, ep, dp, pp) under the configured placement order, which node it
 * is on, and the members of each of its communicators.
 *
 * Ranks are numbered node-major (rank / gpus_per_node = node). The placement
 * order lists dimensions innermost first; the default tp-cp-ep-dp-pp keeps a
 * tensor-parallel group inside a node (Megatron's default order; NAR21 §3.2
 * takeaway #1). Expert parallelism subdivides data parallelism: an EP group is
 * `ep` consecutive DP indices, and the expert-data-parallel group is the DP
 * indices with the same position inside their EP group (Megatron MoE).
 */
#ifndef SIMTRAIN_LAYOUT_H
#define SIMTRAIN_LAYOUT_H

#include "model/scenario.h"
#include "model/kinds.h"
#include "model/topo.h"

struct layout {
    int deg[DIM_COUNT];    /* degree per dimension (deg[DIM_EP] = 1: EP lives inside DP) */
    int stride[DIM_COUNT]; /* rank stride per dimension */
    int ep;                /* expert-parallel degree, divides deg[DIM_DP] */
    int world;             /* total ranks */
    int gpus_per_node;
    int hsdp_shard; /* HSDP shard-group size (DP peers per node), or 0 */
};

void layout_init(struct layout *l, const struct scenario *s);

/*
 * How the scenario's sharding word was read on its stack (docs/sharding.md), for the reports:
 * zero2 run as FSDP without resharding after forward, or hsdp with a single replica group (all
 * of dp in one shard group: FSDP). A static string, or NULL when the word runs as itself.
 */
const char *layout_sharding_reading(const struct scenario *s);

/* Coordinates of a rank, indexed by enum par_dim (c[DIM_EP] = dp index % ep). */
void layout_coords(const struct layout *l, int rank, int c[DIM_COUNT]);
int layout_rank(const struct layout *l, const int c[DIM_COUNT]);

static inline int layout_node(const struct layout *l, int rank)
{
    return rank / l->gpus_per_node;
}

/*
 * Members of `rank`'s communicator of kind `kind` (enum comm_kind), in rank
 * order, into out[0..max). Returns the member count. For COMM_PP_NEXT and
 * COMM_PP_PREV the "group" is the pair {rank, peer}; layout_peer() names the
 * peer (the pipeline wraps around for interleaved schedules).
 */
int layout_group(const struct layout *l, int rank, int kind, int *out, int max);
int layout_group_size(const struct layout *l, int kind);
int layout_peer(const struct layout *l, int rank, int kind);

/*
 * The shape of a group of ranks `members[0..n)` in ascending order (as
 * layout_group() gives them) for the collective model: members, nodes
 * spanned, the most members on one node, and rail alignment (every node holds
 * the same set of local GPU indices, so a member's inter-node peers sit on its
 * own rail). The simulator and the closed-form estimate both use it.
 */
void layout_group_shape(const struct layout *l, const int *members, int n, struct comm_group *g);

#endif
