/* fit.c - GSL least squares and fit statistics; see fit.h. */
#include "fit/fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#include "base/util.h"

struct adapter {
    fit_residual_fn *f;
    void *ctx;
    int nparams, npoints;
};

static void gsl_quiet(void)
{
    gsl_set_error_handler_off();
}

static int residual_cb(const gsl_vector *x, void *params, gsl_vector *fv)
{
    struct adapter *a = params;
    double p[FIT_MAX_PARAMS];
    double *r = xmalloc((size_t)a->npoints * sizeof(*r));
    int rc;

    for (int i = 0; i < a->nparams; i++)
        p[i] = gsl_vector_get(x, (size_t)i);
    rc = a->f(p, a->nparams, r, a->npoints, a->ctx);
    for (int i = 0; i < a->npoints; i++) {
        if (!isfinite(r[i]))
            rc = -1;
        gsl_vector_set(fv, (size_t)i, r[i]);
    }
    free(r);
    return rc ? GSL_EDOM : GSL_SUCCESS;
}

static void fill_errors(gsl_multifit_nlinear_workspace *w, int n, int p, struct fit_result *out)
{
    gsl_matrix *covar = gsl_matrix_alloc((size_t)p, (size_t)p);
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    double dof = n > p ? n - p : 1;
    double s2 = out->chisq / dof;

    if (gsl_multifit_nlinear_covar(J, 0.0, covar) == GSL_SUCCESS) {
        for (int i = 0; i < p; i++)
            out->stderr_p[i] = sqrt(s2 * fabs(gsl_matrix_get(covar, (size_t)i, (size_t)i)));
    }
    gsl_matrix_free(covar);
}

int fit_nlls(fit_residual_fn *f, void *ctx, int npoints, double *p, int nparams,
             struct fit_result *out)
{
    return fit_nlls_step(f, ctx, npoints, p, nparams, 0, out);
}

int fit_nlls_step(fit_residual_fn *f, void *ctx, int npoints, double *p, int nparams, double h,
                  struct fit_result *out)
{
    struct adapter a = { f, ctx, nparams, npoints };
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    gsl_multifit_nlinear_workspace *w;
    gsl_vector_view x0 = gsl_vector_view_array(p, (size_t)(nparams > 0 ? nparams : 1));
    int status, info = 0;

    gsl_quiet();
    memset(out, 0, sizeof(*out));
    if (nparams < 1 || nparams > FIT_MAX_PARAMS || npoints < nparams) {
        snprintf(out->msg, sizeof(out->msg), "need at least %d points for %d parameters, have %d",
                 nparams, nparams, npoints);
        return -1;
    }
    memset(&fdf, 0, sizeof(fdf));
    fdf.f = residual_cb;
    fdf.df = NULL; /* finite-difference Jacobian */
    fdf.fvv = NULL;
    fdf.n = (size_t)npoints;
    fdf.p = (size_t)nparams;
    fdf.params = &a;
    if (h > 0)
        par.h_df = h;
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, (size_t)npoints,
                                   (size_t)nparams);
    if (!w) {
        snprintf(out->msg, sizeof(out->msg), "gsl: cannot allocate the solver workspace");
        return -1;
    }
    status = gsl_multifit_nlinear_init(&x0.vector, &fdf, w);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 0.0, NULL, NULL, &info, w);
    if (status == GSL_SUCCESS || status == GSL_ENOPROG) {
        gsl_vector *fv = gsl_multifit_nlinear_residual(w);
        gsl_vector *xv = gsl_multifit_nlinear_position(w);

        gsl_blas_ddot(fv, fv, &out->chisq);
        for (int i = 0; i < nparams; i++)
            p[i] = gsl_vector_get(xv, (size_t)i);
        out->iterations = (int)gsl_multifit_nlinear_niter(w);
        fill_errors(w, npoints, nparams, out);
        snprintf(out->msg, sizeof(out->msg), "%s",
                 status == GSL_ENOPROG ? "stopped: no further progress"
                 : info == 1           ? "converged: small step"
                                       : "converged: small gradient");
        gsl_multifit_nlinear_free(w);
        return isfinite(out->chisq) ? 0 : -1;
    }
    snprintf(out->msg, sizeof(out->msg), "gsl: %s", gsl_strerror(status));
    gsl_multifit_nlinear_free(w);
    return -1;
}

static int distinct_x(const double *x, int n)
{
    for (int i = 1; i < n; i++)
        if (fabs(x[i] - x[0]) > 1e-12 * fabs(x[0]))
            return 1;
    return 0;
}

int fit_line(const double *x, const double *y, const double *w, int n, double *a, double *b)
{
    double c00, c01, c11, sumsq;
    int status;

    gsl_quiet();
    if (n < 2 || !distinct_x(x, n))
        return -1;
    if (w)
        status = gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)n, a, b, &c00, &c01, &c11, &sumsq);
    else
        status = gsl_fit_linear(x, 1, y, 1, (size_t)n, a, b, &c00, &c01, &c11, &sumsq);
    return status == GSL_SUCCESS && isfinite(*a) && isfinite(*b) ? 0 : -1;
}

int fit_slope(const double *x, const double *y, const double *w, int n, double *b)
{
    double c11, sumsq;
    int status;

    gsl_quiet();
    if (n < 1)
        return -1;
    if (w)
        status = gsl_fit_wmul(x, 1, w, 1, y, 1, (size_t)n, b, &c11, &sumsq);
    else
        status = gsl_fit_mul(x, 1, y, 1, (size_t)n, b, &c11, &sumsq);
    return status == GSL_SUCCESS && isfinite(*b) ? 0 : -1;
}

double fit_r2(const double *obs, const double *pred, int n)
{
    double mean, ss_res = 0, ss_tot = 0;

    if (n < 1)
        return 0;
    mean = gsl_stats_mean(obs, 1, (size_t)n);
    for (int i = 0; i < n; i++) {
        ss_res += (obs[i] - pred[i]) * (obs[i] - pred[i]);
        ss_tot += (obs[i] - mean) * (obs[i] - mean);
    }
    if (!(ss_tot > 0))
        return ss_res > 0 ? 0 : 1;
    return 1 - ss_res / ss_tot;
}

double fit_worst_rel(const double *obs, const double *pred, int n, int *worst)
{
    double best = 0;

    if (worst)
        *worst = -1;
    for (int i = 0; i < n; i++) {
        double e;

        if (!(fabs(obs[i]) > 0))
            continue;
        e = fabs(pred[i] / obs[i] - 1);
        if (worst && (*worst < 0 || e > best))
            *worst = i;
        if (e > best)
            best = e;
    }
    return best;
}

double fit_quantile(double *v, int n, double q)
{
    if (n < 1)
        return 0;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, q);
}
