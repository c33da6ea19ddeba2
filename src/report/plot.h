/*
 * plot.h - pictures with gnuplot: `--plot DIR` on run, sweep and plan.
 *
 * Each chart is a plain-text data file in DIR (kept, so it can be re-plotted
 * or loaded elsewhere) and a gnuplot script from plots/ run on it, which
 * writes NAME.png and NAME.svg next to the data:
 *
 *   run    breakdown      step time by category per pipeline stage (bars.gp)
 *          memory         peak memory by category per stage, with capacity (bars.gp)
 *          timeline       per-rank Gantt chart of the streams (timeline.gp)
 *          pipeline       the pipeline schedule: forward / backward per
 *                         micro-batch on each stage (pipeline.gp)
 *          memory_timeline  bytes allocated over the step per stage (memory_timeline.gp)
 *   sweep  scaling        throughput and scaling efficiency against GPUs (scaling.gp),
 *                         when an axis changes the GPU count
 *          sweep_breakdown  step time by category per point (bars.gp)
 *          sweep_memory   peak memory by category per point, with capacity (bars.gp)
 *   plan   plan           estimated step time against peak memory of every layout
 *                         that fits, the simulated ones and the winners (plan.gp)
 *          plan_pareto    simulated step time against simulated peak of every simulated
 *                         candidate, the Pareto front marked (pareto.gp)
 *          plan_top       step time by category of the simulated winners (bars.gp)
 *   memory limits         peak against micro-batch and sequence length, with capacity
 *                         (limits.gp; whatif/memory_limits_io.c)
 *
 * Bus bandwidth against size (`simtrain collective --plot`) and predicted
 * against measured (`simtrain validate --plot`) live with their commands.
 *
 * gnuplot is run without a shell (fork + exec), so no file name is ever
 * interpreted; a directory whose name gnuplot cannot quote (', ", \) gets the
 * data files only. Scripts are found under $SIMTRAIN_DATA/plots, else the
 * built-in data directory. A missing gnuplot is a note, not an error: the
 * data files are written either way.
 *
 * Each function returns 0 when everything was written (charts drawn or
 * noted as impossible) and -1 when DIR or a data file cannot be written
 * (message printed to stderr).
 *
 * Files: plot_run.c (run), plot_whatif.c (sweep and plan), plot_chart.c (data
 * files, the gnuplot driver, stacked bars).
 */
#ifndef SIMTRAIN_PLOT_H
#define SIMTRAIN_PLOT_H

#include "run/run.h"

struct sweep;
struct sweep_point;
struct plan_result;

/* The run's pictures; the timeline, pipeline and memory pictures need a run with trace on. */
int plot_run(const char *dir, const struct run *r);

int plot_sweep(const char *dir, const struct sweep *sw, const struct sweep_point *pts, long n);

int plot_plan(const char *dir, const struct plan_result *pr);

#endif
