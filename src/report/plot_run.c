/*
 * plot_run.c - the pictures of one simulated step (`simtrain S.yaml --plot
 * DIR`, see plot.h): step time and peak memory by category per pipeline
 * stage (stacked bars), and from the trace a per-rank Gantt chart of the
 * streams, the pipeline schedule by micro-batch and memory over the step.
 * One simulated rank stands for each stage: the first one simulated.
 */
#include "report/plot.h"

#include <stdlib.h>
#include <string.h>

#include "report/plot_chart.h"
#include "report/report.h"

/* The first simulated rank of each pipeline stage, -1 for a stage none stands for. */
static void stage_ranks(const struct run *r, int *first_rank_of_stage)
{
    for (int st = 0; st < r->s->par.pp; st++)
        first_rank_of_stage[st] = -1;
    for (int i = 0; i < r->sim.nranks; i++) {
        int st = r->sim.ranks[i].coords[DIM_PP];
        if (first_rank_of_stage[st] < 0)
            first_rank_of_stage[st] = i;
    }
}

/* Step time by category per stage, averaged over the stage's simulated ranks. */
static int run_breakdown(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, *cnt = xcalloc((size_t)pp, sizeof(int));
    double(*v)[TC_COUNT] = xcalloc((size_t)pp, sizeof(*v));
    const char *unit;
    double scale = chart_time_scale(r->step_s, &unit);
    struct chart_rows rows;
    char *title, ylabel[32];
    int rc;

    for (int i = 0; i < r->sim.nranks; i++) {
        const struct rank_result *rr = &r->sim.ranks[i];
        for (int c = 0; c < TC_COUNT; c++)
            v[rr->coords[DIM_PP]][c] += (double)rr->bucket[c] / NS_PER_S * scale;
        cnt[rr->coords[DIM_PP]]++;
    }
    chart_rows_init(&rows, TC_COUNT);
    for (int st = 0; st < pp; st++) {
        char label[32];
        int row;
        if (first[st] < 0)
            continue;
        snprintf(label, sizeof(label), "stage %d", st);
        row = chart_rows_add(&rows, label);
        for (int c = 0; c < TC_COUNT; c++)
            rows.v[row * TC_COUNT + c] = v[st][c] / (cnt[st] > 0 ? cnt[st] : 1);
    }
    free(v);
    free(cnt);
    snprintf(ylabel, sizeof(ylabel), "time per step (%s)", unit);
    title = xasprintf("Step time by category per pipeline stage: %s", r->s->name);
    rc = chart_bars(
        &(struct chart_bars){
            .dir = dir, .name = "breakdown", .title = title, .ylabel = ylabel, .hline = -1 },
        &rows, chart_tcat_label, chart_tcat_color);
    free(title);
    chart_rows_release(&rows);
    return rc;
}

/* Memory by category at the peak of each stage's rank, with the GPU's capacity. */
static int run_memory(const char *dir, const struct run *r, const int *first)
{
    double top = r->capacity_bytes;
    const char *names[MC_COUNT];
    struct chart_rows rows;
    char *title;
    int rc;

    for (int c = 0; c < MC_COUNT; c++)
        names[c] = mcat_name(c);
    chart_rows_init(&rows, MC_COUNT);
    for (int st = 0; st < r->s->par.pp; st++) {
        const struct rank_result *rr;
        char label[32];
        int row;
        if (first[st] < 0)
            continue;
        rr = &r->sim.ranks[first[st]];
        top = (double)rr->peak > top ? (double)rr->peak : top;
        snprintf(label, sizeof(label), "stage %d", st);
        row = chart_rows_add(&rows, label);
        for (int c = 0; c < MC_COUNT; c++)
            rows.v[row * MC_COUNT + c] = (double)rr->at_peak[c] / CHART_GIB;
    }
    title = xasprintf("Peak memory per GPU by category: %s (%s, %.1f GiB)", r->s->name,
                      r->s->hw.gpu.model, r->capacity_bytes / CHART_GIB);
    rc = chart_bars(&(struct chart_bars){ .dir = dir,
                                          .name = "memory",
                                          .title = title,
                                          .ylabel = "GiB at the peak",
                                          .hline = r->capacity_bytes / CHART_GIB,
                                          .ymax = top / CHART_GIB * 1.08 },
                    &rows, names, chart_mcat_color);
    free(title);
    chart_rows_release(&rows);
    return rc;
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
    LANE_HOST,
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
        return LANE_OFFLOAD;
    case ST_HOST:
        return LANE_HOST;
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

static const char *const lane_name[LANE_COUNT] = { "compute",   "TP", "CP",      "EP",  "DP reduce",
                                                   "DP gather", "PP", "offload", "host" };

/*
 * The boxes of the first nranks stages' ranks (ri_of[]), lane = k * LANE_COUNT
 * + lane; marks the lanes (used) and time categories (cat) that occur.
 */
static size_t timeline_boxes(const struct run *r, const int *ri_of, int nranks, struct box *bx,
                             bool used[][LANE_COUNT], bool cat[TC_COUNT])
{
    size_t nb = 0;

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
    return nb;
}

/* The lane labels, for gnuplot's ytics: DIR/timeline_lanes.dat. */
static int write_lanes(const char *dir, const struct run *r, const int *ri_of, int nranks,
                       int lane_y[][LANE_COUNT])
{
    FILE *f = chart_open_dat(dir, "timeline_lanes");

    if (!f)
        return -1;
    for (int k = 0; k < nranks; k++)
        for (int l = 0; l < LANE_COUNT; l++)
            if (lane_y[k][l] >= 0)
                fprintf(f, "%d \"rank %d (stage %d) %s\"\n", lane_y[k][l],
                        r->sim.ranks[ri_of[k]].rank, r->sim.ranks[ri_of[k]].coords[DIM_PP],
                        lane_name[l]);
    return chart_close_dat(f, dir, "timeline_lanes");
}

/* Draw the timeline with a legend of the time categories that occur. */
static void draw_timeline(const char *dir, const struct run *r, const char *unit, double scale,
                          int nlanes, const bool cat[TC_COUNT])
{
    struct strbuf names, colors;
    char *title, *vars;

    sb_init(&names);
    sb_init(&colors);
    for (int c = 0; c < TC_COUNT; c++)
        if (cat[c]) {
            char nm[32];
            snprintf(nm, sizeof(nm), "%s", chart_tcat_label[c]);
            for (char *q = nm; *q; q++)
                if (*q == ' ')
                    *q = '_';
            sb_addf(&names, "%s%s", names.len ? " " : "", nm);
            sb_addf(&colors, "%s%s", colors.len ? " " : "", chart_tcat_color[c]);
        }
    title = chart_safe_title(r->s->name);
    vars = xasprintf("lanefile='%s/timeline_lanes.dat'; titletext='%s'; unit='%s'; nlanes=%d; "
                     "names='%s'; colors='%s'; stepend=%.6f",
                     dir, title, unit, nlanes, names.buf ? names.buf : "",
                     colors.buf ? colors.buf : "", (double)r->sim.step * scale);
    chart_draw(dir, "timeline", "timeline", vars);
    free(vars);
    free(title);
    sb_release(&names);
    sb_release(&colors);
}

/* Gantt chart of the streams of the first MAX_TIMELINE_RANKS stages' ranks, one lane each. */
static int run_timeline(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, nranks = pp < MAX_TIMELINE_RANKS ? pp : MAX_TIMELINE_RANKS;
    int lane_y[MAX_TIMELINE_RANKS][LANE_COUNT], ny = 0;
    bool used[MAX_TIMELINE_RANKS][LANE_COUNT] = { { false } }, cat[TC_COUNT] = { false };
    struct box *bx = xmalloc(sizeof(*bx) * (r->sim.ntrace + 1));
    size_t nb = timeline_boxes(r, first, nranks, bx, used, cat);
    const char *unit;
    double scale = chart_time_scale(r->step_s, &unit) / NS_PER_S;
    FILE *f;

    nb = merge_boxes(bx, nb, r->sim.step / 1500 + 1, false);
    for (int k = 0; k < nranks; k++)
        for (int l = 0; l < LANE_COUNT; l++)
            lane_y[k][l] = used[k][l] ? ny++ : -1;
    f = chart_open_dat(dir, "timeline");
    if (!f) {
        free(bx);
        return -1;
    }
    fprintf(f, "# x0 x1 (%s) y0 y1 rgb; lanes as '#lane y label'\n", unit);
    for (int k = 0; k < nranks; k++)
        for (int l = 0; l < LANE_COUNT; l++)
            if (lane_y[k][l] >= 0)
                fprintf(f, "#lane %d \"rank %d %s\"\n", lane_y[k][l], r->sim.ranks[first[k]].rank,
                        lane_name[l]);
    for (size_t i = 0; i < nb; i++) {
        int y = lane_y[bx[i].lane / LANE_COUNT][bx[i].lane % LANE_COUNT];
        fprintf(f, "%.6f %.6f %.2f %.2f %ld\n", (double)bx[i].t0 * scale, (double)bx[i].t1 * scale,
                y - 0.4, y + 0.4, strtol(chart_tcat_color[bx[i].color] + 1, NULL, 16));
    }
    free(bx);
    if (chart_close_dat(f, dir, "timeline") != 0 || write_lanes(dir, r, first, nranks, lane_y) != 0)
        return -1;
    draw_timeline(dir, r, unit, scale, ny, cat);
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
    double scale = chart_time_scale(r->step_s, &unit) / NS_PER_S;
    char *title, *vars, label[160], present[5] = "    ";
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
    f = chart_open_dat(dir, "pipeline");
    if (!f) {
        free(bx);
        return -1;
    }
    fprintf(f, "# x0 x1 (%s) stage rgb micro-batch(1-based)\n", unit);
    for (size_t i = 0; i < nb; i++)
        fprintf(f, "%.6f %.6f %d %ld %d\n", (double)bx[i].t0 * scale, (double)bx[i].t1 * scale,
                bx[i].lane, strtol(kind_color[bx[i].color] + 1, NULL, 16), bx[i].mb + 1);
    free(bx);
    if (chart_close_dat(f, dir, "pipeline") != 0)
        return -1;
    title = chart_safe_title(r->s->name);
    vars = xasprintf("titletext='%s, %s, %d micro-batches'; unit='%s'; nstages=%d; labels=%d; "
                     "stepend=%.6f; kinds='%s'",
                     title, pp > 1 ? schedule_name(r->s->par.schedule) : "no pipeline", m, unit, pp,
                     m * r->s->par.vpp <= 24, (double)r->sim.step * scale, present);
    chart_draw(dir, "pipeline", "pipeline", vars);
    free(vars);
    free(title);
    return 0;
}

static int run_memory_timeline(const char *dir, const struct run *r, const int *first)
{
    int pp = r->s->par.pp, bins = 2000;
    const char *unit;
    double scale = chart_time_scale(r->step_s, &unit) / NS_PER_S;
    struct strbuf stages;
    char *title, *vars;
    FILE *f = chart_open_dat(dir, "memory_timeline");

    if (!f)
        return -1;
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
                        (double)hi / CHART_GIB);
                hi = cur;
                bin_end += r->sim.step / bins + 1;
            }
            hi = cur > hi ? cur : hi;
        }
        fprintf(f, "%.6f %.6f\n", (double)r->sim.step * scale, (double)hi / CHART_GIB);
    }
    if (chart_close_dat(f, dir, "memory_timeline") != 0) {
        sb_release(&stages);
        return -1;
    }
    title = chart_safe_title(r->s->name);
    vars = xasprintf("titletext='%s'; unit='%s'; stages='%s'; capacity=%.4f; stepend=%.6f", title,
                     unit, stages.buf ? stages.buf : "", r->capacity_bytes / CHART_GIB,
                     (double)r->sim.step * scale);
    if (stages.len)
        chart_draw(dir, "memory_timeline", "memory_timeline", vars);
    free(vars);
    free(title);
    sb_release(&stages);
    return 0;
}

int plot_run(const char *dir, const struct run *r)
{
    int *first, rc = 0;

    if (chart_make_dir(dir) != 0)
        return -1;
    first = xmalloc(sizeof(int) * (size_t)r->s->par.pp);
    stage_ranks(r, first);
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
