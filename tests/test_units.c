/* test_units.c - quantities with units: parsing, error positions and messages, formatting. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/units.h"
#include "base/util.h"

static double parse_ok(const char *text, enum unit_kind kind)
{
    struct unit_error err;
    double v = -12345;

    if (units_parse(text, kind, &v, &err) != 0)
        fail_msg("'%s' did not parse: %s", text, err.msg);
    return v;
}

static void assert_near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-12 * fabs(want)))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* Expect a parse error with this exact message, pointing at text[off, off+len). */
static void parse_err(const char *text, enum unit_kind kind, const char *msg, size_t off,
                      size_t len)
{
    struct unit_error err;
    double v = 0;

    assert_int_equal(units_parse(text, kind, &v, &err), -1);
    assert_string_equal(err.msg, msg);
    assert_int_equal(err.off, off);
    assert_int_equal(err.len, len);
}

/* 80 GiB is 80 * 2^30 bytes, 141 GB is 141e9 (IEC 80000-13 vs SI); spaces are optional. */
static void test_units_bytes_iec_and_si(void **state)
{
    (void)state;
    assert_near(parse_ok("80 GiB", UNIT_BYTES), 80.0 * 1073741824.0);
    assert_near(parse_ok("80GiB", UNIT_BYTES), 80.0 * 1073741824.0);
    assert_near(parse_ok("141 GB", UNIT_BYTES), 141e9);
    assert_near(parse_ok("25 MiB", UNIT_BYTES), 25.0 * 1048576.0);
    assert_near(parse_ok("2 TiB", UNIT_BYTES), 2.0 * 1099511627776.0);
    assert_near(parse_ok("512 B", UNIT_BYTES), 512);
    assert_near(parse_ok("1.5 kB", UNIT_BYTES), 1500);
}

/* Bandwidth in bits is divided by 8: 400 Gb/s = 50 GB/s; bytes and IEC prefixes also work. */
static void test_units_bandwidth_bits_and_bytes(void **state)
{
    (void)state;
    assert_near(parse_ok("400 Gb/s", UNIT_BANDWIDTH), 50e9);
    assert_near(parse_ok("3.35 TB/s", UNIT_BANDWIDTH), 3.35e12);
    assert_near(parse_ok("900 GB/s", UNIT_BANDWIDTH), 900e9);
    assert_near(parse_ok("1 GiB/s", UNIT_BANDWIDTH), 1073741824.0);
}

/* FLOPS and FLOP/s are the same unit; peaks come in T and P. */
static void test_units_flops_both_spellings(void **state)
{
    (void)state;
    assert_near(parse_ok("989 TFLOPS", UNIT_FLOPS), 989e12);
    assert_near(parse_ok("1.979 PFLOP/s", UNIT_FLOPS), 1.979e15);
    assert_near(parse_ok("67 TFLOP/s", UNIT_FLOPS), 67e12);
}

/* Times take n, u, µ (micro sign), μ (Greek mu) and m; zero is a valid quantity. */
static void test_units_time_prefixes(void **state)
{
    (void)state;
    assert_near(parse_ok("2.5 us", UNIT_TIME), 2.5e-6);
    assert_near(parse_ok("2.5 \xc2\xb5s", UNIT_TIME), 2.5e-6);
    assert_near(parse_ok("2.5 \xce\xbcs", UNIT_TIME), 2.5e-6);
    assert_near(parse_ok("1.2 ms", UNIT_TIME), 1.2e-3);
    assert_near(parse_ok("8 ns", UNIT_TIME), 8e-9);
    assert_near(parse_ok("3 s", UNIT_TIME), 3);
    assert_true(!(fabs(parse_ok("0 s", UNIT_TIME)) > 0) && !signbit(parse_ok("0 s", UNIT_TIME)));
}

/* Power in W, CPU Adam rates in param/s, counts with bare SI prefixes or exponents. */
static void test_units_power_rate_count(void **state)
{
    (void)state;
    assert_near(parse_ok("700 W", UNIT_POWER), 700);
    assert_near(parse_ok("1 kW", UNIT_POWER), 1000);
    assert_near(parse_ok("1980 MHz", UNIT_FREQ), 1.98e9); /* SM clocks (hardware gpu.clock) */
    assert_near(parse_ok("1.755 GHz", UNIT_FREQ), 1.755e9);
    assert_near(parse_ok("1.5 Gparam/s", UNIT_RATE), 1.5e9);
    assert_near(parse_ok("2T", UNIT_COUNT), 2e12);
    assert_near(parse_ok("15e12", UNIT_COUNT), 15e12);
    assert_near(parse_ok("300G", UNIT_COUNT), 300e9);
    assert_near(parse_ok("5e8", UNIT_COUNT), 5e8);
    assert_near(parse_ok("2E", UNIT_COUNT), 2e18); /* exa, not an exponent */
}

/* A bare number where a unit is required names the kind and an example; the caret spans it. */
static void test_units_missing_unit(void **state)
{
    (void)state;
    parse_err("80", UNIT_BYTES, "missing unit in '80' (expected bytes, e.g. '80 GiB')", 0, 2);
    parse_err("450", UNIT_BANDWIDTH,
              "missing unit in '450' (expected a bandwidth, e.g. '450 GB/s')", 0, 3);
}

/* A byte unit where a bandwidth belongs suggests the per-second unit; the caret is on the unit. */
static void test_units_unknown_unit_suggestions(void **state)
{
    (void)state;
    parse_err("900 GB", UNIT_BANDWIDTH, "unknown unit 'GB' for a bandwidth (did you mean 'GB/s'?)",
              4, 2);
    parse_err("400 Gbps", UNIT_BANDWIDTH,
              "unknown unit 'Gbps' for a bandwidth (did you mean 'Gb/s'?)", 4, 4);
    parse_err("80 gib", UNIT_BYTES, "unknown unit 'gib' for bytes (did you mean 'GiB'?)", 3, 3);
    parse_err("989 TFLOP", UNIT_FLOPS,
              "unknown unit 'TFLOP' for a compute rate (did you mean 'TFLOP/s'?)", 4, 5);
}

/* A unit of another kind is named as such. */
static void test_units_wrong_kind(void **state)
{
    (void)state;
    parse_err("2.5 us", UNIT_BYTES, "unit 'us' is a time, not bytes (e.g. '80 GiB')", 4, 2);
    parse_err("5 GB", UNIT_TIME, "unit 'GB' is bytes, not a time (e.g. '2.5 us')", 2, 2);
    parse_err("2 TB", UNIT_COUNT, "unit 'TB' is bytes, not a count (e.g. '2T')", 2, 2);
}

/* Prefix errors point at the prefix: K is not SI, IEC only for bytes, no milli-bytes, no ks. */
static void test_units_bad_prefixes(void **state)
{
    (void)state;
    parse_err("80 KB", UNIT_BYTES, "'K' is not a prefix (did you mean 'k' or 'Ki'?)", 3, 1);
    parse_err("1 KFLOPS", UNIT_FLOPS, "'K' is not a prefix (did you mean 'k'?)", 2, 1);
    parse_err("989 TiFLOPS", UNIT_FLOPS,
              "binary prefix 'Ti' cannot be used with a compute rate (did you mean 'T'?)", 4, 2);
    parse_err("8 mB", UNIT_BYTES,
              "prefix 'm' (milli) cannot be used with bytes (did you mean 'M'?)", 2, 1);
    parse_err("1 ks", UNIT_TIME, "prefix 'k' cannot be used with a time (use n, u, m or none)", 2,
              1);
    parse_err("3 gB", UNIT_BYTES, "unknown prefix 'g' (did you mean 'G'?)", 2, 1);
    parse_err("2X", UNIT_COUNT, "unknown suffix 'X' in a count (expected k, M, G, T, P, E or none)",
              1, 1);
}

/* Overflow, NaN, infinity, hex and empty text are errors, never values. */
static void test_units_rejects_non_numbers(void **state)
{
    (void)state;
    parse_err("1e400 GiB", UNIT_BYTES, "'1e400 GiB' is out of range", 0, 9);
    parse_err("1e300 EB", UNIT_BYTES, "'1e300 EB' is out of range", 0, 8);
    parse_err("inf GiB", UNIT_BYTES,
              "'inf GiB' does not start with a number (expected bytes, e.g. '80 GiB')", 0, 7);
    parse_err("nan", UNIT_COUNT, "'nan' does not start with a number (expected a count, e.g. '2T')",
              0, 3);
    parse_err("0x10 B", UNIT_BYTES, "'0x10 B' is not a number (expected bytes, e.g. '80 GiB')", 0,
              6);
    parse_err("", UNIT_TIME, "empty quantity (expected a time, e.g. '2.5 us')", 0, 1);
    parse_err("GiB", UNIT_BYTES,
              "'GiB' does not start with a number (expected bytes, e.g. '80 GiB')", 0, 3);
}

/* The sign is kept for the caller's range check; -0 stays a zero. */
static void test_units_sign_is_kept(void **state)
{
    (void)state;
    assert_near(parse_ok("-80 GiB", UNIT_BYTES), -80.0 * 1073741824.0);
    assert_true(!(fabs(parse_ok("-0 s", UNIT_TIME)) > 0));
    assert_near(parse_ok("+2 us", UNIT_TIME), 2e-6);
}

/* units_number accepts plain decimal numbers only. */
static void test_units_number_plain_only(void **state)
{
    double v = 0;

    (void)state;
    assert_int_equal(units_number("8", &v, NULL), 0);
    assert_near(v, 8);
    assert_int_equal(units_number("-1", &v, NULL), 0);
    assert_near(v, -1);
    assert_int_equal(units_number("1e9", &v, NULL), 0);
    assert_near(v, 1e9);
    assert_int_equal(units_number("8 GiB", &v, NULL), -1);
    assert_int_equal(units_number("0x10", &v, NULL), -1);
    assert_int_equal(units_number("", &v, NULL), -1);
    assert_int_equal(units_number("1e999", &v, NULL), -1);
}

/* The report formatter prints three significant digits with the best prefix. */
static void test_units_format_examples(void **state)
{
    char b[64];

    (void)state;
    assert_string_equal(units_format(80.0 * 1073741824.0, UNIT_BYTES, b, sizeof(b)), "80.0 GiB");
    assert_string_equal(units_format(3.35e12, UNIT_BANDWIDTH, b, sizeof(b)), "3.35 TB/s");
    assert_string_equal(units_format(989e12, UNIT_FLOPS, b, sizeof(b)), "989 TFLOP/s");
    assert_string_equal(units_format(2.5e-6, UNIT_TIME, b, sizeof(b)), "2.50 us");
    assert_string_equal(units_format(700, UNIT_POWER, b, sizeof(b)), "700 W");
    assert_string_equal(units_format(1.764e9, UNIT_FREQ, b, sizeof(b)), "1.76 GHz");
    assert_string_equal(units_format(1.5e9, UNIT_RATE, b, sizeof(b)), "1.50 Gparam/s");
    assert_string_equal(units_format(2e12, UNIT_COUNT, b, sizeof(b)), "2.00T");
    assert_string_equal(units_format(0, UNIT_BYTES, b, sizeof(b)), "0 B");
    assert_string_equal(units_format(-1.5e-3, UNIT_TIME, b, sizeof(b)), "-1.50 ms");
    /* Rounding carries into the next prefix instead of printing "1000 GB/s". */
    assert_string_equal(units_format(999.96e9, UNIT_BANDWIDTH, b, sizeof(b)), "1.00 TB/s");
    assert_string_equal(units_format(0.99996e-3, UNIT_TIME, b, sizeof(b)), "1.00 ms");
    assert_string_equal(units_format(NAN, UNIT_BYTES, b, sizeof(b)), "nan B");
    /* Below one base unit there is no prefix to use (except for times): scientific notation. */
    assert_string_equal(units_format(0.25, UNIT_BANDWIDTH, b, sizeof(b)), "2.50e-01 B/s");
    /* A short buffer is truncated, never overrun. */
    assert_string_equal(units_format(80.0 * 1073741824.0, UNIT_BYTES, b, 5), "80.0");
}

/* Formatting then parsing returns the value within three significant digits, for every kind. */
static void test_units_format_parse_roundtrip(void **state)
{
    uint64_t rng = 42;
    char b[64];

    (void)state;
    for (int i = 0; i < 2000; i++) {
        enum unit_kind kind = (enum unit_kind)(rng_next(&rng) % UNIT_KIND_COUNT);
        double v = pow(10, -8 + 26 * rng_uniform(&rng));
        struct unit_error err;
        double back;

        if (kind == UNIT_TIME)
            v = pow(10, -9 + 12 * rng_uniform(&rng));
        units_format(v, kind, b, sizeof(b));
        if (units_parse(b, kind, &back, &err) != 0)
            fail_msg("'%s' (from %g) did not parse back: %s", b, v, err.msg);
        if (!(fabs(back - v) <= 0.0051 * v))
            fail_msg("%g -> '%s' -> %g", v, b, back);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_bytes_iec_and_si),
        cmocka_unit_test(test_units_bandwidth_bits_and_bytes),
        cmocka_unit_test(test_units_flops_both_spellings),
        cmocka_unit_test(test_units_time_prefixes),
        cmocka_unit_test(test_units_power_rate_count),
        cmocka_unit_test(test_units_missing_unit),
        cmocka_unit_test(test_units_unknown_unit_suggestions),
        cmocka_unit_test(test_units_wrong_kind),
        cmocka_unit_test(test_units_bad_prefixes),
        cmocka_unit_test(test_units_rejects_non_numbers),
        cmocka_unit_test(test_units_sign_is_kept),
        cmocka_unit_test(test_units_number_plain_only),
        cmocka_unit_test(test_units_format_examples),
        cmocka_unit_test(test_units_format_parse_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
