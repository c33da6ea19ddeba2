/* test_sweep_stream.c - a sweep evaluated and written point by point (sweep_stream(),
 * sweep_writer; sweep.h): the same bytes as the whole-sweep path, in bounded memory. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp(), setenv(), open_memstream() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/schema.h"
#include "whatif/sweep.h"

/* tiny-llama (8 layers) on 8-GPU tiny-box nodes (test fixtures), data-parallel. */
static const char scenario_text[] = "name: stream_test\n"
                                    "hardware: tiny-box\n"
                                    "workload: tiny-llama\n"
                                    "cluster:\n"
                                    "  nodes: 1\n"
                                    "training:\n"
                                    "  seq_len: 1024\n"
                                    "  global_batch: 64\n"
                                    "  micro_batch: 2\n"
                                    "  tokens: 10G\n"
                                    "  price_per_gpu_hour: 2\n"
                                    "parallelism:\n"
                                    "  dp: 8\n";

static char dir[64], path[128];

static int setup(void **state)
{
    FILE *f;

    (void)state;
    setenv("SIMTRAIN_DATA", SIMTRAIN_SOURCE_DIR "/tests/fixtures", 1);
    snprintf(dir, sizeof(dir), "/tmp/simtrain-stream-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/stream.yaml", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(scenario_text, f);
    return fclose(f);
}

static int teardown(void **state)
{
    (void)state;
    remove(path);
    return rmdir(dir);
}

/* A sweep of the fixture with base overrides `sets` and axes `varies` (NULL-terminated). */
struct case_sweep {
    struct cfg_override ovr[4];
    int novr;
    struct scenario *s;
    struct sweep sw;
};

static void make(struct case_sweep *c, const char *const *sets, const char *const *varies)
{
    char msg[256];

    memset(c, 0, sizeof(*c));
    for (; sets && sets[c->novr]; c->novr++)
        assert_int_equal(cfg_override_init(&c->ovr[c->novr], sets[c->novr], stderr), 0);
    c->s = cfg_load_scenario(path, c->ovr, c->novr, stderr);
    assert_non_null(c->s);
    sweep_init(&c->sw, path, c->s, c->ovr, c->novr, false);
    for (int i = 0; varies[i]; i++)
        if (sweep_add_axis(&c->sw, varies[i], msg, sizeof(msg)) != 0)
            fail_msg("%s: %s", varies[i], msg);
}

static void unmake(struct case_sweep *c)
{
    sweep_release(&c->sw);
    cfg_free(c->s);
    for (int i = 0; i < c->novr; i++)
        cfg_override_release(&c->ovr[i]);
}

/* The CSV and JSON of the whole-sweep path: every point run, then the efficiencies. */
static void batch(const struct sweep *sw, int k, int n, char **csv, char **json)
{
    struct sweep_point *pts = calloc((size_t)sw->npoints, sizeof(*pts));
    size_t len;
    FILE *f;

    sweep_run(sw, k, n, pts, NULL);
    if (n == 1)
        sweep_efficiency(sw, pts, sw->npoints);
    f = open_memstream(csv, &len);
    assert_int_equal(sweep_write_csv(sw, pts, sw->npoints, f), 0);
    fclose(f);
    f = open_memstream(json, &len);
    assert_int_equal(sweep_write_json(sw, pts, sw->npoints, f), 0);
    fclose(f);
    free(pts);
}

/* Counts the points a sink receives and checks they arrive in index order. */
struct order_check {
    struct sweep_writer w;
    long last, count;
};

static void checked_point(void *ctx, const struct sweep *sw, const struct sweep_point *p)
{
    struct order_check *c = ctx;

    assert_true(p->index > c->last);
    c->last = p->index;
    c->count++;
    sweep_writer_point(&c->w, sw, p);
}

/* The CSV and JSON of the streaming path. */
static long stream(const struct sweep *sw, int k, int n, char **csv, char **json)
{
    struct order_check c = { .last = -1 };
    struct sweep_sink sink = { checked_point, &c };
    size_t lc, lj;

    c.w.csv = open_memstream(csv, &lc);
    c.w.json = open_memstream(json, &lj);
    sweep_writer_begin(&c.w, sw);
    sweep_stream(sw, k, n, &sink, NULL);
    sweep_writer_end(&c.w, sw);
    fclose(c.w.csv);
    fclose(c.w.json);
    sweep_writer_release(&c.w);
    return c.count;
}

/*
 * Streaming writes the bytes of the whole-sweep path, efficiencies included, whatever the
 * axes' order, the order of the sizes, a group whose smallest GPU count does not fit (ZeRO-3
 * on 2.85 GiB GPUs: 1 node needs 3.08 GB, more fit), invalid points, a file reference
 * axis that changes the GPUs per node, no size axis, and shards.
 */
static void test_sweep_stream_matches_whole_sweep(void **state)
{
    static const char *const zero3[] = { "parallelism.sharding=zero3",
                                         "hardware.gpu.memory=2.9 GiB", NULL };
    static const struct {
        const char *const *sets;
        const char *varies[3];
        int k, n;
    } cases[] = {
        { NULL, { "cluster.nodes=1,2,4", "training.recompute=none,full" }, 0, 1 },
        { NULL, { "training.recompute=none,full", "cluster.nodes=1,2,4" }, 0, 1 },
        { NULL, { "cluster.nodes=4,2,1", "training.micro_batch=1,2" }, 0, 1 },
        { zero3, { "cluster.nodes=1,2,4", "training.recompute=none,full" }, 0, 1 },
        { zero3, { "training.recompute=none,full", "cluster.nodes=4,1,2" }, 0, 1 },
        { NULL, { "cluster.nodes=1,2", "parallelism.tp=1,16" }, 0, 1 },
        { NULL, { "hardware=tiny-box,tiny-pcie", "cluster.nodes=1,2" }, 0, 1 },
        { NULL, { "training.micro_batch=1,2,4" }, 0, 1 },
        { zero3, { "training.micro_batch=8,4,2" }, 0, 1 },
        { NULL, { "cluster.nodes=1,2,4", "training.recompute=none,full" }, 1, 3 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct case_sweep c;
        char *bc, *bj, *sc, *sj;
        long count;

        make(&c, cases[i].sets, cases[i].varies);
        batch(&c.sw, cases[i].k, cases[i].n, &bc, &bj);
        count = stream(&c.sw, cases[i].k, cases[i].n, &sc, &sj);
        if (strcmp(bc, sc) != 0)
            fail_msg("case %zu: CSV differs\nwhole:\n%s\nstreamed:\n%s", i, bc, sc);
        assert_string_equal(bj, sj);
        assert_int_equal(count, (c.sw.npoints - cases[i].k + cases[i].n - 1) / cases[i].n);
        free(bc);
        free(bj);
        free(sc);
        free(sj);
        unmake(&c);
    }
}

/* The ZeRO-3 case really has a group whose base is not its first point (else it tests less). */
static void test_sweep_stream_base_found_ahead(void **state)
{
    static const char *const zero3[] = { "parallelism.sharding=zero3",
                                         "hardware.gpu.memory=2.9 GiB", NULL };
    const char *varies[] = { "cluster.nodes=1,2,4", NULL };
    struct case_sweep c;
    char *csv, *json;

    (void)state;
    make(&c, zero3, varies);
    stream(&c.sw, 0, 1, &csv, &json);
    assert_non_null(strstr(csv, "\n0,1,out_of_memory,strong,8,1,"));
    assert_non_null(strstr(csv, "\n1,2,ok,strong,16,2,"));
    assert_non_null(strstr(csv, ",0,1,1,")); /* group 0, base_index 1, speedup 1 (the base) */
    free(csv);
    free(json);
    unmake(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_stream_matches_whole_sweep),
        cmocka_unit_test(test_sweep_stream_base_found_ahead),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
