/*
 * plan_io.c - what `simtrain plan` writes and reads back (plan.h): the text
 * report of a search, its CSV (every layout that fit by estimate) and JSON
 * (the final ranking), and the merge of the CSV files of shards into one
 * ranking of their simulated layouts.
 */
#include "whatif/plan.h"

#include <stdlib.h>
#include <string.h>

#include "base/csv.h"
#include "model/workload.h"
#include "report/report.h"
#include "whatif/sweep.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- text ----------------------------------------------------------------------------- */

static void fmt_int(long v, char *buf, size_t n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof(tmp), "%ld", v), o = 0;

    for (int i = 0; i < len && o + 2 < (int)n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
}

static void table_header(FILE *f, bool gpus)
{
    fprintf(f, "  #  %s%10s %17s %10s %6s %9s %9s %9s %9s   %s\n", gpus ? " GPUs " : "",
            "step (sim)", "interval", "step (est)", "MFU", "memory", "tok/s/GPU", "to train",
            "cost", "layout / changed from the scenario");
}

/* "18.9 GB": bytes in decimal units, as bandwidths are quoted. */
static void fmt_gb(double bytes, char *buf, size_t n)
{
    if (bytes >= 1e12)
        snprintf(buf, n, "%.2f TB", bytes / 1e12);
    else if (bytes >= 1e9)
        snprintf(buf, n, "%.1f GB", bytes / 1e9);
    else
        snprintf(buf, n, "%.0f MB", bytes / 1e6);
}

/* What an offload candidate needs of the host (its simulated step). */
static void needs_line(FILE *f, const struct plan_needs *n, bool gpus)
{
    char d2h[32], h2d[32], need[32], link[32], host[32], cap[32], hbw[32], hcap[32];

    fmt_gb(n->d2h_bytes, d2h, sizeof(d2h));
    fmt_gb(n->h2d_bytes, h2d, sizeof(h2d));
    fmt_gb(n->pcie_need_Bps, need, sizeof(need));
    fmt_gb(n->pcie_Bps, link, sizeof(link));
    fmt_gb(n->host_bytes_node, host, sizeof(host));
    fmt_gb(n->host_capacity, cap, sizeof(cap));
    fmt_gb(n->host_bw_need_Bps, hbw, sizeof(hbw));
    fmt_gb(n->host_bw_Bps, hcap, sizeof(hcap));
    fprintf(f,
            "%*s       needs: PCIe %s to host + %s to GPU per GPU per step (>= %s/s sustained "
            "of the link's %s/s),\n%*s              %.2f s of it exposed; host RAM %s of %s per "
            "node; host memory %s/s of %s/s\n",
            gpus ? 6 : 0, "", d2h, h2d, need, link, gpus ? 6 : 0, "", n->exposed_s, host, cap, hbw,
            hcap);
}

static void table_row(FILE *f, int rank, const struct plan_cand *c, bool gpus, const char *changes)
{
    char d[160], sim[32], est[32], dur[32], cost[32], iv[48];

    plan_describe(c, d, sizeof(d));
    sweep_fmt_interval(c->sim_lo_s, c->sim_hi_s, iv, sizeof(iv));
    report_fmt_time(c->sim_step_s, sim, sizeof(sim));
    report_fmt_time(c->est.step_s, est, sizeof(est));
    totals_fmt_duration(&c->tt, dur, sizeof(dur));
    totals_fmt_cost(&c->tt, cost, sizeof(cost));
    fprintf(f, "%3d  ", rank);
    if (gpus)
        fprintf(f, "%5d ", c->gpus);
    fprintf(f, "%10s %17s %10s %5.1f%% %5.1f GiB%s %8.0f %9s %9s   %s\n", sim, iv, est,
            100 * c->sim_mfu, c->sim_peak_bytes / GIB, c->sim_tight ? "*" : " ",
            c->sim_tokens_per_s / c->gpus, dur, cost, d);
    if (changes && changes[0])
        fprintf(f, "%*s       changed: %s\n", gpus ? 6 : 0, "", changes);
    if (c->offload && c->simulated && c->needs.pcie_Bps > 0) /* not after a merge: no CSV column */
        needs_line(f, &c->needs, gpus);
}

void plan_print(FILE *f, const char *path, const struct plan_result *r, const struct plan_opts *o)
{
    const struct scenario *s = r->base;
    bool gpus = o->ngpus > 1;
    char a[32], b[32], c[32], params[32];
    long rejected = 0;

    snprintf(params, sizeof(params), "%.2f B", workload_params_total(&s->model) / 1e9);
    fprintf(f, "simtrain plan: %s\n", path);
    fprintf(f, "  %s (%s parameters), global batch %d x %d tokens, on ", s->model.name, params,
            s->train.global_batch, s->train.seq_len);
    if (o->ngpus == 0)
        fprintf(f, "%d", s->gpus);
    for (int i = 0; i < o->ngpus; i++)
        fprintf(f, "%s%d", i == 0 ? "" : i + 1 == o->ngpus ? " or " : ", ", o->gpus[i]);
    fprintf(f, " GPUs of %s (%s, %.1f GiB)\n", s->hw.name, s->hw.gpu.model,
            s->hw.gpu.mem_bytes / GIB);
    fmt_int(r->evaluated, a, sizeof(a));
    fmt_int(r->search_s > 0 ? (long)(r->evaluated / r->search_s) : 0, b, sizeof(b));
    fmt_int(r->estimated, c, sizeof(c));
    fprintf(f,
            "  searched %s candidate layouts in %.2f s (%s/s; %s costed by the closed-form "
            "estimate)",
            a, r->search_s, b, c);
    if (o->shard_n > 1)
        fprintf(f, ", shard %d of %d", o->shard_k, o->shard_n);
    fprintf(f, "\n  simulated %d of the best estimates with the engine in %.2f s\n\n",
            r->nsimulated, r->simulate_s);
    if (r->nfinal > 0) {
        table_header(f, gpus);
        for (int i = 0; i < r->nfinal && i < o->top; i++)
            table_row(f, i + 1, &r->final[i], gpus, r->final[i].changes);
        fprintf(f,
                "\n  Ranked by %s. step (sim): simulated by the engine, the final ranking; "
                "interval: where 8 in\n  10 measured runs of its regime fell, scaled to it "
                "(none: no measured run near it); step\n  (est): the closed-form first pass that "
                "chose what to simulate. memory: simulated peak per GPU\n  (* tight: fits only "
                "with less allocator reserve than "
                "usual, docs/memory.md).\n",
                o->objective == PLAN_BY_COST ? "cost (GPU-hours per step)" : "simulated step time");
        if (r->nerr > 0)
            fprintf(f,
                    "  Estimate against the engine on the %d simulated candidate%s, |est / sim - "
                    "1|: step time\n  median %.1f %%, max %.1f %%; peak memory median %.1f %%, "
                    "max %.1f %%.\n",
                    r->nerr, r->nerr == 1 ? "" : "s", 100 * r->err_step_median,
                    100 * r->err_step_max, 100 * r->err_mem_median, 100 * r->err_mem_max);
    } else {
        fprintf(f, "  No layout fits in %.1f GiB per GPU.\n", r->capacity_bytes / GIB);
    }
    for (int k = 0; k < PR_COUNT; k++)
        rejected += r->rejected[k];
    fmt_int(rejected, a, sizeof(a));
    fmt_int(r->evaluated, b, sizeof(b));
    fprintf(f, "\n  Rejected %s of %s candidates:\n", a, b);
    for (int k = 0; k < PR_COUNT; k++) {
        if (!r->rejected[k])
            continue;
        fmt_int(r->rejected[k], a, sizeof(a));
        fprintf(f, "    %-26s %9s   e.g. %s\n", plan_reject_name(k), a, r->example[k]);
    }
    {
        long rest = r->nfit - r->nsimulated;
        if (rest > 0) {
            fmt_int(rest, a, sizeof(a));
            fprintf(f,
                    "  Not simulated: %s layouts that fit by estimate, ranked below the "
                    "simulated ones (--simulate, --csv).\n",
                    a);
        }
    }
}

/* ---- CSV and JSON ----------------------------------------------------------------------- */

static const char *const csv_cols =
    "number,gpus,nodes,dp,tp,pp,vpp,cp,ep,sequence_parallel,schedule,sharding,micro_batch,"
    "recompute,est_step_time_s,est_peak_memory_bytes,simulated,sim_status,sim_step_time_s,"
    "sim_peak_memory_bytes,sim_mfu,sim_tokens_per_s,time_to_train_s,cost_usd,offload,"
    "tp_comm_overlap,ddp_overlap,zero_overlap_comm,backward_prefetch,forward_prefetch,"
    "activation_offload,variant,"
    "changes\n";

/* The CSV column of each knob (after cost_usd, in enum plan_knob_id order). */
static const char *const knob_cols[PK_COUNT] = { "offload",           "tp_comm_overlap",
                                                 "ddp_overlap",       "zero_overlap_comm",
                                                 "backward_prefetch", "forward_prefetch",
                                                 "activation_offload" };

static void csv_row(FILE *f, const struct scenario *base, const struct plan_cand *c)
{
    char changes[200];

    fprintf(f, "%ld,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%d,%s,%.6g,%.6g,%s,", c->number, c->gpus,
            c->nodes, c->dp, c->tp, c->pp, c->vpp, c->cp, c->ep, c->sp ? "true" : "false",
            schedule_name((enum pp_schedule)c->schedule), sharding_name((enum sharding)c->sharding),
            c->micro_batch, recompute_name((enum recompute)c->recompute), c->est.step_s,
            c->est.peak_bytes, c->simulated ? "true" : "false");
    if (c->simulated) {
        fprintf(f, "%s", c->sim_status < 0 ? "fits" : plan_reject_name(c->sim_status));
        if (c->sim_step_s > 0)
            fprintf(f, ",%.6g,%.6g,%.6g,%.6g", c->sim_step_s, c->sim_peak_bytes, c->sim_mfu,
                    c->sim_tokens_per_s);
        else
            fputs(",,,,", f);
    } else {
        fputs(",,,,", f);
    }
    if (c->tt.have_tokens)
        fprintf(f, ",%.6g", c->tt.seconds);
    else
        fputc(',', f);
    if (c->tt.have_tokens && c->tt.have_price)
        fprintf(f, ",%.6g", c->tt.cost_usd);
    else
        fputc(',', f);
    for (int k = 0; k < PK_COUNT; k++)
        fprintf(f, ",%s",
                c->knob[k] > 0 && c->knob[k] <= plan_knobs[k].nvalues
                    ? plan_knobs[k].values[c->knob[k] - 1]
                    : "");
    plan_cand_changes(base, c, changes, sizeof(changes));
    fprintf(f, ",%d,\"%s\"\n", c->variant, changes); /* no quote in the text (plan_changes) */
}

int plan_write_csv(const struct plan_result *r, FILE *f)
{
    fputs(csv_cols, f);
    for (long i = 0; i < r->nfit; i++)
        csv_row(f, r->base, &r->fit[i]);
    return ferror(f) ? -1 : 0;
}

static void json_cand(FILE *f, const struct plan_cand *c, int rank)
{
    fprintf(f,
            "    {\"rank\": %d, \"gpus\": %d, \"nodes\": %d, \"dp\": %d, \"tp\": %d, \"pp\": %d, "
            "\"vpp\": %d, \"cp\": %d, \"ep\": %d, \"sequence_parallel\": %s, \"schedule\": \"%s\", "
            "\"sharding\": \"%s\", \"micro_batch\": %d, \"recompute\": \"%s\",\n"
            "     \"est_step_time_s\": %.6g, \"est_peak_memory_bytes\": %.6g, "
            "\"sim_step_time_s\": %.6g, \"sim_peak_memory_bytes\": %.6g, \"sim_mfu\": %.6g, "
            "\"sim_tokens_per_s\": %.6g",
            rank, c->gpus, c->nodes, c->dp, c->tp, c->pp, c->vpp, c->cp, c->ep,
            c->sp ? "true" : "false", schedule_name((enum pp_schedule)c->schedule),
            sharding_name((enum sharding)c->sharding), c->micro_batch,
            recompute_name((enum recompute)c->recompute), c->est.step_s, c->est.peak_bytes,
            c->sim_step_s, c->sim_peak_bytes, c->sim_mfu, c->sim_tokens_per_s);
    if (c->sim_hi_s > 0)
        fprintf(f, ", \"step_time_interval_s\": [%.6g, %.6g]", c->sim_lo_s, c->sim_hi_s);
    else
        fprintf(f, ", \"step_time_interval_s\": null");
    if (c->tt.have_tokens)
        fprintf(f, ", \"time_to_train_s\": %.6g", c->tt.seconds);
    if (c->tt.have_tokens && c->tt.have_price)
        fprintf(f, ", \"cost_usd\": %.6g", c->tt.cost_usd);
    if (c->tt.have_tokens && c->tt.have_power)
        fprintf(f, ", \"energy_J\": %.6g", c->tt.energy_J);
    fprintf(f, ",\n     \"tight\": %s, \"knobs\": {", c->sim_tight ? "true" : "false");
    for (int k = 0, first = 1; k < PK_COUNT; k++) {
        if (c->knob[k] == 0 || c->knob[k] > plan_knobs[k].nvalues)
            continue;
        fprintf(f, "%s\"%s\": \"%s\"", first ? "" : ", ", plan_knobs[k].name,
                plan_knobs[k].values[c->knob[k] - 1]);
        first = 0;
    }
    fputs("}, \"changes\": ", f);
    fput_json_string(f, c->changes);
    if (c->offload && c->simulated)
        fprintf(f,
                ",\n     \"offload_needs\": {\"pcie_d2h_bytes\": %.6g, \"pcie_h2d_bytes\": %.6g, "
                "\"pcie_need_Bps\": %.6g, \"pcie_Bps\": %.6g, \"exposed_s\": %.6g, "
                "\"host_bytes_per_node\": %.6g, \"host_capacity_bytes\": %.6g, "
                "\"host_bw_need_Bps\": %.6g, \"host_bw_Bps\": %.6g}",
                c->needs.d2h_bytes, c->needs.h2d_bytes, c->needs.pcie_need_Bps, c->needs.pcie_Bps,
                c->needs.exposed_s, c->needs.host_bytes_node, c->needs.host_capacity,
                c->needs.host_bw_need_Bps, c->needs.host_bw_Bps);
    fputc('}', f);
}

int plan_write_json(const char *path, const struct plan_result *r, int top, FILE *f)
{
    fputs("{\n  \"scenario\": ", f);
    fput_json_string(f, path);
    fprintf(f,
            ",\n  \"ranked_by\": \"%s\",\n  \"candidates\": %ld,\n  \"estimated\": %ld,\n"
            "  \"fit_by_estimate\": %ld,\n  \"simulated\": %d,\n  \"search_s\": %.4f,\n"
            "  \"simulate_s\": %.4f,\n  \"layouts\": %ld,\n"
            "  \"estimate_error\": {\"candidates\": %d, \"step_median\": %.4f, \"step_max\": %.4f, "
            "\"memory_median\": %.4f, \"memory_max\": %.4f},\n  \"rejected\": {",
            r->objective == PLAN_BY_COST ? "cost" : "time", r->evaluated, r->estimated, r->nfit,
            r->nsimulated, r->search_s, r->simulate_s, r->layouts, r->nerr, r->err_step_median,
            r->err_step_max, r->err_mem_median, r->err_mem_max);
    for (int k = 0, first = 1; k < PR_COUNT; k++) {
        if (!r->rejected[k])
            continue;
        fprintf(f, "%s\n    ", first ? "" : ",");
        fput_json_string(f, plan_reject_name(k));
        fprintf(f, ": {\"count\": %ld, \"example\": ", r->rejected[k]);
        fput_json_string(f, r->example[k]);
        fputc('}', f);
        first = 0;
    }
    fputs("\n  },\n  \"best\": [\n", f);
    for (int i = 0; i < r->nfinal && i < top; i++) {
        json_cand(f, &r->final[i], i + 1);
        fputs(i + 1 < r->nfinal && i + 1 < top ? ",\n" : "\n", f);
    }
    fputs("  ]\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- merge ------------------------------------------------------------------------------ */

static int enum_of(const char *text, const char *(*name)(int), int count)
{
    for (int v = 0; v < count; v++)
        if (strcmp(text, name(v)) == 0)
            return v;
    return 0;
}

static const char *sched_name_i(int v)
{
    return schedule_name((enum pp_schedule)v);
}
static const char *shard_name_i(int v)
{
    return sharding_name((enum sharding)v);
}
static const char *rc_name_i(int v)
{
    return recompute_name((enum recompute)v);
}

/* -1, 0 or 1 as a < b, a == b, a > b (no equality test on doubles). */
static int cmp_double(double a, double b)
{
    return (a > b) - (a < b);
}

static int by_sim(const void *a, const void *b)
{
    const struct plan_cand *x = a, *y = b;

    if (cmp_double(x->sim_objective, y->sim_objective))
        return cmp_double(x->sim_objective, y->sim_objective);
    if (x->number != y->number)
        return (x->number > y->number) - (x->number < y->number);
    return (x->variant > y->variant) - (x->variant < y->variant);
}

static const char *const merge_cols[] = {
    "number",
    "gpus",
    "dp",
    "tp",
    "pp",
    "vpp",
    "cp",
    "ep",
    "sequence_parallel",
    "schedule",
    "sharding",
    "micro_batch",
    "recompute",
    "est_step_time_s",
    "sim_status",
    "sim_step_time_s",
    "sim_peak_memory_bytes",
    "sim_mfu",
    "sim_tokens_per_s",
    "time_to_train_s",
    "cost_usd",
    "nodes",
};

/* Candidate of row r of a plan CSV, whose columns merge_cols[] are at col[]. */
static void merge_row(const struct csv_table *t, int r, const int *col, const int *kcol,
                      enum plan_objective objective, struct plan_cand *out)
{
    struct plan_cand c;

    memset(&c, 0, sizeof(c));
    c.number = strtol(csv_field(t, r, col[0]), NULL, 10);
    c.gpus = atoi(csv_field(t, r, col[1]));
    c.dp = atoi(csv_field(t, r, col[2]));
    c.tp = atoi(csv_field(t, r, col[3]));
    c.pp = atoi(csv_field(t, r, col[4]));
    c.vpp = atoi(csv_field(t, r, col[5]));
    c.cp = atoi(csv_field(t, r, col[6]));
    c.ep = atoi(csv_field(t, r, col[7]));
    c.sp = strcmp(csv_field(t, r, col[8]), "true") == 0;
    c.schedule = enum_of(csv_field(t, r, col[9]), sched_name_i, 4);
    c.sharding = enum_of(csv_field(t, r, col[10]), shard_name_i, 8);
    c.micro_batch = atoi(csv_field(t, r, col[11]));
    c.recompute = enum_of(csv_field(t, r, col[12]), rc_name_i, 3);
    c.est.step_s = strtod(csv_field(t, r, col[13]), NULL);
    c.sim_step_s = strtod(csv_field(t, r, col[15]), NULL);
    c.sim_peak_bytes = strtod(csv_field(t, r, col[16]), NULL);
    c.sim_mfu = strtod(csv_field(t, r, col[17]), NULL);
    c.sim_tokens_per_s = strtod(csv_field(t, r, col[18]), NULL);
    c.tt.have_tokens = csv_field(t, r, col[19])[0] != '\0';
    c.tt.seconds = strtod(csv_field(t, r, col[19]), NULL);
    c.tt.have_price = csv_field(t, r, col[20])[0] != '\0';
    c.tt.cost_usd = strtod(csv_field(t, r, col[20]), NULL);
    c.nodes = atoi(csv_field(t, r, col[21]));
    for (int k = 0; k < PK_COUNT; k++) {
        const char *v = kcol[k] >= 0 ? csv_field(t, r, kcol[k]) : "";
        c.knob[k] = 0;
        for (int j = 0; j < plan_knobs[k].nvalues; j++)
            if (strcmp(v, plan_knobs[k].values[j]) == 0)
                c.knob[k] = (unsigned char)(j + 1);
    }
    c.offload = c.knob[PK_OFFLOAD] > OFFLOAD_NONE + 1;
    if (kcol[PK_COUNT] >= 0)
        c.variant = atoi(csv_field(t, r, kcol[PK_COUNT]));
    if (kcol[PK_COUNT + 1] >= 0)
        snprintf(c.changes, sizeof(c.changes), "%s", csv_field(t, r, kcol[PK_COUNT + 1]));
    c.simulated = true;
    c.sim_status = -1;
    c.sim_objective = objective == PLAN_BY_COST ? c.sim_step_s * c.gpus : c.sim_step_s;
    *out = c;
}

/* ---- merging shard files ---------------------------------------------------------------- */

int plan_merge(const char *const *paths, int npaths, enum plan_objective objective,
               struct plan_cand **out, long *nout, char *msg, size_t msglen)
{
    struct plan_cand *all = NULL;
    size_t cap = 0;
    long n = 0;

    *out = NULL;
    *nout = 0;
    for (int k = 0; k < npaths; k++) {
        struct csv_error err;
        struct csv_table *t = csv_read_file(paths[k], &err);
        int col[ARRAY_LEN(merge_cols)], kcol[PK_COUNT + 2];
        if (!t) {
            if (err.line > 0)
                snprintf(msg, msglen, "%s:%d: %s", paths[k], err.line, err.msg);
            else
                snprintf(msg, msglen, "%s", err.msg); /* names the file */
            free(all);
            return -1;
        }
        for (size_t c = 0; c < ARRAY_LEN(merge_cols); c++)
            if ((col[c] = csv_column(t, merge_cols[c])) < 0) {
                snprintf(msg, msglen, "%s: not a plan CSV (no column '%s')", paths[k],
                         merge_cols[c]);
                csv_free(t);
                free(all);
                return -1;
            }
        /* the knob columns, variant and changes: optional (files of earlier versions) */
        for (int j = 0; j < PK_COUNT; j++)
            kcol[j] = csv_column(t, knob_cols[j]);
        kcol[PK_COUNT] = csv_column(t, "variant");
        kcol[PK_COUNT + 1] = csv_column(t, "changes");
        for (int r = 0; r < t->nrows; r++) {
            struct plan_cand c;
            if (strcmp(csv_field(t, r, col[14]), "fits") != 0)
                continue;
            merge_row(t, r, col, kcol, objective, &c);
            grow_array((void **)&all, &cap, (size_t)n + 1, sizeof(*all));
            all[n++] = c;
        }
        csv_free(t);
    }
    if (n > 0)
        qsort(all, (size_t)n, sizeof(*all), by_sim);
    *out = all;
    *nout = n;
    return 0;
}

void plan_print_merged(FILE *f, const struct plan_cand *c, long n, int nfiles, int top)
{
    bool gpus = false;

    for (long i = 1; i < n; i++)
        gpus |= c[i].gpus != c[0].gpus;
    fprintf(f, "simtrain plan: %ld simulated layouts that fit, from %d file%s\n\n", n, nfiles,
            nfiles == 1 ? "" : "s");
    table_header(f, gpus);
    for (long i = 0; i < n && i < top; i++)
        table_row(f, (int)i + 1, &c[i], gpus, c[i].changes);
}
