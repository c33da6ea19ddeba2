/*
 * cmd_import.c - `simtrain import KIND FILE... --hardware H --gpus N [--model-config
 * CONFIG.json] [-o OUT.yaml] [--strict]`: the configs of another tool as an editable simtrain
 * scenario (a workload for hf-config without --hardware). The translation is import/; the
 * same text is what --from loads in memory.
 *
 * Exit status: 0 written; 1 a config refused or unreadable (diagnostics printed); 2 usage.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "cli/cmd.h"
#include "config/config.h"
#include "import/import.h"

struct import_args {
    struct cli_list pos; /* KIND FILE... */
    const char *hardware, *model_config, *out;
    int gpus;
    bool strict;
    struct cli_overrides set;
};

#define OFF(field) offsetof(struct import_args, field)

static const struct cli_opt import_opts[] = {
    { "--hardware", 0, "HW",
      "the hardware the scenario runs on (a name in hardware/ or a path); without it hf-config "
      "writes a workload",
      .kind = CLI_STRING, .offset = OFF(hardware) },
    { "--gpus", 0, "N", "GPUs of the job (a training config does not say; the launcher does)",
      .kind = CLI_INT, .offset = OFF(gpus), .min = 1, .max = 1048576 },
    { "--model-config", 0, "CONFIG.json",
      "the model's Hugging Face config.json, when the config names a hub model", .kind = CLI_STRING,
      .offset = OFF(model_config) },
    { "--output", 'o', "OUT.yaml", "write the scenario to OUT.yaml (default: standard output)",
      .kind = CLI_STRING, .offset = OFF(out) },
    { "--strict", 0, NULL, "refuse any ignored or approximated key that affects memory or time",
      .kind = CLI_FLAG, .offset = OFF(strict) },
    { "--set", 0, "KEY=VALUE",
      "a scenario key the configs do not give (training.seq_len for accelerate), or over what "
      "they say (repeatable)",
      .kind = CLI_SET, .offset = OFF(set) },
};

const struct cli_command cmd_import_spec = {
    .name = "import",
    .synopsis = "simtrain import KIND FILE... --hardware HW --gpus N [OPTION]...",
    .about =
        "Translates the configs of another tool into an editable simtrain scenario. KIND is\n"
        "hf-config (a Hugging Face config.json: the workload), axolotl (an Axolotl YAML; its\n"
        "deepspeed: JSON and fsdp_config are followed), deepspeed (a DeepSpeed JSON),\n"
        "accelerate (an `accelerate config` YAML) or megatron (a file of Megatron-LM / NeMo\n"
        "arguments). Every key of the scenario names the file, line and key it came from, and\n"
        "the text ends with the keys ignored or approximated; what simtrain cannot express is\n"
        "refused at its key. `simtrain memory --from KIND FILE...` runs the same translation.\n"
        "docs/import.md has the mapping of every kind.\n",
    .opts = import_opts,
    .nopts = ARRAY_LEN(import_opts),
    .positional = OFF(pos),
    .max_positional = -1,
    .positional_noun = "file",
};

static int write_text(const char *out, const char *text, size_t len)
{
    FILE *f = files_open_output(out ? out : "-");

    if (!f) {
        fprintf(stderr, "simtrain import: error: cannot write '%s': %s\n", out ? out : "-",
                strerror(errno));
        return 1;
    }
    fwrite(text, 1, len, f);
    if (files_close_output(f) != 0) {
        fprintf(stderr, "simtrain import: error: cannot write '%s': %s\n", out ? out : "-",
                strerror(errno));
        return 1;
    }
    return 0;
}

int cmd_import(int argc, char **argv)
{
    struct import_args a = { 0 };
    enum cli_result pr = cli_parse(&cmd_import_spec, argc, argv, &a);
    struct import_request rq = { 0 };
    enum import_kind kind;
    char *text = NULL;
    size_t len = 0;
    int status = 1;

    if (pr == CLI_OK && a.pos.n < 2)
        pr = cli_usage_error(&cmd_import_spec, a.pos.n ? "no file given" : "no kind given (%s)",
                             import_kind_list());
    if (pr == CLI_OK && import_kind_parse(a.pos.items[0], &kind) != 0)
        pr = cli_usage_error(&cmd_import_spec, "unknown kind '%s' (%s)", a.pos.items[0],
                             import_kind_list());
    if (pr != CLI_OK) {
        cli_release(&cmd_import_spec, &a);
        return cli_exit_status(pr);
    }
    rq = (struct import_request){ .kind = kind,
                                  .files = a.pos.items + 1,
                                  .nfiles = a.pos.n - 1,
                                  .hardware = a.hardware,
                                  .gpus = a.gpus,
                                  .model_config = a.model_config,
                                  .strict = a.strict,
                                  .sets = a.set.ovr,
                                  .nsets = a.set.n,
                                  .to_file = true };
    text = import_scenario(&rq, stderr, &len);
    if (text && cli_check_outputs(&cmd_import_spec, &a.out, 1, NULL, 0) == 0)
        status = write_text(a.out, text, len);
    free(text);
    cli_release(&cmd_import_spec, &a);
    return status;
}
