/*
 * extract.c - move a YAML tree into config.h structs through the schema
 * tables (schema.c): unknown keys, types, units, ranges, required keys
 * and defaults are all handled here, once, for every file kind.
 */
#include "config/schema.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Bytes of s[0..n) before any NUL. */
static size_t text_len(const char *s, size_t n)
{
    const char *z = memchr(s, '\0', n);

    return z ? (size_t)(z - s) : n;
}

void schema_error(struct schema_ctx *c, struct diag_mark m, const char *fmt, ...)
{
    va_list ap;

    c->errors++;
    if (c->msg && c->errors == 1) {
        va_start(ap, fmt);
        vsnprintf(c->msg, c->msglen, fmt, ap);
        va_end(ap);
    }
    if (!c->diag || c->errors > SCHEMA_MAX_ERRORS)
        return;
    va_start(ap, fmt);
    diag_vprint(c->diag, m, "error", fmt, ap);
    va_end(ap);
    if (c->errors == SCHEMA_MAX_ERRORS)
        fprintf(c->diag, "note: too many errors; the rest are not shown\n");
}

static int cfail(struct conv_error *e, size_t off, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int cfail(struct conv_error *e, size_t off, size_t len, const char *fmt, ...)
{
    va_list ap;

    e->off = off;
    e->len = len ? len : 1;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* "one of: a, b, c" for an enumeration table. */
static void join_names(char *buf, size_t n, const struct enum_name *names)
{
    size_t used = 0;

    buf[0] = '\0';
    for (const struct enum_name *e = names; e->name && used < n; e++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", e == names ? "" : ", ", e->name);
}

/* What a field expects, for messages: "an integer", "bytes, e.g. '80 GiB'"... */
static const char *expected(const struct field *f, char *buf, size_t n)
{
    char list[200];

    switch (f->type) {
    case FT_INT:
        return "an integer";
    case FT_FLOAT:
        return "a number";
    case FT_QTY:
        snprintf(buf, n, "%s, e.g. '%s'", units_kind_name(f->unit), units_example(f->unit));
        return buf;
    case FT_BOOL:
        return "true or false";
    case FT_ENUM:
        join_names(list, sizeof(list), f->names);
        snprintf(buf, n, "one of: %s", list);
        return buf;
    case FT_FLAGS:
        join_names(list, sizeof(list), f->names);
        snprintf(buf, n, "a list of: %s", list);
        return buf;
    case FT_STR:
        return "text";
    case FT_ORDER:
        return "a placement like 'tp-cp-ep-dp-pp'";
    case FT_SECTION:
        return "a mapping";
    case FT_TABLE:
        return "a list of mappings";
    case FT_REF:
        return "a name, a path ending in .yaml, or a mapping";
    default:
        return "a value";
    }
}

static void store_int(char *p, size_t size, long long v)
{
    if (size == sizeof(bool)) {
        bool b = v != 0;
        memcpy(p, &b, sizeof(b));
    } else if (size == sizeof(int)) {
        int i = (int)v;
        memcpy(p, &i, sizeof(i));
    } else {
        assert(size == sizeof(int64_t));
        int64_t i = v;
        memcpy(p, &i, sizeof(i));
    }
}

static const struct enum_name *find_name(const struct enum_name *names, const char *s)
{
    for (const struct enum_name *e = names; e->name; e++)
        if (strcmp(e->name, s) == 0)
            return e;
    return NULL;
}

static int bad_name(const struct field *f, const char *text, size_t len, struct conv_error *e)
{
    const char *cands[16];
    size_t n = 0;
    const char *best;
    char q[64], list[200];

    for (const struct enum_name *x = f->names; x->name && n < ARRAY_LEN(cands); x++)
        cands[n++] = x->name;
    diag_clip(q, sizeof(q), text, len);
    best = diag_did_you_mean(text, cands, n);
    if (best)
        return cfail(e, 0, len, "unknown value '%s' for '%s' (did you mean '%s'?)", q, f->key,
                     best);
    join_names(list, sizeof(list), f->names);
    return cfail(e, 0, len, "unknown value '%s' for '%s' (expected one of: %s)", q, f->key, list);
}

/*
 * What a quantity of each unit can plausibly be, where its key sets no bound of its own: a
 * positive value below the floor or above the ceiling is a mistake of unit or exponent
 * (1e-30 TB/s, a 1e-9 Hz clock), refused at its key before it can saturate a duration.
 * Floors: 1 B, 1 MB/s (below any link, PCIe x1 or 1 GbE by 100x), 1 GFLOP/s (a CPU core), 1 MHz,
 * 1 W, 1 kparam/s, one count. Ceilings: 2^58 B (SIM_MEM_LIMIT), 1 EB/s, 1 EFLOP/s per GPU,
 * 100 GHz, 1 MW, 1e16 param/s, 1e30 counts (tokens have their own, config/limits.c),
 * 1e6 s (SIM_STEP_LIMIT). Plain numbers: a
 * fraction of a peak (max 1) is at least 1 % (an efficiency below it is a typo), any other
 * positive number from 1e-6 to 1e6.
 */
static const double unit_range[UNIT_KIND_COUNT][2] = {
    [UNIT_BYTES] = { 1, 288230376151711744.0 },
    [UNIT_BANDWIDTH] = { 1e6, 1e18 },
    [UNIT_FLOPS] = { 1e9, 1e18 },
    [UNIT_TIME] = { 0, 1e6 },
    [UNIT_POWER] = { 1, 1e6 },
    [UNIT_RATE] = { 1e3, 1e16 },
    [UNIT_COUNT] = { 1, 1e30 },
    [UNIT_FREQ] = { 1e6, 1e11 },
};

/* The plausible [lo, hi] of a positive value of f (0: none), beyond its own bounds. */
static void plausible(const struct field *f, double *lo, double *hi)
{
    *lo = 0;
    *hi = 0;
    if (f->type == FT_QTY && (int)f->unit >= 0 && f->unit < UNIT_KIND_COUNT) {
        *lo = unit_range[f->unit][0];
        *hi = unit_range[f->unit][1];
    } else if (f->type == FT_FLOAT) {
        bool fraction = !(f->min > 0) && !(f->max < 1) && !(f->max > 1) && !(f->flags & F_ZERO_OK);
        *lo = fraction ? 0.01 : 1e-6;
        *hi = 1e6;
    }
}

/* Bounds: ints use [min, max]; numbers and quantities must be > 0 unless F_ZERO_OK or min > 0. */
static int check_range(const struct field *f, double v, const char *q, struct conv_error *e,
                       size_t len)
{
    double hi = f->max > 0                                  ? f->max
                : f->type == FT_QTY && f->unit == UNIT_TIME ? 1e6
                : f->type == FT_INT                         ? INT32_MAX
                                                            : 1e30;
    bool int_like = f->type == FT_INT;
    double lo = int_like || f->min > 0 || (f->flags & F_ZERO_OK) ? f->min : 0;
    bool strict = !int_like && !(f->min > 0) && !(f->flags & F_ZERO_OK);
    double plo, phi;
    char b[48];

    if (strict ? !(v > lo) : v < lo) {
        if (strict || (int_like && lo > 0 && lo < 1.5))
            return cfail(e, 0, len, "'%s' must be positive, got '%s'", f->key, q);
        if (!(lo < 0) && !(lo > 0))
            return cfail(e, 0, len, "'%s' must not be negative, got '%s'", f->key, q);
        return cfail(e, 0, len, "'%s' must be at least %g, got '%s'", f->key, lo, q);
    }
    plausible(f, &plo, &phi);
    if (phi > 0 && phi < hi && !(f->max > 0))
        hi = phi;
    if (v > 0 && v < plo && plo > lo) {
        if (f->type == FT_QTY)
            units_format(plo, f->unit, b, sizeof(b));
        else
            snprintf(b, sizeof(b), "%g", plo);
        return cfail(e, 0, len, "'%s' must be at least %s, got '%s'", f->key, b, q);
    }
    if (v > hi) {
        if (f->type == FT_QTY)
            units_format(hi, f->unit, b, sizeof(b));
        else
            snprintf(b, sizeof(b), "%.15g", hi);
        return cfail(e, 0, len, "'%s' must be at most %s, got '%s'", f->key, b, q);
    }
    return 0;
}

static int convert_order(const struct field *f, const char *text, size_t len, char *p,
                         struct conv_error *e)
{
    static const char *const dims[DIM_COUNT] = { "tp", "cp", "ep", "dp", "pp" };
    int order[DIM_COUNT];
    unsigned seen = 0;
    size_t i = 0;
    int n = 0;

    while (i <= len) {
        size_t j = i, d;
        char q[64];

        while (j < len && text[j] != '-')
            j++;
        for (d = 0; d < DIM_COUNT; d++)
            if (j - i == 2 && memcmp(text + i, dims[d], 2) == 0)
                break;
        diag_clip(q, sizeof(q), text + i, j - i);
        if (d == DIM_COUNT)
            return cfail(e, i, j - i,
                         "unknown dimension '%s' in '%s' (expected tp, cp, ep, dp, pp)", q, f->key);
        if (seen & (1u << d))
            return cfail(e, i, j - i, "dimension '%s' appears twice in '%s'", q, f->key);
        seen |= 1u << d;
        order[n++] = (int)d;
        i = j + 1;
    }
    for (int d = 0; d < DIM_COUNT; d++)
        if (!(seen & (1u << d)))
            return cfail(e, 0, len, "'%s' must name each of tp, cp, ep, dp and pp (missing '%s')",
                         f->key, dims[d]);
    if (p)
        memcpy(p, order, sizeof(order));
    return 0;
}

static int convert_number(const struct field *f, const char *text, size_t len, enum yt_style style,
                          char *p, struct conv_error *e)
{
    char q[64], what[256];
    double v;

    diag_clip(q, sizeof(q), text, len);
    if (style != YT_PLAIN)
        return cfail(e, 0, len, "expected %s for '%s', got a quoted string",
                     expected(f, what, sizeof(what)), f->key);
    if (units_number(text, &v, NULL))
        return cfail(e, 0, len, "expected %s for '%s', got '%s'", expected(f, what, sizeof(what)),
                     f->key, q);
    if (f->type == FT_INT && v - floor(v) > 0)
        return cfail(e, 0, len, "'%s' must be a whole number, got '%s'", f->key, q);
    if (check_range(f, v, q, e, len))
        return -1;
    if (!p)
        return 0;
    if (f->type == FT_INT)
        store_int(p, f->size, (long long)v);
    else {
        v += 0.0; /* -0 -> +0 */
        memcpy(p, &v, sizeof(v));
    }
    return 0;
}

static int convert_quantity(const struct field *f, const char *text, size_t len, char *p,
                            struct conv_error *e)
{
    struct unit_error ue;
    char q[64];
    double v;

    if (units_parse(text, f->unit, &v, &ue)) {
        snprintf(e->msg, sizeof(e->msg), "%s", ue.msg);
        e->off = ue.off;
        e->len = ue.len;
        return -1;
    }
    diag_clip(q, sizeof(q), text, len);
    if (check_range(f, v, q, e, len))
        return -1;
    v += 0.0;
    if (!p)
        return 0;
    if (f->unit == UNIT_TIME) {
        sim_time ns = ns_from_s(v);
        memcpy(p, &ns, sizeof(ns));
    } else {
        memcpy(p, &v, sizeof(v));
    }
    return 0;
}

int schema_convert(const struct field *f, const char *text, size_t len, enum yt_style style,
                   void *base, struct arena *a, struct conv_error *e)
{
    char *p = f->off == NO_STORE || !base ? NULL : (char *)base + f->off;
    const struct enum_name *name;
    char q[64], what[256];

    if (strlen(text) != len)
        return cfail(e, 0, len, "value of '%s' contains a NUL character", f->key);
    diag_clip(q, sizeof(q), text, len);
    switch (f->type) {
    case FT_INT:
    case FT_FLOAT:
        return convert_number(f, text, len, style, p, e);
    case FT_QTY:
        return convert_quantity(f, text, len, p, e);
    case FT_BOOL:
        if (style == YT_PLAIN &&
            (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "TRUE") ||
             !strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "FALSE"))) {
            if (p)
                store_int(p, f->size, text[0] == 't' || text[0] == 'T');
            return 0;
        }
        if (style != YT_PLAIN)
            return cfail(e, 0, len, "expected true or false for '%s', got a quoted string", f->key);
        return cfail(e, 0, len, "expected true or false for '%s', got '%s'", f->key, q);
    case FT_ENUM:
        name = find_name(f->names, text);
        if (!name)
            return bad_name(f, text, len, e);
        if (p)
            store_int(p, f->size, name->value);
        return 0;
    case FT_STR:
        for (size_t i = 0; i < len;
             i++) /* names go into SVG (XML 1.0 allows no other), HTML, terminals */
            if (((unsigned char)text[i] < 0x20 && !strchr("\t\n\r", text[i])) || text[i] == 0x7f)
                return cfail(e, i, 1, "'%s' contains a control character (byte 0x%02X)", f->key,
                             (unsigned)(unsigned char)text[i]);
        if (p && !a)
            return cfail(e, 0, len, "'%s' cannot be set here", f->key);
        if (p) {
            char *s = arena_alloc(a, len + 1);
            memcpy(s, text, len);
            memcpy(p, &s, sizeof(s));
        }
        return 0;
    case FT_ORDER:
        return convert_order(f, text, len, p, e);
    default:
        return cfail(e, 0, len, "expected %s for '%s'", expected(f, what, sizeof(what)), f->key);
    }
}

/* ---- nodes ------------------------------------------------------------------------------- */

/* Report a conversion error, pointing inside the scalar when its source spells it verbatim. */
static void value_error(struct schema_ctx *c, const struct yt_node *n, const struct conv_error *e)
{
    struct diag_mark m = yt_mark(n);
    size_t q = n->style == YT_QUOTED ? 1 : 0;

    if (n->style != YT_BLOCK && n->src && n->off + q + n->len <= n->src->len &&
        memcmp(n->src->text + n->off + q, n->text, n->len) == 0 && e->off + e->len <= n->len + 1) {
        m.off = n->off + q + e->off;
        m.len = e->len;
    }
    schema_error(c, m, "%s", e->msg);
}

static void extract_flags(struct schema_ctx *c, const struct field *f, const struct yt_node *val,
                          char *base)
{
    unsigned bits = 0;
    const struct yt_node *by[32] = { NULL }; /* the item that set each bit */
    char what[256];

    if (val->kind != YT_SEQ && !yt_is_null(val)) {
        schema_error(c, yt_mark(val), "expected %s for '%s', got %s",
                     expected(f, what, sizeof(what)), f->key, yt_describe(val));
        return;
    }
    for (size_t i = 0; val->kind == YT_SEQ && i < val->count; i++) {
        const struct yt_node *it = val->items[i];
        const struct enum_name *name;
        struct conv_error e;

        if (it->kind != YT_SCALAR || yt_is_null(it)) {
            schema_error(c, yt_mark(it), "expected one of the names for '%s', got %s", f->key,
                         yt_describe(it));
            continue;
        }
        name = strlen(it->text) == it->len ? find_name(f->names, it->text) : NULL;
        if (!name) {
            bad_name(f, it->text, it->len, &e);
            value_error(c, it, &e);
            continue;
        }
        if (bits & (unsigned)name->value) { /* a list of flags names each one once */
            const struct yt_node *first = NULL;
            int line, col;

            for (int b = 0; b < 32 && !first; b++)
                if ((unsigned)name->value & bits & (1u << b))
                    first = by[b];
            diag_locate(first->src, first->off, &line, &col);
            schema_error(c, yt_mark(it), "'%s' is listed twice in '%s' (first at %d:%d)",
                         name->name, f->key, line, col);
            continue;
        }
        for (int b = 0; b < 32; b++)
            if ((unsigned)name->value & (1u << b))
                by[b] = it;
        bits |= (unsigned)name->value;
    }
    if (f->off != NO_STORE)
        memcpy(base + f->off, &bits, sizeof(bits));
}

static void extract_table(struct schema_ctx *c, const struct field *f, const struct yt_node *val,
                          char *base)
{
    size_t n = val->kind == YT_SEQ ? val->count : 0;
    char *elems;
    int count = (int)n;
    char what[256];

    if (val->kind != YT_SEQ && !yt_is_null(val)) {
        schema_error(c, yt_mark(val), "expected %s for '%s', got %s",
                     expected(f, what, sizeof(what)), f->key, yt_describe(val));
        return;
    }
    elems = n ? arena_alloc(c->a, n * f->sub->elem_size) : NULL;
    for (size_t i = 0; i < n; i++) {
        const struct yt_node *it = val->items[i];

        if (it->kind != YT_MAP) {
            schema_error(c, yt_mark(it), "expected a mapping in '%s', got %s", f->key,
                         yt_describe(it));
            continue;
        }
        schema_extract(c, f->sub, it, it, elems + i * f->sub->elem_size);
    }
    memcpy(base + f->off, &elems, sizeof(elems));
    memcpy(base + f->count_off, &count, sizeof(count));
}

void schema_extract_value(struct schema_ctx *c, const struct field *f, const struct yt_node *key,
                          const struct yt_node *val, void *vbase)
{
    char *base = vbase;
    char what[256];
    struct conv_error e;

    switch (f->type) {
    case FT_SECTION:
        if (yt_is_null(val)) {
            struct yt_node empty = {
                .kind = YT_MAP, .src = val->src, .off = val->off, .end = val->end
            };
            schema_extract(c, f->sub, &empty, key, base + f->off);
        } else if (val->kind != YT_MAP) {
            schema_error(c, yt_mark(val), "expected a mapping for '%s', got %s", f->key,
                         yt_describe(val));
        } else {
            schema_extract(c, f->sub, val, key, base + f->off);
        }
        return;
    case FT_TABLE:
        extract_table(c, f, val, base);
        return;
    case FT_FLAGS:
        extract_flags(c, f, val, base);
        return;
    case FT_ANY:
    case FT_REF:
        return;
    default:
        break;
    }
    if (val->kind != YT_SCALAR) {
        schema_error(c, yt_mark(val), "expected %s for '%s', got %s",
                     expected(f, what, sizeof(what)), f->key, yt_describe(val));
        return;
    }
    if (yt_is_null(val)) {
        struct diag_mark m = yt_mark(val);

        if (val->len == 0 && key) /* `key:` with nothing after it: point at the key */
            m = yt_mark(key);
        schema_error(c, m, "missing value for '%s' (expected %s)", f->key,
                     expected(f, what, sizeof(what)));
        return;
    }
    if (schema_convert(f, val->text, val->len, val->style, base, c->a, &e))
        value_error(c, val, &e);
}

const struct field *schema_find(const struct section *sec, const char *key, size_t len,
                                const char **suggest)
{
    const char *cands[64];
    char word[64];

    for (size_t i = 0; i < sec->nfields; i++)
        if (strlen(sec->fields[i].key) == len && memcmp(sec->fields[i].key, key, len) == 0)
            return &sec->fields[i];
    if (suggest) {
        for (size_t i = 0; i < sec->nfields && i < ARRAY_LEN(cands); i++)
            cands[i] = sec->fields[i].key;
        diag_clip(word, sizeof(word), key, text_len(key, len));
        *suggest = diag_did_you_mean(word, cands, MIN(sec->nfields, ARRAY_LEN(cands)));
    }
    return NULL;
}

static void apply_default(const struct field *f, char *base, struct arena *a)
{
    struct conv_error e;
    int rc;

    if (!f->def || f->off == NO_STORE)
        return;
    if (f->type == FT_FLAGS) {
        unsigned bits = 0;

        for (const struct enum_name *n = f->names; n->name; n++) {
            const char *s = strstr(f->def, n->name);
            size_t l = strlen(n->name);

            /* a whole word of the "[a, b]" list */
            if (s && (s == f->def || strchr("[, ", s[-1])) && strchr("], ", s[l]))
                bits |= (unsigned)n->value;
        }
        memcpy(base + f->off, &bits, sizeof(bits));
        return;
    }
    rc = schema_convert(f, f->def, strlen(f->def), YT_PLAIN, base, a, &e);
    assert(rc == 0 && "schema default does not parse");
    (void)rc;
}

void schema_defaults(const struct section *sec, void *base, struct arena *a)
{
    for (size_t i = 0; i < sec->nfields; i++) {
        const struct field *f = &sec->fields[i];

        if (f->type == FT_SECTION) {
            if (!(f->sub->flags & S_ABSENT_IS_NONE))
                schema_defaults(f->sub, (char *)base + f->off, a);
        } else if (f->type != FT_REF) {
            apply_default(f, base, a);
        }
    }
}

int schema_extract(struct schema_ctx *c, const struct section *sec, const struct yt_node *map,
                   const struct yt_node *where, void *base)
{
    int before = c->errors;
    bool seen[64] = { false };

    assert(sec->nfields <= ARRAY_LEN(seen));
    if (!map) {
        if (!(sec->flags & S_ABSENT_IS_NONE) && !c->no_defaults)
            schema_defaults(sec, base, c->a);
        return 0;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct yt_node *key = map->pairs[i].key;
        const char *suggest = NULL;
        const struct field *f = schema_find(sec, key->text, key->len, &suggest);
        char q[64];

        if (!f) {
            diag_clip(q, sizeof(q), key->text, text_len(key->text, key->len));
            schema_error(c, yt_mark(key), "unknown key '%s'%s%s%s%s%s%s", q,
                         sec->name[0] ? " in '" : "", sec->name, sec->name[0] ? "'" : "",
                         suggest ? " (did you mean '" : "", suggest ? suggest : "",
                         suggest ? "'?)" : "");
            continue;
        }
        seen[f - sec->fields] = true;
        c->given |= f->given;
        schema_extract_value(c, f, key, map->pairs[i].value, base);
    }
    for (size_t i = 0; i < sec->nfields; i++) {
        const struct field *f = &sec->fields[i];

        if (seen[i])
            continue;
        if (f->flags & F_REQUIRED) {
            struct diag_mark m =
                where ? yt_mark(where) : (struct diag_mark){ map->src, map->off, 1 };
            schema_error(c, m, "missing required key '%s'%s%s%s", f->key,
                         sec->name[0] ? " in '" : "", sec->name, sec->name[0] ? "'" : "");
        } else if (c->no_defaults) {
            continue;
        } else if (f->type == FT_SECTION) {
            schema_extract(c, f->sub, NULL, NULL, (char *)base + f->off);
        } else if (f->type != FT_REF) {
            apply_default(f, base, c->a);
        }
    }
    return c->errors - before;
}

const struct field *schema_lookup(const char *key, size_t *base_off, size_t *bad_at,
                                  size_t *bad_len, char *msg, size_t msglen)
{
    const struct section *sec = &schema_scenario;
    const struct field *f = NULL;
    size_t base = 0;
    const char *p = key;

    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const char *suggest = NULL;
        char q[64];

        if (f) {
            if (f->type != FT_SECTION && f->type != FT_REF) {
                *bad_at = (size_t)(p - key);
                *bad_len = n;
                snprintf(msg, msglen, "'%.*s' has no key '%.*s'", (int)(p - 1 - key), key, (int)n,
                         p);
                return NULL;
            }
            base += f->off;
            sec = f->sub;
        }
        diag_clip(q, sizeof(q), p, n);
        f = n ? schema_find(sec, p, n, &suggest) : NULL;
        if (!f) {
            *bad_at = (size_t)(p - key);
            *bad_len = n;
            if (p == key)
                snprintf(msg, msglen, "unknown key '%s'%s%s%s", q,
                         suggest ? " (did you mean '" : "", suggest ? suggest : "",
                         suggest ? "'?)" : "");
            else
                snprintf(msg, msglen, "unknown key '%s' in '%.*s'%s%s%s", q, (int)(p - 1 - key),
                         key, suggest ? " (did you mean '" : "", suggest ? suggest : "",
                         suggest ? "'?)" : "");
            return NULL;
        }
        if (!dot)
            break;
        p = dot + 1;
    }
    *base_off = base;
    return f;
}
