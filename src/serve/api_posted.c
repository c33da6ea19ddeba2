/*
 * api_posted.c - the scenario a request posts: its body loaded as the file scenario.yaml
 * with the query parameters as `--set` overrides, library references only
 * (cfg_load_scenario_posted()), the diagnostics captured for the reply, and the bounds on the
 * request's work checked before anything is simulated.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"
#include "config/schema.h"
#include "serve/api_internal.h"
#include "strategy/size.h"

void membuf_open(struct membuf *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    if (!m->f) {
        fprintf(stderr, "simtrain: out of memory opening a memory stream\n");
        abort();
    }
}

char *membuf_close(struct membuf *m, size_t *len)
{
    fclose(m->f);
    m->f = NULL;
    if (len)
        *len = m->len;
    return m->buf;
}

const char *api_param_value(const struct api_request *rq, const char *key)
{
    for (int i = 0; i < rq->nparams; i++)
        if (strcmp(rq->params[i].key, key) == 0)
            return rq->params[i].value;
    return NULL;
}

static bool is_option(const char *key, const char *const *options)
{
    for (int i = 0; options && options[i]; i++)
        if (strcmp(key, options[i]) == 0)
            return true;
    return false;
}

/* The overrides of the query, into ovr[] (*n of them); 0, or -1 with the error reply. */
static int overrides(const struct api_request *rq, const char *const *options,
                     struct cfg_override *ovr, char **args, int *n, struct api_reply *err)
{
    struct membuf diag;

    *n = 0;
    for (int i = 0; i < rq->nparams; i++) {
        const struct api_param *pm = &rq->params[i];
        char *text;

        if (is_option(pm->key, options))
            continue;
        if (!*pm->key || strchr(pm->key, '=')) {
            char q[80];
            diag_clip(q, sizeof(q), pm->key, strlen(pm->key));
            api_error(err, 400, "query parameter '%s' is not a scenario key (e.g. parallelism.tp)",
                      q);
            return -1;
        }
        args[*n] = xasprintf("%s=%s", pm->key, pm->value ? pm->value : "");
        membuf_open(&diag);
        if (cfg_override_init(&ovr[*n], args[*n], diag.f) != 0) {
            text = membuf_close(&diag, NULL);
            api_diag_error(err, 400, text);
            free(text);
            free(args[*n]);
            return -1;
        }
        free(membuf_close(&diag, NULL));
        (*n)++;
    }
    return 0;
}

/* The bounds that apply before a step is simulated; 0, or -1 with a 422 reply. */
static int check_bounds(const struct scenario *s, const struct api_limits *l, struct api_reply *err)
{
    struct prog_size z;
    double runs;

    if (s->gpus > l->max_gpus) {
        api_error(err, 422,
                  "a job of %d GPUs is more than the %d this server simulates per request; run "
                  "it with the command line",
                  s->gpus, l->max_gpus);
        return -1;
    }
    strategy_program_size(s, &z);
    runs = z.tasks * s->par.pp;
    if (runs > l->max_task_runs) {
        api_error(err, 422,
                  "one step of this scenario would run about %.3g tasks (%.3g per pipeline stage, "
                  "%d stage%s), more than the %.3g this server simulates per request; run it "
                  "with the command line",
                  runs, z.tasks, s->par.pp, s->par.pp == 1 ? "" : "s", l->max_task_runs);
        return -1;
    }
    return 0;
}

int posted_load(const struct api_request *rq, const struct api_limits *l,
                const char *const *options, struct posted *p, struct api_reply *err)
{
    struct cfg_override *ovr;
    char **args;
    struct membuf diag;
    int n = 0, rc = -1;
    char *text;

    memset(p, 0, sizeof(*p));
    if (rq->len > l->max_body_bytes) {
        api_error(err, 413, "the scenario is %zu bytes, more than the %zu a request may post",
                  rq->len, l->max_body_bytes);
        return -1;
    }
    if (rq->nparams > l->max_params) {
        api_error(err, 422, "%d query parameters, more than the %d a request may carry",
                  rq->nparams, l->max_params);
        return -1;
    }
    ovr = xcalloc((size_t)rq->nparams + 1, sizeof(*ovr));
    args = xcalloc((size_t)rq->nparams + 1, sizeof(*args));
    if (overrides(rq, options, ovr, args, &n, err) == 0) {
        membuf_open(&diag);
        p->s = cfg_load_scenario_posted(API_SCENARIO_NAME, rq->body ? rq->body : "", rq->len, ovr,
                                        n, diag.f);
        text = membuf_close(&diag, NULL);
        if (!p->s)
            api_diag_error(err, 400, text);
        else if (check_bounds(p->s, l, err) == 0)
            rc = 0;
        free(text);
    }
    for (int i = 0; i < n; i++) {
        cfg_override_release(&ovr[i]);
        free(args[i]);
    }
    free(ovr);
    free(args);
    if (rc != 0) {
        cfg_free(p->s);
        p->s = NULL;
        return -1;
    }
    p->budget.task_runs_left = l->max_task_runs;
    p->budget.deadline_s = l->max_seconds > 0 ? sim_clock_s() + l->max_seconds : 0;
    p->s->sim.budget = &p->budget;
    return 0;
}

bool posted_over_budget(const struct posted *p, const struct api_limits *l, struct api_reply *err)
{
    if (!p->budget.spent)
        return false;
    api_error(err, 422,
              "this request needs more simulation than this server allows per request (%.3g "
              "task runs, steps started within %g s); run it with the command line",
              l->max_task_runs, l->max_seconds);
    return true;
}

void posted_release(struct posted *p)
{
    cfg_free(p->s);
    p->s = NULL;
}
