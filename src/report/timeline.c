/* timeline.c - the step's spans per rank and stream for a picture; see timeline.h. */
#include "report/timeline.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* One span being built: tasks [first .. last] of a track, merged. */
struct span {
    sim_time t0, t1; /* ns */
    int tcat;        /* the first task's category */
    int mb;          /* its micro-batch, -1 = none */
    int first;       /* index into the track's records: the label */
    int count;       /* tasks merged */
};

struct track {
    const struct rank_result *rr;
    const struct trace_rec **rec; /* the stream's records in the window, by start */
    int n;
};

static int by_start(const void *a, const void *b)
{
    const struct trace_rec *x = *(const struct trace_rec *const *)a;
    const struct trace_rec *y = *(const struct trace_rec *const *)b;

    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return (x->task > y->task) - (x->task < y->task);
}

static void us(FILE *f, sim_time ns)
{
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* Whether record `t` joins span `s` at merge level `level` (0: category and micro-batch). */
static bool joins(const struct span *s, const struct task *t, sim_time start, sim_time res,
                  int level)
{
    if (start - s->t1 > res)
        return false;
    return level >= 2 || (t->tcat == s->tcat && (level >= 1 || t->mb == s->mb));
}

/* Merge the track at `level`; emit the spans to f when f is not NULL. Returns their count. */
static int merge(const struct track *tr, sim_time res, int level, FILE *f)
{
    const struct prog *p = tr->rr->prog;
    struct span s = { 0 };
    int spans = 0;
    char label[160];

    for (int i = 0; i <= tr->n; i++) {
        const struct trace_rec *r = i < tr->n ? tr->rec[i] : NULL;
        const struct task *t = r ? &p->tasks[r->task] : NULL;

        if (r && i > 0 && joins(&s, t, r->t0, res, level)) {
            if (r->t1 > s.t1)
                s.t1 = r->t1;
            s.count++;
            continue;
        }
        if (i > 0 && f) {
            fputs(spans > 1 ? ",\n[" : "[", f);
            us(f, s.t0);
            fputc(',', f);
            us(f, s.t1 - s.t0);
            prog_label_text(p, p->tasks[tr->rec[s.first]->task].label, label, sizeof(label));
            fprintf(f, ",%d,%d,%d,", s.tcat, s.mb, s.count);
            fput_json_string(f, label);
            fputc(']', f);
        }
        if (r) {
            s = (struct span){ r->t0, r->t1, t->tcat, t->mb, i, 1 };
            spans++;
        }
    }
    return spans;
}

static void write_track(FILE *f, const struct track *tr, int stream, sim_time res)
{
    int level = 0;

    while (level < 2 && merge(tr, res, level, NULL) > TIMELINE_MAX_SPANS)
        level++;
    fprintf(f, "{\"stream\":%d,\"merge\":%d,\"spans\":[\n", stream, level);
    merge(tr, res, level, f);
    fputs("]}", f);
}

static int64_t mem_total(const struct mem_sample *m)
{
    int64_t total = 0;

    for (int c = 0; c < MC_COUNT; c++)
        total += m->cur[c];
    return total;
}

static void write_sample(FILE *f, const struct mem_sample *m, bool first)
{
    fputs(first ? "\n[" : ",\n[", f);
    us(f, m->t);
    for (int c = 0; c < MC_COUNT; c++)
        fprintf(f, ",%.0f", (double)m->cur[c]);
    fputc(']', f);
}

/* The rank's memory samples in the window, at most one per resolution step (its largest). */
static void write_memory(FILE *f, const struct rank_result *rr, sim_time from, sim_time to,
                         sim_time res)
{
    size_t k = 0;
    const struct mem_sample *best = NULL;
    bool first = true;

    while (k + 1 < rr->ntl && rr->tl[k + 1].t <= from)
        k++; /* the level at the window's start */
    fputs("\"memory\":[", f);
    for (; k < rr->ntl && rr->tl[k].t <= to; k++) {
        const struct mem_sample *m = &rr->tl[k];

        if (best && m->t / res == best->t / res) {
            if (mem_total(m) > mem_total(best))
                best = m;
            continue;
        }
        if (best) {
            write_sample(f, best, first);
            first = false;
        }
        best = m;
    }
    if (best)
        write_sample(f, best, first);
    fputc(']', f);
}

/* The window's records grouped by (rank, stream): group g is all[start[g] .. start[g + 1]). */
static void bucket(const struct sim_result *sr, sim_time from, sim_time to,
                   const struct trace_rec **all, size_t *start)
{
    size_t ngroups = (size_t)sr->nranks * ST_COUNT, *fill;

    for (size_t k = 0; k < sr->ntrace; k++) {
        const struct trace_rec *rec = &sr->trace[k];
        const struct task *t = &sr->ranks[rec->rank_idx].prog->tasks[rec->task];
        if (rec->t1 >= from && rec->t0 <= to)
            start[(size_t)rec->rank_idx * ST_COUNT + t->stream + 1]++;
    }
    for (size_t g = 0; g < ngroups; g++)
        start[g + 1] += start[g];
    fill = xmalloc((ngroups + 1) * sizeof(*fill));
    memcpy(fill, start, (ngroups + 1) * sizeof(*fill));
    for (size_t k = 0; k < sr->ntrace; k++) {
        const struct trace_rec *rec = &sr->trace[k];
        const struct task *t = &sr->ranks[rec->rank_idx].prog->tasks[rec->task];
        if (rec->t1 >= from && rec->t0 <= to)
            all[fill[(size_t)rec->rank_idx * ST_COUNT + t->stream]++] = rec;
    }
    free(fill);
}

static void write_names(FILE *f, const char *key, int n, const char *(*name)(int))
{
    fprintf(f, "\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        fput_json_string(f, name(i));
    }
    fputs("],\n", f);
}

static const char *mcat_text(int c)
{
    return mcat_name(c);
}

int timeline_write(FILE *f, const struct run *r, const struct timeline_opts *o)
{
    const struct sim_result *sr = &r->sim;
    sim_time step = sr->step, from = 0, to = step, res;
    const struct trace_rec **all = xcalloc(sr->ntrace + 1, sizeof(*all));
    size_t *start = xcalloc((size_t)sr->nranks * ST_COUNT + 1, sizeof(*start));
    int width = o && o->width_px > 0 ? o->width_px : 2000;
    bool first = true;

    if (o && o->to_s > o->from_s) {
        from = (sim_time)(o->from_s * NS_PER_S);
        to = (sim_time)(o->to_s * NS_PER_S);
    }
    res = (to - from) / width;
    if (res < 1)
        res = 1;
    bucket(sr, from, to, all, start);
    fprintf(f, "{\"step_us\":");
    us(f, step);
    fputs(",\"window_us\":[", f);
    us(f, from);
    fputc(',', f);
    us(f, to);
    fputs("],\"resolution_us\":", f);
    us(f, res);
    fputs(",\n", f);
    write_names(f, "streams", ST_COUNT, stream_name);
    write_names(f, "categories", TC_COUNT, tcat_name);
    write_names(f, "memory_categories", MC_COUNT, mcat_text);
    fputs("\"ranks\":[", f);
    for (int i = 0; i < sr->nranks; i++) {
        const struct rank_result *rr = &sr->ranks[i];
        bool first_track = true;

        if (!rr->traced)
            continue;
        fprintf(f, "%s{\"rank\":%d,\"stage\":%d,\"tracks\":[", first ? "\n" : ",\n", rr->rank,
                rr->coords[DIM_PP]);
        first = false;
        for (int st = 0; st < ST_COUNT; st++) {
            struct track tr = { rr, all + start[i * ST_COUNT + st], 0 };

            tr.n = (int)(start[i * ST_COUNT + st + 1] - start[i * ST_COUNT + st]);
            if (tr.n == 0)
                continue;
            qsort(tr.rec, (size_t)tr.n, sizeof(*tr.rec), by_start);
            fputs(first_track ? "\n" : ",\n", f);
            first_track = false;
            write_track(f, &tr, st, res);
        }
        fputs("],\n", f);
        write_memory(f, rr, from, to, res);
        fputc('}', f);
    }
    fputs("]}\n", f);
    free(all);
    free(start);
    return ferror(f) ? -1 : 0;
}
