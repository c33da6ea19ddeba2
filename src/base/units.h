/*
 * units.h - quantities with units, as the YAML files write them ("989 TFLOPS",
 * "3.35 TB/s", "80 GiB", "400 Gb/s", "2.5 us", "700 W", "1.5 Gparam/s", "2T", "1980 MHz").
 *
 * A quantity is a decimal number, optional spaces, an optional prefix and the
 * unit symbol of its kind. SI prefixes k M G T P E are powers of 1000, IEC
 * prefixes Ki Mi Gi Ti Pi Ei powers of 1024 (IEC 80000-13); IEC prefixes are
 * accepted for bytes and bandwidths only. Times take n u µ m (and no large
 * prefixes). Bandwidth in bits ("b/s") is divided by 8. Values come back in
 * base SI units: bytes, bytes/s, FLOP/s, seconds, watts, params/s, plain
 * counts, hertz. "inf", "nan" and hexadecimal numbers are not quantities.
 *
 * Errors carry a byte range inside the text, so a diagnostic can put its caret
 * under the offending part (the unit, the prefix, the number).
 */
#ifndef SIMTRAIN_UNITS_H
#define SIMTRAIN_UNITS_H

#include <stddef.h>

enum unit_kind {
    UNIT_BYTES,     /* B: "80 GiB" */
    UNIT_BANDWIDTH, /* B/s or b/s: "3.35 TB/s", "400 Gb/s" */
    UNIT_FLOPS,     /* FLOPS or FLOP/s: "989 TFLOPS" */
    UNIT_TIME,      /* s: "2.5 us" */
    UNIT_POWER,     /* W: "700 W" */
    UNIT_RATE,      /* param/s: "1.5 Gparam/s" */
    UNIT_COUNT,     /* no unit, SI prefix allowed: "2T", "15e12" */
    UNIT_FREQ,      /* Hz: "1980 MHz" */
    UNIT_KIND_COUNT
};

struct unit_error {
    size_t off;    /* byte offset of the problem inside the parsed text */
    size_t len;    /* bytes it spans, >= 1 */
    char msg[224]; /* lowercase, no trailing period */
};

/*
 * Parse `text` (NUL-terminated) as a quantity of `kind`. Returns 0 and stores
 * the value in base units in *out, or -1 with *err filled. The sign is kept
 * (range checks are the caller's); an overflowing magnitude ("1e400 GiB") is
 * an error, so *out is always finite on success.
 */
int units_parse(const char *text, enum unit_kind kind, double *out, struct unit_error *err);

/* Parse a plain number without unit or prefix ("8", "-1", "0.85", "1e9"); 0 or -1. */
int units_number(const char *text, double *out, struct unit_error *err);

/*
 * Format `v` (base units) with a prefix chosen to give 1 to 999 (1023 for
 * bytes, which use IEC prefixes) and three significant digits: "80.0 GiB",
 * "3.35 TB/s", "989 TFLOP/s", "2.50 us", "700 W", "2.00T". Times use ns, us,
 * ms or s; other values below one base unit print as "2.50e-01 B/s". The text
 * parses back with units_parse(). Writes at most n bytes including the NUL
 * (truncating); returns buf.
 */
char *units_format(double v, enum unit_kind kind, char *buf, size_t n);

/* The kind as a noun phrase for messages: "bytes", "a bandwidth", "a time"... */
const char *units_kind_name(enum unit_kind kind);

/* An example quantity of the kind, e.g. "80 GiB". */
const char *units_example(enum unit_kind kind);

#endif
