/* pool.c - the worker pool of `simtrain serve`; see pool.h. */
#define _POSIX_C_SOURCE 200809L

#include "serve/pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"

struct job {
    pool_fn *fn;
    void *arg;
};

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a job was queued, or the pool stops */
    struct job *ring;    /* cap slots; jobs [head, head + n) modulo cap */
    int cap, head, n;
    bool stop;
    pthread_t *threads;
    int nthreads;
};

static void *worker(void *arg)
{
    struct pool *p = arg;

    for (;;) {
        struct job j;

        pthread_mutex_lock(&p->lock);
        while (p->n == 0 && !p->stop)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->n == 0) { /* stopping, nothing left */
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        j = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->n--;
        pthread_mutex_unlock(&p->lock);
        j.fn(j.arg);
    }
}

struct pool *pool_new(int workers, int queue)
{
    struct pool *p = xcalloc(1, sizeof(*p));

    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    p->cap = queue > 0 ? queue : 1;
    p->ring = xcalloc((size_t)p->cap, sizeof(*p->ring));
    p->threads = xcalloc((size_t)workers, sizeof(*p->threads));
    p->nthreads = workers;
    for (int i = 0; i < workers; i++)
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            fprintf(stderr, "simtrain: cannot start worker thread %d of %d\n", i + 1, workers);
            abort();
        }
    return p;
}

int pool_submit(struct pool *p, pool_fn *fn, void *arg)
{
    int rc = -1;

    pthread_mutex_lock(&p->lock);
    if (!p->stop && p->n < p->cap) {
        p->ring[(p->head + p->n) % p->cap] = (struct job){ fn, arg };
        p->n++;
        rc = 0;
        pthread_cond_signal(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void pool_free(struct pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p->ring);
    free(p->threads);
    free(p);
}
