/*
 * yamltree.h - a YAML document as a small tree of mappings, sequences and
 * scalars, each node remembering the byte range it was written at, so every
 * later check can point a diagnostic at it. The only file that includes
 * <yaml.h> is yamltree.c (STYLE.md, one outside library per file).
 *
 * What is accepted: one document of UTF-8 text; mapping keys that are
 * scalars, each at most once per mapping; nesting up to YT_MAX_DEPTH levels,
 * YT_MAX_KEYS keys per mapping and YT_MAX_NODES values per document.
 * Rejected with a diagnostic: YAML syntax errors (at libyaml's mark), invalid
 * UTF-8 and control characters, duplicate keys, anchors and aliases (so no
 * "billion laughs" expansion can happen), tags, complex keys, several
 * documents in one stream. Scalars stay text: typing them (numbers, units,
 * booleans) is the schema's job, which sees whether a scalar was quoted.
 *
 * Memory: every node, string and the copied source text live in the arena the
 * caller passes; nothing is freed separately.
 */
#ifndef SIMTRAIN_YAMLTREE_H
#define SIMTRAIN_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/util.h"

#define YT_MAX_DEPTH 32
#define YT_MAX_KEYS  4096   /* per mapping: duplicate detection is quadratic */
#define YT_MAX_NODES 200000 /* per document: configuration files have hundreds */

enum yt_kind {
    YT_SCALAR,
    YT_SEQ,
    YT_MAP
};

enum yt_style {
    YT_PLAIN,  /* unquoted: may be a number, boolean or null */
    YT_QUOTED, /* 'single' or "double" quoted: always a string */
    YT_BLOCK   /* | literal or > folded: always a string */
};

struct yt_node;

struct yt_pair {
    struct yt_node *key; /* always a scalar */
    struct yt_node *value;
};

struct yt_node {
    enum yt_kind kind;
    enum yt_style style;        /* scalars */
    const char *text;           /* scalars: the value, NUL-terminated; may hold NULs */
    size_t len;                 /* scalars: bytes of text before the terminating NUL */
    struct yt_pair *pairs;      /* mappings, in document order */
    struct yt_node **items;     /* sequences */
    size_t count;               /* pairs or items */
    const struct diag_src *src; /* the text this node was written in */
    size_t off, end;            /* byte range [off, end) in src->text */
};

struct yt_doc {
    struct diag_src src;  /* path and a copy of the text */
    struct yt_node *root; /* NULL when the document is empty */
};

/* Why parsing failed: the error, and an optional note (e.g. a first definition). */
struct yt_error {
    struct diag_mark mark;
    char msg[256];
    struct diag_mark note_mark; /* note_mark.src == NULL: no note */
    char note[128];
};

/*
 * Parse text[start..len) as YAML, shown in diagnostics as `path` (marks are
 * offsets into the whole text, so a command-line argument can be parsed from
 * the byte after '='). Returns the document, or NULL with *err filled. The
 * text and path are copied into `a`.
 */
struct yt_doc *yt_parse(struct arena *a, const char *path, const char *text, size_t len,
                        size_t start, struct yt_error *err);

/* A diagnostic mark covering the node (NULL node: no location). */
struct diag_mark yt_mark(const struct yt_node *n);

/* Plain "", "~", "null", "Null" or "NULL" (YAML 1.2 core schema null). */
bool yt_is_null(const struct yt_node *n);

/* What the node is, for "expected X, got Y" messages: "a mapping", "a list", "null"... */
const char *yt_describe(const struct yt_node *n);

/* The pair whose key text equals `key` in a mapping, or NULL. */
struct yt_pair *yt_map_find(const struct yt_node *map, const char *key);

/* The value for `key` in a mapping, or NULL. */
struct yt_node *yt_map_get(const struct yt_node *map, const char *key);

/* New nodes for programmatic edits (--set): a scalar copy of text[0..len), an empty mapping. */
struct yt_node *yt_new_scalar(struct arena *a, const struct diag_src *src, const char *text,
                              size_t len, size_t off, size_t end);
struct yt_node *yt_new_map(struct arena *a, const struct diag_src *src, size_t off, size_t end);

/* Set map[key] = value: replace the value of an existing key, else append a pair. */
void yt_map_put(struct arena *a, struct yt_node *map, struct yt_node *key, struct yt_node *value);

#endif
