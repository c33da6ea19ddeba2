/* par.c - see par.h. */
#define _POSIX_C_SOURCE 200809L

#include "base/par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/util.h"

int par_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

struct par_loop {
    void (*fn)(void *ctx, long i);
    void *ctx;
    long n;
    atomic_long next; /* the next item not yet taken */
};

static void *worker(void *arg)
{
    struct par_loop *l = arg;

    for (;;) {
        long i = atomic_fetch_add(&l->next, 1);
        if (i >= l->n)
            return NULL;
        l->fn(l->ctx, i);
    }
}

void par_for(int jobs, long n, void (*fn)(void *ctx, long i), void *ctx)
{
    struct par_loop l = { .fn = fn, .ctx = ctx, .n = n };
    pthread_t *t;
    int nt;

    if (jobs <= 1 || n <= 1) {
        for (long i = 0; i < n; i++)
            fn(ctx, i);
        return;
    }
    atomic_init(&l.next, 0);
    nt = (long)jobs < n ? jobs : (int)n;
    t = xcalloc((size_t)nt, sizeof(*t));
    for (int k = 1; k < nt; k++)
        if (pthread_create(&t[k], NULL, worker, &l) != 0) {
            fprintf(stderr, "simtrain: cannot start a thread\n");
            abort();
        }
    worker(&l);
    for (int k = 1; k < nt; k++)
        pthread_join(t[k], NULL);
    free(t);
}
