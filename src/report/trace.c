/*
 * trace.c - Chrome Trace Event Format (the JSON that Perfetto and
 * chrome://tracing open): one process per simulated rank, one thread per
 * stream, a complete ("X") event per task, and the rank's memory by category
 * as a counter ("C") track. Times are microseconds with nanosecond decimals.
 * Only the traced ranks appear (every simulated rank, or those --trace-ranks kept); when
 * some simulated rank is left out, "otherData" says which ranks the trace keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/files.h"
#include "report/report.h"
#include "run/rank_list.h"

static void us(FILE *f, sim_time ns)
{
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static void metadata(FILE *f, const struct run *r, int *first)
{
    int i, st;

    for (i = 0; i < r->sim.nranks; i++) {
        const struct rank_result *rr = &r->sim.ranks[i];
        if (!rr->traced)
            continue;
        fprintf(f,
                "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":"
                "\"rank %d (stage %d)\"}}",
                *first ? "" : ",\n", rr->rank, rr->rank, rr->coords[DIM_PP]);
        *first = 0;
        fprintf(f,
                ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                rr->rank, i);
        for (st = 0; st < ST_COUNT; st++)
            fprintf(f,
                    ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"%s\"}}",
                    rr->rank, st, stream_name(st));
    }
}

static void tasks(FILE *f, const struct run *r)
{
    char name[160];
    size_t i;

    for (i = 0; i < r->sim.ntrace; i++) {
        const struct trace_rec *tr = &r->sim.trace[i];
        const struct rank_result *rr = &r->sim.ranks[tr->rank_idx];
        const struct task *t = &rr->prog->tasks[tr->task];
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", rr->rank, t->stream);
        us(f, tr->t0);
        fputs(",\"dur\":", f);
        us(f, tr->t1 - tr->t0);
        fputs(",\"name\":", f);
        prog_label_text(rr->prog, t->label, name, sizeof(name));
        fput_json_string(f, name);
        fprintf(f, ",\"cat\":\"%s\"", tcat_name(t->tcat));
        if (t->mb >= 0 || t->bytes > 0) {
            fputs(",\"args\":{", f);
            if (t->mb >= 0)
                fprintf(f, "\"microbatch\":%d%s", t->mb, t->bytes > 0 ? "," : "");
            if (t->bytes > 0)
                fprintf(f, "\"bytes\":%.0f", t->bytes);
            fputc('}', f);
        }
        fputc('}', f);
    }
}

static void memory(FILE *f, const struct run *r)
{
    int i, c;
    size_t k;

    for (i = 0; i < r->sim.nranks; i++) {
        const struct rank_result *rr = &r->sim.ranks[i];
        for (k = 0; rr->traced && k < rr->ntl; k++) {
            fprintf(f, ",\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"memory (GiB)\",\"ts\":", rr->rank);
            us(f, rr->tl[k].t);
            fputs(",\"args\":{", f);
            for (c = 0; c < MC_COUNT; c++)
                fprintf(f, "%s\"%s\":%.4f", c ? "," : "", mcat_name(c),
                        (double)rr->tl[k].cur[c] / (1024.0 * 1024.0 * 1024.0));
            fputs("}}", f);
        }
    }
}

/* When some simulated rank is left out: which ranks the trace keeps, of how many. */
static void kept(FILE *f, const struct run *r)
{
    size_t len = 12 * (size_t)r->sim.nranks + 1;
    char *list = xmalloc(len);
    int n = rank_list_traced(&r->sim, list, len);

    if (n < r->sim.nranks)
        fprintf(f,
                ",\"otherData\":{\"trace_ranks\":\"%s\",\"traced_ranks\":%d,"
                "\"simulated_ranks\":%d}",
                list, n, r->sim.nranks);
    free(list);
}

int trace_write(const char *path, const struct run *r)
{
    FILE *f = files_open_output(path);
    int first = 1;

    if (!f)
        return -1;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    metadata(f, r, &first);
    tasks(f, r);
    memory(f, r);
    fputs("\n]", f);
    kept(f, r);
    fputs("}\n", f);
    return files_close_output(f);
}
