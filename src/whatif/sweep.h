/*
 * sweep.h - `simtrain sweep`: one scenario simulated over the cartesian
 * product of `--vary KEY=V1,V2,...` axes, with scaling efficiency against
 * the smallest configuration, written as CSV and JSON and drawn with gnuplot.
 *
 * Each point is the loaded scenario with the axis values applied by cfg_set()
 * (the loader's own type, unit and range checks) and re-checked by
 * scenario_finalize(); an axis that names a file reference (`hardware`,
 * `workload`) reloads the scenario with the values as `--set` overrides
 * instead. A point whose combination breaks a cross-field rule is kept as an
 * invalid row with the loader's message; a point the simulator declines
 * ("not modelled yet") is kept with its reason. Points are numbered in
 * row-major order (the last axis varies fastest), which `--shard K/N` and
 * MPI ranks use to split the work: point i belongs to shard i % N.
 *
 * Conventions that make size sweeps work without extra flags:
 * - when an axis changes the GPU count (cluster.nodes, cluster.gpus,
 *   hardware.nodes, hardware.node.gpus) or another parallel degree
 *   (parallelism.tp, pp, cp) and no axis sets parallelism.dp, dp follows
 *   (derived as GPUs / (tp * pp * cp)), even when the file gives it;
 * - with `weak` the global batch grows with the GPU count (per-GPU batch
 *   kept: global_batch * gpus / base gpus), the weak-scaling experiment.
 *
 * Efficiency (per group of points that share every non-size axis value,
 * against the group's valid point with the fewest GPUs, first on ties):
 *   speedup            T_base / T
 *   strong efficiency  (T_base * G_base) / (T * G)   same work on more GPUs
 *   weak efficiency    T_base / T                    work grown with the GPUs
 * where T is the step time and G the GPU count. Which one applies depends on
 * the experiment (fixed global batch: strong; `weak`: weak); both are
 * written. Per-GPU throughput relative to the base equals the applicable one.
 *
 * Memory: sweep_init() borrows the scenario and overrides (they must outlive
 * the sweep); sweep_release() frees what sweep_add_axis() copied.
 */
#ifndef SIMTRAIN_SWEEP_H
#define SIMTRAIN_SWEEP_H

#include <stdbool.h>
#include <stdio.h>

#include "config/config.h"
#include "prog/prog.h"
#include "run/totals.h"

/*
 * Size limits. A sweep of more than SWEEP_DEFAULT_LIMIT points (each one a
 * full simulation: minutes to hours of work, and a typo in a --vary list can
 * multiply it) is refused unless the caller forces it; none may exceed
 * SWEEP_MAX_POINTS (point indices and the per-group records stay small).
 */
#define SWEEP_DEFAULT_LIMIT 10000L
#define SWEEP_MAX_POINTS    1000000L
#define SWEEP_MAX_AXES      8

struct sweep_axis {
    char *key;     /* dotted key, e.g. "cluster.nodes" */
    char **values; /* YAML scalar texts */
    int nvalues;
    bool ref;  /* a file reference: points reload the scenario */
    bool size; /* changes the GPU count */
};

struct sweep {
    const char *path;               /* scenario file (for reloading reference axes) */
    const struct scenario *base;    /* loaded with the base overrides */
    const struct cfg_override *ovr; /* base overrides (--set), applied before the axes */
    int novr;
    struct sweep_axis *axes;
    int naxes;
    long npoints; /* product of the axes' value counts */
    bool weak;    /* global batch follows the GPU count */
    bool dp_axis; /* an axis sets parallelism.dp */
    /* The scenario's YAML when it was not read from `path` (an imported config, --from):
     * reloads load it from memory under text_name. NULL: reload `path`. Borrowed. */
    const char *text, *text_name;
    size_t text_len;
    /* Threads for sweep_stream(): points are simulated this many at a time ahead of their
     * turn and written in the same order as with one (0 or 1: the calling thread alone). */
    int jobs;
};

enum sweep_status {
    SP_OK,       /* simulated; fits */
    SP_OOM,      /* simulated; does not fit in GPU memory */
    SP_INVALID,  /* the combination breaks a cross-field rule */
    SP_DECLINED, /* the simulator declined it (not modelled yet) */
    SP_NOT_RUN,  /* another shard's point */
    SP_STATUS_COUNT
};

struct sweep_point {
    long index;               /* row-major point number */
    int vidx[SWEEP_MAX_AXES]; /* value index per axis */
    int status;               /* enum sweep_status */
    char reason[256];
    int gpus, nodes, dp, tp, pp, vpp, cp, ep, micro_batch, global_batch;
    double step_s;
    double step_lo_s, step_hi_s; /* the step time's interval (report/band.h); 0 = none */
    double tokens_per_s, tokens_per_s_per_gpu;
    double mfu;
    double peak_bytes, capacity_bytes;
    double breakdown_s[TC_COUNT]; /* exclusive breakdown, averaged over simulated ranks */
    double mem_bytes[MC_COUNT];   /* per category at the peak of the highest-peak rank */
    struct train_totals tt;
    int group;         /* efficiency group */
    long base;         /* index of the group's base point, -1 when none */
    double speedup;    /* T_base / T; 0 when not applicable */
    double strong_eff; /* (T_base G_base) / (T G) */
    double weak_eff;   /* T_base / T */
};

/* "1.57 - 1.71 s" from a point's interval, "none" when it has none. */
void sweep_fmt_interval(double lo_s, double hi_s, char *buf, size_t n);

void sweep_init(struct sweep *sw, const char *path, const struct scenario *base,
                const struct cfg_override *ovr, int novr, bool weak);

/* The scenario's text for reloads when it was imported (--from): see struct sweep. */
void sweep_set_text(struct sweep *sw, const char *name, const char *text, size_t len);
void sweep_release(struct sweep *sw);

/*
 * Add an axis from "KEY=V1,V2,..." (values split at commas outside [] and {},
 * so `training.lora.targets=[q,v],[q,k,v,o]` is two values). Each value is
 * checked against the base scenario with cfg_set(); a bad key or value is an
 * error. Returns 0, or -1 with a message (lowercase, no full stop) in msg.
 */
int sweep_add_axis(struct sweep *sw, const char *arg, char *msg, size_t msglen);

/*
 * Load each file a reference axis names (`--vary hardware=a.yaml,b.yaml`)
 * once, so that every input of the sweep is known (base/files.h) before its
 * outputs are opened. Errors are left to the points that use the value.
 */
void sweep_note_inputs(const struct sweep *sw);

/* Value index of axis `a` at point `index`. */
int sweep_value_index(const struct sweep *sw, long index, int a);

/*
 * Build the scenario of point `index` into *out (a copy of the base that
 * shares its arena; for reference axes a freshly loaded scenario returned in
 * *owned, which the caller frees with cfg_free). Returns 0, or -1 with the
 * reason in msg when the combination is invalid.
 */
int sweep_point_scenario(const struct sweep *sw, long index, struct scenario *out,
                         struct scenario **owned, char *msg, size_t msglen);

/* Evaluate point `index` (build, simulate, measure) into *pt. */
void sweep_run_point(const struct sweep *sw, long index, struct sweep_point *pt);

/*
 * Evaluate the points of shard k of n (index % n == k; n = 1 for all) into
 * pts[0..npoints), marking the others SP_NOT_RUN. `progress` (may be NULL)
 * receives a line per point.
 */
void sweep_run(const struct sweep *sw, int k, int n, struct sweep_point *pts, FILE *progress);

/*
 * Run the sweep across MPI ranks (mpi_sweep.c): rank r evaluates the points
 * of shard r of size, and rank 0 gathers them all into pts. Returns 1 on rank
 * 0, 0 on the other ranks (which should exit quietly), -1 with a message
 * when simtrain was built without MPI.
 */
int sweep_run_mpi(const struct sweep *sw, struct sweep_point *pts, char *msg, size_t msglen);

/*
 * Where points go as they finish: called once per point of the shard, in
 * index order, with every field final (efficiencies included).
 */
struct sweep_sink {
    void (*point)(void *ctx, const struct sweep *sw, const struct sweep_point *p);
    void *ctx;
};

/*
 * Evaluate the points of shard k of n (n = 1: all) and hand each to `sink` in
 * index order as soon as its row is final (sweep_stream.c). With n = 1 the
 * efficiencies are those of sweep_efficiency() over the whole sweep: when a
 * group's first point comes up, its base (the valid point with the fewest
 * GPUs that fits, first on ties) is found first, trying the group's points
 * by GPU count, so rows can be written in order without holding the sweep.
 * Memory: one small record per group, the points simulated ahead of their
 * turn while a base was sought (at most SWEEP_STREAM_HELD; beyond that they
 * are simulated again when their turn comes), nothing per point otherwise.
 * With n > 1 no efficiency is computed (sweep_merge() does) and points are
 * evaluated in order. `progress` (may be NULL) receives a line per point
 * simulated.
 */
#define SWEEP_STREAM_HELD 1024
void sweep_stream(const struct sweep *sw, int k, int n, const struct sweep_sink *sink,
                  FILE *progress);

/* Group the points and fill base, speedup and the efficiencies. */
void sweep_efficiency(const struct sweep *sw, struct sweep_point *pts, long n);

/*
 * Outputs. CSV: one row per point (RFC 4180), columns index, one per axis,
 * then status, layout, metrics, efficiencies, time-to-train, reason; points
 * marked SP_NOT_RUN are left out, so the shards' files concatenate (keep one
 * header) and `sweep_merge()` recomputes the efficiencies. JSON: the same
 * rows as objects, with the axes listed. Return 0 or -1 (errno set).
 */
int sweep_write_csv(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f);
int sweep_write_json(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f);

/* A one-screen text table of the points to `f`. */
void sweep_print(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f);

/*
 * The same outputs a row at a time, for points that stream (sweep_stream()):
 * the header, one call per point (SP_NOT_RUN points write nothing), the
 * footer. The whole-sweep writers above are these in sequence.
 */
void sweep_csv_header(const struct sweep *sw, FILE *f);
void sweep_csv_row(const struct sweep *sw, const struct sweep_point *p, FILE *f);
void sweep_json_begin(const struct sweep *sw, FILE *f);
void sweep_json_point(const struct sweep *sw, const struct sweep_point *p, bool first, FILE *f);
void sweep_json_end(FILE *f);
void sweep_print_header(const struct sweep *sw, FILE *f);
void sweep_print_row(const struct sweep *sw, const struct sweep_point *p, FILE *f);
void sweep_print_footer(const struct sweep *sw, FILE *f);

/*
 * A sink that writes each point as it arrives: the text table to `text`, CSV
 * rows to `csv`, JSON points to `json` (each may be NULL), flushed after
 * every point so that a reader sees the rows as they finish; with `keep`,
 * every point is also kept (the charts need them all). begin writes the
 * headers, end the footers; release frees the kept points.
 */
struct sweep_writer {
    FILE *text, *csv, *json;
    bool keep;
    struct sweep_point *kept; /* with keep: every point written, in index order */
    long nkept;
    size_t cap_kept;
    bool written; /* a JSON point has been written */
};
void sweep_writer_begin(struct sweep_writer *w, const struct sweep *sw);
void sweep_writer_point(void *w, const struct sweep *sw, const struct sweep_point *p);
void sweep_writer_end(struct sweep_writer *w, const struct sweep *sw);
void sweep_writer_release(struct sweep_writer *w);

/*
 * Read CSV files written by sweep_write_csv() (typically one per shard) back
 * into a sweep description and points: axes from the columns between `index`
 * and `status`, values in first-seen order. The caller releases *sw with
 * sweep_release() and frees *pts. Returns 0, or -1 with a message.
 */
int sweep_merge(const char *const *paths, int npaths, struct sweep *sw, struct sweep_point **pts,
                long *n, char *msg, size_t msglen);

const char *sweep_status_name(int status);

/* Whether `key` changes the GPU count: cluster.nodes, cluster.gpus, hardware.nodes,
 * hardware.node.gpus. */
bool sweep_is_size_key(const char *key);

/* Whether point p was simulated (SP_OK or SP_OOM), so it has time and memory figures. */
bool sweep_point_simulated(const struct sweep_point *p);

#endif
