/*
 * http_module.h - the interface of libsimtrain_http, the HTTP server of `simtrain serve`
 * (http_module.c, the only user of <microhttpd.h>), built as a module of its own and loaded
 * only by `simtrain serve` (serve/serve.c), so that no other run of simtrain loads
 * libmicrohttpd and the TLS libraries it depends on (about 2 ms of every run: docs/performance.md).
 *
 * The module reads requests and writes replies; what a request means is the caller's
 * (serve/api.h). A request's life: its headers, its body (kept up to max_body_bytes, the rest
 * read and dropped, then refused 413; a body announced above refuse_unread_bytes is refused
 * before it is read), then dispatch(): the connection waits, suspended, until reply() is
 * called with the request's token, from any thread, at once or later.
 */
#ifndef SIMTRAIN_HTTP_MODULE_H
#define SIMTRAIN_HTTP_MODULE_H

#include <stddef.h>
#include <stdio.h>

struct simtrain_http_request {
    const char *method, *path; /* "POST", "/api/run" (without the query) */
    const char *const *keys;   /* query parameters, URL-decoded */
    const char *const *values; /* "" for a parameter without '=' */
    int nparams;               /* at most max_params + 1 (the caller refuses more) */
    const char *body;          /* NUL-terminated; may hold NULs */
    size_t len;                /* bytes of body */
};

struct simtrain_http_reply {
    int status;        /* HTTP status */
    const char *type;  /* Content-Type (static text) */
    char *body;        /* malloc'd: reply() takes it and frees it */
    size_t len;        /* bytes */
    const char *allow; /* the Allow header (static text), or NULL */
};

struct simtrain_http_config {
    const char *bind;           /* numeric IPv4 or IPv6 address */
    int port;                   /* 0 = any free port */
    size_t max_body_bytes;      /* bodies kept; above, read and refused (413) */
    size_t refuse_unread_bytes; /* bodies announced above this: refused unread (413) */
    int max_params;             /* query parameters copied (one more says "too many") */
    unsigned max_connections;   /* open at once; more wait in the kernel's backlog */
    unsigned idle_timeout_s;    /* an idle connection closes */
    /* A complete request: answer it with reply(token, ...), now or from another thread. The
     * request (all its strings) stays valid until then. */
    void (*dispatch)(void *ctx, const struct simtrain_http_request *rq, void *token);
    /* The reply to a request the module refuses itself (413): status and message. */
    void (*refuse)(void *ctx, int status, const char *msg, struct simtrain_http_reply *out);
    void *ctx;
    FILE *log; /* a line per request (method, path, status, milliseconds), or NULL */
};

struct simtrain_http_api {
    /* Start serving in background threads: a handle and the port in *port, or NULL with a
     * message in msg. */
    void *(*start)(const struct simtrain_http_config *cfg, int *port, char *msg, size_t msglen);
    /* Answer the request of `token` (once); rp->body passes to the module. */
    void (*reply)(void *token, struct simtrain_http_reply *rp);
    /* Stop accepting, call drain(ctx) (which must answer every request dispatched), stop. */
    void (*stop)(void *handle, void (*drain)(void *ctx), void *ctx);
};

/* The module's one symbol: its functions. */
typedef const struct simtrain_http_api *(*simtrain_http_fn)(void);

#define SIMTRAIN_HTTP_SYMBOL "simtrain_http"

#endif
