/* csv.c - RFC 4180 reader; see csv.h for what is accepted. */
#include "base/csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/files.h"

struct parser {
    const char *p, *end;
    int line, col;       /* position of *p, 1-based */
    struct strbuf field; /* the field being read */
    char **fields;       /* the record being read (arena strings) */
    size_t nfields, cap;
    struct csv_table *t;
    struct csv_error *err;
};

static int fail(struct parser *ps, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct parser *ps, int line, int col, const char *fmt, ...)
{
    va_list ap;

    ps->err->line = line;
    ps->err->col = col;
    va_start(ap, fmt);
    vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* Advance over one byte, keeping line and column; CRLF counts as one break. */
static void advance(struct parser *ps)
{
    char c = *ps->p++;

    if (c == '\n' || (c == '\r' && (ps->p == ps->end || *ps->p != '\n'))) {
        ps->line++;
        ps->col = 1;
    } else {
        ps->col++;
    }
}

static int at_break(const struct parser *ps)
{
    return ps->p < ps->end && (*ps->p == '\n' || *ps->p == '\r');
}

static void skip_break(struct parser *ps)
{
    if (ps->p < ps->end && *ps->p == '\r')
        advance(ps);
    if (ps->p < ps->end && *ps->p == '\n')
        advance(ps);
}

/* A field is text: a NUL byte would cut it short without a word (C strings end there). */
static int nul_byte(struct parser *ps)
{
    return fail(ps, ps->line, ps->col, "NUL byte in a field (a CSV file is text)");
}

/*
 * Append the run of plain bytes at ps->p (none of , " CR LF NUL; at least the first byte, which
 * the caller has checked) to the field in one piece: each moves the column by one, as advance().
 */
static void add_plain(struct parser *ps)
{
    static const bool stop[256] = {
        ['\0'] = true, [','] = true, ['"'] = true, ['\n'] = true, ['\r'] = true
    };
    const char *q = ps->p + 1;

    while (q < ps->end && !stop[(unsigned char)*q]) /* one load per byte, not five tests */
        q++;
    sb_add(&ps->field, ps->p, (size_t)(q - ps->p));
    ps->col += (int)(q - ps->p);
    ps->p = q;
}

static int read_quoted(struct parser *ps)
{
    int qline = ps->line, qcol = ps->col;

    advance(ps); /* opening quote */
    for (;;) {
        if (ps->p == ps->end)
            return fail(ps, qline, qcol, "unterminated quoted field");
        if (*ps->p == '"') {
            advance(ps);
            if (ps->p < ps->end && *ps->p == '"') {
                sb_add(&ps->field, "\"", 1);
                advance(ps);
                continue;
            }
            break;
        }
        if (*ps->p == '\0')
            return nul_byte(ps);
        if (*ps->p == '\n' || *ps->p == '\r') {
            sb_add(&ps->field, ps->p, 1);
            advance(ps);
            continue;
        }
        add_plain(ps);
    }
    if (ps->p < ps->end && *ps->p != ',' && !at_break(ps))
        return fail(ps, ps->line, ps->col, "unexpected '%c' after a closing quote", *ps->p);
    return 0;
}

static int read_unquoted(struct parser *ps)
{
    while (ps->p < ps->end && *ps->p != ',' && !at_break(ps)) {
        if (*ps->p == '"')
            return fail(ps, ps->line, ps->col,
                        "quote inside an unquoted field (quote the whole field and double "
                        "the quote)");
        if (*ps->p == '\0')
            return nul_byte(ps);
        add_plain(ps);
    }
    return 0;
}

/* Read one record into ps->fields; the caller has skipped blank lines. */
static int read_record(struct parser *ps)
{
    ps->nfields = 0;
    for (;;) {
        int rc;

        ps->field.len = 0;
        sb_add(&ps->field, "", 0);
        rc = (ps->p < ps->end && *ps->p == '"') ? read_quoted(ps) : read_unquoted(ps);
        if (rc)
            return rc;
        grow_array((void **)&ps->fields, &ps->cap, ps->nfields + 1, sizeof(*ps->fields));
        ps->fields[ps->nfields++] = arena_strdup(&ps->t->arena, ps->field.buf ? ps->field.buf : "");
        if (ps->p < ps->end && *ps->p == ',') {
            advance(ps);
            continue;
        }
        skip_break(ps);
        return 0;
    }
}

static char **keep_fields(struct parser *ps)
{
    char **f = arena_alloc(&ps->t->arena, (ps->nfields ? ps->nfields : 1) * sizeof(*f));

    memcpy(f, ps->fields, ps->nfields * sizeof(*f));
    return f;
}

static const struct csv_table *sort_table; /* qsort has no context argument */

/* Column indices by name, then by index: equal names end up side by side, first first. */
static int by_name(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(sort_table->header[x], sort_table->header[y]);

    return c ? c : (x > y) - (x < y);
}

/*
 * No empty name, no name twice: the first offending column, found in n log n (a sort of the
 * names) so that a header of 10^5 columns is refused at once.
 */
static int check_header(struct parser *ps, int line)
{
    struct csv_table *t = ps->t;
    int *idx = xcalloc((size_t)(t->ncols ? t->ncols : 1), sizeof(*idx)), dup = t->ncols;
    int empty = t->ncols;

    for (int i = 0; i < t->ncols; i++) {
        idx[i] = i;
        if (!t->header[i][0] && empty == t->ncols)
            empty = i;
    }
    sort_table = t;
    qsort(idx, (size_t)t->ncols, sizeof(*idx), by_name);
    for (int i = 1; i < t->ncols; i++)
        if (!strcmp(t->header[idx[i]], t->header[idx[i - 1]]) && idx[i] < dup &&
            t->header[idx[i]][0])
            dup = idx[i];
    free(idx);
    if (empty < dup)
        return fail(ps, line, 0, "empty name for column %d of the header", empty + 1);
    if (dup < t->ncols)
        return fail(ps, line, 0, "duplicate column '%s' in the header", t->header[dup]);
    return 0;
}

static int parse_all(struct parser *ps)
{
    struct csv_table *t = ps->t;
    size_t rows_cap = 0;
    int have_header = 0;

    if (ps->end - ps->p >= 3 && !memcmp(ps->p, "\xEF\xBB\xBF", 3))
        ps->p += 3;
    while (ps->p < ps->end) {
        int line;

        if (at_break(ps)) {
            skip_break(ps);
            continue;
        }
        line = ps->line;
        if (read_record(ps))
            return -1;
        if (!have_header) {
            t->ncols = (int)ps->nfields;
            t->header = keep_fields(ps);
            have_header = 1;
            if (check_header(ps, line))
                return -1;
            continue;
        }
        grow_array((void **)&t->rows, &rows_cap, (size_t)t->nrows + 1, sizeof(*t->rows));
        t->rows[t->nrows].line = line;
        t->rows[t->nrows].nfields = (int)ps->nfields;
        t->rows[t->nrows].fields = keep_fields(ps);
        t->nrows++;
    }
    if (!have_header)
        return fail(ps, 1, 0, "no header row (the file is empty)");
    return 0;
}

struct csv_table *csv_parse(const char *text, size_t len, const char *name, struct csv_error *err)
{
    struct csv_table *t = xcalloc(1, sizeof(*t));
    struct parser ps = { .p = text, .end = text + len, .line = 1, .col = 1, .t = t, .err = err };
    int rc;

    arena_init(&t->arena);
    t->name = arena_strdup(&t->arena, name ? name : "<csv>");
    sb_init(&ps.field);
    rc = parse_all(&ps);
    sb_release(&ps.field);
    free(ps.fields);
    if (rc) {
        csv_free(t);
        return NULL;
    }
    return t;
}

struct csv_table *csv_read_file(const char *path, struct csv_error *err)
{
    size_t len = 0;
    const char *why;
    char *text = files_read_input(path, CSV_MAX_FILE_BYTES, &len, &why);
    struct csv_table *t;

    if (!text) {
        err->line = 0;
        err->col = 0;
        snprintf(err->msg, sizeof(err->msg), "cannot read '%s': %s", path, why);
        return NULL;
    }
    t = csv_parse(text, len, path, err);
    free(text);
    return t;
}

void csv_free(struct csv_table *t)
{
    if (!t)
        return;
    free(t->rows);
    arena_release(&t->arena);
    free(t);
}

int csv_column(const struct csv_table *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->header[i], name))
            return i;
    return -1;
}

const char *csv_field(const struct csv_table *t, int row, int col)
{
    const struct csv_record *r;

    if (row < 0 || row >= t->nrows || col < 0)
        return "";
    r = &t->rows[row];
    return col < r->nfields ? r->fields[col] : "";
}

void csv_print_error(const char *name, const struct csv_error *err, FILE *out)
{
    if (err->line > 0 && err->col > 0)
        fprintf(out, "%s:%d:%d: error: %s\n", name, err->line, err->col, err->msg);
    else if (err->line > 0)
        fprintf(out, "%s:%d: error: %s\n", name, err->line, err->msg);
    else
        fprintf(out, "%s: error: %s\n", name, err->msg);
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

double csv_strtod(const char *s, const char **end)
{
    const char *p, *q;
    char buf[128];
    bool digits = false;

    while (*s == ' ')
        s++;
    p = s;
    if (*p == '+' || *p == '-')
        p++;
    for (; digit(*p); p++)
        digits = true;
    if (*p == '.')
        for (p++; digit(*p); p++)
            digits = true;
    if (!digits || (size_t)(p - s) >= sizeof(buf) - 16) {
        *end = s;
        return 0;
    }
    q = p;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (digit(*q)) {
            while (digit(*q) && (size_t)(q - s) < sizeof(buf) - 1)
                q++;
            p = q;
        }
    }
    memcpy(buf, s, (size_t)(p - s));
    buf[p - s] = '\0';
    *end = p;
    return strtod(buf, NULL);
}
