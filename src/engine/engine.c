/*
 * engine.c - see engine.h. A sorted ring for the few events a simulation
 * usually has queued, a hole-sifting 4-ary min-heap (half the depth of a
 * binary heap, children that share cache lines) for many; the hot path of
 * the simulator (bench_engine measures it).
 */
#include "engine/engine.h"
#include "engine/radix.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* At or below this many events a heap becomes a ring again (ENGINE_RING_MAX: engine.h). */
#define ENGINE_RING_MIN 8

void engine_init(struct engine *e)
{
    memset(e, 0, sizeof(*e));
    e->ring = 1;
    e->radix_min = ENGINE_RADIX_MIN;
}

void engine_release(struct engine *e)
{
    struct radix *q = e->rq ? e->rq : e->spare;

    if (q) {
        radix_release(q);
        free(q);
    }
    free(e->heap);
    engine_init(e);
}

static inline int before(const struct event *a, const struct event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* The ring's events, earliest first, moved to slots [0, n) (sorted: a valid heap too). */
static void linearize(struct engine *e, struct event *to)
{
    size_t mask = e->cap - 1, i;

    if (e->n == 0) {
        /* nothing to move (and no array yet before the first event) */
    } else if (e->head + e->n <= e->cap) {
        memmove(to, e->heap + e->head, e->n * sizeof(*to));
    } else {
        struct event *tmp = xmalloc(e->n * sizeof(*tmp));
        for (i = 0; i < e->n; i++)
            tmp[i] = e->heap[(e->head + i) & mask];
        memcpy(to, tmp, e->n * sizeof(*to));
        free(tmp);
    }
    e->head = 0;
}

static void grow(struct engine *e)
{
    size_t cap = e->cap ? 2 * e->cap : 64;
    struct event *h = xmalloc(cap * sizeof(*h));

    if (e->ring)
        linearize(e, h);
    else if (e->n > 0)
        memcpy(h, e->heap, e->n * sizeof(*h));
    free(e->heap);
    e->heap = h;
    e->cap = cap;
}

static void heap_push(struct engine *e, const struct event *ev)
{
    struct event *h = e->heap;
    size_t i = e->n++;

    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(ev, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = *ev;
}

static inline void ring_push(struct engine *e, const struct event *ev)
{
    struct event *h = e->heap;
    size_t mask = e->cap - 1, j = (e->head + e->n) & mask;

    while (j != e->head) { /* usually the latest: one comparison */
        size_t prev = (j - 1) & mask;
        if (!before(ev, &h[prev]))
            break;
        h[j] = h[prev];
        j = prev;
    }
    h[j] = *ev;
    e->n++;
}

static int cmp_event(const void *a, const void *b)
{
    return before(a, b) ? -1 : before(b, a);
}

/* The heap's events into a radix heap, in (t, seq) order (each bucket keeps that order). */
static void to_radix(struct engine *e)
{
    struct radix *q = e->spare;

    if (!q) {
        q = xmalloc(sizeof(*q));
        radix_init(q, e->now);
    }
    e->spare = NULL;
    q->last = e->now; /* empty: only its arrays are kept */
    qsort(e->heap, e->n, sizeof(*e->heap), cmp_event);
    for (size_t i = 0; i < e->n; i++) {
        bool ok = radix_push(q, &e->heap[i]);
        assert(ok && "a pending event before the current time");
        (void)ok;
    }
    e->rq = q;
}

/* The radix heap's events back into heap[], earliest first: a ring (ring = 1) or a heap. */
static void from_radix(struct engine *e, int ring)
{
    struct radix *q = e->rq;
    size_t n = 0;

    if (e->cap < q->n) {
        size_t cap = e->cap ? e->cap : 64;
        while (cap < q->n)
            cap *= 2;
        free(e->heap);
        e->heap = xmalloc(cap * sizeof(*e->heap));
        e->cap = cap;
    }
    while (radix_pop(q, &e->heap[n]))
        n++;
    assert(n == e->n);
    e->rq = NULL;
    e->spare = q;
    e->head = 0;
    e->ring = ring;
}

void engine_push_slow(struct engine *e, const struct event *ev)
{
    if (e->rq) {
        if (radix_push(e->rq, ev)) {
            e->n++;
            return;
        }
        from_radix(e, 0); /* an event before one already run: back to the heap for good */
        e->no_radix = 1;
    }
    if (e->n == e->cap)
        grow(e);
    if (e->ring && e->n >= ENGINE_RING_MAX) {
        linearize(e, e->heap);
        e->ring = 0;
    }
    if (e->ring) {
        ring_push(e, ev);
    } else {
        heap_push(e, ev);
        if (e->n >= e->radix_min && !e->no_radix)
            to_radix(e);
    }
}

/* The earliest event of the radix heap into *out; back to a ring when few are left. */
static void radix_take(struct engine *e, struct event *out)
{
    bool ok = radix_pop(e->rq, out);

    assert(ok);
    (void)ok;
    if (--e->n <= ENGINE_RING_MIN)
        from_radix(e, 1);
}

/* Back to a ring: sort the few events left (insertion sort). */
static void to_ring(struct engine *e)
{
    struct event *h = e->heap;
    size_t i, j;

    for (i = 1; i < e->n; i++) {
        struct event v = h[i];
        for (j = i; j > 0 && before(&v, &h[j - 1]); j--)
            h[j] = h[j - 1];
        h[j] = v;
    }
    e->head = 0;
    e->ring = 1;
}

static void heap_pop(struct engine *e, struct event *out)
{
    struct event *h = e->heap, last;
    size_t i = 0, n;

    *out = h[0];
    n = --e->n;
    if (n == 0)
        return;
    last = h[n];
    for (;;) {
        size_t c = 4 * i + 1, best, k, end;
        if (c >= n)
            break;
        best = c;
        end = c + 4 < n ? c + 4 : n;
        for (k = c + 1; k < end; k++)
            if (before(&h[k], &h[best]))
                best = k;
        if (!before(&h[best], &last))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = last;
    if (n <= ENGINE_RING_MIN)
        to_ring(e);
}

int engine_pop(struct engine *e, struct event *out)
{
    if (e->n == 0)
        return 0;
    if (e->rq) {
        radix_take(e, out);
        return 1;
    }
    if (!e->ring) {
        heap_pop(e, out);
        return 1;
    }
    *out = e->heap[e->head];
    e->head = (e->head + 1) & (e->cap - 1);
    e->n--;
    return 1;
}

sim_time engine_run(struct engine *e)
{
    while (e->n > 0) {
        const struct event *ev; /* read in place: the queue does not change until fn runs */
        struct event popped;
        engine_fn *fn;
        void *ctx;
        int64_t data;
        int back = 0; /* the radix heap is down to a ring's few events */
        if (e->ring) {
            ev = &e->heap[e->head];
            e->head = (e->head + 1) & (e->cap - 1);
            e->n--;
        } else if (e->rq) {
            ev = radix_pop_ref(e->rq);
            back = --e->n <= ENGINE_RING_MIN;
        } else {
            heap_pop(e, &popped);
            ev = &popped;
        }
        e->now = ev->t;
        fn = ev->fn;
        ctx = ev->ctx;
        data = ev->data;
        if (back)
            from_radix(e, 1); /* after the reads: it reuses bucket 0's slots */
        e->fired++;
        fn(e, ctx, data);
    }
    return e->now;
}
