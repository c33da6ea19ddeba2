/* test_plan_goal.c - goal-seeking over GPU counts (whatif/plan_goal.h): the answer meets the
 * deadline, the count tried below it misses it (both confirmed apart from the search), and
 * impossible goals are refused with their figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "run/run.h"
#include "run/totals.h"
#include "whatif/plan_goal.h"
#include "support.h"

#define DAY 86400.0

/* Time to train of candidate c of `base` simulated anew (plan_apply, the loader, the engine). */
static double resimulate(const struct scenario *base, const struct plan_cand *c)
{
    struct scenario s;
    struct cfg_error err;
    struct run r;
    struct train_totals t;

    plan_apply(base, c, &s);
    assert_int_equal(scenario_finalize(&s, &err), 0);
    test_simulate(&s, false, &r);
    assert_true(r.fits);
    train_totals(&s, r.step_s, &t);
    run_release(&r);
    return t.seconds;
}

/*
 * GPT-2 XL over 200 G tokens within a day: the fewest nodes meet it, on a fresh simulation of
 * the chosen layout; a fresh plan search at the count tried below finds nothing that does.
 */
static void test_goal_deadline_boundary(void **state)
{
    struct scenario *s = test_load("scenarios/ddp_16gpu_2node.yaml", NULL, NULL);
    struct plan_opts o = { .top = 3, .shard_n = 1 };
    struct plan_goal g = { .tokens = 200e9, .days = 1 };
    struct plan_goal_result r;
    char msg[512];

    (void)state;
    assert_int_equal(plan_goal_search(s, &o, &g, &r, NULL, msg, sizeof(msg)), 0);
    assert_true(r.chosen >= 0 && r.below >= 0);
    assert_true(r.tries[r.chosen].meets && !r.tries[r.below].meets);
    assert_true(r.tries[r.below].gpus < r.tries[r.chosen].gpus);
    assert_true(r.tries[r.chosen].gpus >= r.ideal_gpus); /* the bound holds */
    assert_true(resimulate(&r.goal_base, &r.tries[r.chosen].best) <= DAY);
    {
        struct plan_opts below = o;
        struct plan_result pr;
        below.ngpus = 1;
        below.gpus[0] = r.tries[r.below].gpus;
        assert_int_equal(plan_search(&r.goal_base, &below, &pr, NULL, msg, sizeof(msg)), 0);
        for (int i = 0; i < pr.nfinal; i++)
            assert_true(pr.final[i].tt.seconds > DAY);
        plan_result_release(&pr);
    }
    assert_true(r.have_plan && r.plan.nfinal > 0);
    plan_goal_release(&r);
    cfg_free(s);
}

/* Goals that cannot be met are refused with the figure that rules them out. */
static void test_goal_refuses_impossible(void **state)
{
    struct scenario *ws = test_load("scenarios/qlora_7b_4090.yaml", NULL, NULL);
    struct scenario *s = test_load("scenarios/ddp_16gpu_2node.yaml", NULL, NULL);
    struct plan_opts o = { .top = 2, .shard_n = 1 };
    struct plan_goal_result r;
    char msg[512];

    (void)state;
    /* a workstation without a network: one node at most */
    assert_int_equal(plan_goal_search(ws, &o, &(struct plan_goal){ .tokens = 1e12, .days = 1 }, &r,
                                      NULL, msg, sizeof(msg)),
                     3);
    assert_non_null(strstr(msg, "100 % MFU"));
    assert_non_null(strstr(msg, "no network"));
    plan_goal_release(&r);
    /* a budget below the cost at 100 % MFU */
    assert_int_equal(
        plan_goal_search(s, &o, &(struct plan_goal){ .tokens = 200e9, .budget = 1, .price = 2 }, &r,
                         NULL, msg, sizeof(msg)),
        3);
    assert_non_null(strstr(msg, "even at 100 % MFU"));
    plan_goal_release(&r);
    /* no tokens anywhere, no price for a budget */
    assert_int_equal(
        plan_goal_search(ws, &o, &(struct plan_goal){ .days = 1 }, &r, NULL, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "--tokens"));
    plan_goal_release(&r);
    assert_int_equal(plan_goal_search(s, &o, &(struct plan_goal){ .tokens = 1e9, .budget = 1e6 },
                                      &r, NULL, msg, sizeof(msg)),
                     -1);
    assert_non_null(strstr(msg, "--price"));
    plan_goal_release(&r);
    cfg_free(ws);
    cfg_free(s);
}

/* A budget alone: the cheapest plan over the counts tried, within the budget. */
static void test_goal_budget_cheapest(void **state)
{
    struct scenario *s = test_load("scenarios/ddp_16gpu_2node.yaml", NULL, NULL);
    struct plan_opts o = { .top = 2, .shard_n = 1 };
    struct plan_goal g = { .tokens = 20e9, .budget = 1e6, .price = 2 };
    struct plan_goal_result r;
    char msg[512];

    (void)state;
    assert_int_equal(plan_goal_search(s, &o, &g, &r, NULL, msg, sizeof(msg)), 0);
    assert_true(r.chosen >= 0 && r.tries[r.chosen].cost_usd <= g.budget);
    for (int i = 0; i < r.ntries; i++)
        if (r.tries[i].fits)
            assert_true(r.tries[r.chosen].cost_usd <= r.tries[i].cost_usd);
    assert_true(r.ntries >= 2);
    plan_goal_release(&r);
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goal_deadline_boundary),
        cmocka_unit_test(test_goal_refuses_impossible),
        cmocka_unit_test(test_goal_budget_cheapest),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
