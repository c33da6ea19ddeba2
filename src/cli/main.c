/*
 * main.c - the simtrain command line: `simtrain SCENARIO.yaml [options]`
 * simulates one training step; subcommands live in cmd_*.c (cmd.h).
 *
 * Exit status: 0 success; 1 bad input (diagnostics printed); 2 usage error;
 * 3 the simulated configuration does not fit in GPU memory (the report is
 * still printed, with an error diagnostic).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "config/config.h"
#include "config/schema.h"
#include "report/plot.h"
#include "report/report.h"
#include "run/rank_list.h"
#include "run/run.h"

static void usage(FILE *f)
{
    fputs("usage: simtrain SCENARIO.yaml [--json FILE] [--trace FILE] [--plot DIR]\n"
          "                [--ranks all|stage] [--trace-ranks LIST] [--set KEY=VALUE]...\n"
          "                [--quiet]\n"
          "       simtrain memory SCENARIO.yaml [--set KEY=VALUE]...\n"
          "       simtrain collective --hardware H --op OP --gpus N [--sizes 8:8G] [--algo A]\n"
          "       simtrain validate RUNS.csv [--json FILE] [--plot DIR] [--markdown]\n"
          "       simtrain calibrate MEASUREMENTS.csv --hardware H [--output FILE]\n"
          "       simtrain sweep SCENARIO.yaml --vary KEY=V1,V2,... [--csv FILE] [--json FILE]\n"
          "                      [--plot DIR] [--weak] [--shard K/N] [--mpi]\n"
          "       simtrain plan SCENARIO.yaml [--gpus N] [--top K] [--rank time|cost]\n"
          "                     [--plot DIR]\n"
          "       simtrain schema          print the YAML reference (Markdown)\n"
          "       simtrain --version\n",
          f);
}

struct run_args {
    const char *scenario;
    const char *json, *trace, *plot;
    const char *trace_ranks; /* --trace-ranks LIST: the global ranks the trace keeps */
    bool all_ranks, quiet;
    struct cfg_override *ovr;
    int novr;
};

/* Parse `--set K=V` at argv[*i]; shared by the subcommands that take overrides. */
int cli_take_set(int argc, char **argv, int *i, struct cfg_override **ovr, int *novr)
{
    const char *a = argv[*i];
    const char *val = NULL;

    if (strcmp(a, "--set") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "simtrain: error: --set needs KEY=VALUE\n");
            return -1;
        }
        val = argv[++*i];
    } else if (strncmp(a, "--set=", 6) == 0) {
        val = a + 6;
    } else {
        return 0;
    }
    *ovr = xrealloc(*ovr, sizeof(**ovr) * (size_t)(*novr + 1));
    if (cfg_override_init(&(*ovr)[*novr], val, stderr) != 0)
        return -1;
    (*novr)++;
    return 1;
}

void cli_free_overrides(struct cfg_override *ovr, int novr)
{
    int i;

    for (i = 0; i < novr; i++)
        cfg_override_release(&ovr[i]);
    free(ovr);
}

static int parse_run_args(int argc, char **argv, struct run_args *a)
{
    int i, rc;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        const char *s = argv[i];
        if ((rc = cli_take_set(argc, argv, &i, &a->ovr, &a->novr)) != 0) {
            if (rc < 0)
                return -1;
        } else if ((strcmp(s, "--json") == 0 || strcmp(s, "--trace") == 0) && i + 1 < argc) {
            *(s[2] == 'j' ? &a->json : &a->trace) = argv[++i];
        } else if (strcmp(s, "--plot") == 0 && i + 1 < argc) {
            a->plot = argv[++i];
        } else if (strcmp(s, "--trace-ranks") == 0 && i + 1 < argc) {
            a->trace_ranks = argv[++i];
        } else if (strcmp(s, "--ranks") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "all") != 0 && strcmp(v, "stage") != 0) {
                fprintf(stderr, "simtrain: error: --ranks takes 'all' or 'stage', got '%s'\n", v);
                return -1;
            }
            a->all_ranks = strcmp(v, "all") == 0;
        } else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
            a->quiet = true;
        } else if (strcmp(s, "--json") == 0 || strcmp(s, "--trace") == 0 ||
                   strcmp(s, "--plot") == 0 || strcmp(s, "--ranks") == 0 ||
                   strcmp(s, "--trace-ranks") == 0) {
            fprintf(stderr, "simtrain: error: %s needs a value\n", s);
            return -1;
        } else if (s[0] == '-' && s[1] != '\0') {
            fprintf(stderr, "simtrain: error: unknown option '%s'\n", s);
            return -1;
        } else if (!a->scenario) {
            a->scenario = s;
        } else {
            fprintf(stderr, "simtrain: error: more than one scenario ('%s' and '%s')\n",
                    a->scenario, s);
            return -1;
        }
    }
    if (!a->scenario) {
        usage(stderr);
        return -1;
    }
    if (a->trace_ranks && !a->trace && !a->plot) {
        fprintf(stderr, "simtrain: error: --trace-ranks needs --trace or --plot\n");
        return -1;
    }
    return 0;
}

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

static int cmd_run(int argc, char **argv)
{
    struct run_args a;
    struct scenario *s;
    struct sim_opts opts = { 0 };
    struct rank_list keep = { 0 };
    struct run r;
    char reason[512];
    int status = 0;

    if (parse_run_args(argc, argv, &a) != 0) {
        cli_free_overrides(a.ovr, a.novr);
        return 2;
    }
    s = cfg_load_scenario(a.scenario, a.ovr, a.novr, stderr);
    cli_free_overrides(a.ovr, a.novr);
    if (!s)
        return 1;
    opts.all_ranks = a.all_ranks;
    opts.trace = a.trace != NULL || a.plot != NULL;
    if (a.trace_ranks) {
        if (rank_list_parse("--trace-ranks", a.trace_ranks, s->gpus, &keep, reason,
                            sizeof(reason)) != 0) {
            fprintf(stderr, "simtrain: error: %s\n", reason);
            cfg_free(s);
            return 1;
        }
        opts.trace_ranks = keep.ranks;
        opts.ntrace_ranks = keep.n;
    }
    if (s->sim.straggler_rank >= 0 && !a.all_ranks)
        fprintf(stderr, "simtrain: note: simulation.straggler_rank needs --ranks all; ignored\n");
    if (run_scenario(s, &opts, &r, reason, sizeof(reason)) != 0) {
        fprintf(stderr, "%s: error: %s\n", a.scenario, reason);
        rank_list_release(&keep);
        cfg_free(s);
        return 1;
    }
    if (a.trace_ranks) {
        size_t len = 12 * (size_t)r.sim.nranks + 1;
        char *kept = xmalloc(len);
        int n = rank_list_traced(&r.sim, kept, len);
        fprintf(stderr, "simtrain: note: the trace keeps %s%s (%d of %d simulated ranks%s)\n",
                n ? "ranks " : "no rank", kept, n, r.sim.nranks,
                a.all_ranks ? "" : "; --ranks all simulates every rank");
        free(kept);
    }
    if (!a.quiet)
        report_text(stdout, &r);
    if (a.json && report_json(a.json, &r) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", a.json, strerror(errno));
        status = 1;
    }
    if (a.trace && trace_write(a.trace, &r) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", a.trace, strerror(errno));
        status = 1;
    }
    if (a.plot && plot_run(a.plot, &r) != 0)
        status = 1;
    if (!r.fits && status == 0)
        status = report_oom(s, &r);
    run_release(&r);
    rank_list_release(&keep);
    cfg_free(s);
    return status;
}

struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
    { "run", cmd_run },           { "collective", cmd_collective },
    { "validate", cmd_validate }, { "calibrate", cmd_calibrate },
    { "schema", cmd_schema },     { "memory", cmd_memory },
    { "sweep", cmd_sweep },       { "plan", cmd_plan },
};

/*
 * A report that could not be written (full disk, closed pipe) must not exit 0: flush
 * standard output and turn a write error into exit status 1.
 */
static int finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "simtrain: error: cannot write to standard output\n");
        return rc ? rc : 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    size_t i;

    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return finish(0);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("simtrain %s\n", SIMTRAIN_VERSION_STRING);
        return finish(0);
    }
    for (i = 0; i < ARRAY_LEN(subcommands); i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return finish(subcommands[i].fn(argc - 1, argv + 1) & 0xff);
    return finish(cmd_run(argc, argv));
}
