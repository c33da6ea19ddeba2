/*
 * cmd_memory.c - `simtrain memory SCENARIO.yaml`: will it fit, and what would
 * make it fit. The report is report/memory_report.c, the what-if table
 * whatif/memory_whatif.c.
 *
 * Exit status: 0 fits, 3 does not fit (as the main command), 1 bad input,
 * 2 usage error.
 */
#include <stddef.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "cli/input.h"
#include "config/config.h"
#include "report/memory_report.h"
#include "run/run.h"
#include "whatif/memory_whatif.h"

struct memory_args {
    struct cli_list pos; /* the scenario, or with --from the configs */
    struct cli_input in;
    struct cli_overrides set;
    bool no_whatif;
    double params; /* parameter count of the ZeRO stage table; 0 = the model's */
};

#define OFF(field) offsetof(struct memory_args, field)

static const struct cli_opt memory_opts[] = {
    { "--set", 0, "KEY=VALUE", "override a key of the scenario (repeatable)", .kind = CLI_SET,
      .offset = OFF(set) },
    CLI_INPUT_OPTS(struct memory_args, in),
    { "--no-what-if", 0, NULL, "leave out the what-if table (no re-simulations)", .kind = CLI_FLAG,
      .offset = OFF(no_whatif) },
    { "--params", 0, "N",
      "parameter count of the model-states-by-ZeRO-stage table (default: the model's)",
      .kind = CLI_DOUBLE, .offset = OFF(params), .min = 0, .max = 1e18, .min_open = true,
      .expect = "a positive count" },
};

const struct cli_command cmd_memory_spec = {
    .name = "memory",
    .synopsis = "simtrain memory SCENARIO.yaml [OPTION]...\n"
                "simtrain memory --from KIND FILE... --hardware HW --gpus N [OPTION]...",
    .about = "Prints the memory per GPU at the simulated peak by category, whether it fits the\n"
             "GPU with its headroom, the model states under each ZeRO stage, and a what-if\n"
             "table: each memory technique (activation checkpointing, gradient accumulation,\n"
             "8-bit Adam, pure bf16, CPU offload, ZeRO stages, LoRA, QLoRA) alone and in useful\n"
             "combinations, each re-simulated for its peak memory and step time. Exit status 0\n"
             "when it fits, 3 when it does not.\n",
    .opts = memory_opts,
    .nopts = ARRAY_LEN(memory_opts),
    .positional = OFF(pos),
    .max_positional = -1,
    .positional_noun = "scenario",
};

int cmd_memory(int argc, char **argv)
{
    struct memory_args a = { .in.from = -1 };
    enum cli_result pr = cli_parse(&cmd_memory_spec, argc, argv, &a);
    struct sim_opts opts = { 0 };
    struct scenario *s;
    struct run r;
    char reason[512];
    const char *path;
    int status;

    if (pr != CLI_OK) {
        cli_release(&cmd_memory_spec, &a);
        return cli_exit_status(pr);
    }
    s = cli_load_input(&cmd_memory_spec, &a.pos, &a.in, &a.set, &status, NULL, NULL);
    if (s && cli_check_outputs(&cmd_memory_spec, NULL, 0, NULL, 0) != 0) {
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
    memory_report_print(stdout, &r, a.params);
    if (!a.no_whatif) {
        struct memory_whatif w;
        memory_whatif_run(s, &r, &w);
        memory_whatif_print(stdout, s, &w);
        memory_whatif_release(&w);
    }
    status = r.fits ? 0 : 3;
    run_release(&r);
    cfg_free(s);
    cli_release(&cmd_memory_spec, &a);
    return status;
}
