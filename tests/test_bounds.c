/*
 * test_bounds.c - every number of every file kind has a bound, checked at its key: the table of
 * cases is generated from the loader's own schema (config/schema.c, schema_scenario.c), not
 * listed by hand, so a key added later is covered the day it is added (issue 25: a hardware
 * file with `memory_bandwidth: 1e-30 TB/s` overflowed a duration sum, `tokens: 1e-300` gave
 * "0 tokens: 1 steps", a bucket of 1e30 B was taken).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/schema.h"

/* The unit word each kind is written with (base/units.c). */
static const char *const unit_word[UNIT_KIND_COUNT] = {
    [UNIT_BYTES] = "B", [UNIT_BANDWIDTH] = "B/s", [UNIT_FLOPS] = "FLOPS", [UNIT_TIME] = "s",
    [UNIT_POWER] = "W", [UNIT_RATE] = "param/s",  [UNIT_COUNT] = "",      [UNIT_FREQ] = "Hz",
};

struct tally {
    int keys;     /* numeric keys checked */
    int failures; /* values accepted that must be refused */
};

/* Is `number` (with f's unit) refused by f's conversion? */
static bool refused(const struct field *f, const char *number)
{
    char text[96];
    struct conv_error e;

    if (f->type == FT_QTY && unit_word[f->unit][0])
        snprintf(text, sizeof(text), "%s %s", number, unit_word[f->unit]);
    else
        snprintf(text, sizeof(text), "%s", number);
    memset(&e, 0, sizeof(e));
    return schema_convert(f, text, strlen(text), YT_PLAIN, NULL, NULL, &e) != 0 && e.msg[0];
}

static void expect_refused(struct tally *t, const char *path, const struct field *f,
                           const char *number, const char *why)
{
    if (refused(f, number))
        return;
    fprintf(stderr, "accepted: %s%s = %s (%s)\n", path, f->key, number, why);
    t->failures++;
}

/*
 * Each numeric key refuses a value beyond any plausible one (1e300), a negative one (one below
 * its minimum where that is negative), a
 * denormal one (1e-310) unless it is a time (a positive time below 1 ns rounds up to 1 ns), and
 * an integer key one beyond 2^30.
 */
static void check_section(struct tally *t, const char *path, const struct section *sec)
{
    for (size_t i = 0; i < sec->nfields; i++) {
        const struct field *f = &sec->fields[i];
        char sub[160];

        if ((f->type == FT_SECTION || f->type == FT_TABLE) && f->sub) {
            snprintf(sub, sizeof(sub), "%s%s.", path, f->key);
            check_section(t, sub, f->sub);
            continue;
        }
        if (f->type != FT_INT && f->type != FT_FLOAT && f->type != FT_QTY)
            continue;
        t->keys++;
        expect_refused(t, path, f, "1e300", "beyond any plausible value");
        if (f->min < 0) {
            char below[32];
            snprintf(below, sizeof(below), "%g", f->min - 1);
            expect_refused(t, path, f, below, "below its minimum");
        } else {
            expect_refused(t, path, f, "-1", "negative");
        }
        if (f->type == FT_INT)
            expect_refused(t, path, f, "2147483648", "beyond 2^30");
        else if (!(f->type == FT_QTY && f->unit == UNIT_TIME))
            expect_refused(t, path, f, "1e-310", "denormal");
    }
}

/* Every number of the scenario, hardware, workload and calibration files: bounded at its key. */
static void test_bounds_every_number(void **state)
{
    struct tally t = { 0, 0 };

    (void)state;
    check_section(&t, "", &schema_scenario);
    check_section(&t, "hardware.", &schema_hardware);
    check_section(&t, "workload.", &schema_workload);
    check_section(&t, "calibration.", &schema_calibration);
    fprintf(stderr, "bounds: %d numeric keys checked\n", t.keys);
    assert_true(t.keys >= 100);
    assert_int_equal(t.failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_every_number),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
