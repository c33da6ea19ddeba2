/*
 * cmd.h - subcommands of the simtrain command line. Each takes the arguments
 * after its name (argv[0] is the subcommand name), prints its own usage and
 * diagnostics, and returns the process exit status.
 */
#ifndef SIMTRAIN_CMD_H
#define SIMTRAIN_CMD_H

#include <stdbool.h>

/* `simtrain calibrate MEASUREMENTS.csv --hardware H [--output F] [--check]` (cmd_calibrate.c) */
int cmd_calibrate(int argc, char **argv);

/* `simtrain validate RUNS.csv [--json F] [--plot DIR] [--markdown]` (cmd_validate.c) */
int cmd_validate(int argc, char **argv);

/* `simtrain collective --hardware H [--op OP] [--gpus N] ...` (cmd_collective.c) */
int cmd_collective(int argc, char **argv);

/* `simtrain memory SCENARIO.yaml [--set K=V]... [--no-what-if] [--params N]` (cmd_memory.c) */
int cmd_memory(int argc, char **argv);

/* `simtrain schema`: print the YAML reference (cmd_schema.c) */
int cmd_schema(int argc, char **argv);

/* `simtrain sweep SCENARIO.yaml --vary KEY=V1,V2,... [--csv F] [--plot DIR]` (cmd_sweep.c) */
int cmd_sweep(int argc, char **argv);

/* `simtrain plan SCENARIO.yaml [--gpus N] [--top K] [--plot DIR]` (cmd_plan.c) */
int cmd_plan(int argc, char **argv);

struct cfg_override;

/* Parse `--shard K/N` (0 <= K < N): 0, or -1 when malformed (cmd_sweep.c). */
int cli_parse_shard(const char *text, int *k, int *n);

/*
 * A positional argument `arg` of subcommand `cmd` (sweep, plan): under --merge (`merge`) one
 * more input file, appended to *files; else the scenario, which may be given once. 0, or -1
 * with the message printed (cmd_sweep.c).
 */
int cli_take_positional(const char *cmd, char *arg, bool merge, char ***files, int *nfiles,
                        const char **scenario);

/*
 * Take a `--set KEY=VALUE` (or `--set=KEY=VALUE`) at argv[*i], advancing *i past
 * its value and appending to *ovr. Returns 1 when taken, 0 when argv[*i] is not
 * --set, -1 on a malformed argument (message printed).
 */
int cli_take_set(int argc, char **argv, int *i, struct cfg_override **ovr, int *novr);
void cli_free_overrides(struct cfg_override *ovr, int novr);

#endif
