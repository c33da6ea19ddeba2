/*
 * pool.h - a fixed pool of worker threads with a bounded queue, for `simtrain serve`: at most
 * `workers` requests simulate at once and at most `queue` more wait; a request beyond that is
 * refused at once (503) rather than held, so that a busy server answers every client quickly
 * and its memory stays bounded by (workers + queue) requests.
 */
#ifndef SIMTRAIN_SERVE_POOL_H
#define SIMTRAIN_SERVE_POOL_H

typedef void pool_fn(void *arg);

struct pool;

/* Start `workers` threads (>= 1) with room for `queue` waiting jobs (>= 1). Aborts when the
 * threads cannot be created. Free with pool_free(). */
struct pool *pool_new(int workers, int queue);

/* Queue fn(arg) to run on a worker. 0, or -1 when the queue is full (fn is not called). */
int pool_submit(struct pool *p, pool_fn *fn, void *arg);

/* Run every queued job to its end, stop the threads and free the pool (NULL accepted). */
void pool_free(struct pool *p);

#endif
