/*
 * memory_whatif.c - the what-if table of `simtrain memory` (memory_whatif.h).
 */
#include "whatif/memory_whatif.h"

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "report/memory_report.h"
#include "report/report.h"

#define MAX_SETS 6

struct variant {
    const char *label;
    const char *set[MAX_SETS][2]; /* key, value pairs; NULL-terminated */
};

/*
 * The techniques, alone then combined. Offload needs a ZeRO stage (DeepSpeed
 * ZeRO-Offload): zero2 is the usual pairing, and on one GPU it shards nothing.
 */
static const struct variant variants[] = {
    { "full activation checkpointing", { { "training.recompute", "full" } } },
    { "checkpoint half of the layers",
      { { "training.recompute", "full" }, { "training.recompute_layers", "HALF_LAYERS" } } },
    { "selective recompute", { { "training.recompute", "selective" } } },
    { "gradient accumulation: micro-batch 1", { { "training.micro_batch", "1" } } },
    { "8-bit Adam (bitsandbytes)", { { "training.optimizer", "adam8bit" } } },
    { "pure bf16 (no fp32 master, bf16 grads)",
      { { "training.master_weights", "false" }, { "training.grad_dtype", "bf16" } } },
    { "CPU offload of optimizer (ZeRO-2 Offload)",
      { { "parallelism.sharding", "zero2" },
        { "parallelism.framework", "deepspeed" },
        { "training.offload", "optimizer" } } },
    { "ZeRO-1 (shard optimizer states)",
      { { "parallelism.sharding", "zero1" }, { "parallelism.framework", "deepspeed" } } },
    { "ZeRO-2 (+ gradients)",
      { { "parallelism.sharding", "zero2" }, { "parallelism.framework", "deepspeed" } } },
    { "ZeRO-3 (+ parameters)",
      { { "parallelism.sharding", "zero3" }, { "parallelism.framework", "deepspeed" } } },
    { "full fine-tuning (no adapters)", { { "training.finetune", "full" } } },
    { "LoRA", { { "training.finetune", "lora" } } },
    { "QLoRA (NF4 base)", { { "training.finetune", "qlora" } } },
    { "8-bit Adam + full checkpointing",
      { { "training.optimizer", "adam8bit" }, { "training.recompute", "full" } } },
    { "pure bf16 + 8-bit Adam + full checkpointing",
      { { "training.master_weights", "false" },
        { "training.grad_dtype", "bf16" },
        { "training.optimizer", "adam8bit" },
        { "training.recompute", "full" } } },
    { "CPU offload + full checkpointing",
      { { "parallelism.sharding", "zero2" },
        { "parallelism.framework", "deepspeed" },
        { "training.offload", "optimizer" },
        { "training.recompute", "full" } } },
    { "ZeRO-3 + full checkpointing",
      { { "parallelism.sharding", "zero3" },
        { "parallelism.framework", "deepspeed" },
        { "training.recompute", "full" } } },
    { "LoRA + full checkpointing",
      { { "training.finetune", "lora" }, { "training.recompute", "full" } } },
    { "QLoRA + full checkpointing",
      { { "training.finetune", "qlora" }, { "training.recompute", "full" } } },
    { "QLoRA + full checkpointing + micro-batch 1",
      { { "training.finetune", "qlora" },
        { "training.recompute", "full" },
        { "training.micro_batch", "1" } } },
};

/* Apply a variant to a copy of the scenario; 0, or -1 with reason. */
static int apply(const struct scenario *base, const struct variant *v, struct scenario *out,
                 char *reason, size_t reason_len)
{
    struct cfg_error err;
    int i;

    *out = *base;
    for (i = 0; i < MAX_SETS && v->set[i][0]; i++) {
        const char *value = v->set[i][1];
        char half[16];
        if (strcmp(value, "HALF_LAYERS") == 0) { /* half of each model chunk's layers */
            int n = base->model.layers / (base->par.pp * base->par.vpp) / 2;
            snprintf(half, sizeof(half), "%d", n > 0 ? n : 1);
            value = half;
        }
        if (cfg_set(out, v->set[i][0], value, &err) != 0) {
            snprintf(reason, reason_len, "%s", err.msg);
            return -1;
        }
    }
    if (scenario_finalize(out, &err) != 0) {
        snprintf(reason, reason_len, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* Do two scenarios differ in a setting the what-if table varies? */
static bool changes(const struct scenario *base, const struct scenario *v)
{
    const struct training *a = &base->train, *b = &v->train;

    return a->recompute != b->recompute || a->recompute_layers != b->recompute_layers ||
           a->micro_batch != b->micro_batch || a->optimizer != b->optimizer ||
           a->master_weights != b->master_weights || a->grad_dtype != b->grad_dtype ||
           a->offload != b->offload || a->finetune != b->finetune ||
           base->par.sharding != v->par.sharding;
}

/* Rows that cannot apply to this scenario: ZeRO stages on one data-parallel rank, ... */
static bool applies(const struct scenario *base, const struct scenario *v)
{
    enum sharding bs = base->par.sharding, vs = v->par.sharding;

    if (!changes(base, v))
        return false;
    if (vs != bs && v->train.offload == OFFLOAD_NONE && base->par.dp * base->par.cp == 1)
        return false; /* sharding over one rank divides nothing */
    if (vs != bs && (bs == SHARD_ZERO3 || bs == SHARD_FSDP || bs == SHARD_HSDP))
        return false; /* already sharded further than the row */
    if (base->train.attention == ATTN_FLASH && v->train.recompute == RC_SELECTIVE &&
        base->train.recompute == RC_NONE)
        return false; /* FlashAttention already recomputes the attention core: no change */
    return true;
}

static void evaluate(const struct scenario *s, struct mw_outcome *o)
{
    struct sim_opts opts = { 0 };
    struct run r;

    memset(o, 0, sizeof(*o));
    if (run_scenario(s, &opts, &r, o->reason, sizeof(o->reason)) != 0)
        return;
    o->ok = true;
    o->peak_bytes = r.peak_bytes;
    o->step_s = r.step_s;
    o->host_short = !memory_report_host_fits(s);
    o->fits = r.fits && !o->host_short;
    run_release(&r);
}

void memory_whatif_run(const struct scenario *s, const struct run *base, struct memory_whatif *out)
{
    struct scenario *seen = xcalloc(ARRAY_LEN(variants), sizeof(*seen));
    size_t nseen = 0;

    memset(out, 0, sizeof(*out));
    out->base.ok = true;
    out->base.peak_bytes = base->peak_bytes;
    out->base.step_s = base->step_s;
    out->base.host_short = !memory_report_host_fits(s);
    out->base.fits = base->fits && !out->base.host_short;
    out->capacity_bytes = base->capacity_bytes;
    out->best = -1;
    out->flash_selective = s->train.attention == ATTN_FLASH && s->train.recompute == RC_NONE;
    out->rows = xcalloc(ARRAY_LEN(variants), sizeof(*out->rows));
    for (size_t i = 0; i < ARRAY_LEN(variants); i++) {
        struct scenario v;
        struct mw_row *row;
        char reason[400];
        size_t j;
        if (apply(s, &variants[i], &v, reason, sizeof(reason)) != 0 || !applies(s, &v))
            continue;
        for (j = 0; j < nseen && changes(&seen[j], &v); j++)
            ;
        if (j < nseen)
            continue; /* the same configuration as an earlier row */
        seen[nseen++] = v;
        row = &out->rows[out->nrows];
        row->label = variants[i].label;
        evaluate(&v, &row->o);
        if (row->o.ok && row->o.fits && !base->fits &&
            (out->best < 0 || row->o.step_s < out->rows[out->best].o.step_s))
            out->best = out->nrows;
        out->nrows++;
    }
    free(seen);
}

void memory_whatif_release(struct memory_whatif *w)
{
    free(w->rows);
    w->rows = NULL;
    w->nrows = 0;
}

static void print_row(FILE *f, const char *label, const struct mw_outcome *o, double base_step,
                      double cap)
{
    char peak[32], t[32];

    if (!o->ok) {
        fprintf(f, "  %-46s %9s  %-5s %10s   (%s)\n", label, "-", "-", "-", o->reason);
        return;
    }
    memory_report_fmt_bytes(o->peak_bytes, peak, sizeof(peak));
    report_fmt_time(o->step_s, t, sizeof(t));
    fprintf(f, "  %-46s %9s  %-5s %10s   x%.2f", label, peak, o->fits ? "yes" : "no", t,
            base_step > 0 ? o->step_s / base_step : 0);
    if (o->fits)
        fprintf(f, "   %.0f %% free\n", 100 * (cap - o->peak_bytes) / cap);
    else if (o->host_short)
        fprintf(f, "   host RAM short\n");
    else
        fputc('\n', f);
}

void memory_whatif_print(FILE *f, const struct scenario *s, const struct memory_whatif *w)
{
    double base_step = w->base.step_s, cap = w->capacity_bytes;

    fprintf(f, "\nWhat if (each row re-simulates one step; %s per GPU)\n", s->hw.gpu.model);
    fprintf(f, "  %-46s %9s  %-5s %10s   %s\n", "change", "peak", "fits", "step time", "vs now");
    print_row(f, "as configured", &w->base, base_step, cap);
    for (int i = 0; i < w->nrows; i++)
        print_row(f, w->rows[i].label, &w->rows[i].o, base_step, cap);
    if (w->best >= 0) {
        char t[32];
        report_fmt_time(w->rows[w->best].o.step_s, t, sizeof(t));
        fprintf(f, "\nFastest change that fits: %s (%s per step)\n", w->rows[w->best].label, t);
    }
    if (w->flash_selective)
        fprintf(f, "(Selective recompute changes nothing here: FlashAttention already recomputes "
                   "the attention core.)\n");
    if (w->best < 0 && !w->base.fits) {
        fprintf(f, "\nNone of these fits alone: add GPUs with sharding (zero3/fsdp), tensor or\n"
                   "pipeline parallelism, or a shorter sequence.\n");
    }
}
