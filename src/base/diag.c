/* diag.c - compiler-style diagnostics and did-you-mean; see diag.h. */
#include "base/diag.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* Length of the line break at text[i] (YAML 1.2 §5.4 plus NEL/LS/PS as libyaml), or 0. */
static size_t break_len(const char *t, size_t n, size_t i)
{
    const unsigned char *u = (const unsigned char *)t;

    if (u[i] == '\n')
        return 1;
    if (u[i] == '\r')
        return i + 1 < n && u[i + 1] == '\n' ? 2 : 1;
    if (u[i] == 0xC2 && i + 1 < n && u[i + 1] == 0x85)
        return 2;
    if (u[i] == 0xE2 && i + 2 < n && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9))
        return 3;
    return 0;
}

static bool is_continuation(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

/* Find the line holding `off`: its number and the byte range [*start, *end). */
static int find_line(const struct diag_src *src, size_t off, size_t *start, size_t *end)
{
    size_t i = 0, s = 0;
    int line = 1;

    while (i < off && i < src->len) {
        size_t b = break_len(src->text, src->len, i);

        if (b && i + b <= off) {
            i += b;
            s = i;
            line++;
        } else {
            i += b ? b : 1;
        }
    }
    i = s;
    while (i < src->len && !break_len(src->text, src->len, i))
        i++;
    *start = s;
    *end = i;
    return line;
}

static int count_chars(const char *s, size_t n)
{
    int c = 0;

    for (size_t i = 0; i < n; i++)
        c += !is_continuation(s[i]);
    return c;
}

/* Bytes of a UTF-8 byte-order mark opening the text at `start` (the first line) before `off`:
 * 3, or 0. The mark is no column, and is not printed. */
static size_t bom_at(const struct diag_src *src, size_t start, size_t off)
{
    return start == 0 && off >= 3 && src->len >= 3 && !memcmp(src->text, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

void diag_locate(const struct diag_src *src, size_t off, int *line, int *col)
{
    size_t start, end;

    if (off > src->len)
        off = src->len;
    *line = find_line(src, off, &start, &end);
    start += bom_at(src, start, off);
    *col = 1 + count_chars(src->text + start, off - start);
}

/*
 * Is the line [start, end) text a terminal may show as it is: valid UTF-8 without control
 * characters (C0 but the tab, DEL, C1)? A line that is not (a byte of a binary file, an escape
 * sequence) is not echoed: the message and its position say where, without the file's bytes.
 */
static bool echoable(const struct diag_src *src, size_t start, size_t end)
{
    const unsigned char *t = (const unsigned char *)src->text;

    for (size_t i = start; i < end;) {
        unsigned c = t[i];
        size_t n = c < 0x80             ? 1
                   : (c & 0xE0) == 0xC0 ? 2
                   : (c & 0xF0) == 0xE0 ? 3
                   : (c & 0xF8) == 0xF0 ? 4
                                        : 0;
        unsigned cp;

        if (n == 0 || i + n > end || (c < 0x20 && c != '\t') || c == 0x7F || c == 0xC0 ||
            c == 0xC1 || c > 0xF4)
            return false;
        cp = n == 1 ? c : c & (0x7Fu >> n);
        for (size_t k = 1; k < n; k++) {
            if ((t[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (t[i + k] & 0x3Fu);
        }
        if ((n == 2 && cp < 0xA0) || (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false; /* C1 controls, overlong forms, surrogates */
        i += n;
    }
    return true;
}

static void print_source(FILE *out, const struct diag_src *src, int line, size_t start, size_t end,
                         size_t off, size_t len)
{
    size_t stop = off + len < end ? off + len : end;
    int width = 5;

    for (int l = line; l >= 100000; l /= 10)
        width++;
    fprintf(out, "%*d | ", width, line);
    fwrite(src->text + start, 1, end - start, out);
    fprintf(out, "\n%*s | ", width, "");
    for (size_t i = start; i < off && i < end; i++)
        if (!is_continuation(src->text[i]))
            fputc(src->text[i] == '\t' ? '\t' : ' ', out);
    fputc('^', out);
    for (int n = count_chars(src->text + off, stop > off ? stop - off : 0); n > 1; n--)
        fputc('~', out);
    fputc('\n', out);
}

void diag_vprint(FILE *out, struct diag_mark m, const char *level, const char *fmt, va_list ap)
{
    size_t start, end;
    int line;

    if (!m.src) {
        fprintf(out, "%s: ", level);
    } else if (m.off == DIAG_NO_POS) {
        fprintf(out, "%s: %s: ", m.src->path, level);
    } else {
        if (m.off > m.src->len)
            m.off = m.src->len;
        line = find_line(m.src, m.off, &start, &end);
        start += bom_at(m.src, start, m.off);
        fprintf(out, "%s:%d:%d: %s: ", m.src->path, line,
                1 + count_chars(m.src->text + start, m.off - start), level);
    }
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    if (m.src && m.off != DIAG_NO_POS && m.len != DIAG_NO_EXCERPT && echoable(m.src, start, end))
        print_source(out, m.src, line, start, end, m.off, m.len);
}

void diag_error(FILE *out, struct diag_mark m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    diag_vprint(out, m, "error", fmt, ap);
    va_end(ap);
}

void diag_note(FILE *out, struct diag_mark m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    diag_vprint(out, m, "note", fmt, ap);
    va_end(ap);
}

char *diag_clip(char *dst, size_t cap, const char *s, size_t n)
{
    size_t max = cap - 4;

    if (n < cap) {
        memcpy(dst, s, n);
        dst[n] = '\0';
        return dst;
    }
    while (max > 0 && is_continuation(s[max]))
        max--;
    memcpy(dst, s, max);
    memcpy(dst + max, "...", 4);
    return dst;
}

/* ---- did you mean ------------------------------------------------------------ */

size_t diag_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    size_t *prev2 = xcalloc(m + 1, sizeof(size_t));
    size_t *prev = xcalloc(m + 1, sizeof(size_t));
    size_t *cur = xcalloc(m + 1, sizeof(size_t));
    size_t d;

    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t *t;

        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = prev[j - 1] + cost;

            best = MIN(best, prev[j] + 1);
            best = MIN(best, cur[j - 1] + 1);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = MIN(best, prev2[j - 2] + 1);
            cur[j] = best;
        }
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    d = prev[m];
    free(prev2);
    free(prev);
    free(cur);
    return d;
}

static bool equal_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;

        if (x != y)
            return false;
    }
    return *a == *b;
}

const char *diag_did_you_mean(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word);
    size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    size_t best_d = limit + 1;
    const char *best = NULL;

    for (size_t i = 0; i < n; i++)
        if (candidates[i] && equal_nocase(word, candidates[i]))
            return candidates[i];
    for (size_t i = 0; i < n; i++) {
        size_t cl, d;

        if (!candidates[i])
            continue;
        cl = strlen(candidates[i]);
        if ((cl > len ? cl - len : len - cl) >= best_d)
            continue;
        d = diag_edit_distance(word, candidates[i]);
        if (d < best_d && d < MAX(len, cl)) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

struct diag_mark diag_unechoed_at_start(struct diag_mark m)
{
    size_t i = 0;

    if (!m.src || m.off == DIAG_NO_POS)
        return m;
    while (i < m.src->len && (m.src->text[i] == ' ' || m.src->text[i] == '\t' ||
                              m.src->text[i] == '\n' || m.src->text[i] == '\r'))
        i++;
    if (m.off <= i)
        m.len = DIAG_NO_EXCERPT;
    return m;
}
