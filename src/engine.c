/*
 * engine.c - see engine.h. A hole-sifting 4-ary min-heap: half the depth of a
 * binary heap and children that share cache lines; the hot path of the
 * simulator (bench_engine measures it).
 */
#include "engine.h"

#include <assert.h>
#include <stdlib.h>

void engine_init(struct engine *e)
{
    e->heap = NULL;
    e->n = 0;
    e->cap = 0;
    e->seq = 0;
    e->now = 0;
    e->fired = 0;
}

void engine_release(struct engine *e)
{
    free(e->heap);
    engine_init(e);
}

static inline int before(const struct event *a, const struct event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void engine_at(struct engine *e, sim_time t, engine_fn *fn, void *ctx, int64_t data)
{
    struct event ev = { t, e->seq++, fn, ctx, data };
    size_t i;

    assert(t >= e->now && "event scheduled in the past");
    if (e->n == e->cap)
        grow_array((void **)&e->heap, &e->cap, e->n + 1, sizeof(*e->heap));
    i = e->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&ev, &e->heap[parent]))
            break;
        e->heap[i] = e->heap[parent];
        i = parent;
    }
    e->heap[i] = ev;
}

void engine_after(struct engine *e, sim_time dt, engine_fn *fn, void *ctx, int64_t data)
{
    assert(dt >= 0 && "negative delay");
    engine_at(e, e->now + dt, fn, ctx, data);
}

int engine_pop(struct engine *e, struct event *out)
{
    struct event last;
    size_t i = 0, n;

    if (e->n == 0)
        return 0;
    *out = e->heap[0];
    n = --e->n;
    if (n == 0)
        return 1;
    last = e->heap[n];
    for (;;) {
        size_t c = 4 * i + 1, best, k, end;
        if (c >= n)
            break;
        best = c;
        end = c + 4 < n ? c + 4 : n;
        for (k = c + 1; k < end; k++)
            if (before(&e->heap[k], &e->heap[best]))
                best = k;
        if (!before(&e->heap[best], &last))
            break;
        e->heap[i] = e->heap[best];
        i = best;
    }
    e->heap[i] = last;
    return 1;
}

sim_time engine_run(struct engine *e)
{
    struct event ev;

    while (engine_pop(e, &ev)) {
        e->now = ev.t;
        e->fired++;
        ev.fn(e, ev.ctx, ev.data);
    }
    return e->now;
}
