/*
 * import.h - reading the configs people already have: a Hugging Face config.json, an Axolotl
 * YAML, a DeepSpeed JSON, an `accelerate config` YAML or a file of Megatron-LM / NeMo
 * arguments, translated into an editable simtrain scenario (docs/import.md).
 *
 * The result is YAML text: every key carries a comment naming the source file, line and key it
 * came from (or the default it takes and where that default is defined, or the `"auto"` it
 * resolved), and the text ends with the list of source keys that were ignored or approximated.
 * `simtrain import` writes it; `--from` on the run, memory, sweep and plan commands loads it in
 * memory (cfg_load_scenario_mem) exactly as a file of that text would load.
 *
 * What cannot be expressed is refused at the key that asks for it (`file:line:col: error:`),
 * never approximated in silence; with `strict` every ignored or approximated key that affects
 * memory or step time is refused too. Bad JSON or YAML gets the same treatment as scenarios.
 */
#ifndef SIMTRAIN_IMPORT_IMPORT_H
#define SIMTRAIN_IMPORT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cfg_override;

enum import_kind {
    IMPORT_HF_CONFIG,  /* a Hugging Face config.json: the workload */
    IMPORT_AXOLOTL,    /* an Axolotl training YAML (and the DeepSpeed JSON it names) */
    IMPORT_DEEPSPEED,  /* a DeepSpeed config JSON */
    IMPORT_ACCELERATE, /* an `accelerate config` YAML (and its DeepSpeed JSON) */
    IMPORT_MEGATRON,   /* Megatron-LM / NeMo command-line arguments, one file */
    IMPORT_KIND_COUNT
};

/* One import: what to read and for which machine. */
struct import_request {
    enum import_kind kind;
    const char *const *files; /* the config files, as given; files[0] names the scenario */
    int nfiles;
    const char *hardware;     /* --hardware: a name or path; NULL (hf-config only): a workload */
    int gpus;                 /* --gpus; 0 = not given */
    const char *model_config; /* --model-config CONFIG.json, or NULL */
    bool strict;              /* --strict */
    const char *command;      /* the command line to name in the header comment, or NULL */
    /*
     * --set overrides: the importer writes the keys the sources do not give (an accelerate
     * config has no sequence length) from them, naming --set; the loader applies them all
     * on top afterwards (--from).
     */
    const struct cfg_override *sets;
    int nsets;
    bool to_file; /* `simtrain import`: --set on hardware keys is refused (the text names it) */
};

/* The kind named `name` ("axolotl", ...): 0, or -1 when it is none of them. */
int import_kind_parse(const char *name, enum import_kind *out);
const char *import_kind_name(enum import_kind k);

/* "hf-config | axolotl | deepspeed | accelerate | megatron", for usage messages. */
const char *import_kind_list(void);

/*
 * Translate the files of `rq` into scenario YAML (a workload for hf-config without hardware).
 * Returns the text (heap, NUL-terminated, *len bytes; the caller frees it), or NULL after
 * printing compiler-style diagnostics on `diag`. Reads the files through the config loader's
 * reader, so they count as inputs of the run (base/files.h).
 */
char *import_scenario(const struct import_request *rq, FILE *diag, size_t *len);

/*
 * The name the YAML text of an import is loaded under for --from (diagnostics of the loader
 * point into it): "<imported from FILE>" (heap; the caller frees it).
 */
char *import_text_name(const struct import_request *rq);

#endif
