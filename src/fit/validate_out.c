/*
 * validate_out.c - what `simtrain validate` writes (validate.h): one line per
 * row and a summary per metric (text or Markdown), the runs format's JSON
 * document, and predicted-vs-measured charts.
 *
 * The JSON is written by hand (a flat document of numbers and strings), so
 * cJSON stays in json_out.c alone.
 */
#include "fit/validate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "report/plot_chart.h"

/* ---- text and Markdown ---------------------------------------------------------- */

/* `path` relative to the working directory when it lies under it, so that generated documents
 * do not depend on where the repository was cloned. */
static const char *display_path(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);

    if (path && n > 0 && strncmp(path, cwd, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* Each distinct reading of a framework_version (validate_row.reading), once, in row order. */
static void print_readings(const struct validate_report *r, bool markdown, FILE *out)
{
    for (int i = 0; i < r->nrows; i++) {
        bool seen = !r->rows[i].reading;

        for (int k = 0; k < i && !seen; k++)
            seen = r->rows[k].reading == r->rows[i].reading; /* one string per profile */
        if (!seen)
            fprintf(out, markdown ? "- framework_version: %s\n" : "framework_version %s\n",
                    r->rows[i].reading);
    }
}

static void print_hardware(const struct validate_report *r, bool markdown, FILE *out)
{
    char cwd[4096];

    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    for (int i = 0; i < r->nhw; i++) {
        const char *cal = display_path(r->hw[i].calibration, cwd);

        if (markdown && cal)
            fprintf(out, "- hardware `%s`: calibration `%s`\n", r->hw[i].stem, cal);
        else if (markdown)
            fprintf(out, "- hardware `%s`: no calibration file\n", r->hw[i].stem);
        else
            fprintf(out, "hardware %s: %s%s\n", r->hw[i].stem,
                    cal ? "calibration " : "no calibration file", cal ? cal : "");
    }
    print_readings(r, markdown, out);
    fputc('\n', out);
}

static void print_row(const struct validate_row *row, bool markdown, FILE *out)
{
    char meas[32], pred[32], err[560];

    if (isnan(row->measured))
        snprintf(meas, sizeof(meas), "-");
    else
        snprintf(meas, sizeof(meas), "%.6g", row->measured);
    if (row->ok) {
        snprintf(pred, sizeof(pred), "%.6g", row->predicted);
        snprintf(err, sizeof(err), "%+.1f %%", row->error_pct);
    } else {
        snprintf(pred, sizeof(pred), "-");
        snprintf(err, sizeof(err), "error at line %d: %s", row->line, row->reason);
    }
    if (markdown)
        fprintf(out, "| %s | %s | %s | %s | %s |\n", row->id, row->metric_name, meas, pred, err);
    else
        fprintf(out, "%-40s %-22s %12s %12s   %s\n", row->id, row->metric_name, meas, pred, err);
}

static void print_summary(const struct validate_report *r, bool markdown, FILE *out)
{
    if (markdown)
        fputs("| metric | n | errors | median abs error | mean abs error | p90 abs error | max abs "
              "error |\n|---|---:|---:|---:|---:|---:|---:|\n",
              out);
    else
        fprintf(out, "%-22s %5s %7s %10s %10s %10s %10s\n", "metric", "n", "errors", "median|e|",
                "mean|e|", "p90|e|", "max|e|");
    for (int m = 0; m < VM_COUNT; m++) {
        const struct validate_stats *st = &r->stats[m];

        if (!st->n && !st->errors)
            continue;
        if (!st->n && markdown)
            fprintf(out, "| %s | 0 | %d | - | - | - | - |\n",
                    validate_metric_name((enum validate_metric)m), st->errors);
        else if (!st->n)
            fprintf(out, "%-22s     0 %7d %10s %10s %10s %10s\n",
                    validate_metric_name((enum validate_metric)m), st->errors, "-", "-", "-", "-");
        else if (markdown)
            fprintf(out, "| %s | %d | %d | %.1f %% | %.1f %% | %.1f %% | %.1f %% |\n",
                    validate_metric_name((enum validate_metric)m), st->n, st->errors, st->median,
                    st->mean, st->p90, st->max);
        else
            fprintf(out, "%-22s %5d %7d %9.1f%% %9.1f%% %9.1f%% %9.1f%%\n",
                    validate_metric_name((enum validate_metric)m), st->n, st->errors, st->median,
                    st->mean, st->p90, st->max);
    }
}

void validate_print(const struct validate_report *r, bool markdown, FILE *out)
{
    if (!markdown)
        fprintf(out, "%s: %d rows\n", r->path, r->nrows);
    print_hardware(r, markdown, out);
    if (markdown)
        fputs("| id | metric | measured | predicted | error |\n|---|---|---:|---:|---|\n", out);
    else
        fprintf(out, "%-40s %-22s %12s %12s   %s\n", "id", "metric", "measured", "predicted",
                "error");
    for (int i = 0; i < r->nrows; i++)
        print_row(&r->rows[i], markdown, out);
    fputc('\n', out);
    print_summary(r, markdown, out);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

static void json_row(FILE *f, const struct validate_row *row)
{
    fputs("    {\"id\": ", f);
    fput_json_string(f, row->id);
    fprintf(f, ", \"line\": %d, \"metric\": ", row->line);
    fput_json_string(f, row->metric_name);
    if (row->reading) {
        fputs(", \"framework_version_reading\": ", f);
        fput_json_string(f, row->reading);
    }
    fputs(", \"measured\": ", f);
    json_number(f, row->measured);
    if (row->ok) {
        fputs(", \"predicted\": ", f);
        json_number(f, row->predicted);
        fprintf(f, ", \"error_pct\": %.4f, \"status\": \"ok\"}", row->error_pct);
    } else {
        fputs(", \"status\": \"error\", \"reason\": ", f);
        fput_json_string(f, row->reason);
        fputc('}', f);
    }
}

static void json_document(FILE *f, const struct validate_report *r)
{
    bool first = true;

    fputs("{\n  \"file\": ", f);
    fput_json_string(f, r->path);
    fputs(",\n  \"hardware\": {", f);
    for (int i = 0; i < r->nhw; i++) {
        fputs(i ? ", " : "", f);
        fput_json_string(f, r->hw[i].stem);
        fputs(": {\"calibration\": ", f);
        if (r->hw[i].calibration)
            fput_json_string(f, r->hw[i].calibration);
        else
            fputs("null", f);
        fputc('}', f);
    }
    fputs("},\n  \"rows\": [\n", f);
    for (int i = 0; i < r->nrows; i++) {
        json_row(f, &r->rows[i]);
        fputs(i + 1 < r->nrows ? ",\n" : "\n", f);
    }
    fputs("  ],\n  \"summary\": {", f);
    for (int m = 0; m < VM_COUNT; m++) {
        const struct validate_stats *st = &r->stats[m];

        if (!st->n && !st->errors)
            continue;
        fputs(first ? "\n    " : ",\n    ", f);
        first = false;
        fput_json_string(f, validate_metric_name((enum validate_metric)m));
        fprintf(f, ": {\"n\": %d, \"errors\": %d", st->n, st->errors);
        if (st->n)
            fprintf(f,
                    ", \"median_abs_pct\": %.4f, \"mean_abs_pct\": %.4f, \"p90_abs_pct\": %.4f, "
                    "\"max_abs_pct\": %.4f}",
                    st->median, st->mean, st->p90, st->max);
        else
            fputs(", \"median_abs_pct\": null, \"mean_abs_pct\": null, \"p90_abs_pct\": null, "
                  "\"max_abs_pct\": null}",
                  f);
    }
    fputs(first ? "}\n}\n" : "\n  }\n}\n", f);
}

int validate_write_json(const struct validate_report *r, const char *path, FILE *diag)
{
    FILE *f = files_open_output(path);

    if (!f) {
        fprintf(diag, "simtrain validate: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    json_document(f, r);
    if (files_close_output(f) != 0) {
        fprintf(diag, "simtrain validate: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the table of residuals (report/band.h) -------------------------------------------- */

int validate_write_bands(const struct validate_report *reps, int nreps, const char *path,
                         FILE *diag)
{
    FILE *f = files_open_output(path);

    if (!f) {
        fprintf(diag, "simtrain validate: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    band_write_header(f);
    for (int k = 0; k < nreps; k++) {
        const char *set =
            strrchr(reps[k].path, '/') ? strrchr(reps[k].path, '/') + 1 : reps[k].path;

        for (int i = 0; i < reps[k].nrows; i++) {
            const struct validate_row *row = &reps[k].rows[i];

            if (!row->ok || (row->metric != VM_STEP_TIME && row->metric != VM_TOKENS_PER_GPU))
                continue;
            band_write_row(f, set, row->id, &row->regime,
                           row->metric == VM_STEP_TIME ? row->measured / row->predicted
                                                       : row->predicted / row->measured);
        }
    }
    if (files_close_output(f) != 0) {
        fprintf(diag, "simtrain validate: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- plots ------------------------------------------------------------------------ */

static int write_dat(const struct validate_report *r, int metric, FILE *f)
{
    fprintf(f, "# %s: measured predicted error_pct id (simtrain validate %s)\n",
            validate_metric_name((enum validate_metric)metric), r->path);
    for (int i = 0; i < r->nrows; i++) {
        const struct validate_row *row = &r->rows[i];

        if (row->ok && row->metric == metric)
            fprintf(f, "%.10g %.10g %.4f %s\n", row->measured, row->predicted, row->error_pct,
                    row->id);
    }
    return 0;
}

int validate_write_plots(const struct validate_report *r, const char *dir, FILE *diag)
{
    int rc = 0;

    (void)diag; /* the chart helpers report on stderr */
    if (chart_make_dir(dir) != 0)
        return -1;
    for (int m = 0; m < VM_COUNT; m++) {
        const char *metric = validate_metric_name((enum validate_metric)m);
        char *name, *vars;
        FILE *f;

        if (!r->stats[m].n)
            continue;
        name = xasprintf("validation_%s", metric);
        f = chart_open_dat(dir, name);
        if (!f || write_dat(r, m, f) != 0 || chart_close_dat(f, dir, name) != 0) {
            rc = -1;
        } else {
            vars = xasprintf("outfile='%s/%s.svg'; metric='%s'", dir, name, metric);
            chart_draw(dir, name, "validation", vars);
            free(vars);
        }
        free(name);
    }
    return rc;
}
