/*
 * serve.h - `simtrain serve`: the page and the API of api.h over HTTP, on libmicrohttpd in
 * the module of http/http_module.h (loaded by serve_start(), so no other run loads it).
 *
 * Threads: the module's polling thread reads each request; once its body is in, the
 * request goes to a fixed pool of workers (pool.h) and its connection is suspended until a
 * worker has the reply. At most `workers` requests run and `queue` wait; the next is answered
 * 503 at once. A body over limits.max_body_bytes is read and dropped (413); one that says it
 * is larger than 64 MiB is refused before it is read. Idle connections close after 60 s.
 *
 * Loopback (127.0.0.1) unless `bind` names another address, which the command warns about.
 */
#ifndef SIMTRAIN_SERVE_H
#define SIMTRAIN_SERVE_H

#include <stdio.h>

#include "serve/api.h"

struct serve_opts {
    const char *bind; /* numeric IPv4 or IPv6 address; NULL = 127.0.0.1 */
    int port;         /* 0 = a free port (serve_port() says which) */
    int workers;      /* threads that simulate (>= 1) */
    int queue;        /* requests that may wait for a worker (>= 1) */
    struct api_limits limits;
    FILE *log; /* a line per request (method, path, status, milliseconds), or NULL */
};

struct server;

/*
 * Start serving in background threads. NULL with a message in msg (the HTTP module missing,
 * an address that is not one, a port in use) on failure. Stop with serve_stop().
 */
struct server *serve_start(const struct serve_opts *o, char *msg, size_t msglen);

/* The port the server listens on. */
int serve_port(const struct server *sv);

/* Stop accepting, finish the requests in progress, stop the threads and free (NULL accepted). */
void serve_stop(struct server *sv);

/* Whether `addr` (numeric) is a loopback address (127.0.0.0/8, ::1). */
int serve_is_loopback(const char *addr);

#endif
