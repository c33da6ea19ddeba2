/* test_flow.c - max-min fair sharing (flow.h), against hand cases and a slow reference. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/flow.h"
#include "base/util.h"

/* a equals b to 1e-9 relative */
static int rel_eq(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}
#define REL(a, b) rel_eq((a), (b))

/* ---- a slow reference: water-filling in small exact steps ---------------------------- */

struct ref_case {
    int nlinks, nflows;
    double link_cap[8];
    double flow_cap[10]; /* INFINITY = uncapped */
    int on[10][8];       /* on[f][l] = 1 when flow f crosses link l */
};

/*
 * Raise every unfrozen flow by the same amount until a link saturates or a
 * flow reaches its cap, freeze those, repeat. A different route to the same
 * unique max-min allocation.
 */
static void ref_solve(const struct ref_case *c, double *rate)
{
    int frozen[10] = { 0 }, left = c->nflows, f, l;

    memset(rate, 0, sizeof(double) * (size_t)c->nflows);
    while (left > 0) {
        double delta = INFINITY;
        for (l = 0; l < c->nlinks; l++) {
            double used = 0;
            int n = 0;
            for (f = 0; f < c->nflows; f++) {
                if (!c->on[f][l])
                    continue;
                used += rate[f];
                n += !frozen[f];
            }
            if (n > 0)
                delta = fmin(delta, (c->link_cap[l] - used) / n);
        }
        for (f = 0; f < c->nflows; f++)
            if (!frozen[f])
                delta = fmin(delta, c->flow_cap[f] - rate[f]);
        for (f = 0; f < c->nflows; f++)
            if (!frozen[f])
                rate[f] += delta;
        for (f = 0; f < c->nflows; f++) {
            if (frozen[f])
                continue;
            if (rate[f] >= c->flow_cap[f] * (1 - 1e-12)) {
                frozen[f] = 1;
                left--;
                continue;
            }
            for (l = 0; l < c->nlinks; l++) {
                double used = 0;
                int g;
                if (!c->on[f][l])
                    continue;
                for (g = 0; g < c->nflows; g++)
                    if (c->on[g][l])
                        used += rate[g];
                if (used >= c->link_cap[l] * (1 - 1e-12)) {
                    frozen[f] = 1;
                    left--;
                    break;
                }
            }
        }
    }
}

static void random_case(uint64_t *rng, struct ref_case *c)
{
    int f, l;

    memset(c, 0, sizeof(*c));
    c->nlinks = 1 + (int)(rng_uniform(rng) * 6);
    c->nflows = 1 + (int)(rng_uniform(rng) * 9);
    for (l = 0; l < c->nlinks; l++)
        c->link_cap[l] = 1 + floor(rng_uniform(rng) * 100);
    for (f = 0; f < c->nflows; f++) {
        int any = 0;
        c->flow_cap[f] = rng_uniform(rng) < 0.3 ? 1 + floor(rng_uniform(rng) * 60) : INFINITY;
        for (l = 0; l < c->nlinks; l++) {
            c->on[f][l] = rng_uniform(rng) < 0.4;
            any |= c->on[f][l];
        }
        if (!any)
            c->on[f][(int)(rng_uniform(rng) * c->nlinks)] = 1;
    }
}

static void solve_case(const struct ref_case *c, double *rate)
{
    struct flow_net *net = flow_new();
    int ids[10], f, l;

    for (l = 0; l < c->nlinks; l++)
        flow_link_add(net, c->link_cap[l]);
    for (f = 0; f < c->nflows; f++) {
        int links[8], n = 0;
        for (l = 0; l < c->nlinks; l++)
            if (c->on[f][l])
                links[n++] = l;
        ids[f] = flow_add(net, isfinite(c->flow_cap[f]) ? c->flow_cap[f] : 0, links, n);
    }
    flow_solve(net);
    for (f = 0; f < c->nflows; f++)
        rate[f] = flow_rate(net, ids[f]);
    flow_free(net);
}

/* ---- tests ------------------------------------------------------------------------- */

/* Two flows forced through one 100 GB/s link each get half of it: 50 / 50. */
static void test_flow_two_flows_halve_link(void **state)
{
    struct flow_net *net = flow_new();
    int l = flow_link_add(net, 100e9), a, b;

    (void)state;
    a = flow_add(net, 0, &l, 1);
    b = flow_add(net, 0, &l, 1);
    flow_solve(net);
    assert_true(REL(flow_rate(net, a), 50e9));
    assert_true(REL(flow_rate(net, b), 50e9));
    flow_free(net);
}

/* SimGrid maxmin_test: 2 flows share a 100 link; flow 2 capped at 20 -> 80 / 20. */
static void test_flow_cap_gives_rest_to_other(void **state)
{
    struct flow_net *net = flow_new();
    int l = flow_link_add(net, 100), a, b;

    (void)state;
    a = flow_add(net, 0, &l, 1);
    b = flow_add(net, 20, &l, 1);
    flow_solve(net);
    assert_true(REL(flow_rate(net, a), 80));
    assert_true(REL(flow_rate(net, b), 20));
    flow_free(net);
}

/* Link A (10) carries f0, f1; link B (100) carries f1, f2: f0 = f1 = 5, f2 = 95. */
static void test_flow_bottleneck_chain(void **state)
{
    struct flow_net *net = flow_new();
    int A = flow_link_add(net, 10), B = flow_link_add(net, 100);
    int both[2] = { A, B }, f0, f1, f2;

    (void)state;
    f0 = flow_add(net, 0, &A, 1);
    f1 = flow_add(net, 0, both, 2);
    f2 = flow_add(net, 0, &B, 1);
    flow_solve(net);
    assert_true(REL(flow_rate(net, f0), 5));
    assert_true(REL(flow_rate(net, f1), 5));
    assert_true(REL(flow_rate(net, f2), 95));
    flow_free(net);
}

/* 300 random small networks: the solver equals the water-filling reference. */
static void test_flow_matches_reference(void **state)
{
    uint64_t rng = 42;
    int k, f;

    (void)state;
    for (k = 0; k < 300; k++) {
        struct ref_case c;
        double got[10], want[10];
        random_case(&rng, &c);
        solve_case(&c, got);
        ref_solve(&c, want);
        for (f = 0; f < c.nflows; f++)
            if (fabs(got[f] - want[f]) > 1e-6 * fmax(1, want[f]))
                fail_msg("case %d flow %d: solver %.9g, reference %.9g", k, f, got[f], want[f]);
    }
}

/*
 * The same random networks satisfy the definition: links never overloaded,
 * and every flow is at its cap or crosses a saturated link on which no flow
 * gets more than it does (Bertsekas & Gallager 6.5.2).
 */
static void test_flow_is_max_min_fair(void **state)
{
    uint64_t rng = 7;
    int k, f, l, g;

    (void)state;
    for (k = 0; k < 300; k++) {
        struct ref_case c;
        double r[10];
        random_case(&rng, &c);
        solve_case(&c, r);
        for (l = 0; l < c.nlinks; l++) {
            double used = 0;
            for (f = 0; f < c.nflows; f++)
                used += c.on[f][l] ? r[f] : 0;
            assert_true(used <= c.link_cap[l] * (1 + 1e-9));
        }
        for (f = 0; f < c.nflows; f++) {
            int bottlenecked = r[f] >= c.flow_cap[f] * (1 - 1e-9);
            for (l = 0; l < c.nlinks && !bottlenecked; l++) {
                double used = 0, top = 0;
                if (!c.on[f][l])
                    continue;
                for (g = 0; g < c.nflows; g++)
                    if (c.on[g][l]) {
                        used += r[g];
                        top = fmax(top, r[g]);
                    }
                bottlenecked = used >= c.link_cap[l] * (1 - 1e-9) && r[f] >= top * (1 - 1e-9);
            }
            if (!bottlenecked)
                fail_msg("case %d: flow %d (%.6g) has no bottleneck", k, f, r[f]);
        }
    }
}

/* Removing a flow frees its share at the next solve, and its slot is reused first. */
static void test_flow_remove_and_reuse_slot(void **state)
{
    struct flow_net *net = flow_new();
    int l = flow_link_add(net, 90), a, b, c, d;

    (void)state;
    a = flow_add(net, 0, &l, 1);
    b = flow_add(net, 0, &l, 1);
    c = flow_add(net, 0, &l, 1);
    flow_solve(net);
    assert_true(REL(flow_rate(net, a), 30));
    flow_remove(net, b);
    flow_solve(net);
    assert_true(REL(flow_rate(net, a), 45));
    assert_true(REL(flow_rate(net, c), 45));
    assert_int_equal(flow_count(net), 2);
    d = flow_add(net, 0, &l, 1);
    assert_int_equal(d, b);
    flow_solve(net);
    assert_true(REL(flow_rate(net, d), 30));
    flow_free(net);
}

/* A capped flow on no link runs at its cap; duplicate link ids count once. */
static void test_flow_linkless_and_duplicates(void **state)
{
    struct flow_net *net = flow_new();
    int l = flow_link_add(net, 100), twice[2] = { l, l }, a, b;

    (void)state;
    a = flow_add(net, 7, NULL, 0);
    b = flow_add(net, 0, twice, 2);
    flow_solve(net);
    assert_true(REL(flow_rate(net, a), 7));
    assert_true(REL(flow_rate(net, b), 100));
    flow_free(net);
}

/* The same calls give bit-identical rates (no dependence on addresses or hashing). */
static void test_flow_deterministic(void **state)
{
    double r1[64], r2[64];
    int run, i;

    (void)state;
    for (run = 0; run < 2; run++) {
        struct flow_net *net = flow_new();
        uint64_t rng = 99;
        int ids[64];
        for (i = 0; i < 16; i++)
            flow_link_add(net, 10 + 90 * rng_uniform(&rng));
        for (i = 0; i < 64; i++) {
            int links[3] = { (int)(rng_uniform(&rng) * 16), (int)(rng_uniform(&rng) * 16),
                             (int)(rng_uniform(&rng) * 16) };
            ids[i] =
                flow_add(net, rng_uniform(&rng) < 0.5 ? 5 * rng_uniform(&rng) + 0.1 : 0, links, 3);
        }
        flow_solve(net);
        for (i = 0; i < 64; i++)
            (run ? r2 : r1)[i] = flow_rate(net, ids[i]);
        flow_free(net);
    }
    assert_memory_equal(r1, r2, sizeof(r1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flow_two_flows_halve_link),
        cmocka_unit_test(test_flow_cap_gives_rest_to_other),
        cmocka_unit_test(test_flow_bottleneck_chain),
        cmocka_unit_test(test_flow_matches_reference),
        cmocka_unit_test(test_flow_is_max_min_fair),
        cmocka_unit_test(test_flow_remove_and_reuse_slot),
        cmocka_unit_test(test_flow_linkless_and_duplicates),
        cmocka_unit_test(test_flow_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
