/*
 * bench.c - the collective model as nccl-tests measures it (bench.h).
 */
#include "net/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

int bench_check(const struct hardware *hw, int gpus, int nodes, enum coll_algo algo, char *msg,
                size_t msglen)
{
    int G = hw->gpus_per_node > 0 ? hw->gpus_per_node : 1;

    if ((gpus > G || nodes > 1) && (hw->net.nics_per_node <= 0 || hw->net.nic_bw_Bps <= 0)) {
        snprintf(msg, msglen, "'%s' has no network: at most %d GPUs on one node",
                 hw->name ? hw->name : "?", G);
        return -1;
    }
    /* the GPUs must fit the nodes given, --nodes 1 too (bench_place() trusts it) */
    if ((nodes > 1 && (gpus < nodes || gpus % nodes || gpus / nodes > G)) ||
        (nodes == 1 && gpus > G)) {
        snprintf(msg, msglen, "%d GPUs do not split evenly over %d node%s of %d GPUs", gpus, nodes,
                 nodes == 1 ? "" : "s", G);
        return -1;
    }
    /* filling nodes in order, a partial last node would be an uneven group: say how to split */
    if (nodes == 0 && gpus > G && gpus % G) {
        snprintf(msg, msglen,
                 "--gpus %d is not a whole number of %d-GPU nodes: give --nodes M to place %d/M "
                 "GPUs on each of M nodes",
                 gpus, G, gpus);
        return -1;
    }
    if (!coll_algo_available(hw, algo)) {
        snprintf(msg, msglen,
                 "--algo %s needs an NVSwitch system of the Hopper generation or later, which "
                 "'%s' is not",
                 algo_name(algo), hw->name ? hw->name : "?");
        return -1;
    }
    return 0;
}

struct topo *bench_place(const struct hardware *hw, int n, int nodes, struct comm_group *g,
                         int *last)
{
    int G = hw->gpus_per_node > 0 ? hw->gpus_per_node : 1, i;
    int *gpus = xmalloc(sizeof(int) * (size_t)n);
    struct topo *t;

    if (nodes <= 0)
        nodes = (n + G - 1) / G;
    t = topo_new(hw, nodes);
    for (i = 0; i < n; i++) {
        int per = (n + nodes - 1) / nodes;
        gpus[i] = nodes > 1 && per <= G ? (i / per) * G + i % per : i;
    }
    topo_group(t, gpus, n, g);
    *last = gpus[n - 1];
    free(gpus);
    return t;
}

/* Float elements, as nccl-tests prints them: per rank for the gathering and scattering ops. */
static double elements(enum coll_op op, double bytes, int n)
{
    bool per_rank = op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER || op == COLL_ALL_TO_ALL;
    return floor(bytes / 4 / (per_rank ? n : 1));
}

void bench_row(const struct hardware *hw, const struct comm_group *g, const struct bench_cfg *c,
               double bytes, struct bench_row *out)
{
    /* single-process: one thread launches on every GPU of the node it runs on */
    int host_gpus = c->launch == LAUNCH_SINGLE_PROCESS ? g->ppn : 1;
    struct coll_cost cost;
    sim_time gpu;

    coll_estimate(hw, &c->nccl, g, c->op, bytes, &cost);
    gpu = coll_time(&cost);
    out->bytes = bytes;
    out->count = elements(c->op, bytes, g->nranks);
    out->time_s = (double)coll_bench_time(gpu, hw->eff.launch, host_gpus, c->iters) / NS_PER_S;
    out->algbw_GBps = out->time_s > 0 ? bytes / out->time_s / 1e9 : 0;
    out->busbw_GBps = out->algbw_GBps * coll_bus_factor(c->op, g->nranks);
    out->algo = cost.algo;
    out->proto = cost.proto;
    out->host_bound = (sim_time)host_gpus * hw->eff.launch > gpu;
}

int bench_parse_size(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end), mult = 1;

    if (end == s || v < 0 || !isfinite(v))
        return -1;
    while (*end == ' ')
        end++;
    switch (*end) {
    case 'K':
    case 'k':
        mult = 1024.0;
        break;
    case 'M':
        mult = 1024.0 * 1024;
        break;
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        break;
    case 'T':
        mult = 1024.0 * 1024 * 1024 * 1024;
        break;
    default:
        mult = 0;
    }
    if (mult > 0) {
        end++;
        if (*end == 'i')
            end++;
    } else {
        mult = 1;
    }
    if (*end == 'B')
        end++;
    if (*end)
        return -1;
    *out = v * mult;
    return 0;
}
