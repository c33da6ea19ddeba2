/*
 * states.c - the model states a strategy places in a program: the parameters of a build's
 * units by role and the time-zero memory marks of the model states, QLoRA's buffers and a
 * strategy's static allocations. The bytes come from the closed-form memory model
 * (model/memory.h); this file only writes them into the builder (strategy.h, "Model states").
 */
#include <math.h>
#include <string.h>

#include "model/memory.h"
#include "strategy/strategy.h"

/* ---- parameter roles of a build ------------------------------------------------------- */

void states_unit_roles(const struct build *b, int unit, struct param_roles *out)
{
    const struct unit *u = &b->units[unit];

    if (u->kind == UNIT_LAYER) {
        const struct layer_cost *lc = strategy_unit_cost(b, u);
        memory_roles(b->s, u->params, lc->linear_params[PART_ATTN] + lc->linear_params[PART_MLP],
                     lc->lora_params[PART_ATTN] + lc->lora_params[PART_MLP], u->expert_params, out);
    } else {
        /* Embedding and head: never quantized, never adapted (QLoRA keeps them 16-bit); a
         * module PEFT trains whole (modules_to_save) adds its trained copy, vocab-sharded. */
        memory_roles(b->s, u->params, 0, 0, 0, out);
        out->trainable += workload_saved_module_params(b->s, u->kind == UNIT_EMBED) / b->s->par.tp;
    }
}

double states_unit_trainable(const struct build *b, int unit)
{
    struct param_roles r;

    states_unit_roles(b, unit, &r);
    return r.trainable;
}

void states_build_roles(const struct build *b, struct param_roles *out)
{
    struct param_roles r;
    int i;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < b->nunits; i++) {
        states_unit_roles(b, i, &r);
        memory_add_roles(out, &r, 1);
    }
}

/* ---- emission ----------------------------------------------------------------------------- */

/* A mark allocating `bytes` of `cat` when it runs; -1 (no mark) for nothing to allocate. */
static int emit_mark(struct build *b, int cat, double bytes, const char *label)
{
    struct prog *p = b->p;
    int t;

    if (bytes <= 0)
        return -1;
    t = prog_mark(p, ST_COMPUTE, prog_label(p, label, 0));
    task_mem_start(&p->tasks[t], cat, bytes_i64(bytes));
    return t;
}

void states_emit_static(struct build *b, int cat, double bytes, const char *label)
{
    emit_mark(b, cat, bytes, label);
}

static void emit_categories(struct build *b, const double bytes[MC_COUNT])
{
    const char *params = "parameters";

    if (b->s->train.finetune == FT_LORA)
        params = "parameters (frozen base + LoRA adapters)";
    else if (b->s->train.finetune == FT_QLORA)
        params = "parameters (NF4 base + LoRA adapters)";
    else if (b->s->train.finetune == FT_LORA_INT8)
        params = "parameters (int8 base + LoRA adapters)";
    states_emit_static(b, MC_PARAMS, bytes[MC_PARAMS], params);
    states_emit_static(b, MC_MASTER, bytes[MC_MASTER], "fp32 master weights");
    states_emit_static(b, MC_GRADS, bytes[MC_GRADS], "gradients");
    states_emit_static(b, MC_OPTIM, bytes[MC_OPTIM], "optimizer states");
}

/*
 * Before DeepSpeed partitions a QLoRA model the GPU holds all of it: a mark
 * ahead of the model states that allocates the whole stored model and frees
 * it when it ends (the states then take its place).
 */
static void emit_load_peak(struct build *b, double load)
{
    int t = emit_mark(b, MC_PARAMS, load, "QLoRA model loaded whole before ZeRO-3 partitions it");

    if (t >= 0)
        task_mem_end(&b->p->tasks[t], MC_PARAMS, -bytes_i64(load));
}

void states_emit_model_states(struct build *b, const struct shard_factors *f)
{
    struct param_roles r;
    struct shard_factors d;
    double bytes[MC_COUNT], layers = 0, retained;
    int i;

    memory_on_device(b->s, f, &d);
    states_build_roles(b, &r);
    emit_load_peak(b, memory_qlora_load_bytes(b->s, &r));
    memory_model_states(b->s, &r, &d, bytes);
    emit_categories(b, bytes);
    if (!isinf(d.params))
        states_emit_static(b, MC_WORKSPACE, memory_dequant_bytes(b->s),
                           b->s->train.finetune == FT_LORA_INT8
                               ? "LLM.int8 dequantized weight (16-bit copy for the input gradient)"
                               : "QLoRA dequantized weight (bf16 copy of one NF4 projection)");
    states_emit_static(b, MC_WORKSPACE, memory_dora_bytes(b->s),
                       "DoRA weight norm (eye, BA and W + BA of the widest adapted projection)");
    for (i = 0; i < b->nunits; i++)
        layers += b->units[i].kind == UNIT_LAYER;
    retained = memory_qlora_retained_bytes(b->s, layers);
    i = emit_mark(b, MC_ACT, retained,
                  "previous micro-batch's NF4 GEMM inputs (bitsandbytes ctx.tensors)");
    if (i >= 0) {
        /* The inputs of QKV and out-proj (attention), of gate-up and down (MLP), in the
         * proportion memory_qlora_retained_bytes() counts them. */
        const struct model *m = &b->s->model;
        double h = m->hidden, tp = b->s->par.tp, v[MM_COUNT] = { 0 };
        double attn = h + m->heads * m->head_dim / tp, mlp = h + m->ffn_hidden / tp;
        int64_t mods[MM_COUNT];
        v[MM_ATTN] = retained * attn / (attn + mlp);
        v[MM_MLP] = retained * mlp / (attn + mlp);
        strategy_modules_whole(v, retained, mods);
        prog_mem_modules(b->p, i, false, mods, 1, 0);
    }
}
