/*
 * overlay.c - a host-cost overlay (config.h cfg_load_host_overlay()): the file `simtrain
 * calibrate --host` writes, a mapping with one `host:` block of host.* keys, read with the
 * scenario loader's checks (cfg_set) and reported at its place in the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "config/config.h"
#include "config/yamltree.h"

#define OVERLAY_MAX_BYTES (1 << 20)

/* Check and apply one host.KEY: VALUE pair to `s`; 0, or -1 after a diagnostic. */
static int apply_pair(struct scenario *s, const struct yt_pair *p, struct cfg_overlay *o,
                      FILE *diag)
{
    char key[96];
    struct cfg_error err;

    if (p->value->kind != YT_SCALAR) {
        diag_error(diag, yt_mark(p->value), "expected a value for 'host.%s', got %s", p->key->text,
                   yt_describe(p->value));
        return -1;
    }
    snprintf(key, sizeof(key), "host.%s", p->key->text);
    if (cfg_set(s, key, p->value->text, &err) != 0) {
        diag_error(diag, yt_mark(strncmp(err.msg, "unknown key", 11) == 0 ? p->key : p->value),
                   "%s", err.msg);
        return -1;
    }
    if (o->n == CFG_OVERLAY_MAX || strlen(key) >= sizeof(o->key[0]) ||
        strlen(p->value->text) >= sizeof(o->value[0])) {
        diag_error(diag, yt_mark(p->key), "too many or too long host keys in the overlay");
        return -1;
    }
    snprintf(o->key[o->n], sizeof(o->key[0]), "%s", key);
    snprintf(o->value[o->n], sizeof(o->value[0]), "%s", p->value->text);
    o->n++;
    return 0;
}

int cfg_load_host_overlay(const char *path, struct cfg_overlay *out, FILE *diag)
{
    struct arena a;
    struct yt_error ye;
    struct yt_doc *doc;
    const struct yt_node *host;
    struct scenario s;
    const char *why = NULL;
    size_t len;
    char *text = files_read_input(path, OVERLAY_MAX_BYTES, &len, &why);
    int rc = 0;

    if (!text) {
        fprintf(diag, "%s: error: cannot read the overlay: %s\n", path,
                why ? why : strerror(errno));
        return -1;
    }
    arena_init(&a);
    doc = yt_parse(&a, path, text, len, 0, &ye);
    free(text);
    if (!doc) {
        diag_error(diag, ye.mark, "%s", ye.msg);
        arena_release(&a);
        return -1;
    }
    if (!doc->root || doc->root->kind != YT_MAP) {
        fprintf(diag, "%s: error: expected a mapping with a host: block\n", path);
        arena_release(&a);
        return -1;
    }
    for (size_t i = 0; i < doc->root->count; i++) {
        const struct yt_pair *p = &doc->root->pairs[i];
        if (strcmp(p->key->text, "host") != 0) {
            diag_error(diag, yt_mark(p->key), "unknown key '%s' in the overlay (it holds host:)",
                       p->key->text);
            rc = -1;
        }
    }
    host = yt_map_get(doc->root, "host");
    if (rc == 0 && (!host || host->kind != YT_MAP)) {
        diag_error(diag, host ? yt_mark(host) : (struct diag_mark){ &doc->src, 0, 1 },
                   "expected a host: mapping of host costs");
        rc = -1;
    }
    memset(out, 0, sizeof(*out));
    scenario_defaults(&s);
    for (size_t i = 0; rc == 0 && i < host->count; i++)
        rc = apply_pair(&s, &host->pairs[i], out, diag);
    arena_release(&a);
    return rc;
}

int cfg_apply_overlay(struct scenario *s, const struct cfg_overlay *o, struct cfg_error *err)
{
    for (int i = 0; i < o->n; i++)
        if (cfg_set(s, o->key[i], o->value[i], err) != 0)
            return -1;
    return 0;
}
