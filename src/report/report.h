/*
 * report.h - outputs of a simulated step: the terminal report (report.c),
 * JSON (json_out.c, the only user of cJSON) and Chrome Trace Event JSON for
 * Perfetto (trace.c). Schemas are documented in docs/json-schema.md and
 * docs/user-guide.md.
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

/* Exclusive time breakdown averaged over simulated ranks, seconds per category. */
void report_breakdown(const struct run *r, double out[TC_COUNT]);
void report_fmt_time(double seconds, char *buf, size_t n);

/*
 * When a run fits only because the caching allocator's usual reserve was cut to what the GPU
 * had free (run.reserve_short_bytes > 0), a note saying by how much and what it risks;
 * nothing otherwise.
 */
void report_reserve_note(FILE *f, const struct run *r);

/* Data-parallel traffic per GPU per step, averaged over the simulated ranks (report.c). */
struct report_dp {
    double volume_bytes; /* collective sizes, all-reduce twice (ZeRO §7 counting), bytes */
    double psi_bytes;    /* Ψ: the rank's model replica in 16 bits, bytes */
    double link_bytes;   /* bus bytes over the bottleneck links (NVLink, PCIe or network) */
    double nic_bytes;    /* of which over the network (groups spanning nodes), bytes */
    double exposed_s;    /* exposed data-parallel communication, s */
    double h2d_bytes;    /* offload copies to the GPU, bytes */
    double d2h_bytes;    /* offload copies to the host, bytes */
    double offload_s;    /* exposed offload time (PCIe copies, CPU optimizer), s */
    double collectives;  /* data-parallel collectives */
};
void report_dp_traffic(const struct run *r, struct report_dp *out);

/* Write the JSON result to path ("-" = stdout). Returns 0 or -1 (errno set). */
int report_json(const char *path, const struct run *r);

/* Write a Chrome trace (Perfetto) of the step. Returns 0 or -1 (errno set). */
int trace_write(const char *path, const struct run *r);

#endif
