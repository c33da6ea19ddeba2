/*
 * plot_chart.h - what every `--plot` picture shares (plot_run.c and
 * plot_whatif.c; the public entry points are in plot.h): the output directory
 * and its plain-text data files, the gnuplot driver, the category colours and
 * legend text, and stacked-bar charts (plots/bars.gp).
 *
 * gnuplot runs without a shell (fork + exec), so no file name is ever
 * interpreted; a directory whose name gnuplot cannot quote (', ", \) gets the
 * data files only. Scripts are found under $SIMTRAIN_DATA/plots, else the
 * built-in data directory, else ./plots. A missing or failing gnuplot is a
 * note on stderr, not an error: the data files are written either way.
 */
#ifndef SIMTRAIN_PLOT_CHART_H
#define SIMTRAIN_PLOT_CHART_H

#include <stdbool.h>
#include <stdio.h>

#include "prog/prog.h"

#define CHART_GIB (1024.0 * 1024.0 * 1024.0) /* bytes per GiB, the unit of memory charts */

/* One colour per category, the same in every chart (Paul Tol's qualitative set). */
extern const char *const chart_tcat_color[TC_COUNT];
extern const char *const chart_mcat_color[MC_COUNT];
/* Legend text of the time categories ("forward", "TP comm", ...). */
extern const char *const chart_tcat_label[TC_COUNT];

/* Create DIR unless it exists; its parent must exist. Returns 0, or -1 with a message on stderr. */
int chart_make_dir(const char *dir);

/*
 * Open DIR/NAME.dat for writing; NULL with a message on stderr. Close it with
 * chart_close_dat(), which returns 0, or -1 with a message when the data did
 * not reach the disk.
 */
FILE *chart_open_dat(const char *dir, const char *name);
int chart_close_dat(FILE *f, const char *dir, const char *name);

/* A copy of s (NULL reads as "") safe inside gnuplot single quotes; the caller frees it. */
char *chart_safe_title(const char *s);

/*
 * Run `gnuplot -e "datafile='DIR/NAME.dat'; outbase='DIR/NAME'; VARS"
 * plots/SCRIPT.gp`, which writes DIR/NAME.png and .svg. Prints what was
 * written, or why not, to stderr.
 */
void chart_draw(const char *dir, const char *name, const char *script, const char *vars);

/* Time unit for a span: seconds from 2 s, else milliseconds; returns units per second. */
double chart_time_scale(double span_s, const char **unit);

/* A stacked-bar chart: what the caller says about it; the columns come from the data. */
struct chart_bars {
    const char *dir, *name, *title, *ylabel;
    double hline;       /* horizontal reference (capacity) in plot units, < 0 none */
    double ymax;        /* top of the y axis, 0 = automatic */
    int lines;          /* lines in a bar label (0 = 1) */
    const char *xlabel; /* under the bars, or NULL */
};

/* The bars' data: nrows labelled rows of ncat category values in plot units. */
struct chart_rows {
    int nrows, ncat;         /* rows added, categories per row */
    char **label;            /* bar labels (gnuplot "\\n" breaks lines), owned */
    double *v;               /* v[row * ncat + category] */
    size_t cap_label, cap_v; /* allocated elements */
};

/* No rows yet, ncat categories each; release with chart_rows_release(). */
void chart_rows_init(struct chart_rows *r, int ncat);
void chart_rows_release(struct chart_rows *r);

/* Append a row labelled with a copy of `label`, values zeroed: returns its index. */
int chart_rows_add(struct chart_rows *r, const char *label);

/*
 * Write DIR/NAME.dat with the categories that have a nonzero value in some
 * row (header: their cat_name), then draw it with bars.gp in their cat_color
 * unless there are no rows. Returns 0, or -1 when the file cannot be written.
 */
int chart_bars(const struct chart_bars *b, const struct chart_rows *r, const char *const *cat_name,
               const char *const *cat_color);

#endif
