/*
 * cmd_validate.c - `simtrain validate RUNS.csv`: evaluate every row and print
 * or write the comparison (fit/validate.h; the outputs are validate_out.c).
 */
#include <stddef.h>
#include <string.h>

#include "cli/cmd.h"
#include "config/config.h"
#include "fit/validate.h"

/* ---- command line ------------------------------------------------------------------ */

struct validate_args {
    struct cli_list pos; /* the runs file */
    const char *json, *plot;
    const char *overlay; /* --profile-overlay FILE */
    bool markdown, quiet;
};

#define OFF(field) offsetof(struct validate_args, field)

static const struct cli_opt validate_opts[] = {
    { "--json", 0, "FILE", "write the runs format's JSON document (- for standard output)",
      .kind = CLI_STRING, .offset = OFF(json) },
    { "--plot", 0, "DIR", "draw predicted against measured into DIR (gnuplot)", .kind = CLI_STRING,
      .offset = OFF(plot) },
    { "--markdown", 0, NULL, "print Markdown tables", .kind = CLI_FLAG, .offset = OFF(markdown) },
    { "--quiet", 'q', NULL, "print no table (for --json and --plot)", .kind = CLI_FLAG,
      .offset = OFF(quiet) },
    { "--profile-overlay", 0, "FILE",
      "set the host: costs of FILE (the overlay `simtrain calibrate` writes, docs/host.md) on "
      "every row, over its framework profile and set column",
      .kind = CLI_STRING, .offset = OFF(overlay) },
};

const struct cli_command cmd_validate_spec = {
    .name = "validate",
    .synopsis = "simtrain validate RUNS.csv [OPTION]...",
    .about = "Simulates every measured run of RUNS.csv (format: docs/runs-format.md) and\n"
             "compares: one line per row (measured, predicted, signed error or the reason it\n"
             "could not be simulated) and |error| statistics per metric. Exit status 0 when the\n"
             "file could be read, whatever the row errors.\n",
    .opts = validate_opts,
    .nopts = ARRAY_LEN(validate_opts),
    .positional = OFF(pos),
    .max_positional = 1,
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
    struct validate_hooks hooks = { predict_overlaid, NULL, &ov };
    struct validate_report rep;
    enum cli_result pr = cli_parse(&cmd_validate_spec, argc, argv, &a);
    const char *csv;
    int rc = 0;

    if (pr == CLI_OK && a.pos.n == 0)
        pr = cli_usage_error(&cmd_validate_spec, "no runs file given");
    if (pr != CLI_OK) {
        cli_release(&cmd_validate_spec, &a);
        return cli_exit_status(pr);
    }
    csv = a.pos.items[0];
    if (a.overlay && cfg_load_host_overlay(a.overlay, &ov, stderr) != 0) {
        cli_release(&cmd_validate_spec, &a);
        return 1;
    }
    if (validate_file(csv, a.overlay ? &hooks : NULL, &rep, stderr) ||
        cli_check_outputs(&cmd_validate_spec, &a.json, 1, &a.plot, 1) != 0) {
        validate_release(&rep);
        cli_release(&cmd_validate_spec, &a);
        return 1;
    }
    if (!a.quiet && !(a.json && !strcmp(a.json, "-")))
        validate_print(&rep, a.markdown, stdout);
    if (a.json && validate_write_json(&rep, a.json, stderr))
        rc = 1;
    if (a.plot && validate_write_plots(&rep, a.plot, stderr))
        rc = 1;
    validate_release(&rep);
    cli_release(&cmd_validate_spec, &a);
    return rc;
}
