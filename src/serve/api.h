/*
 * api.h - what `simtrain serve` answers, as a function from a request to a reply, apart from
 * HTTP (serve.c carries it over libmicrohttpd; the tests call it directly):
 *
 *   GET  /                 the page (page.h), HTML with its CSS and JavaScript inline
 *   GET  /api/library      the shipped hardware, workloads, frameworks, scenarios (with their
 *                          text) and teaching labs (docs/labs, compiled in)
 *   POST /api/run          body: a scenario's YAML; the JSON of `simtrain SCENARIO --json -`
 *   POST /api/memory       the JSON of `simtrain memory SCENARIO --json -`
 *   POST /api/plan         the JSON of `simtrain plan SCENARIO --json -` (query: top, rank)
 *   POST /api/view         {"run": the /api/run document, "timeline": the step's timeline
 *                          (report/timeline.h; query: from_s, to_s, width_px)}, one simulation
 *
 * The posted text is the file `scenario.yaml` (diagnostics name it so); every other query
 * parameter is a `--set KEY=VALUE` override (`/api/run?parallelism.tp=4`). A posted scenario
 * names shipped library entries only, never a file (config.h, cfg_load_scenario_posted()).
 * Errors are JSON, {"status": N, "error": the CLI's first diagnostic line, "line": L,
 * "column": C (where it points into the posted text), "diagnostics": every line}, with a 4xx
 * status: 400 bad input, 404, 405, 413 body over the limit, 422 work over the bounds.
 *
 * Each request is on its own: nothing is kept between requests, and api_handle() may run on
 * several threads at once (the simulator keeps no global state but the list of files read,
 * base/files.h, which is locked). It never exits the process.
 */
#ifndef SIMTRAIN_SERVE_API_H
#define SIMTRAIN_SERVE_API_H

#include <stddef.h>

/* One query parameter, URL-decoded. */
struct api_param {
    const char *key, *value;
};

struct api_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* without the query: "/api/run" */
    const struct api_param *params;
    int nparams;
    const char *body; /* the request body (may hold NULs); NULL when empty */
    size_t len;       /* bytes */
};

/* The bounds on one request's work, refused with a message above them. */
struct api_limits {
    size_t max_body_bytes; /* request body (413 above) */
    int max_params;        /* query parameters */
    int max_gpus;          /* GPUs of the posted job */
    double max_task_runs;  /* engine work of the request, all its steps together (engine/sim.h) */
    double max_seconds;    /* no step of the request starts after this long, s */
    long max_plan_layouts; /* layouts a plan search may enumerate */
    int max_plan_top;      /* plan's top K */
};

/* The defaults of `simtrain serve` (docs/user-guide.md): 1 MiB, 64, 65536, 2^25, 30 s, 10^6,
 * 20. */
void api_limits_default(struct api_limits *l);

struct api_reply {
    int status;        /* HTTP status */
    const char *type;  /* Content-Type (static text) */
    char *body;        /* heap, owned by the reply */
    size_t len;        /* bytes of body */
    const char *allow; /* 405: the Allow header (static text), else NULL */
};

/* Answer one request into *out (release it with api_reply_release()). Never fails. */
void api_handle(const struct api_request *rq, const struct api_limits *l, struct api_reply *out);

/* An error reply: {"status": status, "error": message} (printf-style message). */
void api_error(struct api_reply *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void api_reply_release(struct api_reply *r);

#endif
