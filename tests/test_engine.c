/* test_engine.c - the event queue (ring, heap and radix heap) against references, FIFO ties, run
   order; duration arithmetic that saturates instead of wrapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/engine.h"

struct ref {
    sim_time t;
    uint64_t seq;
};

static int ref_cmp(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;

    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void nop(struct engine *e, void *ctx, int64_t data)
{
    (void)e;
    (void)ctx;
    (void)data;
}

/* 20,000 random events, popped in (time, insertion) order exactly as a stable sort says. */
static void test_heap_matches_sorted_reference(void **state)
{
    enum {
        N = 20000
    };
    struct engine e;
    struct ref *ref = malloc(sizeof(*ref) * N);
    uint64_t rng = 42;
    struct event ev;
    int i;

    (void)state;
    engine_init(&e);
    for (i = 0; i < N; i++) {
        sim_time t = (sim_time)(rng_next(&rng) % 1000); /* many ties */
        ref[i].t = t;
        ref[i].seq = (uint64_t)i;
        engine_at(&e, t, nop, NULL, i);
    }
    qsort(ref, N, sizeof(*ref), ref_cmp);
    for (i = 0; i < N; i++) {
        assert_true(engine_pop(&e, &ev));
        assert_int_equal(ev.t, ref[i].t);
        assert_int_equal(ev.data, (int64_t)ref[i].seq);
    }
    assert_false(engine_pop(&e, &ev));
    engine_release(&e);
    free(ref);
}

/* Interleaved pushes and pops keep the heap order (pops never go back in time). */
static void test_heap_interleaved_push_pop(void **state)
{
    struct engine e;
    uint64_t rng = 7;
    struct event ev;
    sim_time last = -1;
    int i, pending = 0;

    (void)state;
    engine_init(&e);
    for (i = 0; i < 50000; i++) {
        if (pending == 0 || rng_uniform(&rng) < 0.55) {
            engine_at(&e, e.now + (sim_time)(rng_next(&rng) % 100), nop, NULL, i);
            pending++;
        } else {
            assert_true(engine_pop(&e, &ev));
            assert_true(ev.t >= last);
            last = ev.t;
            e.now = ev.t;
            pending--;
        }
    }
    engine_release(&e);
}

/*
 * Pending events swing between 4 and hi (< cap) `steps` times over; each pop is checked
 * against a linear scan of the pending events for the earliest (time, insertion sequence).
 * Delays are 0 to spread - 1 ns (most events tied), one in a hundred up to `far` ns when
 * far > 0. Returns how many times the count reached hi.
 */
static int swing(int cap, int hi, sim_time spread, sim_time far, int steps)
{
    struct engine e;
    struct event ev;
    struct pend {
        sim_time t;
        int64_t data;
    } *pend = malloc(sizeof(*pend) * (size_t)cap);
    uint64_t rng = 11;
    int i, n = 0, target = hi, switches = 0;

    engine_init(&e);
    for (i = 0; i < steps; i++) {
        bool push = n == 0 || (n < target && rng_uniform(&rng) < 0.8) ||
                    (n >= target && rng_uniform(&rng) < 0.2);
        if (n >= cap - 1)
            push = false;
        if (push) {
            sim_time d = far > 0 && rng_uniform(&rng) < 0.01 ? (sim_time)(rng_next(&rng) % far)
                                                             : (sim_time)(rng_next(&rng) % spread);
            engine_at(&e, e.now + d, nop, NULL, i);
            pend[n].t = e.now + d;
            pend[n].data = i;
            n++;
        } else {
            int best = 0, k;
            for (k = 1; k < n; k++)
                if (pend[k].t < pend[best].t ||
                    (pend[k].t == pend[best].t && pend[k].data < pend[best].data))
                    best = k;
            assert_true(engine_pop(&e, &ev));
            assert_int_equal(ev.t, pend[best].t);
            assert_int_equal(ev.data, pend[best].data);
            e.now = ev.t;
            pend[best] = pend[--n];
        }
        if (n >= target) { /* swing the pending count between hi and 4 */
            target = 4;
            switches++;
        } else if (n <= target && target == 4) {
            target = hi;
        }
    }
    engine_release(&e);
    free(pend);
    return switches;
}

/* The queue switches between a sorted ring (few events) and a heap (more than 32) and back
 * (8 or fewer), many times. */
static void test_ring_heap_switches_keep_order(void **state)
{
    (void)state;
    assert_true(swing(64, 40, 4, 0, 40000) > 100);
}

/* The same with thousands pending: ring, heap, radix heap (from ENGINE_RADIX_MIN events) and
 * back; ties within a radix bucket and across its spreads, and now and then a far event (high
 * buckets). */
static void test_radix_switches_keep_order(void **state)
{
    (void)state;
    assert_true(swing(3000, 2999, 8, 1000000, 60000) >= 3);
}

/* An event scheduled before one already popped (engine_pop() leaves now alone): the radix
 * heap cannot hold it, the queue goes back to the heap and keeps the order. */
static void test_radix_falls_back_to_heap(void **state)
{
    struct engine e;
    struct event ev;
    int i;

    (void)state;
    engine_init(&e);
    for (i = 0; i < 200; i++)
        engine_at(&e, 1000 + i, nop, NULL, i);
    assert_true(engine_pop(&e, &ev));
    assert_int_equal(ev.t, 1000);
    engine_at(&e, 5, nop, NULL, 500); /* before 1000: now is still 0 */
    engine_at(&e, 5, nop, NULL, 501);
    assert_true(engine_pop(&e, &ev));
    assert_int_equal(ev.data, 500);
    assert_true(engine_pop(&e, &ev));
    assert_int_equal(ev.data, 501);
    for (i = 1; i < 200; i++) {
        assert_true(engine_pop(&e, &ev));
        assert_int_equal(ev.t, 1000 + i);
    }
    assert_false(engine_pop(&e, &ev));
    engine_release(&e);
}

static int order[8], norder;

static void record(struct engine *e, void *ctx, int64_t data)
{
    (void)e;
    (void)ctx;
    order[norder++] = (int)data;
}

/* Events at the same time run in the order they were scheduled (FIFO). */
static void test_ties_run_fifo(void **state)
{
    struct engine e;
    int i;

    (void)state;
    norder = 0;
    engine_init(&e);
    engine_at(&e, 5, record, NULL, 0);
    engine_at(&e, 3, record, NULL, 1);
    engine_at(&e, 5, record, NULL, 2);
    engine_at(&e, 3, record, NULL, 3);
    engine_at(&e, 5, record, NULL, 4);
    assert_int_equal(engine_run(&e), 5);
    assert_int_equal(norder, 5);
    {
        const int want[] = { 1, 3, 0, 2, 4 };
        for (i = 0; i < 5; i++)
            assert_int_equal(order[i], want[i]);
    }
    engine_release(&e);
}

static void chain(struct engine *e, void *ctx, int64_t data)
{
    int *count = ctx;

    (*count)++;
    if (data > 0)
        engine_after(e, 10, chain, ctx, data - 1);
}

/* A handler may schedule more events; time advances by the delays. */
static void test_run_advances_time(void **state)
{
    struct engine e;
    int count = 0;

    (void)state;
    engine_init(&e);
    engine_at(&e, 0, chain, &count, 9);
    assert_int_equal(engine_run(&e), 90);
    assert_int_equal(count, 10);
    assert_int_equal(e.fired, 10);
    engine_release(&e);
}

/* A workload run by engine_run(): every handler checks it is the earliest pending event. */
struct hold {
    struct {
        sim_time t;
        int64_t id;
    } pend[256];
    int n;
    int64_t next_id;
    uint64_t rng;
    long ran;
};

static void hold_push(struct engine *e, struct hold *h, sim_time dt);

static void hold_fire(struct engine *e, void *ctx, int64_t data)
{
    struct hold *h = ctx;
    int best = 0, k, spawn;

    for (k = 1; k < h->n; k++) /* the reference: the (time, insertion) minimum of a list */
        if (h->pend[k].t < h->pend[best].t ||
            (h->pend[k].t == h->pend[best].t && h->pend[k].id < h->pend[best].id))
            best = k;
    assert_true(h->n > 0);
    assert_int_equal(e->now, h->pend[best].t);
    assert_int_equal(data, h->pend[best].id);
    h->pend[best] = h->pend[--h->n];
    h->ran++;
    if (h->ran >= 30000)
        return;
    /* swing the population between a few events (ring) and about a hundred (heap) */
    spawn = (h->ran / 500) % 2 ? (h->n < 100 ? 2 : 1) : (h->n > 3 ? 0 : 1);
    for (k = 0; k < spawn; k++)
        hold_push(e, h, (sim_time)(rng_next(&h->rng) % 5)); /* many ties, some at now */
}

static void hold_push(struct engine *e, struct hold *h, sim_time dt)
{
    assert_true(h->n < 256);
    h->pend[h->n].t = e->now + dt;
    h->pend[h->n].id = h->next_id;
    h->n++;
    engine_after(e, dt, hold_fire, h, h->next_id++);
}

/* engine_run() runs events in (time, insertion) order while the queue turns from ring to
 * heap and back, with handlers scheduling more (some at the current time). */
static void test_run_order_across_ring_heap_switches(void **state)
{
    static struct hold h;
    struct engine e;

    (void)state;
    memset(&h, 0, sizeof(h));
    h.rng = 7;
    engine_init(&e);
    hold_push(&e, &h, 0);
    engine_run(&e);
    assert_int_equal(h.n, 0);
    assert_true(h.ran >= 30000);
    assert_int_equal(e.fired, (uint64_t)h.next_id);
    engine_release(&e);
}

/* Sums and multiples of durations stop at SIM_TIME_MAX instead of wrapping negative. */
static void test_time_arithmetic_saturates(void **state)
{
    (void)state;
    assert_int_equal(time_add(3, 4), 7);
    assert_int_equal(time_add(SIM_TIME_MAX - 1, 1), SIM_TIME_MAX);
    assert_int_equal(time_add(SIM_TIME_MAX, SIM_TIME_MAX), SIM_TIME_MAX);
    assert_int_equal(time_mul(6, 7), 42);
    assert_int_equal(time_mul(SIM_TIME_MAX / 2 + 1, 2), SIM_TIME_MAX);
    assert_int_equal(time_mul(SIM_TIME_MAX, 0), 0);
    assert_int_equal(time_from_ns(2.1), 3);
    assert_int_equal(time_from_ns(-5), 0);
    assert_int_equal(time_from_ns(1e30), SIM_TIME_MAX);
    assert_int_equal(time_scale(10, 1.25), 13); /* 12.5 rounds up */
    assert_int_equal(time_scale(SIM_TIME_MAX / 2, 4.0), SIM_TIME_MAX);
    assert_int_equal(ns_from_s(1e30), SIM_TIME_MAX);
}

/* An event due after the clock's end is queued at SIM_TIME_MAX, after every earlier one. */
static void test_after_saturates_at_the_end_of_time(void **state)
{
    struct engine e;
    struct event ev;

    (void)state;
    engine_init(&e);
    e.now = SIM_TIME_MAX - 5;
    engine_after(&e, 10, nop, NULL, 1);
    engine_after(&e, 2, nop, NULL, 2);
    assert_true(engine_pop(&e, &ev));
    assert_int_equal(ev.t, SIM_TIME_MAX - 3);
    assert_true(engine_pop(&e, &ev));
    assert_int_equal(ev.t, SIM_TIME_MAX);
    assert_int_equal(ev.data, 1);
    engine_release(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_arithmetic_saturates),
        cmocka_unit_test(test_after_saturates_at_the_end_of_time),
        cmocka_unit_test(test_run_order_across_ring_heap_switches),
        cmocka_unit_test(test_heap_matches_sorted_reference),
        cmocka_unit_test(test_heap_interleaved_push_pop),
        cmocka_unit_test(test_ring_heap_switches_keep_order),
        cmocka_unit_test(test_radix_switches_keep_order),
        cmocka_unit_test(test_radix_falls_back_to_heap),
        cmocka_unit_test(test_ties_run_fifo),
        cmocka_unit_test(test_run_advances_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
