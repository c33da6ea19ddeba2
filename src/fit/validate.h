/*
 * validate.h - predictions against measured training runs.
 *
 * Reads a runs file in the runs format (docs/runs-format.md: one measured configuration
 * and one figure per row, RFC 4180, columns in any order, unknown columns ignored, empty =
 * default), builds a struct scenario per row, simulates it with predict_scenario() and
 * compares the metric: signed error 100 * (predicted - measured) / measured.
 *
 * Row -> scenario: scenario_defaults(); hardware loaded by stem with
 * cfg_load_hardware() (once per stem); model and training/parallel fields
 * from the columns. The columns do not say which block style a model uses,
 * so `ffn_act` decides it: gelu rows are GPT style (LayerNorm, learned
 * positions sized to seq_len, biases, dropout, tied embeddings as Megatron's
 * GPT ties them), swiglu rows are Llama style (RMSNorm, RoPE, no biases, no
 * dropout, untied). Optional extra columns override that: norm (layernorm |
 * rmsnorm), position (learned | rope | none), bias, dropout, tied_embeddings
 * (0 | 1). The row's framework / framework_version columns select a framework profile
 * (config/profile.h) whose defaults and rules fill what the row leaves empty; the `set`
 * column's KEY=VALUE entries (as --set takes them) and a few extra columns (the memory
 * columns, ddp_impl, fsdp_reduce_dtype, attention_impl) state what a source says for its row.
 * Then scenario_finalize(); a failure there is the row's reason.
 *
 * A row that cannot be simulated (bad field, unknown hardware, impossible
 * layout, out of memory for a time or throughput figure, a feature the
 * simulator lacks) keeps its reason and is left out of the error statistics;
 * the other rows are still evaluated.
 */
#ifndef SIMTRAIN_VALIDATE_H
#define SIMTRAIN_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/scenario.h"
#include "base/csv.h"
#include "report/band.h"
#include "run/predict.h"

enum validate_metric {
    VM_STEP_TIME,      /* step_time_s: seconds per optimizer step */
    VM_TOKENS_PER_GPU, /* tokens_per_s_per_gpu */
    VM_PEAK_MEM,       /* peak_mem_gib: peak allocated per GPU, GiB */
    VM_PEAK_RESERVED,  /* peak_reserved_gib: caching allocator's reserved peak per GPU, GiB */
    VM_COUNT
};

const char *validate_metric_name(enum validate_metric m);

struct validate_row {
    int line;                  /* CSV line where the row starts */
    const char *id;            /* table-owned */
    const char *hardware;      /* stem as written */
    const char *metric_name;   /* as written */
    int metric;                /* enum validate_metric, -1 when unknown */
    double measured;           /* the `value` column (NAN when unreadable) */
    bool ok;                   /* simulated; predicted and error_pct are valid */
    double predicted;          /* same unit as measured */
    double error_pct;          /* signed: 100 * (predicted - measured) / measured */
    const char *reading;       /* how framework_version selected the profile version, or NULL
                                  (owned by the report's profiles) */
    char reason[512];          /* why the row was not evaluated */
    struct band_regime regime; /* of the row's scenario (report/band.h), when it was built */
};

/* Statistics of |error_pct| over the evaluated rows of one metric. */
struct validate_stats {
    int n;         /* evaluated rows */
    int errors;    /* rows of this metric that could not be evaluated */
    double median; /* of |error|, percent (0 when n == 0) */
    double mean;
    double p90; /* linear-interpolation quantile (fit_quantile) */
    double max;
};

/* A hardware stem seen in the file and the calibration file its description used. */
struct validate_hw {
    char *stem;
    char *calibration; /* NULL = none (or not loadable) */
};

struct validate_profiles;

struct validate_report {
    const char *path;          /* input file name */
    struct validate_row *rows; /* in input order */
    int nrows;
    struct validate_stats stats[VM_COUNT];
    struct validate_hw *hw; /* hardware stems, first-seen order */
    int nhw;
    struct csv_table *csv;              /* owns the strings */
    struct validate_profiles *profiles; /* the rows' framework profiles */
};

/*
 * Test doubles: a predictor and a hardware source. NULL members use the real
 * ones (predict_scenario(), cfg_load_hardware() cached per stem).
 * load_hw returns a borrowed description, or NULL with reason[] filled.
 * jobs: threads for the rows' predictions (0 or 1: the calling thread alone); the rows are
 * read and compared in order on the calling thread, so the report is the same for any jobs.
 * A predict hook must then be safe to call from several threads at once.
 */
struct validate_hooks {
    int (*predict)(const struct scenario *s, struct prediction *out, char *reason,
                   size_t reason_len, void *ctx);
    const struct hardware *(*load_hw)(const char *stem, char *reason, size_t reason_len, void *ctx);
    void *ctx;
    int jobs;
};

/*
 * Evaluate every row of `t` (ownership of `t` passes to the report, also on
 * failure). Returns 0, or -1 when the file cannot be used at all (a required
 * column is missing: printed to `diag`). Release with validate_release().
 */
int validate_table(struct csv_table *t, const struct validate_hooks *hooks,
                   struct validate_report *out, FILE *diag);

/* Read `path` and validate it; -1 with a diagnostic when unreadable. */
int validate_file(const char *path, const struct validate_hooks *hooks, struct validate_report *out,
                  FILE *diag);

void validate_release(struct validate_report *r);

/*
 * The table of residuals report/band.h reads: one line per evaluated step-time or throughput
 * row of each report, its set the runs file's base name, under band_write_header()'s header.
 * 0, or -1 with a diagnostic when `path` cannot be written.
 */
int validate_write_bands(const struct validate_report *reps, int nreps, const char *path,
                         FILE *diag);

/*
 * Statistics of |error_pct| over the rows of metric `m` whose id starts with
 * `prefix` ("*" or "" selects every row): a group of runs from one source, so
 * a guard can hold well-predicted groups tightly while others are poor.
 */
void validate_group_stats(const struct validate_report *r, enum validate_metric m,
                          const char *prefix, struct validate_stats *out);

/*
 * The framework profiles a table's rows select (framework, framework_version), each loaded
 * once. The scenarios built with it point into it: free it after them.
 */
struct validate_profiles;
struct validate_profiles *validate_profiles_new(void);
void validate_profiles_free(struct validate_profiles *vp);

/*
 * Build the scenario of row `row` of `t` on hardware `hw` (copied into *s): the columns, then
 * the row's framework profile (framework / framework_version; config/profile.h) for what the
 * row leaves empty, loaded through `vp`, and finalize it. Returns 0, or -1 with reason[]
 * filled. Strings in *s point into `t` and `vp`.
 */
int validate_row_scenario(const struct csv_table *t, int row, const struct hardware *hw,
                          struct validate_profiles *vp, struct scenario *s, char *reason,
                          size_t reason_len);

/* One line per row, then the summary table (plain text or Markdown). */
void validate_print(const struct validate_report *r, bool markdown, FILE *out);

/* The JSON document of the runs format (rows, summary). 0, or -1 with a diagnostic. */
int validate_write_json(const struct validate_report *r, const char *path, FILE *diag);

/*
 * Predicted-against-measured charts: DIR/validation_<metric>.dat for each
 * metric with evaluated rows, rendered to DIR/validation_<metric>.svg by
 * gnuplot with plots/validation.gp (skipped with a note when gnuplot or the
 * script is missing). 0, or -1 when DIR cannot be written.
 */
int validate_write_plots(const struct validate_report *r, const char *dir, FILE *diag);

#endif
