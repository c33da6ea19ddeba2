/*
 * plot.c - data files and gnuplot runs for `--plot DIR` (see plot.h).
 */
#define _POSIX_C_SOURCE 200809L /* mkdir(), fork(), execvp(), waitpid() */

#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan.h"
#include "report.h"
#include "sweep.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* One colour per time category, the same in every chart (Paul Tol's qualitative set). */
static const char *const tcat_color[TC_COUNT] = {
    [TC_FWD] = "#4477aa",       [TC_BWD] = "#228833",     [TC_RECOMPUTE] = "#ee7733",
    [TC_OPTIMIZER] = "#777777", [TC_COMM_TP] = "#cc3311", [TC_COMM_CP] = "#ee3377",
    [TC_COMM_EP] = "#aa7744",   [TC_COMM_PP] = "#aa3377", [TC_COMM_DP] = "#33bbee",
    [TC_OFFLOAD] = "#999933",   [TC_IDLE] = "#dddddd",
};

static const char *const mcat_color[MC_COUNT] = {
    [MC_PARAMS] = "#4477aa",   [MC_MASTER] = "#66ccee", [MC_GRADS] = "#228833",
    [MC_OPTIM] = "#ccbb44",    [MC_ACT] = "#ee6677",    [MC_LOGITS] = "#aa3377",
    [MC_GATHERED] = "#ee7733", [MC_COMM] = "#009988",   [MC_WORKSPACE] = "#999933",
    [MC_OVERHEAD] = "#bbbbbb",
};

/* ---- plumbing ------------------------------------------------------------------------ */

static int make_dir(const char *dir)
{
    char *p = xstrdup(dir);

    for (char *q = p + 1; *q; q++) {
        if (*q != '/')
            continue;
        *q = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            break;
        *q = '/';
    }
    free(p);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "simtrain: error: cannot create '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* plots/NAME.gp under $SIMTRAIN_DATA, else the built-in data directory, else "."; or NULL. */
static char *script_path(const char *name)
{
    const char *dirs[3] = { getenv("SIMTRAIN_DATA"), NULL, "." };

#ifdef SIMTRAIN_DATA_DIR
    dirs[1] = SIMTRAIN_DATA_DIR;
#endif
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

/* A title safe inside gnuplot single quotes. */
static char *safe_title(const char *s)
{
    char *t = xstrdup(s ? s : "");

    for (char *q = t; *q; q++)
        if (*q == '\'' || *q == '"' || *q == '\\' || *q == '\n')
            *q = '_';
    return t;
}

static FILE *open_dat(const char *dir, const char *name, char **path)
{
    FILE *f;

    *path = xasprintf("%s/%s.dat", dir, name);
    f = fopen(*path, "w");
    if (!f)
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", *path, strerror(errno));
    return f;
}

static int close_dat(FILE *f, const char *path)
{
    if (fclose(f) != 0) {
        fprintf(stderr, "simtrain: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * Run `gnuplot -e "datafile='DIR/NAME.dat'; outbase='DIR/NAME'; VARS" plots/SCRIPT.gp`
 * without a shell. Prints what was written, or why not.
 */
static void draw(const char *dir, const char *name, const char *script, const char *vars)
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

/* Time unit for a span: seconds above 2 s, else milliseconds. */
static double time_scale(double span_s, const char **unit)
{
    *unit = span_s >= 2 ? "s" : "ms";
    return span_s >= 2 ? 1.0 : 1e3;
}

/* ---- stacked bars (bars.gp) -------------------------------------------------------------- */

struct bars {
    const char *dir, *name, *title, *ylabel;
    int ncols, nrows;
    const char *const *cols;   /* column names */
    const char *const *colors; /* their colours */
    double hline;              /* horizontal reference (capacity) in plot units, < 0 none */
    double ymax;               /* top of the y axis, 0 = automatic */
    bool rotate;               /* long bar labels */
    int lines;                 /* lines in a bar label (0 = 1) */
    const char *xlabel;        /* under the bars, or NULL */
};

/* Header of a bars data file; keeps columns with any nonzero value (use[] in, out). */
static void bars_header(FILE *f, const char *const *names, const bool *use, int n)
{
    fputs("\"\"", f);
    for (int c = 0; c < n; c++)
        if (use[c])
            fprintf(f, " \"%s\"", names[c]);
    fputc('\n', f);
}

static void bars_draw(const struct bars *b)
{
    struct strbuf colors;
    char *title = safe_title(b->title), *xlabel = safe_title(b->xlabel), *vars;

    sb_init(&colors);
    for (int c = 0; c < b->ncols; c++)
        sb_addf(&colors, "%s%s", c ? " " : "", b->colors[c]);
    vars = xasprintf("titletext='%s'; ylabeltext='%s'; ncols=%d; nrows=%d; colors='%s'; "
                     "hline=%g; hunit='GiB'; ymax=%g; rotate=%d; lines=%d; xlabeltext='%s'",
                     title, b->ylabel, b->ncols, b->nrows, colors.buf ? colors.buf : "", b->hline,
                     b->ymax, b->rotate, b->lines > 0 ? b->lines : 1, xlabel);
    draw(b->dir, b->name, "bars", vars);
    free(vars);
    free(title);
    free(xlabel);
    sb_release(&colors);
}

/* Legend text of the time categories. */
static const char *const tcat_label[TC_COUNT] = {
    [TC_FWD] = "forward",         [TC_BWD] = "backward",    [TC_RECOMPUTE] = "recompute",
    [TC_OPTIMIZER] = "optimizer", [TC_COMM_TP] = "TP comm", [TC_COMM_CP] = "CP comm",
    [TC_COMM_EP] = "EP comm",     [TC_COMM_PP] = "PP comm", [TC_COMM_DP] = "DP comm",
    [TC_OFFLOAD] = "offload",     [TC_IDLE] = "idle",
};

/*
 * Columns of a time-breakdown chart: the categories with any time, their
 * labels and colours. Returns the count.
 */
static int time_columns(const bool *use, const char **labels, const char **names,
                        const char **colors)
{
    int n = 0;

    for (int c = 0; c < TC_COUNT; c++) {
        labels[c] = tcat_label[c];
        if (use[c]) {
            names[n] = tcat_label[c];
            colors[n++] = tcat_color[c];
        }
    }
    return n;
}

/* ---- run ------------------------------------------------------------------------------- */

/* Average of a per-rank quantity over the simulated ranks of each stage. */
static int stage_rows(const struct run *r, int *first_rank_of_stage)
{
    int pp = r->s->par.pp;

    for (int st = 0; st < pp; st++)
        first_rank_of_stage[st] = -1;
    for (int i = 0; i < r->sim.nranks; i++) {
        int st = r->sim.ranks[i].coords[DIM_PP];
        if (first_rank_of_stage[st] < 0)
            first_rank_of_stage[st] = i;
    }
    return pp;
}

static int run_breakdown(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, nused = 0, rows = 0;
    bool use[TC_COUNT] = { false };
    const char *names[TC_COUNT], *colors[TC_COUNT], *all[TC_COUNT], *unit;
    double(*v)[TC_COUNT] = xcalloc((size_t)pp, sizeof(*v));
    double scale = time_scale(r->step_s, &unit);
    char *path, *title, ylabel[32];
    FILE *f;
    int *cnt = xcalloc((size_t)pp, sizeof(int));

    for (int i = 0; i < r->sim.nranks; i++) {
        const struct rank_result *rr = &r->sim.ranks[i];
        for (int c = 0; c < TC_COUNT; c++)
            v[rr->coords[DIM_PP]][c] += (double)rr->bucket[c] / NS_PER_S * scale;
        cnt[rr->coords[DIM_PP]]++;
    }
    for (int st = 0; st < pp; st++)
        for (int c = 0; c < TC_COUNT; c++) {
            v[st][c] /= cnt[st] > 0 ? cnt[st] : 1;
            use[c] |= v[st][c] > 0;
        }
    f = open_dat(dir, "breakdown", &path);
    if (!f) {
        free(v);
        free(cnt);
        free(path);
        return -1;
    }
    nused = time_columns(use, all, names, colors);
    bars_header(f, all, use, TC_COUNT);
    for (int st = 0; st < pp; st++) {
        if (first[st] < 0)
            continue;
        rows++;
        fprintf(f, "\"stage %d\"", st);
        for (int c = 0; c < TC_COUNT; c++)
            if (use[c])
                fprintf(f, " %.6g", v[st][c]);
        fputc('\n', f);
    }
    free(v);
    free(cnt);
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    snprintf(ylabel, sizeof(ylabel), "time per step (%s)", unit);
    title = xasprintf("Step time by category per pipeline stage: %s", r->s->name);
    bars_draw(&(struct bars){ .dir = dir,
                              .name = "breakdown",
                              .title = title,
                              .ylabel = ylabel,
                              .ncols = nused,
                              .nrows = rows,
                              .cols = names,
                              .colors = colors,
                              .hline = -1 });
    free(title);
    return 0;
}

static int run_memory(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, nused = 0, rows = 0;
    double top = r->capacity_bytes;
    bool use[MC_COUNT] = { false };
    const char *names[MC_COUNT], *colors[MC_COUNT];
    const char *all[MC_COUNT];
    char *path, *title;
    FILE *f;

    for (int c = 0; c < MC_COUNT; c++)
        all[c] = mcat_name(c);
    for (int st = 0; st < pp; st++)
        for (int c = 0; c < MC_COUNT; c++)
            if (first[st] >= 0)
                use[c] |= r->sim.ranks[first[st]].at_peak[c] > 0;
    f = open_dat(dir, "memory", &path);
    if (!f) {
        free(path);
        return -1;
    }
    bars_header(f, all, use, MC_COUNT);
    for (int c = 0; c < MC_COUNT; c++)
        if (use[c]) {
            names[nused] = all[c];
            colors[nused++] = mcat_color[c];
        }
    for (int st = 0; st < pp; st++) {
        const struct rank_result *rr;
        if (first[st] < 0)
            continue;
        rr = &r->sim.ranks[first[st]];
        top = (double)rr->peak > top ? (double)rr->peak : top;
        rows++;
        fprintf(f, "\"stage %d\"", st);
        for (int c = 0; c < MC_COUNT; c++)
            if (use[c])
                fprintf(f, " %.6g", (double)rr->at_peak[c] / GIB);
        fputc('\n', f);
    }
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    title = xasprintf("Peak memory per GPU by category: %s (%s, %.1f GiB)", r->s->name,
                      r->s->hw.gpu.model, r->capacity_bytes / GIB);
    bars_draw(&(struct bars){ .dir = dir,
                              .name = "memory",
                              .title = title,
                              .ylabel = "GiB at the peak",
                              .ncols = nused,
                              .nrows = rows,
                              .cols = names,
                              .colors = colors,
                              .hline = r->capacity_bytes / GIB,
                              .ymax = top / GIB * 1.08 });
    free(title);
    return 0;
}

/* Lanes of the timeline: streams grouped as a reader thinks of them. */
enum lane {
    LANE_COMPUTE,
    LANE_TP,
    LANE_CP,
    LANE_EP,
    LANE_DP,
    LANE_GATHER,
    LANE_PP,
    LANE_OFFLOAD,
    LANE_COUNT
};

static int lane_of(int stream)
{
    switch (stream) {
    case ST_COMPUTE:
        return LANE_COMPUTE;
    case ST_TP:
        return LANE_TP;
    case ST_CP:
        return LANE_CP;
    case ST_EP:
        return LANE_EP;
    case ST_DP:
        return LANE_DP;
    case ST_DP_GATHER:
        return LANE_GATHER;
    case ST_H2D:
    case ST_D2H:
    case ST_HOST:
        return LANE_OFFLOAD;
    default:
        return LANE_PP;
    }
}

struct box {
    sim_time t0, t1;
    int lane, color, mb; /* color: enum time_cat, or 100 + pipeline kind */
};

static int by_lane_time(const void *a, const void *b)
{
    const struct box *x = a, *y = b;

    if (x->lane != y->lane)
        return x->lane - y->lane;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Merge neighbours of one lane with the same colour (and micro-batch when keep_mb). */
static size_t merge_boxes(struct box *b, size_t n, sim_time gap, bool keep_mb)
{
    size_t out = 0;

    qsort(b, n, sizeof(*b), by_lane_time);
    for (size_t i = 0; i < n; i++) {
        if (out > 0 && b[out - 1].lane == b[i].lane && b[out - 1].color == b[i].color &&
            (!keep_mb || b[out - 1].mb == b[i].mb) && (keep_mb || b[i].t0 - b[out - 1].t1 <= gap)) {
            if (b[i].t1 > b[out - 1].t1)
                b[out - 1].t1 = b[i].t1;
            continue;
        }
        b[out++] = b[i];
    }
    return out;
}

#define MAX_TIMELINE_RANKS 8

static int run_timeline(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, nranks = pp < MAX_TIMELINE_RANKS ? pp : MAX_TIMELINE_RANKS;
    int lane_y[MAX_TIMELINE_RANKS][LANE_COUNT], ny = 0, ri_of[MAX_TIMELINE_RANKS];
    static const char *const lane_name[LANE_COUNT] = { "compute",   "TP",        "CP", "EP",
                                                       "DP reduce", "DP gather", "PP", "offload" };
    bool used[MAX_TIMELINE_RANKS][LANE_COUNT] = { { false } }, cat[TC_COUNT] = { false };
    struct box *bx = xmalloc(sizeof(*bx) * (r->sim.ntrace + 1));
    size_t nb = 0;
    const char *unit;
    double scale = time_scale(r->step_s, &unit) / NS_PER_S;
    struct strbuf names, colors;
    char *path, *title, *vars;
    FILE *f;

    for (int k = 0; k < nranks; k++)
        ri_of[k] = first[k];
    for (size_t i = 0; i < r->sim.ntrace; i++) {
        const struct trace_rec *tr = &r->sim.trace[i];
        const struct task *t = &r->sim.ranks[tr->rank_idx].prog->tasks[tr->task];
        int k;
        for (k = 0; k < nranks && ri_of[k] != tr->rank_idx; k++)
            ;
        if (k == nranks || t->kind == TASK_MARK || tr->t1 <= tr->t0)
            continue;
        bx[nb] = (struct box){ tr->t0, tr->t1, k * LANE_COUNT + lane_of(t->stream), t->tcat, -1 };
        used[k][lane_of(t->stream)] = true;
        cat[t->tcat] = true;
        nb++;
    }
    nb = merge_boxes(bx, nb, r->sim.step / 1500 + 1, false);
    for (int k = 0; k < nranks; k++)
        for (int l = 0; l < LANE_COUNT; l++)
            lane_y[k][l] = used[k][l] ? ny++ : -1;
    f = open_dat(dir, "timeline", &path);
    if (!f) {
        free(bx);
        free(path);
        return -1;
    }
    fprintf(f, "# x0 x1 (%s) y0 y1 rgb; lanes as '#lane y label'\n", unit);
    for (int k = 0; k < nranks; k++)
        for (int l = 0; l < LANE_COUNT; l++)
            if (lane_y[k][l] >= 0)
                fprintf(f, "#lane %d \"rank %d %s\"\n", lane_y[k][l], r->sim.ranks[ri_of[k]].rank,
                        lane_name[l]);
    for (size_t i = 0; i < nb; i++) {
        int y = lane_y[bx[i].lane / LANE_COUNT][bx[i].lane % LANE_COUNT];
        fprintf(f, "%.6f %.6f %.2f %.2f %ld\n", (double)bx[i].t0 * scale, (double)bx[i].t1 * scale,
                y - 0.4, y + 0.4, strtol(tcat_color[bx[i].color] + 1, NULL, 16));
    }
    free(bx);
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    /* The lane labels, for gnuplot's ytics. */
    free(path);
    f = open_dat(dir, "timeline_lanes", &path);
    if (!f) {
        free(path);
        return -1;
    }
    for (int k = 0; k < nranks; k++)
        for (int l = 0; l < LANE_COUNT; l++)
            if (lane_y[k][l] >= 0)
                fprintf(f, "%d \"rank %d (stage %d) %s\"\n", lane_y[k][l],
                        r->sim.ranks[ri_of[k]].rank, r->sim.ranks[ri_of[k]].coords[DIM_PP],
                        lane_name[l]);
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    sb_init(&names);
    sb_init(&colors);
    for (int c = 0; c < TC_COUNT; c++)
        if (cat[c]) {
            char nm[32];
            snprintf(nm, sizeof(nm), "%s", tcat_label[c]);
            for (char *q = nm; *q; q++)
                if (*q == ' ')
                    *q = '_';
            sb_addf(&names, "%s%s", names.len ? " " : "", nm);
            sb_addf(&colors, "%s%s", colors.len ? " " : "", tcat_color[c]);
        }
    title = safe_title(r->s->name);
    vars = xasprintf("lanefile='%s/timeline_lanes.dat'; titletext='%s'; unit='%s'; nlanes=%d; "
                     "names='%s'; colors='%s'; stepend=%.6f",
                     dir, title, unit, ny, names.buf ? names.buf : "", colors.buf ? colors.buf : "",
                     (double)r->sim.step * scale);
    draw(dir, "timeline", "timeline", vars);
    free(vars);
    free(title);
    sb_release(&names);
    sb_release(&colors);
    return 0;
}

enum pipe_kind {
    PK_F,
    PK_B,
    PK_W,
    PK_R
};

static int run_pipeline(const char *dir, const struct run *r, const int *first)
{
    static const char *const kind_color[] = { "#77aadd", "#44aa66", "#aa66cc", "#ee8866" };
    int pp = r->s->par.pp, m = r->s->train.global_batch / (r->s->train.micro_batch * r->s->par.dp);
    struct box *bx = xmalloc(sizeof(*bx) * (r->sim.ntrace + 1));
    size_t nb = 0;
    const char *unit;
    double scale = time_scale(r->step_s, &unit) / NS_PER_S;
    char *path, *title, *vars, label[160], present[5] = "    ";
    FILE *f;

    for (size_t i = 0; i < r->sim.ntrace; i++) {
        const struct trace_rec *tr = &r->sim.trace[i];
        const struct rank_result *rr = &r->sim.ranks[tr->rank_idx];
        const struct task *t = &rr->prog->tasks[tr->task];
        int kind;
        if (first[rr->coords[DIM_PP]] != tr->rank_idx || t->kind != TASK_COMPUTE || t->mb < 0)
            continue;
        if (t->tcat == TC_FWD)
            kind = PK_F;
        else if (t->tcat == TC_RECOMPUTE)
            kind = PK_R;
        else if (t->tcat == TC_BWD) {
            prog_label_text(rr->prog, t->label, label, sizeof(label));
            kind = strncmp(label, "wgrad", 5) == 0 ? PK_W : PK_B;
        } else
            continue;
        bx[nb++] = (struct box){ tr->t0, tr->t1, rr->coords[DIM_PP], kind, t->mb };
        present[kind] = "FBWR"[kind];
    }
    nb = merge_boxes(bx, nb, 0, true);
    f = open_dat(dir, "pipeline", &path);
    if (!f) {
        free(bx);
        free(path);
        return -1;
    }
    fprintf(f, "# x0 x1 (%s) stage rgb micro-batch(1-based)\n", unit);
    for (size_t i = 0; i < nb; i++)
        fprintf(f, "%.6f %.6f %d %ld %d\n", (double)bx[i].t0 * scale, (double)bx[i].t1 * scale,
                bx[i].lane, strtol(kind_color[bx[i].color] + 1, NULL, 16), bx[i].mb + 1);
    free(bx);
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    title = safe_title(r->s->name);
    vars = xasprintf("titletext='%s, %s, %d micro-batches'; unit='%s'; nstages=%d; labels=%d; "
                     "stepend=%.6f; kinds='%s'",
                     title, pp > 1 ? schedule_name(r->s->par.schedule) : "no pipeline", m, unit, pp,
                     m * r->s->par.vpp <= 24, (double)r->sim.step * scale, present);
    draw(dir, "pipeline", "pipeline", vars);
    free(vars);
    free(title);
    return 0;
}

static int run_memory_timeline(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, bins = 2000;
    const char *unit;
    double scale = time_scale(r->step_s, &unit) / NS_PER_S;
    struct strbuf stages;
    char *path, *title, *vars;
    FILE *f = open_dat(dir, "memory_timeline", &path);

    if (!f) {
        free(path);
        return -1;
    }
    sb_init(&stages);
    fprintf(f, "# time (%s) GiB allocated; one block per stage (peak kept per bin)\n", unit);
    for (int st = 0, blocks = 0; st < pp && st < MAX_TIMELINE_RANKS; st++) {
        const struct rank_result *rr;
        int64_t cur = 0, hi = 0;
        sim_time bin_end;
        if (first[st] < 0 || r->sim.ranks[first[st]].ntl == 0)
            continue;
        rr = &r->sim.ranks[first[st]];
        if (blocks++)
            fputs("\n\n", f);
        sb_addf(&stages, "%s%d", stages.len ? " " : "", st);
        bin_end = r->sim.step / bins + 1;
        fprintf(f, "0 0\n");
        for (size_t i = 0; i < rr->ntl; i++) {
            const struct mem_sample *ms = &rr->tl[i];
            cur = 0;
            for (int c = 0; c < MC_COUNT; c++)
                cur += ms->cur[c];
            while (ms->t >= bin_end) {
                fprintf(f, "%.6f %.6f\n", (double)(bin_end - r->sim.step / bins - 1) * scale,
                        (double)hi / GIB);
                hi = cur;
                bin_end += r->sim.step / bins + 1;
            }
            hi = cur > hi ? cur : hi;
        }
        fprintf(f, "%.6f %.6f\n", (double)r->sim.step * scale, (double)hi / GIB);
    }
    if (close_dat(f, path) != 0) {
        free(path);
        sb_release(&stages);
        return -1;
    }
    free(path);
    title = safe_title(r->s->name);
    vars = xasprintf("titletext='%s'; unit='%s'; stages='%s'; capacity=%.4f; stepend=%.6f", title,
                     unit, stages.buf ? stages.buf : "", r->capacity_bytes / GIB,
                     (double)r->sim.step * scale);
    if (stages.len)
        draw(dir, "memory_timeline", "memory_timeline", vars);
    free(vars);
    free(title);
    sb_release(&stages);
    return 0;
}

int plot_run(const char *dir, const struct run *r)
{
    int *first, rc = 0;

    if (make_dir(dir) != 0)
        return -1;
    first = xmalloc(sizeof(int) * (size_t)r->s->par.pp);
    stage_rows(r, first);
    rc |= run_breakdown(dir, r, first);
    rc |= run_memory(dir, r, first);
    if (r->sim.ntrace > 0) {
        rc |= run_timeline(dir, r, first);
        rc |= run_pipeline(dir, r, first);
        rc |= run_memory_timeline(dir, r, first);
    } else {
        fprintf(stderr, "simtrain: note: no trace recorded; timeline pictures skipped\n");
    }
    free(first);
    return rc ? -1 : 0;
}

/* ---- sweep --------------------------------------------------------------------------- */

/* "nodes=4, micro_batch=2"; with sep "\\n" one value per line of a bar label. */
static void point_label(const struct sweep *sw, const struct sweep_point *p, const char *sep,
                        bool values_only, char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int a = 0; a < sw->naxes && len + 1 < n; a++) {
        const char *key = strrchr(sw->axes[a].key, '.');
        if (values_only)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", a ? sep : "",
                                    sw->axes[a].values[p->vidx[a]]);
        else
            len +=
                (size_t)snprintf(buf + len, n - len, "%s%s=%s", a ? sep : "",
                                 key ? key + 1 : sw->axes[a].key, sw->axes[a].values[p->vidx[a]]);
        for (char *q = buf; *q; q++)
            if (*q == '"')
                *q = '\'';
    }
}

static bool has_numbers(const struct sweep_point *p)
{
    return p->status == SP_OK || p->status == SP_OOM;
}

/* The label of a group: its non-size axis values. */
static void group_label(const struct sweep *sw, const struct sweep_point *p, char *buf, size_t n)
{
    struct sweep tmp = *sw;
    struct sweep_axis ax[SWEEP_MAX_AXES];
    struct sweep_point q = *p;
    int nax = 0;

    for (int a = 0; a < sw->naxes; a++)
        if (!sw->axes[a].size) {
            ax[nax] = sw->axes[a];
            q.vidx[nax++] = p->vidx[a];
        }
    tmp.axes = ax;
    tmp.naxes = nax;
    point_label(&tmp, &q, ", ", false, buf, n);
    if (!buf[0]) { /* one group: name it after the scenario file */
        const char *base = sw->path ? strrchr(sw->path, '/') : NULL;
        base = base ? base + 1 : sw->path ? sw->path : "sweep";
        snprintf(buf, n, "%.*s", (int)strcspn(base, "."), base);
    }
}

static int sweep_scaling(const char *dir, const struct sweep *sw, const struct sweep_point *pts,
                         long n)
{
    int groups = 0, maxg = -1;
    char *path, *title, *vars, label[256];
    FILE *f = open_dat(dir, "scaling", &path);

    if (!f) {
        free(path);
        return -1;
    }
    fprintf(f, "# one block per group: GPUs tokens/s efficiency(%%) ideal_tokens/s\n");
    for (long i = 0; i < n; i++)
        maxg = pts[i].group > maxg ? pts[i].group : maxg;
    for (int g = 0; g <= maxg; g++) {
        int rows = 0;
        for (long i = 0; i < n; i++) {
            const struct sweep_point *p = &pts[i], *b = NULL;
            if (p->group != g || !has_numbers(p) || p->base < 0)
                continue;
            for (long j = 0; j < n; j++)
                if (pts[j].index == p->base)
                    b = &pts[j];
            if (rows++ == 0) {
                group_label(sw, p, label, sizeof(label));
                fprintf(f, "%s\"%s\" \"\" \"\" \"\"\n", groups++ ? "\n\n" : "", label);
            }
            fprintf(f, "%d %.6g %.4f %.6g\n", p->gpus, p->tokens_per_s,
                    100 * (sw->weak ? p->weak_eff : p->strong_eff),
                    b ? b->tokens_per_s / b->gpus * p->gpus : 0);
        }
    }
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    if (groups == 0) {
        fprintf(stderr, "simtrain: note: no simulated point to draw scaling from\n");
        return 0;
    }
    title = safe_title(sw->path ? sw->path : "sweep");
    vars = xasprintf("titletext='%s'; ngroups=%d; scaling='%s'", title, groups,
                     sw->weak ? "weak" : "strong");
    draw(dir, "scaling", "scaling", vars);
    free(vars);
    free(title);
    return 0;
}

/*
 * Many bars: label them with values only, one axis per line, and name the
 * axes once under the chart (*xlabel, which the caller frees).
 */
static bool compact_labels(const struct sweep *sw, const struct sweep_point *pts, long n,
                           char **xlabel)
{
    struct strbuf sb;
    long rows = 0;

    for (long i = 0; i < n; i++)
        rows += pts[i].status == SP_OK || pts[i].status == SP_OOM;
    sb_init(&sb);
    for (int a = 0; a < sw->naxes; a++) {
        const char *key = strrchr(sw->axes[a].key, '.');
        sb_addf(&sb, "%s%s", a ? " / " : "", key ? key + 1 : sw->axes[a].key);
    }
    *xlabel = sb_detach(&sb);
    return rows > 6;
}

static int sweep_breakdown(const char *dir, const struct sweep *sw, const struct sweep_point *pts,
                           long n)
{
    bool use[TC_COUNT] = { false };
    const char *names[TC_COUNT], *colors[TC_COUNT], *all[TC_COUNT], *unit;
    double span = 0, scale;
    int nused = 0, rows = 0;
    char *path, *title, label[256], ylabel[48], *xlabel;
    bool compact = compact_labels(sw, pts, n, &xlabel);
    FILE *f;

    for (long i = 0; i < n; i++)
        if (has_numbers(&pts[i])) {
            span = pts[i].step_s > span ? pts[i].step_s : span;
            for (int c = 0; c < TC_COUNT; c++)
                use[c] |= pts[i].breakdown_s[c] > 0;
        }
    scale = time_scale(span, &unit);
    nused = time_columns(use, all, names, colors);
    f = open_dat(dir, "sweep_breakdown", &path);
    if (!f) {
        free(path);
        free(xlabel);
        return -1;
    }
    bars_header(f, all, use, TC_COUNT);
    for (long i = 0; i < n; i++) {
        if (!has_numbers(&pts[i]))
            continue;
        point_label(sw, &pts[i], "\\n", compact, label, sizeof(label));
        fprintf(f, "\"%s\"", label);
        for (int c = 0; c < TC_COUNT; c++)
            if (use[c])
                fprintf(f, " %.6g", pts[i].breakdown_s[c] * scale);
        fputc('\n', f);
        rows++;
    }
    if (close_dat(f, path) != 0) {
        free(path);
        free(xlabel);
        return -1;
    }
    free(path);
    if (rows == 0) {
        free(xlabel);
        return 0;
    }
    snprintf(ylabel, sizeof(ylabel), "time per step (%s)", unit);
    title = xasprintf("Step time by category: %s", sw->path ? sw->path : "sweep");
    bars_draw(&(struct bars){ .dir = dir,
                              .name = "sweep_breakdown",
                              .title = title,
                              .ylabel = ylabel,
                              .ncols = nused,
                              .nrows = rows,
                              .cols = names,
                              .colors = colors,
                              .hline = -1,
                              .lines = sw->naxes,
                              .xlabel = compact ? xlabel : "" });
    free(title);
    free(xlabel);
    return 0;
}

static int sweep_memory(const char *dir, const struct sweep *sw, const struct sweep_point *pts,
                        long n)
{
    bool use[MC_COUNT] = { false };
    const char *names[MC_COUNT], *colors[MC_COUNT], *all[MC_COUNT];
    double cap = 0, top = 0;
    int nused = 0, rows = 0;
    char *path, *title, label[256], *xlabel;
    bool compact = compact_labels(sw, pts, n, &xlabel);
    FILE *f;

    for (int c = 0; c < MC_COUNT; c++)
        all[c] = mcat_name(c);
    for (long i = 0; i < n; i++)
        if (has_numbers(&pts[i])) {
            cap = pts[i].capacity_bytes > cap ? pts[i].capacity_bytes : cap;
            top = pts[i].peak_bytes > top ? pts[i].peak_bytes : top;
            for (int c = 0; c < MC_COUNT; c++)
                use[c] |= pts[i].mem_bytes[c] > 0;
        }
    for (int c = 0; c < MC_COUNT; c++)
        if (use[c]) {
            names[nused] = all[c];
            colors[nused++] = mcat_color[c];
        }
    f = open_dat(dir, "sweep_memory", &path);
    if (!f) {
        free(path);
        free(xlabel);
        return -1;
    }
    bars_header(f, all, use, MC_COUNT);
    for (long i = 0; i < n; i++) {
        if (!has_numbers(&pts[i]))
            continue;
        point_label(sw, &pts[i], "\\n", compact, label, sizeof(label));
        fprintf(f, "\"%s\"", label);
        for (int c = 0; c < MC_COUNT; c++)
            if (use[c])
                fprintf(f, " %.6g", pts[i].mem_bytes[c] / GIB);
        fputc('\n', f);
        rows++;
    }
    if (close_dat(f, path) != 0) {
        free(path);
        free(xlabel);
        return -1;
    }
    free(path);
    if (rows == 0) {
        free(xlabel);
        return 0;
    }
    title = xasprintf("Peak memory per GPU by category: %s", sw->path ? sw->path : "sweep");
    bars_draw(&(struct bars){ .dir = dir,
                              .name = "sweep_memory",
                              .title = title,
                              .ylabel = "GiB at the peak",
                              .ncols = nused,
                              .nrows = rows,
                              .cols = names,
                              .colors = colors,
                              .hline = cap / GIB,
                              .ymax = (top > cap ? top : cap) / GIB * 1.08,
                              .lines = sw->naxes,
                              .xlabel = compact ? xlabel : "" });
    free(title);
    free(xlabel);
    return 0;
}

int plot_sweep(const char *dir, const struct sweep *sw, const struct sweep_point *pts, long n)
{
    bool size = false;
    int rc = 0;

    if (make_dir(dir) != 0)
        return -1;
    for (int a = 0; a < sw->naxes; a++)
        size |= sw->axes[a].size;
    if (size)
        rc |= sweep_scaling(dir, sw, pts, n);
    rc |= sweep_breakdown(dir, sw, pts, n);
    rc |= sweep_memory(dir, sw, pts, n);
    return rc ? -1 : 0;
}

/* ---- plan ---------------------------------------------------------------------------- */

static int plan_scatter(const char *dir, const struct plan_result *pr)
{
    char *path, *title, *vars;
    FILE *f = open_dat(dir, "plan", &path);

    if (!f) {
        free(path);
        return -1;
    }
    fprintf(f, "# step_s peak_GiB kind(0 estimate, 1 simulated, 2 final) rank\n");
    for (long i = 0; i < pr->nfit; i++)
        fprintf(f, "%.6g %.4f 0 0\n", pr->fit[i].est.step_s, pr->fit[i].est.peak_bytes / GIB);
    fputs("\n\n", f);
    for (long i = 0; i < pr->nfit; i++)
        if (pr->fit[i].simulated && pr->fit[i].sim_status < 0)
            fprintf(f, "%.6g %.4f 1 0\n", pr->fit[i].sim_step_s, pr->fit[i].sim_peak_bytes / GIB);
    fputs("\n\n", f);
    /* One label per spot: winners with the same figures share it ("#1,2"). */
    for (int i = 0; i < pr->nfinal; i++) {
        const struct plan_cand *c = &pr->final[i];
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = fabs(pr->final[j].sim_step_s - c->sim_step_s) <= 0.02 * c->sim_step_s &&
                   fabs(pr->final[j].sim_peak_bytes - c->sim_peak_bytes) <= 1.0 * GIB;
        if (seen)
            continue;
        fprintf(f, "%.6g %.4f 2 \"#%d", c->sim_step_s, c->sim_peak_bytes / GIB, i + 1);
        for (int j = i + 1; j < pr->nfinal; j++)
            if (fabs(pr->final[j].sim_step_s - c->sim_step_s) <= 0.02 * c->sim_step_s &&
                fabs(pr->final[j].sim_peak_bytes - c->sim_peak_bytes) <= 1.0 * GIB)
                fprintf(f, ",%d", j + 1);
        fputs("\"\n", f);
    }
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    title = safe_title(pr->base->path && *pr->base->path ? pr->base->path : pr->base->name);
    vars = xasprintf("titletext='%s'; capacity=%.4f; nfit=%ld", title, pr->capacity_bytes / GIB,
                     pr->nfit);
    draw(dir, "plan", "plan", vars);
    free(vars);
    free(title);
    return 0;
}

/* Three lines under a bar: rank; degrees; schedule, sharding, micro-batch, recompute. */
static void top_label(const struct plan_cand *c, int rank, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "#%d\\ndp%d tp%d pp%d", rank, c->dp, c->tp, c->pp);

    if (c->vpp > 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " v%d", c->vpp);
    if (c->cp > 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " cp%d", c->cp);
    if (c->ep > 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " ep%d", c->ep);
    if (len < n)
        snprintf(buf + len, n - len, "\\n%s%s mb%d %s", c->sp ? "sp " : "",
                 sharding_name((enum sharding)c->sharding), c->micro_batch,
                 recompute_name((enum recompute)c->recompute));
}

static int plan_top(const char *dir, const struct plan_result *pr)
{
    bool use[TC_COUNT] = { false };
    const char *names[TC_COUNT], *colors[TC_COUNT], *all[TC_COUNT], *unit;
    double span = 0, scale;
    int nused = 0;
    char *path, *title, label[160], ylabel[48];
    FILE *f;

    if (pr->nfinal == 0)
        return 0;
    for (int i = 0; i < pr->nfinal; i++) {
        span = pr->final[i].sim_step_s > span ? pr->final[i].sim_step_s : span;
        for (int c = 0; c < TC_COUNT; c++)
            use[c] |= pr->final[i].sim_breakdown_s[c] > 0;
    }
    scale = time_scale(span, &unit);
    nused = time_columns(use, all, names, colors);
    f = open_dat(dir, "plan_top", &path);
    if (!f) {
        free(path);
        return -1;
    }
    bars_header(f, all, use, TC_COUNT);
    for (int i = 0; i < pr->nfinal; i++) {
        top_label(&pr->final[i], i + 1, label, sizeof(label));
        fprintf(f, "\"%s\"", label);
        for (int c = 0; c < TC_COUNT; c++)
            if (use[c])
                fprintf(f, " %.6g", pr->final[i].sim_breakdown_s[c] * scale);
        fputc('\n', f);
    }
    if (close_dat(f, path) != 0) {
        free(path);
        return -1;
    }
    free(path);
    snprintf(ylabel, sizeof(ylabel), "simulated time per step (%s)", unit);
    title = xasprintf("Best layouts, step time by category: %s", pr->base->name);
    bars_draw(&(struct bars){ .dir = dir,
                              .name = "plan_top",
                              .title = title,
                              .ylabel = ylabel,
                              .ncols = nused,
                              .nrows = pr->nfinal,
                              .cols = names,
                              .colors = colors,
                              .hline = -1,
                              .lines = 3 });
    free(title);
    return 0;
}

int plot_plan(const char *dir, const struct plan_result *pr)
{
    int rc = 0;

    if (make_dir(dir) != 0)
        return -1;
    rc |= plan_scatter(dir, pr);
    rc |= plan_top(dir, pr);
    return rc ? -1 : 0;
}
