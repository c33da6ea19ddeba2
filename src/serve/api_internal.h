/*
 * api_internal.h - what the files of the API share (private to serve/): the posted scenario
 * with its overrides and work bound (api_posted.c), the library listing (api_library.c), and
 * the reply helpers (api.c).
 */
#ifndef SIMTRAIN_SERVE_API_INTERNAL_H
#define SIMTRAIN_SERVE_API_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "config/config.h"
#include "engine/sim.h"
#include "serve/api.h"

#define API_SCENARIO_NAME "scenario.yaml" /* the posted text, as diagnostics name it */

/* A scenario posted with a request, loaded, bounded and ready to simulate. */
struct posted {
    struct scenario *s;
    struct sim_budget budget; /* s->sim.budget points here */
};

/*
 * Load the request's body as a scenario with its query parameters as overrides, except the
 * names in `options` (NULL-terminated: the endpoint's own parameters). Checks the bounds of l
 * that apply before any simulation and sets the engine budget. 0, or -1 with the error reply
 * in *err (400 with the loader's diagnostics, 413, 422).
 */
int posted_load(const struct api_request *rq, const struct api_limits *l,
                const char *const *options, struct posted *p, struct api_reply *err);
void posted_release(struct posted *p);

/* After the work of a request: a 422 reply when its budget was spent (the result is partial). */
bool posted_over_budget(const struct posted *p, const struct api_limits *l, struct api_reply *err);

/* The value of query parameter `key`, or NULL. */
const char *api_param_value(const struct api_request *rq, const char *key);

/* A 400 reply from the loader's diagnostics text (the first error line, its line:col). */
void api_diag_error(struct api_reply *out, int status, const char *diag);

/* A 200 reply of Content-Type `type` taking ownership of body[0..len). */
void api_ok(struct api_reply *out, const char *type, char *body, size_t len);

/* GET /api/library. */
void api_library(struct api_reply *out);

/* A text being written: open_memstream() that aborts on failure (out of memory). */
struct membuf {
    FILE *f;
    char *buf;
    size_t len;
};
void membuf_open(struct membuf *m);
/* Close and return the text (heap, caller frees); *len its bytes. */
char *membuf_close(struct membuf *m, size_t *len);

#endif
