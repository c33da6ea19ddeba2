/*
 * calibrate_read.c - the measurement reader of `simtrain calibrate` (see
 * calibrate.h): one CSV row per kernel and shape or size in the kernel set's
 * format (src/kernels/README.md), checked and converted to SI units, with a
 * diagnostic per bad row. The fits are calibrate.c.
 */
#include "fit/calibrate.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
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

/* A number field: empty -> *out = 0 and 0; malformed or negative -> -1 with a diagnostic. */
static int number(struct reader *rd, int col, const char *what, double *out)
{
    const char *s = csv_field(rd->t, rd->row, col);
    char *end;

    *out = 0;
    if (!*s)
        return 0;
    *out = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (end == s || *end || !isfinite(*out) || *out < 0) {
        row_error(rd, "%s '%s' is not a non-negative number", what, s);
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

    while (*p) {
        char key[32];
        size_t kl = 0;
        char *end;
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
        v = strtod(++p, &end);
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

    if (number(rd, rd->col_gpus, "gpus", &gpus) || number(rd, rd->col_nodes, "nodes", &nodes))
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
        return 1; /* no model for this kernel: ignored */
    m->kind = kernel_names[i].kind;
    m->op = kernel_names[i].op;
    if (parse_dtype(csv_field(rd->t, rd->row, rd->col_dtype), &m->dtype)) {
        row_error(rd, "unknown dtype '%s'", csv_field(rd->t, rd->row, rd->col_dtype));
        return -1;
    }
    if (number(rd, rd->col_bytes, "bytes", &m->bytes) ||
        number(rd, rd->col_time, "time_us", &time_us) ||
        number(rd, rd->col_tflops, "tflops", &tflops) || number(rd, rd->col_gbps, "gbps", &gbps) ||
        number(rd, rd->col_clock, "sm_clock_mhz", &m->clock_Hz) ||
        number(rd, rd->col_power, "power_w", &m->power_W))
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

int calib_parse(struct csv_table *t, struct meas_set *ms, FILE *diag)
{
    struct reader rd = { .t = t, .diag = diag };

    memset(ms, 0, sizeof(*ms));
    ms->csv = t;
    if (find_columns(&rd))
        return -1;
    ms->rows = xcalloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*ms->rows));
    for (rd.row = 0; rd.row < t->nrows; rd.row++) {
        int rc = read_row(&rd, &ms->rows[ms->n]);

        if (rc == 0)
            ms->n++;
        else if (rc > 0)
            ms->ignored++;
    }
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
