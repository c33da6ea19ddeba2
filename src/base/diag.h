/*
 * diag.h - compiler-style diagnostics for input files, and did-you-mean.
 *
 *     scenarios/70b.yaml:14:7: error: unknown key 'bandwith' in 'node' (did you mean 'bandwidth'?)
 *        14 |       bandwith: 450 GB/s
 *           |       ^~~~~~~~
 *
 * A mark is a byte range in a source text (a file's contents, or a command-line
 * argument). Lines and columns are computed from the text when printing: lines
 * break at \n, \r\n, \r, U+0085, U+2028 and U+2029 as in YAML (and libyaml);
 * columns count UTF-8 characters from 1. The caret line repeats the source's
 * tabs so it stays aligned. Wording follows git: lowercase, no trailing period,
 * the subject in quotes.
 */
#ifndef SIMTRAIN_DIAG_H
#define SIMTRAIN_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* A named text diagnostics point into; the caller owns both strings. */
struct diag_src {
    const char *path; /* as shown: "scenarios/x.yaml", "<command line>" */
    const char *text; /* contents (may hold NULs) */
    size_t len;       /* bytes of text */
};

struct diag_mark {
    const struct diag_src *src; /* NULL: no location ("error: msg") */
    size_t off;                 /* byte offset of the token; DIAG_NO_POS: file only */
    size_t len;                 /* token bytes; the caret covers it, clipped to its line */
};

#define DIAG_NO_POS ((size_t)-1)

/*
 * A mark's len that prints the line and column without the source line under them: for a file
 * that is not of the kind expected (a path to /etc/passwd), whose text is not to be echoed.
 * A source line that is not text a terminal may show as it is (invalid UTF-8, a control
 * character other than the tab: an escape sequence) is never echoed either, on any line.
 */
#define DIAG_NO_EXCERPT ((size_t)-2)

/*
 * m, without its source excerpt (DIAG_NO_EXCERPT) when it marks the first token of its text: a
 * file refused at its first byte is not of the kind expected, and is not echoed.
 */
struct diag_mark diag_unechoed_at_start(struct diag_mark m);

/* Line and column (both from 1) of byte offset `off` in src. */
void diag_locate(const struct diag_src *src, size_t off, int *line, int *col);

/*
 * Print `path:line:col: level: message`, then the source line and a caret line
 * under the mark. `level` is "error", "warning" or "note".
 */
void diag_vprint(FILE *out, struct diag_mark m, const char *level, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
void diag_error(FILE *out, struct diag_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_note(FILE *out, struct diag_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Copy s[0..n) into dst (cap bytes, cap >= 8) for quoting in a message; longer
 * text is cut at a UTF-8 character boundary and ends in "...". Returns dst.
 */
char *diag_clip(char *dst, size_t cap, const char *s, size_t n);

/* Optimal-string-alignment (restricted Damerau-Levenshtein) distance of two strings. */
size_t diag_edit_distance(const char *a, const char *b);

/*
 * The candidate closest to `word`, or NULL if none is close enough: a
 * case-insensitive equal first, else the smallest edit distance if it is at
 * most 1 for words of 1-3 characters, 2 for 4-6 and 3 for longer words. Ties
 * go to the earliest candidate, so the answer is deterministic. Returns one of
 * `candidates` (NULL entries are skipped).
 */
const char *diag_did_you_mean(const char *word, const char *const *candidates, size_t n);

#endif
