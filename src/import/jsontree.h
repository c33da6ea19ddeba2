/*
 * jsontree.h - a JSON document (a Hugging Face config.json, a DeepSpeed config) as the node
 * tree the YAML front end builds (config/yamltree.h), so that the importers read JSON and YAML
 * the same way and every diagnostic points at the key or value it is about.
 *
 * cJSON parses and validates (this file and report/json_out.c are the only ones that include
 * it, the reader and the writer); cJSON keeps no positions, so the tree is laid over the text
 * in a second walk that lets cJSON delimit each string and number token. Accepted: one JSON
 * value of UTF-8 text. Refused with a diagnostic: cJSON's syntax errors (at its error
 * pointer, as line:col), invalid UTF-8, a key repeated in one object (Python's json keeps the
 * last, DeepSpeed refuses it), nesting deeper than YT_MAX_DEPTH, more than YT_MAX_KEYS keys in
 * an object or YT_MAX_NODES values.
 *
 * Nodes: objects are YT_MAP with their keys as quoted scalars (the decoded text), arrays YT_SEQ,
 * strings YT_QUOTED scalars of their decoded text, numbers, true, false and null YT_PLAIN
 * scalars of their source text. Memory: everything lives in the caller's arena.
 */
#ifndef SIMTRAIN_IMPORT_JSONTREE_H
#define SIMTRAIN_IMPORT_JSONTREE_H

#include <stddef.h>

#include "base/util.h"
#include "config/yamltree.h"

/*
 * Parse text[0..len) as JSON, named `path` in diagnostics. Returns the document (its root a
 * map, list or scalar), or NULL with *err filled (mark and message).
 */
struct yt_doc *jt_parse(struct arena *a, const char *path, const char *text, size_t len,
                        struct yt_error *err);

#endif
