/*
 * cmd_serve.c - `simtrain serve [--port N] [--bind ADDR]`: the lab in a browser. Starts the
 * server of serve/serve.h, prints its address and runs until SIGINT or SIGTERM.
 *
 * Exit status: 0 after a signal; 1 when it cannot listen; 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L /* sigwait, sigaction */

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "base/util.h"
#include "serve/serve.h"

struct serve_args {
    struct cli_list pos; /* none accepted */
    int port, workers, queue;
    const char *bind;
    bool quiet;
};

#define OFF(field) offsetof(struct serve_args, field)

static const struct cli_opt serve_opts[] = {
    { "--port", 0, "N", "the TCP port (default 8080; 0 = any free port, printed)", .kind = CLI_INT,
      .offset = OFF(port), .min = 0, .max = 65535 },
    { "--bind", 0, "ADDR",
      "listen on this numeric address (default 127.0.0.1: this machine only); another opens "
      "the server to the network",
      .kind = CLI_STRING, .offset = OFF(bind) },
    { "--workers", 0, "N", "requests simulated at once (default: the cores, at most 8)",
      .kind = CLI_INT, .offset = OFF(workers), .min = 1, .max = 256 },
    { "--queue", 0, "N",
      "requests that may wait for a worker; more are refused with 503 "
      "(default 64)",
      .kind = CLI_INT, .offset = OFF(queue), .min = 1, .max = 4096 },
    { "--quiet", 'q', NULL, "log no request", .kind = CLI_FLAG, .offset = OFF(quiet) },
};

const struct cli_command cmd_serve_spec = {
    .name = "serve",
    .synopsis = "simtrain serve [--port N] [--bind ADDR] [OPTION]...",
    .about = "Serves the lab in a browser: a page that simulates a shipped scenario or an edited\n"
             "one as its knobs move (timeline, memory, breakdown, two configurations side by\n"
             "side, the teaching labs), and its JSON API (POST /api/run, /api/memory, /api/plan\n"
             "with a scenario's YAML; GET /api/library). Works offline. A posted scenario names\n"
             "shipped hardware and workloads, never a file; each request's work is bounded.\n"
             "Runs until interrupted (Ctrl-C).\n",
    .opts = serve_opts,
    .nopts = ARRAY_LEN(serve_opts),
    .positional = OFF(pos),
    .max_positional = 0,
};

static int default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int cmd_serve(int argc, char **argv)
{
    struct serve_args a = { .port = 8080, .queue = 64 };
    enum cli_result pr = cli_parse(&cmd_serve_spec, argc, argv, &a);
    struct serve_opts o = { 0 };
    struct server *sv;
    sigset_t stop;
    int sig = 0;
    char msg[256];
    const char *addr;

    if (pr != CLI_OK) {
        cli_release(&cmd_serve_spec, &a);
        return cli_exit_status(pr);
    }
    o.bind = a.bind;
    o.port = a.port;
    o.workers = a.workers > 0 ? a.workers : default_workers();
    o.queue = a.queue;
    o.log = a.quiet ? NULL : stderr;
    api_limits_default(&o.limits);
    addr = a.bind ? a.bind : "127.0.0.1";
    /* Every thread starts with SIGINT and SIGTERM blocked; this one waits for them. A client
     * that goes away mid-reply must not kill the server: SIGPIPE is ignored. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    sv = serve_start(&o, msg, sizeof(msg));
    if (!sv) {
        fprintf(stderr, "simtrain serve: error: %s\n", msg);
        cli_release(&cmd_serve_spec, &a);
        return 1;
    }
    if (!serve_is_loopback(addr))
        fprintf(stderr,
                "simtrain serve: warning: listening on %s: anyone who can reach this machine "
                "on port %d can use the server (it reads no file a client names and bounds "
                "each request's work, but has no login)\n",
                addr, serve_port(sv));
    printf("simtrain serve: http://%s%s%s:%d/ (%d workers; Ctrl-C stops)\n",
           strchr(addr, ':') ? "[" : "", addr, strchr(addr, ':') ? "]" : "", serve_port(sv),
           o.workers);
    fflush(stdout);
    while (sigwait(&stop, &sig) != 0)
        ;
    fprintf(stderr, "simtrain serve: %s: stopping\n", sig == SIGINT ? "interrupted" : "terminated");
    serve_stop(sv);
    cli_release(&cmd_serve_spec, &a);
    return 0;
}
