/*
 * totals.h - what a step time means over a whole training run: the time to
 * train `training.tokens`, its GPU-hours, cost and energy, and their short
 * forms for tables. Used by the run report, `sweep` and `plan`.
 */
#ifndef SIMTRAIN_TOTALS_H
#define SIMTRAIN_TOTALS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/scenario.h"

struct train_totals {
    bool have_tokens;    /* training.tokens was given */
    double steps;        /* optimizer steps to consume the tokens */
    double seconds;      /* wall time to train, s */
    double gpu_hours;    /* GPU-hours */
    bool have_price;     /* training.price_per_gpu_hour was given */
    double cost_usd;     /* gpu_hours * price */
    bool have_power;     /* the hardware file gives GPU board power */
    double energy_J;     /* board power * GPUs * seconds, joules */
    double tokens;       /* tokens to train */
    double per_step_usd; /* cost of one step (when priced), USD */
};

/*
 * Time to train `training.tokens` at `step_s` seconds per step of
 * global_batch * seq_len tokens, its GPU-hours, its cost at the given price
 * and its energy at GPU board power. Energy counts the GPUs' rated board power
 * for the whole run: it excludes host CPUs, memory, NICs and switches,
 * cooling (PUE) and restarts, and GPUs that idle below their rating.
 * Fields whose input is missing are left 0 with their have_* flag false.
 */
void train_totals(const struct scenario *s, double step_s, struct train_totals *out);

/* Short forms for tables: "100.6 d" or "5.2 h", "$1.54 M", "432 MWh"; "-" when unknown. */
void totals_fmt_duration(const struct train_totals *t, char *buf, size_t n);
void totals_fmt_cost(const struct train_totals *t, char *buf, size_t n);
void totals_fmt_energy(const struct train_totals *t, char *buf, size_t n);

#endif
