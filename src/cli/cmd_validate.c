/*
 * cmd_validate.c - `simtrain validate RUNS.csv`: evaluate every row and print
 * or write the comparison (fit/validate.h; the outputs are validate_out.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/par.h"
#include "cli/cmd.h"
#include "config/config.h"
#include "fit/validate.h"

/* ---- command line ------------------------------------------------------------------ */

struct validate_args {
    struct cli_list pos; /* the runs files */
    const char *json, *plot, *bands;
    const char *overlay; /* --profile-overlay FILE */
    bool markdown, quiet;
    int jobs; /* 0: not given (the processors online) */
};

#define OFF(field) offsetof(struct validate_args, field)

static const struct cli_opt validate_opts[] = {
    { "--json", 0, "FILE", "write the runs format's JSON document (- for standard output)",
      .kind = CLI_STRING, .offset = OFF(json) },
    { "--plot", 0, "DIR", "draw predicted against measured into DIR (gnuplot)", .kind = CLI_STRING,
      .offset = OFF(plot) },
    { "--bands", 0, "FILE",
      "write the table of step-time residuals by regime that every prediction's interval comes "
      "from (report/band.h; shipped as hardware/calibration/error-bands.csv)",
      .kind = CLI_STRING, .offset = OFF(bands) },
    { "--markdown", 0, NULL, "print Markdown tables", .kind = CLI_FLAG, .offset = OFF(markdown) },
    { "--quiet", 'q', NULL, "print no table (for --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
    { "--jobs", 'j', "N",
      "simulate N rows at a time (default: the processors online); the output is the same "
      "for any N",
      .kind = CLI_INT, .offset = OFF(jobs), .min = 1, .max = 1024 },
    { "--profile-overlay", 0, "FILE",
      "set the host: costs of FILE (the overlay `simtrain calibrate` writes, docs/host.md) on "
      "every row, over its framework profile and set column",
      .kind = CLI_STRING, .offset = OFF(overlay) },
};

const struct cli_command cmd_validate_spec = {
    .name = "validate",
    .synopsis = "simtrain validate RUNS.csv [RUNS.csv]... [OPTION]...",
    .about = "Simulates every measured run of RUNS.csv (format: docs/runs-format.md) and\n"
             "compares: one line per row (measured, predicted, signed error or the reason it\n"
             "could not be simulated) and |error| statistics per metric. Exit status 0 when the\n"
             "file could be read, whatever the row errors. Several files: one report each, and\n"
             "--bands builds one table from all of them (--json and --plot take one file).\n"
             "The shipped table: simtrain validate tests/validation/runs.csv\n"
             "tests/validation/runs-vtrain.csv -q --bands hardware/calibration/error-bands.csv\n",
    .opts = validate_opts,
    .nopts = ARRAY_LEN(validate_opts),
    .positional = OFF(pos),
    .max_positional = 16,
    .positional_noun = "runs file",
};

/* The predictor with the overlay's host costs set on the row's scenario. */
static int predict_overlaid(const struct scenario *s, struct prediction *out, char *reason,
                            size_t reason_len, void *ctx)
{
    struct scenario c = *s;
    struct cfg_error err;

    if (cfg_apply_overlay(&c, ctx, &err) != 0) {
        snprintf(reason, reason_len, "profile overlay: %s", err.msg);
        return -1;
    }
    return predict_scenario(&c, out, reason, reason_len);
}

int cmd_validate(int argc, char **argv)
{
    struct validate_args a = { 0 };
    struct cfg_overlay ov;
    struct validate_hooks hooks = { .ctx = &ov };
    struct validate_report *reps;
    enum cli_result pr = cli_parse(&cmd_validate_spec, argc, argv, &a);
    int rc = 0, n = 0;

    if (pr == CLI_OK && a.pos.n == 0)
        pr = cli_usage_error(&cmd_validate_spec, "no runs file given");
    if (pr == CLI_OK && a.pos.n > 1 && (a.json || a.plot))
        pr = cli_usage_error(&cmd_validate_spec, "--json and --plot take one runs file");
    if (pr != CLI_OK) {
        cli_release(&cmd_validate_spec, &a);
        return cli_exit_status(pr);
    }
    if (a.overlay && cfg_load_host_overlay(a.overlay, &ov, stderr) != 0) {
        cli_release(&cmd_validate_spec, &a);
        return 1;
    }
    hooks.predict = a.overlay ? predict_overlaid : NULL;
    hooks.jobs = a.jobs ? a.jobs : par_default_jobs();
    reps = xcalloc((size_t)a.pos.n, sizeof(*reps));
    for (; !rc && n < a.pos.n; n++)
        if (validate_file(a.pos.items[n], &hooks, &reps[n], stderr))
            rc = 1;
    /* after reading: an output may not be one of the inputs (base/files.h) */
    if (!rc && cli_check_outputs(&cmd_validate_spec, (const char *const[]){ a.json, a.bands }, 2,
                                 &a.plot, 1) != 0)
        rc = 1;
    for (int i = 0; !rc && i < n; i++) {
        if (!a.quiet && !(a.json && !strcmp(a.json, "-")))
            validate_print(&reps[i], a.markdown, stdout);
        if (a.json && validate_write_json(&reps[i], a.json, stderr))
            rc = 1;
        if (a.plot && validate_write_plots(&reps[i], a.plot, stderr))
            rc = 1;
    }
    if (!rc && a.bands && validate_write_bands(reps, n, a.bands, stderr))
        rc = 1;
    for (int i = 0; i < n; i++)
        validate_release(&reps[i]);
    free(reps);
    cli_release(&cmd_validate_spec, &a);
    return rc;
}
