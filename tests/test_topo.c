/* test_topo.c - cluster graph and routes (topo.h) on DGX-like and PCIe-only machines. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "model/topo.h"

/*
 * DGX H100 node: 8 GPUs, NVLink 4 with NVSwitch, 450 GB/s per GPU per direction;
 * 8 ConnectX-7 at 400 Gb/s, one per GPU (formulas.md §7, NVIDIA DGX H100 user
 * guide); PCIe Gen5 x16, two GPUs per switch (assumed, as on DGX A100).
 */
static void dgx_h100(struct hardware *hw)
{
    memset(hw, 0, sizeof(*hw));
    hw->name = "dgx-h100";
    hw->gpu.arch = ARCH_HOPPER;
    hw->gpus_per_node = 8;
    hw->nvlink = (struct nvlink_spec){ 4, 18, 450e9, true, 700 };
    hw->pcie = (struct pcie_spec){ 5, 16, 51e9, 2, true, 1000 };
    hw->host.mem_bw_Bps = 614.4e9;
    hw->net = (struct network_spec){ 8, 50e9, true, 2, 1, 2000, 300, false };
}

/*
 * 4x RTX 4090 workstation: no NVLink, GPU P2P disabled by NVIDIA on GeForce,
 * PCIe Gen4 x16 (formulas.md §7), each GPU on the root complex; 8-channel
 * DDR4-3200 host (204.8 GB/s, assumed Threadripper PRO class).
 */
static void rtx4090_box(struct hardware *hw)
{
    memset(hw, 0, sizeof(*hw));
    hw->name = "rtx4090-x4";
    hw->gpu.arch = ARCH_ADA;
    hw->gpus_per_node = 4;
    hw->pcie = (struct pcie_spec){ 4, 16, 25e9, 1, false, 1000 };
    hw->host.mem_bw_Bps = 204.8e9;
}

/* Inside a DGX node GPU 0 -> 5 goes GPU -> NVSwitch -> GPU at NVLink speed. */
static void test_topo_route_nvswitch(void **state)
{
    struct hardware hw;
    struct topo *t;
    struct route r;

    (void)state;
    dgx_h100(&hw);
    t = topo_new(&hw, 1);
    assert_int_equal(topo_route(t, 0, 5, &r), 2);
    assert_int_equal(r.tier, TIER_NVLINK);
    assert_true(fabs(r.bw_Bps - 450e9) < 1);
    assert_int_equal(r.latency, 700);
    assert_string_equal(r.path, "NVLink/NVSwitch");
    assert_int_equal(t->l[r.hop[0].link].kind, TL_NVLINK);
    topo_free(t);
}

/* Without P2P (GeForce) a copy goes up PCIe, through host DRAM, and down again. */
static void test_topo_route_host_staged(void **state)
{
    struct hardware hw;
    struct topo *t;
    struct route r;
    int i, host = 0;

    (void)state;
    rtx4090_box(&hw);
    t = topo_new(&hw, 1);
    topo_route(t, 0, 3, &r);
    assert_int_equal(r.tier, TIER_PCIE);
    assert_non_null(strstr(r.path, "host memory"));
    for (i = 0; i < r.nhops; i++)
        host += t->l[r.hop[i].link].kind == TL_HOST;
    assert_int_equal(host, 2); /* written to DRAM, then read from it */
    assert_true(fabs(r.bw_Bps - 25e9) < 1);
    topo_free(t);
}

/* With P2P, GPUs under one PCIe switch stay below it; others cross the root complex. */
static void test_topo_route_pcie_p2p(void **state)
{
    struct hardware hw;
    struct topo *t;
    struct route r;

    (void)state;
    rtx4090_box(&hw);
    hw.pcie.p2p = true;
    hw.pcie.gpus_per_switch = 2;
    t = topo_new(&hw, 1);
    assert_int_equal(topo_route(t, 0, 1, &r), 2);
    assert_string_equal(r.path, "PCIe switch (GPU P2P)");
    assert_int_equal(topo_route(t, 0, 2, &r), 4);
    assert_string_equal(r.path, "PCIe via CPU root complex (GPU P2P)");
    topo_free(t);
}

/* Across nodes the same rail stays on one leaf; another rail uses PXN over NVLink first. */
static void test_topo_route_rails_and_pxn(void **state)
{
    struct hardware hw;
    struct topo *t;
    struct route same, other;

    (void)state;
    dgx_h100(&hw);
    t = topo_new(&hw, 2);
    topo_route(t, 3, 8 + 3, &same);
    assert_int_equal(same.tier, TIER_NET);
    assert_false(same.pxn);
    assert_false(same.spine);
    assert_true(fabs(same.bw_Bps - 50e9) < 1);
    topo_route(t, 3, 8 + 5, &other);
    assert_true(other.pxn);
    assert_false(other.spine);
    assert_int_equal(t->l[other.hop[0].link].kind, TL_NVLINK);
    assert_true(other.latency > same.latency);
    topo_free(t);
}

/* Without rail optimization every inter-node route climbs to the spine, which costs latency. */
static void test_topo_route_spine(void **state)
{
    struct hardware hw;
    struct topo *t, *t2;
    struct route r, rail;

    (void)state;
    dgx_h100(&hw);
    t2 = topo_new(&hw, 2);
    topo_route(t2, 0, 8, &rail);
    hw.net.rail_optimized = false;
    hw.net.fabric_levels = 3;
    t = topo_new(&hw, 2);
    topo_route(t, 0, 8, &r);
    assert_true(r.spine);
    assert_int_equal(r.latency - rail.latency, 2 * 2 * 300);
    topo_free(t);
    topo_free(t2);
}

/* Group shapes: whole nodes are rail-aligned; mismatched local indices are not. */
static void test_topo_group_shapes(void **state)
{
    struct hardware hw;
    struct topo *t;
    struct comm_group g;
    int all[16], i, pair_same[2] = { 2, 10 }, pair_other[2] = { 2, 13 }, uneven[3] = { 0, 1, 8 };

    (void)state;
    dgx_h100(&hw);
    t = topo_new(&hw, 2);
    for (i = 0; i < 16; i++)
        all[i] = i;
    topo_group(t, all, 16, &g);
    assert_int_equal(g.nranks, 16);
    assert_int_equal(g.nnodes, 2);
    assert_int_equal(g.ppn, 8);
    assert_true(g.rail_aligned);
    topo_group(t, pair_same, 2, &g);
    assert_int_equal(g.ppn, 1);
    assert_true(g.rail_aligned);
    topo_group(t, pair_other, 2, &g);
    assert_false(g.rail_aligned);
    topo_group(t, uneven, 3, &g);
    assert_int_equal(g.ppn, 2);
    assert_false(g.rail_aligned);
    topo_group(t, all, 8, &g);
    assert_int_equal(g.nnodes, 1);
    topo_free(t);
}

/* The graph has what the header promises: 8 GPUs, 1 NVSwitch, 4 PCIe switches, 8 NICs per node. */
static void test_topo_counts(void **state)
{
    struct hardware hw;
    struct topo *t;
    int count[TV_SPINE + 1] = { 0 }, i;

    (void)state;
    dgx_h100(&hw);
    t = topo_new(&hw, 4);
    for (i = 0; i < t->nv; i++)
        count[t->v[i].kind]++;
    assert_int_equal(count[TV_GPU], 32);
    assert_int_equal(count[TV_NVSWITCH], 4);
    assert_int_equal(count[TV_PCIE_SWITCH], 16);
    assert_int_equal(count[TV_NIC], 32);
    assert_int_equal(count[TV_LEAF], 8); /* one per rail */
    assert_int_equal(count[TV_SPINE], 1);
    assert_int_equal(topo_gpus(t), 32);
    assert_int_equal(topo_node_of(t, 17), 2);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_route_nvswitch), cmocka_unit_test(test_topo_route_host_staged),
        cmocka_unit_test(test_topo_route_pcie_p2p), cmocka_unit_test(test_topo_route_rails_and_pxn),
        cmocka_unit_test(test_topo_route_spine),    cmocka_unit_test(test_topo_group_shapes),
        cmocka_unit_test(test_topo_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
