/*
 * cmd_sweep.c - `simtrain sweep`: the command line (running in sweep.c,
 * outputs and merging in sweep_io.c; see sweep.h).
 *
 *   simtrain sweep SCENARIO.yaml --vary KEY=V1,V2,... [--vary ...] [--set K=V]...
 *                  [--weak] [--csv F] [--json F] [--plot DIR] [--shard K/N] [--mpi]
 *   simtrain sweep --merge A.csv B.csv ... [--csv F] [--json F] [--plot DIR]
 *
 * Exit status: 0 when the sweep ran (whatever its points' verdicts); 1 bad
 * input; 2 usage.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "cli/cmd.h"
#include "report/plot.h"
#include "report/report.h"
#include "whatif/sweep.h"

struct sweep_args {
    struct cli_list pos;  /* the scenario, or with --merge the CSV files */
    struct cli_list vary; /* KEY=V1,V2,... */
    const char *csv, *json, *plot;
    struct cli_shard shard;
    bool weak, mpi, quiet, merge;
    struct cli_overrides set;
};

#define OFF(field) offsetof(struct sweep_args, field)

static const struct cli_opt sweep_opts[] = {
    { "--vary", 0, "KEY=V1,V2,...",
      "an axis: KEY takes each value in turn (repeatable; the last axis varies fastest)",
      .kind = CLI_LIST, .offset = OFF(vary) },
    { "--set", 0, "KEY=VALUE", "override a key of the scenario at every point (repeatable)",
      .kind = CLI_SET, .offset = OFF(set) },
    { "--weak", 0, NULL, "grow the global batch with the GPU count (weak scaling)",
      .kind = CLI_FLAG, .offset = OFF(weak) },
    { "--csv", 0, "FILE", "write one row per point as CSV (- for standard output)",
      .kind = CLI_STRING, .offset = OFF(csv) },
    { "--json", 0, "FILE", "write the points as JSON (- for standard output)", .kind = CLI_STRING,
      .offset = OFF(json) },
    { "--plot", 0, "DIR", "draw scaling, breakdown and memory charts into DIR", .kind = CLI_STRING,
      .offset = OFF(plot) },
    { "--shard", 0, "K/N", "evaluate only the points i with i % N == K (job arrays)",
      .kind = CLI_CUSTOM, .offset = OFF(shard), .parse = cli_parse_shard,
      .expect = "K/N with 0 <= K < N" },
    { "--mpi", 0, NULL, "split the points across MPI ranks (mpirun -np N simtrain sweep ...)",
      .kind = CLI_FLAG, .offset = OFF(mpi) },
    { "--merge", 0, NULL,
      "join the CSV files of shards given as arguments and recompute the "
      "efficiencies",
      .kind = CLI_FLAG, .offset = OFF(merge) },
    { "--quiet", 'q', NULL, "print no table (for --csv, --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
};

const struct cli_command cmd_sweep_spec = {
    .name = "sweep",
    .synopsis = "simtrain sweep SCENARIO.yaml --vary KEY=V1,V2,... [--vary ...] [OPTION]...\n"
                "simtrain sweep --merge FILE.csv... [OPTION]...",
    .about = "Simulates the scenario at every combination of the --vary values (the last axis\n"
             "varies fastest) and reports step time, throughput, MFU, memory, time to train and\n"
             "cost, with speedup and strong / weak scaling efficiency against the smallest valid\n"
             "configuration of each group. When an axis changes the GPU count, tp, pp or cp,\n"
             "dp follows (GPUs / (tp * pp * cp)) unless an axis sets it;\n"
             "--weak also grows the global batch with the GPU count. --shard K/N evaluates only\n"
             "points i with i % N == K (job arrays); --merge joins the shards' CSV files and\n"
             "recomputes the efficiencies; --mpi splits the points across MPI ranks.\n",
    .opts = sweep_opts,
    .nopts = ARRAY_LEN(sweep_opts),
    .positional = OFF(pos),
    .max_positional = -1,
};

static int parse(int argc, char **argv, struct sweep_args *a)
{
    enum cli_result pr;

    memset(a, 0, sizeof(*a));
    a->shard.n = 1;
    pr = cli_parse(&cmd_sweep_spec, argc, argv, a);
    if (pr != CLI_OK)
        return cli_exit_status(pr);
    if (a->merge && a->pos.n == 0)
        pr = cli_usage_error(&cmd_sweep_spec, "--merge needs the CSV files to merge");
    else if (!a->merge && a->pos.n == 0)
        pr = cli_usage_error(&cmd_sweep_spec, "no scenario given");
    else if (!a->merge && a->pos.n > 1)
        pr = cli_usage_error(&cmd_sweep_spec, "more than one scenario ('%s' and '%s')",
                             a->pos.items[0], a->pos.items[1]);
    else if (!a->merge && a->vary.n == 0)
        pr = cli_usage_error(&cmd_sweep_spec, "no --vary axis given");
    return pr == CLI_OK ? -1 : cli_exit_status(pr);
}

/* ---- the command ---------------------------------------------------------------------- */

static int write_outputs(const struct sweep_args *a, const struct sweep *sw,
                         const struct sweep_point *pts, long n)
{
    int rc = 0;
    struct {
        const char *path;
        int (*fn)(const struct sweep *, const struct sweep_point *, long, FILE *);
    } outs[] = { { a->csv, sweep_write_csv }, { a->json, sweep_write_json } };

    for (size_t i = 0; i < ARRAY_LEN(outs); i++) {
        FILE *f;
        if (!outs[i].path)
            continue;
        f = files_open_output(outs[i].path);
        if (!f || outs[i].fn(sw, pts, n, f) != 0 || files_close_output(f) != 0) {
            fprintf(stderr, "simtrain sweep: error: cannot write '%s': %s\n", outs[i].path,
                    strerror(errno));
            rc = 1;
        }
    }
    if (!a->quiet && !(a->csv && strcmp(a->csv, "-") == 0) &&
        !(a->json && strcmp(a->json, "-") == 0))
        sweep_print(sw, pts, n, stdout);
    if (a->plot && a->shard.n == 1 && plot_sweep(a->plot, sw, pts, n) < 0)
        rc = 1;
    return rc;
}

/* The outputs may be written (not an input, parent directory there): 0, or -1 with a message. */
static int check_outputs(const struct sweep_args *a)
{
    return cli_check_outputs(&cmd_sweep_spec, (const char *const[]){ a->csv, a->json }, 2, &a->plot,
                             1);
}

static int run_merge(struct sweep_args *a)
{
    struct sweep sw;
    struct sweep_point *pts;
    long n;
    char msg[512] = "";
    int rc;

    if (sweep_merge(a->pos.items, a->pos.n, &sw, &pts, &n, msg, sizeof(msg)) != 0 ||
        check_outputs(a) != 0) {
        if (msg[0])
            fprintf(stderr, "simtrain sweep: error: %s\n", msg);
        sweep_release(&sw);
        free(pts);
        return 1;
    }
    sweep_efficiency(&sw, pts, n);
    rc = write_outputs(a, &sw, pts, n);
    sweep_release(&sw);
    free(pts);
    return rc;
}

static int run_sweep(struct sweep_args *a)
{
    struct scenario *s = cfg_load_scenario(a->pos.items[0], a->set.ovr, a->set.n, stderr);
    struct sweep sw;
    struct sweep_point *pts;
    char msg[512];
    int rc = 0, root = 1;

    if (!s)
        return 1;
    sweep_init(&sw, a->pos.items[0], s, a->set.ovr, a->set.n, a->weak);
    for (int i = 0; i < a->vary.n; i++)
        if (sweep_add_axis(&sw, a->vary.items[i], msg, sizeof(msg)) != 0) {
            fprintf(stderr, "simtrain sweep: error: %s\n", msg);
            sweep_release(&sw);
            cfg_free(s);
            return 1;
        }
    if (check_outputs(a) != 0) {
        sweep_release(&sw);
        cfg_free(s);
        return 1;
    }
    pts = xcalloc((size_t)sw.npoints, sizeof(*pts));
    if (a->mpi) {
        root = sweep_run_mpi(&sw, pts, msg, sizeof(msg));
        if (root < 0) {
            fprintf(stderr, "simtrain sweep: error: %s\n", msg);
            rc = 1;
        }
    } else {
        sweep_run(&sw, a->shard.k, a->shard.n, pts,
                  !a->quiet && isatty(STDERR_FILENO) ? stderr : NULL);
    }
    if (root == 1) {
        if (a->shard.n == 1)
            sweep_efficiency(&sw, pts, sw.npoints);
        rc = write_outputs(a, &sw, pts, sw.npoints);
    }
    free(pts);
    sweep_release(&sw);
    cfg_free(s);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_args a;
    int rc = parse(argc, argv, &a);

    if (rc < 0)
        rc = a.merge ? run_merge(&a) : run_sweep(&a);
    cli_release(&cmd_sweep_spec, &a);
    return rc;
}
