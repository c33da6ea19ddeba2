/*
 * calibrate_host.c - fit a framework's host (CPU) costs to measured step times (calibrate.h,
 * calib_host_fit()).
 *
 * Every evaluation validates the runs file (validate.h) with a predictor hook that sets the
 * fitted host.* keys of each row's scenario (struct host_cfg) to the trial values before it
 * simulates it; the residual of a row is predicted / measured - 1 (relative, so that a 60 s
 * multi-node step and a 70 ms single-node step weigh alike). GSL's trust-region least squares
 * (fit_nlls_step(), a 2 % finite-difference step: the simulator moves in whole nanoseconds)
 * minimises their squares over the fit rows; the held-out rows (every k-th row with --holdout
 * k) are only predicted. 95 % intervals are 1.96 standard errors of the covariance scaled by
 * the residual variance.
 */
#include "fit/calibrate.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "fit/fit.h"
#include "fit/validate.h"

static const struct host_key {
    const char *name;
    size_t off; /* of its sim_time in struct host_cfg */
} host_keys[] = {
    { "kernel_launch", offsetof(struct host_cfg, kernel_launch) },
    { "autograd_node", offsetof(struct host_cfg, autograd_node) },
    { "python_op", offsetof(struct host_cfg, python_op) },
    { "rng_fork", offsetof(struct host_cfg, rng_fork) },
    { "checkpoint_region", offsetof(struct host_cfg, checkpoint_region) },
    { "collective_enqueue", offsetof(struct host_cfg, collective_enqueue) },
    { "step", offsetof(struct host_cfg, step) },
};

int calib_host_key(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(host_keys); i++)
        if (strcmp(host_keys[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *calib_host_key_name(int k)
{
    return host_keys[k].name;
}

struct eval {
    const struct host_fit_spec *spec;
    const double *us; /* trial values, microseconds, per fitted key */
};

static int predict_with(const struct scenario *s, struct prediction *out, char *reason,
                        size_t reason_len, void *ctx)
{
    const struct eval *e = ctx;
    struct scenario c = *s;

    for (int i = 0; i < e->spec->nkeys; i++) {
        sim_time t = (sim_time)llround(fmax(e->us[i], 0) * 1e3);
        memcpy((char *)&c.host + host_keys[e->spec->keys[i]].off, &t, sizeof(t));
    }
    return predict_scenario(&c, out, reason, reason_len);
}

/* Validate the file at `us`; 0 and the report, or -1. */
static int evaluate(const struct host_fit_spec *spec, const double *us, struct validate_report *rep)
{
    struct eval e = { spec, us };
    struct validate_hooks h = { predict_with, NULL, &e, 0 };

    return validate_file(spec->path, &h, rep, NULL);
}

static bool held_out(const struct host_fit_spec *spec, int row)
{
    return spec->holdout > 1 && row % spec->holdout == spec->holdout - 1;
}

struct fit_ctx {
    const struct host_fit_spec *spec;
    const int *rows; /* the fit rows' indices */
    int n;
};

static int residuals(const double *p, int np, double *r, int n, void *vctx)
{
    const struct fit_ctx *x = vctx;
    struct validate_report rep;

    (void)np;
    if (evaluate(x->spec, p, &rep) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        const struct validate_row *vr = &rep.rows[x->rows[i]];
        r[i] = vr->ok ? vr->predicted / vr->measured - 1 : 0;
    }
    validate_release(&rep);
    return 0;
}

static void stats(const struct validate_report *rep, const struct host_fit_spec *spec, bool out,
                  struct host_fit_part *st)
{
    double *e = xcalloc((size_t)rep->nrows + 1, sizeof(double));
    int n = 0;

    for (int i = 0; i < rep->nrows; i++)
        if (held_out(spec, i) == out && rep->rows[i].ok)
            e[n++] = fabs(rep->rows[i].error_pct);
    st->n = n;
    st->mean = n > 0 ? 0 : NAN;
    for (int i = 0; i < n; i++)
        st->mean += e[i] / n;
    st->median = fit_quantile(e, n, 0.5);
    free(e);
}

int calib_host_fit(const struct host_fit_spec *spec, struct host_fit_result *out, FILE *diag)
{
    struct validate_report rep;
    struct fit_ctx x = { spec, NULL, 0 };
    int rc;

    memset(out, 0, sizeof(*out));
    for (int i = 0; i < spec->nkeys; i++)
        out->us[i] = spec->start_us[i];
    if (evaluate(spec, out->us, &rep) != 0) {
        validate_file(spec->path, NULL, &rep, diag); /* for its diagnostic */
        validate_release(&rep);
        return -1;
    }
    int *rows = xcalloc((size_t)rep.nrows + 1, sizeof(int));
    for (int i = 0; i < rep.nrows; i++)
        if (!held_out(spec, i) && rep.rows[i].ok && rep.rows[i].measured > 0)
            rows[x.n++] = i;
        else if (!rep.rows[i].ok)
            out->skipped++;
    stats(&rep, spec, false, &out->before[0]);
    stats(&rep, spec, true, &out->before[1]);
    validate_release(&rep);
    x.rows = rows;
    rc = fit_nlls_step(residuals, &x, x.n, out->us, spec->nkeys, 0.02, &out->fit);
    free(rows);
    if (rc != 0) {
        fprintf(diag, "simtrain calibrate: error: the host fit failed: %s\n", out->fit.msg);
        return -1;
    }
    for (int i = 0; i < spec->nkeys; i++) {
        out->ci_us[i] = 1.96 * out->fit.stderr_p[i]; /* stderr_p is scaled by chisq / dof */
    }
    out->nfit = x.n;
    if (evaluate(spec, out->us, &rep) != 0)
        return -1;
    stats(&rep, spec, false, &out->after[0]);
    stats(&rep, spec, true, &out->after[1]);
    validate_release(&rep);
    return 0;
}

void calib_host_write(const struct host_fit_spec *spec, const struct host_fit_result *r,
                      const char *command, FILE *f)
{
    fprintf(f, "# Host (CPU) costs fitted by `%s`\n", command);
    fprintf(f, "# to %d measured steps of %s (%s); GSL trust-region least squares on\n", r->nfit,
            spec->path,
            spec->holdout > 1 ? "every row but each held-out one" : "every simulated row");
    fprintf(f, "# predicted / measured - 1, %d iterations (%s). Paste the host: block into a\n",
            r->fit.iterations, r->fit.msg);
    fprintf(f, "# scenario, or pass the file to `simtrain validate --profile-overlay`.\n");
    fprintf(f, "# |error| mean / median, fit rows: %.2f / %.2f %% (before %.2f / %.2f %%)\n",
            r->after[0].mean, r->after[0].median, r->before[0].mean, r->before[0].median);
    if (spec->holdout > 1)
        fprintf(f, "# held-out rows (%d): %.2f / %.2f %% (before %.2f / %.2f %%)\n", r->after[1].n,
                r->after[1].mean, r->after[1].median, r->before[1].mean, r->before[1].median);
    fprintf(f, "host:\n");
    for (int i = 0; i < spec->nkeys; i++)
        fprintf(f, "  %s: %.2f us   # +- %.2f us (95 %%)\n", host_keys[spec->keys[i]].name,
                fmax(r->us[i], 0), r->ci_us[i]);
}

int calib_host_check_set(const struct host_fit_spec *spec, FILE *diag)
{
    struct csv_error err;
    struct csv_table *t = csv_read_file(spec->path, &err);
    int col, bad = 0;

    if (!t) {
        csv_print_error(spec->path, &err, diag);
        return -1;
    }
    col = csv_column(t, "set");
    for (int r = 0; col >= 0 && r < t->nrows; r++) {
        const char *v = csv_field(t, r, col);
        for (int i = 0; v && i < spec->nkeys; i++) {
            char key[64];
            snprintf(key, sizeof(key), "host.%s=", host_keys[spec->keys[i]].name);
            if (strstr(v, key)) {
                fprintf(diag,
                        "%s:%d: error: the set column fixes '%.*s', which the fit would change; "
                        "drop it from the row or from --host\n",
                        spec->path, t->rows[r].line, (int)strlen(key) - 1, key);
                bad = 1;
            }
        }
    }
    csv_free(t);
    return bad ? -1 : 0;
}
