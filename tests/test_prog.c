/*
 * test_prog.c - program stamping (prog.h prog_seg_*): the builder records a
 * layer's tasks once and stamps copies for later layers and micro-batches.
 * A stamped program must equal the one emitted afresh, task by task: kind,
 * stream, categories, durations, bytes, memory, labels and dependencies.
 * Sealing links each stream's tasks in order, as a scan of the tasks says.
 * Labels are interned by text: where the texts are stored changes neither the
 * labels nor the work of interning them.
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

/* Fail with the first difference between two programs built from the same scenario. */
static void same_prog(const char *what, const struct prog *a, const struct prog *b)
{
    char la[160], lb[160];
    int i, k;

    if (a->ntasks != b->ntasks)
        fail_msg("%s %s: %d tasks stamped, %d fresh", what, a->role, a->ntasks, b->ntasks);
    for (i = 0; i < a->ntasks; i++) {
        const struct task *x = &a->tasks[i], *y = &b->tasks[i];
        prog_label_text(a, x->label, la, sizeof(la));
        prog_label_text(b, y->label, lb, sizeof(lb));
        if (x->kind != y->kind || x->stream != y->stream || x->tcat != y->tcat ||
            x->comm != y->comm || x->op != y->op || x->mcat0 != y->mcat0 || x->mcat1 != y->mcat1 ||
            x->mb != y->mb || x->dur != y->dur || x->mem0 != y->mem0 || x->mem1 != y->mem1 ||
            memcmp(&x->bytes, &y->bytes, sizeof(x->bytes)) != 0 || strcmp(la, lb) != 0 ||
            x->npred != y->npred || x->nsucc != y->nsucc)
            fail_msg("%s %s: task %d differs ('%s' stamped, '%s' fresh)", what, a->role, i, la, lb);
        for (k = 0; k < x->npred; k++)
            if (a->preds[x->pred0 + k] != b->preds[y->pred0 + k])
                fail_msg("%s %s: task %d ('%s') dependency %d differs", what, a->role, i, la, k);
    }
}

/* Build `path` with `sets` overrides stamped and fresh; compare programs and step times. */
static void check(const char *path, const char *const *sets)
{
    struct scenario *s = test_load(path, NULL, sets);
    struct run r1, r2;
    int i;

    prog_set_stamping(true);
    test_simulate(s, false, &r1);
    prog_set_stamping(false);
    test_simulate(s, false, &r2);
    prog_set_stamping(true);
    assert_int_equal(r1.nprogs, r2.nprogs);
    for (i = 0; i < r1.nprogs; i++)
        same_prog(path, r1.progs[i], r2.progs[i]);
    if (r1.sim.step != r2.sim.step)
        fail_msg("%s: step %lld ns stamped, %lld ns fresh", path, (long long)r1.sim.step,
                 (long long)r2.sim.step);
    run_release(&r1);
    run_release(&r2);
    cfg_free(s);
}

/* Every shipped scenario: stamping changes nothing. */
static void test_prog_stamping_matches_fresh_scenarios(void **state)
{
    static const char *const paths[] = {
        "scenarios/70b_256gpu.yaml",        "scenarios/70b_256gpu_tp4pp8.yaml",
        "scenarios/70b_256gpu_fsdp.yaml",   "scenarios/mixtral_8x7b_64gpu.yaml",
        "scenarios/405b_16k.yaml",          "scenarios/7b_ddp_8gpu.yaml",
        "scenarios/ddp_16gpu_2node.yaml",   "scenarios/sharding_7b_8gpu.yaml",
        "scenarios/sharding_7b_64gpu.yaml", "scenarios/sharding_offload_13b_1gpu.yaml",
        "scenarios/finetune_7b_1gpu.yaml",  "scenarios/qlora_7b_4090.yaml",
        "scenarios/gpt2_1gpu.yaml",         "scenarios/ddp_8gpu.yaml",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        check(paths[i], NULL);
}

/*
 * The settings that change a layer's shape: schedules (zero-bubble splits backward into input
 * and weight passes), recomputation, TP overlap modes, sharding strategies, MoE with dense
 * layers in between, uneven pipeline stages.
 */
static void test_prog_stamping_matches_fresh_variants(void **state)
{
    static const char *const flag[][5] = {
        { "parallelism.schedule=1f1b", "parallelism.vpp=1", NULL },
        { "parallelism.schedule=zb-h1", "parallelism.vpp=1", NULL },
        { "parallelism.schedule=gpipe", "parallelism.vpp=1", NULL },
        { "training.recompute=full", NULL },
        { "training.recompute=none", NULL },
        { "parallelism.tp_comm_overlap=true", NULL },
        { "parallelism.tp_async_allreduce=false", "parallelism.sequence_parallel=false", NULL },
        { "parallelism.first_stage_layers=17", "parallelism.last_stage_layers=21",
          "parallelism.vpp=1", "parallelism.schedule=1f1b", NULL },
    };
    static const char *const shard[][2] = {
        { "parallelism.sharding=zero1", NULL },
        { "parallelism.sharding=zero2", NULL },
        { "parallelism.sharding=fsdp", NULL },
        { "parallelism.sharding=hsdp", NULL },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(flag) / sizeof(flag[0]); i++)
        check("scenarios/70b_256gpu.yaml", flag[i]);
    for (size_t i = 0; i < sizeof(shard) / sizeof(shard[0]); i++)
        check("scenarios/sharding_7b_64gpu.yaml", shard[i]);
}

/* Fail unless p's sealed stream order and dense copies agree with a scan of its tasks. */
static void check_sealed(const char *what, const struct prog *p)
{
    int32_t next[ST_COUNT];
    uint32_t used[3] = { 0 }; /* communicators of collectives, sends, receives */
    int i, st;

    for (st = 0; st < ST_COUNT; st++)
        next[st] = p->ntasks;
    for (i = p->ntasks - 1; i >= 0; i--) { /* the reference: the next task of each stream */
        const struct task *t = &p->tasks[i];
        if (p->snext[i] != next[t->stream])
            fail_msg("%s %s: task %d: next on its stream %d, scan says %d", what, p->role, i,
                     p->snext[i], next[t->stream]);
        if (p->stream_of[i] != t->stream || p->pstart[i] != t->pred0 ||
            p->pstart[i + 1] - p->pstart[i] != t->npred)
            fail_msg("%s %s: task %d: dense copies differ from the task", what, p->role, i);
        next[t->stream] = i;
        if (t->kind == TASK_COLL || t->kind == TASK_SEND || t->kind == TASK_RECV)
            used[t->kind == TASK_COLL ? 0 : t->kind == TASK_SEND ? 1 : 2] |= 1u << t->comm;
    }
    if (p->coll_comms != used[0] || p->send_comms != used[1] || p->recv_comms != used[2])
        fail_msg("%s %s: communicators used differ from a scan", what, p->role);
    for (st = 0; st < ST_COUNT; st++)
        if (p->sfirst[st] != next[st])
            fail_msg("%s %s: stream %s starts at %d, scan says %d", what, p->role, stream_name(st),
                     p->sfirst[st], next[st]);
    assert_int_equal(p->pstart[p->ntasks], p->npreds);
}

/*
 * prog_seal()'s stream order (snext, sfirst), dense copies (pstart, stream_of) and
 * communicator summary match a scan of the tasks, for programs in huge-page mappings (the
 * flagship's 3.5 MB stages, with pipeline sends) and from malloc (small scenarios).
 */
static void test_prog_seal_stream_order_matches_scan(void **state)
{
    static const char *const paths[] = { "scenarios/70b_256gpu.yaml", "scenarios/gpt2_1gpu.yaml",
                                         "scenarios/sharding_7b_8gpu.yaml" };

    (void)state;
    for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
        struct scenario *s = test_load(paths[k], NULL, NULL);
        struct run r;
        test_simulate(s, false, &r);
        for (int i = 0; i < r.nprogs; i++)
            check_sealed(paths[k], r.progs[i]);
        run_release(&r);
        cfg_free(s);
    }
}

/* ---- labels --------------------------------------------------------------------------- */

#define NFMT 24    /* distinct label texts, as a layer has */
#define NARG 20000 /* arguments (layer numbers) per text */

/*
 * Intern NARG labels of each of NFMT texts stored at base + k * stride into a new program;
 * ids[] receives the label indices, in call order. Returns the slots passed while interning.
 */
static uint64_t intern_at(char *base, size_t stride, int *ids)
{
    struct prog *p = prog_new("labels");
    uint64_t probes;
    int a, k, n = 0;

    for (k = 0; k < NFMT; k++)
        snprintf(base + (size_t)k * stride, 32, "layer part %02d L%%d", k);
    for (a = 0; a < NARG; a++)
        for (k = 0; k < NFMT; k++)
            ids[n++] = prog_label(p, base + (size_t)k * stride, a);
    assert_int_equal(p->nlabels, NFMT * NARG);
    probes = p->label_probes;
    prog_free(p);
    return probes;
}

/*
 * The same labels interned from texts packed together, on page boundaries and on 64 KiB
 * boundaries get the same indices and pass the same number of occupied slots, and few (under
 * two per label): no hash or probe depends on where the texts are (a hash of the pointer
 * made --set workload.layers=100000 take 1.7 s to over 100 s, address-space randomisation).
 */
static void test_prog_label_work_independent_of_addresses(void **state)
{
    static const size_t strides[] = { 40, 4096, 65536 + 8 };
    int *ref = xmalloc(sizeof(int) * NFMT * NARG), *ids = xmalloc(sizeof(int) * NFMT * NARG);
    uint64_t probes[3];
    size_t k;

    (void)state;
    for (k = 0; k < 3; k++) {
        char *buf = xmalloc(strides[k] * NFMT + 64);
        probes[k] = intern_at(buf, strides[k], k == 0 ? ref : ids);
        if (k > 0)
            assert_memory_equal(ref, ids, sizeof(int) * NFMT * NARG);
        free(buf);
    }
    assert_true(probes[0] == probes[1] && probes[1] == probes[2]);
    if (probes[0] >= 2 * (uint64_t)NFMT * NARG)
        fail_msg("%llu slots passed for %d labels", (unsigned long long)probes[0], NFMT * NARG);
    free(ref);
    free(ids);
}

/* Equal texts stored apart are one label; different arguments or texts are not. */
static void test_prog_label_equal_texts_are_one_label(void **state)
{
    char a[16] = "gather L%d", b[16] = "gather L%d", c[16] = "scatter L%d", out[32];
    struct prog *p = prog_new("labels");
    int id = prog_label(p, a, 3);

    (void)state;
    assert_int_equal(prog_label(p, b, 3), id);
    assert_int_not_equal(prog_label(p, b, 4), id);
    assert_int_not_equal(prog_label(p, c, 3), id);
    prog_label_text(p, prog_label(p, b, 3), out, sizeof(out));
    assert_string_equal(out, "gather L3");
    prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prog_stamping_matches_fresh_scenarios),
        cmocka_unit_test(test_prog_stamping_matches_fresh_variants),
        cmocka_unit_test(test_prog_seal_stream_order_matches_scan),
        cmocka_unit_test(test_prog_label_work_independent_of_addresses),
        cmocka_unit_test(test_prog_label_equal_texts_are_one_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
