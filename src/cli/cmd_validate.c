/*
 * cmd_validate.c - `simtrain validate RUNS.csv`: evaluate every row and print
 * or write the comparison (fit/validate.h; the outputs are validate_out.c).
 */
#include <stddef.h>
#include <string.h>

#include "base/par.h"
#include "cli/cmd.h"
#include "fit/validate.h"

/* ---- command line ------------------------------------------------------------------ */

struct validate_args {
    struct cli_list pos; /* the runs file */
    const char *json, *plot;
    bool markdown, quiet;
    int jobs; /* 0: not given (the processors online) */
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
    { "--jobs", 'j', "N",
      "simulate N rows at a time (default: the processors online); the output is the same "
      "for any N",
      .kind = CLI_INT, .offset = OFF(jobs), .min = 1, .max = 1024 },
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

int cmd_validate(int argc, char **argv)
{
    struct validate_args a = { 0 };
    struct validate_report rep;
    struct validate_hooks hooks = { 0 };
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
    hooks.jobs = a.jobs ? a.jobs : par_default_jobs();
    if (validate_file(csv, &hooks, &rep, stderr) ||
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
