/* units.c - parsing and formatting quantities with units; see units.h. */
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"

#define KIND_BIT(k) (1u << (k))
#define ALL_KINDS   ((1u << UNIT_KIND_COUNT) - 1)
#define IEC_KINDS   (KIND_BIT(UNIT_BYTES) | KIND_BIT(UNIT_BANDWIDTH))
#define SI_KINDS    (ALL_KINDS & ~KIND_BIT(UNIT_TIME))

enum prefix_class {
    PFX_SMALL, /* n u µ m: times only */
    PFX_SI,    /* k M G T P E: powers of 1000 (SI brochure, 9th ed., table 7) */
    PFX_IEC    /* Ki Mi Gi Ti Pi Ei: powers of 1024 (IEC 80000-13) */
};

struct prefix {
    const char *sym;
    double mult;
    enum prefix_class cls;
    unsigned kinds; /* KIND_BIT set of kinds that accept it */
};

static const struct prefix prefixes[] = {
    { "n", 1e-9, PFX_SMALL, KIND_BIT(UNIT_TIME) },
    { "u", 1e-6, PFX_SMALL, KIND_BIT(UNIT_TIME) },
    { "\xc2\xb5", 1e-6, PFX_SMALL, KIND_BIT(UNIT_TIME) }, /* U+00B5 MICRO SIGN */
    { "\xce\xbc", 1e-6, PFX_SMALL, KIND_BIT(UNIT_TIME) }, /* U+03BC GREEK SMALL LETTER MU */
    { "m", 1e-3, PFX_SMALL, KIND_BIT(UNIT_TIME) },
    { "k", 1e3, PFX_SI, SI_KINDS },
    { "M", 1e6, PFX_SI, SI_KINDS },
    { "G", 1e9, PFX_SI, SI_KINDS },
    { "T", 1e12, PFX_SI, SI_KINDS },
    { "P", 1e15, PFX_SI, SI_KINDS },
    { "E", 1e18, PFX_SI, SI_KINDS },
    { "Ki", 1024.0, PFX_IEC, IEC_KINDS },
    { "Mi", 1048576.0, PFX_IEC, IEC_KINDS },
    { "Gi", 1073741824.0, PFX_IEC, IEC_KINDS },
    { "Ti", 1099511627776.0, PFX_IEC, IEC_KINDS },
    { "Pi", 1125899906842624.0, PFX_IEC, IEC_KINDS },
    { "Ei", 1152921504606846976.0, PFX_IEC, IEC_KINDS },
};

struct unit_sym {
    const char *sym;
    double mult; /* to base units */
};

/* Symbols per kind; "b/s" is bits per second, 8 bits to the byte. */
static const struct unit_sym symbols[UNIT_KIND_COUNT][2] = {
    [UNIT_BYTES] = { { "B", 1 } },
    [UNIT_BANDWIDTH] = { { "B/s", 1 }, { "b/s", 0.125 } },
    [UNIT_FLOPS] = { { "FLOPS", 1 }, { "FLOP/s", 1 } },
    [UNIT_TIME] = { { "s", 1 } },
    [UNIT_POWER] = { { "W", 1 } },
    [UNIT_RATE] = { { "param/s", 1 } },
    [UNIT_COUNT] = { { NULL, 0 } },
    [UNIT_FREQ] = { { "Hz", 1 } },
};

const char *units_kind_name(enum unit_kind kind)
{
    static const char *const names[UNIT_KIND_COUNT] = {
        "bytes",   "a bandwidth", "a compute rate", "a time",
        "a power", "a rate",      "a count",        "a frequency",
    };
    return (unsigned)kind < UNIT_KIND_COUNT ? names[kind] : "a quantity";
}

const char *units_example(enum unit_kind kind)
{
    static const char *const ex[UNIT_KIND_COUNT] = {
        "80 GiB", "450 GB/s", "989 TFLOPS", "2.5 us", "700 W", "1.5 Gparam/s", "2T", "1980 MHz",
    };
    return (unsigned)kind < UNIT_KIND_COUNT ? ex[kind] : "1";
}

/* ---- errors ---------------------------------------------------------------- */

static int fail(struct unit_error *err, size_t off, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct unit_error *err, size_t off, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    err->off = off;
    err->len = len ? len : 1;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- prefix and unit matching ------------------------------------------------ */

static const struct prefix *find_prefix(const char *s, size_t n)
{
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
        if (strlen(prefixes[i].sym) == n && memcmp(prefixes[i].sym, s, n) == 0)
            return &prefixes[i];
    return NULL;
}

/* If s[0..n) ends with a symbol of `kind`, return it and the prefix length. */
static const struct unit_sym *match_symbol(enum unit_kind kind, const char *s, size_t n,
                                           size_t *prefix_len)
{
    for (size_t i = 0; i < ARRAY_LEN(symbols[kind]); i++) {
        const struct unit_sym *u = &symbols[kind][i];
        size_t m = u->sym ? strlen(u->sym) : 0;

        if (u->sym && m <= n && memcmp(s + n - m, u->sym, m) == 0) {
            *prefix_len = n - m;
            return u;
        }
    }
    return NULL;
}

/* Is s[0..n) a complete, valid unit (prefix + symbol) of `kind`? */
static bool valid_unit(enum unit_kind kind, const char *s, size_t n)
{
    size_t plen;
    const struct prefix *p;

    if (kind == UNIT_COUNT) {
        p = find_prefix(s, n);
        return n == 0 || (p && (p->kinds & KIND_BIT(kind)));
    }
    if (!match_symbol(kind, s, n, &plen))
        return false;
    if (plen == 0)
        return true;
    p = find_prefix(s, plen);
    return p && (p->kinds & KIND_BIT(kind));
}

/* Every valid unit spelling of a kind (ASCII prefixes only), for suggestions. */
static size_t unit_candidates(enum unit_kind kind, char (*out)[16], const char **ptrs, size_t cap)
{
    size_t n = 0;

    for (size_t s = 0; s < ARRAY_LEN(symbols[kind]); s++) {
        const char *sym = symbols[kind][s].sym;

        if (!sym)
            continue;
        if (n < cap)
            snprintf(out[n++], 16, "%s", sym);
        for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
            if ((prefixes[i].kinds & KIND_BIT(kind)) && (unsigned char)prefixes[i].sym[0] < 0x80 &&
                n < cap)
                snprintf(out[n++], 16, "%s%s", prefixes[i].sym, sym);
    }
    for (size_t i = 0; i < n; i++)
        ptrs[i] = out[i];
    return n;
}

/* The likely intended unit for a misspelt one ("GB" -> "GB/s", "Gbps" -> "Gb/s"). */
static const char *suggest_unit(enum unit_kind kind, const char *word, size_t n, char *buf,
                                size_t cap)
{
    char cands[48][16];
    const char *ptrs[48];
    size_t nc = unit_candidates(kind, cands, ptrs, ARRAY_LEN(cands));
    const char *best;

    if (n + 3 > cap)
        return NULL;
    snprintf(buf, cap, "%.*s/s", (int)n, word);
    if (valid_unit(kind, buf, n + 2))
        return buf;
    if (n > 2 && memcmp(word + n - 2, "ps", 2) == 0) {
        snprintf(buf, cap, "%.*s/s", (int)(n - 2), word);
        if (valid_unit(kind, buf, n))
            return buf;
    }
    if (n > 2 && memcmp(word + n - 2, "/s", 2) == 0 && valid_unit(kind, word, n - 2)) {
        snprintf(buf, cap, "%.*s", (int)(n - 2), word);
        return buf;
    }
    snprintf(buf, cap, "%.*s", (int)n, word);
    best = diag_did_you_mean(buf, ptrs, nc);
    if (!best)
        return NULL;
    snprintf(buf, cap, "%s", best);
    return buf;
}

/* A unit of some other kind ("GB/s" where bytes were expected), or -1. */
static int other_kind(enum unit_kind kind, const char *s, size_t n)
{
    for (int k = 0; k < UNIT_KIND_COUNT; k++)
        if (k != (int)kind && k != UNIT_COUNT && valid_unit((enum unit_kind)k, s, n))
            return k;
    return -1;
}

/* Explain why s[0..n), in front of a valid symbol (or alone for counts), is no prefix. */
static int bad_prefix(enum unit_kind kind, const char *s, size_t off, size_t n,
                      struct unit_error *err)
{
    const struct prefix *p = find_prefix(s + off, n);
    bool iec = (IEC_KINDS & KIND_BIT(kind)) != 0;
    char q[64];

    diag_clip(q, sizeof(q), s + off, n);
    if (n == 1 && s[off] == 'K')
        return fail(err, off, n, "'K' is not a prefix (did you mean 'k'%s?)",
                    iec ? " or 'Ki'" : "");
    if (p && p->cls == PFX_IEC)
        return fail(err, off, n, "binary prefix '%s' cannot be used with %s (did you mean '%c'?)",
                    q, units_kind_name(kind), p->sym[0]);
    if (p && p->cls == PFX_SI)
        return fail(err, off, n, "prefix '%s' cannot be used with %s (use n, u, m or none)", q,
                    units_kind_name(kind));
    if (p && strcmp(p->sym, "m") == 0)
        return fail(err, off, n, "prefix 'm' (milli) cannot be used with %s (did you mean 'M'?)",
                    units_kind_name(kind));
    if (p)
        return fail(err, off, n, "prefix '%s' cannot be used with %s", q, units_kind_name(kind));
    {
        const char *names[ARRAY_LEN(prefixes)];
        size_t nn = 0;
        const char *best;

        for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
            if (prefixes[i].kinds & KIND_BIT(kind))
                names[nn++] = prefixes[i].sym;
        best = diag_did_you_mean(q, names, nn);
        if (best)
            return fail(err, off, n, "unknown prefix '%s' (did you mean '%s'?)", q, best);
        return fail(err, off, n, "unknown prefix '%s' (expected %s)", q,
                    kind == UNIT_TIME ? "n, u, m or none"
                    : iec             ? "k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or none"
                                      : "k, M, G, T, P, E or none");
    }
}

static int bad_unit(enum unit_kind kind, const char *s, size_t off, size_t n,
                    struct unit_error *err)
{
    char q[64], sug[64];
    const char *best;
    int other;

    diag_clip(q, sizeof(q), s + off, n);
    best = suggest_unit(kind, s + off, n, sug, sizeof(sug));
    if (best)
        return fail(err, off, n, "unknown unit '%s' for %s (did you mean '%s'?)", q,
                    units_kind_name(kind), best);
    other = other_kind(kind, s + off, n);
    if (other >= 0)
        return fail(err, off, n, "unit '%s' is %s, not %s (e.g. '%s')", q,
                    units_kind_name((enum unit_kind)other), units_kind_name(kind),
                    units_example(kind));
    return fail(err, off, n, "unknown unit '%s' for %s (e.g. '%s')", q, units_kind_name(kind),
                units_example(kind));
}

/* ---- parsing ------------------------------------------------------------------ */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Scan [sign] digits [. digits] [e [sign] digits]; return its end, or NULL without digits. */
static const char *scan_number(const char *p)
{
    int digits = 0;

    if (*p == '+' || *p == '-')
        p++;
    for (; is_digit(*p); p++)
        digits++;
    if (*p == '.')
        for (p++; is_digit(*p); p++)
            digits++;
    if (!digits)
        return NULL;
    if ((*p == 'e' || *p == 'E') &&
        (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
        p += (p[1] == '+' || p[1] == '-') ? 2 : 1;
        while (is_digit(*p))
            p++;
    }
    return p;
}

int units_number(const char *text, double *out, struct unit_error *err)
{
    size_t len = strlen(text);
    const char *end = scan_number(text);
    char q[64];
    double v;

    diag_clip(q, sizeof(q), text, len);
    if (!end || *end != '\0')
        return fail(err, 0, len, "'%s' is not a number", q);
    v = strtod(text, NULL);
    if (!isfinite(v))
        return fail(err, 0, len, "'%s' is out of range", q);
    *out = v;
    return 0;
}

int units_parse(const char *text, enum unit_kind kind, double *out, struct unit_error *err)
{
    size_t len = strlen(text), b = 0, e = len, num_end, us, ue;
    const char *end;
    char *stop;
    char q[64];
    double v, mult = 1;

    if ((unsigned)kind >= UNIT_KIND_COUNT)
        return fail(err, 0, len, "unknown unit kind");
    while (b < e && is_space(text[b]))
        b++;
    while (e > b && is_space(text[e - 1]))
        e--;
    diag_clip(q, sizeof(q), text + b, e - b);
    if (b == e)
        return fail(err, 0, len, "empty quantity (expected %s, e.g. '%s')", units_kind_name(kind),
                    units_example(kind));
    end = scan_number(text + b);
    if (!end)
        return fail(err, b, e - b, "'%s' does not start with a number (expected %s, e.g. '%s')", q,
                    units_kind_name(kind), units_example(kind));
    num_end = (size_t)(end - text);
    errno = 0;
    v = strtod(text + b, &stop);
    if (stop != end)
        return fail(err, b, e - b, "'%s' is not a number (expected %s, e.g. '%s')", q,
                    units_kind_name(kind), units_example(kind));
    if (!isfinite(v))
        return fail(err, b, e - b, "'%s' is out of range", q);
    us = num_end;
    while (us < e && is_space(text[us]))
        us++;
    ue = e;
    if (us == ue) {
        if (kind != UNIT_COUNT)
            return fail(err, b, e - b, "missing unit in '%s' (expected %s, e.g. '%s')", q,
                        units_kind_name(kind), units_example(kind));
    } else if (kind == UNIT_COUNT) {
        const struct prefix *p = find_prefix(text + us, ue - us);

        if (p && (p->kinds & KIND_BIT(kind)))
            mult = p->mult;
        else if (p || (ue - us == 1 && text[us] == 'K'))
            return bad_prefix(kind, text, us, ue - us, err);
        else if (other_kind(kind, text + us, ue - us) >= 0)
            return bad_unit(kind, text, us, ue - us, err);
        else {
            diag_clip(q, sizeof(q), text + us, ue - us);
            return fail(err, us, ue - us,
                        "unknown suffix '%s' in a count (expected k, M, G, T, P, E or none)", q);
        }
    } else {
        size_t plen;
        const struct unit_sym *u = match_symbol(kind, text + us, ue - us, &plen);
        const struct prefix *p;

        if (!u)
            return bad_unit(kind, text, us, ue - us, err);
        mult = u->mult;
        if (plen) {
            p = find_prefix(text + us, plen);
            if (!p || !(p->kinds & KIND_BIT(kind)))
                return bad_prefix(kind, text, us, plen, err);
            mult *= p->mult;
        }
    }
    v *= mult;
    if (!isfinite(v))
        return fail(err, b, e - b, "'%s' is out of range", q);
    *out = v;
    return 0;
}

/* ---- formatting ----------------------------------------------------------------- */

/* Decimals giving three significant digits for 0 < a < 1000 (1024). */
static int decimals(double a)
{
    return a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
}

static double round_to(double a, int d)
{
    double s = d == 2 ? 100 : d == 1 ? 10 : 1;

    return round(a * s) / s;
}

char *units_format(double v, enum unit_kind kind, char *buf, size_t n)
{
    static const char *const sym[UNIT_KIND_COUNT] = { "B", "B/s",     "FLOP/s", "s",
                                                      "W", "param/s", "",       "Hz" };
    static const char *const si[] = { "", "k", "M", "G", "T", "P", "E" };
    static const char *const iec[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
    static const char *const small[] = { "n", "u", "m", "" };
    const char *unit = (unsigned)kind < UNIT_KIND_COUNT ? sym[kind] : "";
    const char *sep = kind == UNIT_COUNT ? "" : " ";
    const char *pfx = "";
    double a = fabs(v);
    int d;

    if (!n)
        return buf;
    if (!isfinite(v) || !(a > 0)) {
        snprintf(buf, n, "%s%s%s",
                 isnan(v)   ? "nan"
                 : !(a > 0) ? "0"
                 : v < 0    ? "-inf"
                            : "inf",
                 sep, unit);
        return buf;
    }
    if (kind == UNIT_TIME) {
        int i = 3;
        double scaled = a;

        for (i = 3; i > 0 && scaled < 0.9995; i--)
            scaled *= 1000;
        /* Rounding may carry into the next prefix ("999.9 us" -> "1.00 ms"). */
        if (i < 3 && round_to(scaled, decimals(scaled)) >= 1000) {
            scaled /= 1000;
            i++;
        }
        a = scaled;
        pfx = small[i];
    } else if (a < 0.9995) {
        snprintf(buf, n, "%.2e%s%s", v, sep, unit);
        return buf;
    } else {
        double base = kind == UNIT_BYTES ? 1024 : 1000;
        const char *const *names = kind == UNIT_BYTES ? iec : si;
        int i = 0;

        while (i < 6 && (a >= base || round_to(a, decimals(a)) >= base)) {
            a /= base;
            i++;
        }
        pfx = names[i];
    }
    d = decimals(a);
    snprintf(buf, n, "%s%.*f%s%s%s", v < 0 ? "-" : "", d, round_to(a, d), sep, pfx, unit);
    return buf;
}
