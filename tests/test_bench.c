/* test_bench.c - the collective model as nccl-tests runs it (net/bench.h) and the comparison
 * with published measurements (fit/nccl_validate.h). */
#define _POSIX_C_SOURCE 200809L /* setenv(), open_memstream() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "fit/nccl_validate.h"
#include "net/bench.h"

static struct hardware *load_hw(const char *name)
{
    struct hardware *hw = cfg_load_hardware(name, stderr);

    assert_non_null(hw);
    return hw;
}

/* nccl-tests sizes: K, M, G, T are powers of 1024, with optional "i" and "B"; junk is refused. */
static void test_bench_parse_size(void **state)
{
    static const struct {
        const char *text;
        double bytes;
    } ok[] = { { "8", 8 },
               { "1K", 1024 },
               { "64M", 64 * 1048576.0 },
               { "8G", 8 * 1073741824.0 },
               { "1GiB", 1073741824.0 },
               { "512 B", 512 },
               { "2T", 2 * 1099511627776.0 } };
    static const char *const bad[] = { "", "x", "8Q", "-1", "1KB!", "inf" };
    double v;

    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(bench_parse_size(ok[i].text, &v), 0);
        assert_true(fabs(v - ok[i].bytes) < 0.5);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(bench_parse_size(bad[i], &v), -1);
}

/*
 * 16 GPUs of 8-GPU nodes fill two nodes; 8 GPUs over --nodes 4 take the first 2 GPUs of each
 * node (GPU ids 0, 1, 8, 9, ..., 25).
 */
static void test_bench_place(void **state)
{
    struct hardware *hw = load_hw("tiny-box");
    struct comm_group g;
    struct topo *t;
    int last;

    (void)state;
    t = bench_place(hw, 16, 0, &g, &last);
    assert_int_equal(g.nranks, 16);
    assert_int_equal(g.nnodes, 2);
    assert_int_equal(g.ppn, 8);
    assert_int_equal(last, 15);
    topo_free(t);
    t = bench_place(hw, 8, 4, &g, &last);
    assert_int_equal(g.nnodes, 4);
    assert_int_equal(g.ppn, 2);
    assert_int_equal(last, 25);
    topo_free(t);
    cfg_free_hw(hw);
}

/* Placements the nodes cannot hold, and algorithms the hardware lacks, are refused with the
 * reason and the option at fault. */
static void test_bench_check(void **state)
{
    struct hardware *box = load_hw("tiny-box"), *pcie = load_hw("tiny-pcie");
    char msg[256];

    (void)state;
    assert_int_equal(bench_check(box, 16, 0, ALGO_AUTO, msg, sizeof(msg)), 0);
    assert_int_equal(bench_check(box, 8, 4, ALGO_AUTO, msg, sizeof(msg)), 0);
    assert_int_equal(bench_check(box, 64, 1, ALGO_AUTO, msg, sizeof(msg)), -1);
    assert_string_equal(msg, "64 GPUs do not split evenly over 1 node of 8 GPUs");
    assert_int_equal(bench_check(box, 12, 5, ALGO_AUTO, msg, sizeof(msg)), -1);
    assert_int_equal(bench_check(pcie, 8, 0, ALGO_AUTO, msg, sizeof(msg)), -1);
    assert_string_equal(msg, "'tiny-pcie' has no network: at most 4 GPUs on one node");
    /* filling nodes in order, 12 GPUs would be 2 nodes of 6: the split must be asked for */
    assert_int_equal(bench_check(box, 12, 0, ALGO_AUTO, msg, sizeof(msg)), -1);
    assert_string_equal(msg, "--gpus 12 is not a whole number of 8-GPU nodes: give --nodes M to "
                             "place 12/M GPUs on each of M nodes");
    assert_int_equal(bench_check(box, 12, 2, ALGO_AUTO, msg, sizeof(msg)), 0);
    assert_int_equal(bench_check(box, 4, 0, ALGO_AUTO, msg, sizeof(msg)), 0); /* part of a node */
    /* NVLS needs NVSwitch and Hopper, as the scenario loader requires (coll_algo_available) */
    assert_int_equal(bench_check(box, 8, 0, ALGO_NVLS, msg, sizeof(msg)), 0);
    assert_int_equal(bench_check(pcie, 4, 0, ALGO_NVLS, msg, sizeof(msg)), -1);
    assert_string_equal(msg, "--algo nvls needs an NVSwitch system of the Hopper generation or "
                             "later, which 'tiny-pcie' is not");
    assert_int_equal(bench_check(pcie, 4, 0, ALGO_RING, msg, sizeof(msg)), 0);
    cfg_free_hw(box);
    cfg_free_hw(pcie);
}

/*
 * A row holds nccl-tests' definitions: algbw = size / time, busbw = algbw x 2(n-1)/n for an
 * all-reduce and (n-1)/n for an all-gather, whose count is per rank; more iterations do not
 * change the time per iteration of a large message.
 */
static void test_bench_row_definitions(void **state)
{
    struct hardware *hw = load_hw("tiny-box");
    struct bench_cfg c = { .op = COLL_ALL_REDUCE, .launch = LAUNCH_PER_RANK, .iters = 20 };
    struct bench_row r, r100;
    struct comm_group g;
    struct topo *t;
    int last;

    (void)state;
    t = bench_place(hw, 8, 0, &g, &last);
    bench_row(hw, &g, &c, 1 << 30, &r);
    assert_true(r.time_s > 0);
    assert_true(fabs(r.algbw_GBps - (1 << 30) / r.time_s / 1e9) < 1e-9 * r.algbw_GBps);
    assert_true(fabs(r.busbw_GBps - r.algbw_GBps * 2 * 7 / 8) < 1e-9 * r.busbw_GBps);
    assert_true(fabs(r.count - (1 << 28)) < 0.5);
    c.iters = 100;
    bench_row(hw, &g, &c, 1 << 30, &r100);
    assert_true(fabs(r100.time_s - r.time_s) < 1e-3 * r.time_s);
    c.op = COLL_ALL_GATHER;
    bench_row(hw, &g, &c, 1 << 30, &r);
    assert_true(fabs(r.busbw_GBps - r.algbw_GBps * 7 / 8) < 1e-9 * r.busbw_GBps);
    assert_true(fabs(r.count - (1 << 28) / 8.0) < 0.5);
    topo_free(t);
    cfg_free_hw(hw);
}

/* --validate: a row that fits is compared, one that does not fit its nodes is skipped. */
static void test_nccl_validate_rows(void **state)
{
    char path[] = "/tmp/simtrain-nccl-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w"), *out;
    char *text = NULL;
    size_t len = 0;

    (void)state;
    assert_non_null(f);
    fputs("source,gpu,num_gpus,num_nodes,message_size_bytes,algorithm,metric_name,metric_value,"
          "notes\n"
          "test,DGX-H100,8,1,1073741824,,measured_busbw,400,\n"
          "test,DGX-H100,16,1,1073741824,,measured_busbw,400,\n",
          f);
    fclose(f);
    out = open_memstream(&text, &len);
    assert_int_equal(nccl_validate_file(path, false, out), 0);
    fclose(out);
    assert_non_null(
        strstr(text, "    2 test                         dgx-h100      all_reduce   8"));
    assert_non_null(strstr(text, "    3 test                         skipped: more GPUs than its "
                                 "nodes hold"));
    free(text);
    out = open_memstream(&text, &len);
    assert_int_equal(nccl_validate_file("/nonexistent/nccl.csv", false, out), 1);
    fclose(out);
    free(text);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_parse_size),   cmocka_unit_test(test_bench_place),
        cmocka_unit_test(test_bench_check),        cmocka_unit_test(test_bench_row_definitions),
        cmocka_unit_test(test_nccl_validate_rows),
    };

    setenv("SIMTRAIN_DATA", SIMTRAIN_SOURCE_DIR "/tests/fixtures", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
