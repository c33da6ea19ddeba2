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
#include "base/par.h"
#include "cli/cmd.h"
#include "cli/input.h"
#include "report/plot.h"
#include "report/report.h"
#include "whatif/sweep.h"

struct sweep_args {
    struct cli_list pos; /* the scenario (with --from the configs), or with --merge CSV files */
    struct cli_input in;
    struct cli_list vary; /* KEY=V1,V2,... */
    const char *csv, *json, *plot;
    struct cli_shard shard;
    bool weak, mpi, quiet, merge, force;
    struct cli_overrides set;
    int jobs; /* 0: not given (the processors online) */
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
    { "--jobs", 'j', "N",
      "simulate N points at a time (default: the processors online); the output is the same "
      "for any N",
      .kind = CLI_INT, .offset = OFF(jobs), .min = 1, .max = 1024 },
    { "--mpi", 0, NULL, "split the points across MPI ranks (mpirun -np N simtrain sweep ...)",
      .kind = CLI_FLAG, .offset = OFF(mpi) },
    { "--force", 0, NULL, "run a sweep of more than 10,000 points (each point is a simulation)",
      .kind = CLI_FLAG, .offset = OFF(force) },
    { "--merge", 0, NULL,
      "join the CSV files of shards given as arguments and recompute the "
      "efficiencies",
      .kind = CLI_FLAG, .offset = OFF(merge) },
    { "--quiet", 'q', NULL, "print no table (for --csv, --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
    CLI_INPUT_OPTS(struct sweep_args, in),
};

const struct cli_command cmd_sweep_spec = {
    .name = "sweep",
    .synopsis = "simtrain sweep SCENARIO.yaml --vary KEY=V1,V2,... [--vary ...] [OPTION]...\n"
                "simtrain sweep --from KIND FILE... --hardware HW --gpus N --vary ... [OPTION]...\n"
                "simtrain sweep --merge FILE.csv... [OPTION]...",
    .about = "Simulates the scenario at every combination of the --vary values (the last axis\n"
             "varies fastest) and reports step time, throughput, MFU, memory, time to train and\n"
             "cost, with speedup and strong / weak scaling efficiency against the smallest valid\n"
             "configuration of each group. When an axis changes the GPU count, tp, pp or cp,\n"
             "dp follows (GPUs / (tp * pp * cp)) unless an axis sets it;\n"
             "--weak also grows the global batch with the GPU count. --shard K/N evaluates only\n"
             "points i with i % N == K (job arrays); --merge joins the shards' CSV files and\n"
             "recomputes the efficiencies; --mpi splits the points across MPI ranks.\n"
             "The number of points is printed first (on stderr); more than 10,000 need --force.\n"
             "Rows are written as the points finish (the text table, CSV and JSON), with a\n"
             "progress line per point when stderr is a terminal.\n",
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
    a->in.from = -1;
    pr = cli_parse(&cmd_sweep_spec, argc, argv, a);
    if (pr != CLI_OK)
        return cli_exit_status(pr);
    if (a->merge && a->pos.n == 0)
        pr = cli_usage_error(&cmd_sweep_spec, "--merge needs the CSV files to merge");
    else if (!a->merge && a->pos.n == 0)
        pr = cli_usage_error(&cmd_sweep_spec, "no scenario given");
    else if (!a->merge && a->pos.n > 1 && a->in.from < 0)
        pr = cli_usage_error(&cmd_sweep_spec, "more than one scenario ('%s' and '%s')",
                             a->pos.items[0], a->pos.items[1]);
    else if (!a->merge && a->vary.n == 0)
        pr = cli_usage_error(&cmd_sweep_spec, "no --vary axis given");
    return pr == CLI_OK ? -1 : cli_exit_status(pr);
}

/* ---- the command ---------------------------------------------------------------------- */

/* The outputs may be written (not an input, parent directory there): 0, or -1 with a message. */
static int check_outputs(const struct sweep_args *a)
{
    return cli_check_outputs(&cmd_sweep_spec, (const char *const[]){ a->csv, a->json }, 2, &a->plot,
                             1);
}

/* The open outputs of a sweep; a failed open is reported and counted in *rc. */
struct outputs {
    FILE *csv, *json;
    struct sweep_writer w;
};

static FILE *open_one(const char *path, int *rc)
{
    FILE *f;

    if (!path)
        return NULL;
    f = files_open_output(path);
    if (!f) {
        fprintf(stderr, "simtrain sweep: error: cannot write '%s': %s\n", path, strerror(errno));
        *rc = 1;
    }
    return f;
}

static int open_outputs(const struct sweep_args *a, const struct sweep *sw, struct outputs *o)
{
    int rc = 0;

    memset(o, 0, sizeof(*o));
    o->csv = open_one(a->csv, &rc);
    o->json = open_one(a->json, &rc);
    if (rc != 0) {
        if (o->csv)
            files_close_output(o->csv);
        if (o->json)
            files_close_output(o->json);
        return -1;
    }
    o->w.csv = o->csv;
    o->w.json = o->json;
    if (!a->quiet && !(a->csv && strcmp(a->csv, "-") == 0) &&
        !(a->json && strcmp(a->json, "-") == 0))
        o->w.text = stdout;
    o->w.keep = a->plot && a->shard.n == 1; /* the charts need every point */
    sweep_writer_begin(&o->w, sw);
    return 0;
}

static int close_one(FILE *f, const char *path)
{
    if (f && files_close_output(f) != 0) {
        fprintf(stderr, "simtrain sweep: error: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* Footers, close (a lost write is an error), then the charts from the kept points. */
static int close_outputs(const struct sweep_args *a, const struct sweep *sw, struct outputs *o)
{
    int rc = 0;

    sweep_writer_end(&o->w, sw);
    rc |= close_one(o->csv, a->csv);
    rc |= close_one(o->json, a->json);
    if (o->w.keep && plot_sweep(a->plot, sw, o->w.kept, o->w.nkept) < 0)
        rc = 1;
    sweep_writer_release(&o->w);
    return rc;
}

/* Write points the sweep holds whole (a merge, an MPI gather): the efficiencies, then a row each.
 */
static int write_all(const struct sweep_args *a, const struct sweep *sw, struct sweep_point *pts,
                     long n)
{
    struct outputs o;

    if (open_outputs(a, sw, &o) != 0)
        return 1;
    for (long i = 0; i < n; i++)
        sweep_writer_point(&o.w, sw, &pts[i]);
    return close_outputs(a, sw, &o);
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
    rc = write_all(a, &sw, pts, n);
    sweep_release(&sw);
    free(pts);
    return rc;
}

/* "6 points (3 x 2)" up front, and the limit unless --force; 0, or -1 with the message printed. */
static int announce(const struct sweep_args *a, const struct sweep *sw)
{
    char shape[160] = "";
    size_t len = 0;

    for (int i = 0; i < sw->naxes && len < sizeof(shape) - 16; i++)
        len += (size_t)snprintf(shape + len, sizeof(shape) - len, "%s%d", i ? " x " : "",
                                sw->axes[i].nvalues);
    if (sw->npoints > SWEEP_DEFAULT_LIMIT && !a->force) {
        fprintf(stderr,
                "simtrain sweep: error: %ld points (%s) exceed the limit of %ld: each point is "
                "a simulation; narrow the axes, split the sweep with --shard K/N, or pass "
                "--force\n",
                sw->npoints, shape, SWEEP_DEFAULT_LIMIT);
        return -1;
    }
    if (a->quiet)
        return 0;
    fprintf(stderr, "simtrain sweep: %ld point%s (%s)", sw->npoints, sw->npoints == 1 ? "" : "s",
            shape);
    if (a->shard.n > 1)
        fprintf(stderr, ", shard %d/%d evaluates %ld", a->shard.k, a->shard.n,
                (sw->npoints - a->shard.k + a->shard.n - 1) / a->shard.n);
    fputs(a->mpi ? ", split across the MPI ranks\n" : "\n", stderr);
    return 0;
}

static int run_mpi(const struct sweep_args *a, const struct sweep *sw)
{
    struct sweep_point *pts = xcalloc((size_t)sw->npoints, sizeof(*pts));
    char msg[512];
    int rc = 0, root = sweep_run_mpi(sw, pts, msg, sizeof(msg));

    if (root < 0) {
        fprintf(stderr, "simtrain sweep: error: %s\n", msg);
        rc = 1;
    } else if (root == 1) { /* rank 0 holds every point */
        sweep_efficiency(sw, pts, sw->npoints);
        rc = write_all(a, sw, pts, sw->npoints);
    }
    free(pts);
    return rc;
}

static int run_stream(const struct sweep_args *a, const struct sweep *sw)
{
    struct sweep_sink sink = { sweep_writer_point, NULL };
    struct outputs o;

    if (open_outputs(a, sw, &o) != 0)
        return 1;
    sink.ctx = &o.w;
    sweep_stream(sw, a->shard.k, a->shard.n, &sink,
                 !a->quiet && isatty(STDERR_FILENO) ? stderr : NULL);
    return close_outputs(a, sw, &o);
}

static int run_sweep(struct sweep_args *a)
{
    char *text = NULL, *name = NULL;
    size_t len = 0;
    int rc;
    struct scenario *s =
        cli_load_input(&cmd_sweep_spec, &a->pos, &a->in, &a->set, &rc, &text, &len);
    struct sweep sw;
    char msg[512];

    if (!s)
        return rc;
    sweep_init(&sw, a->pos.items[0], s, a->set.ovr, a->set.n, a->weak);
    sw.jobs = a->jobs ? a->jobs : par_default_jobs();
    if (text) {
        name = cli_input_text_name(&a->pos);
        sweep_set_text(&sw, name, text, len);
    }
    for (int i = 0; i < a->vary.n; i++)
        if (sweep_add_axis(&sw, a->vary.items[i], msg, sizeof(msg)) != 0) {
            fprintf(stderr, "simtrain sweep: error: %s\n", msg);
            sweep_release(&sw);
            cfg_free(s);
            free(text);
            free(name);
            return 1;
        }
    sweep_note_inputs(&sw); /* the files reference axes name, before outputs are opened */
    if (check_outputs(a) != 0 || announce(a, &sw) != 0) /* refusals before the count */
        rc = 1;
    else
        rc = a->mpi ? run_mpi(a, &sw) : run_stream(a, &sw);
    sweep_release(&sw);
    cfg_free(s);
    free(text);
    free(name);
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
