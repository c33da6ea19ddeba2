/* test_layout.c - rank placement: coordinates, orders, groups, peers (layout.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/layout.h"

/* A scenario carrying only what layout_init reads. */
static void make(struct scenario *s, int tp, int cp, int dp, int pp, int ep, const char *order)
{
    static const char *const names[DIM_COUNT] = { "tp", "cp", "ep", "dp", "pp" };
    int i, d;

    memset(s, 0, sizeof(*s));
    s->par.tp = tp;
    s->par.cp = cp;
    s->par.dp = dp;
    s->par.pp = pp;
    s->par.ep = ep;
    s->par.vpp = 1;
    s->hw.gpus_per_node = 8;
    s->gpus = tp * cp * dp * pp;
    for (i = 0; i < DIM_COUNT; i++) {
        const char *name = order + 3 * i;
        for (d = 0; d < DIM_COUNT; d++)
            if (strncmp(name, names[d], 2) == 0)
                s->par.order[i] = d;
    }
}

/* layout_rank inverts layout_coords for every rank, under two placement orders. */
static void test_layout_coords_roundtrip(void **state)
{
    const char *orders[] = { "tp-cp-ep-dp-pp", "pp-dp-ep-cp-tp" };
    struct scenario s;
    struct layout l;
    size_t k;
    int r;

    (void)state;
    for (k = 0; k < ARRAY_LEN(orders); k++) {
        make(&s, 2, 2, 4, 2, 2, orders[k]);
        layout_init(&l, &s);
        assert_int_equal(l.world, 32);
        for (r = 0; r < l.world; r++) {
            int c[DIM_COUNT];
            layout_coords(&l, r, c);
            assert_int_equal(layout_rank(&l, c), r);
            assert_int_equal(c[DIM_EP], c[DIM_DP] % 2);
        }
    }
}

/* Default order tp-cp-ep-dp-pp: a TP group of 8 is 8 consecutive ranks on one node (NAR21 §3.2). */
static void test_layout_tp_innermost_in_node(void **state)
{
    struct scenario s;
    struct layout l;
    int g[64], n, i;

    (void)state;
    make(&s, 8, 1, 4, 2, 1, "tp-cp-ep-dp-pp");
    layout_init(&l, &s);
    n = layout_group(&l, 19, COMM_TP, g, 64);
    assert_int_equal(n, 8);
    for (i = 0; i < n; i++) {
        assert_int_equal(g[i], 16 + i);
        assert_int_equal(layout_node(&l, g[i]), 2);
    }
    /* DP peers of rank 19 are 8 apart; the next pipeline stage is 32 ranks on. */
    n = layout_group(&l, 19, COMM_DP, g, 64);
    assert_int_equal(n, 4);
    assert_int_equal(g[0], 3);
    assert_int_equal(g[3], 27);
    assert_int_equal(layout_peer(&l, 19, COMM_PP_NEXT), 51);
    assert_int_equal(layout_peer(&l, 51, COMM_PP_NEXT), 19); /* wraps for interleaving */
    assert_int_equal(layout_peer(&l, 19, COMM_PP_PREV), 51);
}

/* Order pp-dp-...: pipeline stages become neighbours and TP spreads over nodes. */
static void test_layout_order_moves_groups(void **state)
{
    struct scenario s;
    struct layout l;
    int g[64], n;

    (void)state;
    make(&s, 8, 1, 1, 8, 1, "pp-dp-ep-cp-tp");
    layout_init(&l, &s);
    assert_int_equal(layout_peer(&l, 0, COMM_PP_NEXT), 1);
    n = layout_group(&l, 0, COMM_TP, g, 64);
    assert_int_equal(n, 8);
    assert_int_equal(g[1], 8);
    assert_int_equal(layout_node(&l, g[1]), 1);
}

/* EP groups are ep consecutive DP indices; EDP groups are the DP indices with the same EP slot. */
static void test_layout_expert_groups(void **state)
{
    struct scenario s;
    struct layout l;
    int g[64], n, i;

    (void)state;
    make(&s, 2, 1, 8, 1, 4, "tp-cp-ep-dp-pp");
    layout_init(&l, &s);
    /* rank 10: tp 0, dp 5 -> EP group dp 4..7 (ranks 8, 10, 12, 14); EDP dp 1, 5 (ranks 2, 10) */
    n = layout_group(&l, 10, COMM_EP, g, 64);
    assert_int_equal(n, 4);
    for (i = 0; i < n; i++)
        assert_int_equal(g[i], 8 + 2 * i);
    n = layout_group(&l, 10, COMM_EDP, g, 64);
    assert_int_equal(n, 2);
    assert_int_equal(g[0], 2);
    assert_int_equal(g[1], 10);
    assert_int_equal(layout_group_size(&l, COMM_EDP), 2);
}

/* With cp > 1 the gradient group spans dp * cp ranks; CP peers are adjacent after TP. */
static void test_layout_cp_groups(void **state)
{
    struct scenario s;
    struct layout l;
    int g[64], n;

    (void)state;
    make(&s, 4, 2, 2, 2, 1, "tp-cp-ep-dp-pp");
    layout_init(&l, &s);
    n = layout_group(&l, 5, COMM_CP, g, 64);
    assert_int_equal(n, 2);
    assert_int_equal(g[0], 1);
    assert_int_equal(g[1], 5);
    n = layout_group(&l, 5, COMM_DP, g, 64);
    assert_int_equal(n, 4);
    assert_int_equal(g[0], 1);
    assert_int_equal(g[3], 13);
}

/*
 * Group shapes on 8-GPU nodes: a DP group of 4 with tp 8 takes local GPU 0 of four nodes (rail
 * aligned); with tp 2 the DP group of 16 holds GPUs 0, 2, 4, 6 of each of four nodes (aligned);
 * members at different local indices on two nodes are not; one node's group spans 1 node.
 */
static void test_layout_group_shape(void **state)
{
    static const int skewed[] = { 0, 1, 9, 10 };
    struct scenario s;
    struct layout l;
    struct comm_group g;
    int m[32], n;

    (void)state;
    make(&s, 8, 1, 4, 1, 1, "tp-cp-ep-dp-pp");
    layout_init(&l, &s);
    n = layout_group(&l, 0, COMM_DP, m, 32);
    layout_group_shape(&l, m, n, &g);
    assert_int_equal(g.nranks, 4);
    assert_int_equal(g.nnodes, 4);
    assert_int_equal(g.ppn, 1);
    assert_true(g.rail_aligned);
    n = layout_group(&l, 0, COMM_TP, m, 32);
    layout_group_shape(&l, m, n, &g);
    assert_int_equal(g.nnodes, 1);
    assert_int_equal(g.ppn, 8);
    make(&s, 2, 1, 16, 1, 1, "tp-cp-ep-dp-pp");
    layout_init(&l, &s);
    n = layout_group(&l, 0, COMM_DP, m, 32);
    layout_group_shape(&l, m, n, &g);
    assert_int_equal(g.nranks, 16);
    assert_int_equal(g.nnodes, 4);
    assert_int_equal(g.ppn, 4);
    assert_true(g.rail_aligned);
    layout_group_shape(&l, skewed, 4, &g);
    assert_int_equal(g.nnodes, 2);
    assert_int_equal(g.ppn, 2);
    assert_false(g.rail_aligned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_coords_roundtrip),
        cmocka_unit_test(test_layout_tp_innermost_in_node),
        cmocka_unit_test(test_layout_order_moves_groups),
        cmocka_unit_test(test_layout_expert_groups),
        cmocka_unit_test(test_layout_cp_groups),
        cmocka_unit_test(test_layout_group_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
