/*
 * import_internal.h - what the importers of src/import/ share: the import in progress (the
 * source files, the scenario keys written so far with their comments, the notes on ignored and
 * approximated keys), reading source scalars the way their tools read them, diagnostics at
 * source keys, and the facts one file leaves for another (the model's shape for DeepSpeed's
 * "auto" sizes, the decoder class for FSDP's wrap check). Private to src/import/.
 *
 * Scalars. Axolotl and accelerate read YAML with PyYAML's safe_load (YAML 1.1): `True`, `yes`
 * and `on` are booleans, `500_000` an integer, `2e-5` a string; a key with nothing after it
 * is null, which the tools treat as absent. JSON scalars are JSON's. imp_bool(), imp_int()
 * and imp_num() read both, refusing with a diagnostic what the tool would not accept.
 */
#ifndef SIMTRAIN_IMPORT_INTERNAL_H
#define SIMTRAIN_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/diag.h"
#include "base/util.h"
#include "config/yamltree.h"
#include "import/import.h"
#include "model/hardware.h"

/* What became of a source key the scenario does not carry as it is. */
enum imp_fate {
    FATE_IGNORED, /* no effect on step memory or time (logging, data, schedule): listed */
    FATE_NOTE,    /* mapped; a remark worth reading (a substituted optimizer, a resolved auto) */
    FATE_APPROX,  /* mapped with an approximation that affects memory or time: --strict refuses */
    FATE_DROPPED  /* not modelled although it affects memory or time: --strict refuses */
};

struct imp_note {
    enum imp_fate fate;
    const struct yt_node *at; /* the source key (or value); NULL: not tied to a key */
    const char *text;
};

/* One scenario key: dotted path, YAML value text and its comment. */
struct imp_entry {
    const char *key;
    const char *value;
    const char *comment;
    bool commented;            /* written as a comment line (keys simtrain does not read yet) */
    size_t seq;                /* insertion order, for ties */
    const struct yt_node *src; /* the source key its comment names (imp_at), or NULL */
    long emit_off;             /* byte offset of its line in the emitted text (emit.c) */
};

struct imp_file {
    const char *path; /* as given */
    const char *role; /* "Axolotl config", "DeepSpeed config", "config.json" ... */
    struct yt_doc *doc;
};

/* What the workload's config.json (or flags) say, for the other files' rules. */
struct imp_model {
    bool known;
    const char *type;    /* model_type */
    const char *decoder; /* the decoder layer class (FSDP transformer_layer_cls_to_wrap) */
    const char *name;
    int hidden, layers, heads, kv_heads, vocab, experts;
    bool tied, fused_qkv, fused_gate_up, window;
};

#define IMP_MAX_FILES 8

struct imp {
    struct arena a;
    FILE *diag;
    const struct import_request *rq;
    struct hardware *hw; /* the --hardware file; NULL for a workload alone */
    struct imp_file files[IMP_MAX_FILES];
    int nfiles;
    struct imp_entry *entries;
    size_t nentries, ecap;
    struct imp_note *notes;
    size_t nnotes, ncap;
    int errors;
    bool workload_only; /* hf-config without --hardware: the text is a workload file */
    struct imp_model model;
    const struct yt_node *last_at; /* the node imp_at() last named, and its text: a key */
    const char *last_at_text;      /* whose comment holds that text comes from that node */
};

/* ---- files and diagnostics (imp.c) ----------------------------------------------------- */

/*
 * Read and parse `path` (JSON when `json`, else YAML) as `role`; NULL after a diagnostic
 * (cannot read, bad JSON or YAML at its line and column, not a mapping at the top).
 */
struct imp_file *imp_read(struct imp *im, const char *path, const char *role, bool json);

/* Read `path` as plain text (a flags file): the file's doc has its text and no root. */
struct imp_file *imp_read_text(struct imp *im, const char *path, const char *role);

/* "file:line" of node n (the file's base name), in the arena; "" for NULL. */
const char *imp_at(struct imp *im, const struct yt_node *n);

/* An error at node n (NULL: without a location); counts it; returns -1. */
int imp_error(struct imp *im, const struct yt_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A note at node n (or without one), listed at the end of the text. */
void imp_note(struct imp *im, enum imp_fate fate, const struct yt_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An arena copy of a formatted string. */
char *imp_fmt(struct imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the scenario written (imp.c, emit.c) --------------------------------------------------- */

/* Set scenario key `key` (dotted) to YAML text `value` with `comment` (replacing it if set). */
void imp_put(struct imp *im, const char *key, const char *value, const char *comment);

/* The same with a formatted value. */
void imp_putf(struct imp *im, const char *key, const char *comment, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A key written as a comment line, for keys simtrain does not read yet. */
void imp_put_commented(struct imp *im, const char *key, const char *value, const char *comment);

/* training.framework: the framework profile (frameworks/NAME.yaml) that runs the import. */
void imp_put_framework(struct imp *im, const char *name, const char *comment);

/* The value of key `key` written so far, or NULL. */
const char *imp_get(const struct imp *im, const char *key);

/* Remove key `key` if written. */
void imp_unset(struct imp *im, const char *key);

/* The text: header, keys in the schema's order with comments, then the notes (emit.c). */
char *imp_emit(struct imp *im, size_t *len);

/* ---- source scalars (imp.c) ---------------------------------------------------------------------
 */

/* Absent, or null (YAML 1.1 ~, null, Null, NULL, nothing; JSON null). */
bool imp_null(const struct yt_node *n);

/* The scalar text of n, or NULL (absent, null, not a scalar). */
const char *imp_str(const struct yt_node *n);

/* Does scalar n spell `word` (exactly)? */
bool imp_is(const struct yt_node *n, const char *word);

/* A boolean: YAML 1.1 true/false/yes/no/on/off in their three spellings, JSON true/false. */
int imp_bool(struct imp *im, const struct yt_node *n, bool *out);

/* A whole number (YAML 1.1 decimal with `_`, JSON integer), within [lo, hi]. */
int imp_int(struct imp *im, const struct yt_node *n, long long lo, long long hi, long long *out);

/* A number (an integer, or a float: JSON 2e8, YAML 1.1 1.0e+8), finite. */
int imp_num(struct imp *im, const struct yt_node *n, double *out);

/* The value of `key` in mapping `map` (NULL when absent); *kn receives the key node. */
const struct yt_node *imp_get_key(const struct yt_node *map, const char *key,
                                  const struct yt_node **kn);

/*
 * Load the emitted text[0..len) as the loader will (scenario, or workload when workload_only)
 * and, where it refuses a key the import wrote from a source key, report the refusal at that
 * source key's line and column instead (verify.c). 0 when it loads; -1 after diagnostics.
 */
int imp_verify(struct imp *im, const char *text, size_t len);

/* ---- the kinds ------------------------------------------------------------------------------ */

/* config.json (hf_config.c): the workload, keys under `prefix` ("workload." or ""). */
int imp_hf_config(struct imp *im, const struct imp_file *f, const char *prefix);

/*
 * The workload of a run whose training config names a hub model (base_model): --model-config
 * when given, else an error at `base_model` saying to pass it (no network).
 */
int imp_model_config(struct imp *im, const struct yt_node *base_model_key,
                     const struct yt_node *base_model);

/* DeepSpeed JSON (deepspeed.c) under a trainer: Axolotl or accelerate fills the "auto"s. */
struct ds_trainer {
    const char *name;      /* "Axolotl", "accelerate", NULL for a standalone JSON */
    bool has_batch;        /* micro_batch and accumulation known */
    long long micro, gas;  /* micro-batch per GPU, accumulation steps */
    const char *precision; /* "bf16", "fp16", "fp32", or NULL when unknown */
    const char *optimizer; /* the trainer's optimizer, simtrain's name, or NULL */
    const struct yt_node *optimizer_at;
    bool force_cpu_adam_ok; /* the trainer goes through accelerate (DeepSpeedCPUAdam swap) */
};
int imp_deepspeed(struct imp *im, const struct imp_file *f, const struct ds_trainer *tr);

int imp_axolotl(struct imp *im);
int imp_accelerate(struct imp *im);
int imp_megatron(struct imp *im);
int imp_deepspeed_kind(struct imp *im);
int imp_hf_config_kind(struct imp *im);

/* ---- shared rules (rules.c) ------------------------------------------------------------------ */

/* Does the --hardware GPU compute in bf16 (Ampere and later: torch.cuda.is_bf16_supported())? */
bool imp_hw_bf16(const struct imp *im);

/* cluster.gpus from --gpus (required unless `deflt` > 0), with its comment; -1 on error. */
int imp_cluster(struct imp *im, int deflt, const struct yt_node *from, const char *why);

/* The GPU count the scenario will have (--gpus, or what imp_cluster() wrote). */
int imp_gpus(const struct imp *im);

/* Resolve a path named inside a config: relative to the working directory, then to the folder
 * of the config; *tried receives what was tried (arena). NULL when neither exists. */
const char *imp_resolve_path(struct imp *im, const char *name, const struct imp_file *from,
                             const char **tried, bool *from_cwd);

/* The value --set gives key `key`, or NULL. */
const char *imp_set_value(const struct imp *im, const char *key);

/*
 * Key `key`, which no source gives (`what` says what it is): from --set when given, else an
 * error saying to pass it. 0 or -1.
 */
int imp_from_set(struct imp *im, const char *key, const char *what);

/* The training keys of a run whose sources say nothing about training (hf-config). */
int imp_training_defaults(struct imp *im);

/*
 * What FSDP's transformer_layer_cls_to_wrap `cls` (names separated by commas) wraps in the
 * imported model: accelerate looks for each name among all the model's submodules and raises
 * when one is missing (utils/dataclasses.py:2074-2078). WRAP_DECODER: the decoder layer (or the
 * model is unknown); WRAP_SUBMODULE: a class inside it (Axolotl's Mixtral QLoRA-FSDP example
 * wraps MixtralSparseMoeBlock); WRAP_NONE: *bad receives the first name not in the model.
 */
enum imp_wrap {
    WRAP_NONE,
    WRAP_DECODER,
    WRAP_SUBMODULE
};
enum imp_wrap imp_wrap_class(struct imp *im, const char *cls, const char **bad);

/* imp_wrap_class() of key `at` (spelled `key`): an error for WRAP_NONE (-1), a note for
 * WRAP_SUBMODULE (approximated: one FSDP unit per decoder layer), else 0. */
int imp_check_wrap(struct imp *im, const struct yt_node *at, const char *key, const char *cls);

#endif
