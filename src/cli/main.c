/*
 * main.c - the simtrain command line: `simtrain SCENARIO.yaml [options]`
 * simulates one training step (cmd_run.c); `simtrain COMMAND ...` runs a
 * subcommand (cmd_*.c, cmd.h). The help of each command is generated from its
 * option table (args.h); this file prints the top-level help and dispatches.
 *
 * Exit status: 0 success; 1 bad input (diagnostics printed); 2 usage error;
 * 3 the simulated configuration does not fit in GPU memory.
 */
#include <stdio.h>
#include <string.h>

#include "base/paths.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "report/report.h"

static const struct subcommand subcommands[] = {
    { &cmd_memory_spec, "will it fit in GPU memory, and what would make it fit", cmd_memory },
    { &cmd_collective_spec, "an nccl-tests style table of one collective", cmd_collective },
    { &cmd_validate_spec, "simulate measured runs and compare", cmd_validate },
    { &cmd_calibrate_spec, "fit the cost-model parameters to kernel measurements", cmd_calibrate },
    { &cmd_sweep_spec, "simulate the scenario over the product of --vary axes", cmd_sweep },
    { &cmd_plan_spec, "search the parallel layouts that fit, ranked by step time or cost",
      cmd_plan },
    { &cmd_schema_spec, "print the YAML reference (Markdown)", cmd_schema },
    { &cmd_frameworks_spec, "list the training-framework profiles and their defaults",
      cmd_frameworks },
    { &cmd_import_spec, "translate an Axolotl, DeepSpeed, accelerate, Megatron or HF config",
      cmd_import },
    { &cmd_serve_spec, "the lab in a browser: the page and its JSON API over HTTP", cmd_serve },
};

static void usage(FILE *f, bool full)
{
    fputs("usage: simtrain SCENARIO.yaml [OPTION]...\n"
          "       simtrain COMMAND [ARGUMENT]... [OPTION]...\n"
          "       simtrain --version | --help\n",
          f);
    if (!full)
        return;
    fputs("\nSimulates one training step of SCENARIO.yaml and prints the report.\n"
          "\noptions:\n",
          f);
    cli_print_options(&cmd_run_spec, f);
    fputs("\ncommands:\n", f);
    for (size_t i = 0; i < ARRAY_LEN(subcommands); i++)
        fprintf(f, "  %-12s %s\n", subcommands[i].spec->name, subcommands[i].summary);
    fputs("\n'simtrain COMMAND --help' lists the arguments and options of a command.\n", f);
}

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
    paths_init(argc > 0 ? argv[0] : NULL);
    if (argc < 2) {
        usage(stderr, false);
        return 2;
    }
    if ((strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
         strcmp(argv[1], "--version") == 0) &&
        argc > 2) {
        fprintf(stderr, "simtrain: error: %s takes no argument, got '%s'\n", argv[1], argv[2]);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout, true);
        return finish(0);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("simtrain %s\n", SIMTRAIN_VERSION_STRING);
        return finish(0);
    }
    if (strcmp(argv[1], "run") == 0)
        return finish(cmd_run(argc - 1, argv + 1) & 0xff);
    for (size_t i = 0; i < ARRAY_LEN(subcommands); i++)
        if (strcmp(argv[1], subcommands[i].spec->name) == 0)
            return finish(subcommands[i].fn(argc - 1, argv + 1) & 0xff);
    return finish(cmd_run(argc, argv));
}
