/*
 * http_module.c - libsimtrain_http: HTTP on libmicrohttpd for `simtrain serve` (the only file
 * that includes <microhttpd.h>); see http_module.h. One polling thread (libmicrohttpd's own)
 * reads every connection: the first call of the access handler copies the method, the path
 * and the query; the next ones take the body; the last one suspends the connection and
 * dispatches the request; reply() stores the answer and resumes the connection, and the
 * handler, called again, queues it.
 */
#define _POSIX_C_SOURCE 200809L

#include "http/http_module.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct server {
    struct MHD_Daemon *d;
    struct simtrain_http_config cfg;
    pthread_mutex_t lock; /* the state of every dispatched request */
};

enum rq_state {
    RQ_READING,
    RQ_DISPATCHED,
    RQ_DONE
};

struct request {
    struct server *sv;
    struct MHD_Connection *conn;
    struct simtrain_http_request rq; /* what dispatch() sees: points into the fields below */
    char *method, *path;
    char **keys, **values;
    int nparams, cap_params;
    char *body; /* up to max_body_bytes, NUL-terminated */
    size_t len, cap;
    size_t received; /* every body byte, kept or not */
    enum rq_state state;
    struct simtrain_http_reply reply;
    struct timespec t0;
};

/* Out of memory is not an error path here either (base/util.h's rule): say so and abort. */
static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "simtrain serve: out of memory\n");
        abort();
    }
    return p;
}

static char *copy(const char *s)
{
    return must(strdup(s ? s : ""));
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void request_free(struct request *r)
{
    for (int i = 0; i < r->nparams; i++) {
        free(r->keys[i]);
        free(r->values[i]);
    }
    free(r->keys);
    free(r->values);
    free(r->method);
    free(r->path);
    free(r->body);
    free(r->reply.body);
    free(r);
}

static void set_state(struct request *r, enum rq_state st)
{
    pthread_mutex_lock(&r->sv->lock);
    r->state = st;
    pthread_mutex_unlock(&r->sv->lock);
}

static enum rq_state get_state(struct request *r)
{
    enum rq_state st;

    pthread_mutex_lock(&r->sv->lock);
    st = r->state;
    pthread_mutex_unlock(&r->sv->lock);
    return st;
}

/* MHD_KeyValueIterator: copy one query parameter, at most max_params + 1 of them. */
static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    struct request *r = cls;

    (void)kind;
    if (r->nparams > r->sv->cfg.max_params)
        return MHD_NO;
    if (r->nparams == r->cap_params) {
        r->cap_params = r->cap_params ? 2 * r->cap_params : 8;
        r->keys = must(realloc(r->keys, sizeof(*r->keys) * (size_t)r->cap_params));
        r->values = must(realloc(r->values, sizeof(*r->values) * (size_t)r->cap_params));
    }
    r->keys[r->nparams] = copy(key);
    r->values[r->nparams] = copy(value);
    r->nparams++;
    return MHD_YES;
}

/* Queue r's reply on its connection (the body passes to libmicrohttpd). */
static enum MHD_Result send_reply(struct request *r)
{
    static char empty[1];
    struct simtrain_http_reply *rp = &r->reply;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(rp->len, rp->body ? rp->body : empty,
                                        rp->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    enum MHD_Result res;

    if (!resp)
        return MHD_NO;
    rp->body = NULL; /* freed by libmicrohttpd with the response */
    MHD_add_response_header(resp, "Content-Type", rp->type ? rp->type : "text/plain");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    /* The page loads nothing from anywhere: inline script and style, the API of this server. */
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; style-src "
                            "'unsafe-inline'; connect-src 'self'; img-src data:; "
                            "base-uri 'none'; form-action 'none'");
    if (rp->allow)
        MHD_add_response_header(resp, "Allow", rp->allow);
    res = MHD_queue_response(r->conn, (unsigned)rp->status, resp);
    MHD_destroy_response(resp);
    if (r->sv->cfg.log)
        fprintf(r->sv->cfg.log, "simtrain serve: %s %s %d %.1f ms\n", r->method, r->path,
                rp->status, ms_since(&r->t0));
    return res;
}

static void refuse(struct request *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(struct request *r, int status, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    free(r->reply.body);
    memset(&r->reply, 0, sizeof(r->reply));
    r->sv->cfg.refuse(r->sv->cfg.ctx, status, msg, &r->reply);
    r->state = RQ_DONE;
}

/* The first call for a request: its headers. */
static struct request *begin(struct server *sv, struct MHD_Connection *c, const char *url,
                             const char *method)
{
    struct request *r = must(calloc(1, sizeof(*r)));
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    r->sv = sv;
    r->conn = c;
    r->method = copy(method);
    r->path = copy(url);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, r);
    if (cl && strtod(cl, NULL) > (double)sv->cfg.refuse_unread_bytes)
        refuse(r, 413, "the request body is %.30s bytes, more than the %zu a request may post", cl,
               sv->cfg.max_body_bytes);
    return r;
}

static void take_body(struct request *r, const char *data, size_t n)
{
    size_t max = r->sv->cfg.max_body_bytes;

    r->received += n;
    if (r->received > max)
        return; /* read, and dropped: refused when the body is in */
    if (r->len + n + 1 > r->cap) {
        r->cap = r->len + n + 1 > 2 * r->cap ? r->len + n + 1 : 2 * r->cap;
        r->body = must(realloc(r->body, r->cap));
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
}

static void dispatch(struct request *r)
{
    r->rq = (struct simtrain_http_request){ r->method,
                                            r->path,
                                            (const char *const *)r->keys,
                                            (const char *const *)r->values,
                                            r->nparams,
                                            r->body ? r->body : "",
                                            r->len };
    r->sv->cfg.dispatch(r->sv->cfg.ctx, &r->rq, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct server *sv = cls;
    struct request *r = *con_cls;

    (void)version;
    if (!r) {
        *con_cls = r = begin(sv, c, url, method);
        return r->state == RQ_DONE ? send_reply(r) : MHD_YES; /* refused unread */
    }
    if (*upload_data_size > 0) {
        if (r->state == RQ_READING)
            take_body(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    switch (get_state(r)) {
    case RQ_DONE:
        return send_reply(r);
    case RQ_DISPATCHED:
        return MHD_YES; /* woken before its reply: not expected; wait */
    case RQ_READING:
        break;
    }
    if (r->received > sv->cfg.max_body_bytes) {
        refuse(r, 413, "the request body is %zu bytes, more than the %zu a request may post",
               r->received, sv->cfg.max_body_bytes);
        return send_reply(r);
    }
    r->state = RQ_DISPATCHED;
    MHD_suspend_connection(c);
    dispatch(r);
    return MHD_YES;
}

static void reply(void *token, struct simtrain_http_reply *rp)
{
    struct request *r = token;

    r->reply = *rp;
    rp->body = NULL;
    set_state(r, RQ_DONE);
    MHD_resume_connection(r->conn);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    if (*con_cls)
        request_free(*con_cls);
    *con_cls = NULL;
}

/* libmicrohttpd's own messages (a client that went away, ...): to the log, if any. */
__attribute__((format(printf, 2, 0))) static void on_log(void *cls, const char *fmt, va_list ap)
{
    struct server *sv = cls;

    if (!sv->cfg.log)
        return;
    fputs("simtrain serve: libmicrohttpd: ", sv->cfg.log);
    vfprintf(sv->cfg.log, fmt, ap);
}

static void *start(const struct simtrain_http_config *cfg, int *port, char *msg, size_t msglen)
{
    struct server *sv = must(calloc(1, sizeof(*sv)));
    struct sockaddr_storage ss;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    const union MHD_DaemonInfo *info;

    memset(&ss, 0, sizeof(ss));
    if (inet_pton(AF_INET, cfg->bind, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, cfg->bind, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)cfg->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(msg, msglen, "--bind: '%s' is not a numeric IPv4 or IPv6 address", cfg->bind);
        free(sv);
        return NULL;
    }
    sv->cfg = *cfg;
    pthread_mutex_init(&sv->lock, NULL);
    sv->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, sv,
                             MHD_OPTION_EXTERNAL_LOGGER, on_log, sv, MHD_OPTION_SOCK_ADDR,
                             (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_completed, sv,
                             MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
                             MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout_s, MHD_OPTION_END);
    if (!sv->d) {
        snprintf(msg, msglen,
                 "cannot listen on %s port %d (in use, or not an address of this machine)",
                 cfg->bind, cfg->port);
        pthread_mutex_destroy(&sv->lock);
        free(sv);
        return NULL;
    }
    info = MHD_get_daemon_info(sv->d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : cfg->port;
    return sv;
}

static void stop(void *handle, void (*drain)(void *ctx), void *ctx)
{
    struct server *sv = handle;
    MHD_socket s = MHD_quiesce_daemon(sv->d);

    drain(ctx); /* every dispatched request answered and its connection resumed */
    MHD_stop_daemon(sv->d);
    if (s != MHD_INVALID_SOCKET)
        close(s);
    pthread_mutex_destroy(&sv->lock);
    free(sv);
}

const struct simtrain_http_api *simtrain_http(void);

const struct simtrain_http_api *simtrain_http(void)
{
    static const struct simtrain_http_api api = { start, reply, stop };

    return &api;
}
