/* yamltree.c - libyaml events to a node tree with source marks; see yamltree.h. */
#include "config/yamltree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/*
 * libyaml marks count characters; nodes keep byte offsets. Start marks arrive
 * in order, and so do end marks, but an end can lie past the next start: one
 * cursor each keeps the conversion linear.
 */
struct charpos {
    const char *text;
    size_t len;
    size_t base;  /* byte offset where parsing started */
    size_t chars; /* characters consumed so far */
    size_t bytes; /* bytes consumed so far (relative to base) */
};

static size_t utf8_width(unsigned char c)
{
    return c < 0x80             ? 1
           : (c & 0xE0) == 0xC0 ? 2
           : (c & 0xF0) == 0xE0 ? 3
           : (c & 0xF8) == 0xF0 ? 4
                                : 1;
}

static size_t byte_offset(struct charpos *cp, size_t index)
{
    if (index < cp->chars) {
        cp->chars = 0;
        cp->bytes = 0;
    }
    while (cp->chars < index && cp->base + cp->bytes < cp->len) {
        cp->bytes += utf8_width((unsigned char)cp->text[cp->base + cp->bytes]);
        cp->chars++;
    }
    if (cp->base + cp->bytes > cp->len)
        cp->bytes = cp->len - cp->base;
    return cp->base + cp->bytes;
}

/* An open mapping or sequence while its events arrive. */
struct frame {
    struct yt_node *node;
    struct yt_node *key; /* mappings: key waiting for its value */
    struct yt_pair *pairs;
    struct yt_node **items;
    size_t count, cap;
};

struct builder {
    struct arena *a;
    struct yt_doc *doc;
    struct charpos cp;     /* start marks */
    struct charpos cp_end; /* end marks */
    struct frame stack[YT_MAX_DEPTH];
    int depth;
    int docs;
    size_t nodes; /* created so far, against YT_MAX_NODES */
    struct yt_error *err;
};

static int fail(struct builder *b, size_t off, size_t end, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct builder *b, size_t off, size_t end, const char *fmt, ...)
{
    va_list ap;

    b->err->mark = (struct diag_mark){ &b->doc->src, off, end > off ? end - off : 1 };
    va_start(ap, fmt);
    vsnprintf(b->err->msg, sizeof(b->err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

static struct yt_node *new_node(struct builder *b, enum yt_kind kind, const yaml_event_t *ev)
{
    struct yt_node *n = arena_alloc(b->a, sizeof(*n));

    b->nodes++;
    n->kind = kind;
    n->src = &b->doc->src;
    n->off = byte_offset(&b->cp, ev->start_mark.index);
    n->end = byte_offset(&b->cp_end, ev->end_mark.index);
    return n;
}

static int add_key(struct builder *b, struct frame *f, struct yt_node *key)
{
    if (f->count >= YT_MAX_KEYS)
        return fail(b, key->off, key->end, "more than %d keys in one mapping", YT_MAX_KEYS);
    for (size_t i = 0; i < f->count; i++) {
        const struct yt_node *k = f->pairs[i].key;

        if (k->len == key->len && memcmp(k->text, key->text, k->len) == 0) {
            char q[80];
            int line, col;

            diag_clip(q, sizeof(q), key->text, key->len);
            diag_locate(k->src, k->off, &line, &col);
            b->err->note_mark = yt_mark(k);
            snprintf(b->err->note, sizeof(b->err->note), "'%s' first defined here", q);
            return fail(b, key->off, key->end, "duplicate key '%s' (first defined at line %d)", q,
                        line);
        }
    }
    f->key = key;
    return 0;
}

/* Hand a finished node to the open collection, or make it the root. */
static int attach(struct builder *b, struct yt_node *n)
{
    struct frame *f;

    if (b->depth == 0) {
        b->doc->root = n;
        return 0;
    }
    f = &b->stack[b->depth - 1];
    if (f->node->kind == YT_SEQ) {
        grow_array((void **)&f->items, &f->cap, f->count + 1, sizeof(*f->items));
        f->items[f->count++] = n;
        return 0;
    }
    if (!f->key) {
        if (n->kind != YT_SCALAR)
            return fail(b, n->off, n->end, "mapping keys must be scalars, not %s", yt_describe(n));
        return add_key(b, f, n);
    }
    grow_array((void **)&f->pairs, &f->cap, f->count + 1, sizeof(*f->pairs));
    f->pairs[f->count++] = (struct yt_pair){ f->key, n };
    f->key = NULL;
    return 0;
}

static int open_collection(struct builder *b, const yaml_event_t *ev, enum yt_kind kind)
{
    struct frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
    struct yt_node *n = new_node(b, kind, ev);

    if (top && top->node->kind == YT_MAP && !top->key)
        return fail(b, n->off, n->off + 1, "mapping keys must be scalars, not %s",
                    kind == YT_MAP ? "a mapping" : "a list");
    if (b->depth == YT_MAX_DEPTH)
        return fail(b, n->off, n->off + 1, "nesting deeper than %d levels", YT_MAX_DEPTH);
    b->stack[b->depth++] = (struct frame){ .node = n };
    return 0;
}

static int close_collection(struct builder *b, const yaml_event_t *ev)
{
    struct frame *f = &b->stack[--b->depth];
    struct yt_node *n = f->node;

    n->end = byte_offset(&b->cp_end, ev->end_mark.index);
    n->count = f->count;
    if (n->kind == YT_MAP && f->count) {
        n->pairs = arena_alloc(b->a, f->count * sizeof(*n->pairs));
        memcpy(n->pairs, f->pairs, f->count * sizeof(*n->pairs));
    } else if (n->kind == YT_SEQ && f->count) {
        n->items = arena_alloc(b->a, f->count * sizeof(*n->items));
        memcpy(n->items, f->items, f->count * sizeof(*n->items));
    }
    free(f->pairs);
    free(f->items);
    return attach(b, n);
}

/* Anchors, aliases and tags are refused: the configuration format needs none of them. */
static int check_props(struct builder *b, const yaml_event_t *ev, const yaml_char_t *anchor,
                       const yaml_char_t *tag, bool implicit_tag)
{
    size_t off = byte_offset(&b->cp, ev->start_mark.index);
    size_t end = byte_offset(&b->cp_end, ev->end_mark.index);

    if (anchor)
        return fail(b, off, end, "anchors and aliases are not supported");
    if (tag && !implicit_tag)
        return fail(b, off, end, "tags are not supported");
    return 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
    const yaml_char_t *tag = ev->data.scalar.tag;
    bool implicit = ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit;
    struct yt_node *n;
    char *text;

    if (check_props(b, ev, ev->data.scalar.anchor, tag, implicit && !tag))
        return -1;
    n = new_node(b, YT_SCALAR, ev);
    text = arena_alloc(b->a, ev->data.scalar.length + 1);
    memcpy(text, ev->data.scalar.value, ev->data.scalar.length);
    n->text = text;
    n->len = ev->data.scalar.length;
    switch (ev->data.scalar.style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
        n->style = YT_QUOTED;
        break;
    case YAML_LITERAL_SCALAR_STYLE:
    case YAML_FOLDED_SCALAR_STYLE:
        n->style = YT_BLOCK;
        break;
    default:
        n->style = YT_PLAIN;
        break;
    }
    return attach(b, n);
}

static int on_event(struct builder *b, const yaml_event_t *ev, bool *done)
{
    if (b->nodes >= YT_MAX_NODES) {
        size_t off = byte_offset(&b->cp, ev->start_mark.index);
        return fail(b, off, off + 1, "more than %d values in one document", YT_MAX_NODES);
    }
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->docs > 1) {
            size_t off = byte_offset(&b->cp, ev->start_mark.index);
            return fail(b, off, off + 3, "more than one YAML document in one file");
        }
        return 0;
    case YAML_STREAM_END_EVENT:
        *done = true;
        return 0;
    case YAML_ALIAS_EVENT: {
        size_t off = byte_offset(&b->cp, ev->start_mark.index);
        return fail(b, off, byte_offset(&b->cp_end, ev->end_mark.index),
                    "anchors and aliases are not supported");
    }
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        if (check_props(b, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag,
                        ev->data.sequence_start.implicit && !ev->data.sequence_start.tag))
            return -1;
        return open_collection(b, ev, YT_SEQ);
    case YAML_MAPPING_START_EVENT:
        if (check_props(b, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag,
                        ev->data.mapping_start.implicit && !ev->data.mapping_start.tag))
            return -1;
        return open_collection(b, ev, YT_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_collection(b, ev);
    default:
        return 0;
    }
}

static int syntax_error(struct builder *b, const yaml_parser_t *p)
{
    size_t off, end;

    if (p->error == YAML_MEMORY_ERROR) {
        fprintf(stderr, "simtrain: out of memory in the YAML parser\n");
        abort();
    }
    if (p->error == YAML_READER_ERROR) {
        off = b->cp.base + p->problem_offset;
        if (off > b->cp.len)
            off = b->cp.len;
        if (p->problem_value != -1)
            return fail(b, off, off + 1, "invalid YAML: %s (byte 0x%02X)",
                        p->problem ? p->problem : "reader error",
                        (unsigned)p->problem_value & 0xFF);
        return fail(b, off, off + 1, "invalid YAML: %s", p->problem ? p->problem : "reader error");
    }
    off = byte_offset(&b->cp, p->problem_mark.index);
    end = off + 1;
    if (p->context) {
        b->err->note_mark =
            (struct diag_mark){ &b->doc->src, byte_offset(&b->cp, p->context_mark.index), 1 };
        snprintf(b->err->note, sizeof(b->err->note), "%s", p->context);
    }
    return fail(b, off, end, "invalid YAML: %s", p->problem ? p->problem : "syntax error");
}

static void unwind(struct builder *b)
{
    while (b->depth > 0) {
        struct frame *f = &b->stack[--b->depth];
        free(f->pairs);
        free(f->items);
    }
}

struct yt_doc *yt_parse(struct arena *a, const char *path, const char *text, size_t len,
                        size_t start, struct yt_error *err)
{
    struct builder b = { .a = a, .err = err };
    yaml_parser_t parser;
    yaml_event_t ev;
    bool done = false;
    char *copy;
    int rc = 0;

    memset(err, 0, sizeof(*err));
    b.doc = arena_alloc(a, sizeof(*b.doc));
    copy = arena_alloc(a, len + 1);
    memcpy(copy, text, len);
    b.doc->src = (struct diag_src){ arena_strdup(a, path), copy, len };
    if (start > len)
        start = len;
    /* A byte-order mark may open a YAML 1.2 stream (§5.2). libyaml, told the encoding, would
     * count it as a column of the first line and misread the first key's indentation. */
    if (start == 0 && len >= 3 && !memcmp(copy, "\xEF\xBB\xBF", 3))
        start = 3;
    b.cp = (struct charpos){ copy, len, start, 0, 0 };
    b.cp_end = b.cp;
    if (!yaml_parser_initialize(&parser)) {
        fprintf(stderr, "simtrain: out of memory in the YAML parser\n");
        abort();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)copy + start, len - start);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    while (!done && rc == 0) {
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = syntax_error(&b, &parser);
            break;
        }
        rc = on_event(&b, &ev, &done);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    unwind(&b);
    return rc ? NULL : b.doc;
}

struct diag_mark yt_mark(const struct yt_node *n)
{
    if (!n)
        return (struct diag_mark){ NULL, DIAG_NO_POS, 0 };
    return (struct diag_mark){ n->src, n->off, n->end > n->off ? n->end - n->off : 1 };
}

bool yt_is_null(const struct yt_node *n)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

    if (!n || n->kind != YT_SCALAR || n->style != YT_PLAIN)
        return false;
    for (size_t i = 0; i < ARRAY_LEN(nulls); i++)
        if (strlen(nulls[i]) == n->len && memcmp(nulls[i], n->text, n->len) == 0)
            return true;
    return false;
}

const char *yt_describe(const struct yt_node *n)
{
    if (!n)
        return "nothing";
    if (n->kind == YT_MAP)
        return "a mapping";
    if (n->kind == YT_SEQ)
        return "a list";
    if (yt_is_null(n))
        return "null";
    return n->style == YT_PLAIN ? "a scalar" : "a quoted string";
}

struct yt_pair *yt_map_find(const struct yt_node *map, const char *key)
{
    size_t n = strlen(key);

    if (!map || map->kind != YT_MAP)
        return NULL;
    for (size_t i = 0; i < map->count; i++) {
        const struct yt_node *k = map->pairs[i].key;

        if (k->len == n && memcmp(k->text, key, n) == 0)
            return &map->pairs[i];
    }
    return NULL;
}

struct yt_node *yt_map_get(const struct yt_node *map, const char *key)
{
    struct yt_pair *p = yt_map_find(map, key);

    return p ? p->value : NULL;
}

struct yt_node *yt_new_scalar(struct arena *a, const struct diag_src *src, const char *text,
                              size_t len, size_t off, size_t end)
{
    struct yt_node *n = arena_alloc(a, sizeof(*n));
    char *t = arena_alloc(a, len + 1);

    memcpy(t, text, len);
    n->kind = YT_SCALAR;
    n->style = YT_PLAIN;
    n->text = t;
    n->len = len;
    n->src = src;
    n->off = off;
    n->end = end;
    return n;
}

struct yt_node *yt_new_map(struct arena *a, const struct diag_src *src, size_t off, size_t end)
{
    struct yt_node *n = arena_alloc(a, sizeof(*n));

    n->kind = YT_MAP;
    n->src = src;
    n->off = off;
    n->end = end;
    return n;
}

void yt_map_put(struct arena *a, struct yt_node *map, struct yt_node *key, struct yt_node *value)
{
    struct yt_pair *p = yt_map_find(map, key->text);
    struct yt_pair *pairs;

    if (p) {
        p->value = value;
        return;
    }
    pairs = arena_alloc(a, (map->count + 1) * sizeof(*pairs));
    if (map->count)
        memcpy(pairs, map->pairs, map->count * sizeof(*pairs));
    pairs[map->count++] = (struct yt_pair){ key, value };
    map->pairs = pairs;
}
