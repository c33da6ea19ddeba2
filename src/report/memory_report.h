/*
 * memory_report.h - the text of `simtrain memory` before its what-if table:
 * what is simulated, the memory per GPU at the simulated peak by category
 * (the engine's tracker: every byte attributed, the categories sum to the
 * peak) with how each category is counted, the verdict against the GPU's
 * capacity with the headroom, the step time by part and, for a data-parallel
 * run or when asked, the model states per GPU under each ZeRO stage (ZeRO's
 * Figure 1, ZERO §5).
 */
#ifndef SIMTRAIN_MEMORY_REPORT_H
#define SIMTRAIN_MEMORY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "run/run.h"

/*
 * Print the report of run r to f. `psi` is the parameter count of the ZeRO
 * stage table (0: the model's; the table is printed when psi > 0 or the run
 * is data-parallel).
 */
void memory_report_print(FILE *f, const struct run *r, double psi);

/* Bytes of offloaded states (optimizer, parameters) each GPU keeps in host RAM; 0 if none. */
double memory_report_host_bytes(const struct scenario *s);

/*
 * Do the states the scenario offloads (optimizer, parameters) fit its host RAM per GPU
 * (node.host.memory over the node's GPUs)? True when nothing is offloaded.
 */
bool memory_report_host_fits(const struct scenario *s);

/*
 * The peak of run r by model module: the activations and logits each module saved (the
 * engine's attribution of the builders' marks, kinds.h enum mem_module), and the categories no
 * module owns; with what one layer saves per module for one micro-batch (the embedding's and
 * the head's per micro-batch), to read the held bytes as layer passes.
 */
struct memory_modules {
    bool complete;              /* every mark attributed (else the view is left out) */
    double bytes[MM_COUNT];     /* at the peak, by module */
    double per_layer[MM_COUNT]; /* one layer (embedding, head: one micro-batch) saves */
    double states;              /* parameters, master weights, gradients, optimizer states */
    double gathered;            /* unsharded parameters in use */
    double buffers;             /* communication buffers, workspace, context */
    double reserve;             /* caching-allocator reserve */
};
void memory_report_modules(const struct run *r, struct memory_modules *out);

/* "12.3 GiB", or "512 MiB" below 0.1 GiB: the unit of every memory figure of the report. */
void memory_report_fmt_bytes(double bytes, char *buf, size_t n);

#endif
