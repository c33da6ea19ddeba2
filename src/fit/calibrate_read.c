/*
 * calibrate_read.c - the measurement reader of `simtrain calibrate` (see
 * calibrate.h): one CSV row per kernel and shape or size in the kernel set's
 * format (src/kernels/README.md), checked and converted to SI units, with a
 * diagnostic per bad row. The fits are calibrate.c.
 */
#include "base/csv.h"
#include "fit/calibrate.h"

#include "base/diag.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    enum meas_kind kind;
    int op; /* enum coll_op for collectives */
} kernel_names[] = {
    { "gemm", MEAS_GEMM, -1 },
    { "gemm_best", MEAS_GEMM_BEST, -1 },
    { "gemm_sustained", MEAS_GEMM, -1 }, /* simtrain-bench --sustained: minutes at the power cap */
    { "attention_flash", MEAS_ATTN_FLASH, -1 },
    { "attention_standard", MEAS_ATTN_STD, -1 },
    { "copy", MEAS_MEMBOUND, -1 },
    { "scale", MEAS_MEMBOUND, -1 },
    { "add", MEAS_MEMBOUND, -1 },
    { "triad", MEAS_MEMBOUND, -1 },
    { "dot", MEAS_MEMBOUND, -1 },
    { "rmsnorm", MEAS_MEMBOUND, -1 },
    { "layernorm", MEAS_MEMBOUND, -1 },
    { "softmax", MEAS_MEMBOUND, -1 },
    { "adamw", MEAS_MEMBOUND, -1 },
    { "amax", MEAS_MEMBOUND, -1 }, /* simtrain-bench fp8cast: the FP8 recipes' kernels */
    { "cast_fp8", MEAS_MEMBOUND, -1 },
    { "cast_transpose_fp8", MEAS_MEMBOUND, -1 },
    { "h2d", MEAS_H2D, -1 },
    { "d2h", MEAS_D2H, -1 },
    { "d2d", MEAS_D2D, -1 },
    { "all_reduce", MEAS_COLL, COLL_ALL_REDUCE },
    { "all_gather", MEAS_COLL, COLL_ALL_GATHER },
    { "reduce_scatter", MEAS_COLL, COLL_REDUCE_SCATTER },
    { "broadcast", MEAS_COLL, COLL_BROADCAST },
    { "reduce", MEAS_COLL, COLL_REDUCE },
    { "all_to_all", MEAS_COLL, COLL_ALL_TO_ALL },
    { "send_recv", MEAS_COLL, COLL_SEND_RECV },
};

struct reader {
    const struct csv_table *t;
    int row;
    FILE *diag;
    int errors;
    int col_kernel, col_shape, col_bytes, col_dtype, col_gpu, col_gpus, col_nodes, col_algo,
        col_proto, col_time, col_tflops, col_gbps, col_source, col_clock, col_power;
};

static void row_error(struct reader *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void row_error(struct reader *rd, const char *fmt, ...)
{
    va_list ap;

    rd->errors++;
    if (!rd->diag)
        return;
    fprintf(rd->diag, "%s:%d: error: ", rd->t->name, rd->t->rows[rd->row].line);
    va_start(ap, fmt);
    vfprintf(rd->diag, fmt, ap);
    va_end(ap);
    fputc('\n', rd->diag);
}

static bool same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

/*
 * Bounds of the measurement columns: beyond them a row describes no kernel that runs, and the
 * fits and casts downstream would overflow (a GEMM of m = n = k = 1e18, 1e30 GPUs). Each
 * bound comes with its reason in the diagnostic.
 */
#define MAX_DIM       2147483647.0    /* cuBLAS and the kernel set take int dimensions */
#define MAX_BYTES     1099511627776.0 /* 1 TiB: more than any GPU holds (B200: 192 GB) */
#define MAX_TIME_US   1e9             /* 1000 s: no kernel of the kernel set runs that long */
#define MAX_TFLOPS    1e5             /* 100 PFLOP/s: ten times any GPU's densest peak */
#define MAX_GBPS      1e5             /* 100 TB/s: ten times the fastest HBM (B200, 8 TB/s) */
#define MAX_CLOCK_MHZ 1e4             /* 10 GHz: three times any GPU SM clock (B200: 1965 MHz) */
#define MAX_POWER_W   1e4             /* 10 kW: ten times any GPU board (B200: 1000 W) */
#define MAX_GPUS      1048576.0 /* 2^20: beyond any cluster (the largest hold about 10^5 GPUs) */

/*
 * A number field in [0, max] (`why`: the reason for max): empty -> *out = 0 and 0;
 * malformed, negative or above max -> -1 with a diagnostic.
 */
static int number(struct reader *rd, int col, const char *what, double max, const char *why,
                  double *out)
{
    const char *s = csv_field(rd->t, rd->row, col);
    const char *end;

    *out = 0;
    if (!*s)
        return 0;
    *out = csv_strtod(s, &end);
    while (*end == ' ')
        end++;
    if (end == s || *end || !isfinite(*out) || *out < 0) {
        row_error(rd, "%s '%s' is not a non-negative number", what, s);
        return -1;
    }
    if (*out > max) {
        row_error(rd, "%s '%s' exceeds %g (%s)", what, s, max, why);
        return -1;
    }
    return 0;
}

/* A whole-number field in [1, MAX_GPUS] (gpus, nodes); empty -> *out = 0. */
static int count_field(struct reader *rd, int col, const char *what, double *out)
{
    if (number(rd, col, what, MAX_GPUS, "beyond any cluster", out))
        return -1;
    if (*out > floor(*out) || (csv_field(rd->t, rd->row, col)[0] && *out < 1)) {
        row_error(rd, "%s '%s' is not a whole number >= 1", what, csv_field(rd->t, rd->row, col));
        return -1;
    }
    return 0;
}

static int parse_dtype(const char *s, enum dtype *dt)
{
    *dt = DT_BF16;
    if (!*s)
        return 0;
    for (int i = 0; i < DT_COUNT; i++)
        if (same_word(s, dtype_name((enum dtype)i))) {
            *dt = (enum dtype)i;
            return 0;
        }
    return -1;
}

static int parse_enum(const char *s, const char *(*name)(int), int count)
{
    if (!*s)
        return 0; /* AUTO */
    for (int i = 0; i < count; i++)
        if (same_word(s, name(i)))
            return i;
    return -1;
}

static const char *algo_name_i(int i)
{
    return algo_name((enum coll_algo)i);
}

static const char *proto_name_i(int i)
{
    return proto_name((enum coll_proto)i);
}

/* Parse "key=value key=value" into the named slots; unknown keys are errors. */
static int parse_shape(struct reader *rd, const char *shape, const char *const *keys, double *vals,
                       int nkeys)
{
    const char *p = shape;
    unsigned seen = 0; /* keys given so far, one bit each */

    while (*p) {
        char key[32];
        size_t kl = 0;
        const char *end;
        double v;
        int i;

        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        while (*p && *p != '=' && *p != ' ' && kl + 1 < sizeof(key))
            key[kl++] = *p++;
        key[kl] = '\0';
        if (*p != '=') {
            row_error(rd, "shape '%s': expected key=value at '%s'", shape, key);
            return -1;
        }
        v = csv_strtod(++p, &end);
        if (end == p || !(v >= 0)) {
            row_error(rd, "shape '%s': bad value for '%s'", shape, key);
            return -1;
        }
        p = end;
        for (i = 0; i < nkeys && strcmp(keys[i], key); i++)
            ;
        if (i == nkeys) {
            row_error(rd, "shape '%s': unknown key '%s'", shape, key);
            return -1;
        }
        if (seen & (1u << i)) {
            row_error(rd, "shape '%s': '%s' is given twice", shape, key);
            return -1;
        }
        seen |= 1u << i;
        if (v > floor(v) || v > MAX_DIM) {
            row_error(rd,
                      "shape '%s': '%s' must be a whole number of at most %.0f (the int "
                      "dimensions of cuBLAS and the kernel set)",
                      shape, key, MAX_DIM);
            return -1;
        }
        vals[i] = v;
    }
    return 0;
}

static int read_gemm_shape(struct reader *rd, struct measurement *m)
{
    static const char *const keys[] = { "m", "n", "k", "batch" };
    double v[4] = { 0, 0, 0, 1 };

    if (parse_shape(rd, m->shape, keys, v, 4))
        return -1;
    if (!(v[0] > 0 && v[1] > 0 && v[2] > 0 && v[3] > 0)) {
        row_error(rd, "gemm shape '%s' needs positive m, n and k", m->shape);
        return -1;
    }
    m->m = v[0], m->n = v[1], m->k = v[2], m->batch = v[3];
    m->flops = 2 * m->m * m->n * m->k * m->batch;
    return 0;
}

/*
 * Attention forward FLOPs: 4 * batch * heads * seq^2 * head_dim (two GEMMs of
 * 2*s^2*d each), halved when causal - the count FlashAttention-2's benchmark
 * uses (formulas.md 6.3; Megatron halves the s^2 term for causal, 6.3).
 */
static int read_attn_shape(struct reader *rd, struct measurement *m)
{
    static const char *const keys[] = { "batch", "heads", "seq", "head_dim", "causal" };
    double v[5] = { 0, 0, 0, 0, 0 };

    if (!*m->shape)
        return 0;
    if (parse_shape(rd, m->shape, keys, v, 5))
        return -1;
    if (v[0] > 0 && v[1] > 0 && v[2] > 0 && v[3] > 0)
        m->flops = 4 * v[0] * v[1] * v[2] * v[2] * v[3] * (v[4] > 0 ? 0.5 : 1);
    m->seq = v[2];
    m->head_dim = v[3];
    m->causal = v[4] > 0;
    return 0;
}

/* Fill time and rate from whichever of them the row gives (rate: FLOP/s or bytes/s). */
static int complete(struct reader *rd, struct measurement *m, double work, const char *unit)
{
    if (m->time_s > 0 && work > 0 && !(m->rate > 0))
        m->rate = work / m->time_s;
    if (m->rate > 0 && work > 0 && !(m->time_s > 0))
        m->time_s = work / m->rate;
    if (!(m->rate > 0)) {
        row_error(rd, "'%s' row needs %s (time_us with a known size, or %s)", m->kernel,
                  work > 0 ? "a time or a rate" : "an achieved rate", unit);
        return -1;
    }
    return 0;
}

static int read_coll(struct reader *rd, struct measurement *m)
{
    double gpus, nodes;
    int a, p;

    if (count_field(rd, rd->col_gpus, "gpus", &gpus) ||
        count_field(rd, rd->col_nodes, "nodes", &nodes))
        return -1;
    m->gpus = m->op == COLL_SEND_RECV && gpus < 2 ? 2 : (int)gpus;
    m->nodes = nodes >= 1 ? (int)nodes : 1;
    a = parse_enum(csv_field(rd->t, rd->row, rd->col_algo), algo_name_i, ALGO_COUNT);
    p = parse_enum(csv_field(rd->t, rd->row, rd->col_proto), proto_name_i, PROTO_COUNT);
    if (a < 0 || p < 0) {
        row_error(rd, "unknown NCCL %s '%s'", a < 0 ? "algorithm" : "protocol",
                  csv_field(rd->t, rd->row, a < 0 ? rd->col_algo : rd->col_proto));
        return -1;
    }
    m->algo = a, m->proto = p;
    if (m->gpus < 2 || !(m->bytes > 0)) {
        row_error(rd, "collective row needs gpus >= 2 and a message size in bytes");
        return -1;
    }
    return complete(rd, m, m->bytes * calib_bus_factor(m->op, m->gpus), "gbps (bus bandwidth)");
}

/*
 * A kernel without a model is an error, not a row to skip: the kernel set writes only
 * kernels the cost model has a parameter for (bench.h), so another name is a typo or a file
 * of another format, and a skipped row would leave its class unfitted without a word.
 */
static int unknown_kernel(struct reader *rd, const char *kernel)
{
    const char *names[ARRAY_LEN(kernel_names)];
    const char *near;

    for (size_t i = 0; i < ARRAY_LEN(kernel_names); i++)
        names[i] = kernel_names[i].name;
    near = *kernel ? diag_did_you_mean(kernel, names, ARRAY_LEN(names)) : NULL;
    if (!*kernel)
        row_error(rd, "missing value for required column 'kernel'");
    else if (near)
        row_error(rd, "unknown kernel '%s' (did you mean '%s'?)", kernel, near);
    else
        row_error(rd, "unknown kernel '%s' (src/kernels/README.md lists the kernels)", kernel);
    return -1;
}

static int read_row(struct reader *rd, struct measurement *m)
{
    const char *kernel = csv_field(rd->t, rd->row, rd->col_kernel);
    double time_us, tflops, gbps;
    size_t i;

    memset(m, 0, sizeof(*m));
    m->line = rd->t->rows[rd->row].line;
    m->kernel = kernel;
    m->shape = csv_field(rd->t, rd->row, rd->col_shape);
    m->gpu = csv_field(rd->t, rd->row, rd->col_gpu);
    m->source = csv_field(rd->t, rd->row, rd->col_source);
    m->batch = 1;
    m->gpus = 1;
    m->nodes = 1;
    for (i = 0; i < ARRAY_LEN(kernel_names) && strcmp(kernel_names[i].name, kernel); i++)
        ;
    if (i == ARRAY_LEN(kernel_names))
        return unknown_kernel(rd, kernel);
    m->kind = kernel_names[i].kind;
    m->op = kernel_names[i].op;
    if (parse_dtype(csv_field(rd->t, rd->row, rd->col_dtype), &m->dtype)) {
        row_error(rd, "unknown dtype '%s'", csv_field(rd->t, rd->row, rd->col_dtype));
        return -1;
    }
    if (number(rd, rd->col_bytes, "bytes", MAX_BYTES, "1 TiB: more than any GPU holds",
               &m->bytes) ||
        number(rd, rd->col_time, "time_us", MAX_TIME_US,
               "1000 s: no kernel of the kernel set runs that long", &time_us) ||
        number(rd, rd->col_tflops, "tflops", MAX_TFLOPS, "ten times any GPU's peak", &tflops) ||
        number(rd, rd->col_gbps, "gbps", MAX_GBPS, "ten times the fastest HBM", &gbps) ||
        number(rd, rd->col_clock, "sm_clock_mhz", MAX_CLOCK_MHZ,
               "10 GHz: three times any GPU's highest SM clock", &m->clock_Hz) ||
        number(rd, rd->col_power, "power_w", MAX_POWER_W, "10 kW: ten times any GPU board's",
               &m->power_W))
        return -1;
    m->time_s = time_us * 1e-6;
    m->clock_Hz *= 1e6;
    m->sustained = !strcmp(kernel, "gemm_sustained");
    switch (m->kind) {
    case MEAS_GEMM:
        m->rate = tflops * 1e12;
        if (read_gemm_shape(rd, m))
            return -1;
        return complete(rd, m, m->flops, "tflops");
    case MEAS_GEMM_BEST:
    case MEAS_ATTN_FLASH:
    case MEAS_ATTN_STD:
        m->rate = tflops * 1e12;
        if (m->kind != MEAS_GEMM_BEST && read_attn_shape(rd, m))
            return -1;
        return complete(rd, m, m->flops, "tflops");
    case MEAS_COLL:
        m->rate = gbps * 1e9;
        return read_coll(rd, m);
    default:
        m->rate = gbps * 1e9;
        return complete(rd, m, m->bytes, "gbps");
    }
}

static int find_columns(struct reader *rd)
{
    const struct csv_table *t = rd->t;

    rd->col_kernel = csv_column(t, "kernel");
    rd->col_shape = csv_column(t, "shape");
    rd->col_bytes = csv_column(t, "bytes");
    rd->col_dtype = csv_column(t, "dtype");
    rd->col_gpu = csv_column(t, "gpu");
    rd->col_gpus = csv_column(t, "gpus");
    rd->col_nodes = csv_column(t, "nodes");
    rd->col_algo = csv_column(t, "algo");
    rd->col_proto = csv_column(t, "proto");
    rd->col_time = csv_column(t, "time_us");
    rd->col_tflops = csv_column(t, "tflops");
    rd->col_gbps = csv_column(t, "gbps");
    rd->col_source = csv_column(t, "source");
    rd->col_clock = csv_column(t, "sm_clock_mhz");
    rd->col_power = csv_column(t, "power_w");
    if (rd->col_kernel < 0) {
        if (rd->diag)
            fprintf(rd->diag, "%s:1: error: missing required column 'kernel'\n", t->name);
        return -1;
    }
    return 0;
}

/* ---- rows counted twice ------------------------------------------------------------------- */

/* The columns that make a measurement: what ran, where, and what was measured. */
static void measured_columns(const struct reader *rd, int *col)
{
    const int c[] = { rd->col_kernel, rd->col_shape, rd->col_bytes,  rd->col_dtype,
                      rd->col_gpu,    rd->col_gpus,  rd->col_nodes,  rd->col_algo,
                      rd->col_proto,  rd->col_time,  rd->col_tflops, rd->col_gbps };

    memcpy(col, c, sizeof(c));
}

#define NMEASURED 12

static uint64_t row_hash(const struct reader *rd, int row, const int *col)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */

    for (int i = 0; i < NMEASURED; i++) {
        for (const char *p = csv_field(rd->t, row, col[i]); *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211u;
        h = (h ^ 0x1f) * 1099511628211u; /* field separator */
    }
    return h;
}

static bool same_row(const struct reader *rd, int a, int b, const int *col)
{
    for (int i = 0; i < NMEASURED; i++)
        if (strcmp(csv_field(rd->t, a, col[i]), csv_field(rd->t, b, col[i])))
            return false;
    return true;
}

/*
 * A row that repeats an earlier one in every measured column (a copy, whatever its date or
 * notes) is an error: it would weigh twice in the fit and make its parameters look better
 * determined than the data allow (50 copies of one GEMM "fit" latency and gemm_max from one
 * point). Repeated measurements of one shape with their own timings are distinct rows.
 * Open addressing over row hashes, probed in row order: deterministic.
 */
static void refuse_copies(struct reader *rd)
{
    size_t cap = 16, mask;
    int *slot, col[NMEASURED];

    measured_columns(rd, col);
    while (cap < 2 * (size_t)rd->t->nrows)
        cap *= 2;
    mask = cap - 1;
    slot = xmalloc(cap * sizeof(*slot));
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    for (rd->row = 0; rd->row < rd->t->nrows; rd->row++) {
        size_t k = (size_t)row_hash(rd, rd->row, col) & mask;

        while (slot[k] >= 0 && !same_row(rd, slot[k], rd->row, col))
            k = (k + 1) & mask;
        if (slot[k] >= 0)
            row_error(rd,
                      "the row repeats line %d in every measured column: a copied row "
                      "weighs twice in the fit",
                      rd->t->rows[slot[k]].line);
        else
            slot[k] = rd->row;
    }
    free(slot);
}

int calib_parse(struct csv_table *t, struct meas_set *ms, FILE *diag)
{
    struct reader rd = { .t = t, .diag = diag };

    memset(ms, 0, sizeof(*ms));
    ms->csv = t;
    if (find_columns(&rd))
        return -1;
    if (t->nrows == 0) {
        if (diag)
            fprintf(diag, "%s: error: no measurements (a header and no rows): nothing to fit\n",
                    t->name);
        return -1;
    }
    ms->rows = xcalloc((size_t)t->nrows, sizeof(*ms->rows));
    for (rd.row = 0; rd.row < t->nrows; rd.row++)
        if (read_row(&rd, &ms->rows[ms->n]) == 0)
            ms->n++;
    refuse_copies(&rd);
    return rd.errors ? -1 : 0;
}

int calib_read(const char *path, struct meas_set *ms, FILE *diag)
{
    struct csv_error err;
    struct csv_table *t = csv_read_file(path, &err);

    if (!t) {
        memset(ms, 0, sizeof(*ms));
        if (diag)
            csv_print_error(path, &err, diag);
        return -1;
    }
    return calib_parse(t, ms, diag);
}

void calib_release(struct meas_set *ms)
{
    free(ms->rows);
    csv_free(ms->csv);
    memset(ms, 0, sizeof(*ms));
}
