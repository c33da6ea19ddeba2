/*
 * cmd_calibrate.c - `simtrain calibrate MEASUREMENTS.csv --hardware H`: fit
 * the cost-model parameters (fit/calibrate.h) and write the calibration file,
 * or with --check compare the hardware's current parameters with
 * measurements. The outputs are fit/calibrate_out.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "cli/cmd.h"
#include "config/config.h"
#include "fit/calibrate.h"

/* ---- command line ----------------------------------------------------------- */

static const char *dtype_name_i(int i)
{
    return dtype_name((enum dtype)i);
}

struct calibrate_args {
    struct cli_list pos; /* the measurements */
    const char *csv;     /* pos.items[0], kept after the list is released */
    const char *hardware, *output, *for_name;
    const char *host; /* --host KEYS: fit these host costs to a runs file */
    int holdout;      /* --holdout K */
    int dtype;        /* enum dtype, -1 when not given */
    bool check, markdown, no_collectives;
};

#define OFF(field) offsetof(struct calibrate_args, field)

static const struct cli_opt calibrate_opts[] = {
    { "--hardware", 0, "H", "the hardware the measurements were taken on, by name or path",
      .kind = CLI_STRING, .offset = OFF(hardware) },
    { "--output", 0, "FILE",
      "write the calibration file to FILE (default: standard output, with the fit's summary on "
      "standard error); never over an input of the run, such as H's own calibration",
      .kind = CLI_STRING, .offset = OFF(output) },
    { "--dtype", 0, "DT", "the GEMM dtype whose gemm_max the simulator uses (default bf16)",
      .kind = CLI_CHOICE, .offset = OFF(dtype), .choice_name = dtype_name_i, .nchoices = DT_COUNT },
    { "--for", 0, "NAME", "write the file for hardware NAME with the fractions fitted on H",
      .kind = CLI_STRING, .offset = OFF(for_name) },
    { "--no-collectives", 0, NULL,
      "record the alpha-beta fits under fit: instead of collectives:, leaving the NCCL model",
      .kind = CLI_FLAG, .offset = OFF(no_collectives) },
    { "--check", 0, NULL,
      "fit nothing: compare the hardware's current parameters with every measurement",
      .kind = CLI_FLAG, .offset = OFF(check) },
    { "--markdown", 0, NULL, "print --check's tables as Markdown", .kind = CLI_FLAG,
      .offset = OFF(markdown) },
    { "--host", 0, "KEYS",
      "fit these host costs (comma-separated host.* time keys, e.g. python_op,step) to the "
      "measured steps of a runs file (docs/host.md) and write a host: overlay",
      .kind = CLI_STRING, .offset = OFF(host) },
    { "--holdout", 0, "K",
      "with --host: hold every K-th row out of the fit (rows K-1, 2K-1, ...) and report it apart",
      .kind = CLI_INT, .offset = OFF(holdout), .min = 0, .max = 1000 },
};

const struct cli_command cmd_calibrate_spec = {
    .name = "calibrate",
    .synopsis = "simtrain calibrate MEASUREMENTS.csv --hardware H [OPTION]...\n"
                "simtrain calibrate MEASUREMENTS.csv --hardware H --check [--markdown]",
    .about = "Fits the cost-model parameters of hardware H to kernel measurements (format:\n"
             "src/kernels/README.md): GEMM, attention and memory-bound efficiencies, launch\n"
             "latency and alpha-beta figures per collective, and writes the calibration file to\n"
             "--output or standard output (--for: e.g. A100 40GB from A100 80GB measurements).\n"
             "To regenerate a shipped calibration, write a new file and move it over the old.\n",
    .opts = calibrate_opts,
    .nopts = ARRAY_LEN(calibrate_opts),
    .positional = OFF(pos),
    .max_positional = 1,
    .positional_noun = "measurements file",
};

static int parse_args(int argc, char **argv, struct calibrate_args *a)
{
    enum cli_result pr;

    memset(a, 0, sizeof(*a));
    a->dtype = -1;
    pr = cli_parse(&cmd_calibrate_spec, argc, argv, a);
    if (pr == CLI_OK && a->pos.n > 0 && a->host)
        ; /* a runs file: no hardware, it comes with every row */
    else if (pr == CLI_OK && a->holdout)
        pr = cli_usage_error(&cmd_calibrate_spec, "'--holdout' needs '--host'");
    else if (pr == CLI_OK && (a->pos.n == 0 || !a->hardware))
        pr = cli_usage_error(&cmd_calibrate_spec, "%s",
                             a->pos.n == 0 ? "no measurements file given"
                                           : "'--hardware' is required");
    a->csv = a->pos.n > 0 ? a->pos.items[0] : NULL;
    cli_release(&cmd_calibrate_spec, a);
    return pr;
}

/*
 * Write the calibration file to --output, or to standard output without it. The command
 * recorded in the file (without --output) regenerates it.
 */
static int write_calibration(const struct calibrate_args *a, const struct hardware *hw,
                             const struct meas_set *ms, const struct calib_result *r)
{
    const char *path = a->output ? a->output : "-";
    char *command = xasprintf("simtrain calibrate %s --hardware %s%s%s%s%s%s", a->csv, a->hardware,
                              a->dtype >= 0 ? " --dtype " : "",
                              a->dtype >= 0 ? dtype_name((enum dtype)a->dtype) : "",
                              a->for_name ? " --for " : "", a->for_name ? a->for_name : "",
                              a->no_collectives ? " --no-collectives" : "");
    FILE *f = files_open_output(path);
    int rc = 0;

    if (!f) {
        fprintf(stderr, "simtrain calibrate: error: cannot write '%s': %s\n", path,
                strerror(errno));
        rc = -1;
    } else {
        calib_write_yaml(hw, a->for_name, ms, r, command, f);
        if (files_close_output(f) != 0) {
            fprintf(stderr, "simtrain calibrate: error: cannot write '%s': %s\n", path,
                    strerror(errno));
            rc = -1;
        } else if (f != stdout) {
            printf("wrote %s\n", path);
        }
    }
    free(command);
    return rc;
}

/* calibrate RUNS.csv --host KEYS [--holdout K] [--output FILE] */
static int host_calibrate(const struct calibrate_args *a)
{
    struct host_fit_spec spec = { .path = a->csv, .holdout = a->holdout };
    struct host_fit_result r;
    char *keys = xstrdup(a->host), *next, *command;
    const char *path = a->output ? a->output : "-";
    FILE *f;
    int rc = 0;

    if (a->holdout < 0 || a->holdout == 1) {
        fprintf(stderr, "simtrain calibrate: error: '--holdout' takes 0 or a count >= 2\n");
        free(keys);
        return 1;
    }
    for (char *k = keys; k; k = next) {
        int i;
        next = strchr(k, ',');
        if (next)
            *next++ = 0;
        i = calib_host_key(strncmp(k, "host.", 5) == 0 ? k + 5 : k);
        if (i < 0 || spec.nkeys == HOST_FIT_MAX) {
            fprintf(stderr,
                    "simtrain calibrate: error: '--host': '%s' is not a host cost (kernel_launch, "
                    "autograd_node, python_op, rng_fork, checkpoint_region, collective_enqueue, "
                    "step)\n",
                    k);
            free(keys);
            return 1;
        }
        for (int j = 0; j < spec.nkeys; j++)
            if (spec.keys[j] == i) {
                fprintf(stderr, "simtrain calibrate: error: '--host': '%s' given twice\n", k);
                free(keys);
                return 1;
            }
        spec.start_us[spec.nkeys] = 20;
        spec.keys[spec.nkeys++] = i;
    }
    free(keys);
    if (spec.nkeys == 0) {
        fprintf(stderr, "simtrain calibrate: error: '--host' names no key\n");
        return 1;
    }
    if (calib_host_check_set(&spec, stderr) != 0 || calib_host_fit(&spec, &r, stderr) != 0)
        return 1;
    command = xasprintf("simtrain calibrate %s --host %s%s%d", a->csv, a->host,
                        a->holdout ? " --holdout " : "", a->holdout);
    if (!a->holdout)
        command[strlen(command) - 1] = 0; /* no count */
    f = files_open_output(path);
    if (!f) {
        fprintf(stderr, "simtrain calibrate: error: cannot write '%s': %s\n", path,
                strerror(errno));
        rc = 1;
    } else {
        calib_host_write(&spec, &r, command, f);
        if (files_close_output(f) != 0) {
            fprintf(stderr, "simtrain calibrate: error: cannot write '%s': %s\n", path,
                    strerror(errno));
            rc = 1;
        } else if (f != stdout) {
            calib_host_write(&spec, &r, command, stdout);
        }
    }
    free(command);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    struct calibrate_args a;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    struct hardware *hw;
    struct meas_set ms;
    struct calib_result r;
    enum cli_result pr = parse_args(argc, argv, &a);
    int rc = 0;

    if (pr != CLI_OK)
        return cli_exit_status(pr);
    if (a.host)
        return host_calibrate(&a);
    opt.coll_report_only = a.no_collectives;
    if (a.dtype >= 0)
        opt.gemm_dtype = (enum dtype)a.dtype;
    hw = cfg_load_hardware(a.hardware, stderr);
    if (!hw)
        return 1;
    if (a.for_name) { /* the file is written for a hardware description that must exist */
        struct hardware *target = cfg_load_hardware(a.for_name, stderr);
        if (!target) {
            fprintf(stderr, "simtrain calibrate: error: --for: no hardware '%s' to calibrate\n",
                    a.for_name);
            cfg_free_hw(hw);
            return 1;
        }
        cfg_free_hw(target);
    }
    if (calib_read(a.csv, &ms, stderr) ||
        cli_check_outputs(&cmd_calibrate_spec, &a.output, 1, NULL, 0) != 0) {
        calib_release(&ms);
        cfg_free_hw(hw);
        return 1;
    }
    if (a.check) {
        calib_check(hw, &ms, a.markdown, stdout);
    } else if (calib_fit(hw, &ms, &opt, &r, stderr)) {
        rc = 1;
    } else {
        /* the summary beside the file, or on stderr when the file goes to standard output */
        calib_print_summary(hw, &r, !a.output || !strcmp(a.output, "-") ? stderr : stdout);
        rc = write_calibration(&a, hw, &ms, &r) ? 1 : 0;
        calib_result_release(&r);
    }
    calib_release(&ms);
    cfg_free_hw(hw);
    return rc;
}
