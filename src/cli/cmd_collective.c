/*
 * cmd_collective.c - `simtrain collective`: an nccl-tests style table of one
 * collective over a range of sizes on a hardware description (time, algbw,
 * busbw with nccl-tests' definitions, and the algorithm NCCL would pick) and
 * an optional gnuplot chart of busbw against size. `--validate CSV` is
 * cmd_collective_validate.c.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "report/plot_chart.h"
#include "cli/cmd_collective.h"
#include "net/collective.h"
#include "config/config.h"

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
    enum coll_launch
        launch; /* how the harness drives the GPUs (default per-rank, nccl-tests -g 1) */
    int iters;  /* timed iterations, nccl-tests -n (default 20) */
};

/* ---- arguments ---------------------------------------------------------------- */

static void usage(FILE *out)
{
    fputs("usage: simtrain collective --hardware H [--op OP] [--gpus N] [--nodes M]\n"
          "                           [--sizes MIN:MAX] [--factor F] [--algo A] [--proto P]\n"
          "                           [--launch per-rank|single-process] [--iters N]\n"
          "                           [--plot DIR] [--no-calibration]\n"
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
          "Times are what nccl-tests reports: N iterations (--iters, its -n, default 20)\n"
          "enqueued back to back, so the host's launch work and the GPUs' overlap.\n"
          "--launch per-rank (default; nccl-tests -g 1, one process or thread per GPU)\n"
          "costs one launch per GPU; single-process (nccl-tests -g N) launches on every\n"
          "GPU from one thread, N launches (efficiency.launch each) per iteration.\n"
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

static const char *launch_name_i(int i)
{
    return coll_launch_name(i);
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
    o->launch = LAUNCH_PER_RANK;
    o->iters = 20; /* nccl-tests src/common.cu: static int iters = 20 */
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes =
            strcmp(a, "--hardware") == 0 || strcmp(a, "--op") == 0 || strcmp(a, "--gpus") == 0 ||
            strcmp(a, "--nodes") == 0 || strcmp(a, "--sizes") == 0 || strcmp(a, "--factor") == 0 ||
            strcmp(a, "--algo") == 0 || strcmp(a, "--proto") == 0 || strcmp(a, "--plot") == 0 ||
            strcmp(a, "--validate") == 0 || strcmp(a, "--launch") == 0 || strcmp(a, "--iters") == 0;
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
        } else if (strcmp(a, "--launch") == 0) {
            if (parse_enum(val, launch_name_i, LAUNCH_COUNT, &v))
                return bad_value(a, val);
            o->launch = (enum coll_launch)v;
        } else if (strcmp(a, "--iters") == 0) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 1000000000)
                return bad_value(a, val);
            o->iters = (int)n;
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

struct topo *cmd_collective_place(const struct hardware *hw, int n, int nodes, struct comm_group *g,
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
    fprintf(out,
            "# harness: %s, %d timed iterations, %.2f us launch per GPU per iteration%s "
            "(* = the host's launches set the pace)\n",
            coll_launch_name(o->launch), o->iters, (double)hw->eff.launch / 1e3,
            o->launch == LAUNCH_SINGLE_PROCESS ? " x all GPUs from one thread" : "");
    if (hw->ncoll_cal > 0)
        fprintf(out, "# calibration: %s\n",
                o->calibration ? "used where it matches" : "ignored (--no-calibration)");
    fprintf(out, "#\n# %12s %14s %10s %12s %12s %12s  %s\n", "size(B)", "count(elem)", "type",
            "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algo/proto");
}

static int write_plot(const struct opts *o, const struct hardware *hw, const struct comm_group *g,
                      const double *bytes, const double *busbw, int n)
{
    char *title, *safe, *vars;
    FILE *f;
    int i;

    if (chart_make_dir(o->plot) != 0)
        return -1;
    f = chart_open_dat(o->plot, "busbw");
    if (!f)
        return -1;
    fprintf(f, "# bytes busbw_GBps (%s, %s, %d GPUs)\n", coll_op_name(o->op), hw->name, g->nranks);
    for (i = 0; i < n; i++)
        fprintf(f, "%.0f %.6g\n", bytes[i], busbw[i]);
    if (chart_close_dat(f, o->plot, "busbw") != 0)
        return -1;
    title = xasprintf("%s, %s, %d GPUs", coll_op_name(o->op), hw->name ? hw->name : "?", g->nranks);
    safe = chart_safe_title(title);
    vars = xasprintf("titletext='%s'", safe);
    chart_draw(o->plot, "busbw", "busbw", vars);
    free(vars);
    free(safe);
    free(title);
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
    int n = 0, rc = 0, nx = 0, last, host_gpus;

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
    /* the GPUs must fit the nodes given, --nodes 1 too (cmd_collective_place() trusts it) */
    if ((o->nodes > 1 &&
         (o->gpus < o->nodes || o->gpus % o->nodes || o->gpus / o->nodes > use.gpus_per_node)) ||
        (o->nodes == 1 && o->gpus > use.gpus_per_node)) {
        fprintf(stderr,
                "simtrain collective: error: %d GPUs do not split evenly over %d node%s of %d "
                "GPUs\n",
                o->gpus, o->nodes, o->nodes == 1 ? "" : "s", use.gpus_per_node);
        cfg_free_hw(hw);
        return 1;
    }
    t = cmd_collective_place(
        &use, o->gpus > 0 ? o->gpus : (use.gpus_per_node > 0 ? use.gpus_per_node : 1), o->nodes, &g,
        &last);
    /* single-process: one thread launches on every GPU of the node it runs on */
    host_gpus = o->launch == LAUNCH_SINGLE_PROCESS ? g.ppn : 1;
    print_header(&use, o, &g, t, last, stdout);
    for (s = o->min_bytes; s <= o->max_bytes * (1 + 1e-9); s = ceil(s * o->factor)) {
        struct coll_cost c;
        double sec, algbw, busbw;
        sim_time gpu;

        coll_estimate(&use, &o->nccl, &g, o->op, s, &c);
        gpu = coll_time(&c);
        sec = (double)coll_bench_time(gpu, use.eff.launch, host_gpus, o->iters) / NS_PER_S;
        algbw = sec > 0 ? s / sec / 1e9 : 0;
        busbw = algbw * coll_bus_factor(o->op, g.nranks);
        printf("  %12.0f %14.0f %10s %12.2f %12.2f %12.2f  %s/%s%s\n", s,
               elements(o->op, s, g.nranks), "float", sec * 1e6, algbw, busbw,
               c.algo == ALGO_AUTO ? "p2p" : algo_name(c.algo), proto_name(c.proto),
               (sim_time)host_gpus * use.eff.launch > gpu ? "*" : "");
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

int cmd_collective(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);

    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.validate)
        return cmd_collective_validate(o.validate, o.markdown);
    return run_table(&o);
}
