/*
 * plot_chart.c - data files, the gnuplot driver and stacked bars shared by
 * the `--plot` pictures (see plot_chart.h).
 */
#define _POSIX_C_SOURCE 200809L /* mkdir(), fork(), execvp(), waitpid() */

#include "report/plot_chart.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/files.h"
#include "base/paths.h"
#include "base/util.h"

const char *const chart_tcat_color[TC_COUNT] = {
    [TC_FWD] = "#4477aa",       [TC_BWD] = "#228833",     [TC_RECOMPUTE] = "#ee7733",
    [TC_OPTIMIZER] = "#777777", [TC_COMM_TP] = "#cc3311", [TC_COMM_CP] = "#ee3377",
    [TC_COMM_EP] = "#aa7744",   [TC_COMM_PP] = "#aa3377", [TC_COMM_DP] = "#33bbee",
    [TC_OFFLOAD] = "#999933",   [TC_HOST] = "#aa4499",    [TC_IDLE] = "#dddddd",
};

const char *const chart_mcat_color[MC_COUNT] = {
    [MC_PARAMS] = "#4477aa",   [MC_MASTER] = "#66ccee",  [MC_GRADS] = "#228833",
    [MC_OPTIM] = "#ccbb44",    [MC_ACT] = "#ee6677",     [MC_LOGITS] = "#aa3377",
    [MC_GATHERED] = "#ee7733", [MC_COMM] = "#009988",    [MC_WORKSPACE] = "#999933",
    [MC_OVERHEAD] = "#bbbbbb", [MC_RESERVE] = "#ddcc77",
};

const char *const chart_tcat_label[TC_COUNT] = {
    [TC_FWD] = "forward",         [TC_BWD] = "backward",    [TC_RECOMPUTE] = "recompute",
    [TC_OPTIMIZER] = "optimizer", [TC_COMM_TP] = "TP comm", [TC_COMM_CP] = "CP comm",
    [TC_COMM_EP] = "EP comm",     [TC_COMM_PP] = "PP comm", [TC_COMM_DP] = "DP comm",
    [TC_OFFLOAD] = "offload",     [TC_HOST] = "host-bound", [TC_IDLE] = "idle",
};

/* ---- files --------------------------------------------------------------------------- */

int chart_make_dir(const char *dir)
{
    char msg[512];

    if (files_make_dir(dir, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "simtrain: error: %s\n", msg);
        return -1;
    }
    return 0;
}

FILE *chart_open_dat(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s.dat", dir, name);
    FILE *f = files_open_output(path);

    if (!f)
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", path, strerror(errno));
    free(path);
    return f;
}

int chart_close_dat(FILE *f, const char *dir, const char *name)
{
    if (files_close_output(f) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s/%s.dat': %s\n", dir, name,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- gnuplot ------------------------------------------------------------------------- */

/* plots/NAME.gp under $SIMTRAIN_DATA, else the data directory (paths.h), else "."; or NULL. */
static char *script_path(const char *name)
{
    const char *dirs[3] = { getenv("SIMTRAIN_DATA"), paths_data_dir(), "." };

    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *path;
        if (!dirs[i] || !*dirs[i])
            continue;
        path = xasprintf("%s/plots/%s.gp", dirs[i], name);
        if (access(path, R_OK) == 0)
            return path;
        free(path);
    }
    return NULL;
}

/* Text gnuplot can hold between single quotes. */
static bool quotable(const char *s)
{
    return !strpbrk(s, "'\"\\\n");
}

char *chart_safe_title(const char *s)
{
    char *t = xstrdup(s ? s : "");

    for (char *q = t; *q; q++)
        if (strchr("'\"\\\n", *q))
            *q = '_';
    return t;
}

void chart_draw(const char *dir, const char *name, const char *script, const char *vars)
{
    char *path = script_path(script), *e;
    pid_t pid;
    int status = -1;

    if (!path || !quotable(dir)) {
        fprintf(stderr, "simtrain: note: wrote %s/%s.dat; %s\n", dir, name,
                path ? "the directory name needs quoting, chart not drawn"
                     : "plots/ scripts not found, chart not drawn");
        free(path);
        return;
    }
    e = xasprintf("datafile='%s/%s.dat'; outbase='%s/%s'; %s", dir, name, dir, name, vars);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        char prog[] = "gnuplot", opt[] = "-e";
        char *argv[] = { prog, opt, e, path, NULL };
        execvp(prog, argv);
        _exit(127);
    }
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        fprintf(stderr, "simtrain: wrote %s/%s.png and %s/%s.svg\n", dir, name, dir, name);
    else if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
        fprintf(stderr, "simtrain: note: gnuplot not found; the data is in %s/%s.dat\n", dir, name);
    else
        fprintf(stderr, "simtrain: note: gnuplot failed on %s; the data is in %s/%s.dat\n", path,
                dir, name);
    free(e);
    free(path);
}

double chart_time_scale(double span_s, const char **unit)
{
    *unit = span_s >= 2 ? "s" : "ms";
    return span_s >= 2 ? 1.0 : 1e3;
}

/* ---- stacked bars (bars.gp) ---------------------------------------------------------- */

void chart_rows_init(struct chart_rows *r, int ncat)
{
    memset(r, 0, sizeof(*r));
    r->ncat = ncat;
}

void chart_rows_release(struct chart_rows *r)
{
    for (int i = 0; i < r->nrows; i++)
        free(r->label[i]);
    free(r->label);
    free(r->v);
    memset(r, 0, sizeof(*r));
}

int chart_rows_add(struct chart_rows *r, const char *label)
{
    size_t n = (size_t)r->nrows + 1;

    grow_array((void **)&r->label, &r->cap_label, n, sizeof(*r->label));
    grow_array((void **)&r->v, &r->cap_v, n * (size_t)r->ncat, sizeof(*r->v));
    r->label[r->nrows] = xstrdup(label);
    memset(&r->v[(size_t)r->nrows * (size_t)r->ncat], 0, sizeof(*r->v) * (size_t)r->ncat);
    return r->nrows++;
}

static void bars_draw(const struct chart_bars *b, int ncols, int nrows, const char *const *colors)
{
    struct strbuf cb;
    char *title = chart_safe_title(b->title), *xlabel = chart_safe_title(b->xlabel), *vars;

    sb_init(&cb);
    for (int c = 0; c < ncols; c++)
        sb_addf(&cb, "%s%s", c ? " " : "", colors[c]);
    vars = xasprintf("titletext='%s'; ylabeltext='%s'; ncols=%d; nrows=%d; colors='%s'; "
                     "hline=%g; hunit='GiB'; ymax=%g; rotate=0; lines=%d; xlabeltext='%s'",
                     title, b->ylabel, ncols, nrows, cb.buf ? cb.buf : "", b->hline, b->ymax,
                     b->lines > 0 ? b->lines : 1, xlabel);
    chart_draw(b->dir, b->name, "bars", vars);
    free(vars);
    free(title);
    free(xlabel);
    sb_release(&cb);
}

int chart_bars(const struct chart_bars *b, const struct chart_rows *r, const char *const *cat_name,
               const char *const *cat_color)
{
    bool *use = xcalloc((size_t)r->ncat, sizeof(*use));
    const char **colors = xcalloc((size_t)r->ncat, sizeof(*colors));
    int ncols = 0;
    FILE *f;

    for (int i = 0; i < r->nrows; i++)
        for (int c = 0; c < r->ncat; c++)
            use[c] |= r->v[i * r->ncat + c] > 0;
    f = chart_open_dat(b->dir, b->name);
    if (f) {
        fputs("\"\"", f);
        for (int c = 0; c < r->ncat; c++)
            if (use[c]) {
                fprintf(f, " \"%s\"", cat_name[c]);
                colors[ncols++] = cat_color[c];
            }
        fputc('\n', f);
        for (int i = 0; i < r->nrows; i++) {
            fprintf(f, "\"%s\"", r->label[i]);
            for (int c = 0; c < r->ncat; c++)
                if (use[c])
                    fprintf(f, " %.6g", r->v[i * r->ncat + c]);
            fputc('\n', f);
        }
    }
    if (!f || chart_close_dat(f, b->dir, b->name) != 0) {
        free(use);
        free(colors);
        return -1;
    }
    if (r->nrows > 0)
        bars_draw(b, ncols, r->nrows, colors);
    free(use);
    free(colors);
    return 0;
}
