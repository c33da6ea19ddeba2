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
    const char *scenario;
    struct plan_opts o;
    const char *csv, *json, *plot;
    bool quiet, merge;
    char **files;
    int nfiles;
    struct cfg_override *ovr;
    int novr;
};

static void usage(FILE *f)
{
    fputs("usage: simtrain plan SCENARIO.yaml [--gpus N[,N...]] [--top K] [--simulate S]\n"
          "                     [--rank time|cost] [--max-micro-batch M] [--csv FILE]\n"
          "                     [--json FILE] [--plot DIR] [--shard K/N] [--set KEY=VALUE]...\n"
          "       simtrain plan --merge FILE.csv... [--top K]\n"
          "\n"
          "Searches the parallel layouts of the scenario (tp, pp, vpp and schedule, cp, ep,\n"
          "sharding, micro-batch, recompute, sequence parallelism) for its GPU count or the\n"
          "--gpus counts, keeps those that fit in GPU memory, ranks them by a closed-form\n"
          "estimate, simulates the best with the engine and prints the top K (default 5) by\n"
          "simulated step time (--rank cost: GPU-hours, for several GPU counts), with the\n"
          "rejected candidates counted by reason. --csv writes every layout that fits by\n"
          "estimate; --shard K/N searches one share of the candidates (job arrays) and\n"
          "--merge ranks the simulated layouts of the shards' CSV files together.\n",
          f);
}

static int parse_gpus(const char *text, struct plan_opts *o)
{
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

static int positive_int(const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);

    if (end == text || *end != '\0' || v < 1 || v > 100000)
        return -1;
    *out = (int)v;
    return 0;
}

static int bad_value(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "simtrain plan: error: %s takes %s, got '%s'\n", opt, want, val);
    return -1;
}

static int parse(int argc, char **argv, struct plan_args *a)
{
    int rc;

    memset(a, 0, sizeof(*a));
    a->o.top = 5;
    a->o.shard_n = 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if ((rc = cli_take_set(argc, argv, &i, &a->ovr, &a->novr)) != 0) {
            if (rc < 0)
                return -1;
        } else if (strcmp(s, "--gpus") == 0 && v) {
            if (parse_gpus(argv[++i], &a->o) != 0)
                return bad_value(s, v, "N or N,N,... (at most 16 counts)");
        } else if (strcmp(s, "--top") == 0 && v) {
            if (positive_int(argv[++i], &a->o.top) != 0)
                return bad_value(s, v, "a positive count");
        } else if (strcmp(s, "--simulate") == 0 && v) {
            if (positive_int(argv[++i], &a->o.simulate) != 0)
                return bad_value(s, v, "a positive count");
        } else if (strcmp(s, "--max-micro-batch") == 0 && v) {
            if (positive_int(argv[++i], &a->o.max_micro_batch) != 0)
                return bad_value(s, v, "a positive count");
        } else if (strcmp(s, "--rank") == 0 && v) {
            if (strcmp(v, "time") != 0 && strcmp(v, "cost") != 0)
                return bad_value(s, v, "'time' or 'cost'");
            a->o.objective = strcmp(argv[++i], "cost") == 0 ? PLAN_BY_COST : PLAN_BY_TIME;
        } else if (strcmp(s, "--shard") == 0 && v) {
            if (cli_parse_shard(argv[++i], &a->o.shard_k, &a->o.shard_n) != 0)
                return bad_value(s, v, "K/N with 0 <= K < N");
        } else if ((strcmp(s, "--csv") == 0 || strcmp(s, "--json") == 0 ||
                    strcmp(s, "--plot") == 0) &&
                   v) {
            *(s[2] == 'c' ? &a->csv : s[2] == 'j' ? &a->json : &a->plot) = argv[++i];
        } else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
            a->quiet = true;
        } else if (strcmp(s, "--merge") == 0) {
            a->merge = true;
        } else if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (s[0] == '-' && s[1] != '\0') {
            fprintf(stderr, "simtrain plan: error: unknown option '%s' (or missing value)\n", s);
            return -1;
        } else if (cli_take_positional("plan", argv[i], a->merge, &a->files, &a->nfiles,
                                       &a->scenario) != 0) {
            return -1;
        }
    }
    if (a->merge ? a->nfiles == 0 : !a->scenario) {
        usage(stderr);
        return -1;
    }
    return 0;
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

    for (int k = 0; k < a->nfiles; k++) {
        struct csv_error err;
        struct csv_table *t = csv_read_file(a->files[k], &err);
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
            fprintf(stderr, "simtrain plan: error: %s:%d: %s\n", a->files[k], err.line, err.msg);
            free(all);
            return 1;
        }
        for (size_t c = 0; c < ARRAY_LEN(names); c++)
            if ((col[c] = csv_column(t, names[c])) < 0) {
                fprintf(stderr, "simtrain plan: error: %s: not a plan CSV (no column '%s')\n",
                        a->files[k], names[c]);
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
    printf("simtrain plan: %ld simulated layouts that fit, from %d file%s\n\n", n, a->nfiles,
           a->nfiles == 1 ? "" : "s");
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
    char msg[512];
    int rc = 0;

    if (parse(argc, argv, &a) != 0) {
        cli_free_overrides(a.ovr, a.novr);
        free(a.files);
        return 2;
    }
    if (a.merge) {
        rc = run_merge(&a);
        cli_free_overrides(a.ovr, a.novr);
        free(a.files);
        return rc;
    }
    s = cfg_load_scenario(a.scenario, a.ovr, a.novr, stderr);
    cli_free_overrides(a.ovr, a.novr);
    free(a.files);
    if (!s)
        return 1;
    if (plan_search(s, &a.o, &r, !a.quiet && isatty(STDERR_FILENO) ? stderr : NULL, msg,
                    sizeof(msg)) != 0) {
        fprintf(stderr, "simtrain plan: error: %s\n", msg);
        cfg_free(s);
        return 1;
    }
    if (!a.quiet && !(a.csv && strcmp(a.csv, "-") == 0) && !(a.json && strcmp(a.json, "-") == 0))
        print_result(stdout, a.scenario, &r, &a.o);
    if (a.csv && write_file(a.csv, a.scenario, &r, a.o.top, false) != 0)
        rc = 1;
    if (a.json && write_file(a.json, a.scenario, &r, a.o.top, true) != 0)
        rc = 1;
    if (a.plot && plot_plan(a.plot, &r) != 0)
        rc = 1;
    if (rc == 0 && r.nfinal == 0)
        rc = 3;
    plan_result_release(&r);
    cfg_free(s);
    return rc;
}
