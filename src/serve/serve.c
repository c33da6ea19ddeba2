/*
 * serve.c - `simtrain serve`'s server (serve.h): the HTTP module (http/http_module.h, loaded
 * with dlopen: libmicrohttpd stays out of every other run) reads the requests; each complete
 * one goes to the worker pool (pool.h), which answers it with api_handle() and hands the reply
 * back to the module. A full queue is answered 503 at once.
 */
#define _POSIX_C_SOURCE 200809L

#include "serve/serve.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/paths.h"
#include "base/util.h"
#include "http/http_module.h"
#include "serve/pool.h"

#define REFUSE_UNREAD_BYTES (64u << 20) /* a body announced above this is refused unread */
#define CONNECTION_LIMIT    512
#define IDLE_TIMEOUT_S      60

struct server {
    const struct simtrain_http_api *http;
    void *dl; /* the module */
    void *h;  /* its server */
    struct pool *pool;
    struct serve_opts o;
    int port;
};

/* One request on its way through the pool. */
struct job {
    struct server *sv;
    void *token; /* the module's, for the reply */
    struct api_request rq;
    struct api_param *params;
};

static void to_http(struct api_reply *from, struct simtrain_http_reply *to)
{
    *to = (struct simtrain_http_reply){ from->status, from->type, from->body, from->len,
                                        from->allow };
    from->body = NULL; /* the module frees it */
}

/* On a worker: answer the request, hand the reply back. */
static void work(void *arg)
{
    struct job *j = arg;
    struct api_reply out;
    struct simtrain_http_reply rp;

    api_handle(&j->rq, &j->sv->o.limits, &out);
    to_http(&out, &rp);
    j->sv->http->reply(j->token, &rp);
    free(j->params);
    free(j);
}

/* The module's dispatch(): queue the request, or answer 503 when the queue is full. */
static void dispatch(void *ctx, const struct simtrain_http_request *hr, void *token)
{
    struct server *sv = ctx;
    struct job *j = xcalloc(1, sizeof(*j));

    j->sv = sv;
    j->token = token;
    j->params = xcalloc((size_t)hr->nparams + 1, sizeof(*j->params));
    for (int i = 0; i < hr->nparams; i++)
        j->params[i] = (struct api_param){ hr->keys[i], hr->values[i] };
    j->rq = (struct api_request){ hr->method, hr->path, j->params, hr->nparams, hr->body, hr->len };
    if (pool_submit(sv->pool, work, j) != 0) {
        struct api_reply out;
        struct simtrain_http_reply rp;

        api_error(&out, 503,
                  "the server is busy (%d requests running, %d waiting): try again in a moment",
                  sv->o.workers, sv->o.queue);
        to_http(&out, &rp);
        sv->http->reply(token, &rp);
        free(j->params);
        free(j);
    }
}

/* The module's refuse(): its 413s, as the API's error JSON. */
static void refuse(void *ctx, int status, const char *msg, struct simtrain_http_reply *out)
{
    struct api_reply rp;

    (void)ctx;
    api_error(&rp, status, "%s", msg);
    to_http(&rp, out);
}

static void drain(void *ctx)
{
    struct server *sv = ctx;

    pool_free(sv->pool);
    sv->pool = NULL;
}

int serve_is_loopback(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;

    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, addr, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

/* Load the HTTP module: its functions, or NULL with a message. */
static const struct simtrain_http_api *load_module(void **dl, char *msg, size_t msglen)
{
    const char *path = paths_http_module();
    simtrain_http_fn fn;

    *dl = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!*dl) {
        snprintf(msg, msglen, "cannot load the HTTP module (%s): %s", path ? path : "?",
                 path ? dlerror() : "no path");
        return NULL;
    }
    *(void **)&fn = dlsym(*dl, SIMTRAIN_HTTP_SYMBOL);
    if (!fn) {
        snprintf(msg, msglen, "the HTTP module has no %s", SIMTRAIN_HTTP_SYMBOL);
        dlclose(*dl);
        return NULL;
    }
    return fn();
}

struct server *serve_start(const struct serve_opts *o, char *msg, size_t msglen)
{
    struct server *sv = xcalloc(1, sizeof(*sv));
    struct simtrain_http_config cfg = {
        .bind = o->bind ? o->bind : "127.0.0.1",
        .port = o->port,
        .max_body_bytes = o->limits.max_body_bytes,
        .refuse_unread_bytes = REFUSE_UNREAD_BYTES,
        .max_params = o->limits.max_params,
        .max_connections = CONNECTION_LIMIT,
        .idle_timeout_s = IDLE_TIMEOUT_S,
        .dispatch = dispatch,
        .refuse = refuse,
        .ctx = sv,
        .log = o->log,
    };

    sv->o = *o;
    (void)paths_data_dir(); /* resolved once, before the worker threads start */
    sv->http = load_module(&sv->dl, msg, msglen);
    if (!sv->http) {
        free(sv);
        return NULL;
    }
    sv->pool = pool_new(o->workers, o->queue);
    sv->h = sv->http->start(&cfg, &sv->port, msg, msglen);
    if (!sv->h) {
        pool_free(sv->pool);
        dlclose(sv->dl);
        free(sv);
        return NULL;
    }
    return sv;
}

int serve_port(const struct server *sv)
{
    return sv->port;
}

void serve_stop(struct server *sv)
{
    if (!sv)
        return;
    sv->http->stop(sv->h, drain, sv);
    dlclose(sv->dl);
    free(sv);
}
