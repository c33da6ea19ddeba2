/* test_memory_limits.c - the limits of `simtrain memory` (whatif/memory_limits.h): each one
 * confirmed through the loader, independently of the search, by simulating the scenario at
 * the limit (it fits) and one step past it (it does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "run/run.h"
#include "whatif/memory_limits.h"
#include "support.h"

/* Does `file` fit with these overrides (printf-built "key=value" strings)? */
static bool fits_with(const char *file, char sets[][64], int n)
{
    const char *p[8];
    struct scenario *s;
    struct run r;
    bool fits;

    for (int i = 0; i < n; i++)
        p[i] = sets[i];
    p[n] = NULL;
    s = test_load(file, NULL, p);
    test_simulate(s, false, &r);
    fits = r.fits;
    run_release(&r);
    cfg_free(s);
    return fits;
}

/* The layout overrides of a configuration: GPUs, dp, sharding, global batch. */
static int layout_sets(char sets[][64], int gpus, int mp, enum sharding sh, long gb)
{
    snprintf(sets[0], 64, "cluster.gpus=%d", gpus);
    snprintf(sets[1], 64, "parallelism.dp=%d", gpus / mp);
    snprintf(sets[2], 64, "parallelism.sharding=%s", sharding_name(sh));
    snprintf(sets[3], 64, "training.global_batch=%ld", gb);
    return 4;
}

static void confirm(const char *file)
{
    struct scenario *s = test_load(file, NULL, NULL);
    struct memory_limits l;
    struct run base;
    const struct ml_limit *mb, *seq, *g;
    int mp = s->par.tp * s->par.pp * s->par.cp, accum0;
    char sets[8][64];
    int n;

    accum0 = s->train.global_batch / (s->train.micro_batch * s->par.dp);
    test_simulate(s, false, &base);
    memory_limits_run(s, &base, &l);
    mb = &l.lim[ML_MICRO_BATCH];
    seq = &l.lim[ML_SEQ_LEN];
    g = &l.lim[ML_GPUS];
    assert_true(mb->found && seq->found && g->found);
    assert_true(mb->past == mb->value + 1 && seq->past == seq->value + l.seq_step);

    /* micro-batch: the accumulation steps stay, the global batch follows */
    n = layout_sets(sets, l.ref_gpus, mp, l.ref_sharding, mb->global_batch);
    snprintf(sets[n], 64, "training.micro_batch=%ld", mb->value);
    assert_true(fits_with(file, sets, n + 1));
    n = layout_sets(sets, l.ref_gpus, mp, l.ref_sharding,
                    (long)mb->accumulation * mb->past * mb->dp);
    snprintf(sets[n], 64, "training.micro_batch=%ld", mb->past);
    assert_false(fits_with(file, sets, n + 1));

    /* sequence: at the search's micro-batch, the sequences per step kept */
    n = layout_sets(sets, l.ref_gpus, mp, l.ref_sharding, seq->global_batch);
    snprintf(sets[n++], 64, "training.micro_batch=%d", l.seq_micro_batch);
    snprintf(sets[n], 64, "training.seq_len=%ld", seq->value);
    assert_true(fits_with(file, sets, n + 1));
    snprintf(sets[n], 64, "training.seq_len=%ld", seq->past);
    assert_false(fits_with(file, sets, n + 1));

    /* GPUs: the global batch kept where micro-batch x dp divides it, else the accumulation */
    n = layout_sets(sets, (int)g->value, mp, l.gpu_sharding, g->global_batch);
    assert_true(fits_with(file, sets, n));
    if (g->past) {
        long dp = g->past / mp, gb = s->train.global_batch;
        assert_true(g->past < g->value);
        if (gb % (s->train.micro_batch * dp))
            gb = (long)accum0 * s->train.micro_batch * dp;
        n = layout_sets(sets, (int)g->past, mp, l.gpu_sharding, gb);
        assert_false(fits_with(file, sets, n));
    } else {
        assert_int_equal(g->value, mp); /* the fewest the layout allows */
    }
    memory_limits_release(&l);
    run_release(&base);
    cfg_free(s);
}

/* Full fine-tuning of Llama 2 7B on one H100 does not fit: its fewest GPUs (with FSDP, as
 * the replicated states never fit) and the micro-batch and sequence limits there hold. */
static void test_limits_finetune_7b(void **state)
{
    (void)state;
    confirm("scenarios/finetune_7b_1gpu.yaml");
}

/* QLoRA on an RTX 4090 fits on its one GPU; its micro-batch and sequence limits hold. */
static void test_limits_qlora_4090(void **state)
{
    (void)state;
    confirm("scenarios/qlora_7b_4090.yaml");
}

/* A scenario that fits nowhere has no micro-batch or sequence limit, and says so. */
static void test_limits_none_fit(void **state)
{
    const char *sets[] = { "hardware.gpu.memory=1 GiB", NULL };
    struct scenario *s = test_load("scenarios/qlora_7b_4090.yaml", NULL, sets);
    struct memory_limits l;
    struct run base;

    (void)state;
    test_simulate(s, false, &base);
    memory_limits_run(s, &base, &l);
    assert_false(l.lim[ML_MICRO_BATCH].searched);
    assert_false(l.lim[ML_SEQ_LEN].searched);
    assert_true(l.lim[ML_GPUS].searched);
    memory_limits_release(&l);
    run_release(&base);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_finetune_7b),
        cmocka_unit_test(test_limits_qlora_4090),
        cmocka_unit_test(test_limits_none_fit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
