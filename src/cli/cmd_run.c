/*
 * cmd_run.c - `simtrain SCENARIO.yaml [options]`: simulate one training step
 * and print the report, with the JSON result, the trace and the charts on
 * request.
 *
 * Exit status: 0 success; 1 bad input (diagnostics printed); 2 usage error;
 * 3 the simulated configuration does not fit in GPU memory (the report is
 * still printed, with an error diagnostic).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/input.h"
#include "config/config.h"
#include "report/plot.h"
#include "report/report.h"
#include "run/rank_list.h"
#include "run/run.h"
#include "serve/page.h"

struct run_args {
    struct cli_list pos; /* the scenario, or with --from the configs */
    struct cli_input in;
    const char *json, *trace, *plot, *html;
    const char *trace_ranks; /* --trace-ranks LIST as given, or NULL */
    int ranks;               /* index into ranks_choices */
    bool quiet;
    struct cli_overrides set;
};

static const char *const ranks_choices[] = { "stage", "all", NULL };

#define OFF(field) offsetof(struct run_args, field)

static const struct cli_opt run_opts[] = {
    { "--json", 0, "FILE", "write the result as JSON (- for standard output)", .kind = CLI_STRING,
      .offset = OFF(json) },
    { "--trace", 0, "FILE", "write the step as a Chrome / Perfetto trace (- for standard output)",
      .kind = CLI_STRING, .offset = OFF(trace) },
    { "--trace-ranks", 0, "LIST", "trace only these ranks (e.g. 0-7,64)", .kind = CLI_STRING,
      .offset = OFF(trace_ranks) },
    { "--plot", 0, "DIR", "draw the step's charts into DIR (data files, and pictures with gnuplot)",
      .kind = CLI_STRING, .offset = OFF(plot) },
    { "--html", 0, "FILE",
      "write one self-contained page of the run (breakdown, timeline, memory, the scenario), "
      "readable offline",
      .kind = CLI_STRING, .offset = OFF(html) },
    { "--ranks", 0, "all|stage",
      "simulate every rank (all), or one rank per pipeline stage (stage, the default)",
      .kind = CLI_CHOICE, .offset = OFF(ranks), .choices = ranks_choices },
    { "--set", 0, "KEY=VALUE", "override a key of the scenario, e.g. parallelism.tp=4 (repeatable)",
      .kind = CLI_SET, .offset = OFF(set) },
    { "--quiet", 'q', NULL, "print no report (for --json, --trace, --plot and --html)",
      .kind = CLI_FLAG, .offset = OFF(quiet) },
    CLI_INPUT_OPTS(struct run_args, in),
};

const struct cli_command cmd_run_spec = {
    .name = NULL,
    .synopsis = "simtrain SCENARIO.yaml [OPTION]...\n"
                "simtrain --from KIND FILE... --hardware HW --gpus N [OPTION]...",
    .about = "Simulates one training step of the scenario and prints the report: step time and\n"
             "its breakdown, throughput, MFU, memory per GPU and communication.\n",
    .opts = run_opts,
    .nopts = ARRAY_LEN(run_opts),
    .positional = OFF(pos),
    .max_positional = -1,
    .positional_noun = "scenario",
};

static int report_oom(const struct scenario *s, const struct run *r)
{
    struct cfg_error err;
    const struct rank_result *rr = &r->sim.ranks[r->peak_idx];
    const double gib = 1024.0 * 1024.0 * 1024.0;

    fflush(stdout);
    memset(&err, 0, sizeof(err));
    snprintf(err.path, sizeof(err.path), "workload");
    snprintf(err.msg, sizeof(err.msg),
             "'%s' does not fit: peak %.1f GiB per GPU (rank %d) exceeds the %.1f GiB of '%s'; "
             "see 'simtrain memory' for what would make it fit",
             s->model.name, r->peak_bytes / gib, rr->rank, r->capacity_bytes / gib,
             s->hw.gpu.model);
    cfg_report_error(s, &err, stderr);
    return 3;
}

/*
 * The simulation options of the arguments, the trace's rank filter in *keep
 * (released by the caller); 0, or the exit status of a bad argument with a message.
 */
static int sim_options(const struct run_args *a, const struct scenario *s, struct sim_opts *opts,
                       struct rank_list *keep)
{
    char err[256];

    memset(opts, 0, sizeof(*opts));
    opts->all_ranks = a->ranks == 1;
    opts->trace = a->trace != NULL || a->plot != NULL || a->html != NULL;
    if (a->trace_ranks) {
        if (!opts->trace) {
            fprintf(stderr, "simtrain: error: --trace-ranks needs --trace, --plot or --html\n");
            return 2;
        }
        if (rank_list_parse("--trace-ranks", a->trace_ranks, s->gpus, keep, err, sizeof(err)) !=
            0) {
            fprintf(stderr, "simtrain: error: %s\n", err);
            return 1;
        }
        opts->trace_ranks = keep->ranks;
        opts->ntrace_ranks = keep->n;
    }
    if (s->sim.straggler_rank >= 0 && !opts->all_ranks)
        fprintf(stderr, "simtrain: note: simulation.straggler_rank needs --ranks all; ignored\n");
    return 0;
}

/* With --trace-ranks: which ranks the trace kept, on stderr. */
static void note_kept(const struct run_args *a, const struct run *r)
{
    size_t len = 12 * (size_t)r->sim.nranks + 1;
    char *kept = xmalloc(len);
    int n = rank_list_traced(&r->sim, kept, len);

    fprintf(stderr, "simtrain: note: the trace keeps %s%s (%d of %d simulated ranks%s)\n",
            n ? "ranks " : "no rank", kept, n, r->sim.nranks,
            a->ranks == 1 ? "" : "; --ranks all simulates every rank");
    free(kept);
}

/* --html FILE: the page of the run with the text of its scenario (page.h). */
static int html_page(const struct run_args *a, const struct run *r)
{
    size_t len;
    const char *text = cfg_scenario_text(r->s, &len);

    return page_write_run(a->html, r, a->pos.items[0], text, len);
}

static int write_outputs(const struct run_args *a, const struct run *r)
{
    int status = 0;

    if (!a->quiet)
        report_text(stdout, r);
    if (a->json && report_json(a->json, r) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", a->json, strerror(errno));
        status = 1;
    }
    if (a->trace && trace_write(a->trace, r) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", a->trace, strerror(errno));
        status = 1;
    }
    if (a->plot && plot_run(a->plot, r) != 0)
        status = 1;
    if (a->html && html_page(a, r) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", a->html, strerror(errno));
        status = 1;
    }
    return status;
}

int cmd_run(int argc, char **argv)
{
    struct run_args a = { .in.from = -1 };
    enum cli_result pr = cli_parse(&cmd_run_spec, argc, argv, &a);
    struct scenario *s;
    struct sim_opts opts;
    struct rank_list keep = { 0 };
    struct run r;
    char reason[512];
    int status;

    if (pr != CLI_OK) {
        cli_release(&cmd_run_spec, &a);
        return cli_exit_status(pr);
    }
    s = cli_load_input(&cmd_run_spec, &a.pos, &a.in, &a.set, &status, NULL, NULL);
    if (!s || cli_check_outputs(&cmd_run_spec, (const char *const[]){ a.json, a.trace, a.html }, 3,
                                &a.plot, 1) != 0) {
        status = s ? 1 : status;
        cfg_free(s);
        cli_release(&cmd_run_spec, &a);
        return status;
    }
    status = sim_options(&a, s, &opts, &keep);
    if (status != 0) {
        rank_list_release(&keep);
        cfg_free(s);
        cli_release(&cmd_run_spec, &a);
        return status;
    }
    if (run_scenario(s, &opts, &r, reason, sizeof(reason)) != 0) {
        fprintf(stderr, "%s: error: %s\n", a.pos.items[0], reason);
        rank_list_release(&keep);
        cfg_free(s);
        cli_release(&cmd_run_spec, &a);
        return 1;
    }
    if (a.trace_ranks)
        note_kept(&a, &r);
    status = write_outputs(&a, &r);
    if (!r.fits && status == 0)
        status = report_oom(s, &r);
    run_release(&r);
    rank_list_release(&keep);
    cfg_free(s);
    cli_release(&cmd_run_spec, &a);
    return status;
}
