/*
 * bench_flow.c - time of flow_solve() with up to 1,024 (and 4,096) concurrent
 * flows over the link resources the simulator creates: per GPU one NVLink
 * port, one PCIe link each way and one NIC share, 128 nodes x 8 GPUs.
 *
 * The flow mix is a 3D-parallel step in flight: tensor-parallel all-reduces
 * over the 8 NVLink ports of a node, data-parallel all-reduces over the NIC
 * shares of one rail across 16 nodes, pipeline send/recv between two GPUs'
 * NIC shares, and offload copies on one PCIe direction; caps are the
 * collectives' isolated bus bandwidths. Each row: a full solve after every
 * flow changed, and the event engine's case, one flow ending and another
 * starting, then a solve. Prints a Markdown table for docs/performance.md.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "net/flow.h"
#include "base/util.h"

#define NODES 128
#define GPN   8
#define NGPU  (NODES * GPN)

enum {
    R_NVL,
    R_H2D,
    R_D2H,
    R_NIC,
    R_COUNT
};

static int res(int gpu, int kind)
{
    return gpu * R_COUNT + kind;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Add flow number k of the mix; returns its id. */
static int add_flow(struct flow_net *net, int k, uint64_t *rng)
{
    int links[16], n = 0, i, kind = k % 8;
    int node = (int)(rng_uniform(rng) * NODES), lg = (int)(rng_uniform(rng) * GPN);

    if (kind == 0) { /* TP all-reduce inside a node: 8 NVLink ports, 360 GB/s (NCCL ring) */
        for (i = 0; i < GPN; i++)
            links[n++] = res(node * GPN + i, R_NVL);
        return flow_add(net, 360e9, links, n);
    }
    if (kind <= 2) { /* DP all-reduce on one rail across 16 nodes: NIC shares, 45 GB/s */
        int first = (node / 16) * 16;
        for (i = 0; i < 16; i++)
            links[n++] = res((first + i) * GPN + lg, R_NIC);
        return flow_add(net, 45e9, links, n);
    }
    if (kind <= 6) { /* PP send/recv to the next node: two NIC shares, 48 GB/s */
        links[n++] = res(node * GPN + lg, R_NIC);
        links[n++] = res(((node + 1) % NODES) * GPN + lg, R_NIC);
        return flow_add(net, 48e9, links, n);
    }
    links[n++] = res(node * GPN + lg, rng_uniform(rng) < 0.5 ? R_H2D : R_D2H); /* offload copy */
    return flow_add(net, 0, links, n);
}

static void bench(int nflows)
{
    struct flow_net *net = flow_new();
    uint64_t rng = 12345;
    int *ids = xmalloc(sizeof(int) * (size_t)nflows), i, reps, r;
    double t0, full_us, incr_us, sink = 0;

    for (i = 0; i < NGPU; i++) {
        flow_link_add(net, 450e9); /* NVLink 4 per direction */
        flow_link_add(net, 51e9);  /* PCIe Gen5 achieved, host to device */
        flow_link_add(net, 51e9);  /* device to host */
        flow_link_add(net, 50e9);  /* one 400 Gb/s NIC per GPU */
    }
    for (i = 0; i < nflows; i++)
        ids[i] = add_flow(net, i, &rng);
    reps = nflows <= 64 ? 20000 : nflows <= 256 ? 2000 : 200;

    t0 = now_s();
    for (r = 0; r < reps; r++) {
        int k = r % nflows;
        flow_remove(net, ids[k]); /* marks the whole net dirty: a full re-solve */
        ids[k] = add_flow(net, k, &rng);
        flow_solve(net);
        sink += flow_rate(net, ids[0]);
    }
    incr_us = (now_s() - t0) / reps * 1e6;

    t0 = now_s();
    for (r = 0; r < reps; r++) {
        struct flow_net *fresh = flow_new();
        uint64_t rr = 777;
        for (i = 0; i < NGPU * R_COUNT; i++)
            flow_link_add(fresh, 50e9);
        for (i = 0; i < nflows; i++)
            add_flow(fresh, i, &rr);
        flow_solve(fresh);
        sink += flow_count(fresh);
        flow_free(fresh);
    }
    full_us = (now_s() - t0) / reps * 1e6;

    printf("| %5d | %7d | %10.2f | %12.2f | %10.0f |\n", nflows, flow_link_count(net), incr_us,
           full_us, 1e6 / incr_us);
    if (sink < 0)
        printf("impossible\n");
    free(ids);
    flow_free(net);
}

int main(void)
{
    static const int sizes[] = { 4, 16, 64, 256, 1024, 4096 };
    size_t i;

    printf("flow_solve, %d GPUs x %d link resources; one core, -O2 (CMAKE_BUILD_TYPE)\n\n", NGPU,
           R_COUNT);
    printf("| flows | links | end+start+solve (us) | build+solve from scratch (us) | "
           "re-solves/s |\n|---|---|---|---|---|\n");
    for (i = 0; i < ARRAY_LEN(sizes); i++)
        bench(sizes[i]);
    return 0;
}
