/*
 * memory_report.c - the report of `simtrain memory` (memory_report.h): the
 * run's setup, the per-GPU memory at the simulated peak by category with how
 * each is counted, the verdict against the GPU's capacity, the step time by
 * part, and the model states per GPU under each ZeRO stage.
 */
#include "report/memory_report.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model/memory.h"
#include "model/workload.h"
#include "report/report.h"
#include "strategy/strategy.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

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

void memory_report_fmt_bytes(double bytes, char *buf, size_t n)
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
    case OPT_TORCHAO_ADAMW8BIT:
        return "torchao 8-bit AdamW: 2 x 1 B + fp32 scale per 256 = 2.03 B/param";
    case OPT_TORCHAO_ADAMWFP8:
        return "torchao FP8 AdamW: 2 x 1 B e4m3 + fp32 scale per 256 = 2.03 B/param";
    case OPT_TORCHAO_ADAMW4BIT:
        return "torchao 4-bit AdamW: 2 x 0.5 B + fp32 scale per 128 = 1.06 B/param";
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
        else if (s->train.finetune == FT_LORA_INT8)
            snprintf(buf, n, "int8 base %.3f B/param, 16-bit embeddings, adapters%s",
                     memory_frozen_bytes(s, true), shard_note(f.params, sh, sizeof(sh)));
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
        else if (s->train.finetune == FT_LORA_INT8)
            snprintf(buf, n, "16-bit copy of one int8 weight, dequantized per backward GEMM");
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
            s->train.offload == OFFLOAD_NONE          ? "none"
            : s->train.offload == OFFLOAD_OPTIMIZER   ? "optimizer"
            : s->train.offload == OFFLOAD_PARAMS_ONLY ? "params_only"
                                                      : "params");
    if (s->train.activation_offload != ACT_OFFLOAD_NONE || s->train.paged_optimizer)
        fprintf(
            f, "             %s%s%s\n",
            s->train.activation_offload == ACT_OFFLOAD_STREAMS ? "activations offloaded (streams)"
            : s->train.activation_offload == ACT_OFFLOAD_SYNC  ? "activations offloaded (sync)"
                                                               : "",
            s->train.activation_offload != ACT_OFFLOAD_NONE && s->train.paged_optimizer ? ", " : "",
            s->train.paged_optimizer ? "paged optimizer" : "");
    fprintf(f, "  layout     dp %d x tp %d x pp %d, sharding %s\n", s->par.dp, s->par.tp, s->par.pp,
            sharding_name(s->par.sharding));
}

double memory_report_host_bytes(const struct scenario *s)
{
    struct param_roles r;

    memory_model_roles(s, &r);
    return memory_host_bytes(s, &r) / ((double)s->par.tp * s->par.pp);
}

bool memory_report_host_fits(const struct scenario *s)
{
    return memory_report_host_bytes(s) <= s->hw.host.mem_bytes / s->hw.gpus_per_node;
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
        memory_report_fmt_bytes(b, mem, sizeof(mem));
        explain(s, c, &lc, buf, sizeof(buf));
        if (c == MC_PARAMS && at_load)
            snprintf(buf, sizeof(buf), "the whole NF4 model at load, before ZeRO-3 partitions it");
        fprintf(f, "  %-20s %10s %5.1f%%   %s\n", mcat_name(c), mem, 100 * b / r->peak_bytes, buf);
    }
    memory_report_fmt_bytes(sum, mem, sizeof(mem));
    fprintf(f, "  %-20s %10s\n", "total = peak", mem);
    memory_report_fmt_bytes(r->capacity_bytes, mem, sizeof(mem));
    memory_report_fmt_bytes(fabs(r->capacity_bytes - r->peak_bytes), buf, sizeof(buf));
    if (r->fits) {
        fprintf(f, "\nFits: %s free of %s (%.0f %% headroom)\n", buf, mem,
                100 * (r->capacity_bytes - r->peak_bytes) / r->capacity_bytes);
        report_reserve_note(f, r);
    } else
        fprintf(f, "\nDoes NOT fit: %s more than the %s of a %s\n", buf, mem, s->hw.gpu.model);
    host = memory_report_host_bytes(s);
    if (host > 0) {
        char cap[32];
        memory_report_fmt_bytes(host, buf, sizeof(buf));
        memory_report_fmt_bytes(s->hw.host.mem_bytes / s->hw.gpus_per_node, cap, sizeof(cap));
        if (memory_report_host_fits(s))
            fprintf(f,
                    "Host memory for offloaded states: about %s per GPU (%s of host RAM per GPU)\n",
                    buf, cap);
        else
            fprintf(f,
                    "Host memory for offloaded states: about %s per GPU: does NOT fit the %s of "
                    "host RAM per GPU (node.host.memory / node.gpus)\n",
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
        { "host-bound", TC_HOST, TC_HOST },
        { "idle", TC_IDLE, TC_IDLE },
    };
    const double *bd = run_metrics(r)->breakdown_s;
    char t[32];
    size_t i;
    int c;

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

/* ---- the peak by module ------------------------------------------------------------------ */

void memory_report_modules(const struct run *r, struct memory_modules *out)
{
    const struct scenario *s = r->s;
    const struct rank_result *rr = &r->sim.ranks[r->peak_idx];
    const int64_t *at = rr->at_peak;
    struct shard sh;
    struct layer_cost lc;
    struct edge_cost ec;
    double v[MM_COUNT];

    memset(out, 0, sizeof(*out));
    out->complete = true;
    for (int k = 0; k < r->nprogs; k++)
        out->complete &= !r->progs[k]->mtag_overflow;
    for (int m = 0; m < MM_COUNT; m++)
        out->bytes[m] = (double)rr->mod_at_peak[m];
    out->states = (double)(at[MC_PARAMS] + at[MC_MASTER] + at[MC_GRADS] + at[MC_OPTIM]);
    out->gathered = (double)at[MC_GATHERED];
    out->buffers = (double)(at[MC_COMM] + at[MC_WORKSPACE] + at[MC_OVERHEAD]);
    out->reserve = (double)at[MC_RESERVE];
    /* what one layer (one micro-batch) saves, per module: the dense layer of the peak stage */
    workload_shard(s, &sh);
    workload_layer(s, &sh, false, &lc);
    strategy_layer_modules(&lc, s->train.recompute, out->per_layer);
    workload_embedding(s, &sh, &ec);
    strategy_edge_modules(&ec, false, v);
    out->per_layer[MM_EMBED] = v[MM_EMBED];
    workload_head(s, &sh, &ec);
    strategy_edge_modules(&ec, false, v);
    out->per_layer[MM_HEAD] = v[MM_HEAD] + ec.logits_bytes;
}

static void print_modules(FILE *f, const struct run *r)
{
    struct memory_modules mm;
    char b[32];
    double peak = r->peak_bytes;
    static const struct {
        const char *name;
        size_t off;
    } rest[] = {
        { "model states (params, master, grads, optimizer)",
          offsetof(struct memory_modules, states) },
        { "gathered params (ZeRO-3 / FSDP)", offsetof(struct memory_modules, gathered) },
        { "buffers, workspace, context", offsetof(struct memory_modules, buffers) },
        { "allocator reserve", offsetof(struct memory_modules, reserve) },
    };

    memory_report_modules(r, &mm);
    if (!mm.complete) {
        fprintf(f, "\n(No per-module view: a program has more distinct memory attributions "
                   "than it can hold.)\n");
        return;
    }
    fprintf(f,
            "\nThe same peak by module (activations and logits by the module that saved them)\n");
    fprintf(f, "  %-48s %10s %6s   %s\n", "module", "bytes", "share", "per layer and micro-batch");
    for (int m = 0; m < MM_COUNT; m++) {
        if (mm.bytes[m] <= 0)
            continue;
        memory_report_fmt_bytes(mm.bytes[m], b, sizeof(b));
        fprintf(f, "  %-48s %10s %5.1f%%", mmod_name(m), b, 100 * mm.bytes[m] / peak);
        if (mm.per_layer[m] > 0) {
            fprintf(f, "   %.1f MiB", mm.per_layer[m] / (1024.0 * 1024.0));
            if (m == MM_ATTN || m == MM_MLP || m == MM_CKPT) /* the norms hold the final one too */
                fprintf(f, " (x %.1f layer passes held)", mm.bytes[m] / mm.per_layer[m]);
            else if (m == MM_EMBED || m == MM_HEAD)
                fprintf(f, " per micro-batch");
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < ARRAY_LEN(rest); i++) {
        double v = *(const double *)(const void *)((const char *)&mm + rest[i].off);
        if (v <= 0)
            continue;
        memory_report_fmt_bytes(v, b, sizeof(b));
        fprintf(f, "  %-48s %10s %5.1f%%\n", rest[i].name, b, 100 * v / peak);
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

/* ---- the report -------------------------------------------------------------------------- */

void memory_report_print(FILE *f, const struct run *r, double psi)
{
    const struct scenario *s = r->s;

    fprintf(f, "simtrain memory: %s\n", s->path ? s->path : s->name);
    print_header(f, s);
    print_breakdown(f, r);
    print_modules(f, r);
    print_time(f, r);
    if (psi > 0 || s->par.dp * s->par.cp > 1)
        print_states(f, s, psi);
}
