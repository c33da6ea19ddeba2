/*
 * test_sharding_words.c - each stack's sharding vocabulary (docs/sharding.md): zero2 on FSDP
 * stacks and without a profile under pipelining (config/check.c cfg_read_words), hsdp with one
 * replica group, and what the reports say of them (model/layout.c layout_sharding_reading).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#include "config/config.h"
#include "model/layout.h"

#define DATA(rel) SIMTRAIN_SOURCE_DIR "/" rel

/* scenarios/sharding_7b_8gpu.yaml with the overrides `sets` (NULL-terminated). */
static struct scenario *load7b(const char *const *sets)
{
    return test_load(DATA("scenarios/sharding_7b_8gpu.yaml"), NULL, sets);
}

/* Its diagnostics when it must not load. */
static void load7b_error(const char *const *sets, char *msg, size_t n)
{
    struct cfg_override o[8];
    FILE *diag = tmpfile();
    int k = 0;

    for (; sets[k]; k++)
        assert_int_equal(cfg_override_init(&o[k], sets[k], stderr), 0);
    assert_null(cfg_load_scenario(DATA("scenarios/sharding_7b_8gpu.yaml"), o, k, diag));
    for (int i = 0; i < k; i++)
        cfg_override_release(&o[i]);
    rewind(diag);
    msg[fread(msg, 1, n - 1, diag)] = '\0';
    fclose(diag);
}

/*
 * Without a profile, zero2 under pipelining is FSDP2 without resharding after forward (the
 * Llama 3 paper's PyTorch FSDP, arXiv:2407.21783 §3.3.2), the same program as sharding fsdp with
 * fsdp.version 2 and reshard_after_forward false; without pipelining it stays DeepSpeed's stage
 * 2; a stated fsdp.version 1 is kept (and refused: FSDP1 does not pipeline).
 */
static void test_words_zero2_other_under_pp(void **state)
{
    const char *z2[] = { "parallelism.pp=2", "parallelism.dp=4", "parallelism.sharding=zero2",
                         "training.global_batch=32", NULL };
    const char *fs[] = { "parallelism.pp=2",
                         "parallelism.dp=4",
                         "parallelism.sharding=fsdp",
                         "fsdp.version=2",
                         "fsdp.reshard_after_forward=false",
                         "training.global_batch=32",
                         NULL };
    const char *flat[] = { "parallelism.sharding=zero2", NULL };
    const char *v1[] = { "parallelism.pp=2", "parallelism.dp=4", "parallelism.sharding=zero2",
                         "fsdp.version=1", NULL };
    struct scenario *a = load7b(z2), *b = load7b(fs), *c = load7b(flat);
    struct run ra, rb;
    char msg[1024];

    (void)state;
    assert_int_equal(a->par.sharding, SHARD_FSDP_GRAD_OP);
    assert_true(a->par.zero2_read);
    assert_int_equal(a->fsdp.version, 2);
    assert_non_null(strstr(layout_sharding_reading(a), "zero2 read as FSDP2 without resharding"));
    test_simulate(a, false, &ra);
    test_simulate(b, false, &rb);
    assert_true(test_rel_err(ra.step_s, rb.step_s) < 1e-9);
    assert_int_equal(ra.sim.ranks[0].peak, rb.sim.ranks[0].peak);
    run_release(&ra);
    run_release(&rb);
    assert_int_equal(c->par.sharding, SHARD_ZERO2);
    assert_false(c->par.zero2_read);
    assert_null(layout_sharding_reading(c));
    load7b_error(v1, msg, sizeof(msg));
    assert_non_null(strstr(msg, "FSDP1 (fsdp.version 1) has no pipeline-parallel composition"));
    cfg_free(a);
    cfg_free(b);
    cfg_free(c);
}

/*
 * A profile says what zero2 means on its stack: torchtitan's FSDP2 (with or without PP),
 * llm-foundry's SHARD_GRAD_OP, and DeepSpeed's stage 2, refused under pipelining by its pipeline
 * engine with the way to say the FSDP2 reading.
 */
static void test_words_zero2_by_profile(void **state)
{
    const char *tt[] = { "training.framework=torchtitan", "parallelism.sharding=zero2", NULL };
    const char *lf[] = { "training.framework=llm-foundry", "parallelism.sharding=zero2", NULL };
    const char *ds[] = { "training.framework=deepspeed", "parallelism.pp=2", "parallelism.dp=4",
                         "parallelism.sharding=zero2", NULL };
    struct scenario *t = load7b(tt), *l = load7b(lf);
    char msg[1024];

    (void)state;
    assert_int_equal(t->par.sharding, SHARD_FSDP_GRAD_OP);
    assert_int_equal(t->fsdp.version, 2);
    assert_int_equal(t->par.zero2_impl, Z2_FSDP);
    assert_int_equal(l->par.sharding, SHARD_FSDP_GRAD_OP);
    assert_int_equal(l->fsdp.version, 1);
    load7b_error(ds, msg, sizeof(msg));
    assert_non_null(strstr(msg, "sharding 'zero2' as DeepSpeed's stage cannot be combined with "
                                "pp > 1"));
    assert_non_null(strstr(msg, "parallelism.zero2_impl fsdp"));
    cfg_free(t);
    cfg_free(l);
}

/*
 * The word is read when it is given: cfg_set of the sharding or of zero2_impl reads it anew (a
 * sweep over zero2_impl switches between the readings); another key leaves the reading alone.
 */
static void test_words_zero2_cfg_set(void **state)
{
    const char *sets[] = { "training.framework=torchtitan", NULL };
    struct scenario *s = load7b(sets);
    struct cfg_error err;

    (void)state;
    assert_int_equal(cfg_set(s, "parallelism.sharding", "zero2", &err), 0);
    assert_int_equal(s->par.sharding, SHARD_FSDP_GRAD_OP);
    assert_int_equal(cfg_set(s, "training.micro_batch", "2", &err), 0);
    assert_int_equal(s->par.sharding, SHARD_FSDP_GRAD_OP);
    assert_int_equal(cfg_set(s, "parallelism.zero2_impl", "deepspeed", &err), 0);
    assert_int_equal(s->par.sharding, SHARD_ZERO2);
    assert_false(s->par.zero2_read);
    assert_int_equal(cfg_set(s, "parallelism.zero2_impl", "fsdp", &err), 0);
    assert_int_equal(s->par.sharding, SHARD_FSDP_GRAD_OP);
    assert_int_equal(cfg_set(s, "parallelism.sharding", "zero3", &err), 0);
    assert_false(s->par.zero2_read);
    assert_int_equal(cfg_set(s, "parallelism.zero2_impl", "deepspeed", &err), 0);
    assert_int_equal(s->par.sharding, SHARD_ZERO3);
    cfg_free(s);
}

/*
 * HSDP with one replica group (one node, OLMo-core's default data-parallel type) shards over
 * all of dp: it runs and costs as FSDP, and the report says so; on two nodes it stays hybrid.
 */
static void test_words_hsdp_one_replica_group(void **state)
{
    const char *hs[] = { "parallelism.sharding=hsdp", NULL };
    const char *fs[] = { "parallelism.sharding=fsdp", NULL };
    struct scenario *h = load7b(hs), *f = load7b(fs);
    struct run rh, rf;
    struct layout l;

    (void)state;
    layout_init(&l, h);
    assert_int_equal(layout_group_size(&l, COMM_DP_INTER), 1);
    assert_non_null(strstr(layout_sharding_reading(h), "one replica group"));
    test_simulate(h, false, &rh);
    test_simulate(f, false, &rf);
    assert_true(test_rel_err(rh.step_s, rf.step_s) < 1e-9);
    assert_int_equal(rh.sim.ranks[0].peak, rf.sim.ranks[0].peak);
    run_release(&rh);
    run_release(&rf);
    cfg_free(h);
    cfg_free(f);
    h = test_load(DATA("scenarios/sharding_7b_64gpu.yaml"), NULL, hs);
    assert_null(layout_sharding_reading(h));
    cfg_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_zero2_other_under_pp),
        cmocka_unit_test(test_words_zero2_by_profile),
        cmocka_unit_test(test_words_zero2_cfg_set),
        cmocka_unit_test(test_words_hsdp_one_replica_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
