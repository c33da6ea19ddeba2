/*
 * test_library.c - the shipped hardware/, workloads/ and scenarios/ files load
 * without a diagnostic, and their key figures are what their sources say.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "model/workload.h"

#define DATA(rel) SIMTRAIN_SOURCE_DIR "/" rel

static const char *const hardware_files[] = {
    "dgx-a100-40g",  "dgx-a100-80g", "dgx-h100",         "dgx-h200",      "dgx-b200",
    "ws-4x-rtx4090", "l40s-pcie",    "grand-teton-h100", "hgx-h100-800g", "dgx-a100-80g-800g",
};

/* Load hardware/NAME.yaml, failing the test with the diagnostics on error. */
static struct hardware *load_hw(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, DATA("hardware/%s.yaml"), name);
    struct hardware *hw = cfg_load_hardware(path, stderr);
    if (!hw)
        fail_msg("hardware '%s' did not load", name);
    return hw;
}

static struct model *load_model(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, DATA("workloads/%s.yaml"), name);
    struct model *m = cfg_load_model(path, stderr);
    if (!m)
        fail_msg("workload '%s' did not load", name);
    return m;
}

/* Every shipped hardware file loads, and its efficiencies are fractions in (0, 1]. */
static void test_library_hardware_loads(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(hardware_files); i++) {
        struct hardware *hw = load_hw(hardware_files[i]);
        assert_true(hw->eff.gemm_max > 0 && hw->eff.gemm_max <= 1);
        assert_true(hw->eff.attn_flash > 0 && hw->eff.attn_flash <= 1);
        assert_true(hw->eff.attn_standard > 0 && hw->eff.attn_standard <= hw->eff.attn_flash);
        assert_true(hw->eff.mem_bw > 0 && hw->eff.mem_bw <= 1);
        cfg_free_hw(hw);
    }
}

/* DGX H100: 8 GPUs, 450 GB/s NVLink per direction, 8x 400 Gb/s NICs (formulas.md §7, BasePOD RA).
 */
static void test_library_dgx_h100_figures(void **state)
{
    (void)state;
    struct hardware *hw = load_hw("dgx-h100");
    assert_int_equal(hw->gpus_per_node, 8);
    assert_true(hw->nvlink.nvswitch);
    assert_int_equal((long)(hw->nvlink.bw_Bps / 1e9), 450);
    assert_int_equal(hw->net.nics_per_node, 8);
    assert_int_equal((long)(hw->net.nic_bw_Bps / 1e9), 50);
    assert_int_equal((long)(hw->gpu.flops[DT_BF16] / 1e12), 989);
    assert_int_equal((long)(hw->gpu.mem_bytes / (1024.0 * 1024.0)), 81559);
    cfg_free_hw(hw);
}

/*
 * fms-fsdp's H100 hosts (README @5a296af: "H100 96 GPUs with 800 Gbps"): the DGX H100's GPU and
 * calibration with two 400 Gb/s NICs per node, 100 Gb/s per GPU, no rails.
 */
static void test_library_hgx_800g_network(void **state)
{
    (void)state;
    struct hardware *hw = load_hw("hgx-h100-800g"), *dgx = load_hw("dgx-h100");
    assert_non_null(hw->calibration);
    assert_int_equal(hw->net.nics_per_node, 2);
    assert_true(fabs(hw->net.nics_per_node * hw->net.nic_bw_Bps * 8 / 1e9 - 800) < 1e-6);
    assert_false(hw->net.rail_optimized);
    assert_true(fabs(hw->eff.gemm_max - dgx->eff.gemm_max) < 1e-12);
    assert_true(fabs(hw->eff.attn_flash - dgx->eff.attn_flash) < 1e-12);
    assert_true(fabs(hw->gpu.clock_sust_Hz[DT_BF16] - dgx->gpu.clock_sust_Hz[DT_BF16]) < 1);
    cfg_free_hw(hw);
    cfg_free_hw(dgx);
}

/*
 * vTrain's A100 cluster (config/validation/multi/ configs "inter_node_bandwidth": 800, Gbps per
 * node per src/config.py): the DGX A100 80GB's GPU, NVLink and calibration with 4 x 200 Gb/s, no
 * rails.
 */
static void test_library_a100_800g_network(void **state)
{
    (void)state;
    struct hardware *hw = load_hw("dgx-a100-80g-800g"), *dgx = load_hw("dgx-a100-80g");
    assert_non_null(hw->calibration);
    assert_int_equal(hw->net.nics_per_node, 4);
    assert_true(fabs(hw->net.nics_per_node * hw->net.nic_bw_Bps * 8 / 1e9 - 800) < 1e-6);
    assert_true(fabs(dgx->net.nics_per_node * dgx->net.nic_bw_Bps * 8 / 1e9 - 1600) < 1e-6);
    assert_false(hw->net.rail_optimized);
    assert_true(fabs(hw->nvlink.bw_Bps - dgx->nvlink.bw_Bps) < 1);
    assert_true(fabs(hw->eff.gemm_max - dgx->eff.gemm_max) < 1e-12);
    assert_true(fabs(hw->eff.attn_standard - dgx->eff.attn_standard) < 1e-12);
    assert_true(fabs(hw->gpu.clock_sust_Hz[DT_FP16] - dgx->gpu.clock_sust_Hz[DT_FP16]) < 1);
    cfg_free_hw(hw);
    cfg_free_hw(dgx);
}

/* The 4x RTX 4090 workstation has no NVLink, no GPU peer-to-peer and no NICs. */
static void test_library_rtx4090_no_p2p(void **state)
{
    (void)state;
    struct hardware *hw = load_hw("ws-4x-rtx4090");
    assert_int_equal(hw->gpus_per_node, 4);
    assert_true(hw->nvlink.bw_Bps <= 0);
    assert_false(hw->pcie.p2p);
    assert_int_equal(hw->net.nics_per_node, 0);
    cfg_free_hw(hw);
}

struct param_case {
    const char *name;
    double total;  /* parameters, published count (docs/workloads.md) */
    double active; /* per token */
};

/*
 * Parameter counts of the shipped workloads equal the published ones: GPT-2
 * 124,439,808; Llama 2 7B 6,738,415,616; Llama 3 8B 8,030,261,248; Mixtral
 * 46.7B total / 12.9B active; GPT-3 = NAR21 eq. 2 with V = 51200, s = 2048.
 */
static void test_library_workload_params(void **state)
{
    (void)state;
    static const struct param_case cases[] = {
        { "gpt2-124m", 124439808.0, 124439808.0 },
        { "gpt2-1.5b", 1557611200.0, 1557611200.0 },
        { "gpt3-175b", 174615846912.0, 174615846912.0 },
        { "llama2-7b", 6738415616.0, 6738415616.0 },
        { "llama2-13b", 13015864320.0, 13015864320.0 },
        { "llama2-70b", 68976648192.0, 68976648192.0 },
        { "llama3-8b", 8030261248.0, 8030261248.0 },
        { "llama3-70b", 70553706496.0, 70553706496.0 },
        { "llama3-405b", 405853388800.0, 405853388800.0 },
        { "mixtral-8x7b", 46702792704.0, 12879925248.0 },
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct model *m = load_model(cases[i].name);
        double total = workload_params_total(m);
        double active = workload_params_active(m);
        if (total < cases[i].total - 0.5 || total > cases[i].total + 0.5)
            fail_msg("%s: %.0f parameters, expected %.0f", cases[i].name, total, cases[i].total);
        if (active < cases[i].active - 0.5 || active > cases[i].active + 0.5)
            fail_msg("%s: %.0f active, expected %.0f", cases[i].name, active, cases[i].active);
        cfg_free_model(m);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every scenario shipped in scenarios/ (all *.yaml files, found by listing) loads and validates. */
static void test_library_scenarios_load(void **state)
{
    DIR *d = opendir(DATA("scenarios"));
    struct dirent *e;
    char *names[256];
    size_t n = 0, i;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && n < ARRAY_LEN(names))
            names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    assert_true(n >= 12);
    for (i = 0; i < n; i++) {
        char path[512];
        struct scenario *s;
        snprintf(path, sizeof path, DATA("scenarios/%s"), names[i]);
        s = cfg_load_scenario(path, NULL, 0, stderr);
        if (!s)
            fail_msg("scenario '%s' did not load", names[i]);
        cfg_free(s);
        free(names[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_hardware_loads),
        cmocka_unit_test(test_library_dgx_h100_figures),
        cmocka_unit_test(test_library_hgx_800g_network),
        cmocka_unit_test(test_library_a100_800g_network),
        cmocka_unit_test(test_library_rtx4090_no_p2p),
        cmocka_unit_test(test_library_workload_params),
        cmocka_unit_test(test_library_scenarios_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
