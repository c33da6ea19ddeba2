/* assets.c - the embedded files by name; see assets.h. */
#include "serve/assets.h"

#include <string.h>

const struct serve_asset *assets_find(const char *name)
{
    for (int i = 0; i < serve_nassets; i++)
        if (strcmp(serve_assets[i].name, name) == 0)
            return &serve_assets[i];
    return NULL;
}

const char *assets_text(const char *name)
{
    const struct serve_asset *a = assets_find(name);

    return a ? (const char *)a->data : "";
}
