/* radix.c - see radix.h. */
#include "engine/radix.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void radix_init(struct radix *q, sim_time start)
{
    memset(q, 0, sizeof(*q));
    q->last = start;
}

void radix_release(struct radix *q)
{
    for (int i = 0; i < RADIX_BUCKETS; i++)
        free(q->b[i].ev);
    memset(q, 0, sizeof(*q));
}

void radix_grow(struct radix_bucket *b)
{
    b->cap = b->cap ? 2 * b->cap : 64;
    b->ev = xrealloc(b->ev, b->cap * sizeof(*b->ev));
}

static inline void append(struct radix_bucket *b, const struct event *ev)
{
    if (b->n == b->cap)
        radix_grow(b);
    b->ev[b->n++] = *ev;
}

void radix_refill(struct radix *q)
{
    int i = __builtin_ctzll(q->nonempty) + 1;
    struct radix_bucket *from = &q->b[i];
    struct event *ev = from->ev;
    size_t n = from->n, cap = from->cap;
    sim_time m = ev[0].t;

    for (size_t k = 1; k < n; k++)
        if (ev[k].t < m)
            m = ev[k].t;
    q->last = m;
    /* Every bucket below i is empty, and the events go there in their (sequence) order. */
    from->ev = NULL;
    from->n = from->cap = 0;
    q->nonempty &= ~(1ull << (i - 1));
    q->b[0].n = q->head0 = 0;
    for (size_t k = 0; k < n; k++) {
        int j = radix_bucket_of(m, ev[k].t);
        assert(j < i);
        append(&q->b[j], &ev[k]);
        if (j)
            q->nonempty |= 1ull << (j - 1);
    }
    /* Keep the spread bucket's array for bucket i's next events. */
    from->ev = ev;
    from->cap = cap;
}

bool radix_pop(struct radix *q, struct event *out)
{
    if (q->n == 0)
        return false;
    *out = *radix_pop_ref(q);
    return true;
}
