/*
 * cmd_plan.c - `simtrain plan`: the command line and outputs of the layout
 * search (plan.h).
 *
 *   simtrain plan SCENARIO.yaml [--gpus N[,N...]] [--top K] [--simulate S]
 *                 [--rank time|cost] [--max-micro-batch M] [--csv F] [--json F]
 *                 [--plot DIR] [--shard K/N] [--set KEY=VALUE]... [--quiet]
 *   simtrain plan --merge A.csv B.csv ... [--top K]
 *
 * Exit status: 0 when at least one layout fits; 3 when none does; 1 bad
 * input; 2 usage.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "cli/cmd.h"
#include "base/csv.h"
#include "whatif/plan.h"
#include "report/plot.h"
#include "report/report.h"
#include "model/workload.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

struct plan_args {
    struct cli_list pos; /* the scenario, or with --merge the CSV files */
    struct plan_opts o;
    int rank; /* index into rank_choices */
    struct cli_shard shard;
    const char *csv, *json, *plot;
    bool quiet, merge;
    struct cli_overrides set;
};

/* "N" or "N,N,...": the GPU counts of plan_opts. */
static int parse_gpus(const char *text, void *field)
{
    struct plan_opts *o = field;
    char *end;

    o->ngpus = 0;
    while (*text) {
        long v = strtol(text, &end, 10);
        if (end == text || v < 1 || v > 1000000 || o->ngpus >= PLAN_MAX_GPU_COUNTS ||
            (*end != ',' && *end != '\0'))
            return -1;
        o->gpus[o->ngpus++] = (int)v;
        text = *end == ',' ? end + 1 : end;
    }
    return o->ngpus > 0 ? 0 : -1;
}

static const char *const rank_choices[] = { "time", "cost", NULL };

#define OFF(field) offsetof(struct plan_args, field)

static const struct cli_opt plan_opts_table[] = {
    { "--gpus", 0, "N[,N...]", "plan for these GPU counts (default: the scenario's)",
      .kind = CLI_CUSTOM, .offset = OFF(o), .parse = parse_gpus,
      .expect = "N or N,N,... (at most 16 counts)" },
    { "--top", 0, "K", "layouts in the final ranking (default 5)", .kind = CLI_INT,
      .offset = OFF(o.top), .min = 1, .max = 100000, .expect = "a positive count" },
    { "--simulate", 0, "S", "most engine runs (default 3 * K + 2)", .kind = CLI_INT,
      .offset = OFF(o.simulate), .min = 1, .max = 100000, .expect = "a positive count" },
    { "--rank", 0, "time|cost", "rank by step time (default) or by GPU-hours per step",
      .kind = CLI_CHOICE, .offset = OFF(rank), .choices = rank_choices },
    { "--max-micro-batch", 0, "M", "largest micro-batch tried (default 64)", .kind = CLI_INT,
      .offset = OFF(o.max_micro_batch), .min = 1, .max = 100000, .expect = "a positive count" },
    { "--set", 0, "KEY=VALUE", "override a key of the scenario before the search (repeatable)",
      .kind = CLI_SET, .offset = OFF(set) },
    { "--csv", 0, "FILE", "write every layout that fits by estimate as CSV (- for standard output)",
      .kind = CLI_STRING, .offset = OFF(csv) },
    { "--json", 0, "FILE", "write the ranking as JSON (- for standard output)", .kind = CLI_STRING,
      .offset = OFF(json) },
    { "--plot", 0, "DIR", "draw the estimate-vs-memory scatter and the top layouts into DIR",
      .kind = CLI_STRING, .offset = OFF(plot) },
    { "--shard", 0, "K/N", "search only the candidates numbered i with i % N == K (job arrays)",
      .kind = CLI_CUSTOM, .offset = OFF(shard), .parse = cli_parse_shard,
      .expect = "K/N with 0 <= K < N" },
    { "--merge", 0, NULL, "rank the simulated layouts of the shards' CSV files given as arguments",
      .kind = CLI_FLAG, .offset = OFF(merge) },
    { "--quiet", 'q', NULL, "print no table (for --csv, --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
};

const struct cli_command cmd_plan_spec = {
    .name = "plan",
    .synopsis = "simtrain plan SCENARIO.yaml [OPTION]...\n"
                "simtrain plan --merge FILE.csv... [--top K] [--rank time|cost]",
    .about = "Searches the parallel layouts of the scenario (tp, pp, vpp and schedule, cp, ep,\n"
             "sharding, micro-batch, recompute, sequence parallelism) for its GPU count or the\n"
             "--gpus counts, keeps those that fit in GPU memory, ranks them by a closed-form\n"
             "estimate, simulates the best with the engine and prints the top K (default 5) by\n"
             "simulated step time (--rank cost: GPU-hours, for several GPU counts), with the\n"
             "rejected candidates counted by reason. Exit status 0 when a layout fits, 3 when\n"
             "none does.\n",
    .opts = plan_opts_table,
    .nopts = ARRAY_LEN(plan_opts_table),
    .positional = OFF(pos),
    .max_positional = -1,
};

static int parse(int argc, char **argv, struct plan_args *a)
{
    enum cli_result pr;

    memset(a, 0, sizeof(*a));
    a->o.top = 5;
    a->shard.n = 1;
    pr = cli_parse(&cmd_plan_spec, argc, argv, a);
    if (pr != CLI_OK)
        return cli_exit_status(pr);
    a->o.objective = a->rank == 1 ? PLAN_BY_COST : PLAN_BY_TIME;
    a->o.shard_k = a->shard.k;
    a->o.shard_n = a->shard.n;
    if (a->merge && a->pos.n == 0)
        pr = cli_usage_error(&cmd_plan_spec, "--merge needs the CSV files to merge");
    else if (!a->merge && a->pos.n == 0)
        pr = cli_usage_error(&cmd_plan_spec, "no scenario given");
    else if (!a->merge && a->pos.n > 1)
        pr = cli_usage_error(&cmd_plan_spec, "more than one scenario ('%s' and '%s')",
                             a->pos.items[0], a->pos.items[1]);
    return pr == CLI_OK ? -1 : cli_exit_status(pr);
}

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
    fprintf(f, "  #  %s%-52s %10s %10s %6s %9s %9s %9s %9s\n", gpus ? " GPUs " : "", "layout",
            "step (sim)", "step (est)", "MFU", "memory", "tok/s/GPU", "to train", "cost");
}

static void table_row(FILE *f, int rank, const struct plan_cand *c, bool gpus)
{
    char d[160], sim[32], est[32], dur[32], cost[32];

    plan_describe(c, d, sizeof(d));
    report_fmt_time(c->sim_step_s, sim, sizeof(sim));
    report_fmt_time(c->est.step_s, est, sizeof(est));
    totals_fmt_duration(&c->tt, dur, sizeof(dur));
    totals_fmt_cost(&c->tt, cost, sizeof(cost));
    fprintf(f, "%3d  ", rank);
    if (gpus)
        fprintf(f, "%5d ", c->gpus);
    fprintf(f, "%-52s %10s %10s %5.1f%% %5.1f GiB %9.0f %9s %9s\n", d, sim, est, 100 * c->sim_mfu,
            c->sim_peak_bytes / GIB, c->sim_tokens_per_s / c->gpus, dur, cost);
}

static void print_result(FILE *f, const char *path, const struct plan_result *r,
                         const struct plan_opts *o)
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
            table_row(f, i + 1, &r->final[i], gpus);
        fprintf(f,
                "\n  Ranked by %s. step (sim): simulated by the engine, the final ranking; step "
                "(est):\n  the closed-form first pass that chose what to simulate. memory: "
                "simulated peak per GPU.\n",
                o->objective == PLAN_BY_COST ? "cost (GPU-hours per step)" : "simulated step time");
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
    "sim_peak_memory_bytes,sim_mfu,sim_tokens_per_s,time_to_train_s,cost_usd\n";

static void csv_row(FILE *f, const struct plan_cand *c)
{
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
        fprintf(f, ",%.6g\n", c->tt.cost_usd);
    else
        fputs(",\n", f);
}

static int write_csv(const struct plan_result *r, FILE *f)
{
    fputs(csv_cols, f);
    for (long i = 0; i < r->nfit; i++)
        csv_row(f, &r->fit[i]);
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
    if (c->tt.have_tokens)
        fprintf(f, ", \"time_to_train_s\": %.6g", c->tt.seconds);
    if (c->tt.have_tokens && c->tt.have_price)
        fprintf(f, ", \"cost_usd\": %.6g", c->tt.cost_usd);
    if (c->tt.have_tokens && c->tt.have_power)
        fprintf(f, ", \"energy_J\": %.6g", c->tt.energy_J);
    fputc('}', f);
}

static int write_json(const char *path, const struct plan_result *r, int top, FILE *f)
{
    fputs("{\n  \"scenario\": ", f);
    fput_json_string(f, path);
    fprintf(f,
            ",\n  \"ranked_by\": \"%s\",\n  \"candidates\": %ld,\n  \"estimated\": %ld,\n"
            "  \"fit_by_estimate\": %ld,\n  \"simulated\": %d,\n  \"search_s\": %.4f,\n"
            "  \"simulate_s\": %.4f,\n  \"rejected\": {",
            r->objective == PLAN_BY_COST ? "cost" : "time", r->evaluated, r->estimated, r->nfit,
            r->nsimulated, r->search_s, r->simulate_s);
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

static int write_file(const char *path, const char *scenario, const struct plan_result *r, int top,
                      bool json)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    int rc;

    if (!f) {
        fprintf(stderr, "simtrain plan: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    rc = json ? write_json(scenario, r, top, f) : write_csv(r, f);
    if ((f != stdout && fclose(f) != 0) || rc != 0) {
        fprintf(stderr, "simtrain plan: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
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
    return (x->number > y->number) - (x->number < y->number);
}

static int run_merge(const struct plan_args *a)
{
    struct plan_cand *all = NULL;
    size_t cap = 0;
    long n = 0;
    bool gpus = false;

    for (int k = 0; k < a->pos.n; k++) {
        struct csv_error err;
        struct csv_table *t = csv_read_file(a->pos.items[k], &err);
        int col[24];
        static const char *const names[] = { "number",
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
                                             "nodes" };
        if (!t) {
            fprintf(stderr, "simtrain plan: error: %s:%d: %s\n", a->pos.items[k], err.line,
                    err.msg);
            free(all);
            return 1;
        }
        for (size_t c = 0; c < ARRAY_LEN(names); c++)
            if ((col[c] = csv_column(t, names[c])) < 0) {
                fprintf(stderr, "simtrain plan: error: %s: not a plan CSV (no column '%s')\n",
                        a->pos.items[k], names[c]);
                csv_free(t);
                free(all);
                return 1;
            }
        for (int r = 0; r < t->nrows; r++) {
            struct plan_cand c;
            if (strcmp(csv_field(t, r, col[14]), "fits") != 0)
                continue;
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
            c.simulated = true;
            c.sim_status = -1;
            c.sim_objective = a->o.objective == PLAN_BY_COST ? c.sim_step_s * c.gpus : c.sim_step_s;
            gpus |= n > 0 && c.gpus != all[0].gpus;
            grow_array((void **)&all, &cap, (size_t)n + 1, sizeof(*all));
            all[n++] = c;
        }
        csv_free(t);
    }
    if (n > 0)
        qsort(all, (size_t)n, sizeof(*all), by_sim);
    printf("simtrain plan: %ld simulated layouts that fit, from %d file%s\n\n", n, a->pos.n,
           a->pos.n == 1 ? "" : "s");
    table_header(stdout, gpus);
    for (long i = 0; i < n && i < a->o.top; i++)
        table_row(stdout, (int)i + 1, &all[i], gpus);
    free(all);
    return n > 0 ? 0 : 3;
}

/* ---- the command ------------------------------------------------------------------------- */

int cmd_plan(int argc, char **argv)
{
    struct plan_args a;
    struct scenario *s;
    struct plan_result r;
    const char *path;
    char msg[512];
    int rc = parse(argc, argv, &a);

    if (rc >= 0 || a.merge) {
        if (rc < 0)
            rc = run_merge(&a);
        cli_release(&cmd_plan_spec, &a);
        return rc;
    }
    path = a.pos.items[0];
    s = cfg_load_scenario(path, a.set.ovr, a.set.n, stderr);
    if (!s) {
        cli_release(&cmd_plan_spec, &a);
        return 1;
    }
    rc = 0;
    if (plan_search(s, &a.o, &r, !a.quiet && isatty(STDERR_FILENO) ? stderr : NULL, msg,
                    sizeof(msg)) != 0) {
        fprintf(stderr, "simtrain plan: error: %s\n", msg);
        cfg_free(s);
        cli_release(&cmd_plan_spec, &a);
        return 1;
    }
    if (!a.quiet && !(a.csv && strcmp(a.csv, "-") == 0) && !(a.json && strcmp(a.json, "-") == 0))
        print_result(stdout, path, &r, &a.o);
    if (a.csv && write_file(a.csv, path, &r, a.o.top, false) != 0)
        rc = 1;
    if (a.json && write_file(a.json, path, &r, a.o.top, true) != 0)
        rc = 1;
    if (a.plot && plot_plan(a.plot, &r) != 0)
        rc = 1;
    if (rc == 0 && r.nfinal == 0)
        rc = 3;
    plan_result_release(&r);
    cfg_free(s);
    cli_release(&cmd_plan_spec, &a);
    return rc;
}
