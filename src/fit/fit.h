/*
 * fit.h - least-squares fitting and fit-quality statistics: the only module
 * that includes GSL (STYLE.md, "Layout").
 *
 * fit_nlls() wraps GSL's trust-region nonlinear least squares
 * (gsl_multifit_nlinear, Levenberg-Marquardt, finite-difference Jacobian):
 * the caller supplies residuals r_i(p) and the fit minimises sum r_i^2.
 * Bounds are the caller's business (fit log-parameters for positive ones).
 * fit_line() is a weighted straight-line fit y = a + b*x (gsl_fit_wlinear),
 * used for alpha-beta collective models and launch + bytes/bandwidth.
 *
 * GSL's default error handler aborts the process; every entry point here
 * turns it off and converts GSL statuses into return codes with a message.
 */
#ifndef SIMTRAIN_FIT_H
#define SIMTRAIN_FIT_H

#define FIT_MAX_PARAMS 8

/*
 * Residuals of `npoints` observations at parameters p[0..nparams). Fill
 * resid[0..npoints) and return 0, or return non-zero to signal a domain error
 * (the fit then stops with an error).
 */
typedef int fit_residual_fn(const double *p, int nparams, double *resid, int npoints, void *ctx);

struct fit_result {
    int iterations;                  /* solver iterations used */
    double chisq;                    /* sum of squared residuals at the optimum */
    double stderr_p[FIT_MAX_PARAMS]; /* 1-sigma parameter errors from the covariance, same units */
    char msg[128];                   /* why it failed, or the GSL stop reason */
};

/*
 * Minimise sum of squared residuals over p[0..nparams), starting from the
 * values in p (overwritten with the optimum). Needs npoints >= nparams and
 * nparams <= FIT_MAX_PARAMS. Returns 0 on convergence (including "no further
 * progress possible" at an optimum), -1 with out->msg on failure.
 */
int fit_nlls(fit_residual_fn *f, void *ctx, int npoints, double *p, int nparams,
             struct fit_result *out);

/*
 * fit_nlls() with the finite-difference Jacobian's relative step h (GSL's h_df; 0 = GSL's
 * sqrt(DBL_EPSILON)): residuals that move in steps (a simulator's integer nanoseconds) need
 * a step that moves them.
 */
int fit_nlls_step(fit_residual_fn *f, void *ctx, int npoints, double *p, int nparams, double h,
                  struct fit_result *out);

/*
 * Weighted straight line y = a + b*x over n points (w = NULL: equal weights;
 * weights are 1/variance, e.g. 1/y^2 for relative errors). Returns 0, or -1
 * when fewer than two distinct x values make the slope undetermined.
 */
int fit_line(const double *x, const double *y, const double *w, int n, double *a, double *b);

/* Weighted line through the origin y = b*x (used when a free intercept comes out negative). */
int fit_slope(const double *x, const double *y, const double *w, int n, double *b);

/* Coefficient of determination 1 - SS_res/SS_tot of predictions against observations. */
double fit_r2(const double *obs, const double *pred, int n);

/*
 * Largest |pred/obs - 1| over n points (a fraction); *worst (may be NULL)
 * gets its index. Points with obs == 0 are skipped.
 */
double fit_worst_rel(const double *obs, const double *pred, int n, int *worst);

/*
 * Quantile q in [0, 1] of v[0..n) by linear interpolation between order
 * statistics (Hyndman-Fan type 7, as numpy and R default). Sorts v in place.
 * Returns 0 for n == 0.
 */
double fit_quantile(double *v, int n, double q);

#endif
