/*
 * memory_limits_io.c - what `simtrain memory` writes about its limits (memory_limits.h): the
 * text, the effective batch, the JSON of the whole memory report and the limit pictures.
 */
#include "whatif/memory_limits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/memory_report.h"
#include "report/plot_chart.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

const char *memory_limits_axis_name(int axis)
{
    static const char *const n[ML_AXES] = { "largest micro-batch", "longest sequence",
                                            "fewest GPUs" };
    return axis >= 0 && axis < ML_AXES ? n[axis] : "?";
}

const char *memory_limits_axis_key(int axis)
{
    static const char *const n[ML_AXES] = { "micro_batch", "seq_len", "gpus" };
    return axis >= 0 && axis < ML_AXES ? n[axis] : "?";
}

/* 1,234,567 */
static void fmt_count(long v, char *buf, size_t n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof(tmp), "%ld", v), o = 0;

    for (int i = 0; i < len && o + 2 < (int)n; i++) {
        if (i > 0 && tmp[i - 1] != '-' && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
}

void memory_limits_print_batch(FILE *f, const struct scenario *s)
{
    int dp = s->par.dp, mb = s->train.micro_batch, acc = s->train.global_batch / (mb * dp);
    char seq[32], tok[32];

    fmt_count(s->train.seq_len, seq, sizeof(seq));
    fmt_count((long)s->train.global_batch * s->train.seq_len, tok, sizeof(tok));
    fprintf(f,
            "\nEffective batch: %d sequences of %s tokens = %s tokens per optimizer step\n"
            "  = micro-batch %d x %d accumulation step%s x %d data-parallel replica%s",
            s->train.global_batch, seq, tok, mb, acc, acc == 1 ? "" : "s", dp, dp == 1 ? "" : "s");
    if (s->par.cp > 1)
        fprintf(f, " (each sequence split %d ways by cp)", s->par.cp);
    fputc('\n', f);
}

/* "4: 80.9 GiB" for the point one step past, or why there is none. */
static void past_text(const struct ml_limit *L, char *buf, size_t n)
{
    char v[32], m[32];

    if (!L->past) {
        snprintf(buf, n, "(end of range)");
        return;
    }
    fmt_count(L->past, v, sizeof(v));
    if (!L->next.ok) {
        snprintf(buf, n, "%s: refused", v);
        return;
    }
    memory_report_fmt_bytes(L->next.peak_bytes, m, sizeof(m));
    snprintf(buf, n, "%.24s: %.24s", v, m);
}

static void limit_row(FILE *f, int axis, const struct ml_limit *L, int gpu_mb, int mb)
{
    char v[32], peak[32], past[64], stop[64], est[32], name[48];

    if (!L->searched)
        return;
    snprintf(name, sizeof(name), "%s", memory_limits_axis_name(axis));
    if (axis == ML_GPUS && gpu_mb != mb)
        snprintf(name, sizeof(name), "fewest GPUs (mb %d)", gpu_mb);
    fprintf(f, "  %-22s", name);
    if (!L->found) {
        char lo[32];
        fmt_count(L->lo, lo, sizeof(lo)); /* the first value searched: the most GPUs, or 1 */
        if (axis == ML_GPUS)
            fprintf(f, " %9s   none up to %s GPUs\n", "-", lo);
        else
            fprintf(f, " %9s   none: %s does not fit\n", "-", lo);
        return;
    }
    fmt_count(L->value, v, sizeof(v));
    memory_report_fmt_bytes(L->at.peak_bytes, peak, sizeof(peak));
    if (L->at.reserve_short_bytes > 0)
        strcat(peak, "*");
    past_text(L, past, sizeof(past));
    if (L->stop_cat >= 0) {
        char g[32];
        memory_report_fmt_bytes(L->stop_bytes, g, sizeof(g));
        snprintf(stop, sizeof(stop), "%s +%s", mcat_name(L->stop_cat), g);
    } else
        snprintf(stop, sizeof(stop), "%s", L->past ? "(see below)" : "-");
    if (L->estimate > 0)
        fmt_count(L->estimate, est, sizeof(est));
    else
        snprintf(est, sizeof(est), "none");
    fprintf(f, " %9s %10s  %-18s %-30s %4d %7s\n", v, peak, past, stop, L->runs, est);
}

void memory_limits_print(FILE *f, const struct scenario *s, const struct memory_limits *l)
{
    char a[32], b[32];

    fprintf(f, "\nLimits (each found on the engine: simulated peaks, bisection over runs; the "
               "closed-form\nestimate only brackets the search)\n");
    fprintf(f, "  %-22s %9s %10s  %-18s %-30s %4s %7s\n", "limit", "value", "peak", "one step past",
            "stopped by (grows most)", "runs", "est.");
    for (int k = 0; k < ML_AXES; k++)
        limit_row(f, k, &l->lim[k], l->gpu_micro_batch, s->train.micro_batch);
    if (l->gpu_micro_batch != s->train.micro_batch && l->lim[ML_GPUS].searched) {
        fmt_count(l->gpu_unfit.searched ? l->gpu_unfit.lo : 0, a, sizeof(a));
        fprintf(f,
                "  At the scenario's micro-batch %d no GPU count up to %s fits: activations do "
                "not shrink\n  with the GPU count; the fewest GPUs are found at micro-batch %d.\n",
                s->train.micro_batch, a, l->gpu_micro_batch);
    }
    if (!l->lim[ML_MICRO_BATCH].searched)
        fprintf(f, "  (no micro-batch or sequence limit: micro-batch 1 does not fit here, nor on "
                   "any GPU count searched)\n");
    if (l->ref_moved)
        fprintf(f,
                "  Micro-batch and sequence on %d GPUs with sharding %s, the fewest that fit: "
                "the scenario\n  does not fit at micro-batch 1 on %d GPU%s.\n",
                l->ref_gpus, sharding_name(l->ref_sharding), s->gpus, s->gpus == 1 ? "" : "s");
    if (l->sharding_changed)
        fprintf(f, "  GPUs with sharding %s: %s '%s' %s.\n", sharding_name(l->gpu_sharding),
                "the scenario's", sharding_name(s->par.sharding),
                s->par.sharding == SHARD_NONE || s->par.sharding == SHARD_FSDP_NO_SHARD
                    ? "keeps every model state whole\n  on every GPU, so more GPUs alone never "
                      "fit"
                    : "fits on no GPU count searched");
    if (l->lim[ML_SEQ_LEN].searched) {
        fmt_count(l->seq_step, a, sizeof(a));
        fprintf(f, "  Sequence lengths on a grid of %s tokens, at micro-batch %d%s.\n", a,
                l->seq_micro_batch,
                l->seq_micro_batch < s->train.micro_batch ? " (the largest that fits)" : "");
    }
    for (int k = 0; k < ML_AXES; k++) {
        const struct ml_limit *L = &l->lim[k];
        if (L->found && L->past && !L->next.ok)
            fprintf(f, "  %s %ld: %s\n", memory_limits_axis_name(k), L->past, L->next.reason);
        if (L->found && !L->past) {
            fmt_count(L->hi, b, sizeof(b));
            fprintf(f, "  %s: fits at the end of the range searched (%s)%s.\n",
                    memory_limits_axis_name(k), b,
                    k == ML_GPUS ? ": the fewest GPUs the layout allows"
                    : k == ML_SEQ_LEN && s->model.pos == POS_LEARNED ? ": the workload's max_seq"
                                                                     : "");
        }
    }
    for (int k = 0; k < ML_AXES; k++)
        if (l->lim[k].found && l->lim[k].at.reserve_short_bytes > 0) {
            fprintf(f, "  * tight: fits only with less allocator reserve than usual (the caching "
                       "allocator's\n    retry; docs/memory.md): leave headroom.\n");
            break;
        }
    fprintf(f, "  Stopped by: the memory category that grows most from the limit to one step "
               "past it.\n");
    memory_limits_print_batch(f, s);
    for (int k = 0; k < ML_AXES; k++) {
        const struct ml_limit *L = &l->lim[k];
        long seq = k == ML_SEQ_LEN ? L->value : s->train.seq_len;
        int mb = k == ML_MICRO_BATCH ? (int)L->value
                 : k == ML_SEQ_LEN   ? l->seq_micro_batch
                                     : l->gpu_micro_batch;
        if (!L->found || !L->global_batch)
            continue;
        fmt_count(L->value, a, sizeof(a));
        fmt_count((long)L->global_batch * seq, b, sizeof(b));
        fprintf(f, "  at the %s (%s): %d x %d x %d = %d sequences, %s tokens\n",
                memory_limits_axis_name(k), a, mb, L->accumulation, L->dp, L->global_batch, b);
    }
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void json_bytes_object(FILE *f, const char *key, const double *v, int n,
                              const char *(*name)(int), const char *indent)
{
    fprintf(f, "%s\"%s\": {", indent, key);
    for (int k = 0, first = 1; k < n; k++) {
        if (!(v[k] > 0) && !(v[k] < 0))
            continue;
        fputs(first ? "" : ", ", f);
        fput_json_string(f, name(k));
        fprintf(f, ": %.17g", v[k]);
        first = 0;
    }
    fputc('}', f);
}

static void json_limit(FILE *f, int axis, const struct ml_limit *L, bool last)
{
    fprintf(f, "    \"%s\": {\"searched\": %s, \"found\": %s", memory_limits_axis_key(axis),
            L->searched ? "true" : "false", L->found ? "true" : "false");
    if (L->searched)
        fprintf(f, ", \"range\": [%ld, %ld], \"estimate\": %ld, \"runs\": %d", L->lo, L->hi,
                L->estimate, L->runs);
    if (L->found) {
        fprintf(f,
                ",\n      \"value\": %ld, \"peak_bytes\": %.17g, \"tight\": %s, "
                "\"global_batch\": %d, \"accumulation\": %d, \"dp\": %d",
                L->value, L->at.peak_bytes, L->at.reserve_short_bytes > 0 ? "true" : "false",
                L->global_batch, L->accumulation, L->dp);
        if (L->past) {
            fprintf(f, ",\n      \"past\": %ld, \"past_simulated\": %s", L->past,
                    L->next.ok ? "true" : "false");
            if (L->next.ok)
                fprintf(f, ", \"past_peak_bytes\": %.17g", L->next.peak_bytes);
            else {
                fputs(", \"past_reason\": ", f);
                fput_json_string(f, L->next.reason);
            }
        }
        if (L->stop_cat >= 0) {
            fputs(", \"stopped_by\": ", f);
            fput_json_string(f, mcat_name(L->stop_cat));
            fprintf(f, ", \"growth_bytes\": %.17g", L->stop_bytes);
        }
    }
    fprintf(f, "}%s\n", last ? "" : ",");
}

int memory_limits_write_json(FILE *f, const struct run *r, const struct memory_limits *l)
{
    const struct scenario *s = r->s;
    const struct rank_result *rr = &r->sim.ranks[r->peak_idx];
    struct memory_modules mm;
    double cats[MC_COUNT];
    int dp = s->par.dp, mb = s->train.micro_batch;

    memory_report_modules(r, &mm);
    for (int k = 0; k < MC_COUNT; k++)
        cats[k] = (double)rr->at_peak[k];
    fputs("{\n  \"scenario\": ", f);
    fput_json_string(f, s->path && *s->path ? s->path : s->name);
    fputs(",\n  \"gpu\": ", f);
    fput_json_string(f, s->hw.gpu.model);
    fprintf(f,
            ",\n  \"gpus\": %d,\n  \"capacity_bytes\": %.17g,\n  \"peak_bytes\": %.17g,\n"
            "  \"fits\": %s,\n  \"peak_stage\": %d,\n  \"peak_time_s\": %.9g,\n"
            "  \"step_time_s\": %.9g,\n  \"host_bytes\": %.17g,\n  \"host_fits\": %s,\n",
            s->gpus, r->capacity_bytes, r->peak_bytes, r->fits ? "true" : "false",
            rr->coords[DIM_PP], (double)rr->peak_t / NS_PER_S, r->step_s,
            memory_report_host_bytes(s), memory_report_host_fits(s) ? "true" : "false");
    json_bytes_object(f, "at_peak_bytes", cats, MC_COUNT, mcat_name, "  ");
    fprintf(f, ",\n  \"modules\": {\"complete\": %s,\n", mm.complete ? "true" : "false");
    json_bytes_object(f, "at_peak_bytes", mm.bytes, MM_COUNT, mmod_name, "    ");
    fputs(",\n", f);
    json_bytes_object(f, "per_layer_bytes", mm.per_layer, MM_COUNT, mmod_name, "    ");
    fprintf(f,
            ",\n    \"states_bytes\": %.17g, \"gathered_bytes\": %.17g, \"buffers_bytes\": "
            "%.17g, \"reserve_bytes\": %.17g},\n",
            mm.states, mm.gathered, mm.buffers, mm.reserve);
    fprintf(f,
            "  \"effective_batch\": {\"sequences\": %d, \"tokens\": %.17g, \"micro_batch\": %d, "
            "\"accumulation\": %d, \"dp\": %d}",
            s->train.global_batch, (double)s->train.global_batch * s->train.seq_len, mb,
            s->train.global_batch / (mb * dp), dp);
    if (l) {
        fprintf(f,
                ",\n  \"limits\": {\n    \"reference\": {\"gpus\": %d, \"sharding\": \"%s\", "
                "\"moved\": %s},\n    \"gpu_sharding\": \"%s\", \"sharding_changed\": %s, "
                "\"gpu_micro_batch\": %d, \"seq_micro_batch\": %d, \"seq_step\": %d,\n",
                l->ref_gpus, sharding_name(l->ref_sharding), l->ref_moved ? "true" : "false",
                sharding_name(l->gpu_sharding), l->sharding_changed ? "true" : "false",
                l->gpu_micro_batch, l->seq_micro_batch, l->seq_step);
        for (int k = 0; k < ML_AXES; k++)
            json_limit(f, k, &l->lim[k], k + 1 == ML_AXES);
        fputs("  }", f);
    }
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- pictures --------------------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
    const struct ml_point *x = a, *y = b;

    if (x->axis != y->axis)
        return x->axis - y->axis;
    return (x->value > y->value) - (x->value < y->value);
}

/* More points for the curve: up to 12 evenly spaced values up to one step past the limit. */
static void fill_curve(const struct scenario *s, struct memory_limits *l, int axis)
{
    const struct ml_limit *L = &l->lim[axis];
    long top = L->past ? L->past : L->value, step = axis == ML_SEQ_LEN ? l->seq_step : 1;

    if (!L->found)
        return;
    for (int k = 1; k <= 12; k++) {
        long v = (top * k / 12 + step - 1) / step * step;
        bool seen = v < L->lo;
        for (int i = 0; i < l->npts && !seen; i++)
            seen = l->pts[i].axis == axis && l->pts[i].value == v;
        if (seen)
            continue;
        grow_array((void **)&l->pts, &l->cap_pts, (size_t)l->npts + 1, sizeof(*l->pts));
        memory_limits_eval(s, l, axis, v, &l->pts[l->npts++]);
    }
}

int memory_limits_plot(const char *dir, const struct scenario *s, struct memory_limits *l)
{
    struct ml_point *p;
    char *title, *vars;
    FILE *f;

    if (chart_make_dir(dir) != 0)
        return -1;
    fill_curve(s, l, ML_MICRO_BATCH);
    fill_curve(s, l, ML_SEQ_LEN);
    p = xmalloc(sizeof(*p) * (size_t)(l->npts > 0 ? l->npts : 1));
    memcpy(p, l->pts, sizeof(*p) * (size_t)l->npts);
    qsort(p, (size_t)l->npts, sizeof(*p), by_value);
    f = chart_open_dat(dir, "limits");
    if (!f) {
        free(p);
        return -1;
    }
    fprintf(f, "# two blocks: micro-batch, then sequence length; rows: value peak_GiB fits\n");
    for (int axis = ML_MICRO_BATCH; axis <= ML_SEQ_LEN; axis++) {
        fprintf(f, "%s# %s\n", axis ? "\n\n" : "", memory_limits_axis_key(axis));
        for (int i = 0; i < l->npts; i++)
            if (p[i].axis == axis && p[i].ok)
                fprintf(f, "%ld %.4f %d\n", p[i].value, p[i].peak_bytes / GIB, p[i].fits);
    }
    free(p);
    if (chart_close_dat(f, dir, "limits") != 0)
        return -1;
    title = chart_safe_title(s->path && *s->path ? s->path : s->name);
    vars = xasprintf("titletext='%s'; capacity=%.4f; mb_limit=%ld; seq_limit=%ld; gpus=%d", title,
                     l->capacity_bytes / GIB, l->lim[ML_MICRO_BATCH].value,
                     l->lim[ML_SEQ_LEN].value, l->ref_gpus);
    chart_draw(dir, "limits", "limits", vars);
    free(vars);
    free(title);
    return 0;
}
