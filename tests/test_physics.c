/*
 * test_physics.c - the simulator behaves physically (foundation acceptance): DDP over two
 * nodes exposes more communication than over one node at the same per-GPU work; more NIC
 * or NVLink bandwidth never makes a step slower; more GPUs at a fixed global batch never
 * make a step slower in DDP; a faster GPU never slows the step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/schema.h"
#include "run/run.h"

struct step {
    double step_s;
    double exposed_dp_s; /* averaged exposed DP communication */
};

static struct step simulate(const char *path, const char *const *sets, int nsets)
{
    struct cfg_override ovr[8];
    struct scenario *s;
    struct sim_opts opts = { 0 };
    struct run r;
    struct step out = { 0, 0 };
    char reason[256];
    int i, k;

    assert_true(nsets <= 8);
    for (i = 0; i < nsets; i++)
        assert_int_equal(cfg_override_init(&ovr[i], sets[i], stderr), 0);
    s = cfg_load_scenario(path, ovr, nsets, stderr);
    assert_non_null(s);
    assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
    out.step_s = r.step_s;
    for (k = 0; k < r.sim.nranks; k++)
        out.exposed_dp_s += (double)r.sim.ranks[k].bucket[TC_COMM_DP] / NS_PER_S / r.sim.nranks;
    run_release(&r);
    cfg_free(s);
    for (i = 0; i < nsets; i++)
        cfg_override_release(&ovr[i]);
    return out;
}

/* 16 GPUs on 2 nodes expose more DP communication than 8 GPUs on 1 node, same per-GPU batch. */
static void test_ddp_two_nodes_expose_more(void **state)
{
    const char *one[] = { "training.global_batch=512" };
    const char *two[] = { "training.global_batch=1024" };
    struct step a = simulate("scenarios/ddp_8gpu.yaml", one, 1);
    struct step b = simulate("scenarios/ddp_16gpu_2node.yaml", two, 1);

    (void)state;
    assert_true(b.exposed_dp_s > a.exposed_dp_s);
    assert_true(b.step_s >= a.step_s);
}

/* Doubling the NIC bandwidth, step by step, never makes a two-node DDP step slower. */
static void test_more_nic_bandwidth_never_slower(void **state)
{
    const char *bw[] = { "hardware.network.nic_bandwidth=50 Gb/s",
                         "hardware.network.nic_bandwidth=100 Gb/s",
                         "hardware.network.nic_bandwidth=200 Gb/s",
                         "hardware.network.nic_bandwidth=400 Gb/s",
                         "hardware.network.nic_bandwidth=800 Gb/s" };
    double prev = 1e30, prev_dp = 1e30;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(bw); i++) {
        struct step s = simulate("scenarios/ddp_16gpu_2node.yaml", &bw[i], 1);
        assert_true(s.step_s <= prev);
        assert_true(s.exposed_dp_s <= prev_dp);
        prev = s.step_s;
        prev_dp = s.exposed_dp_s;
    }
}

/* More NVLink bandwidth never slows a one-node DDP step. */
static void test_more_nvlink_bandwidth_never_slower(void **state)
{
    const char *bw[] = { "hardware.node.nvlink.bandwidth=50 GB/s",
                         "hardware.node.nvlink.bandwidth=150 GB/s",
                         "hardware.node.nvlink.bandwidth=450 GB/s",
                         "hardware.node.nvlink.bandwidth=900 GB/s" };
    double prev = 1e30;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_LEN(bw); i++) {
        struct step s = simulate("scenarios/ddp_8gpu.yaml", &bw[i], 1);
        assert_true(s.step_s <= prev);
        prev = s.step_s;
    }
}

/* Strong scaling in DDP: more GPUs for the same global batch never make the step slower. */
static void test_more_gpus_fixed_batch_not_slower(void **state)
{
    const char *n1[] = { "cluster.nodes=1", "parallelism.dp=8" };
    const char *n2[] = { "cluster.nodes=2", "parallelism.dp=16" };
    const char *n4[] = { "cluster.nodes=4", "parallelism.dp=32" };
    struct step a = simulate("scenarios/ddp_16gpu_2node.yaml", n1, 2);
    struct step b = simulate("scenarios/ddp_16gpu_2node.yaml", n2, 2);
    struct step c = simulate("scenarios/ddp_16gpu_2node.yaml", n4, 2);

    (void)state;
    assert_true(b.step_s < a.step_s);
    assert_true(c.step_s < b.step_s);
}

/* A GPU with twice the FLOP/s and memory bandwidth finishes a single-GPU step sooner. */
static void test_faster_gpu_faster_step(void **state)
{
    const char *fast[] = { "hardware.gpu.flops.bf16=1978 TFLOPS",
                           "hardware.gpu.memory_bandwidth=6.7 TB/s" };
    struct step a = simulate("scenarios/gpt2_1gpu.yaml", NULL, 0);
    struct step b = simulate("scenarios/gpt2_1gpu.yaml", fast, 2);

    (void)state;
    assert_true(b.step_s < a.step_s);
    assert_true(b.step_s > 0.4 * a.step_s); /* at most ~2x: compute-bound work halves */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ddp_two_nodes_expose_more),
        cmocka_unit_test(test_more_nic_bandwidth_never_slower),
        cmocka_unit_test(test_more_nvlink_bandwidth_never_slower),
        cmocka_unit_test(test_more_gpus_fixed_batch_not_slower),
        cmocka_unit_test(test_faster_gpu_faster_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
