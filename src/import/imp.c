/*
 * imp.c - the import in progress: its source files, diagnostics at their keys, the notes on
 * what was ignored or approximated, the scenario keys written so far, and source scalars read
 * the way PyYAML (YAML 1.1) and JSON read them; see import_internal.h.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config/schema.h"
#include "import/import_internal.h"
#include "import/jsontree.h"

/* ---- files ---------------------------------------------------------------------------------- */

static void print_parse_error(FILE *diag, const struct yt_error *e)
{
    diag_error(diag, diag_unechoed_at_start(e->mark), "%s", e->msg);
    if (e->note_mark.src)
        diag_note(diag, e->note_mark, "%s", e->note);
}

/* The text of one more input file (heap), or NULL with the error reported. */
static char *read_input(struct imp *im, const char *path, const char *role, size_t *len)
{
    const char *why;
    char *text;

    if (im->nfiles >= IMP_MAX_FILES) {
        imp_error(im, NULL, "more than %d files in one import", IMP_MAX_FILES);
        return NULL;
    }
    text = cfg_read_file(path, len, &why);
    if (!text) {
        fprintf(im->diag, "error: cannot read %s '%s': %s\n", role, path, why);
        im->errors++;
    }
    return text;
}

struct imp_file *imp_read(struct imp *im, const char *path, const char *role, bool json)
{
    struct imp_file *f;
    struct yt_error err;
    size_t len;
    char *text;

    text = read_input(im, path, role, &len);
    if (!text)
        return NULL;
    f = &im->files[im->nfiles];
    f->path = arena_strdup(&im->a, path);
    f->role = role;
    f->doc =
        json ? jt_parse(&im->a, path, text, len, &err) : yt_parse(&im->a, path, text, len, 0, &err);
    free(text);
    if (!f->doc) {
        print_parse_error(im->diag, &err);
        im->errors++;
        return NULL;
    }
    if (!f->doc->root || f->doc->root->kind != YT_MAP) {
        struct diag_mark m = f->doc->root ? yt_mark(f->doc->root)
                                          : (struct diag_mark){ &f->doc->src, DIAG_NO_POS, 0 };

        m.len = DIAG_NO_EXCERPT; /* not a config: its text is not echoed */
        diag_error(im->diag, m, "%s: expected a mapping of keys at the top, got %s", role,
                   yt_describe(f->doc->root));
        im->errors++;
        return NULL;
    }
    im->nfiles++;
    return f;
}

struct imp_file *imp_read_text(struct imp *im, const char *path, const char *role)
{
    struct imp_file *f;
    size_t len;
    char *text, *copy;

    text = read_input(im, path, role, &len);
    if (!text)
        return NULL;
    f = &im->files[im->nfiles++];
    f->path = arena_strdup(&im->a, path);
    f->role = role;
    f->doc = arena_alloc(&im->a, sizeof(*f->doc));
    copy = arena_alloc(&im->a, len + 1);
    memcpy(copy, text, len);
    free(text);
    f->doc->src = (struct diag_src){ f->path, copy, len };
    return f;
}

/* vsnprintf into the import's arena. */
static char *vfmt(struct imp *im, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static char *vfmt(struct imp *im, const char *fmt, va_list ap)
{
    va_list again;
    char *s;
    int n;

    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    s = arena_alloc(&im->a, (size_t)(n > 0 ? n : 0) + 1);
    vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, again);
    va_end(again);
    return s;
}

char *imp_fmt(struct imp *im, const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    s = vfmt(im, fmt, ap);
    va_end(ap);
    return s;
}

const char *imp_at(struct imp *im, const struct yt_node *n)
{
    const char *base;
    int line, col;

    if (!n || !n->src)
        return "";
    base = strrchr(n->src->path, '/');
    diag_locate(n->src, n->off, &line, &col);
    im->last_at = n;
    im->last_at_text = imp_fmt(im, "%s:%d", base ? base + 1 : n->src->path, line);
    return im->last_at_text;
}

int imp_error(struct imp *im, const struct yt_node *n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    diag_vprint(im->diag, yt_mark(n), "error", fmt, ap);
    va_end(ap);
    im->errors++;
    return -1;
}

void imp_note(struct imp *im, enum imp_fate fate, const struct yt_node *n, const char *fmt, ...)
{
    va_list ap;
    char *text;

    va_start(ap, fmt);
    text = vfmt(im, fmt, ap);
    va_end(ap);
    grow_array((void **)&im->notes, &im->ncap, im->nnotes + 1, sizeof(*im->notes));
    im->notes[im->nnotes++] = (struct imp_note){ fate, n, text };
}

/* ---- scenario keys ------------------------------------------------------------------------ */

static struct imp_entry *find_entry(const struct imp *im, const char *key)
{
    for (size_t i = 0; i < im->nentries; i++)
        if (strcmp(im->entries[i].key, key) == 0)
            return &im->entries[i];
    return NULL;
}

static void put(struct imp *im, const char *key, const char *value, const char *comment,
                bool commented)
{
    struct imp_entry *e = find_entry(im, key);

    if (!e) {
        grow_array((void **)&im->entries, &im->ecap, im->nentries + 1, sizeof(*im->entries));
        e = &im->entries[im->nentries];
        e->key = arena_strdup(&im->a, key);
        e->seq = im->nentries++;
    }
    e->value = arena_strdup(&im->a, value);
    e->comment = arena_strdup(&im->a, comment ? comment : "");
    /* the key whose position the comment names (from() and the like call imp_at() just before) */
    e->src = comment && im->last_at_text && strstr(comment, im->last_at_text) ? im->last_at : NULL;
    e->commented = commented;
}

void imp_put(struct imp *im, const char *key, const char *value, const char *comment)
{
    put(im, key, value, comment, false);
}

void imp_put_commented(struct imp *im, const char *key, const char *value, const char *comment)
{
    put(im, key, value, comment, true);
}

void imp_put_framework(struct imp *im, const char *name, const char *comment)
{
    imp_put(im, "training.framework", name, comment);
}

void imp_putf(struct imp *im, const char *key, const char *comment, const char *fmt, ...)
{
    char value[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    put(im, key, value, comment, false);
}

const char *imp_get(const struct imp *im, const char *key)
{
    const struct imp_entry *e = find_entry(im, key);

    return e && !e->commented ? e->value : NULL;
}

void imp_unset(struct imp *im, const char *key)
{
    struct imp_entry *e = find_entry(im, key);

    if (!e)
        return;
    memmove(e, e + 1, (size_t)(im->entries + im->nentries - (e + 1)) * sizeof(*e));
    im->nentries--;
}

/* ---- source scalars ------------------------------------------------------------------------ */

bool imp_null(const struct yt_node *n)
{
    return !n || yt_is_null(n);
}

const char *imp_str(const struct yt_node *n)
{
    if (imp_null(n) || n->kind != YT_SCALAR)
        return NULL;
    return n->text;
}

bool imp_is(const struct yt_node *n, const char *word)
{
    const char *s = imp_str(n);

    return s && strcmp(s, word) == 0;
}

static bool word_in(const char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, words[i]) == 0)
            return true;
    return false;
}

int imp_bool(struct imp *im, const struct yt_node *n, bool *out)
{
    /* PyYAML's bool resolver (resolver.py): these spellings only */
    static const char *const yes[] = {
        "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"
    };
    static const char *const no[] = { "no",    "No",  "NO",  "false", "False",
                                      "FALSE", "off", "Off", "OFF" };
    const char *s = imp_str(n);

    if (s && n->style == YT_PLAIN && word_in(s, yes, ARRAY_LEN(yes))) {
        *out = true;
        return 0;
    }
    if (s && n->style == YT_PLAIN && word_in(s, no, ARRAY_LEN(no))) {
        *out = false;
        return 0;
    }
    return imp_error(im, n, "expected true or false, got %s '%s'", yt_describe(n),
                     s ? s : (n && n->kind == YT_SCALAR ? n->text : ""));
}

/* Digits with YAML 1.1's `_` separators (PyYAML int: [-+]?(0|[1-9][0-9_]*)) into buf. */
static bool clean_int(const struct yt_node *n, char *buf, size_t cap)
{
    const char *s = n->text;
    size_t j = 0;

    if (*s == '+' || *s == '-')
        buf[j++] = *s++;
    if (!*s || *s == '_')
        return false;
    for (; *s; s++) {
        if (*s == '_')
            continue;
        if (*s < '0' || *s > '9' || j + 1 >= cap)
            return false;
        buf[j++] = *s;
    }
    buf[j] = '\0';
    return j > 0 && (buf[j - 1] >= '0' && buf[j - 1] <= '9');
}

int imp_int(struct imp *im, const struct yt_node *n, long long lo, long long hi, long long *out)
{
    char buf[32], *end;
    long long v;

    if (!imp_str(n) || n->style != YT_PLAIN || !clean_int(n, buf, sizeof(buf)))
        return imp_error(im, n, "expected a whole number, got %s '%s'", yt_describe(n),
                         n && n->kind == YT_SCALAR ? n->text : "");
    errno = 0;
    v = strtoll(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return imp_error(im, n, "%s is out of range (%lld to %lld)", n->text, lo, hi);
    *out = v;
    return 0;
}

int imp_num(struct imp *im, const struct yt_node *n, double *out)
{
    char buf[64], *end;
    size_t j = 0;
    double v;

    if (!imp_str(n) || n->style != YT_PLAIN)
        return imp_error(im, n, "expected a number, got %s", yt_describe(n));
    for (const char *s = n->text; *s && j + 1 < sizeof(buf); s++)
        if (*s != '_')
            buf[j++] = *s;
    buf[j] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (!j || *end || errno || !isfinite(v) || strpbrk(buf, "xXnNiI"))
        return imp_error(im, n, "expected a number, got '%s'", n->text);
    *out = v;
    return 0;
}

const struct yt_node *imp_get_key(const struct yt_node *map, const char *key,
                                  const struct yt_node **kn)
{
    const struct yt_pair *p = yt_map_find(map, key);

    if (kn)
        *kn = p ? p->key : NULL;
    return p ? p->value : NULL;
}
