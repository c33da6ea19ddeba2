/*
 * test_validate_rows.c - rows of the runs format as users write them (fit/validate_row.c): the
 * shipped runs files run every row, with the framework_version reading stated; the `set` column.
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

#include "base/csv.h"
#include "config/config.h"
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

/* ---- the set column --------------------------------------------------------------- */

static const char *const HEAD = "id,hardware,num_gpus,layers,hidden,heads,vocab,seq_len,"
                                "global_batch,tp,framework,framework_version,metric,value,set\n";

/* The scenario of the single row `row` (after HEAD) on dgx-h100; NULL with reason[] filled. */
static struct scenario *row_scenario(const char *row, struct validate_profiles *vp,
                                     struct hardware *hw, char *reason, size_t n)
{
    char *text = xasprintf("%s%s\n", HEAD, row);
    struct csv_error err;
    struct csv_table *t = csv_parse(text, strlen(text), "rows.csv", &err);
    struct scenario *s = xcalloc(1, sizeof(*s));

    free(text);
    assert_non_null(t);
    reason[0] = '\0';
    if (validate_row_scenario(t, 0, hw, vp, s, reason, n)) {
        free(s);
        s = NULL;
    }
    /* the scenario's strings point into t: the tests read only numbers and the profile's */
    csv_free(t);
    return s;
}

/*
 * Each entry of the set column applies as --set would: Megatron's --overlap-grad-reduce and a
 * bucket size in MiB; the key then counts as the row's own (the profile's setting of it is
 * overridden), and the profile's rules follow the new value (megatron 2022 turns gradient-
 * accumulation fusion off for fp16 gradients, also when fp16 comes from the set column).
 */
static void test_rows_set_applies_like_set(void **state)
{
    struct validate_profiles *vp = validate_profiles_new();
    struct hardware *hw = cfg_load_hardware("dgx-h100", stderr);
    struct scenario *s;
    char reason[512];
    bool over = false;

    (void)state;
    s = row_scenario("r,dgx-h100,8,4,1024,16,32000,1024,8,,megatron,core_r0.8.0,step_time_s,1,"
                     " ddp.overlap = true ; ddp.bucket_size=40 MiB;",
                     vp, hw, reason, sizeof(reason));
    assert_non_null(s);
    assert_true(s->ddp.overlap);
    assert_true(test_rel_err(s->ddp.bucket_bytes, 40.0 * 1024 * 1024) < 1e-12);
    for (int i = 0; i < s->fw.nsettings; i++)
        if (!strcmp(s->fw.settings[i].key, "ddp.overlap"))
            over |= fw_setting_status(&s->fw, i) == FWS_OVERRIDDEN;
    assert_true(over);
    free(s);
    s = row_scenario("r,dgx-h100,8,4,1024,16,32000,1024,8,,megatron,2022,step_time_s,1,"
                     "training.precision=fp16",
                     vp, hw, reason, sizeof(reason));
    assert_non_null(s);
    assert_int_equal(s->train.grad_dtype, DT_FP16);
    assert_false(s->ddp.grad_accum_fusion);
    free(s);
    cfg_free_hw(hw);
    validate_profiles_free(vp);
}

/*
 * A bad entry is the row's error, naming the column and the key: no '=', an unknown key (with
 * the nearest), a value the key does not take, a key twice, a key a column states, the
 * framework keys (their columns).
 */
static void test_rows_set_errors(void **state)
{
    static const struct {
        const char *set, *reason;
    } cases[] = {
        { "ddp.overlap", "set 'ddp.overlap': expected KEY=VALUE" },
        { "ddp.ovrlap=true",
          "set 'ddp.ovrlap=true': unknown key 'ovrlap' in 'ddp' (did you mean 'overlap'?)" },
        { "ddp.overlap=maybe",
          "set 'ddp.overlap=maybe': expected true or false for 'overlap', got 'maybe'" },
        { "ddp.bucket_size=40 parsecs", "set 'ddp.bucket_size=40 parsecs': " },
        { "ddp.overlap=true;ddp.overlap=false", "set: key 'ddp.overlap' is given twice" },
        { "parallelism.tp=4", "set: key 'parallelism.tp' is also the row's column 'tp'" },
        { "workload.layers=8", "set: key 'workload.layers' is also the row's column 'layers'" },
        { "training.framework=nemo", "set: 'training.framework' is the row's column 'framework'" },
        { "=1", "set '=1': expected KEY=VALUE" },
    };
    struct validate_profiles *vp = validate_profiles_new();
    struct hardware *hw = cfg_load_hardware("dgx-h100", stderr);
    char reason[512];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *row = xasprintf("r,dgx-h100,8,4,1024,16,32000,1024,8,2,megatron,,step_time_s,1,%s",
                              cases[i].set);
        struct scenario *s = row_scenario(row, vp, hw, reason, sizeof(reason));

        if (s || !strstr(reason, cases[i].reason))
            fail_msg("'%s': expected '%s', got %s", cases[i].set, cases[i].reason,
                     s ? "a scenario" : reason);
        free(row);
    }
    cfg_free_hw(hw);
    validate_profiles_free(vp);
}

/*
 * The project's runs.csv states its authors' per-row settings in the set column; with the set
 * column emptied they fall back to the profile's, so the entries are read: the SC'21 1.7B row
 * runs PyTorch DDP, the A100 40GB llm-foundry rows reduce in bf16.
 */
static void test_rows_runs_csv_set_column(void **state)
{
    const char *csv = SIMTRAIN_SOURCE_DIR "/tests/validation/runs.csv";
    struct csv_error err;
    struct csv_table *t = csv_read_file(csv, &err);
    struct validate_profiles *vp = validate_profiles_new();
    struct hardware *a80 = cfg_load_hardware("dgx-a100-80g", stderr);
    struct hardware *a40 = cfg_load_hardware("dgx-a100-40g", stderr);
    int col = csv_column(t, "set"), found = 0;
    char reason[512];

    (void)state;
    assert_true(col >= 0);
    for (int r = 0; r < t->nrows; r++) {
        const char *id = csv_field(t, r, csv_column(t, "id"));
        struct scenario s;

        if (strcmp(id, "sc21-t1-gpt1.7b") && strncmp(id, "foundry-a100-40g-", 17))
            continue;
        assert_int_equal(
            validate_row_scenario(t, r, id[0] == 's' ? a80 : a40, vp, &s, reason, sizeof(reason)),
            0);
        if (id[0] == 's') {
            assert_string_equal(csv_field(t, r, col), "ddp.impl=pytorch");
            assert_int_equal(s.ddp.impl, DDP_IMPL_PYTORCH);
        } else {
            assert_non_null(strstr(csv_field(t, r, col), "fsdp.reduce_dtype=bf16"));
            assert_int_equal(s.fsdp.reduce_dtype, DT_BF16);
        }
        found++;
    }
    assert_int_equal(found, 1 + 78);
    cfg_free_hw(a80);
    cfg_free_hw(a40);
    validate_profiles_free(vp);
    csv_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_vtrain_all_predicted),
        cmocka_unit_test(test_rows_set_applies_like_set),
        cmocka_unit_test(test_rows_set_errors),
        cmocka_unit_test(test_rows_runs_csv_set_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
