/*
 * cmd_collective.c - `simtrain collective`: an nccl-tests style table of one
 * collective over a range of sizes on a hardware description (time, algbw,
 * busbw with nccl-tests' definitions, and the algorithm NCCL would pick), an
 * optional gnuplot chart of busbw against size, and `--validate CSV`, which
 * compares the model with published NCCL measurements (tests/validation/
 * nccl.csv, format of validation/sources/nccl.csv).
 */
#define _POSIX_C_SOURCE 200809L /* mkdir() for --plot DIR */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "collective.h"
#include "config.h"
#include "csv.h"

struct opts {
    const char *hardware;
    const char *validate;
    const char *plot;
    enum coll_op op;
    int gpus;  /* 0 = one node */
    int nodes; /* 0 = as few as hold the GPUs */
    double min_bytes, max_bytes, factor;
    struct nccl_cfg nccl;
    bool markdown;
    bool calibration; /* use hw->coll_cal (default yes; --validate ignores it) */
};

/* ---- arguments ---------------------------------------------------------------- */

static void usage(FILE *out)
{
    fputs("usage: simtrain collective --hardware H [--op OP] [--gpus N] [--nodes M]\n"
          "                           [--sizes MIN:MAX] [--factor F] [--algo A] [--proto P]\n"
          "                           [--plot DIR]\n"
          "                           [--no-calibration]\n"
          "       simtrain collective --validate NCCL.csv [--markdown]\n"
          "\n"
          "Print an nccl-tests style table (size, time, algbw, busbw) of one collective on\n"
          "N GPUs of hardware H (filling nodes in order, or N/M on each of M nodes), with the\n"
          "algorithm and protocol NCCL would choose. OP: all_reduce (default), all_gather,\n"
          "reduce_scatter, broadcast, reduce, all_to_all, send_recv. Sizes like nccl-tests\n"
          "-b/-e (K, M, G = 1024^n; default 8:8G), stepping by F (default 2).\n"
          "--algo ring|tree|nvls|nvls_tree|hier and --proto ll|ll128|simple force a choice\n"
          "like NCCL_ALGO / NCCL_PROTO. --plot DIR writes DIR/busbw.dat and busbw.png /\n"
          "busbw.svg (gnuplot, plots/busbw.gp).\n"
          "--validate compares the model (calibration files ignored) with published\n"
          "measurements and prints per-row errors and a summary; --markdown for docs.\n",
          out);
}

/* "8", "1K", "64M", "8G", "1GiB", "512 B": nccl-tests sizes, K/M/G/T = powers of 1024. */
static int parse_size(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end), mult = 1;

    if (end == s || v < 0 || !isfinite(v))
        return -1;
    while (*end == ' ')
        end++;
    switch (*end) {
    case 'K':
    case 'k':
        mult = 1024.0;
        break;
    case 'M':
        mult = 1024.0 * 1024;
        break;
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        break;
    case 'T':
        mult = 1024.0 * 1024 * 1024 * 1024;
        break;
    default:
        mult = 0;
    }
    if (mult > 0) {
        end++;
        if (*end == 'i')
            end++;
    } else {
        mult = 1;
    }
    if (*end == 'B')
        end++;
    if (*end)
        return -1;
    *out = v * mult;
    return 0;
}

static int parse_enum(const char *s, const char *(*name)(int), int count, int *out)
{
    int i;

    for (i = 0; i < count; i++)
        if (strcmp(s, name(i)) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static const char *op_name_i(int i)
{
    return coll_op_name((enum coll_op)i);
}

static const char *algo_name_i(int i)
{
    return algo_name((enum coll_algo)i);
}

static const char *proto_name_i(int i)
{
    return proto_name((enum coll_proto)i);
}

static int bad_value(const char *opt, const char *val)
{
    fprintf(stderr, "simtrain collective: error: invalid value '%s' for '%s'\n", val, opt);
    return -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    int i, v;

    memset(o, 0, sizeof(*o));
    o->op = COLL_ALL_REDUCE;
    o->min_bytes = 8;
    o->max_bytes = 8.0 * 1024 * 1024 * 1024;
    o->factor = 2;
    o->calibration = true;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--hardware") == 0 || strcmp(a, "--op") == 0 ||
                     strcmp(a, "--gpus") == 0 || strcmp(a, "--nodes") == 0 ||
                     strcmp(a, "--sizes") == 0 || strcmp(a, "--factor") == 0 ||
                     strcmp(a, "--algo") == 0 || strcmp(a, "--proto") == 0 ||
                     strcmp(a, "--plot") == 0 || strcmp(a, "--validate") == 0;
        if (takes && !val) {
            fprintf(stderr, "simtrain collective: error: '%s' needs a value\n", a);
            return -1;
        }
        if (strcmp(a, "--hardware") == 0) {
            o->hardware = val;
        } else if (strcmp(a, "--validate") == 0) {
            o->validate = val;
        } else if (strcmp(a, "--plot") == 0) {
            o->plot = val;
        } else if (strcmp(a, "--op") == 0) {
            if (parse_enum(val, op_name_i, COLL_OP_COUNT, &v))
                return bad_value(a, val);
            o->op = (enum coll_op)v;
        } else if (strcmp(a, "--algo") == 0) {
            if (parse_enum(val, algo_name_i, ALGO_COUNT, &v))
                return bad_value(a, val);
            o->nccl.algo = (enum coll_algo)v;
        } else if (strcmp(a, "--proto") == 0) {
            if (parse_enum(val, proto_name_i, PROTO_COUNT, &v))
                return bad_value(a, val);
            o->nccl.proto = (enum coll_proto)v;
        } else if (strcmp(a, "--gpus") == 0) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 1000000)
                return bad_value(a, val);
            o->gpus = (int)n;
        } else if (strcmp(a, "--nodes") == 0) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 1000000)
                return bad_value(a, val);
            o->nodes = (int)n;
        } else if (strcmp(a, "--sizes") == 0) {
            const char *colon = strchr(val, ':');
            char *lo;
            int bad;
            if (!colon)
                return bad_value(a, val);
            lo = xstrndup(val, (size_t)(colon - val));
            bad = parse_size(lo, &o->min_bytes) || parse_size(colon + 1, &o->max_bytes) ||
                  o->min_bytes < 1 || o->max_bytes < o->min_bytes;
            free(lo);
            if (bad)
                return bad_value(a, val);
        } else if (strcmp(a, "--factor") == 0) {
            char *end;
            o->factor = strtod(val, &end);
            if (*end || !(o->factor > 1) || o->factor > 1e6)
                return bad_value(a, val);
        } else if (strcmp(a, "--markdown") == 0) {
            o->markdown = true;
            continue;
        } else if (strcmp(a, "--no-calibration") == 0) {
            o->calibration = false;
            continue;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        } else {
            fprintf(stderr, "simtrain collective: error: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
        i++;
    }
    if (!o->validate && !o->hardware) {
        fprintf(stderr, "simtrain collective: error: '--hardware' is required\n");
        usage(stderr);
        return -1;
    }
    return 0;
}

/* ---- placement -------------------------------------------------------------------- */

/*
 * The group of n GPUs on `nodes` nodes of hw (0 = as few as hold them): the
 * first n / nodes GPUs of each node, or with nodes = 0 the first n GPUs,
 * filling nodes in order. *last receives the group's last GPU id. The caller
 * frees the returned topology.
 */
static struct topo *place(const struct hardware *hw, int n, int nodes, struct comm_group *g,
                          int *last)
{
    int G = hw->gpus_per_node > 0 ? hw->gpus_per_node : 1, i;
    int *gpus = xmalloc(sizeof(int) * (size_t)n);
    struct topo *t;

    if (nodes <= 0)
        nodes = (n + G - 1) / G;
    t = topo_new(hw, nodes);
    for (i = 0; i < n; i++) {
        int per = (n + nodes - 1) / nodes;
        gpus[i] = nodes > 1 && per <= G ? (i / per) * G + i % per : i;
    }
    topo_group(t, gpus, n, g);
    *last = gpus[n - 1];
    free(gpus);
    return t;
}

/* ---- the table ---------------------------------------------------------------------- */

static double elements(enum coll_op op, double bytes, int n)
{
    bool per_rank = op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER || op == COLL_ALL_TO_ALL;
    return floor(bytes / 4 / (per_rank ? n : 1)); /* float elements, as nccl-tests prints */
}

static void print_header(const struct hardware *hw, const struct opts *o,
                         const struct comm_group *g, const struct topo *t, int last, FILE *out)
{
    struct nccl_model m;
    struct coll_cost c;
    struct route r;

    nccl_model_init(hw, g,
                    o->op == COLL_ALL_TO_ALL || o->op == COLL_SEND_RECV ? COLL_ALL_GATHER : o->op,
                    0, &m);
    coll_estimate(hw, &o->nccl, g, o->op, o->max_bytes, &c);
    fprintf(out, "# simtrain collective: %s on %s, %d GPUs = %d node%s x %d%s\n",
            coll_op_name(o->op), hw->name ? hw->name : "?", g->nranks, g->nnodes,
            g->nnodes > 1 ? "s" : "", g->ppn,
            g->nnodes > 1 ? (g->rail_aligned ? ", rail-aligned" : ", not rail-aligned") : "");
    fprintf(out, "# path: %s\n", c.path);
    if (g->nranks > 1) {
        topo_route(t, 0, last, &r);
        fprintf(out, "# route GPU 0 -> GPU %d: %s, %d hops, narrowest link %.1f GB/s, %.2f us\n",
                last, r.path, r.nhops, r.bw_Bps / 1e9, (double)r.latency / 1e3);
    }
    if (hw->net.nics_per_node > 0 && g->nnodes > 1)
        fprintf(out, "# network: %d NICs x %.0f Gb/s per node, %s, %d fabric levels\n",
                hw->net.nics_per_node, hw->net.nic_bw_Bps * 8 / 1e9,
                hw->net.rail_optimized ? "rail-optimized" : "not rail-optimized",
                hw->net.fabric_levels);
    fprintf(out, "# NCCL model: ring %d ch x %.1f GB/s", m.ring.nchannels,
            m.nnodes <= 2 ? m.ring.bw_intra : m.ring.bw_inter);
    if (m.tree.nchannels)
        fprintf(out, ", tree %d x %.1f/%.1f", m.tree.nchannels, m.tree.bw_intra, m.tree.bw_inter);
    if (m.nvls.nchannels)
        fprintf(out, ", NVLS %d heads x %.1f/%.1f", m.nvls.nchannels, m.nvls.bw_intra,
                m.nvls.bw_inter);
    fprintf(out, " (per channel, NCCL units)\n");
    if (hw->ncoll_cal > 0)
        fprintf(out, "# calibration: %s\n",
                o->calibration ? "used where it matches" : "ignored (--no-calibration)");
    fprintf(out, "#\n# %12s %14s %10s %12s %12s %12s  %s\n", "size(B)", "count(elem)", "type",
            "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algo/proto");
}

static int write_plot(const struct opts *o, const struct hardware *hw, const struct comm_group *g,
                      const double *bytes, const double *busbw, int n)
{
    const char *dir_env = getenv("SIMTRAIN_DATA");
    char *dat, *script, *cmd, *title;
    FILE *f;
    int i;

#ifdef SIMTRAIN_DATA_DIR
    if (!dir_env || !*dir_env)
        dir_env = SIMTRAIN_DATA_DIR;
#endif
    if (mkdir(o->plot, 0777) && errno != EEXIST) {
        fprintf(stderr, "simtrain collective: error: cannot create '%s': %s\n", o->plot,
                strerror(errno));
        return -1;
    }
    dat = xasprintf("%s/busbw.dat", o->plot);
    f = fopen(dat, "w");
    if (!f) {
        fprintf(stderr, "simtrain collective: error: cannot write '%s': %s\n", dat,
                strerror(errno));
        free(dat);
        return -1;
    }
    fprintf(f, "# bytes busbw_GBps (%s, %s, %d GPUs)\n", coll_op_name(o->op), hw->name, g->nranks);
    for (i = 0; i < n; i++)
        fprintf(f, "%.0f %.6g\n", bytes[i], busbw[i]);
    fclose(f);
    script = xasprintf("%s/plots/busbw.gp", dir_env && *dir_env ? dir_env : ".");
    title = xasprintf("%s, %s, %d GPUs", coll_op_name(o->op), hw->name ? hw->name : "?", g->nranks);
    if (strpbrk(o->plot, "'\"\\$`") || strpbrk(title, "'\"\\$`")) {
        fprintf(stderr, "simtrain collective: note: wrote %s; names need quoting, no chart\n", dat);
    } else {
        cmd = xasprintf("gnuplot -e \"datafile='%s'; outbase='%s/busbw'; titletext='%s'\" "
                        "'%s' 2>/dev/null",
                        dat, o->plot, title, script);
        if (system(cmd) != 0)
            fprintf(stderr, "simtrain collective: note: gnuplot failed; the data is in %s\n", dat);
        else
            fprintf(stderr, "simtrain collective: wrote %s/busbw.png and %s/busbw.svg\n", o->plot,
                    o->plot);
        free(cmd);
    }
    free(title);
    free(script);
    free(dat);
    return 0;
}

static int run_table(const struct opts *o)
{
    struct hardware *hw = cfg_load_hardware(o->hardware, stderr);
    struct hardware use;
    struct comm_group g;
    struct topo *t;
    double s, *xs = NULL, *ys = NULL;
    size_t cap_x = 0, cap_y = 0;
    int n = 0, rc = 0, nx = 0, last;

    if (!hw)
        return 1;
    use = *hw;
    if (!o->calibration)
        use.ncoll_cal = 0;
    if ((o->gpus > use.gpus_per_node || o->nodes > 1) &&
        (use.net.nics_per_node <= 0 || use.net.nic_bw_Bps <= 0)) {
        fprintf(stderr,
                "simtrain collective: error: '%s' has no network: at most %d GPUs on one node\n",
                o->hardware, use.gpus_per_node);
        cfg_free_hw(hw);
        return 1;
    }
    if (o->nodes > 1 &&
        (o->gpus < o->nodes || o->gpus % o->nodes || o->gpus / o->nodes > use.gpus_per_node)) {
        fprintf(stderr,
                "simtrain collective: error: %d GPUs do not split evenly over %d nodes of %d "
                "GPUs\n",
                o->gpus, o->nodes, use.gpus_per_node);
        cfg_free_hw(hw);
        return 1;
    }
    t = place(&use, o->gpus > 0 ? o->gpus : (use.gpus_per_node > 0 ? use.gpus_per_node : 1),
              o->nodes, &g, &last);
    print_header(&use, o, &g, t, last, stdout);
    for (s = o->min_bytes; s <= o->max_bytes * (1 + 1e-9); s = ceil(s * o->factor)) {
        struct coll_cost c;
        double sec, algbw, busbw;

        coll_estimate(&use, &o->nccl, &g, o->op, s, &c);
        sec = (double)coll_time(&c) / NS_PER_S;
        algbw = sec > 0 ? s / sec / 1e9 : 0;
        busbw = algbw * coll_bus_factor(o->op, g.nranks);
        printf("  %12.0f %14.0f %10s %12.2f %12.2f %12.2f  %s/%s\n", s,
               elements(o->op, s, g.nranks), "float", sec * 1e6, algbw, busbw,
               c.algo == ALGO_AUTO ? "p2p" : algo_name(c.algo), proto_name(c.proto));
        VEC_PUSH(xs, nx, cap_x, s);
        VEC_PUSH(ys, n, cap_y, busbw);
    }
    if (o->plot)
        rc = write_plot(o, &use, &g, xs, ys, n) ? 1 : 0;
    free(xs);
    free(ys);
    topo_free(t);
    cfg_free_hw(hw);
    return rc;
}

/* ---- validation ------------------------------------------------------------------------ */

struct vrow {
    int line;         /* CSV line */
    char label[48];   /* short source name */
    const char *stem; /* hardware file */
    enum coll_op op;
    int gpus, nodes;
    enum coll_algo algo; /* forced as the source ran it, or auto */
    double bytes;
    bool algbw;         /* the figure is algbw (else busbw) */
    double lo, hi;      /* measured value or range, GB/s */
    int harness_gpus;   /* GPUs driven by one nccl-tests process (-g N), else 0 */
    const char *skip;   /* why the row is not evaluated */
    double pred;        /* GB/s */
    double err;         /* signed relative error */
    enum coll_algo ran; /* what the model ran */
    enum coll_proto ran_proto;
    bool floored; /* the harness launch floor decided the time */
};

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

/* Fill a row from the CSV; sets skip when the row is not a collective benchmark we model. */
static void read_vrow(const struct csv_table *tab, int r, struct vrow *v)
{
#define F(name) csv_field(tab, r, csv_column(tab, name))
    const char *metric = F("metric_name"), *algo = F("algorithm"), *val = F("metric_value");
    char *end;

    memset(v, 0, sizeof(*v));
    v->line = tab->rows[r].line;
    short_source(F("source"), v->label, sizeof(v->label));
    v->stem = stem_for(F("gpu"));
    v->op = COLL_ALL_REDUCE;
    v->gpus = atoi(F("num_gpus")) > 0 ? atoi(F("num_gpus")) : 8;
    v->nodes = atoi(F("num_nodes")) > 0 ? atoi(F("num_nodes")) : 1;
    v->bytes = atof(F("message_size_bytes")) > 0 ? atof(F("message_size_bytes"))
                                                 : 8.0 * 1024 * 1024 * 1024;
    v->algo = ALGO_AUTO;
    if (strncmp(algo, "NVLS (stated)", 13) == 0 || strncmp(algo, "stated NVLS", 11) == 0)
        v->algo = ALGO_NVLS; /* the source ran NCCL_ALGO=NVLS (see notes) */
    else if (strcmp(algo, "Ring") == 0)
        v->algo = ALGO_RING;
    if (strstr(F("notes"), "-g 8"))
        v->harness_gpus = 8;
    v->lo = strtod(val, &end);
    v->hi = *end == '-' ? strtod(end + 1, NULL) : v->lo;
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
    struct nccl_cfg cfg = { v->algo, PROTO_AUTO };
    struct comm_group g;
    struct coll_cost c;
    struct topo *t;
    double sec, algbw;
    int last;

    hw.ncoll_cal = 0; /* the model alone: calibrations come from these very figures */
    hw.coll_cal = NULL;
    t = place(&hw, v->gpus, v->nodes, &g, &last);
    topo_free(t);
    coll_estimate(&hw, &cfg, &g, v->op, v->bytes, &c);
    v->ran = c.algo;
    v->ran_proto = c.proto;
    sec = (double)coll_time(&c) / NS_PER_S;
    if (v->harness_gpus > 0) { /* one host thread launches on every GPU, each iteration */
        double launch = hw.eff.launch > 0 ? (double)hw.eff.launch / NS_PER_S : 4e-6;
        v->floored = v->harness_gpus * launch > sec;
        sec = MAX(sec, v->harness_gpus * launch);
    }
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

/* Summary of one band: n, median and max |error|, and how many meet `target`. */
static void band_summary(const struct vrow *rows, int n, int band, double target, const char *name,
                         bool md)
{
    double *e = xmalloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    int k = 0, ok = 0, i;

    for (i = 0; i < n; i++) {
        const struct vrow *v = &rows[i];
        int b = v->skip ? -1 : strstr(v->label, "ND_") == NULL ? 2 : v->bytes >= 67108864 ? 0 : 1;
        if (b != band)
            continue;
        e[k++] = fabs(v->err);
        ok += fabs(v->err) <= target;
    }
    qsort(e, (size_t)k, sizeof(double), cmp_double);
    if (k == 0)
        ;
    else if (md)
        printf("| %s | %d | %.1f %% | %.1f %% | %d of %d within %.0f %% |\n", name, k,
               100 * (k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2), 100 * e[k - 1], ok, k,
               100 * target);
    else
        printf("%-34s n=%-3d median |err| %5.1f %%  max %5.1f %%  %d of %d within %.0f %%\n", name,
               k, 100 * (k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2), 100 * e[k - 1], ok, k,
               100 * target);
    free(e);
}

static void print_vrow(const struct vrow *v, bool md)
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
        printf("| %d | %s | | | | | | | %s | | skipped: %s |\n", v->line, v->label, meas, v->skip);
    else if (md)
        printf("| %d | %s | %s | %s | %d | %s | %s | %s | %s %s | %s | %+.1f %% |\n", v->line,
               v->label, v->stem, coll_op_name(v->op), v->gpus, size, algo_name(v->algo), ran, meas,
               v->algbw ? "algbw" : "busbw", pred, 100 * v->err);
    else if (v->skip)
        printf("%5d %-28.28s skipped: %s\n", v->line, v->label, v->skip);
    else
        printf("%5d %-28.28s %-13s %-10s %3d %11s %-5s %-16s %10s %10s  %+7.1f %%\n", v->line,
               v->label, v->stem, coll_op_name(v->op), v->gpus, size, algo_name(v->algo), ran, meas,
               pred, 100 * v->err);
}

static int run_validate(const struct opts *o)
{
    struct csv_error cerr;
    struct csv_table *tab = csv_read_file(o->validate, &cerr);
    struct vrow *rows;
    struct hardware *hws[8] = { 0 };
    const char *stems[8] = { 0 };
    int nhw = 0, i, j, failed = 0;

    if (!tab) {
        csv_print_error(o->validate, &cerr, stderr);
        return 1;
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
        rows[i].pred = predict(hw, &rows[i]);
        rows[i].err = rel_error(&rows[i]);
    }
    if (o->markdown) {
        printf("| line | source | hardware | op | GPUs | size (B) | NCCL_ALGO | model ran | "
               "measured (GB/s) | model (GB/s) | error |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n");
    } else {
        printf("# simtrain collective --validate %s: the model alone (calibration ignored);\n"
               "# rows run with nccl-tests -g 8 include its launch floor (8 x launch),\n"
               "# * = the floor decided\n",
               o->validate);
        printf("%5s %-28s %-13s %-10s %3s %11s %-5s %-16s %10s %10s  %8s\n", "line", "source",
               "hardware", "op", "n", "size(B)", "algo", "model ran", "measured", "model", "error");
    }
    for (i = 0; i < tab->nrows; i++)
        print_vrow(&rows[i], o->markdown);
    if (o->markdown)
        printf("\n| band | n | median abs error | max abs error | within target |\n"
               "|---|---|---|---|---|\n");
    else
        printf("\n");
    band_summary(rows, tab->nrows, 0, 0.10, "8-GPU nodes, size >= 64 MiB", o->markdown);
    band_summary(rows, tab->nrows, 1, 0.25, "8-GPU nodes, size < 64 MiB", o->markdown);
    band_summary(rows, tab->nrows, 2, 0.10, "maintainer figures (peak)", o->markdown);
    for (j = 0; j < nhw; j++)
        cfg_free_hw(hws[j]);
    free(rows);
    csv_free(tab);
    return failed;
}

int cmd_collective(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);

    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.validate)
        return run_validate(&o);
    return run_table(&o);
}
