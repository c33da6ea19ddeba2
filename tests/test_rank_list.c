/*
 * test_rank_list.c - the --trace-ranks list (run/rank_list.h): ranks and ranges in any order
 * and overlapping parse to the ascending set; malformed lists, empty ranges and ranks outside
 * the job are refused with a message naming the flag; the compact form prints a set back;
 * a step traced with a list keeps exactly those ranks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support.h"

#include "run/rank_list.h"
#include "run/run.h"

/* "0-7,64" and its reordered, overlapping spellings give ranks 0..7 and 64. */
static void test_rank_list_parses_ranges_in_any_order(void **state)
{
    static const char *const texts[] = { "0-7,64", "64,0-7", "5-7,0-5,64,64",
                                         "0,1,2,3,4,5,6,7,64" };
    char buf[64];
    size_t k;

    (void)state;
    for (k = 0; k < ARRAY_LEN(texts); k++) {
        struct rank_list l;
        char err[160];
        int i;
        assert_int_equal(rank_list_parse("--trace-ranks", texts[k], 256, &l, err, sizeof(err)), 0);
        assert_int_equal(l.n, 9);
        for (i = 0; i < 8; i++)
            assert_int_equal(l.ranks[i], i);
        assert_int_equal(l.ranks[8], 64);
        rank_list_format(l.ranks, l.n, buf, sizeof(buf));
        assert_string_equal(buf, "0-7,64");
        rank_list_release(&l);
    }
}

/* Bad lists are refused with the flag named and exactly this message. */
static void test_rank_list_refuses_bad_lists(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        { "",
          "--trace-ranks: '' is not a rank or a range of ranks (expected a list such as 0-7,64)" },
        { "0-7,", "--trace-ranks: '' is not a rank or a range of ranks (expected a list such as "
                  "0-7,64)" },
        { "1,x3", "--trace-ranks: 'x3' is not a rank or a range of ranks (expected a list such as "
                  "0-7,64)" },
        { "-3", "--trace-ranks: '-3' is not a rank or a range of ranks (expected a list such as "
                "0-7,64)" },
        { "2 ,3", "--trace-ranks: '2 ' is not a rank or a range of ranks (expected a list such as "
                  "0-7,64)" },
        { "4-", "--trace-ranks: '4-' is not a rank or a range of ranks (expected a list such as "
                "0-7,64)" },
        { "99999999999", "--trace-ranks: '99999999999' is not a rank or a range of ranks (expected "
                         "a list such as 0-7,64)" },
        { "9-3", "--trace-ranks: range '9-3' is empty (9 > 3)" },
        { "0-8", "--trace-ranks: rank 8 is out of range: the job has 8 ranks (0-7)" },
        { "3,8", "--trace-ranks: rank 8 is out of range: the job has 8 ranks (0-7)" },
    };
    size_t k;

    (void)state;
    for (k = 0; k < ARRAY_LEN(cases); k++) {
        struct rank_list l;
        char err[160];
        assert_int_equal(rank_list_parse("--trace-ranks", cases[k].text, 8, &l, err, sizeof(err)),
                         -1);
        assert_string_equal(err, cases[k].want);
        assert_int_equal(l.n, 0);
        rank_list_release(&l);
    }
}

/* The compact form: runs of consecutive ranks become ranges; nothing prints as "". */
static void test_rank_list_format_compacts_runs(void **state)
{
    static const int r[] = { 0, 2, 3, 4, 9, 11, 12 };
    char buf[64];

    (void)state;
    rank_list_format(r, 7, buf, sizeof(buf));
    assert_string_equal(buf, "0,2-4,9,11-12");
    rank_list_format(r, 0, buf, sizeof(buf));
    assert_string_equal(buf, "");
    rank_list_format(r, 7, buf, 6); /* truncated, still terminated */
    assert_string_equal(buf, "0,2-4");
}

/*
 * A traced step of every rank of ddp_16gpu_2node keeps exactly the listed ranks, every one of
 * them with its tasks, and rank_list_traced() says so; without a list it keeps them all.
 */
static void test_rank_list_trace_keeps_listed_ranks(void **state)
{
    struct scenario *s = test_load("scenarios/ddp_16gpu_2node.yaml", NULL, NULL);
    static const int want[] = { 3, 9, 10 };
    size_t k;

    (void)state;
    for (k = 0; k < 2; k++) {
        struct sim_opts opts = { .all_ranks = true, .trace = true };
        struct run r;
        char reason[256], kept[128];
        int seen[16] = { 0 };
        size_t i;
        if (k == 0) {
            opts.trace_ranks = want;
            opts.ntrace_ranks = 3;
        }
        assert_int_equal(run_scenario(s, &opts, &r, reason, sizeof(reason)), 0);
        for (i = 0; i < r.sim.ntrace; i++)
            seen[r.sim.ranks[r.sim.trace[i].rank_idx].rank] = 1;
        for (i = 0; i < 16; i++)
            assert_int_equal(seen[i], k == 1 || i == 3 || i == 9 || i == 10);
        assert_int_equal(rank_list_traced(&r.sim, kept, sizeof(kept)), k == 0 ? 3 : 16);
        assert_string_equal(kept, k == 0 ? "3,9-10" : "0-15");
        run_release(&r);
    }
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_list_parses_ranges_in_any_order),
        cmocka_unit_test(test_rank_list_refuses_bad_lists),
        cmocka_unit_test(test_rank_list_format_compacts_runs),
        cmocka_unit_test(test_rank_list_trace_keeps_listed_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
