/* test_fit.c - GSL least-squares wrappers and fit statistics (fit.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "fit/fit.h"
#include "base/util.h"

struct expdata {
    double t[40], y[40];
    int n;
};

/* Model y = A * exp(-lambda * t) + b; residuals in absolute terms. */
static int exp_resid(const double *p, int np, double *r, int n, void *ctx)
{
    const struct expdata *d = ctx;

    (void)np;
    for (int i = 0; i < n; i++)
        r[i] = p[0] * exp(-p[1] * d->t[i]) + p[2] - d->y[i];
    return 0;
}

static void make_exp(struct expdata *d, double noise)
{
    uint64_t seed = 42;

    d->n = 40;
    for (int i = 0; i < d->n; i++) {
        d->t[i] = i * 0.25;
        d->y[i] = 5.0 * exp(-1.5 * d->t[i]) + 1.0 + noise * (rng_uniform(&seed) - 0.5);
    }
}

/* Noise-free exponential decay: the fit recovers A=5, lambda=1.5, b=1 from a far start. */
static void test_fit_nlls_recovers_parameters(void **state)
{
    struct expdata d;
    struct fit_result res;
    double p[3] = { 1.0, 0.3, 0.0 };

    (void)state;
    make_exp(&d, 0);
    assert_int_equal(fit_nlls(exp_resid, &d, d.n, p, 3, &res), 0);
    assert_true(fabs(p[0] - 5.0) < 1e-6);
    assert_true(fabs(p[1] - 1.5) < 1e-6);
    assert_true(fabs(p[2] - 1.0) < 1e-6);
    assert_true(res.chisq < 1e-12);
    assert_true(res.iterations > 0);
}

/* With noise of +-0.05 the truth lies within 4 reported standard errors of the estimate. */
static void test_fit_nlls_standard_errors_cover_truth(void **state)
{
    struct expdata d;
    struct fit_result res;
    double p[3] = { 1.0, 0.3, 0.0 };
    const double truth[3] = { 5.0, 1.5, 1.0 };

    (void)state;
    make_exp(&d, 0.1);
    assert_int_equal(fit_nlls(exp_resid, &d, d.n, p, 3, &res), 0);
    for (int i = 0; i < 3; i++) {
        assert_true(res.stderr_p[i] > 0);
        assert_true(fabs(p[i] - truth[i]) < 4 * res.stderr_p[i]);
    }
}

static int failing_resid(const double *p, int np, double *r, int n, void *ctx)
{
    (void)p, (void)np, (void)ctx;
    for (int i = 0; i < n; i++)
        r[i] = NAN;
    return 0;
}

/* Too few points, and residuals that are not finite, fail with a message instead of aborting. */
static void test_fit_nlls_errors(void **state)
{
    struct expdata d;
    struct fit_result res;
    double p[3] = { 1, 1, 1 };

    (void)state;
    make_exp(&d, 0);
    assert_int_equal(fit_nlls(exp_resid, &d, 2, p, 3, &res), -1);
    assert_string_equal(res.msg, "need at least 3 points for 3 parameters, have 2");
    assert_int_equal(fit_nlls(failing_resid, &d, d.n, p, 3, &res), -1);
    assert_true(res.msg[0] != '\0');
}

/*
 * Alpha-beta: t = 12 us + S / 400 GB/s over 1 KiB .. 8 GiB, fitted with relative weights,
 * gives back alpha and the bandwidth.
 */
static void test_fit_line_recovers_alpha_beta(void **state)
{
    double x[24], y[24], w[24], a, b;
    int n = 0;

    (void)state;
    for (double s = 1024; s <= 8.0 * 1024 * 1024 * 1024; s *= 2, n++) {
        x[n] = s;
        y[n] = 12e-6 + s / 400e9;
        w[n] = 1 / (y[n] * y[n]);
    }
    assert_int_equal(fit_line(x, y, w, n, &a, &b), 0);
    assert_true(fabs(a - 12e-6) < 1e-12);
    assert_true(fabs(1 / b - 400e9) / 400e9 < 1e-9);
    assert_int_equal(fit_slope(x, y, NULL, n, &b), 0);
    assert_true(fabs(1 / b - 400e9) / 400e9 < 1e-3); /* intercept negligible at 8 GiB */
}

/* A line through points that all share one x is undetermined. */
static void test_fit_line_needs_two_x(void **state)
{
    double x[3] = { 2, 2, 2 }, y[3] = { 1, 2, 3 }, a, b;

    (void)state;
    assert_int_equal(fit_line(x, y, NULL, 3, &a, &b), -1);
    assert_int_equal(fit_line(x, y, NULL, 1, &a, &b), -1);
}

/* R^2 is 1 for perfect predictions, 0 for predicting the mean, negative when worse. */
static void test_fit_r2(void **state)
{
    double obs[4] = { 1, 2, 3, 4 }, mean[4] = { 2.5, 2.5, 2.5, 2.5 }, bad[4] = { 4, 3, 2, 1 };

    (void)state;
    assert_true(fabs(fit_r2(obs, obs, 4) - 1) < 1e-15);
    assert_true(fabs(fit_r2(obs, mean, 4)) < 1e-15);
    assert_true(fit_r2(obs, bad, 4) < 0);
}

/* The worst relative residual and its index; zero observations are skipped. */
static void test_fit_worst_rel(void **state)
{
    double obs[4] = { 10, 0, 5, 20 }, pred[4] = { 11, 3, 4, 21 };
    int worst;

    (void)state;
    assert_true(fabs(fit_worst_rel(obs, pred, 4, &worst) - 0.2) < 1e-12);
    assert_int_equal(worst, 2);
}

/* Type-7 quantiles: 1..10 has median 5.5 and p90 9.1 (numpy.percentile gives the same). */
static void test_fit_quantile(void **state)
{
    double v[10] = { 10, 3, 1, 7, 2, 9, 4, 8, 6, 5 };

    (void)state;
    assert_true(fabs(fit_quantile(v, 10, 0.5) - 5.5) < 1e-12);
    assert_true(fabs(fit_quantile(v, 10, 0.9) - 9.1) < 1e-12);
    assert_true(fabs(fit_quantile(v, 10, 1.0) - 10) < 1e-12);
    assert_true(fabs(fit_quantile(v, 1, 0.9) - 1) < 1e-12);
    assert_true(fabs(fit_quantile(v, 0, 0.5)) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_nlls_recovers_parameters),
        cmocka_unit_test(test_fit_nlls_standard_errors_cover_truth),
        cmocka_unit_test(test_fit_nlls_errors),
        cmocka_unit_test(test_fit_line_recovers_alpha_beta),
        cmocka_unit_test(test_fit_line_needs_two_x),
        cmocka_unit_test(test_fit_r2),
        cmocka_unit_test(test_fit_worst_rel),
        cmocka_unit_test(test_fit_quantile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
