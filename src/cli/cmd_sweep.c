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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "report/plot.h"
#include "report/report.h"
#include "whatif/sweep.h"

struct sweep_args {
    const char *scenario;
    const char **vary;
    int nvary;
    const char *csv, *json, *plot;
    int shard_k, shard_n;
    bool weak, mpi, quiet, merge;
    char **merge_files;
    int nmerge;
    struct cfg_override *ovr;
    int novr;
};

static void usage(FILE *f)
{
    fputs("usage: simtrain sweep SCENARIO.yaml --vary KEY=V1,V2,... [--vary ...] [--set "
          "KEY=VALUE]...\n"
          "                      [--weak] [--csv FILE] [--json FILE] [--plot DIR]\n"
          "                      [--shard K/N] [--mpi] [--quiet]\n"
          "       simtrain sweep --merge FILE.csv... [--csv FILE] [--json FILE] [--plot DIR]\n"
          "\n"
          "Simulates the scenario at every combination of the --vary values (the last axis\n"
          "varies fastest) and reports step time, throughput, MFU, memory, time to train and\n"
          "cost, with speedup and strong / weak scaling efficiency against the smallest valid\n"
          "configuration of each group. When an axis changes the GPU count, tp, pp or cp,\n"
          "dp follows (GPUs / (tp * pp * cp)) unless an axis sets it;\n"
          "--weak also grows the global batch with the GPU count. --shard K/N evaluates only\n"
          "points i with i % N == K (job arrays); --merge joins the shards' CSV files and\n"
          "recomputes the efficiencies; --mpi splits the points across MPI ranks.\n",
          f);
}

/* "K/N" with 0 <= K < N. */
int cli_parse_shard(const char *text, int *k, int *n)
{
    char *end;
    long a = strtol(text, &end, 10), b;

    if (end == text || *end != '/')
        return -1;
    text = end + 1;
    b = strtol(text, &end, 10);
    if (end == text || *end != '\0' || a < 0 || b < 1 || a >= b || b > 1000000)
        return -1;
    *k = (int)a;
    *n = (int)b;
    return 0;
}

int cli_take_positional(const char *cmd, char *arg, bool merge, char ***files, int *nfiles,
                        const char **scenario)
{
    if (merge) {
        *files = xrealloc(*files, sizeof(char *) * (size_t)(*nfiles + 1));
        (*files)[(*nfiles)++] = arg;
    } else if (!*scenario) {
        *scenario = arg;
    } else {
        fprintf(stderr, "simtrain %s: error: more than one scenario ('%s' and '%s')\n", cmd,
                *scenario, arg);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, struct sweep_args *a)
{
    int i, rc;

    memset(a, 0, sizeof(*a));
    a->shard_n = 1;
    for (i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if ((rc = cli_take_set(argc, argv, &i, &a->ovr, &a->novr)) != 0) {
            if (rc < 0)
                return -1;
        } else if (strcmp(s, "--vary") == 0 && more) {
            a->vary = xrealloc(a->vary, sizeof(*a->vary) * (size_t)(a->nvary + 1));
            a->vary[a->nvary++] = argv[++i];
        } else if (strncmp(s, "--vary=", 7) == 0) {
            a->vary = xrealloc(a->vary, sizeof(*a->vary) * (size_t)(a->nvary + 1));
            a->vary[a->nvary++] = s + 7;
        } else if (strcmp(s, "--csv") == 0 && more) {
            a->csv = argv[++i];
        } else if (strcmp(s, "--json") == 0 && more) {
            a->json = argv[++i];
        } else if (strcmp(s, "--plot") == 0 && more) {
            a->plot = argv[++i];
        } else if (strcmp(s, "--shard") == 0 && more) {
            if (cli_parse_shard(argv[++i], &a->shard_k, &a->shard_n) != 0) {
                fprintf(stderr,
                        "simtrain sweep: error: --shard takes K/N with 0 <= K < N, got '%s'\n",
                        argv[i]);
                return -1;
            }
        } else if (strcmp(s, "--weak") == 0) {
            a->weak = true;
        } else if (strcmp(s, "--mpi") == 0) {
            a->mpi = true;
        } else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
            a->quiet = true;
        } else if (strcmp(s, "--merge") == 0) {
            a->merge = true;
        } else if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (s[0] == '-' && s[1] != '\0') {
            fprintf(stderr, "simtrain sweep: error: unknown option '%s' (or missing value)\n", s);
            return -1;
        } else if (cli_take_positional("sweep", argv[i], a->merge, &a->merge_files, &a->nmerge,
                                       &a->scenario) != 0) {
            return -1;
        }
    }
    if (a->merge ? a->nmerge == 0 : (!a->scenario || a->nvary == 0)) {
        usage(stderr);
        return -1;
    }
    return 0;
}

/* ---- the command ---------------------------------------------------------------------- */

static FILE *open_out(const char *path)
{
    return strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
}

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
        f = open_out(outs[i].path);
        if (!f || outs[i].fn(sw, pts, n, f) != 0 || (f != stdout && fclose(f) != 0)) {
            fprintf(stderr, "simtrain sweep: error: cannot write '%s': %s\n", outs[i].path,
                    strerror(errno));
            rc = 1;
        }
    }
    if (!a->quiet && !(a->csv && strcmp(a->csv, "-") == 0) &&
        !(a->json && strcmp(a->json, "-") == 0))
        sweep_print(sw, pts, n, stdout);
    if (a->plot && a->shard_n == 1 && plot_sweep(a->plot, sw, pts, n) < 0)
        rc = 1;
    return rc;
}

static int run_merge(struct sweep_args *a)
{
    struct sweep sw;
    struct sweep_point *pts;
    long n;
    char msg[512];
    int rc;

    if (sweep_merge(a->merge_files, a->nmerge, &sw, &pts, &n, msg, sizeof(msg)) != 0) {
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
    struct scenario *s = cfg_load_scenario(a->scenario, a->ovr, a->novr, stderr);
    struct sweep sw;
    struct sweep_point *pts;
    char msg[512];
    int rc = 0, root = 1;

    if (!s)
        return 1;
    sweep_init(&sw, a->scenario, s, a->ovr, a->novr, a->weak);
    for (int i = 0; i < a->nvary; i++)
        if (sweep_add_axis(&sw, a->vary[i], msg, sizeof(msg)) != 0) {
            fprintf(stderr, "simtrain sweep: error: %s\n", msg);
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
        sweep_run(&sw, a->shard_k, a->shard_n, pts,
                  !a->quiet && isatty(STDERR_FILENO) ? stderr : NULL);
    }
    if (root == 1) {
        if (a->shard_n == 1)
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
    int rc;

    if (parse(argc, argv, &a) != 0) {
        cli_free_overrides(a.ovr, a.novr);
        free(a.vary);
        free(a.merge_files);
        return 2;
    }
    rc = a.merge ? run_merge(&a) : run_sweep(&a);
    cli_free_overrides(a.ovr, a.novr);
    free(a.vary);
    free(a.merge_files);
    return rc;
}
