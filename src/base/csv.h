/*
 * csv.h - an RFC 4180 reader: a header row, then records of text fields.
 *
 * Accepted input: fields separated by commas; a field may be wrapped in
 * double quotes, inside which commas, CR/LF line breaks and doubled quotes
 * ("") are literal; records end with LF or CRLF (a lone CR also ends one);
 * a UTF-8 byte-order mark at the start is skipped; blank lines are skipped.
 * Fields are kept as text exactly as written (no trimming, no type guessing).
 *
 * What is an error (the whole file is rejected, since nothing after it can be
 * trusted): an unterminated quoted field, a character other than a comma or a
 * line break after a closing quote, a quote inside an unquoted field, a NUL
 * byte anywhere in a field (it would end the C string early), an
 * empty or duplicate header name, a file without a header. Records whose
 * field count differs from the header's are kept as read: the caller decides
 * (validate reports such a row and goes on).
 *
 * Memory: a table owns all its strings in one arena; csv_free() releases it.
 */
#ifndef SIMTRAIN_CSV_H
#define SIMTRAIN_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "base/util.h"

struct csv_record {
    int line;      /* 1-based line where the record starts */
    int nfields;   /* fields read, may differ from the header's count */
    char **fields; /* arena-owned, NUL-terminated */
};

struct csv_table {
    const char *name;        /* file name for diagnostics (arena copy) */
    int ncols;               /* header fields */
    char **header;           /* column names, arena-owned */
    int nrows;               /* records after the header */
    struct csv_record *rows; /* nrows records */
    struct arena arena;      /* owns every string above */
};

/* Where and why parsing failed. */
struct csv_error {
    int line;      /* 1-based line, 0 when not applicable (e.g. cannot open) */
    int col;       /* 1-based byte column in that line, 0 when not applicable */
    char msg[256]; /* lowercase, no trailing period */
};

/*
 * Parse `len` bytes of CSV text; `name` is used in diagnostics. Returns a new
 * table the caller frees with csv_free(), or NULL with *err filled.
 */
struct csv_table *csv_parse(const char *text, size_t len, const char *name, struct csv_error *err);

/* CSV inputs are measurement and result tables: a few MiB at most. */
#define CSV_MAX_FILE_BYTES (64u << 20)

/*
 * Read and parse a file: a regular file of at most CSV_MAX_FILE_BYTES, noted
 * as an input of the run (base/files.h). NULL with *err filled (msg says why
 * it cannot be read: the OS error, "not a regular file", too large) on
 * failure.
 */
struct csv_table *csv_read_file(const char *path, struct csv_error *err);

/* Free a table; NULL is accepted. */
void csv_free(struct csv_table *t);

/* Index of the column named `name` (exact, case-sensitive), or -1. */
int csv_column(const struct csv_table *t, const char *name);

/*
 * Field `col` of record `row`, or "" when col is -1 or the record is shorter
 * (a missing optional column reads as an empty field).
 */
const char *csv_field(const struct csv_table *t, int row, int col);

/*
 * A plain decimal number at the start of s (after spaces): [+-]digits[.digits][e[+-]digits],
 * as a spreadsheet writes it; *end receives where it stops (s itself when there is none).
 * Unlike strtod(), no hexadecimal float, inf, nan or leading tab is read: a CSV of
 * measurements holding one is a mistake to refuse, not a value. The result may still be
 * HUGE_VAL for an exponent beyond double's range: callers bound it.
 */
double csv_strtod(const char *s, const char **end);

/* Print `err` as "name:line:col: error: msg" (compiler style) to `out`. */
void csv_print_error(const char *name, const struct csv_error *err, FILE *out);

#endif
