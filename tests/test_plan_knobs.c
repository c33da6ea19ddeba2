/* test_plan_knobs.c - what `simtrain plan` varies beside the layout (whatif/plan_knobs.c):
 * offload with the host it needs, overlap and prefetch, dominance, the "changed" text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "run/run.h"
#include "whatif/plan.h"
#include "support.h"

/*
 * Llama 3 70B fully fine-tuned on one DGX H100 fits only by offloading (the states are 1.27 TB
 * against 640 GB of GPU memory): the plan lists offload candidates that fit by simulation,
 * each with its PCIe traffic and the host RAM it takes, within the node's.
 */
static void test_knobs_70b_on_8_offloads(void **state)
{
    struct scenario *s = test_load("scenarios/70b_8gpu_finetune.yaml", NULL, NULL);
    struct plan_opts o = { .top = 5, .shard_n = 1 };
    struct plan_result r;
    char msg[256];
    int offload = 0;

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    assert_true(r.nfinal > 0);
    for (int i = 0; i < r.nfinal; i++) {
        const struct plan_cand *c = &r.final[i];
        assert_true(c->sim_peak_bytes <= s->hw.gpu.mem_bytes);
        if (!c->offload)
            continue;
        offload++;
        assert_true(c->needs.d2h_bytes > 0 && c->needs.h2d_bytes > 0);
        assert_true(c->needs.pcie_need_Bps > 0 && c->needs.pcie_need_Bps <= c->needs.pcie_Bps);
        assert_true(c->needs.host_bytes_node > 0 &&
                    c->needs.host_bytes_node <= c->needs.host_capacity);
        assert_non_null(strstr(c->changes, "offload="));
    }
    assert_true(offload > 0);
    /* the same scenario without offload cannot fit anywhere: every winner offloads */
    assert_int_equal(offload, r.nfinal);
    plan_result_release(&r);
    cfg_free(s);
}

/* With too little host RAM for what the node's GPUs offload, offload candidates are refused
 * (host memory) and nothing fits. */
static void test_knobs_host_memory_refused(void **state)
{
    const char *sets[] = { "hardware.node.host.memory=256 GiB", NULL };
    struct scenario *s = test_load("scenarios/70b_8gpu_finetune.yaml", NULL, sets);
    struct plan_opts o = { .top = 3, .shard_n = 1 };
    struct plan_result r;
    char msg[256];

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    assert_true(r.rejected[PR_HOST_MEMORY] > 0);
    assert_non_null(strstr(r.example[PR_HOST_MEMORY], "host RAM"));
    for (long i = 0; i < r.nfit; i++)
        assert_false(r.fit[i].offload);
    assert_int_equal(r.nfinal, 0);
    plan_result_release(&r);
    cfg_free(s);
}

/*
 * A layout whose preferred setting fits has its other settings counted as dominated, never
 * estimated: on the flagship, whose layouts mostly fit without offload, dominated settings
 * outnumber the layouts that fit, and no winner offloads.
 */
static void test_knobs_dominated_not_estimated(void **state)
{
    struct scenario *s = test_load("scenarios/70b_256gpu.yaml", NULL, NULL);
    struct plan_opts o = { .top = 3, .shard_n = 1 };
    struct plan_result r;
    char msg[256];

    (void)state;
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    assert_true(r.rejected[PR_DOMINATED] > 0);
    assert_true(r.evaluated > r.layouts);
    for (int i = 0; i < r.nfinal; i++)
        assert_false(r.final[i].offload);
    plan_result_release(&r);
    cfg_free(s);
}

/* The "changed" text names what differs from the scenario, layout first, and a default that
 * follows the layout (zero.overlap_comm with ZeRO-3) is no change. */
static void test_knobs_changes_text(void **state)
{
    struct scenario *s = test_load("scenarios/70b_8gpu_finetune.yaml", NULL, NULL);
    struct plan_cand c = { .gpus = 8,
                           .nodes = 1,
                           .dp = 4,
                           .tp = 2,
                           .pp = 1,
                           .vpp = 1,
                           .cp = 1,
                           .ep = 1,
                           .sharding = SHARD_ZERO3,
                           .micro_batch = 1,
                           .recompute = RC_FULL };
    char buf[200];

    (void)state;
    c.knob[PK_OFFLOAD] = OFFLOAD_OPTIMIZER + 1;
    c.knob[PK_ZERO_OVERLAP] = 1 + 1; /* on: ZeRO-3's default */
    plan_cand_changes(s, &c, buf, sizeof(buf));
    assert_string_equal(buf, "tp=2, dp=4, offload=optimizer");
    memset(c.knob, 0, sizeof(c.knob));
    c.tp = 1;
    c.dp = 8;
    plan_cand_changes(s, &c, buf, sizeof(buf));
    assert_string_equal(buf, "(as configured)");
    cfg_free(s);
}

/* Values of a knob that apply to a layout, preferred first; none where it changes nothing. */
static void test_knobs_values(void **state)
{
    struct scenario *s = test_load("scenarios/70b_8gpu_finetune.yaml", NULL, NULL);
    int v[PK_MAX_VALUES];

    (void)state;
    assert_int_equal(plan_knob_values(s, PK_OFFLOAD, v), 3); /* zero3: none, optimizer, params */
    assert_int_equal(v[0], OFFLOAD_NONE);
    assert_int_equal(plan_knob_values(s, PK_TP_OVERLAP, v), 0); /* tp 1 */
    assert_int_equal(plan_knob_values(s, PK_ZERO_OVERLAP, v), 2);
    assert_int_equal(v[0], 1);
    assert_int_equal(plan_knob_values(s, PK_DDP_OVERLAP, v), 0);
    s->par.sharding = SHARD_NONE;
    assert_int_equal(plan_knob_values(s, PK_OFFLOAD, v), 1);
    assert_int_equal(plan_knob_values(s, PK_DDP_OVERLAP, v), 2);
    cfg_free(s);
}

/*
 * Activation offload is a plan knob: LoRA on Llama 2 7B at sequence 65536 on one H100 needs
 * 316 GiB of saved activations without recompute; with the layers' saved tensors on the host
 * (training.activation_offload streams) that setting fits by estimate, and the plan says so
 * in its "changed" text.
 */
static void test_knobs_activation_offload(void **state)
{
    const char *sets[] = { "training.finetune=lora", "training.seq_len=65536",
                           "workload.max_seq=65536", "training.global_batch=1",
                           "training.micro_batch=1", NULL };
    struct scenario *s = test_load("scenarios/finetune_7b_1gpu.yaml", NULL, sets);
    struct plan_opts o = { .top = 5, .shard_n = 1 };
    struct plan_result r;
    char msg[256];
    int v[PK_MAX_VALUES], found = 0;

    (void)state;
    assert_int_equal(plan_knob_values(s, PK_ACT_OFFLOAD, v), 2); /* none, streams */
    assert_int_equal(v[0], ACT_OFFLOAD_NONE);
    assert_int_equal(v[1], ACT_OFFLOAD_STREAMS);
    assert_int_equal(plan_search(s, &o, &r, NULL, msg, sizeof(msg)), 0);
    for (long i = 0; i < r.nfit; i++) {
        const struct plan_cand *c = &r.fit[i];
        if (c->recompute == RC_NONE && c->knob[PK_ACT_OFFLOAD] == ACT_OFFLOAD_STREAMS + 1) {
            found++;
            char buf[200];
            assert_true(c->est.peak_bytes <= s->hw.gpu.mem_bytes);
            plan_cand_changes(s, c, buf, sizeof(buf));
            assert_non_null(strstr(buf, "activation_offload=streams"));
        }
        /* without offload or recompute nothing fits */
        assert_false(c->recompute == RC_NONE && c->knob[PK_ACT_OFFLOAD] <= ACT_OFFLOAD_NONE + 1);
    }
    assert_true(found > 0);
    plan_result_release(&r);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knobs_values),
        cmocka_unit_test(test_knobs_changes_text),
        cmocka_unit_test(test_knobs_70b_on_8_offloads),
        cmocka_unit_test(test_knobs_host_memory_refused),
        cmocka_unit_test(test_knobs_dominated_not_estimated),
        cmocka_unit_test(test_knobs_activation_offload),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
