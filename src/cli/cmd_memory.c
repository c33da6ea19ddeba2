/*
 * cmd_memory.c - `simtrain memory SCENARIO.yaml`: will it fit, and what would
 * make it fit.
 *
 * Prints the per-GPU memory at the simulated peak by category (the engine's
 * tracker: every byte attributed, the categories sum to the peak), the verdict
 * against the GPU's capacity with the headroom, and a what-if table: each
 * memory technique alone (activation checkpointing, gradient accumulation,
 * 8-bit Adam, pure bf16, CPU offload, ZeRO stages, LoRA, QLoRA) and in useful
 * combinations, each re-simulated for its peak memory and step time.
 *
 * Exit status: 0 fits, 3 does not fit (as the main command), 1 bad input,
 * 2 usage error.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "config/config.h"
#include "model/memory.h"
#include "report/report.h"
#include "run/run.h"
#include "model/workload.h"

#define GIB      (1024.0 * 1024.0 * 1024.0)
#define MAX_SETS 6

/* ---- formatting ----------------------------------------------------------------- */

static void fmt_count(double v, char *buf, size_t n)
{
    if (v >= 1e9)
        snprintf(buf, n, "%.2f B", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, n, "%.1f M", v / 1e6);
    else
        snprintf(buf, n, "%.0f", v);
}

static void fmt_mem(double bytes, char *buf, size_t n)
{
    if (bytes >= 0.1 * GIB || bytes <= 0)
        snprintf(buf, n, "%.1f GiB", bytes / GIB);
    else
        snprintf(buf, n, "%.0f MiB", bytes / (1024.0 * 1024.0));
}

static const char *shard_note(double factor, char *buf, size_t n)
{
    if (isinf(factor))
        snprintf(buf, n, "; held in host memory");
    else if (factor > 1)
        snprintf(buf, n, ", 1/%.0f shard", factor);
    else
        buf[0] = '\0';
    return buf;
}

/* ---- the breakdown at the peak ------------------------------------------------------ */

static const char *optimizer_text(const struct scenario *s)
{
    switch (s->train.optimizer) {
    case OPT_ADAM8BIT:
        return "8-bit Adam: 2 x 1 B + fp32 absmax per 256 = 2.03 B/param";
    case OPT_SGD:
        return s->train.master_weights ? "SGD momentum, fp32: 4 B/param"
                                       : "SGD momentum in the parameter dtype";
    case OPT_ADAFACTOR:
        return "Adafactor factored 2nd moment: ~0.01 B/param (estimate)";
    case OPT_ADAMW:
    default:
        return s->train.master_weights ? "AdamW m and v, fp32: 8 B/param"
                                       : "AdamW m and v in the parameter dtype";
    }
}

/* One line explaining how a category's bytes are counted. */
static void explain(const struct scenario *s, int cat, const struct layer_cost *lc, char *buf,
                    size_t n)
{
    struct shard_factors f;
    struct state_bytes sb;
    char sh[32];

    memory_shard_factors(s, &f);
    memory_state_bytes(s, &sb);
    switch (cat) {
    case MC_PARAMS:
        if (s->train.finetune == FT_QLORA)
            snprintf(buf, n, "NF4 base %.3f B/param%s, 16-bit embeddings, adapters%s",
                     memory_frozen_bytes(s, true),
                     s->train.lora.double_quant ? " (double quant)" : "",
                     shard_note(f.params, sh, sizeof(sh)));
        else if (s->train.finetune == FT_LORA)
            snprintf(buf, n, "frozen base %.0f B/param + LoRA adapters%s", sb.params,
                     shard_note(f.params, sh, sizeof(sh)));
        else
            snprintf(buf, n, "%s, %.0f B/param%s", dtype_name(s->train.precision), sb.params,
                     shard_note(f.params, sh, sizeof(sh)));
        break;
    case MC_MASTER:
        snprintf(buf, n, "fp32 copy of the trainable weights, 4 B/param%s",
                 shard_note(f.master, sh, sizeof(sh)));
        break;
    case MC_GRADS:
        snprintf(buf, n, "%s per trainable parameter, %.0f B%s", dtype_name(s->train.grad_dtype),
                 sb.grads, shard_note(f.grads, sh, sizeof(sh)));
        break;
    case MC_OPTIM:
        snprintf(buf, n, "%s%s", optimizer_text(s), shard_note(f.optim, sh, sizeof(sh)));
        break;
    case MC_ACT:
        snprintf(
            buf, n, "saved for backward, %.0f MiB per layer per micro-batch (recompute %s)%s",
            lc->act[s->train.recompute] / (1024.0 * 1024.0), recompute_name(s->train.recompute),
            memory_qlora_retained_bytes(s, 1) > 0 ? " + last micro-batch's NF4 GEMM inputs" : "");
        break;
    case MC_LOGITS:
        snprintf(buf, n, "fp32 logits, tokens x vocab x 4 B (+ 16-bit copy in forward)");
        break;
    case MC_GATHERED:
        snprintf(buf, n, "unsharded parameters in use (ZeRO-3 / FSDP gathers)");
        break;
    case MC_COMM:
        snprintf(buf, n, "gradient buckets and collective staging");
        break;
    case MC_WORKSPACE:
        if (s->train.finetune == FT_QLORA)
            snprintf(buf, n, "bf16 copy of one NF4 weight, dequantized per GEMM");
        else
            snprintf(buf, n, "transient kernel buffers");
        break;
    case MC_OVERHEAD:
        snprintf(buf, n, "CUDA context, NCCL (estimate)");
        break;
    case MC_RESERVE:
        snprintf(buf, n,
                 "caching allocator, %.0f %% of its reserve for the step's tensors free "
                 "(estimate)",
                 100 * s->train.fragmentation);
        break;
    default:
        buf[0] = '\0';
    }
}

static void print_header(FILE *f, const struct scenario *s)
{
    const struct model *m = &s->model;
    char total[32], train[32];
    int micro = s->train.global_batch / (s->train.micro_batch * s->par.dp);

    fmt_count(workload_params_total(m), total, sizeof(total));
    fmt_count(workload_params_trainable(s), train, sizeof(train));
    fprintf(f, "  model      %s, %s parameters, %s trainable", m->name, total, train);
    if (s->train.finetune != FT_FULL)
        fprintf(f, " (%s rank %d)", finetune_name(s->train.finetune), s->train.lora.rank);
    fprintf(f, "\n  hardware   %d x %s, %.1f GiB each\n", s->gpus, s->hw.gpu.model,
            s->hw.gpu.mem_bytes / GIB);
    fprintf(f, "  training   %s%s, %s, seq %d x micro-batch %d, %d micro-batch%s per step\n",
            dtype_name(s->train.precision), s->train.master_weights ? " + fp32 master" : "",
            optimizer_name(s->train.optimizer), s->train.seq_len, s->train.micro_batch, micro,
            micro == 1 ? "" : "es");
    fprintf(f, "             recompute %s, %s attention, offload %s\n",
            recompute_name(s->train.recompute),
            s->train.attention == ATTN_FLASH ? "flash" : "standard",
            s->train.offload == OFFLOAD_NONE        ? "none"
            : s->train.offload == OFFLOAD_OPTIMIZER ? "optimizer"
                                                    : "params");
    fprintf(f, "  layout     dp %d x tp %d x pp %d, sharding %s\n", s->par.dp, s->par.tp, s->par.pp,
            sharding_name(s->par.sharding));
}

static double host_bytes_per_gpu(const struct scenario *s)
{
    struct param_roles r;

    memory_model_roles(s, &r);
    return memory_host_bytes(s, &r) / ((double)s->par.tp * s->par.pp);
}

static void print_breakdown(FILE *f, const struct run *r)
{
    const struct scenario *s = r->s;
    const struct rank_result *rr = &r->sim.ranks[r->peak_idx];
    struct shard sh;
    struct layer_cost lc;
    struct param_roles roles;
    double sum = 0, host;
    char t[32], buf[160], mem[32];
    bool at_load;
    int c;

    memory_model_roles(s, &roles);
    /* A QLoRA model under ZeRO-3 is whole on every GPU before the engine partitions it. */
    at_load = rr->peak_t == 0 && memory_qlora_load_bytes(s, &roles) > 0;
    workload_shard(s, &sh);
    workload_layer(s, &sh, false, &lc);
    report_fmt_time((double)rr->peak_t / NS_PER_S, t, sizeof(t));
    fprintf(f, "\nMemory per GPU at the peak (stage %d, %s into the step)\n", rr->coords[DIM_PP],
            t);
    fprintf(f, "  %-20s %10s %6s   %s\n", "category", "bytes", "share", "how it is counted");
    for (c = 0; c < MC_COUNT; c++) {
        double b = (double)rr->at_peak[c];
        if (rr->at_peak[c] == 0)
            continue;
        sum += b;
        fmt_mem(b, mem, sizeof(mem));
        explain(s, c, &lc, buf, sizeof(buf));
        if (c == MC_PARAMS && at_load)
            snprintf(buf, sizeof(buf), "the whole NF4 model at load, before ZeRO-3 partitions it");
        fprintf(f, "  %-20s %10s %5.1f%%   %s\n", mcat_name(c), mem, 100 * b / r->peak_bytes, buf);
    }
    fmt_mem(sum, mem, sizeof(mem));
    fprintf(f, "  %-20s %10s\n", "total = peak", mem);
    fmt_mem(r->capacity_bytes, mem, sizeof(mem));
    fmt_mem(fabs(r->capacity_bytes - r->peak_bytes), buf, sizeof(buf));
    if (r->fits) {
        fprintf(f, "\nFits: %s free of %s (%.0f %% headroom)\n", buf, mem,
                100 * (r->capacity_bytes - r->peak_bytes) / r->capacity_bytes);
        report_reserve_note(f, r);
    } else
        fprintf(f, "\nDoes NOT fit: %s more than the %s of a %s\n", buf, mem, s->hw.gpu.model);
    host = host_bytes_per_gpu(s);
    if (host > 0) {
        char cap[32];
        fmt_mem(host, buf, sizeof(buf));
        fmt_mem(s->hw.host.mem_bytes / s->hw.gpus_per_node, cap, sizeof(cap));
        fprintf(f, "Host memory for offloaded states: about %s per GPU (%s of host RAM per GPU)\n",
                buf, cap);
    }
}

static void print_time(FILE *f, const struct run *r)
{
    static const struct {
        const char *name;
        int first, last; /* a range of enum time_cat */
    } parts[] = {
        { "compute", TC_FWD, TC_BWD },
        { "recompute", TC_RECOMPUTE, TC_RECOMPUTE },
        { "optimizer", TC_OPTIMIZER, TC_OPTIMIZER },
        { "exposed communication", TC_COMM_TP, TC_COMM_DP },
        { "offload", TC_OFFLOAD, TC_OFFLOAD },
        { "idle", TC_IDLE, TC_IDLE },
    };
    double bd[TC_COUNT];
    char t[32];
    size_t i;
    int c;

    report_breakdown(r, bd);
    report_fmt_time(r->step_s, t, sizeof(t));
    fprintf(f, "Step time %s:", t);
    for (i = 0; i < ARRAY_LEN(parts); i++) {
        double sum = 0;
        for (c = parts[i].first; c <= parts[i].last; c++)
            sum += bd[c];
        if (sum <= 0)
            continue;
        report_fmt_time(sum, t, sizeof(t));
        fprintf(f, "%s %s %s", i == 0 ? "" : ",", parts[i].name, t);
    }
    fputc('\n', f);
}

/* ---- model states by sharding stage ---------------------------------------------------- */

/*
 * Model-state bytes per GPU of `psi` parameters (the whole model when 0)
 * replicated and under each ZeRO stage over this scenario's data-parallel
 * group: ZeRO's Figure 1 for any model (ZERO §5; memory_shard_factors()).
 */
static void print_states(FILE *f, const struct scenario *s, double psi)
{
    static const enum sharding stages[] = { SHARD_NONE, SHARD_ZERO1, SHARD_ZERO2, SHARD_ZERO3 };
    static const char *const names[] = { "replicated (DDP)", "ZeRO-1 (P_os)", "ZeRO-2 (P_os+g)",
                                         "ZeRO-3 (P_os+g+p)" };
    struct param_roles r;
    char count[32];
    double split;
    size_t i;

    memory_model_roles(s, &r);
    if (psi > 0) {
        double scale = psi / (r.trainable + r.frozen + r.frozen_quant);
        r.trainable *= scale, r.frozen *= scale, r.frozen_quant *= scale, r.expert *= scale;
    }
    fmt_count(r.trainable + r.frozen + r.frozen_quant, count, sizeof(count));
    split = (double)s->par.tp * s->par.pp;
    r.trainable /= split, r.frozen /= split, r.frozen_quant /= split, r.expert /= split;
    fprintf(f, "\nModel states per GPU by ZeRO stage (%s parameters", count);
    if (split > 1)
        fprintf(f, " split %d ways by tp x pp", (int)split);
    fprintf(f, ", N_d = %d; ZeRO §5)\n", s->par.dp * s->par.cp);
    for (i = 0; i < ARRAY_LEN(stages); i++) {
        struct scenario v = *s;
        struct shard_factors fac;
        double out[MC_COUNT];
        v.par.sharding = stages[i];
        v.train.offload = OFFLOAD_NONE;
        memory_shard_factors(&v, &fac);
        memory_model_states(&v, &r, &fac, out);
        fprintf(f, "  %-20s %8.1f GB   (params %.1f, master %.1f, grads %.1f, optimizer %.1f)\n",
                names[i], (out[MC_PARAMS] + out[MC_MASTER] + out[MC_GRADS] + out[MC_OPTIM]) / 1e9,
                out[MC_PARAMS] / 1e9, out[MC_MASTER] / 1e9, out[MC_GRADS] / 1e9,
                out[MC_OPTIM] / 1e9);
    }
}

/* ---- what-if ---------------------------------------------------------------------------- */

struct variant {
    const char *label;
    const char *set[MAX_SETS][2]; /* key, value pairs; NULL-terminated */
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

struct outcome {
    bool ok;
    double peak, step_s;
    bool fits;
    char reason[400];
};

static void evaluate(const struct scenario *s, struct outcome *o)
{
    struct sim_opts opts = { 0 };
    struct run r;

    memset(o, 0, sizeof(*o));
    if (run_scenario(s, &opts, &r, o->reason, sizeof(o->reason)) != 0)
        return;
    o->ok = true;
    o->peak = r.peak_bytes;
    o->step_s = r.step_s;
    o->fits = r.fits;
    run_release(&r);
}

static void print_variant(FILE *f, const char *label, const struct outcome *o, double base_step,
                          double cap)
{
    char peak[32], t[32];

    if (!o->ok) {
        fprintf(f, "  %-46s %9s  %-5s %10s   (%s)\n", label, "-", "-", "-", o->reason);
        return;
    }
    fmt_mem(o->peak, peak, sizeof(peak));
    report_fmt_time(o->step_s, t, sizeof(t));
    fprintf(f, "  %-46s %9s  %-5s %10s   x%.2f", label, peak, o->fits ? "yes" : "no", t,
            base_step > 0 ? o->step_s / base_step : 0);
    if (o->fits)
        fprintf(f, "   %.0f %% free\n", 100 * (cap - o->peak) / cap);
    else
        fputc('\n', f);
}

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

static void print_whatif(FILE *f, const struct scenario *s, const struct run *base)
{
    double cap = base->capacity_bytes;
    const char *best = NULL;
    double best_step = 0;
    struct outcome o;
    struct scenario *seen = xcalloc(ARRAY_LEN(variants), sizeof(*seen));
    size_t i, j, nseen = 0;

    fprintf(f, "\nWhat if (each row re-simulates one step; %s per GPU)\n", s->hw.gpu.model);
    fprintf(f, "  %-46s %9s  %-5s %10s   %s\n", "change", "peak", "fits", "step time", "vs now");
    o.ok = true;
    o.peak = base->peak_bytes;
    o.step_s = base->step_s;
    o.fits = base->fits;
    print_variant(f, "as configured", &o, base->step_s, cap);
    for (i = 0; i < ARRAY_LEN(variants); i++) {
        struct scenario v;
        char reason[400];
        if (apply(s, &variants[i], &v, reason, sizeof(reason)) != 0 || !applies(s, &v))
            continue;
        for (j = 0; j < nseen && changes(&seen[j], &v); j++)
            ;
        if (j < nseen)
            continue; /* the same configuration as an earlier row */
        seen[nseen++] = v;
        evaluate(&v, &o);
        print_variant(f, variants[i].label, &o, base->step_s, cap);
        if (o.ok && o.fits && !base->fits && (!best || o.step_s < best_step)) {
            best = variants[i].label;
            best_step = o.step_s;
        }
    }
    if (best) {
        char t[32];
        report_fmt_time(best_step, t, sizeof(t));
        fprintf(f, "\nFastest change that fits: %s (%s per step)\n", best, t);
    }
    if (s->train.attention == ATTN_FLASH && s->train.recompute == RC_NONE)
        fprintf(f, "(Selective recompute changes nothing here: FlashAttention already recomputes "
                   "the attention core.)\n");
    if (!best && !base->fits) {
        fprintf(f, "\nNone of these fits alone: add GPUs with sharding (zero3/fsdp), tensor or\n"
                   "pipeline parallelism, or a shorter sequence.\n");
    }
    free(seen);
}

/* ---- command ---------------------------------------------------------------------------- */

struct memory_args {
    struct cli_list pos; /* the scenario */
    struct cli_overrides set;
    bool no_whatif;
    double params; /* parameter count of the ZeRO stage table; 0 = the model's */
};

#define OFF(field) offsetof(struct memory_args, field)

static const struct cli_opt memory_opts[] = {
    { "--set", 0, "KEY=VALUE", "override a key of the scenario (repeatable)", .kind = CLI_SET,
      .offset = OFF(set) },
    { "--no-what-if", 0, NULL, "leave out the what-if table (no re-simulations)", .kind = CLI_FLAG,
      .offset = OFF(no_whatif) },
    { "--params", 0, "N",
      "parameter count of the model-states-by-ZeRO-stage table (default: the model's)",
      .kind = CLI_DOUBLE, .offset = OFF(params), .min = 0, .max = 1e18, .min_open = true,
      .expect = "a positive count" },
};

const struct cli_command cmd_memory_spec = {
    .name = "memory",
    .synopsis = "simtrain memory SCENARIO.yaml [OPTION]...",
    .about = "Prints the memory per GPU at the simulated peak by category, whether it fits the\n"
             "GPU with its headroom, the model states under each ZeRO stage, and a what-if\n"
             "table: each memory technique (activation checkpointing, gradient accumulation,\n"
             "8-bit Adam, pure bf16, CPU offload, ZeRO stages, LoRA, QLoRA) alone and in useful\n"
             "combinations, each re-simulated for its peak memory and step time. Exit status 0\n"
             "when it fits, 3 when it does not.\n",
    .opts = memory_opts,
    .nopts = ARRAY_LEN(memory_opts),
    .positional = OFF(pos),
    .max_positional = 1,
    .positional_noun = "scenario",
};

int cmd_memory(int argc, char **argv)
{
    struct memory_args a = { 0 };
    enum cli_result pr = cli_parse(&cmd_memory_spec, argc, argv, &a);
    struct sim_opts opts = { 0 };
    struct scenario *s;
    struct run r;
    char reason[512];
    const char *path;
    int status;

    if (pr == CLI_OK && a.pos.n == 0)
        pr = cli_usage_error(&cmd_memory_spec, "no scenario given");
    if (pr != CLI_OK) {
        cli_release(&cmd_memory_spec, &a);
        return cli_exit_status(pr);
    }
    path = a.pos.items[0];
    s = cfg_load_scenario(path, a.set.ovr, a.set.n, stderr);
    if (!s) {
        cli_release(&cmd_memory_spec, &a);
        return 1;
    }
    if (run_scenario(s, &opts, &r, reason, sizeof(reason)) != 0) {
        fprintf(stderr, "%s: error: %s\n", path, reason);
        cfg_free(s);
        cli_release(&cmd_memory_spec, &a);
        return 1;
    }
    printf("simtrain memory: %s\n", s->path ? s->path : s->name);
    print_header(stdout, s);
    print_breakdown(stdout, &r);
    print_time(stdout, &r);
    if (a.params > 0 || s->par.dp * s->par.cp > 1)
        print_states(stdout, s, a.params);
    if (!a.no_whatif)
        print_whatif(stdout, s, &r);
    status = r.fits ? 0 : 3;
    run_release(&r);
    cfg_free(s);
    cli_release(&cmd_memory_spec, &a);
    return status;
}
