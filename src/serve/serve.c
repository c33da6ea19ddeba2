/*
 * serve.c - HTTP for `simtrain serve` on libmicrohttpd (the only file that includes
 * <microhttpd.h>); see serve.h. A request's life: headers (first call of the access
 * handler: method, path, query copied), body (appended up to the limit, dropped beyond), then
 * the connection is suspended and the request queued to the pool; a worker answers it
 * (api_handle()) and resumes the connection; the handler, called again, queues the reply.
 */
#define _POSIX_C_SOURCE 200809L

#include "serve/serve.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "serve/pool.h"

#define REFUSE_UNREAD_BYTES (64u << 20) /* a declared body above this is refused unread */
#define CONNECTION_LIMIT    512
#define IDLE_TIMEOUT_S      60

struct server {
    struct MHD_Daemon *d;
    struct pool *pool;
    struct serve_opts o;
    int port;
    pthread_mutex_t lock; /* the state of every request handed to a worker */
};

enum rq_state {
    RQ_READING,
    RQ_QUEUED,
    RQ_DONE
};

struct request {
    struct server *sv;
    struct MHD_Connection *conn;
    char *method, *path;
    struct api_param *params; /* keys and values heap copies */
    int nparams;
    size_t cap_params;
    char *body; /* up to limits.max_body_bytes */
    size_t len, cap;
    bool too_big;      /* the body passed the limit: the rest is dropped */
    size_t body_bytes; /* every byte received */
    enum rq_state state;
    struct api_reply reply;
    struct timespec t0;
};

static double ms_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void request_free(struct request *rq)
{
    for (int i = 0; i < rq->nparams; i++) {
        char *k, *v; /* the copies add_param() made */

        memcpy(&k, &rq->params[i].key, sizeof(k));
        memcpy(&v, &rq->params[i].value, sizeof(v));
        free(k);
        free(v);
    }
    free(rq->params);
    free(rq->method);
    free(rq->path);
    free(rq->body);
    api_reply_release(&rq->reply);
    free(rq);
}

/* MHD_KeyValueIterator: copy one query parameter (at most limits.max_params + 1 of them). */
static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    struct request *rq = cls;

    (void)kind;
    if (rq->nparams > rq->sv->o.limits.max_params)
        return MHD_NO; /* enough to refuse the request */
    grow_array((void **)&rq->params, &rq->cap_params, (size_t)rq->nparams + 1, sizeof(*rq->params));
    rq->params[rq->nparams].key = xstrdup(key ? key : "");
    rq->params[rq->nparams].value = xstrdup(value ? value : "");
    rq->nparams++;
    return MHD_YES;
}

static void set_state(struct request *rq, enum rq_state st)
{
    pthread_mutex_lock(&rq->sv->lock);
    rq->state = st;
    pthread_mutex_unlock(&rq->sv->lock);
}

static enum rq_state get_state(struct request *rq)
{
    enum rq_state st;

    pthread_mutex_lock(&rq->sv->lock);
    st = rq->state;
    pthread_mutex_unlock(&rq->sv->lock);
    return st;
}

/* Queue rq's reply on its connection (the body passes to libmicrohttpd). */
static enum MHD_Result send_reply(struct request *rq)
{
    static char empty[1];
    struct api_reply *rp = &rq->reply;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(rp->len, rp->body ? rp->body : empty,
                                        rp->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    enum MHD_Result r;

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
    r = MHD_queue_response(rq->conn, (unsigned)rp->status, resp);
    MHD_destroy_response(resp);
    if (rq->sv->o.log)
        fprintf(rq->sv->o.log, "simtrain serve: %s %s %d %.1f ms\n", rq->method, rq->path,
                rp->status, ms_since(&rq->t0));
    return r;
}

/* On a worker: answer the request, then wake its connection. */
static void work(void *arg)
{
    struct request *rq = arg;
    struct api_request ar = { rq->method, rq->path, rq->params, rq->nparams, rq->body, rq->len };

    api_handle(&ar, &rq->sv->o.limits, &rq->reply);
    set_state(rq, RQ_DONE);
    MHD_resume_connection(rq->conn);
}

/* The first call for a request: its headers. NULL when it is refused at once (reply set). */
static struct request *begin(struct server *sv, struct MHD_Connection *c, const char *url,
                             const char *method)
{
    struct request *rq = xcalloc(1, sizeof(*rq));
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

    clock_gettime(CLOCK_MONOTONIC, &rq->t0);
    rq->sv = sv;
    rq->conn = c;
    rq->method = xstrdup(method);
    rq->path = xstrdup(url);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, rq);
    if (cl && strtod(cl, NULL) > REFUSE_UNREAD_BYTES) {
        api_error(&rq->reply, 413,
                  "the request body is %s bytes, more than the %zu a request may post", cl,
                  sv->o.limits.max_body_bytes);
        rq->state = RQ_DONE;
    }
    return rq;
}

static void take_body(struct request *rq, const char *data, size_t n)
{
    size_t max = rq->sv->o.limits.max_body_bytes;

    rq->body_bytes += n;
    if (rq->too_big || rq->len + n > max) {
        rq->too_big = true;
        return;
    }
    grow_array((void **)&rq->body, &rq->cap, rq->len + n + 1, 1);
    memcpy(rq->body + rq->len, data, n);
    rq->len += n;
    rq->body[rq->len] = '\0';
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct server *sv = cls;
    struct request *rq = *con_cls;

    (void)version;
    if (!rq) {
        *con_cls = rq = begin(sv, c, url, method);
        return rq->state == RQ_DONE ? send_reply(rq) : MHD_YES; /* refused unread */
    }
    if (*upload_data_size > 0) {
        if (rq->state == RQ_READING)
            take_body(rq, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    switch (get_state(rq)) {
    case RQ_DONE:
        return send_reply(rq);
    case RQ_QUEUED:
        return MHD_YES; /* woken before the worker finished: not expected, wait */
    case RQ_READING:
        break;
    }
    if (rq->too_big) {
        api_error(&rq->reply, 413,
                  "the request body is %zu bytes, more than the %zu a request may post",
                  rq->body_bytes, sv->o.limits.max_body_bytes);
        return send_reply(rq);
    }
    rq->state = RQ_QUEUED;
    MHD_suspend_connection(c);
    if (pool_submit(sv->pool, work, rq) != 0) {
        api_error(&rq->reply, 503,
                  "the server is busy (%d requests running, %d waiting): try again in a moment",
                  sv->o.workers, sv->o.queue);
        set_state(rq, RQ_DONE);
        MHD_resume_connection(c);
    }
    return MHD_YES;
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
static void on_log(void *cls, const char *fmt, va_list ap)
{
    struct server *sv = cls;

    if (!sv->o.log)
        return;
    fputs("simtrain serve: libmicrohttpd: ", sv->o.log);
    vfprintf(sv->o.log, fmt, ap);
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

struct server *serve_start(const struct serve_opts *o, char *msg, size_t msglen)
{
    struct server *sv = xcalloc(1, sizeof(*sv));
    const char *addr = o->bind ? o->bind : "127.0.0.1";
    struct sockaddr_storage ss;
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    const union MHD_DaemonInfo *info;

    memset(&ss, 0, sizeof(ss));
    if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
        ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)o->port);
    } else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
        ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)o->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(msg, msglen, "--bind: '%s' is not a numeric IPv4 or IPv6 address", addr);
        free(sv);
        return NULL;
    }
    sv->o = *o;
    pthread_mutex_init(&sv->lock, NULL);
    sv->pool = pool_new(o->workers, o->queue);
    sv->d = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, on_request, sv, MHD_OPTION_EXTERNAL_LOGGER, on_log,
        sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        sv, MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_END);
    if (!sv->d) {
        snprintf(msg, msglen,
                 "cannot listen on %s port %d (in use, or not an address of this "
                 "machine)",
                 addr, o->port);
        pool_free(sv->pool);
        pthread_mutex_destroy(&sv->lock);
        free(sv);
        return NULL;
    }
    info = MHD_get_daemon_info(sv->d, MHD_DAEMON_INFO_BIND_PORT);
    sv->port = info ? info->port : o->port;
    return sv;
}

int serve_port(const struct server *sv)
{
    return sv->port;
}

void serve_stop(struct server *sv)
{
    MHD_socket s;

    if (!sv)
        return;
    s = MHD_quiesce_daemon(sv->d);
    pool_free(sv->pool); /* every queued request answered and its connection resumed */
    MHD_stop_daemon(sv->d);
    if (s != MHD_INVALID_SOCKET)
        close(s);
    pthread_mutex_destroy(&sv->lock);
    free(sv);
}
