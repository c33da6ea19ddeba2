/* test_paths.c - where the running binary finds its data (base/paths.h) and where a scenario
 * path typed on the command line is looked up (cfg_locate_input(), config/schema.h). */
#define _DEFAULT_SOURCE /* realpath(), setenv() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/paths.h"
#include "config/config.h"
#include "config/schema.h"

/* A test binary lives in the build directory: it is the uninstalled kind, with the source
 * tree's data. */
static void test_paths_build_tree_uses_source_data(void **state)
{
    char *want = realpath(SIMTRAIN_SOURCE_DIR, NULL), *got;

    (void)state;
    assert_non_null(paths_exe_dir());
    assert_true(paths_uninstalled());
    got = realpath(paths_data_dir(), NULL);
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_string_equal(cfg_data_dir(), paths_data_dir());
    free(got);
    free(want);
}

/*
 * From a directory without scenarios/, "scenarios/ddp_8gpu.yaml" is the data directory's; a
 * path that exists is kept as it is; one that exists nowhere gives NULL.
 */
static void test_paths_scenario_resolves_against_data_dir(void **state)
{
    char *cwd = getcwd(NULL, 0), *p, *want;

    (void)state;
    unsetenv("SIMTRAIN_DATA");
    assert_int_equal(chdir("/"), 0);
    p = cfg_locate_input("scenarios/ddp_8gpu.yaml");
    assert_non_null(p);
    want = malloc(strlen(paths_data_dir()) + 64);
    sprintf(want, "%s/scenarios/ddp_8gpu.yaml", paths_data_dir());
    assert_string_equal(p, want);
    free(want);
    free(p);
    p = cfg_locate_input("etc");
    assert_string_equal(p, "etc"); /* exists under / */
    free(p);
    assert_null(cfg_locate_input("scenarios/no-such-scenario.yaml"));
    setenv("SIMTRAIN_DATA", SIMTRAIN_SOURCE_DIR "/tests/fixtures", 1);
    p = cfg_locate_input("scenarios/good.yaml"); /* $SIMTRAIN_DATA first */
    assert_string_equal(p, SIMTRAIN_SOURCE_DIR "/tests/fixtures/scenarios/good.yaml");
    free(p);
    unsetenv("SIMTRAIN_DATA");
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_build_tree_uses_source_data),
        cmocka_unit_test(test_paths_scenario_resolves_against_data_dir),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
