/*
 * test_memory_features.c - the training features imported configs use (issue 16 item 4), each
 * in memory and in time: a paged optimizer without QLoRA, DeepSpeed parameter offload without
 * optimizer offload, activation offloading (streams and synchronous), PEFT modules_to_save,
 * LoRA on an LLM.int8 base and DoRA.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/memory.h"
#include "model/workload.h"
#include "support.h"

#define QLORA "scenarios/qlora_7b_4090.yaml"    /* Llama 2 7B QLoRA on one RTX 4090 */
#define ZERO3 "scenarios/sharding_7b_8gpu.yaml" /* Llama 2 7B ZeRO-3 on 8 H100s */
#define FT7B  "scenarios/finetune_7b_1gpu.yaml" /* Llama 2 7B full fine-tuning on one H100 */

struct step {
    struct scenario *s;
    struct run r;
};

static void step_of(struct step *st, const char *path, const char *const *sets)
{
    st->s = test_load(path, NULL, sets);
    test_simulate(st->s, false, &st->r);
}

static void step_free(struct step *st)
{
    run_release(&st->r);
    cfg_free(st->s);
}

static double at_peak(const struct step *st, int cat)
{
    return (double)st->r.sim.ranks[st->r.peak_idx].at_peak[cat];
}

/* The same to the byte. */
static bool same(double a, double b)
{
    return fabs(a - b) < 0.5;
}

/* Busy time of time category `tcat` on rank 0, seconds. */
static double busy_s(const struct step *st, int tcat)
{
    return (double)st->r.sim.ranks[0].busy[tcat] / 1e9;
}

/* Copies of `bytes` (to the device or not) in rank 0's program. */
static int copies(const struct step *st, bool to_device)
{
    const struct prog *p = st->r.progs[0];
    int n = 0;

    for (int i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COPY && (p->tasks[i].stream == ST_H2D) == to_device)
            n++;
    return n;
}

/*
 * training.paged_optimizer applies QLoRA's rule to any run (bitsandbytes paged_adamw_8bit on a
 * full fine-tune, Axolotl llama-3/fft-8b.yaml): the optimizer states leave the GPU for
 * host-backed unified memory, nothing else moves; the host figure grows by them.
 */
static void test_paged_optimizer_without_qlora(void **state)
{
    struct step a, b;
    struct param_roles roles;

    (void)state;
    step_of(&a, FT7B, (const char *[]){ "training.optimizer=adam8bit", NULL });
    step_of(
        &b, FT7B,
        (const char *[]){ "training.optimizer=adam8bit", "training.paged_optimizer=true", NULL });
    assert_true(at_peak(&a, MC_OPTIM) > 13e9); /* 6.74 B x 2.03 B */
    assert_true(at_peak(&b, MC_OPTIM) < 1);
    assert_true(same(at_peak(&b, MC_PARAMS), at_peak(&a, MC_PARAMS)));
    assert_true(same(at_peak(&b, MC_MASTER), at_peak(&a, MC_MASTER)));
    memory_model_roles(b.s, &roles);
    assert_true(memory_host_bytes(b.s, &roles) > 13e9 && memory_host_bytes(a.s, &roles) < 1);
    step_free(&a);
    step_free(&b);
}

/*
 * offload 'params_only' (DeepSpeed ZeRO-3 offload_param without offload_optimizer, Axolotl
 * zero3_bf16_cpuoffload_params.json): only the 16-bit partitions live on the host; master,
 * gradients and optimizer states stay on the GPU, the step runs there (no CPU step), each unit
 * comes in over PCIe before its gather and the updated partition goes back after the step.
 */
static void test_offload_params_only(void **state)
{
    struct step none, only, all;

    (void)state;
    step_of(&none, ZERO3, NULL);
    step_of(&only, ZERO3, (const char *[]){ "training.offload=params_only", NULL });
    step_of(&all, ZERO3, (const char *[]){ "training.offload=params", NULL });
    assert_true(at_peak(&only, MC_PARAMS) < 1e7 &&
                at_peak(&none, MC_PARAMS) > 1e9); /* persistent ones stay */
    assert_true(same(at_peak(&only, MC_MASTER), at_peak(&none, MC_MASTER)));
    assert_true(same(at_peak(&only, MC_OPTIM), at_peak(&none, MC_OPTIM)));
    assert_true(at_peak(&all, MC_OPTIM) < 1);
    assert_true(copies(&only, true) > 0 && copies(&only, false) == 1);
    assert_true(copies(&none, true) == 0);
    assert_true(busy_s(&only, TC_OPTIMIZER) > 0); /* on the GPU */
    assert_true(busy_s(&only, TC_OFFLOAD) > 0);
    assert_true(only.r.step_s > none.r.step_s);
    step_free(&none);
    step_free(&only);
    step_free(&all);
}

/*
 * Activation offloading: the layers' saved tensors go to the host after their forward and come
 * back for their backward. Without recompute (Axolotl's adapter case) everything a layer saves
 * moves; with full recompute (its full fine-tuning case) only the checkpointed inputs. The peak
 * activations fall to about two layers; synchronous copies cost more time than streams, both
 * more than none.
 */
static void test_activation_offload(void **state)
{
    const char *modes[3] = { "training.activation_offload=none",
                             "training.activation_offload=streams",
                             "training.activation_offload=sync" };
    struct step st[3], rc;
    struct shard sh;
    struct layer_cost lc;

    (void)state;
    for (int i = 0; i < 3; i++)
        step_of(&st[i], FT7B, (const char *[]){ modes[i], NULL });
    workload_shard(st[0].s, &sh);
    workload_layer(st[0].s, &sh, false, &lc);
    assert_true(at_peak(&st[0], MC_ACT) > 20 * lc.act[RC_NONE]);
    assert_true(at_peak(&st[1], MC_ACT) <= 2 * lc.act[RC_NONE] + 1e9);
    assert_true(at_peak(&st[2], MC_ACT) <= 2 * lc.act[RC_NONE] + 1e9);
    assert_true(st[0].r.step_s < st[1].r.step_s && st[1].r.step_s < st[2].r.step_s);
    assert_true(busy_s(&st[0], TC_OFFLOAD) <= 0 && busy_s(&st[1], TC_OFFLOAD) > 0);
    assert_int_equal(copies(&st[1], true), copies(&st[1], false));
    step_of(
        &rc, FT7B,
        (const char *[]){ "training.recompute=full", "training.activation_offload=streams", NULL });
    /* the checkpointed inputs alone: 1/20th of the bytes, far less PCIe time */
    assert_true(busy_s(&rc, TC_OFFLOAD) < busy_s(&st[1], TC_OFFLOAD) / 10);
    for (int i = 0; i < 3; i++)
        step_free(&st[i]);
    step_free(&rc);
}

/*
 * PEFT modules_to_save [embed_tokens, lm_head] (Axolotl llama-3/lora-8b.yml): a trained copy
 * of each beside the frozen original, V x h trainable parameters each with gradients, master
 * and optimizer states; the embedding's backward scatters its gradient and the head computes
 * its weight gradient again.
 */
static void test_lora_modules_to_save(void **state)
{
    struct step a, b;
    double vh = 32000.0 * 4096;
    struct shard sh;
    struct edge_cost e0, e1;

    (void)state;
    step_of(&a, QLORA, NULL);
    step_of(&b, QLORA, (const char *[]){ "training.lora.modules_to_save=[embed, head]", NULL });
    assert_true(fabs(workload_params_trainable(b.s) - workload_params_trainable(a.s) - 2 * vh) <
                0.5);
    assert_true(fabs(at_peak(&b, MC_MASTER) - at_peak(&a, MC_MASTER) - 4 * 2 * vh) < 1e6);
    workload_shard(a.s, &sh);
    workload_embedding(a.s, &sh, &e0);
    workload_embedding(b.s, &sh, &e1);
    assert_true(e0.bwd <= 0 && e1.bwd > 0);
    workload_head(a.s, &sh, &e0);
    workload_head(b.s, &sh, &e1);
    assert_true(e1.bwd > e0.bwd && e1.act > e0.act);
    assert_true(b.r.step_s > a.r.step_s);
    step_free(&a);
    step_free(&b);
}

/*
 * training.trainable_fraction (Axolotl unfrozen_parameters) on a full fine-tune: the frozen
 * share keeps its 16-bit weights only (no gradient, master copy or optimizer state), and the
 * weight-gradient GEMMs shrink by it while the forward and input gradients stay.
 */
static void test_trainable_fraction(void **state)
{
    struct step a, b;
    struct shard sh;
    struct layer_cost *la = test_malloc(sizeof(*la)), *lb = test_malloc(sizeof(*lb));

    (void)state;
    step_of(&a, FT7B, NULL);
    step_of(&b, FT7B, (const char *[]){ "training.trainable_fraction=0.25", NULL });
    assert_true(fabs(workload_params_trainable(b.s) - 0.25 * workload_params_trainable(a.s)) < 1);
    assert_true(same(at_peak(&b, MC_PARAMS), at_peak(&a, MC_PARAMS)));
    assert_true(fabs(at_peak(&b, MC_MASTER) - 0.25 * at_peak(&a, MC_MASTER)) < 1e3);
    assert_true(fabs(at_peak(&b, MC_OPTIM) - 0.25 * at_peak(&a, MC_OPTIM)) < 1e3);
    assert_true(at_peak(&a, MC_MASTER) > 0);
    workload_shard(a.s, &sh);
    workload_layer(a.s, &sh, false, la);
    workload_layer(b.s, &sh, false, lb);
    for (int p = 0; p < PART_COUNT; p++) {
        assert_true(lb->fwd[p] == la->fwd[p] && lb->dgrad[p] == la->dgrad[p]);
        assert_true(lb->wgrad[p] <= la->wgrad[p]);
    }
    assert_true(lb->wgrad[PART_MLP] < 0.3 * la->wgrad[PART_MLP] &&
                lb->wgrad[PART_MLP] > 0.2 * la->wgrad[PART_MLP]);
    assert_true(b.r.step_s < a.r.step_s);
    assert_true(workload_model_flops(b.s) < workload_model_flops(a.s));
    test_free(la);
    test_free(lb);
    step_free(&a);
    step_free(&b);
    /* adapters freeze the base already: refused */
    {
        struct cfg_override o;
        char *msg = NULL;
        size_t len = 0;
        FILE *d = open_memstream(&msg, &len);

        assert_int_equal(cfg_override_init(&o, "training.trainable_fraction=0.5", d), 0);
        assert_null(cfg_load_scenario(QLORA, &o, 1, d));
        cfg_override_release(&o);
        fclose(d);
        assert_non_null(strstr(msg, "trainable_fraction needs finetune 'full'"));
        free(msg);
    }
}

/*
 * LoRA on an LLM.int8 base (Axolotl load_in_8bit): 1 B per projection weight plus an fp32
 * scale per output row; the base GEMMs' forward runs at the int8 peak after a quantization pass
 * over their inputs, their backward dequantizes the weight to 16 bits; bitsandbytes keeps each
 * base projection's input (ctx.tensors) as QLoRA's does.
 */
static void test_lora_int8_base(void **state)
{
    struct step q, i8, l;
    struct shard sh;
    struct layer_cost lq, li;

    (void)state;
    step_of(&q, QLORA, NULL);
    step_of(&i8, QLORA, (const char *[]){ "training.finetune=lora_int8", NULL });
    step_of(&l, QLORA, (const char *[]){ "training.finetune=lora", NULL });
    assert_true(fabs(memory_frozen_bytes(i8.s, true) - (1 + 4.0 / 4096)) < 1e-12);
    assert_true(at_peak(&q, MC_PARAMS) < at_peak(&i8, MC_PARAMS) &&
                at_peak(&i8, MC_PARAMS) < at_peak(&l, MC_PARAMS));
    assert_true(at_peak(&i8, MC_WORKSPACE) > 0);
    workload_shard(q.s, &sh);
    workload_layer(q.s, &sh, false, &lq);
    workload_layer(i8.s, &sh, false, &li);
    assert_true(fabs(li.act[RC_NONE] - lq.act[RC_NONE]) < 1); /* both keep the base inputs */
    for (int k = 0; k < li.nops; k++)
        if (strcmp(li.ops[k].name, "qkv_proj") == 0)
            assert_true(li.ops[k].t_fwd < li.ops[k].t_dgrad); /* int8 forward, 16-bit dgrad */
    step_free(&q);
    step_free(&i8);
    step_free(&l);
}

/*
 * DoRA (PEFT use_dora): a trained magnitude per output row of each adapted projection, two
 * more saved tensors of the projection's output, the weight norm rebuilt every forward (more
 * time, a weight-sized workspace).
 */
static void test_lora_dora(void **state)
{
    struct step a, b;
    struct shard sh;
    struct layer_cost la, lb;
    double magnitudes;

    (void)state;
    step_of(&a, QLORA, NULL);
    step_of(&b, QLORA, (const char *[]){ "training.lora.dora=true", NULL });
    /* qlora_7b_4090 adapts q, k, v, o, gate, up, down of Llama 2 7B (MHA, f 11008) */
    magnitudes = 32.0 * (4 * 4096 + 2 * 11008 + 4096);
    assert_true(fabs(workload_params_trainable(b.s) - workload_params_trainable(a.s) - magnitudes) <
                0.5);
    workload_shard(a.s, &sh);
    workload_layer(a.s, &sh, false, &la);
    workload_layer(b.s, &sh, false, &lb);
    assert_true(fabs(lb.act[RC_NONE] - la.act[RC_NONE] -
                     2 * 2 * 2048.0 * (4 * 4096 + 2 * 11008 + 4096)) < 1);
    assert_true(memory_dora_bytes(b.s) >= 4.0 * 11008 * 11008 && memory_dora_bytes(a.s) <= 0);
    assert_true(at_peak(&b, MC_WORKSPACE) > at_peak(&a, MC_WORKSPACE));
    assert_true(b.r.step_s > a.r.step_s);
    step_free(&a);
    step_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paged_optimizer_without_qlora),
        cmocka_unit_test(test_offload_params_only),
        cmocka_unit_test(test_activation_offload),
        cmocka_unit_test(test_lora_modules_to_save),
        cmocka_unit_test(test_trainable_fraction),
        cmocka_unit_test(test_lora_int8_base),
        cmocka_unit_test(test_lora_dora),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
