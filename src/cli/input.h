/*
 * input.h - the scenario a command reads: a scenario file, or (--from KIND) the configs of
 * another tool translated by the importer (import/import.h) and loaded from memory exactly as
 * the file `simtrain import` would write loads. The run, memory, sweep and plan commands put
 * CLI_INPUT_OPTS in their option tables and call cli_load_input().
 */
#ifndef SIMTRAIN_CLI_INPUT_H
#define SIMTRAIN_CLI_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/args.h"
#include "model/scenario.h"

/* The --from options. The command sets `from` to -1 before parsing (no --from). */
struct cli_input {
    int from;                 /* enum import_kind, or -1 */
    const char *hardware;     /* --hardware */
    int gpus;                 /* --gpus; 0 = not given */
    const char *model_config; /* --model-config */
    bool strict;              /* --strict */
};

/* The name of import kind i, for the --from choices (CLI_CHOICE choice_name). */
const char *cli_import_kind(int i);

/*
 * The option rows of struct cli_input member `m` of args struct T, for a command's table:
 * CLI_INPUT_OPTS all of them; plan, whose --gpus lists the GPU counts to plan for, takes
 * CLI_INPUT_FROM_OPTS and passes its first count.
 */
#define CLI_INPUT_FROM_OPTS(T, m)                                                                  \
    { "--from",                                                                                    \
      0,                                                                                           \
      "KIND",                                                                                      \
      "read the FILE arguments as a KIND config (hf-config, axolotl, deepspeed, accelerate, "      \
      "megatron) translated as `simtrain import` does",                                            \
      .kind = CLI_CHOICE,                                                                          \
      .offset = offsetof(T, m.from),                                                               \
      .choice_name = cli_import_kind,                                                              \
      .nchoices = 5 },                                                                             \
        { "--hardware",                                                                            \
          0,                                                                                       \
          "HW",                                                                                    \
          "with --from: the hardware (a name in hardware/ or a path)",                             \
          .kind = CLI_STRING,                                                                      \
          .offset = offsetof(T, m.hardware) },                                                     \
        { "--model-config",                                                                        \
          0,                                                                                       \
          "CONFIG.json",                                                                           \
          "with --from: the model's Hugging Face config.json (the config names a hub model)",      \
          .kind = CLI_STRING,                                                                      \
          .offset = offsetof(T, m.model_config) },                                                 \
    {                                                                                              \
        "--strict", 0, NULL,                                                                       \
            "with --from: refuse any ignored or approximated key that affects memory or time",     \
            .kind = CLI_FLAG, .offset = offsetof(T, m.strict)                                      \
    }
#define CLI_INPUT_OPTS(T, m)                                                                       \
    CLI_INPUT_FROM_OPTS(T, m),                                                                     \
    {                                                                                              \
        "--gpus", 0, "N", "with --from: the GPUs of the job",                                      \
            .kind = CLI_INT, .offset = offsetof(T, m.gpus), .min = 1, .max = 1048576               \
    }

/*
 * The scenario of the command's positional arguments `pos` with the --set overrides `set`:
 * the one scenario file, or with --from the translated FILEs. Prints diagnostics and returns
 * NULL on any error; *status is then the exit status (2 for a usage error, 1 else). With
 * --from, *text (when not NULL) receives the YAML the scenario was loaded from (heap, the
 * caller frees it) and the scenario's path is pos[0]. Free the scenario with cfg_free().
 */
struct scenario *cli_load_input(const struct cli_command *cmd, const struct cli_list *pos,
                                const struct cli_input *in, const struct cli_overrides *set,
                                int *status, char **text, size_t *len);

/* The name the --from text is loaded under ("<imported from FILE>", heap), for reloads. */
char *cli_input_text_name(const struct cli_list *pos);

#endif
