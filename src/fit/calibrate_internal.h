/*
 * calibrate_internal.h - what the files of `simtrain calibrate` share beyond
 * calibrate.h (private to src/fit/): row selection, fit quality, the GEMM fit
 * (calibrate_gemm.c) and its time model.
 */
#ifndef SIMTRAIN_CALIBRATE_INTERNAL_H
#define SIMTRAIN_CALIBRATE_INTERNAL_H

#include "fit/calibrate.h"

/* The rows of ms that `want` accepts, as a heap array the caller frees; returns their count. */
int calib_collect(const struct meas_set *ms, bool (*want)(const struct measurement *),
                  const struct measurement ***out);

/* R^2 of rates and the worst |rate_meas / rate_pred - 1| of n rows into *q. */
void calib_quality_of(const struct measurement *const *rows, const double *pred_rate, int n,
                      struct calib_quality *q);

bool calib_is_gemm(const struct measurement *m);

/*
 * Time of GEMM row m with efficiency gmax (every dtype), latency lat_s (seconds,
 * replacing eff's) and the SM clock clock_Hz (0: the hardware's sustained clock),
 * through the simulator's cost_gemm_seconds(). Seconds.
 */
double calib_gemm_seconds(const struct hardware *hw, const struct efficiency *eff, double lat_s,
                          double gmax, double clock_Hz, const struct measurement *m);

/* The GEMM fit (calibrate_gemm.c): fills r's GEMM fields; -1 when rows exist but cannot be fitted.
 */
int calib_fit_gemm(const struct hardware *hw, const struct meas_set *ms,
                   const struct calib_options *opt, struct calib_result *r, FILE *log);

#endif
