/*
 * cmd.h - the commands of the simtrain command line: `simtrain SCENARIO.yaml`
 * (cmd_run.c) and the subcommands (cmd_*.c). Each command declares its
 * options in one table (args.h), takes the arguments after its name (argv[0]
 * is the command's name), prints its own diagnostics and returns the process
 * exit status: 0 success, 1 bad input, 2 usage error, 3 does not fit in GPU
 * memory (run, memory, plan).
 *
 * A command is thin: parse, call the module that does the work, print, and
 * turn the outcome into the exit status.
 */
#ifndef SIMTRAIN_CMD_H
#define SIMTRAIN_CMD_H

#include "cli/args.h"

struct subcommand {
    const struct cli_command *spec; /* name, options, help */
    const char *summary;            /* one line for `simtrain --help` */
    int (*fn)(int argc, char **argv);
};

/* The run command, `simtrain SCENARIO.yaml [options]` (cmd_run.c). */
extern const struct cli_command cmd_run_spec;
int cmd_run(int argc, char **argv);

extern const struct cli_command cmd_memory_spec, cmd_collective_spec, cmd_validate_spec,
    cmd_calibrate_spec, cmd_sweep_spec, cmd_plan_spec, cmd_schema_spec, cmd_frameworks_spec,
    cmd_import_spec, cmd_serve_spec;

int cmd_memory(int argc, char **argv);     /* cmd_memory.c */
int cmd_collective(int argc, char **argv); /* cmd_collective.c */
int cmd_validate(int argc, char **argv);   /* cmd_validate.c */
int cmd_calibrate(int argc, char **argv);  /* cmd_calibrate.c */
int cmd_sweep(int argc, char **argv);      /* cmd_sweep.c */
int cmd_plan(int argc, char **argv);       /* cmd_plan.c */
int cmd_schema(int argc, char **argv);     /* cmd_schema.c */
int cmd_frameworks(int argc, char **argv); /* cmd_frameworks.c */
int cmd_import(int argc, char **argv);     /* cmd_import.c */
int cmd_serve(int argc, char **argv);      /* cmd_serve.c */

#endif
