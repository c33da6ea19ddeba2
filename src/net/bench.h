/*
 * bench.h - the collective model run as nccl-tests runs a collective
 * (`simtrain collective`, and its --validate against published figures):
 * where a group of N GPUs sits on the nodes of a hardware description, what
 * one row of the nccl-tests table holds for a message size (time per
 * iteration, algbw, busbw with nccl-tests' definitions, the algorithm and
 * protocol NCCL would pick), and nccl-tests' size syntax.
 *
 * Timing follows nccl-tests' loop (src/common.cu): `iters` iterations
 * enqueued back to back and timed together, so the host's launches overlap
 * the GPUs' work (coll_bench_time()).
 */
#ifndef SIMTRAIN_BENCH_H
#define SIMTRAIN_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "model/hardware.h"
#include "model/topo.h"
#include "net/collective.h"

/* How the group is driven and what is forced. */
struct bench_cfg {
    enum coll_op op;
    struct nccl_cfg nccl;    /* forced algorithm / protocol, or auto */
    enum coll_launch launch; /* one launching thread per GPU, or one for all */
    int iters;               /* timed iterations (nccl-tests -n) */
};

/* One row of the table. */
struct bench_row {
    double bytes;        /* message size, B */
    double count;        /* float elements, as nccl-tests prints them */
    double time_s;       /* per iteration */
    double algbw_GBps;   /* bytes / time */
    double busbw_GBps;   /* algbw x nccl-tests' bus factor */
    enum coll_algo algo; /* what NCCL would run (ALGO_AUTO: point to point) */
    enum coll_proto proto;
    bool host_bound; /* the host's launches set the pace */
};

/*
 * Whether a group of `gpus` GPUs on `nodes` nodes (0: as few as hold them,
 * filled in order) can be placed on hw with `algo` forced:
 * 0, or -1 with a message naming the option at fault (--gpus, --nodes,
 * --algo) in msg. The placement needs a network beyond one node and a whole
 * number of GPUs per node; without --nodes, GPUs beyond one node must fill
 * whole nodes (12 GPUs on 8-GPU nodes would be 2 nodes of 6: say --nodes 2).
 * `algo` must be one the hardware offers (NVLS: an NVSwitch system of the
 * Hopper generation or later, coll_algo_available()).
 */
int bench_check(const struct hardware *hw, int gpus, int nodes, enum coll_algo algo, char *msg,
                size_t msglen);

/*
 * The group of n GPUs on `nodes` nodes of hw (0 = as few as hold them): the
 * first n / nodes GPUs of each node, or with nodes = 0 the first n GPUs,
 * filling nodes in order; n must not exceed nodes * hw->gpus_per_node
 * (bench_check()). *last receives the group's last GPU id. The caller frees
 * the returned topology with topo_free().
 */
struct topo *bench_place(const struct hardware *hw, int n, int nodes, struct comm_group *g,
                         int *last);

/* The row of message size `bytes` for group g on hw. */
void bench_row(const struct hardware *hw, const struct comm_group *g, const struct bench_cfg *c,
               double bytes, struct bench_row *out);

/*
 * A size in nccl-tests' syntax: "8", "1K", "64M", "8G", "1GiB", "512 B" (K,
 * M, G, T = powers of 1024). 0, or -1 when malformed.
 */
int bench_parse_size(const char *s, double *out);

#endif
