/*
 * test_validate_rows.c - rows of the runs format as users write them (fit/validate_row.c): the
 * shipped runs files run every row, with the framework_version reading stated.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#include "fit/validate.h"

/*
 * tests/validation/runs-vtrain.csv (vTrain's Megatron-DeepSpeed iterations, framework_version
 * 2024-07) with the real simulator: every one of its 755 rows is predicted, none refused, and
 * each states how 2024-07 selected the deepspeed profile's version.
 */
static void test_rows_vtrain_all_predicted(void **state)
{
    const char *csv = SIMTRAIN_SOURCE_DIR "/tests/validation/runs-vtrain.csv";
    struct validate_report rep;

    (void)state;
    assert_int_equal(validate_file(csv, NULL, &rep, stderr), 0);
    assert_int_equal(rep.nrows, 755);
    for (int i = 0; i < rep.nrows; i++) {
        if (!rep.rows[i].ok)
            fail_msg("%s: refused: %s", rep.rows[i].id, rep.rows[i].reason);
        assert_non_null(rep.rows[i].reading);
        assert_non_null(strstr(rep.rows[i].reading, "deepspeed 2024-07 -> profile 'current'"));
    }
    assert_int_equal(rep.stats[VM_STEP_TIME].n, 755);
    assert_int_equal(rep.stats[VM_STEP_TIME].errors, 0);
    validate_release(&rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_vtrain_all_predicted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
