/*
 * test_metrics.c - the metrics of a simulated step (run/metrics.h): the breakdown adds up to
 * the step time, exposed communication never exceeds communication in flight, the
 * data-parallel traffic counts as ZERO §7 does (DDP 2 Psi, ZeRO-3 3 Psi) and only the groups
 * that span nodes reach the NICs, a program's traffic is counted once for all its ranks, and
 * the totals are those of the step time.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#include "model/workload.h"
#include "run/metrics.h"
#include "run/run.h"

static const char *const shipped[] = {
    "scenarios/gpt2_1gpu.yaml",
    "scenarios/ddp_8gpu.yaml",
    "scenarios/ddp_16gpu_2node.yaml",
    "scenarios/sharding_7b_8gpu.yaml",
    "scenarios/70b_256gpu_tp4pp8.yaml",
    "scenarios/mixtral_8x7b_64gpu.yaml",
    "scenarios/sharding_offload_13b_1gpu.yaml",
};

/* The exclusive breakdown, averaged over the simulated ranks, sums to the step time. */
static void test_metrics_breakdown_sums_to_step(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(shipped) / sizeof(shipped[0]); k++) {
        struct scenario *s = test_load(shipped[k], NULL, NULL);
        const struct run_metrics *m;
        struct run r;
        double sum = 0;

        test_simulate(s, false, &r);
        m = run_metrics(&r);
        assert_ptr_equal(run_metrics(&r), m); /* computed once, then kept */
        for (int c = 0; c < TC_COUNT; c++) {
            assert_true(m->breakdown_s[c] >= 0);
            sum += m->breakdown_s[c];
        }
        if (fabs(sum - r.step_s) > 1e-9 * r.step_s)
            fail_msg("%s: breakdown %.12g s, step %.12g s", shipped[k], sum, r.step_s);
        run_release(&r);
        cfg_free(s);
    }
}

/*
 * Communication exposed (the breakdown) is part of communication in flight (busy): for every
 * communication category, busy >= exposed; compute categories are busy exactly when they run.
 */
static void test_metrics_busy_covers_exposed(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(shipped) / sizeof(shipped[0]); k++) {
        struct scenario *s = test_load(shipped[k], NULL, NULL);
        const struct run_metrics *m;
        struct run r;

        test_simulate(s, false, &r);
        m = run_metrics(&r);
        for (int c = TC_COMM_TP; c <= TC_OFFLOAD; c++)
            if (m->busy_s[c] < m->breakdown_s[c] * (1 - 1e-12))
                fail_msg("%s: %s busy %.9g s < exposed %.9g s", shipped[k], tcat_name(c),
                         m->busy_s[c], m->breakdown_s[c]);
        run_release(&r);
        cfg_free(s);
    }
}

/*
 * ZERO §7 on Llama 2 7B over 8 GPUs, one micro-batch, 16-bit gradients: DDP all-reduces the
 * gradients once (2 Psi); ZeRO-3 all-gathers the parameters for forward and again for
 * backward and reduce-scatters the gradients (3 Psi) when nothing is kept between forward
 * and backward (stage3_max_reuse_distance 0). Psi is the replica at 16 bits: 2 B/parameter.
 */
static void test_metrics_dp_volume_in_psi(void **state)
{
    static const struct {
        const char *sharding;
        double psi;
    } cases[] = { { "parallelism.sharding=none", 2 }, { "parallelism.sharding=zero3", 3 } };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *sets[] = { cases[i].sharding, "zero.stage3_max_reuse_distance=0", NULL };
        struct scenario *s = test_load("scenarios/sharding_7b_8gpu.yaml", NULL, sets);
        const struct metrics_dp *d;
        struct run r;

        test_simulate(s, false, &r);
        d = &run_metrics(&r)->dp;
        assert_true(d->collectives > 0);
        assert_true(fabs(d->psi_bytes - 2 * workload_params_total(&s->model)) < 1);
        if (fabs(d->volume_bytes / d->psi_bytes - cases[i].psi) > 0.02 * cases[i].psi)
            fail_msg("%s: %.4f Psi, want %.0f", cases[i].sharding, d->volume_bytes / d->psi_bytes,
                     cases[i].psi);
        /* one node: everything on NVLink, nothing over the NICs */
        assert_true(d->link_bytes > 0);
        assert_true(!(d->nic_bytes > 0));
        run_release(&r);
        cfg_free(s);
    }
}

/* Two nodes of DDP: the data-parallel group spans them, so all its bus bytes reach the NICs. */
static void test_metrics_dp_nic_bytes_span_nodes(void **state)
{
    struct scenario *s = test_load("scenarios/ddp_16gpu_2node.yaml", NULL, NULL);
    const struct metrics_dp *d;
    struct run r;

    (void)state;
    test_simulate(s, false, &r);
    d = &run_metrics(&r)->dp;
    assert_true(d->nic_bytes > 0);
    assert_true(fabs(d->nic_bytes - d->link_bytes) <= 1e-9 * d->link_bytes);
    assert_true(d->exposed_s >= 0 && d->exposed_s <= r.step_s);
    run_release(&r);
    cfg_free(s);
}

/*
 * Each stage's program is scanned once, not once per rank: with every rank of a 4-stage,
 * 64-GPU layout simulated, the traffic equals the per-rank average of metrics_prog_dp()
 * computed rank by rank, to the bit (same order of summation).
 */
static void test_metrics_dp_per_program_matches_per_rank(void **state)
{
    static const char *const sets[] = { "cluster.nodes=8", "parallelism.dp=2",
                                        "training.global_batch=16", NULL };
    struct scenario *s = test_load("scenarios/70b_256gpu.yaml", NULL, sets);
    const struct metrics_dp *got;
    double volume = 0, psi = 0, colls = 0;
    struct run r;
    int i, n;

    (void)state;
    test_simulate(s, true, &r);
    n = r.sim.nranks;
    assert_int_equal(n, 64);
    assert_int_equal(r.nprogs, 4);
    got = &run_metrics(&r)->dp;
    for (i = 0; i < n; i++) {
        struct prog_dp_traffic t;
        metrics_prog_dp(s, r.sim.ranks[i].prog, &t);
        volume += t.volume_bytes / n;
        psi += t.psi_bytes / n;
        colls += (double)t.collectives / n;
    }
    assert_true(colls > 0);
    assert_memory_equal(&got->volume_bytes, &volume, sizeof(volume));
    assert_memory_equal(&got->psi_bytes, &psi, sizeof(psi));
    assert_memory_equal(&got->collectives, &colls, sizeof(colls));
    run_release(&r);
    cfg_free(s);
}

/* The totals are train_totals() of the simulated step time, field for field. */
static void test_metrics_totals_of_step(void **state)
{
    struct scenario *s = test_load("scenarios/70b_256gpu.yaml", NULL, NULL);
    struct train_totals want;
    struct run r;

    (void)state;
    test_simulate(s, false, &r);
    train_totals(s, r.step_s, &want);
    assert_true(want.have_tokens);
    assert_memory_equal(&run_metrics(&r)->totals, &want, sizeof(want));
    run_release(&r);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_breakdown_sums_to_step),
        cmocka_unit_test(test_metrics_busy_covers_exposed),
        cmocka_unit_test(test_metrics_dp_volume_in_psi),
        cmocka_unit_test(test_metrics_dp_nic_bytes_span_nodes),
        cmocka_unit_test(test_metrics_dp_per_program_matches_per_rank),
        cmocka_unit_test(test_metrics_totals_of_step),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
