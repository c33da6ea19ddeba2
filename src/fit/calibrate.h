/*
 * calibrate.h - fit the compute and collective cost-model parameters of one
 * hardware description to kernel measurements, and write a calibration file.
 *
 * Input: a measurements CSV in the kernel set's format (src/kernels/README.md):
 * one row per kernel and shape or size, with a time and/or an achieved rate.
 * What is fitted (each class only when the file has rows for it):
 *
 *   GEMM        t = gemm_latency + cost_gemm_seconds(gemm_max[dtype], tile)  (cost.h)
 *               GSL nonlinear least squares on relative time residuals; one
 *               gemm_max per dtype present, a shared latency, and the output
 *               tile chosen among candidates by the smallest residual sum.
 *               `gemm_best` rows (best-shape achieved FLOP/s, MAMF) constrain
 *               gemm_max of their dtype directly. With the hardware's clock
 *               model each row is priced at the SM clock it logged, else at
 *               the sustained clock, which is fitted where rows of a dtype
 *               with and without a clock meet, or read from `gemm_sustained`
 *               rows that logged it (calibrate_gemm.c).
 *   attention   attn_flash / attn_standard = achieved FLOP/s / peak (relative LS);
 *               a fused row counts as FlashAttention-2 at its shape, converted to the
 *               reference shape by the published rates (attn_table.h)
 *   memory      t = launch + bytes / (peak_bw * mem_bw), a weighted line when
 *               two or more sizes are timed; otherwise mem_bw from achieved GB/s
 *   collectives alpha-beta per (op, algo, proto, scope):
 *               t = alpha + S * busfactor(op, n) / bus_bw   (nccl-tests busbw,
 *               formulas.md 5.1-5.2), weighted by 1/t^2 (relative errors)
 *
 * The calibration file written (hardware/calibration/NAME.yaml) names only
 * the fitted values, so the hardware file's own efficiency block supplies the
 * rest when the loader merges them.
 *
 * Files: calibrate_read.c (the measurement reader), calibrate.c (models and
 * fits), cmd_calibrate.c (the calibration file, the summary, --check).
 */
#ifndef SIMTRAIN_CALIBRATE_H
#define SIMTRAIN_CALIBRATE_H

#include <stdbool.h>
#include <stdio.h>

#include "model/comm.h"
#include "model/hardware.h"
#include "base/csv.h"

enum meas_kind {
    MEAS_GEMM,       /* shape m n k [batch] */
    MEAS_GEMM_BEST,  /* best-shape achieved FLOP/s (no shape) */
    MEAS_ATTN_FLASH, /* fused attention */
    MEAS_ATTN_STD,   /* unfused attention */
    MEAS_MEMBOUND,   /* copy, scale, add, triad, dot, rmsnorm, layernorm, softmax, adamw */
    MEAS_H2D,        /* host to device copy */
    MEAS_D2H,        /* device to host copy */
    MEAS_D2D,        /* device to device (peer) copy */
    MEAS_COLL,       /* NCCL collective or send/recv */
    MEAS_COUNT
};

/* One measurement row, units in SI. */
struct measurement {
    int line; /* CSV line, for diagnostics */
    enum meas_kind kind;
    const char *kernel;    /* as written (arena-owned) */
    const char *shape;     /* as written */
    enum dtype dtype;      /* DT_BF16 when the row leaves it empty */
    double m, n, k, batch; /* GEMM shape (batch 1 unless given) */
    double flops;          /* FLOPs per call: from the shape, or 0 when unknown */
    double bytes;          /* bytes moved, or nccl-tests message size S; 0 = not given */
    int gpus, nodes;       /* collective group: ranks and nodes spanned */
    int op;                /* enum coll_op, for MEAS_COLL */
    int algo, proto;       /* enum coll_algo / coll_proto; AUTO when not given */
    double time_s;         /* time per call, s; 0 = not given */
    double head_dim, seq;  /* attention shape; 0 = not given (the reference shape) */
    bool causal;           /* attention with a causal mask */
    double clock_Hz;       /* SM clock the run logged (sm_clock_mhz), Hz; 0 = not logged */
    double power_W;        /* board power the run logged (power_w), W; 0 = not logged */
    bool sustained;        /* gemm_sustained: a long run at the power cap on random data */
    double rate;           /* achieved FLOP/s (compute) or bytes/s (busbw for collectives) */
    const char *gpu;       /* GPU name as written */
    const char *source;    /* source column */
};

struct meas_set {
    struct measurement *rows;
    int n;
    struct csv_table *csv; /* owns the strings */
};

/*
 * Read measurements from `path` into *ms (released with calib_release()).
 * Every row is checked; bad rows are printed to `diag` as
 * `path:line: error: ...`, and any error makes the call return -1: a value
 * out of its column's range (stated in the message), a kernel without a model,
 * a row that copies an earlier one in every measured column, a file without
 * rows (nothing to fit).
 */
int calib_read(const char *path, struct meas_set *ms, FILE *diag);

/* Same, from an already parsed table; takes ownership of `t` (also on failure). */
int calib_parse(struct csv_table *t, struct meas_set *ms, FILE *diag);

void calib_release(struct meas_set *ms);

/* Fit quality of one class of measurements. */
struct calib_quality {
    int points;     /* rows used */
    double r2;      /* R^2 of achieved rate (FLOP/s or bytes/s), predicted vs measured */
    double worst;   /* largest |t_pred / t_meas - 1|, fraction */
    int worst_line; /* CSV line of that row */
    char note[160]; /* what was (not) fitted and why */
};

/* Bits of struct calib_result.fitted: efficiency fields the fit determined. */
enum {
    CAL_GEMM_MAX = 1 << 0,
    CAL_GEMM_LATENCY = 1 << 1,
    CAL_TILE = 1 << 2,
    CAL_ATTN_FLASH = 1 << 3,
    CAL_ATTN_STANDARD = 1 << 4,
    CAL_MEM_BW = 1 << 5,
    CAL_LAUNCH = 1 << 6,
    CAL_GEMM_MAX_FP8 = 1 << 7,
    CAL_CLOCK = 1 << 8
};

struct calib_coll {
    struct coll_calib cal; /* op, algo, proto, scope, alpha, bus bandwidth */
    struct calib_quality q;
};

struct calib_result {
    struct efficiency eff;          /* hardware's values with the fitted ones replaced */
    unsigned fitted;                /* CAL_* bits */
    enum dtype gemm_dtype;          /* dtype whose gemm_max went into eff.gemm_max */
    double gemm_max_dt[DT_COUNT];   /* fitted per dtype, 0 = no data */
    double gemm_max_err[DT_COUNT];  /* 1-sigma */
    double clock_sust_Hz[DT_COUNT]; /* sustained SM clock determined per dtype, Hz; 0 = not */
    double host_Bps[3];             /* achieved h2d, d2h, d2d bandwidth (median), 0 = none */
    struct calib_quality q_gemm, q_attn, q_mem;
    struct calib_coll *coll; /* heap array, ncoll entries, in first-seen order */
    int ncoll;
    bool coll_report_only; /* alpha-beta fits go to `fit:`, not to `collectives:` */
};

struct calib_options {
    enum dtype gemm_dtype; /* whose gemm_max the simulator uses (bf16); falls back to fp16 */
    bool coll_report_only; /* record collective fits without overriding the NCCL model */
};

/*
 * Fit every class present in `ms` against the peaks of `hw` (hw->eff gives
 * the starting values and whatever is not fitted). Progress and warnings go
 * to `log` (may be NULL). Returns 0, or -1 when a class that has data could
 * not be fitted (message on `log`). Release with calib_result_release().
 */
int calib_fit(const struct hardware *hw, const struct meas_set *ms, const struct calib_options *opt,
              struct calib_result *out, FILE *log);

void calib_result_release(struct calib_result *r);

/*
 * Write the calibration file (YAML, docs/yaml-reference.md units) for `r`.
 * `for_name` (NULL = hw->name) is the hardware it is written for, when the
 * fractions fitted on `hw` are carried over to a sibling; `command` goes into
 * the header comment. Implemented with the report printers in cmd_calibrate.c.
 */
void calib_write_yaml(const struct hardware *hw, const char *for_name, const struct meas_set *ms,
                      const struct calib_result *r, const char *command, FILE *out);

/* Print a human summary of the fit (parameters, R^2, worst residuals). */
void calib_print_summary(const struct hardware *hw, const struct calib_result *r, FILE *out);

/*
 * Compare the cost model with the hardware's current parameters (hw->eff and
 * hw->coll_cal, i.e. after its calibration file) against every measurement:
 * one line per row (predicted, measured, signed error) and a summary per
 * class. `markdown` selects Markdown tables. Returns the number of rows compared.
 */
int calib_check(const struct hardware *hw, const struct meas_set *ms, bool markdown, FILE *out);

/*
 * Predicted achieved rate of one measurement row under `eff` and hw->coll_cal,
 * in the row's rate unit (FLOP/s for compute kernels, bytes/s for memory and
 * copies, bus bytes/s for collectives); 0 when no model applies (e.g. a
 * collective without a matching calibrated figure).
 */
double calib_predict_rate(const struct hardware *hw, const struct efficiency *eff,
                          const struct measurement *m);

/* nccl-tests bus-bandwidth factor of `op` over `n` ranks (formulas.md 5.2). */
double calib_bus_factor(int op, int n);

/* ---- host costs from measured steps (calibrate_host.c) ---------------------------------- */

#include "fit/fit.h"

#define HOST_FIT_MAX 7 /* host.* time keys */

struct host_fit_spec {
    const char *path;       /* runs file (docs/runs-format.md) of one stack */
    int keys[HOST_FIT_MAX]; /* fitted keys, calib_host_key() indices */
    int nkeys;
    double start_us[HOST_FIT_MAX]; /* starting values, microseconds */
    int holdout;                   /* > 1: rows i with i % holdout == holdout - 1 are held out */
};

struct host_fit_part {
    int n;               /* rows simulated */
    double mean, median; /* of |error|, percent */
};

struct host_fit_result {
    double us[HOST_FIT_MAX];                  /* fitted values, microseconds */
    double ci_us[HOST_FIT_MAX];               /* 95 % half-widths */
    int nfit;                                 /* rows fitted */
    int skipped;                              /* rows that could not be simulated */
    struct host_fit_part before[2], after[2]; /* [0] fit rows, [1] held-out rows */
    struct fit_result fit;
};

/* Index of host key `name` (kernel_launch, python_op, ...), or -1. */
int calib_host_key(const char *name);
const char *calib_host_key_name(int k);

/*
 * Fit the host costs `spec` names to the measured rows of spec->path (calibrate_host.c says
 * how). 0 with *out, or -1 with a diagnostic on `diag`.
 */
int calib_host_fit(const struct host_fit_spec *spec, struct host_fit_result *out, FILE *diag);

/* Refuse (-1, diagnostics) a runs file whose `set` column fixes a fitted key. */
int calib_host_check_set(const struct host_fit_spec *spec, FILE *diag);

/* Write the overlay: a host: block with the fitted values, the fit's figures as comments. */
void calib_host_write(const struct host_fit_spec *spec, const struct host_fit_result *r,
                      const char *command, FILE *f);

#endif
