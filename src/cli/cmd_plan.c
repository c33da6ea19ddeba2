/*
 * cmd_plan.c - `simtrain plan`: the command line and outputs of the layout
 * search (plan.h).
 *
 *   simtrain plan SCENARIO.yaml [--gpus N[,N...]] [--top K] [--simulate S]
 *                 [--rank time|cost] [--max-micro-batch M] [--csv F] [--json F]
 *                 [--plot DIR] [--shard K/N] [--set KEY=VALUE]... [--quiet]
 *   simtrain plan --merge A.csv B.csv ... [--top K]
 *   simtrain plan SCENARIO.yaml --tokens N --days D [--budget USD] [--price USD]
 *   simtrain plan SCENARIO.yaml [--tokens N] --budget USD [--price USD]
 *
 * Exit status: 0 when at least one layout fits; 3 when none does; 1 bad
 * input; 2 usage.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "base/units.h"
#include "cli/cmd.h"
#include "cli/input.h"
#include "config/config.h"
#include "whatif/plan.h"
#include "whatif/plan_goal.h"
#include "report/plot.h"
#include "report/report.h"

struct plan_args {
    struct cli_list pos; /* the scenario (with --from the configs), or with --merge CSV files */
    struct cli_input in;
    struct plan_opts o;
    int rank; /* index into rank_choices */
    struct cli_shard shard;
    const char *csv, *json, *plot;
    bool quiet, merge;
    struct cli_overrides set;
    struct plan_goal goal; /* --tokens, --days, --budget, --price */
};

/*
 * A quantity of `kind` (an optional leading '$' for money) from `min` to `max`, written without
 * surrounding space, or -1: a denormal price or a fraction of a token is a typo, not a goal.
 */
static int within(const char *text, enum unit_kind kind, double min, double max, double *out)
{
    struct unit_error err;
    size_t len;
    double v;

    if (*text == '$')
        text++;
    len = strlen(text);
    if (!len || isspace((unsigned char)text[0]) || isspace((unsigned char)text[len - 1]))
        return -1;
    if (units_parse(text, kind, &v, &err) != 0 || !(v >= min) || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_tokens(const char *text, void *field)
{
    return within(text, UNIT_COUNT, 1, 1e18, field);
}

/* At least a minute and a half (1e-3 days): a shorter goal is no training run. */
static int parse_days(const char *text, void *field)
{
    return within(text, UNIT_COUNT, 1e-3, 1e6, field);
}

/* A budget of at least a cent. */
static int parse_usd(const char *text, void *field)
{
    return within(text, UNIT_COUNT, 0.01, 1e15, field);
}

/* A price per GPU-hour of at least 1e-6 USD, the floor of training.price_per_gpu_hour. */
static int parse_price(const char *text, void *field)
{
    return within(text, UNIT_COUNT, 1e-6, 1e15, field);
}

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
        for (int i = 0; i < o->ngpus; i++)
            if (o->gpus[i] == v)
                return -1; /* a count twice would be planned twice */
        o->gpus[o->ngpus++] = (int)v;
        text = *end == ',' ? end + 1 : end;
        if (*end == ',' && !*text)
            return -1; /* "8," names a count it does not give */
    }
    return o->ngpus > 0 ? 0 : -1;
}

static const char *const rank_choices[] = { "time", "cost", NULL };

#define OFF(field) offsetof(struct plan_args, field)

static const struct cli_opt plan_opts_table[] = {
    { "--gpus", 0, "N[,N...]", "plan for these GPU counts, each once (default: the scenario's)",
      .kind = CLI_CUSTOM, .offset = OFF(o), .parse = parse_gpus,
      .expect = "N or N,N,... (at most 16 counts, each once)" },
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
    { "--tokens", 0, "N", "tokens to train, e.g. 2T (default: training.tokens)", .kind = CLI_CUSTOM,
      .offset = OFF(goal.tokens), .parse = parse_tokens,
      .expect = "a count such as 2T or 1.5e12, from 1 to 1e18" },
    { "--days", 0, "D",
      "find the fewest GPUs (whole nodes, each with its own plan search) that train the tokens "
      "within D days",
      .kind = CLI_CUSTOM, .offset = OFF(goal.days), .parse = parse_days,
      .expect = "a number of days from 0.001 to 1e6" },
    { "--budget", 0, "USD",
      "with --days, also cost at most USD; alone, the cheapest plan over node counts if within "
      "USD",
      .kind = CLI_CUSTOM, .offset = OFF(goal.budget), .parse = parse_usd,
      .expect = "an amount such as 2M or $150k, from 0.01 to 1e15" },
    { "--price", 0, "USD", "price per GPU-hour (default: training.price_per_gpu_hour)",
      .kind = CLI_CUSTOM, .offset = OFF(goal.price), .parse = parse_price,
      .expect = "an amount per GPU-hour such as 2.5, from 1e-6 to 1e15" },
    { "--quiet", 'q', NULL, "print no table (for --csv, --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
    CLI_INPUT_FROM_OPTS(struct plan_args, in),
};

const struct cli_command cmd_plan_spec = {
    .name = "plan",
    .synopsis = "simtrain plan SCENARIO.yaml [OPTION]...\n"
                "simtrain plan --from KIND FILE... --hardware HW --gpus N [OPTION]...\n"
                "simtrain plan SCENARIO.yaml [--tokens N] --days D [--budget USD] [OPTION]...\n"
                "simtrain plan --merge FILE.csv... [--top K] [--rank time|cost]",
    .about = "Searches the parallel layouts of the scenario (tp, pp, vpp and schedule, cp, ep,\n"
             "sharding, micro-batch, recompute, sequence parallelism) and beside them CPU offload\n"
             "and the communication-overlap options, for its GPU count or the --gpus counts,\n"
             "keeps those that fit in GPU memory (and host RAM), ranks them by a closed-form\n"
             "estimate, simulates the best with the engine and prints the top K (default 5) by\n"
             "simulated step time (--rank cost: GPU-hours, for several GPU counts), each with\n"
             "what it changed from the scenario, with the rejected candidates counted by reason.\n"
             "With --days (and --tokens) it finds the fewest whole nodes that train the tokens in\n"
             "time, with --budget the cheapest plan within it. Exit status 0 when a layout fits\n"
             "(or the goal is met), 3 when none does.\n",
    .opts = plan_opts_table,
    .nopts = ARRAY_LEN(plan_opts_table),
    .positional = OFF(pos),
    .max_positional = -1,
};

static bool goal_mode(const struct plan_args *a)
{
    return a->goal.days > 0 || a->goal.budget > 0;
}

static int parse(int argc, char **argv, struct plan_args *a)
{
    enum cli_result pr;

    memset(a, 0, sizeof(*a));
    a->in.from = -1;
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
    else if (!a->merge && a->pos.n > 1 && a->in.from < 0)
        pr = cli_usage_error(&cmd_plan_spec, "more than one scenario ('%s' and '%s')",
                             a->pos.items[0], a->pos.items[1]);
    else if (goal_mode(a) && a->merge)
        pr = cli_usage_error(&cmd_plan_spec, "--days and --budget search a scenario, not --merge");
    else if (goal_mode(a) && a->o.ngpus > 0)
        pr = cli_usage_error(&cmd_plan_spec,
                             "--days and --budget choose the GPU counts themselves: leave out "
                             "--gpus");
    else if (goal_mode(a) && a->shard.n > 1)
        pr = cli_usage_error(&cmd_plan_spec, "--days and --budget do not split into --shard");
    return pr == CLI_OK ? -1 : cli_exit_status(pr);
}

/* ---- outputs -------------------------------------------------------------------------- */

static int write_file(const char *path, const char *scenario, const struct plan_result *r, int top,
                      bool json)
{
    FILE *f = files_open_output(path);
    int rc;

    if (!f) {
        fprintf(stderr, "simtrain plan: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    rc = json ? plan_write_json(scenario, r, top, f) : plan_write_csv(r, f);
    if (files_close_output(f) != 0 || rc != 0) {
        fprintf(stderr, "simtrain plan: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int run_merge(const struct plan_args *a)
{
    struct plan_cand *c;
    char msg[512];
    long n;

    if (plan_merge(a->pos.items, a->pos.n, a->o.objective, &c, &n, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "simtrain plan: error: %s\n", msg);
        return 1;
    }
    if (cli_check_outputs(&cmd_plan_spec, NULL, 0, NULL, 0) != 0) {
        free(c);
        return 1;
    }
    plan_print_merged(stdout, c, n, a->pos.n, a->o.top);
    free(c);
    return n > 0 ? 0 : 3;
}

/* ---- goal-seeking --------------------------------------------------------------------------- */

static int run_goal(const struct plan_args *a, const char *path, const struct scenario *s)
{
    struct plan_goal_result g;
    char msg[512];
    int rc = plan_goal_search(s, &a->o, &a->goal, &g,
                              !a->quiet && isatty(STDERR_FILENO) ? stderr : NULL, msg, sizeof(msg));

    if (rc < 0) {
        fprintf(stderr, "simtrain plan: error: %s\n", msg);
        plan_goal_release(&g);
        return 1;
    }
    if (!a->quiet && !(a->json && strcmp(a->json, "-") == 0) &&
        !(a->csv && strcmp(a->csv, "-") == 0))
        plan_goal_print(stdout, path, &a->goal, &g, &a->o);
    if (rc == 3)
        fprintf(stderr, "simtrain plan: %s\n", msg);
    if (a->json) {
        FILE *f = files_open_output(a->json);
        int w = f ? plan_goal_write_json(f, path, &a->goal, &g) : -1;
        if (!f || files_close_output(f) != 0 || w != 0) {
            fprintf(stderr, "simtrain plan: error: cannot write '%s': %s\n", a->json,
                    strerror(errno));
            rc = 1;
        }
    }
    if (g.have_plan && a->csv && write_file(a->csv, path, &g.plan, a->o.top, false) != 0)
        rc = 1;
    if (g.have_plan && a->plot && plot_plan(a->plot, &g.plan) != 0)
        rc = 1;
    plan_goal_release(&g);
    return rc;
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
    a.in.gpus = a.in.from >= 0 && a.o.ngpus > 0 ? a.o.gpus[0] : 0; /* the import's job size */
    s = cli_load_input(&cmd_plan_spec, &a.pos, &a.in, &a.set, &rc, NULL, NULL);
    if (s && cli_check_outputs(&cmd_plan_spec, (const char *const[]){ a.csv, a.json }, 2, &a.plot,
                               1) != 0) {
        cfg_free(s);
        s = NULL;
        rc = 1;
    }
    if (!s) {
        cli_release(&cmd_plan_spec, &a);
        return rc;
    }
    if (a.goal.tokens > 0)
        s->train.tokens = a.goal.tokens;
    if (a.goal.price > 0)
        s->train.price_gpu_hour = a.goal.price;
    if (goal_mode(&a)) {
        rc = run_goal(&a, path, s);
        cfg_free(s);
        cli_release(&cmd_plan_spec, &a);
        return rc;
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
        plan_print(stdout, path, &r, &a.o);
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
