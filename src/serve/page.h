/*
 * page.h - the page of `simtrain serve` and of `simtrain SCENARIO --html FILE`: one HTML file
 * with its CSS and JavaScript inline (src/serve/web/, compiled in: assets.h), no network URL in
 * it, so that it works offline. Served, it asks the API (api.h) for the library and the runs;
 * written with --html, it carries one run's data in a <script type="application/json"> and
 * draws that run alone, with no server.
 */
#ifndef SIMTRAIN_SERVE_PAGE_H
#define SIMTRAIN_SERVE_PAGE_H

#include <stdio.h>

#include "run/run.h"

/*
 * Write the page to f with `data_json` (a JSON document, or NULL: the served page) as its
 * embedded data. Returns 0, or -1 when f has an error.
 */
int page_write(FILE *f, const char *data_json);

/*
 * Write the self-contained page of run r (simulated with sim_opts.trace) to `path` ("-" =
 * standard output): the JSON result, the timeline, the memory and the scenario's text
 * (text[0..len), named `name`). Returns 0, or -1 (errno set) when the file cannot be written.
 */
int page_write_run(const char *path, const struct run *r, const char *name, const char *text,
                   size_t len);

#endif
