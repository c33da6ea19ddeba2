/*
 * support.h - helpers the cmocka tests share: load a scenario (a file, or YAML
 * text under a file name) with `--set` style overrides, simulate one step,
 * count a program's collectives, relative error. Include after <cmocka.h>.
 * The functions are static inline: a test file uses the ones it needs.
 */
#ifndef SIMTRAIN_TESTS_SUPPORT_H
#define SIMTRAIN_TESTS_SUPPORT_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "config/schema.h"
#include "prog/prog.h"
#include "run/run.h"

/*
 * The scenario of file `path`, or of YAML `text` named `path` in diagnostics when text is not
 * NULL, with overrides ("key=value", NULL-terminated `sets`); fails the test when it does not
 * load. Free with cfg_free().
 */
static inline struct scenario *test_load(const char *path, const char *text,
                                         const char *const *sets)
{
    struct cfg_override ovr[16] = { { 0 } };
    struct scenario *s;
    int n = 0, i;

    for (; sets && sets[n]; n++) {
        assert_true(n < 16);
        assert_int_equal(cfg_override_init(&ovr[n], sets[n], stderr), 0);
    }
    s = text ? cfg_load_scenario_mem(path, text, strlen(text), ovr, n, stderr)
             : cfg_load_scenario(path, ovr, n, stderr);
    for (i = 0; i < n; i++)
        cfg_override_release(&ovr[i]);
    if (!s)
        fail_msg("'%s' did not load", path);
    return s;
}

/* One step of `s` (every rank when all_ranks), failing the test when it cannot run. */
static inline void test_simulate(const struct scenario *s, bool all_ranks, struct run *r)
{
    struct sim_opts opts = { .all_ranks = all_ranks };
    char reason[256];

    if (run_scenario(s, &opts, r, reason, sizeof(reason)) != 0)
        fail_msg("%s: %s", s->name, reason);
}

static inline double test_rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

/* Collectives of program `p` on communicator kind `comm` doing `op`. */
static inline int test_count_colls(const struct prog *p, int comm, int op)
{
    int i, n = 0;

    for (i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == TASK_COLL && p->tasks[i].comm == comm && p->tasks[i].op == op)
            n++;
    return n;
}

/*
 * The records of the CSV file at `path`, counted by a slow reference rather than the csv
 * module: lines ending outside double quotes that hold something, the header included. Fails
 * the test when the file cannot be read. Tests compare parsed row counts with this instead
 * of pinning a data file's size.
 */
static inline int test_csv_records(const char *path)
{
    char *text = read_file(path, NULL);
    bool quoted = false, content = false;
    int records = 0;

    if (!text)
        fail_msg("cannot read '%s'", path);
    for (const char *p = text;; p++) {
        if (*p == '"')
            quoted = !quoted;
        if ((*p == '\n' && !quoted) || *p == '\0') {
            records += content;
            content = false;
            if (*p == '\0')
                break;
        } else if (*p != '\r' && *p != ' ') {
            content = true;
        }
    }
    free(text);
    return records;
}

#endif
