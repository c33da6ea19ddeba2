/*
 * api.c - the routes of `simtrain serve` and their replies (api.h): each endpoint loads the
 * posted scenario (api_posted.c), calls the module the command line calls, and writes the
 * same document the command writes with --json.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"
#include "report/report.h"
#include "report/timeline.h"
#include "run/run.h"
#include "serve/api_internal.h"
#include "serve/page.h"
#include "whatif/memory_limits.h"
#include "whatif/plan.h"

#define JSON_TYPE "application/json; charset=utf-8"

void api_limits_default(struct api_limits *l)
{
    l->max_body_bytes = 1 << 20;
    l->max_params = 64;
    l->max_gpus = 65536;
    l->max_task_runs = (double)(1 << 25);
    l->max_seconds = 30;
    l->max_plan_layouts = 1000000;
    l->max_plan_top = 20;
}

void api_ok(struct api_reply *out, const char *type, char *body, size_t len)
{
    memset(out, 0, sizeof(*out));
    out->status = 200;
    out->type = type;
    out->body = body;
    out->len = len;
}

/* {"status": N, "error": message[, "line": L, "column": C][, "diagnostics": text]} */
static void error_reply(struct api_reply *out, int status, const char *msg, int line, int col,
                        const char *diag)
{
    struct membuf m;

    membuf_open(&m);
    fprintf(m.f, "{\"status\":%d,\"error\":", status);
    fput_json_string(m.f, msg);
    if (line > 0)
        fprintf(m.f, ",\"line\":%d,\"column\":%d", line, col);
    if (diag && *diag) {
        fputs(",\"diagnostics\":", m.f);
        fput_json_string(m.f, diag);
    }
    fputs("}\n", m.f);
    memset(out, 0, sizeof(*out));
    out->body = membuf_close(&m, &out->len);
    out->status = status;
    out->type = JSON_TYPE;
}

void api_error(struct api_reply *out, int status, const char *fmt, ...)
{
    va_list ap;
    char msg[768];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    error_reply(out, status, msg, 0, 0, NULL);
}

void api_diag_error(struct api_reply *out, int status, const char *diag)
{
    const char *line = diag, *err = NULL;
    char *first;
    int ln = 0, col = 0;
    size_t n;

    while (line && *line && !err) {
        const char *eol = strchr(line, '\n');
        const char *hit = strstr(line, "error: ");
        if (hit && (!eol || hit < eol))
            err = line;
        else
            line = eol ? eol + 1 : NULL;
    }
    if (!err)
        err = diag && *diag ? diag : "error: the scenario was refused";
    n = strcspn(err, "\n");
    first = xmalloc(n + 1);
    memcpy(first, err, n);
    first[n] = '\0';
    if (strncmp(first, API_SCENARIO_NAME ":", strlen(API_SCENARIO_NAME) + 1) == 0 &&
        sscanf(first + strlen(API_SCENARIO_NAME) + 1, "%d:%d:", &ln, &col) != 2)
        ln = col = 0;
    error_reply(out, status, first, ln, col, diag);
    free(first);
}

void api_reply_release(struct api_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

/* ---- POST endpoints ------------------------------------------------------------------------ */

/* A number in [lo, hi] from query parameter `key` (absent: def); -1 with a 400 reply. */
static int param_number(const struct api_request *rq, const char *key, double lo, double hi,
                        double def, double *out, struct api_reply *err)
{
    const char *v = api_param_value(rq, key);
    char *end;

    *out = def;
    if (!v)
        return 0;
    *out = strtod(v, &end);
    if (end == v || *end || !(*out >= lo && *out <= hi)) {
        char q[48];
        diag_clip(q, sizeof(q), v, strlen(v));
        api_error(err, 400, "query parameter '%s': expected a number in [%g, %g], got '%s'", key,
                  lo, hi, q);
        return -1;
    }
    return 0;
}

/* Simulate the posted scenario into *r; 0, or -1 with the error reply. */
static int simulate(struct posted *p, const struct api_limits *l, bool trace, struct run *r,
                    struct api_reply *out)
{
    struct sim_opts opts = { .trace = trace };
    char reason[512];

    if (run_scenario(p->s, &opts, r, reason, sizeof(reason)) == 0)
        return 0;
    if (!posted_over_budget(p, l, out))
        api_error(out, 400, API_SCENARIO_NAME ": error: %s", reason);
    return -1;
}

static void post_run(const struct api_request *rq, const struct api_limits *l, bool view,
                     struct api_reply *out)
{
    static const char *const view_opts[] = { "from_s", "to_s", "width_px", NULL };
    struct timeline_opts to = { 0 };
    struct posted p;
    struct run r;
    double w = 2000;

    if (view && (param_number(rq, "from_s", 0, 1e9, 0, &to.from_s, out) ||
                 param_number(rq, "to_s", 0, 1e9, 0, &to.to_s, out) ||
                 param_number(rq, "width_px", 100, 20000, 2000, &w, out)))
        return;
    to.width_px = (int)w;
    if (posted_load(rq, l, view ? view_opts : NULL, &p, out) != 0)
        return;
    if (simulate(&p, l, view, &r, out) == 0) {
        char *json = report_json_text(&r);
        if (!view) {
            api_ok(out, JSON_TYPE, json, strlen(json));
        } else {
            struct membuf m;
            membuf_open(&m);
            fputs("{\"run\":", m.f);
            fputs(json, m.f);
            fputs(",\"timeline\":", m.f);
            timeline_write(m.f, &r, &to);
            fputs("}\n", m.f);
            free(json);
            api_ok(out, JSON_TYPE, NULL, 0);
            out->body = membuf_close(&m, &out->len);
        }
        run_release(&r);
    }
    posted_release(&p);
}

static void post_memory(const struct api_request *rq, const struct api_limits *l,
                        struct api_reply *out)
{
    struct posted p;
    struct run r;
    struct memory_limits lim;
    struct membuf m;

    if (posted_load(rq, l, NULL, &p, out) != 0)
        return;
    if (simulate(&p, l, false, &r, out) == 0) {
        memory_limits_run(p.s, &r, &lim);
        if (!posted_over_budget(&p, l, out)) {
            membuf_open(&m);
            memory_limits_write_json(m.f, &r, &lim);
            api_ok(out, JSON_TYPE, NULL, 0);
            out->body = membuf_close(&m, &out->len);
        }
        memory_limits_release(&lim);
        run_release(&r);
    }
    posted_release(&p);
}

static void post_plan(const struct api_request *rq, const struct api_limits *l,
                      struct api_reply *out)
{
    static const char *const plan_opts[] = { "top", "rank", NULL };
    const char *rank = api_param_value(rq, "rank");
    struct plan_opts o = { .top = 5, .shard_n = 1, .max_layouts = l->max_plan_layouts };
    struct plan_result res;
    struct posted p;
    struct membuf m;
    char msg[512];
    double top;

    if (param_number(rq, "top", 1, l->max_plan_top, 5, &top, out))
        return;
    o.top = (int)top;
    if (rank && strcmp(rank, "time") != 0 && strcmp(rank, "cost") != 0) {
        api_error(out, 400, "query parameter 'rank': expected 'time' or 'cost'");
        return;
    }
    o.objective = rank && strcmp(rank, "cost") == 0 ? PLAN_BY_COST : PLAN_BY_TIME;
    if (posted_load(rq, l, plan_opts, &p, out) != 0)
        return;
    if (plan_search(p.s, &o, &res, NULL, msg, sizeof(msg)) != 0) {
        api_error(out, strstr(msg, "the bound on the work of one request") ? 422 : 400,
                  "simtrain plan: error: %s", msg);
    } else {
        if (!posted_over_budget(&p, l, out)) {
            membuf_open(&m);
            plan_write_json(API_SCENARIO_NAME, &res, o.top, m.f);
            api_ok(out, JSON_TYPE, NULL, 0);
            out->body = membuf_close(&m, &out->len);
        }
        plan_result_release(&res);
    }
    posted_release(&p);
}

/* ---- routing ---------------------------------------------------------------------------- */

struct endpoint {
    const char *path;
    const char *method;
    void (*post)(const struct api_request *rq, const struct api_limits *l, struct api_reply *out);
};

static void post_run_only(const struct api_request *rq, const struct api_limits *l,
                          struct api_reply *out)
{
    post_run(rq, l, false, out);
}

static void post_view(const struct api_request *rq, const struct api_limits *l,
                      struct api_reply *out)
{
    post_run(rq, l, true, out);
}

static const struct endpoint routes[] = {
    { "/", "GET", NULL },
    { "/index.html", "GET", NULL },
    { "/api/library", "GET", NULL },
    { "/api/run", "POST", post_run_only },
    { "/api/view", "POST", post_view },
    { "/api/memory", "POST", post_memory },
    { "/api/plan", "POST", post_plan },
};

void api_handle(const struct api_request *rq, const struct api_limits *l, struct api_reply *out)
{
    const struct endpoint *rt = NULL;
    bool head;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < ARRAY_LEN(routes) && !rt; i++)
        if (strcmp(rq->path, routes[i].path) == 0)
            rt = &routes[i];
    if (!rt) {
        char q[80];
        diag_clip(q, sizeof(q), rq->path, strlen(rq->path));
        api_error(out, 404,
                  "no such page or API: '%s' (the API: GET /api/library, POST "
                  "/api/run, /api/view, /api/memory, /api/plan)",
                  q);
        return;
    }
    head = strcmp(rq->method, "HEAD") == 0 && strcmp(rt->method, "GET") == 0;
    if (strcmp(rq->method, rt->method) != 0 && !head) {
        api_error(out, 405, "%s takes %s, not %s", rq->path, rt->method, rq->method);
        out->allow = rt->method;
        return;
    }
    if (rt->post) {
        rt->post(rq, l, out);
    } else if (strcmp(rt->path, "/api/library") == 0) {
        api_library(out);
    } else {
        struct membuf m;
        membuf_open(&m);
        page_write(m.f, NULL);
        api_ok(out, "text/html; charset=utf-8", NULL, 0);
        out->body = membuf_close(&m, &out->len);
    }
}
