/*
 * cmd_memory.c - `simtrain memory SCENARIO.yaml`: will it fit, and what would
 * make it fit. The report is report/memory_report.c, the what-if table
 * whatif/memory_whatif.c.
 *
 * Exit status: 0 fits, 3 does not fit (as the main command; here also when the offloaded
 * states exceed the host RAM per GPU), 1 bad input, 2 usage error.
 */
#include <stddef.h>
#include <stdio.h>

#include <errno.h>
#include <string.h>

#include "base/files.h"
#include "cli/cmd.h"
#include "cli/input.h"
#include "config/config.h"
#include "report/memory_report.h"
#include "run/run.h"
#include "whatif/memory_limits.h"
#include "whatif/memory_whatif.h"

struct memory_args {
    struct cli_list pos; /* the scenario, or with --from the configs */
    struct cli_input in;
    struct cli_overrides set;
    bool no_whatif, no_limits, quiet;
    double params; /* parameter count of the ZeRO stage table; 0 = the model's */
    const char *json, *plot;
};

#define OFF(field) offsetof(struct memory_args, field)

static const struct cli_opt memory_opts[] = {
    { "--set", 0, "KEY=VALUE", "override a key of the scenario (repeatable)", .kind = CLI_SET,
      .offset = OFF(set) },
    CLI_INPUT_OPTS(struct memory_args, in),
    { "--no-what-if", 0, NULL, "leave out the what-if table (no re-simulations)", .kind = CLI_FLAG,
      .offset = OFF(no_whatif) },
    { "--no-limits", 0, NULL,
      "leave out the limits (largest micro-batch, longest sequence, fewest GPUs: engine runs)",
      .kind = CLI_FLAG, .offset = OFF(no_limits) },
    { "--json", 0, "FILE",
      "write the peak, the modules, the batch and the limits as JSON "
      "(- for standard output)",
      .kind = CLI_STRING, .offset = OFF(json) },
    { "--plot", 0, "DIR", "draw the peak against micro-batch and sequence length into DIR",
      .kind = CLI_STRING, .offset = OFF(plot) },
    { "--quiet", 'q', NULL, "print no report (for --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
    { "--params", 0, "N",
      "parameter count of the model-states-by-ZeRO-stage table (default: the model's)",
      .kind = CLI_DOUBLE, .offset = OFF(params), .min = 1, .max = 1e18,
      .expect = "a count from 1 to 1e18" },
};

const struct cli_command cmd_memory_spec = {
    .name = "memory",
    .synopsis = "simtrain memory SCENARIO.yaml [OPTION]...\n"
                "simtrain memory --from KIND FILE... --hardware HW --gpus N [OPTION]...",
    .about = "Prints the memory per GPU at the simulated peak by category and by module, whether\n"
             "it fits the GPU with its headroom, the model states under each ZeRO stage, the\n"
             "limits (the largest micro-batch, the longest sequence and the fewest GPUs at which\n"
             "it fits, each found by bisection over engine runs, with the category that stops\n"
             "it), the effective global batch, and a what-if table: each memory technique\n"
             "(activation checkpointing, gradient accumulation, 8-bit Adam, pure bf16, CPU\n"
             "offload, ZeRO stages, LoRA, QLoRA) alone and in useful combinations, each\n"
             "re-simulated for its peak memory and step time. Exit status 0 when it fits (the\n"
             "GPU, and the host RAM for what it offloads), 3 when it does not.\n",
    .opts = memory_opts,
    .nopts = ARRAY_LEN(memory_opts),
    .positional = OFF(pos),
    .max_positional = -1,
    .positional_noun = "scenario",
};

static int write_json(const char *path, const struct run *r, const struct memory_limits *l)
{
    FILE *f = files_open_output(path);
    int rc;

    if (!f) {
        fprintf(stderr, "simtrain memory: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    rc = memory_limits_write_json(f, r, l);
    if (files_close_output(f) != 0 || rc != 0) {
        fprintf(stderr, "simtrain memory: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cmd_memory(int argc, char **argv)
{
    struct memory_args a = { .in.from = -1 };
    enum cli_result pr = cli_parse(&cmd_memory_spec, argc, argv, &a);
    struct sim_opts opts = { 0 };
    struct scenario *s;
    struct run r;
    struct memory_limits lim;
    char reason[512];
    const char *path;
    FILE *out;
    int status;

    if (pr != CLI_OK) {
        cli_release(&cmd_memory_spec, &a);
        return cli_exit_status(pr);
    }
    s = cli_load_input(&cmd_memory_spec, &a.pos, &a.in, &a.set, &status, NULL, NULL);
    if (s && cli_check_outputs(&cmd_memory_spec, &a.json, 1, &a.plot, 1) != 0) {
        cfg_free(s);
        s = NULL;
        status = 1;
    }
    if (!s) {
        cli_release(&cmd_memory_spec, &a);
        return status;
    }
    path = a.pos.items[0];
    if (run_scenario(s, &opts, &r, reason, sizeof(reason)) != 0) {
        fprintf(stderr, "%s: error: %s\n", path, reason);
        cfg_free(s);
        cli_release(&cmd_memory_spec, &a);
        return 1;
    }
    status = r.fits && memory_report_host_fits(s) ? 0 : 3;
    out = a.quiet || (a.json && strcmp(a.json, "-") == 0) ? NULL : stdout;
    if (out)
        memory_report_print(out, &r, a.params);
    if (!a.no_limits) {
        memory_limits_run(s, &r, &lim);
        if (out)
            memory_limits_print(out, s, &lim);
    } else if (out)
        memory_limits_print_batch(out, s);
    if (out && !a.no_whatif) {
        struct memory_whatif w;
        memory_whatif_run(s, &r, &w);
        memory_whatif_print(out, s, &w);
        memory_whatif_release(&w);
    }
    if (a.json && write_json(a.json, &r, a.no_limits ? NULL : &lim) != 0)
        status = 1;
    if (a.plot && !a.no_limits && memory_limits_plot(a.plot, s, &lim) != 0)
        status = 1;
    if (a.plot && a.no_limits)
        fprintf(stderr, "simtrain memory: note: --plot draws the limits; nothing to draw with "
                        "--no-limits\n");
    if (!a.no_limits)
        memory_limits_release(&lim);
    run_release(&r);
    cfg_free(s);
    cli_release(&cmd_memory_spec, &a);
    return status;
}
