/*
 * cmd_collective.c - `simtrain collective`: an nccl-tests style table of one
 * collective over a range of sizes on a hardware description (time, algbw,
 * busbw with nccl-tests' definitions, and the algorithm NCCL would pick,
 * net/bench.h) and an optional gnuplot chart of busbw against size.
 * `--validate CSV` is fit/nccl_validate.h.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "cli/cmd.h"
#include "config/config.h"
#include "fit/nccl_validate.h"
#include "net/bench.h"
#include "net/collective.h"
#include "report/plot_chart.h"

struct opts {
    struct cli_list pos; /* none accepted */
    const char *hardware;
    const char *validate;
    const char *plot;
    int op, algo, proto, launch; /* indices of the enums' names */
    int gpus;                    /* 0 = one node */
    int nodes;                   /* 0 = as few as hold the GPUs */
    struct size_range {
        double min_bytes, max_bytes;
    } sizes;
    double factor;
    bool markdown;
    bool no_calibration;    /* ignore hw->coll_cal (--validate always does) */
    int iters;              /* timed iterations, nccl-tests -n (default 20) */
    struct bench_cfg bench; /* op, algo, proto, launch and iters as the model takes them */
};

/* ---- arguments ---------------------------------------------------------------- */

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

static const char *launch_name_i(int i)
{
    return coll_launch_name(i);
}

/* "MIN:MAX" in nccl-tests sizes, 1 <= MIN <= MAX. */
static int parse_sizes(const char *val, void *field)
{
    struct size_range *r = field;
    const char *colon = strchr(val, ':');
    char *lo;
    int bad;

    if (!colon)
        return -1;
    lo = xstrndup(val, (size_t)(colon - val));
    bad = bench_parse_size(lo, &r->min_bytes) || bench_parse_size(colon + 1, &r->max_bytes) ||
          r->min_bytes < 1 || r->max_bytes < r->min_bytes;
    free(lo);
    return bad ? -1 : 0;
}

#define OFF(field) offsetof(struct opts, field)

static const struct cli_opt collective_opts[] = {
    { "--hardware", 0, "H", "the hardware description, by name (dgx-h100) or path",
      .kind = CLI_STRING, .offset = OFF(hardware) },
    { "--op", 0, "OP", "the collective (default all_reduce)", .kind = CLI_CHOICE, .offset = OFF(op),
      .choice_name = op_name_i, .nchoices = COLL_OP_COUNT },
    { "--gpus", 0, "N",
      "GPUs in the group (default: every GPU of the nodes, one node's without --nodes)",
      .kind = CLI_INT, .offset = OFF(gpus), .min = 1, .max = 1000000 },
    { "--nodes", 0, "M", "spread the GPUs over M nodes, N/M on each (default: fill nodes in order)",
      .kind = CLI_INT, .offset = OFF(nodes), .min = 1, .max = 1000000 },
    { "--sizes", 0, "MIN:MAX",
      "message sizes like nccl-tests -b/-e (K, M, G = 1024^n; default 8:8G)", .kind = CLI_CUSTOM,
      .offset = OFF(sizes), .parse = parse_sizes,
      .expect = "MIN:MAX with 1 <= MIN <= MAX (e.g. 8:8G)" },
    { "--factor", 0, "F", "step between sizes, like nccl-tests -f (default 2)", .kind = CLI_DOUBLE,
      .offset = OFF(factor), .min = 1, .max = 1e6, .min_open = true },
    { "--algo", 0, "A", "force NCCL's algorithm, like NCCL_ALGO (default auto)", .kind = CLI_CHOICE,
      .offset = OFF(algo), .choice_name = algo_name_i, .nchoices = ALGO_COUNT },
    { "--proto", 0, "P", "force NCCL's protocol, like NCCL_PROTO (default auto)",
      .kind = CLI_CHOICE, .offset = OFF(proto), .choice_name = proto_name_i,
      .nchoices = PROTO_COUNT },
    { "--launch", 0, "per-rank|single-process",
      "one launching thread per GPU (nccl-tests -g 1, default) or one for all (-g N)",
      .kind = CLI_CHOICE, .offset = OFF(launch), .choice_name = launch_name_i,
      .nchoices = LAUNCH_COUNT },
    { "--iters", 0, "N", "timed iterations, like nccl-tests -n (default 20)", .kind = CLI_INT,
      .offset = OFF(iters), .min = 1, .max = 1e9 },
    { "--no-calibration", 0, NULL, "ignore the hardware's calibrated collective figures",
      .kind = CLI_FLAG, .offset = OFF(no_calibration) },
    { "--plot", 0, "DIR", "write DIR/busbw.dat and draw busbw.png / .svg with gnuplot",
      .kind = CLI_STRING, .offset = OFF(plot) },
    { "--validate", 0, "NCCL.csv",
      "compare the model (calibration ignored) with published measurements instead",
      .kind = CLI_STRING, .offset = OFF(validate) },
    { "--markdown", 0, NULL, "print --validate's tables as Markdown", .kind = CLI_FLAG,
      .offset = OFF(markdown) },
};

const struct cli_command cmd_collective_spec = {
    .name = "collective",
    .synopsis = "simtrain collective --hardware H [OPTION]...\n"
                "simtrain collective --validate NCCL.csv [--markdown]",
    .about = "Prints an nccl-tests style table (size, time, algbw, busbw) of one collective on\n"
             "N GPUs of hardware H (filling nodes in order, or N/M on each of M nodes), with the\n"
             "algorithm and protocol NCCL would choose. Times are what nccl-tests reports: N\n"
             "iterations enqueued back to back, so the host's launch work and the GPUs' overlap;\n"
             "per-rank launching costs one launch per GPU, single-process launches on every GPU\n"
             "from one thread (efficiency.launch each). --validate compares the model\n"
             "(calibration files ignored) with published measurements and prints per-row errors\n"
             "and a summary.\n",
    .opts = collective_opts,
    .nopts = ARRAY_LEN(collective_opts),
    .positional = OFF(pos),
    .max_positional = 0,
};

static int parse_args(int argc, char **argv, struct opts *o)
{
    enum cli_result pr;

    memset(o, 0, sizeof(*o));
    o->op = COLL_ALL_REDUCE;
    o->sizes.min_bytes = 8;
    o->sizes.max_bytes = 8.0 * 1024 * 1024 * 1024;
    o->factor = 2;
    o->launch = LAUNCH_PER_RANK;
    o->iters = 20; /* nccl-tests src/common.cu: static int iters = 20 */
    pr = cli_parse(&cmd_collective_spec, argc, argv, o);
    if (pr == CLI_OK && !o->validate && !o->hardware)
        pr = cli_usage_error(&cmd_collective_spec, "'--hardware' is required");
    cli_release(&cmd_collective_spec, o);
    o->bench.op = (enum coll_op)o->op;
    o->bench.nccl.algo = (enum coll_algo)o->algo;
    o->bench.nccl.proto = (enum coll_proto)o->proto;
    o->bench.launch = (enum coll_launch)o->launch;
    o->bench.iters = o->iters;
    return pr;
}

/* ---- the table ---------------------------------------------------------------------- */

static void print_header(const struct hardware *hw, const struct opts *o,
                         const struct comm_group *g, const struct topo *t, int last, FILE *out)
{
    struct nccl_model m;
    struct coll_cost c;
    struct route r;

    nccl_model_init(hw, g,
                    o->bench.op == COLL_ALL_TO_ALL || o->bench.op == COLL_SEND_RECV
                        ? COLL_ALL_GATHER
                        : o->bench.op,
                    0, &m);
    coll_estimate(hw, &o->bench.nccl, g, o->bench.op, o->sizes.max_bytes, &c);
    fprintf(out, "# simtrain collective: %s on %s, %d GPU%s = %d node%s x %d%s\n",
            coll_op_name(o->bench.op), hw->name ? hw->name : "?", g->nranks,
            g->nranks == 1 ? "" : "s", g->nnodes, g->nnodes > 1 ? "s" : "", g->ppn,
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
            coll_launch_name(o->bench.launch), o->iters, (double)hw->eff.launch / 1e3,
            o->bench.launch == LAUNCH_SINGLE_PROCESS ? " x all GPUs from one thread" : "");
    if (hw->ncoll_cal > 0)
        fprintf(out, "# calibration: %s\n",
                !o->no_calibration ? "used where it matches" : "ignored (--no-calibration)");
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
    fprintf(f, "# bytes busbw_GBps (%s, %s, %d GPUs)\n", coll_op_name(o->bench.op), hw->name,
            g->nranks);
    for (i = 0; i < n; i++)
        fprintf(f, "%.0f %.6g\n", bytes[i], busbw[i]);
    if (chart_close_dat(f, o->plot, "busbw") != 0)
        return -1;
    title = xasprintf("%s, %s, %d GPUs", coll_op_name(o->bench.op), hw->name ? hw->name : "?",
                      g->nranks);
    safe = chart_safe_title(title);
    vars = xasprintf("titletext='%s'", safe);
    chart_draw(o->plot, "busbw", "busbw", vars);
    free(vars);
    free(safe);
    free(title);
    return 0;
}

static void print_row(const struct bench_row *r)
{
    printf("  %12.0f %14.0f %10s %12.2f %12.2f %12.2f  %s/%s%s\n", r->bytes, r->count, "float",
           r->time_s * 1e6, r->algbw_GBps, r->busbw_GBps,
           r->algo == ALGO_AUTO ? "p2p" : algo_name(r->algo), proto_name(r->proto),
           r->host_bound ? "*" : "");
}

#define MAX_ROWS 10000 /* sizes in one table: nccl-tests -b 8 -e 8G -f 2 prints 31 */

/*
 * The sizes must fit on the GPU, where nccl-tests allocates its buffers (a message larger
 * than the memory of one GPU is no benchmark: 1e30 B gave negative times), and make a table
 * of at most MAX_ROWS rows (--factor 1.000001 over 8:8G would print 10^9). 0, or -1 with the
 * option named.
 */
static int check_sizes(const struct hardware *hw, const struct opts *o)
{
    double s;
    int rows = 0;

    if (hw->gpu.mem_bytes > 0 && o->sizes.max_bytes > hw->gpu.mem_bytes) {
        char size[32], mem[32];

        if (o->sizes.max_bytes < 1e15)
            units_format(o->sizes.max_bytes, UNIT_BYTES, size, sizeof(size));
        else
            snprintf(size, sizeof(size), "%.3g B", o->sizes.max_bytes);
        units_format(hw->gpu.mem_bytes, UNIT_BYTES, mem, sizeof(mem));
        fprintf(stderr,
                "simtrain collective: error: --sizes: %s is more than the %s of memory of one %s "
                "GPU, where the benchmark's buffers live\n",
                size, mem, hw->gpu.model ? hw->gpu.model : "?");
        return -1;
    }
    for (s = o->sizes.min_bytes; s <= o->sizes.max_bytes * (1 + 1e-9) && rows <= MAX_ROWS;
         s = ceil(s * o->factor))
        rows++;
    if (rows > MAX_ROWS) {
        fprintf(stderr,
                "simtrain collective: error: --sizes with --factor %.9g makes more than %d sizes, "
                "the most one table prints (nccl-tests -b 8 -e 8G -f 2 prints 31)\n",
                o->factor, MAX_ROWS);
        return -1;
    }
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
    char msg[256];
    int n = 0, rc = 0, nx = 0, last, gpus;

    if (!hw)
        return 1;
    if (cli_check_outputs(&cmd_collective_spec, NULL, 0, &o->plot, 1) != 0) {
        cfg_free_hw(hw);
        return 1;
    }
    use = *hw;
    if (o->no_calibration)
        use.ncoll_cal = 0;
    /* without --gpus: every GPU of the nodes, one node's when --nodes is not given either */
    gpus = o->gpus > 0 ? o->gpus : MAX(use.gpus_per_node, 1) * MAX(o->nodes, 1);
    if (bench_check(&use, gpus, o->nodes, o->bench.nccl.algo, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "simtrain collective: error: %s\n", msg);
        cfg_free_hw(hw);
        return 1;
    }
    if (check_sizes(&use, o) != 0) {
        cfg_free_hw(hw);
        return 1;
    }
    t = bench_place(&use, gpus, o->nodes, &g, &last);
    print_header(&use, o, &g, t, last, stdout);
    for (s = o->sizes.min_bytes; s <= o->sizes.max_bytes * (1 + 1e-9); s = ceil(s * o->factor)) {
        struct bench_row row;
        bench_row(&use, &g, &o->bench, s, &row);
        print_row(&row);
        VEC_PUSH(xs, nx, cap_x, s);
        VEC_PUSH(ys, n, cap_y, row.busbw_GBps);
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
    enum cli_result pr = parse_args(argc, argv, &o);

    if (pr != CLI_OK)
        return cli_exit_status(pr);
    if (o.validate)
        return nccl_validate_file(o.validate, o.markdown, stdout) == 0 ? 0 : 1;
    return run_table(&o);
}
