/* test_schedule.c - pipeline schedules: completeness, causality, in-flight micro-batches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "strategy/strategy.h"

#define MAXSTEPS 4096

/* Highest number of (mb, chunk) forwards whose backward has not started, on one stage. */
static int max_in_flight(const struct pp_step *st, int n)
{
    int live = 0, peak = 0, i;

    for (i = 0; i < n; i++) {
        if (st[i].kind == STEP_F)
            live++;
        else if (st[i].kind == STEP_B || st[i].kind == STEP_W)
            live--;
        if (live > peak)
            peak = live;
    }
    return peak;
}

/* Every (mb, chunk) is run forward once and backward once, forward first. */
static void check_complete(const struct pp_step *st, int n, int m, int v, int split)
{
    char *f = calloc((size_t)(m * v), 1), *b = calloc((size_t)(m * v), 1);
    char *w = calloc((size_t)(m * v), 1);
    int i;

    for (i = 0; i < n; i++) {
        int id = st[i].mb * v + st[i].chunk;
        assert_true(st[i].mb >= 0 && st[i].mb < m && st[i].chunk >= 0 && st[i].chunk < v);
        if (st[i].kind == STEP_F) {
            assert_false(f[id]);
            f[id] = 1;
        } else if (st[i].kind == STEP_W) {
            assert_true(b[id]);
            assert_false(w[id]);
            w[id] = 1;
        } else {
            assert_true(f[id]);
            assert_false(b[id]);
            b[id] = 1;
        }
    }
    for (i = 0; i < m * v; i++) {
        assert_true(f[i] && b[i]);
        if (split)
            assert_true(w[i]);
    }
    free(f);
    free(b);
    free(w);
}

/* GPipe, 1F1B and interleaved 1F1B run every micro-batch chunk once each way. */
static void test_schedules_complete_and_causal(void **state)
{
    struct pp_step st[MAXSTEPS];
    int p, stage, m, n;

    (void)state;
    for (p = 1; p <= 8; p *= 2)
        for (stage = 0; stage < p; stage++)
            for (m = p; m <= 4 * p; m += p) {
                n = schedule_steps(SCHED_GPIPE, p, stage, m, 1, st, MAXSTEPS);
                check_complete(st, n, m, 1, 0);
                n = schedule_steps(SCHED_1F1B, p, stage, m, 1, st, MAXSTEPS);
                check_complete(st, n, m, 1, 0);
                n = schedule_steps(SCHED_INTERLEAVED, p, stage, m, 3, st, MAXSTEPS);
                check_complete(st, n, m, 3, 0);
                n = schedule_steps(SCHED_ZB_H1, p, stage, m, 1, st, MAXSTEPS);
                check_complete(st, n, m, 1, 1);
            }
}

/* 1F1B keeps at most p - stage micro-batches in flight (KOR22 §4.2.3: p on stage 0). */
static void test_1f1b_in_flight_bound(void **state)
{
    struct pp_step st[MAXSTEPS];
    int p = 8, m = 32, stage, n;

    (void)state;
    for (stage = 0; stage < p; stage++) {
        n = schedule_steps(SCHED_1F1B, p, stage, m, 1, st, MAXSTEPS);
        assert_int_equal(max_in_flight(st, n), p - stage);
    }
    /* GPipe holds every micro-batch. */
    n = schedule_steps(SCHED_GPIPE, p, 0, m, 1, st, MAXSTEPS);
    assert_int_equal(max_in_flight(st, n), m);
}

/*
 * Interleaved: stage 0 holds (p - 1) * 2 + (v - 1) * p + 1 chunk-forwards in flight, i.e.
 * p * v * (1 + (p - 1) / (p * v)) chunk activations (KOR22 §4.2.3 eq. 5 in units of chunks).
 */
static void test_interleaved_in_flight(void **state)
{
    struct pp_step st[MAXSTEPS];
    int p = 4, v = 3, m = 16, n;

    (void)state;
    n = schedule_steps(SCHED_INTERLEAVED, p, 0, m, v, st, MAXSTEPS);
    assert_int_equal(max_in_flight(st, n), (p - 1) * 2 + (v - 1) * p + 1);
    assert_int_equal(max_in_flight(st, n), p * v + p - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedules_complete_and_causal),
        cmocka_unit_test(test_1f1b_in_flight_bound),
        cmocka_unit_test(test_interleaved_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
