/*
 * jsontree.c - JSON text to the node tree of config/yamltree.h; see jsontree.h.
 *
 * This is the only file besides report/json_out.c (the writer) that includes cJSON: the
 * importers read config.json and DeepSpeed files through it, and cJSON confined to one reader
 * and one writer keeps the rule of one outside library per concern (STYLE.md).
 *
 * Two passes. cJSON parses the whole text (the validation, and the values of strings). Then
 * walk() lays the tree over the text in document order: it skips the whitespace and the
 * structural characters between tokens of the text cJSON accepted, and asks cJSON where each
 * key, string and number token ends (cJSON_ParseWithLengthOpts on the rest of the text), so
 * every node gets its byte range without a JSON grammar of its own. A mismatch between the two
 * passes is reported as an error, never trusted.
 */
#include "import/jsontree.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct walker {
    struct arena *a;
    struct yt_doc *doc;
    const char *text; /* the arena copy, NUL-terminated */
    size_t len;
    size_t nodes;
    struct yt_error *err;
};

static int fail(struct walker *w, size_t off, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct walker *w, size_t off, size_t n, const char *fmt, ...)
{
    va_list ap;

    w->err->mark = (struct diag_mark){ &w->doc->src, off < w->len ? off : w->len, n ? n : 1 };
    va_start(ap, fmt);
    vsnprintf(w->err->msg, sizeof(w->err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* The length of the UTF-8 sequence at s[0..n), or 0 when it is not valid UTF-8. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : 4;
    unsigned cp;

    if (s[0] >= 0xF8 || (s[0] >= 0x80 && s[0] < 0xC2) || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 1)
        return 1;
    cp = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3F);
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Invalid UTF-8 and control characters (outside tab, newline and return) are refused. */
static int check_text(struct walker *w)
{
    const unsigned char *s = (const unsigned char *)w->text;

    for (size_t i = 0; i < w->len;) {
        size_t n = utf8_seq(s + i, w->len - i);
        if (n == 0)
            return fail(w, i, 1, "invalid UTF-8 (byte 0x%02X)", s[i]);
        if (n == 1 && s[i] < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return fail(w, i, 1, "control character 0x%02X in JSON text", s[i]);
        i += n;
    }
    return 0;
}

static size_t skip_ws(const struct walker *w, size_t p)
{
    while (p < w->len &&
           (w->text[p] == ' ' || w->text[p] == '\t' || w->text[p] == '\n' || w->text[p] == '\r'))
        p++;
    return p;
}

/* Where the token (a string, number or literal) at byte p ends, as cJSON reads it; 0 on error. */
static size_t token_end(struct walker *w, size_t p)
{
    const char *end = NULL;
    cJSON *t = cJSON_ParseWithLengthOpts(w->text + p, w->len - p, &end, 0);

    if (!t || !end || end <= w->text + p) {
        cJSON_Delete(t);
        fail(w, p, 1, "JSON token out of step with the parser");
        return 0;
    }
    cJSON_Delete(t);
    return (size_t)(end - w->text);
}

static struct yt_node *new_node(struct walker *w, enum yt_kind kind, enum yt_style style,
                                size_t off)
{
    struct yt_node *n = arena_alloc(w->a, sizeof(*n));

    w->nodes++;
    n->kind = kind;
    n->style = style;
    n->src = &w->doc->src;
    n->off = off;
    return n;
}

static void set_text(struct walker *w, struct yt_node *n, const char *s, size_t len)
{
    char *t = arena_alloc(w->a, len + 1);

    memcpy(t, s, len);
    n->text = t;
    n->len = len;
}

/* Expect character c at *p (after whitespace) and step over it. */
static int expect(struct walker *w, size_t *p, char c)
{
    *p = skip_ws(w, *p);
    if (*p >= w->len || w->text[*p] != c)
        return fail(w, *p, 1, "JSON text out of step with the parser (expected '%c')", c);
    (*p)++;
    return 0;
}

static struct yt_node *walk(struct walker *w, const cJSON *item, size_t *pos, int depth);

/* A key of an object: its token, decoded text and the check against the keys before it. */
static struct yt_node *walk_key(struct walker *w, const cJSON *child, struct yt_pair *pairs,
                                size_t count, size_t *p)
{
    size_t off = skip_ws(w, *p), end = token_end(w, off);
    struct yt_node *k;

    if (!end)
        return NULL;
    k = new_node(w, YT_SCALAR, YT_QUOTED, off);
    k->end = end;
    set_text(w, k, child->string ? child->string : "", child->string ? strlen(child->string) : 0);
    for (size_t i = 0; i < count; i++)
        if (pairs[i].key->len == k->len && memcmp(pairs[i].key->text, k->text, k->len) == 0) {
            char q[80];
            int line, col;

            diag_clip(q, sizeof(q), k->text, k->len);
            diag_locate(&w->doc->src, pairs[i].key->off, &line, &col);
            w->err->note_mark = yt_mark(pairs[i].key);
            snprintf(w->err->note, sizeof(w->err->note), "'%s' first defined here", q);
            fail(w, off, end - off, "duplicate key '%s' (first defined at line %d)", q, line);
            return NULL;
        }
    *p = end;
    return k;
}

static int walk_object(struct walker *w, const cJSON *item, struct yt_node *n, size_t *p, int depth)
{
    size_t count = 0, i = 0;

    for (const cJSON *c = item->child; c; c = c->next)
        count++;
    if (count > YT_MAX_KEYS)
        return fail(w, n->off, 1, "more than %d keys in one object", YT_MAX_KEYS);
    n->pairs = count ? arena_alloc(w->a, count * sizeof(*n->pairs)) : NULL;
    if (expect(w, p, '{'))
        return -1;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        struct yt_node *k = walk_key(w, c, n->pairs, i, p), *v;
        if (!k || expect(w, p, ':') || !(v = walk(w, c, p, depth + 1)))
            return -1;
        n->pairs[i] = (struct yt_pair){ k, v };
        n->count = i + 1;
        if (c->next && expect(w, p, ','))
            return -1;
    }
    return expect(w, p, '}');
}

static int walk_array(struct walker *w, const cJSON *item, struct yt_node *n, size_t *p, int depth)
{
    size_t count = 0, i = 0;

    for (const cJSON *c = item->child; c; c = c->next)
        count++;
    n->items = count ? arena_alloc(w->a, count * sizeof(*n->items)) : NULL;
    if (expect(w, p, '['))
        return -1;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        if (!(n->items[i] = walk(w, c, p, depth + 1)))
            return -1;
        n->count = i + 1;
        if (c->next && expect(w, p, ','))
            return -1;
    }
    return expect(w, p, ']');
}

/* The node of `item`, whose text starts at or after *pos; *pos ends up after it. */
static struct yt_node *walk(struct walker *w, const cJSON *item, size_t *pos, int depth)
{
    size_t p = skip_ws(w, *pos);
    bool map = cJSON_IsObject(item), seq = cJSON_IsArray(item);
    struct yt_node *n;

    if (w->nodes >= YT_MAX_NODES) {
        fail(w, p, 1, "more than %d values in one document", YT_MAX_NODES);
        return NULL;
    }
    if ((map || seq) && depth >= YT_MAX_DEPTH) {
        fail(w, p, 1, "nesting deeper than %d levels", YT_MAX_DEPTH);
        return NULL;
    }
    n = new_node(w,
                 map   ? YT_MAP
                 : seq ? YT_SEQ
                       : YT_SCALAR,
                 cJSON_IsString(item) ? YT_QUOTED : YT_PLAIN, p);
    if (map || seq) {
        if ((map ? walk_object : walk_array)(w, item, n, &p, depth))
            return NULL;
    } else {
        size_t end = token_end(w, p);
        if (!end)
            return NULL;
        if (cJSON_IsString(item))
            set_text(w, n, item->valuestring, strlen(item->valuestring));
        else
            set_text(w, n, w->text + p, end - p);
        p = end;
    }
    n->end = p;
    *pos = p;
    return n;
}

/* cJSON's refusal at its error pointer, with what stands there. */
static int syntax_error(struct walker *w, const char *at)
{
    size_t off = at && at >= w->text && at <= w->text + w->len ? (size_t)(at - w->text) : 0;
    char q[16];

    if (off >= w->len || skip_ws(w, off) >= w->len) {
        /* cJSON points past the end when an object or list closes after a trailing comma */
        size_t i = w->len;
        while (i > 0 && strchr(" \t\r\n", w->text[i - 1]))
            i--;
        if (i > 0 && (w->text[i - 1] == '}' || w->text[i - 1] == ']')) {
            size_t c = i - 1;
            while (c > 0 && strchr(" \t\r\n", w->text[c - 1]))
                c--;
            if (c > 0 && w->text[c - 1] == ',')
                return fail(w, c - 1, 1, "invalid JSON: a trailing ',' before '%c'",
                            w->text[i - 1]);
        }
        return fail(w, w->len, 1, "invalid JSON: unexpected end of the text");
    }
    diag_clip(q, sizeof(q), w->text + off,
              utf8_seq((const unsigned char *)w->text + off, w->len - off));
    return fail(w, off, 1, "invalid JSON: unexpected '%s'", q);
}

struct yt_doc *jt_parse(struct arena *a, const char *path, const char *text, size_t len,
                        struct yt_error *err)
{
    struct walker w = { .a = a, .err = err };
    const char *end = NULL;
    char *copy = arena_alloc(a, len + 1);
    cJSON *root;
    size_t p = 0;

    memset(err, 0, sizeof(*err));
    memcpy(copy, text, len);
    w.doc = arena_alloc(a, sizeof(*w.doc));
    w.doc->src = (struct diag_src){ arena_strdup(a, path), copy, len };
    w.text = copy;
    w.len = len;
    if (check_text(&w))
        return NULL;
    if (len >= 3 && memcmp(copy, "\xEF\xBB\xBF", 3) == 0)
        p = 3; /* cJSON skips a byte-order mark */
    /* the terminating NUL counts: cJSON then refuses anything but whitespace after the value */
    root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
    if (!root) {
        syntax_error(&w, end);
        return NULL;
    }
    w.doc->root = walk(&w, root, &p, 0);
    cJSON_Delete(root);
    if (!w.doc->root)
        return NULL;
    if (skip_ws(&w, p) != len) {
        fail(&w, p, 1, "JSON text out of step with the parser (text after the value)");
        return NULL;
    }
    return w.doc;
}
