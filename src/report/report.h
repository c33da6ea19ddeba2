/*
 * report.h - outputs of a simulated step: the terminal report (report.c),
 * JSON (json_out.c, the only user of cJSON) and Chrome Trace Event JSON for
 * Perfetto (trace.c). They print what run/metrics.h computed; schemas are
 * documented in docs/json-schema.md and docs/user-guide.md.
 */
#ifndef SIMTRAIN_REPORT_H
#define SIMTRAIN_REPORT_H

#include <stdio.h>

#include "run/run.h"

#ifdef SIMTRAIN_VERSION
#define SIMTRAIN_VERSION_STRING SIMTRAIN_VERSION
#else
#define SIMTRAIN_VERSION_STRING "dev"
#endif

void report_text(FILE *f, const struct run *r);

void report_fmt_time(double seconds, char *buf, size_t n);

/*
 * When a run fits only because the caching allocator's usual reserve was cut to what the GPU
 * had free (run.reserve_short_bytes > 0), a note saying by how much and what it risks;
 * nothing otherwise.
 */
void report_reserve_note(FILE *f, const struct run *r);

/* Write the JSON result to path ("-" = stdout). Returns 0 or -1 (errno set). */
int report_json(const char *path, const struct run *r);

/* The JSON result as report_json() writes it, final newline included (heap; caller frees). */
char *report_json_text(const struct run *r);

/* Write a Chrome trace (Perfetto) of the step. Returns 0 or -1 (errno set). */
int trace_write(const char *path, const struct run *r);

#endif
