/*
 * assets.h - the files compiled into the binary for the page: every file of src/serve/web/
 * (the page's HTML, CSS and JavaScript) and the Markdown of docs/labs/ (the teaching labs), turned
 * into byte arrays at build time by cmake/embed.cmake (the generated serve_assets_data.c in the
 * build directory). Nothing here is read from disk at run time.
 */
#ifndef SIMTRAIN_SERVE_ASSETS_H
#define SIMTRAIN_SERVE_ASSETS_H

#include <stddef.h>

struct serve_asset {
    const char *name;          /* path in the source tree: "src/serve/web/app.js" */
    const unsigned char *data; /* len bytes, then a NUL */
    size_t len;                /* bytes */
};

/* Every embedded file, sorted by name (generated). */
extern const struct serve_asset serve_assets[];
extern const int serve_nassets;

/* The asset of source path `name`, or NULL. */
const struct serve_asset *assets_find(const char *name);

/* The text of the asset of source path `name` (NUL-terminated), or "" when there is none. */
const char *assets_text(const char *name);

#endif
