/*
 * page.c - the page from its embedded parts (page.h): index.html with its @@STYLE@@,
 * @@SCRIPT@@ and @@DATA@@ markers replaced by style.css, app.js and the data.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include "serve/page.h"

#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "base/util.h"
#include "report/report.h"
#include "report/timeline.h"
#include "serve/assets.h"

#define WEB "src/serve/web/"

/*
 * JSON inside <script>: every '<' as \u003c and every '/' as \/ (both occur only inside
 * strings; JSON.parse reads them back unchanged), so that no "</script>" or "<!--" of a
 * scenario's text can end the element, and no URL a comment or a source cites appears as one
 * in the page.
 */
static void put_data(FILE *f, const char *json)
{
    for (const char *p = json; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", f);
        else if (*p == '/')
            fputs("\\/", f);
        else
            fputc(*p, f);
    }
}

/* Every script of the page (the .js files of src/serve/web, in name order), inline. */
static void put_scripts(FILE *f)
{
    size_t n = strlen(WEB);

    for (int i = 0; i < serve_nassets; i++) {
        const char *name = serve_assets[i].name;
        size_t len = strlen(name);

        if (strncmp(name, WEB, n) == 0 && len > 3 && strcmp(name + len - 3, ".js") == 0)
            fwrite(serve_assets[i].data, 1, serve_assets[i].len, f);
    }
}

int page_write(FILE *f, const char *data_json)
{
    const char *page = assets_text(WEB "index.html");

    while (*page) {
        const char *m = strstr(page, "@@");

        if (!m) {
            fputs(page, f);
            break;
        }
        fwrite(page, 1, (size_t)(m - page), f);
        if (strncmp(m, "@@STYLE@@", 9) == 0) {
            fputs(assets_text(WEB "style.css"), f);
            page = m + 9;
        } else if (strncmp(m, "@@SCRIPT@@", 10) == 0) {
            put_scripts(f);
            page = m + 10;
        } else if (strncmp(m, "@@DATA@@", 8) == 0) {
            put_data(f, data_json ? data_json : "null");
            page = m + 8;
        } else {
            fputs("@@", f);
            page = m + 2;
        }
    }
    return ferror(f) ? -1 : 0;
}

int page_write_run(const char *path, const struct run *r, const char *name, const char *text,
                   size_t len)
{
    char *json = report_json_text(r), *data = NULL, *scen;
    size_t n = 0;
    FILE *m = open_memstream(&data, &n), *f;
    int rc;

    if (!m) {
        fprintf(stderr, "simtrain: out of memory opening a memory stream\n");
        abort();
    }
    scen = xmalloc(len + 1);
    memcpy(scen, text ? text : "", len);
    scen[len] = '\0';
    fputs("{\"mode\":\"static\",\"run\":", m);
    fputs(json, m);
    fputs(",\"timeline\":", m);
    timeline_write(m, r, NULL);
    fputs(",\"scenario\":{\"name\":", m);
    fput_json_string(m, name);
    fputs(",\"text\":", m);
    fput_json_string(m, scen);
    fputs("}}\n", m);
    fclose(m);
    free(json);
    free(scen);
    f = files_open_output(path);
    if (!f) {
        free(data);
        return -1;
    }
    page_write(f, data);
    rc = files_close_output(f);
    free(data);
    return rc;
}
