/*
 * config.h - loading a scenario: YAML files (libyaml is included only by
 * config/yamltree.c) to the typed structs of model/scenario.h, resolving
 * references (`hardware: dgx-h100` -> hardware/dgx-h100.yaml), applying
 * `--set key=value` overrides and validating everything.
 *
 * A struct scenario can also be built in code (validate builds one per CSV
 * row): scenario_defaults() fills every default, scenario_finalize() derives
 * the dependent values and applies the same semantic rules the loader applies.
 *
 * Memory: cfg_load_*() return objects that own all their strings in an arena;
 * cfg_free() releases everything.
 */
#ifndef SIMTRAIN_CONFIG_CONFIG_H
#define SIMTRAIN_CONFIG_CONFIG_H

#include <stdio.h>

#include "model/scenario.h"

/* A `--set key=value` override. */
struct cfg_override {
    const char *key;   /* dotted path, e.g. "parallelism.dp" */
    const char *value; /* YAML scalar text */
    const char *arg;   /* the whole command-line argument, for diagnostics */
};

/* A semantic validation failure: which key, and why. */
struct cfg_error {
    char path[128]; /* dotted key the error is about, e.g. "parallelism.tp" */
    char msg[384];  /* diagnostic text, lowercase, no trailing period */
};

/* Fill *err with the key `path` and the formatted message; returns -1 (for `return cfg_fail(..)`).
 */
int cfg_fail(struct cfg_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Load a scenario file, resolve its hardware and workload references, apply
 * overrides in order, fill defaults and validate. On any error, print
 * compiler-style diagnostics (`file:line:col: error: ...` with the source line
 * and a caret) to `diag` and return NULL. The caller frees the result with
 * cfg_free().
 */
struct scenario *cfg_load_scenario(const char *path, const struct cfg_override *ovr, int novr,
                                   FILE *diag);

/*
 * Load a scenario posted to `simtrain serve` from the buffer text[0..len), named `name` in
 * diagnostics: as cfg_load_scenario(), except that its hardware, workload, calibration and
 * framework references (and the overrides') must name entries of the shipped library
 * (`hardware: dgx-h100`), never a file path: a path is an error at its line and column, and
 * no file outside the data directories is opened. Safe to call from several threads at once.
 */
struct scenario *cfg_load_scenario_posted(const char *name, const char *text, size_t len,
                                          const struct cfg_override *ovr, int novr, FILE *diag);

/*
 * Load a hardware description by name (`dgx-h100`, searched in the data
 * directories) or path. NULL and diagnostics on error. Free with cfg_free_hw().
 */
struct hardware *cfg_load_hardware(const char *name_or_path, FILE *diag);

/* Load a workload (model architecture) by name or path. Free with cfg_free_model(). */
struct model *cfg_load_model(const char *name_or_path, FILE *diag);

/*
 * The YAML text scenario s was loaded from (the file's, or the imported text of --from), as
 * read, before overrides: *len bytes, owned by s; NULL for a scenario built in code.
 */
const char *cfg_scenario_text(const struct scenario *s, size_t *len);

void cfg_free(struct scenario *s);
void cfg_free_hw(struct hardware *hw);
void cfg_free_model(struct model *m);

/* Fill every default of a scenario built in code (hardware and model left zero). */
void scenario_defaults(struct scenario *s);

/*
 * Derive dependent values left 0 (nodes, gpus, dp, head_dim, kv_heads,
 * ffn_hidden, moe.ffn_hidden; 1f1b becomes interleaved when vpp > 1) and check
 * the cross-field rules: degrees multiply to the GPU count, heads % tp, layers
 * % pp, global batch % (micro_batch * dp), and so on. Returns 0 when valid,
 * otherwise -1 with *err filled. Used by the loader, validate, sweep and plan.
 */
int scenario_finalize(struct scenario *s, struct cfg_error *err);

/*
 * Print a diagnostic for `err` at the YAML location of err->path in the
 * scenario's sources (or without a location for scenarios built in code).
 */
void cfg_report_error(const struct scenario *s, const struct cfg_error *err, FILE *diag);

/*
 * Set one field of a loaded scenario by dotted key from a YAML scalar, with
 * the loader's type and unit checks (sweep's --vary uses this). Returns 0 or
 * -1 with *err filled; the scenario must be re-finalized afterwards.
 */
int cfg_set(struct scenario *s, const char *key, const char *value, struct cfg_error *err);

/*
 * cfg_set() for a scenario built in code (a runs-file row): text values (nccl.version) are
 * copied into `a`, which must outlive the scenario.
 */
int cfg_set_in(struct scenario *s, struct arena *a, const char *key, const char *value,
               struct cfg_error *err);

/* Directories searched for `hardware: NAME` style references, in order. */
const char *cfg_data_dir(void);

/*
 * A host-cost overlay (overlay.c): the host.* settings of a file `simtrain calibrate --host`
 * writes, checked as the scenario loader checks them, kept as text for cfg_apply_overlay().
 */
#define CFG_OVERLAY_MAX 16
struct cfg_overlay {
    int n;
    char key[CFG_OVERLAY_MAX][48];   /* "host.python_op" */
    char value[CFG_OVERLAY_MAX][64]; /* "65.7 us" */
};

/* Read overlay `path` into *out: 0, or -1 with file:line:col diagnostics on `diag`. */
int cfg_load_host_overlay(const char *path, struct cfg_overlay *out, FILE *diag);

/* Set the overlay's keys on `s` (they were checked at load): 0, or -1 with *err. */
int cfg_apply_overlay(struct scenario *s, const struct cfg_overlay *o, struct cfg_error *err);

#endif
