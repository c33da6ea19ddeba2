/*
 * nccl_validate.c - `simtrain collective --validate CSV` (nccl_validate.h): the
 * collective model alone (calibration files ignored, since calibrations are
 * fitted to these very figures) against published NCCL measurements
 * (tests/validation/nccl.csv, format of validation/sources/nccl.csv), row by
 * row and summarized per band of message size and source.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit/nccl_validate.h"

#include "net/bench.h"
#include "net/collective.h"
#include "config/config.h"
#include "base/csv.h"

struct vrow {
    int line;         /* CSV line */
    char label[48];   /* short source name */
    const char *stem; /* hardware file */
    enum coll_op op;
    int gpus, nodes;
    enum coll_algo algo; /* forced as the source ran it, or auto */
    double bytes;
    bool sized;         /* the source states the message size */
    bool algbw;         /* the figure is algbw (else busbw) */
    double lo, hi;      /* measured value or range, GB/s */
    int harness_gpus;   /* GPUs driven by one nccl-tests thread (-g N), else 1 */
    int iters;          /* timed iterations (-n N in the notes; nccl-tests' default 20) */
    const char *skip;   /* why the row is not evaluated */
    double pred;        /* GB/s */
    double err;         /* signed relative error */
    enum coll_algo ran; /* what the model ran */
    enum coll_proto ran_proto;
    bool floored; /* the host's launches set the pace (nccl-tests timing loop) */
};

/* The `collective` column (nccl-tests names; empty: all_reduce, the file's first rows). */
static enum coll_op op_of(const char *name)
{
    static const struct {
        const char *name;
        enum coll_op op;
    } ops[] = {
        { "all_gather", COLL_ALL_GATHER }, { "reduce_scatter", COLL_REDUCE_SCATTER },
        { "alltoall", COLL_ALL_TO_ALL },   { "all_to_all", COLL_ALL_TO_ALL },
        { "sendrecv", COLL_SEND_RECV },    { "send_recv", COLL_SEND_RECV },
    };

    for (size_t i = 0; i < ARRAY_LEN(ops); i++)
        if (strcmp(name, ops[i].name) == 0)
            return ops[i].op;
    return COLL_ALL_REDUCE;
}

static const char *stem_for(const char *gpu)
{
    if (strstr(gpu, "PCIe"))
        return NULL;
    if (strstr(gpu, "A100"))
        return "dgx-a100-80g";
    if (strstr(gpu, "H200"))
        return "dgx-h200";
    if (strstr(gpu, "H100") || strstr(gpu, "CX-7"))
        return "dgx-h100";
    return NULL;
}

/* "Azure ND_H100_v5", "NVIDIA/nccl-tests issue #212": the source up to its first detail. */
static void short_source(const char *src, char *out, size_t n)
{
    const char *nd = strstr(src, "ND_");
    size_t len;

    if (nd) {
        len = strcspn(nd, " ,(");
        if (len > 3 && strncmp(nd + len - 3, ".md", 3) == 0)
            len -= 3;
        if (len > 8 && strncmp(nd + len - 8, "_results", 8) == 0)
            len -= 8;
        snprintf(out, n, "Azure %.*s", (int)len, nd);
        return;
    }
    len = strcspn(src, "(,");
    while (len > 0 && src[len - 1] == ' ')
        len--;
    snprintf(out, n, "%.*s", (int)len, src);
}

/*
 * How nccl-tests ran, from the command line quoted in the notes: "-g N" (one
 * thread drives N GPUs, LAUNCH_SINGLE_PROCESS) and "-n N" (timed iterations).
 * Without them, nccl-tests' defaults: one GPU per thread, 20 iterations.
 */
static void harness_args(const char *notes, struct vrow *v)
{
    const char *g = strstr(notes, " -g "), *n = strstr(notes, " -n ");

    v->harness_gpus = g && atoi(g + 4) > 0 ? atoi(g + 4) : 1;
    v->iters = n && atoi(n + 4) > 0 ? atoi(n + 4) : 20;
}

/*
 * The numeric columns a row may give, range-checked before use (atoi and atof took "1e30" as
 * 1 and a GPU count of 10^8 built a topology of that size): num_gpus and num_nodes whole
 * numbers in 1 .. 2^20, message_size_bytes in 1 .. 1 TiB (more than any GPU holds), metric_value
 * a positive number or a range LO-HI. Empty fields keep their defaults. Returns the number of
 * errors printed to `diag` as path:line: error: ....
 */
static int check_vrow(const struct csv_table *tab, int r, FILE *diag)
{
    static const struct {
        const char *col;
        double max;
        bool whole;
        const char *why;
    } num[] = {
        { "num_gpus", SIM_MAX_GPUS, true, "GPUs a simulation may span" },
        { "num_nodes", SIM_MAX_GPUS, true, "nodes a simulation may span" },
        { "message_size_bytes", 1099511627776.0, true, "1 TiB: more than any GPU holds" },
    };
    const char *val = csv_field(tab, r, csv_column(tab, "metric_value"));
    int errors = 0;
    double lo, hi;
    const char *end;

    for (size_t i = 0; i < ARRAY_LEN(num); i++) {
        const char *f = csv_field(tab, r, csv_column(tab, num[i].col));
        double v;

        if (!*f)
            continue;
        v = csv_strtod(f, &end);
        if (end == f || *end || !(v >= 1 && v <= num[i].max) || (num[i].whole && v > floor(v))) {
            fprintf(diag, "%s:%d: error: %s '%s' is not a whole number between 1 and %.0f (%s)\n",
                    tab->name, tab->rows[r].line, num[i].col, f, num[i].max, num[i].why);
            errors++;
        }
    }
    if (*val) {
        lo = csv_strtod(val, &end);
        hi = *end == '-' && end > val ? csv_strtod(end + 1, &end) : lo;
        if (*end || !(lo > 0 && isfinite(lo) && hi >= lo && isfinite(hi))) {
            fprintf(diag,
                    "%s:%d: error: metric_value '%s' is not a positive number or a range "
                    "LO-HI\n",
                    tab->name, tab->rows[r].line, val);
            errors++;
        }
    }
    return errors;
}

/* Fill a row from the CSV; sets skip when the row is not a collective benchmark we model. */
static void read_vrow(const struct csv_table *tab, int r, struct vrow *v)
{
#define F(name) csv_field(tab, r, csv_column(tab, name))
    const char *metric = F("metric_name"), *algo = F("algorithm"), *val = F("metric_value");
    const char *end;

    memset(v, 0, sizeof(*v));
    v->line = tab->rows[r].line;
    short_source(F("source"), v->label, sizeof(v->label));
    v->stem = stem_for(F("gpu"));
    v->op = COLL_ALL_REDUCE;
    v->gpus = atoi(F("num_gpus")) > 0 ? atoi(F("num_gpus")) : 8;
    v->nodes = atoi(F("num_nodes")) > 0 ? atoi(F("num_nodes")) : 1;
    v->bytes = atof(F("message_size_bytes")) > 0 ? atof(F("message_size_bytes"))
                                                 : 8.0 * 1024 * 1024 * 1024;
    v->op = op_of(F("collective"));
    v->sized = atof(F("message_size_bytes")) > 0;
    v->algo = ALGO_AUTO;
    if (strncmp(algo, "NVLS (stated)", 13) == 0 || strncmp(algo, "stated NVLS", 11) == 0 ||
        strncmp(algo, "NVLS (forced)", 13) == 0)
        v->algo = ALGO_NVLS; /* the source ran NCCL_ALGO=NVLS (see notes) */
    else if (strcmp(algo, "Ring") == 0 || strncmp(algo, "Ring (forced", 12) == 0 ||
             strstr(algo, "NVLS_ENABLE=0")) /* one node without NVLS: NCCL's ring */
        v->algo = ALGO_RING;
    harness_args(F("notes"), v);
    v->lo = csv_strtod(val, &end);
    v->hi = *end == '-' ? csv_strtod(end + 1, &end) : v->lo;
    v->algbw = strstr(metric, "algbw") != NULL;
    if (strstr(metric, "per_NIC")) { /* one NIC between two nodes: send/recv */
        v->op = COLL_SEND_RECV;
        v->gpus = 2;
        v->nodes = 2;
    } else if (strcmp(metric, "measured_busbw") == 0 && strstr(F("gpu"), "DGX-A100")) {
        v->gpus = 16; /* "8x200Gbit/s IB ... 192GB/s": multi-node, count unstated: 2 nodes */
        v->nodes = 2;
    }
    if (strstr(metric, "bisection"))
        v->skip = "aggregate fabric bandwidth during training, not a collective benchmark";
    else if (!v->stem)
        v->skip = "no hardware description for this system (H100 PCIe NVLink-bridge pair)";
    else if (!(v->lo > 0))
        v->skip = "no numeric value";
#undef F
}

static double predict(const struct hardware *hw0, struct vrow *v)
{
    struct hardware hw = *hw0;
    struct nccl_cfg cfg = { .algo = v->algo, .proto = PROTO_AUTO };
    struct comm_group g;
    struct coll_cost c;
    struct topo *t;
    double sec, algbw;
    sim_time gpu;
    int last;

    hw.ncoll_cal = 0; /* the model alone: calibrations come from these very figures */
    hw.coll_cal = NULL;
    t = bench_place(&hw, v->gpus, v->nodes, &g, &last);
    topo_free(t);
    coll_estimate(&hw, &cfg, &g, v->op, v->bytes, &c);
    v->ran = c.algo;
    v->ran_proto = c.proto;
    gpu = coll_time(&c);
    sec = (double)coll_bench_time(gpu, hw.eff.launch, v->harness_gpus, v->iters) / NS_PER_S;
    v->floored = (sim_time)v->harness_gpus * hw.eff.launch > gpu;
    algbw = v->bytes / sec / 1e9;
    return v->algbw ? algbw : algbw * coll_bus_factor(v->op, g.nranks);
}

static double rel_error(const struct vrow *v)
{
    if (v->pred >= v->lo && v->pred <= v->hi)
        return 0;
    return v->pred < v->lo ? (v->pred - v->lo) / v->lo : (v->pred - v->hi) / v->hi;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bands of the summary (nccl_validate.h). */
static const struct {
    const char *name;
    double target;
} bands[NCCL_BAND_COUNT] = {
    [NCCL_BAND_AR_LARGE] = { "8-GPU all-reduce, size >= 64 MiB", 0.10 },
    [NCCL_BAND_AR_SMALL] = { "8-GPU all-reduce, size < 64 MiB", 0.25 },
    [NCCL_BAND_AGRS_LARGE] = { "8-GPU all-gather / reduce-scatter, >= 64 MiB", 0.15 },
    [NCCL_BAND_AGRS_SMALL] = { "8-GPU all-gather / reduce-scatter, < 64 MiB", 0.25 },
    [NCCL_BAND_P2P] = { "8-GPU all-to-all and send/recv, >= 64 MiB", 0.25 },
    [NCCL_BAND_MULTINODE] = { "several nodes", 0.15 },
    [NCCL_BAND_STATEMENT] = { "stated figures (no size; peak)", 0.10 },
};

/* Which band a row counts in, or -1 (skipped, or not an 8-GPU node size sweep). */
static int band_of(const struct vrow *v)
{
    bool large = v->bytes >= 67108864;

    if (v->skip)
        return -1;
    if (!v->sized)
        return NCCL_BAND_STATEMENT;
    if (v->nodes > 1)
        return NCCL_BAND_MULTINODE;
    if (v->gpus != 8)
        return -1;
    switch (v->op) {
    case COLL_ALL_REDUCE:
        return large ? NCCL_BAND_AR_LARGE : NCCL_BAND_AR_SMALL;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
        return large ? NCCL_BAND_AGRS_LARGE : NCCL_BAND_AGRS_SMALL;
    default:
        return large ? NCCL_BAND_P2P : -1;
    }
}

static void band_stats(const struct vrow *rows, int n, int band, struct nccl_band *out)
{
    double *e = xmalloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    int k = 0;

    memset(out, 0, sizeof(*out));
    out->name = bands[band].name;
    out->target = bands[band].target;
    for (int i = 0; i < n; i++) {
        if (band_of(&rows[i]) != band)
            continue;
        e[k++] = fabs(rows[i].err);
        out->within += fabs(rows[i].err) <= out->target;
    }
    qsort(e, (size_t)k, sizeof(double), cmp_double);
    out->n = k;
    if (k) {
        out->median = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
        out->max = e[k - 1];
    }
    free(e);
}

static void print_band(const struct nccl_band *b, bool md, FILE *out)
{
    if (b->n == 0)
        return;
    if (md)
        fprintf(out, "| %s | %d | %.1f %% | %.1f %% | %d of %d within %.0f %% |\n", b->name, b->n,
                100 * b->median, 100 * b->max, b->within, b->n, 100 * b->target);
    else
        fprintf(out, "%-46s n=%-3d median |err| %5.1f %%  max %5.1f %%  %d of %d within %.0f %%\n",
                b->name, b->n, 100 * b->median, 100 * b->max, b->within, b->n, 100 * b->target);
}

static void print_vrow(const struct vrow *v, bool md, FILE *out)
{
    char meas[32], size[32], ran[40], pred[32];

    if (v->hi > v->lo)
        snprintf(meas, sizeof(meas), "%.4g-%.4g", v->lo, v->hi);
    else
        snprintf(meas, sizeof(meas), "%.4g", v->lo);
    snprintf(size, sizeof(size), "%.0f", v->bytes);
    snprintf(ran, sizeof(ran), "%s/%s", v->ran == ALGO_AUTO ? "p2p" : algo_name(v->ran),
             proto_name(v->ran_proto));
    snprintf(pred, sizeof(pred), "%.4g%s", v->pred, v->floored ? "*" : "");
    if (md && v->skip)
        fprintf(out, "| %d | %s | | | | | | | %s | | skipped: %s |\n", v->line, v->label, meas,
                v->skip);
    else if (md)
        fprintf(out, "| %d | %s | %s | %s | %d | %s | %s | %s | %s %s | %s | %+.1f %% |\n", v->line,
                v->label, v->stem, coll_op_name(v->op), v->gpus, size, algo_name(v->algo), ran,
                meas, v->algbw ? "algbw" : "busbw", pred, 100 * v->err);
    else if (v->skip)
        fprintf(out, "%5d %-28.28s skipped: %s\n", v->line, v->label, v->skip);
    else
        fprintf(out, "%5d %-28.28s %-13s %-10s %3d %11s %-5s %-16s %10s %10s  %+7.1f %%\n", v->line,
                v->label, v->stem, coll_op_name(v->op), v->gpus, size, algo_name(v->algo), ran,
                meas, pred, 100 * v->err);
}

/* Read and evaluate every row of `path`; *rows (heap) and *n. Returns -1 when the file is
 * unreadable or a row is malformed (the error printed, *rows and *n untouched), 1 when a
 * hardware description failed to load, else 0. */
static int evaluate(const char *path, struct vrow **rows_out, int *n_out)
{
    struct csv_error cerr;
    struct csv_table *tab = csv_read_file(path, &cerr);
    struct vrow *rows;
    struct hardware *hws[8] = { 0 };
    const char *stems[8] = { 0 };
    int nhw = 0, i, j, failed = 0;

    if (!tab) {
        csv_print_error(path, &cerr, stderr);
        return -1;
    }
    for (i = 0, j = 0; i < tab->nrows; i++)
        j += check_vrow(tab, i, stderr);
    if (j > 0) {
        csv_free(tab);
        return -1;
    }
    rows = xcalloc((size_t)(tab->nrows > 0 ? tab->nrows : 1), sizeof(*rows));
    for (i = 0; i < tab->nrows; i++) {
        struct hardware *hw = NULL;
        read_vrow(tab, i, &rows[i]);
        if (rows[i].skip)
            continue;
        for (j = 0; j < nhw; j++)
            if (strcmp(stems[j], rows[i].stem) == 0)
                hw = hws[j];
        if (!hw && nhw < (int)ARRAY_LEN(hws)) {
            hw = cfg_load_hardware(rows[i].stem, stderr);
            stems[nhw] = rows[i].stem;
            hws[nhw++] = hw;
        }
        if (!hw) {
            rows[i].skip = "hardware description failed to load";
            failed = 1;
            continue;
        }
        if (rows[i].gpus > rows[i].nodes * hw->gpus_per_node) {
            rows[i].skip = "more GPUs than its nodes hold";
            continue;
        }
        rows[i].pred = predict(hw, &rows[i]);
        rows[i].err = rel_error(&rows[i]);
    }
    for (j = 0; j < nhw; j++)
        cfg_free_hw(hws[j]);
    *rows_out = rows;
    *n_out = tab->nrows;
    csv_free(tab);
    return failed;
}

int nccl_validate_bands(const char *path, struct nccl_band out[NCCL_BAND_COUNT])
{
    struct vrow *rows;
    int n, rc = evaluate(path, &rows, &n);

    if (rc < 0)
        return 1;
    for (int b = 0; b < NCCL_BAND_COUNT; b++)
        band_stats(rows, n, b, &out[b]);
    free(rows);
    return rc;
}

int nccl_validate_file(const char *path, bool markdown, FILE *out)
{
    struct vrow *rows;
    struct nccl_band b;
    int n, i, rc = evaluate(path, &rows, &n);

    if (rc < 0)
        return 1;
    if (markdown) {
        fprintf(out, "| line | source | hardware | op | GPUs | size (B) | NCCL_ALGO | model ran | "
                     "measured (GB/s) | model (GB/s) | error |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|\n");
    } else {
        fprintf(out,
                "# simtrain collective --validate %s: the model alone (calibration ignored);\n"
                "# times as nccl-tests measures them: -n iterations enqueued back to back,\n"
                "# host launches (1 per GPU, or N per thread with -g N) overlapping the GPUs;\n"
                "# * = the host's launches set the pace\n",
                path);
        fprintf(out, "%5s %-28s %-13s %-10s %3s %11s %-5s %-16s %10s %10s  %8s\n", "line", "source",
                "hardware", "op", "n", "size(B)", "algo", "model ran", "measured", "model",
                "error");
    }
    for (i = 0; i < n; i++)
        print_vrow(&rows[i], markdown, out);
    if (markdown)
        fprintf(out, "\n| band | n | median abs error | max abs error | within target |\n"
                     "|---|---|---|---|---|\n");
    else
        fputc('\n', out);
    for (int k = 0; k < NCCL_BAND_COUNT; k++) {
        band_stats(rows, n, k, &b);
        print_band(&b, markdown, out);
    }
    free(rows);
    return rc;
}
