/* test_memory_whatif.c - the what-if table of `simtrain memory` (whatif/memory_whatif.h). */
#define _POSIX_C_SOURCE 200809L /* open_memstream() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "whatif/memory_whatif.h"

static const struct mw_row *row(const struct memory_whatif *w, const char *label)
{
    for (int i = 0; i < w->nrows; i++)
        if (strcmp(w->rows[i].label, label) == 0)
            return &w->rows[i];
    return NULL;
}

/*
 * Full fine-tuning of Llama 2 7B on one H100 does not fit (161 GiB): the table names the
 * fastest row that fits, no fitting row is faster, every "fits" is under the capacity, and
 * rows that cannot apply on one GPU (ZeRO stages; selective recompute under FlashAttention)
 * are left out.
 */
static void test_memory_whatif_finds_fastest_change_that_fits(void **state)
{
    struct scenario *s =
        test_load(SIMTRAIN_SOURCE_DIR "/scenarios/finetune_7b_1gpu.yaml", NULL, NULL);
    struct memory_whatif w;
    struct run r;

    (void)state;
    test_simulate(s, false, &r);
    assert_false(r.fits);
    memory_whatif_run(s, &r, &w);
    assert_true(w.nrows > 5);
    assert_true(w.best >= 0);
    assert_true(w.rows[w.best].o.fits);
    for (int i = 0; i < w.nrows; i++) {
        const struct mw_outcome *o = &w.rows[i].o;
        assert_true(o->ok);
        assert_true(o->fits == (o->peak_bytes <= w.capacity_bytes));
        if (o->fits)
            assert_true(o->step_s >= w.rows[w.best].o.step_s);
    }
    assert_null(row(&w, "ZeRO-1 (shard optimizer states)"));
    assert_null(row(&w, "ZeRO-3 (+ parameters)"));
    assert_null(row(&w, "selective recompute"));
    assert_true(w.flash_selective);
    memory_whatif_release(&w);
    run_release(&r);
    cfg_free(s);
}

/* A row is the scenario re-simulated with the row's settings: same peak, same step time. */
static void test_memory_whatif_row_is_a_resimulation(void **state)
{
    const char *path = SIMTRAIN_SOURCE_DIR "/scenarios/ddp_8gpu.yaml";
    const char *const sets[] = { "training.recompute=full", NULL };
    struct scenario *s = test_load(path, NULL, NULL), *full = test_load(path, NULL, sets);
    const struct mw_row *ckpt;
    struct memory_whatif w;
    struct run r, rf;

    (void)state;
    test_simulate(s, false, &r);
    test_simulate(full, false, &rf);
    memory_whatif_run(s, &r, &w);
    ckpt = row(&w, "full activation checkpointing");
    assert_non_null(ckpt);
    assert_true(test_rel_err(ckpt->o.peak_bytes, rf.peak_bytes) < 1e-12); /* the same run */
    assert_true(test_rel_err(ckpt->o.step_s, rf.step_s) < 1e-12);
    assert_non_null(row(&w, "ZeRO-1 (shard optimizer states)")); /* dp 8 */
    assert_int_equal(w.best, -1);                                /* it fits as configured */
    memory_whatif_release(&w);
    run_release(&rf);
    run_release(&r);
    cfg_free(full);
    cfg_free(s);
}

/*
 * With micro-batch 1 already, "micro-batch 1" changes nothing and "QLoRA + full
 * checkpointing + micro-batch 1" repeats "QLoRA + full checkpointing": both are left out.
 */
static void test_memory_whatif_skips_repeated_configurations(void **state)
{
    const char *const sets[] = { "training.micro_batch=1", NULL };
    struct scenario *s = test_load(SIMTRAIN_SOURCE_DIR "/scenarios/ddp_8gpu.yaml", NULL, sets);
    struct memory_whatif w;
    struct run r;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    test_simulate(s, false, &r);
    memory_whatif_run(s, &r, &w);
    assert_null(row(&w, "gradient accumulation: micro-batch 1"));
    assert_null(row(&w, "QLoRA + full checkpointing + micro-batch 1"));
    assert_non_null(row(&w, "QLoRA + full checkpointing"));
    f = open_memstream(&text, &len);
    memory_whatif_print(f, s, &w);
    fclose(f);
    assert_non_null(strstr(text, "  as configured "));
    assert_null(strstr(text, "Fastest change that fits"));
    free(text);
    memory_whatif_release(&w);
    run_release(&r);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_whatif_finds_fastest_change_that_fits),
        cmocka_unit_test(test_memory_whatif_row_is_a_resimulation),
        cmocka_unit_test(test_memory_whatif_skips_repeated_configurations),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
