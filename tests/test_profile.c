/* test_profile.c - training-framework profiles: loading, selection, layering (config/profile.h). */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "config/profile.h"
#include "support.h"

/* A small scenario on one DGX H100, with `extra` YAML appended under `training:`. */
static char *scenario_text(const char *training, const char *rest)
{
    return xasprintf("hardware: dgx-h100\n"
                     "workload: llama3-8b\n"
                     "cluster: {nodes: 1}\n"
                     "training:\n"
                     "  seq_len: 2048\n"
                     "  global_batch: 64\n"
                     "%s%s",
                     training, rest ? rest : "");
}

static char *slurp_file(FILE *f)
{
    long n;
    char *buf;

    fflush(f);
    n = ftell(f);
    buf = xmalloc((size_t)n + 1);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    return buf;
}

/* The scenario of `text` must fail to load; returns the diagnostics (heap). */
static char *load_error(const char *text, const char *set)
{
    FILE *f = tmpfile();
    struct cfg_override o;
    struct scenario *s;
    char *msg;

    if (set)
        assert_int_equal(cfg_override_init(&o, set, stderr), 0);
    s = cfg_load_scenario_mem("t.yaml", text, strlen(text), set ? &o : NULL, set ? 1 : 0, f);
    if (set)
        cfg_override_release(&o);
    assert_null(s);
    msg = slurp_file(f);
    fclose(f);
    return msg;
}

/* ---- the shipped profiles --------------------------------------------------------------- */

/*
 * Every profile of frameworks/ loads, names itself as its file, has a current version, and
 * every version resolves with what it inherits; every one of their settings cites a source
 * with a file or a commit in it (a ".py", ".yaml", ".json", ".sh", ".md", an '@' or a 'L' line).
 */
static void test_profile_shipped_profiles_cite_sources(void **state)
{
    static const char *const expect[] = { "axolotl", "deepspeed", "fms-fsdp",    "fsdp",
                                          "hf",      "litgpt",    "llm-foundry", "megatron",
                                          "nemo",    "other",     "torchtitan" };
    struct arena a;
    const char **names;
    int n, settings = 0;

    (void)state;
    arena_init(&a);
    n = profile_names(&a, &names);
    assert_int_equal(n, (int)ARRAY_LEN(expect));
    for (int i = 0; i < n; i++) {
        struct schema_ctx c = { .diag = stderr, .a = &a };
        struct fw_state fw;

        assert_string_equal(names[i], expect[i]);
        assert_int_equal(profile_select(&c, names[i], NULL, (struct diag_mark){ NULL, 0, 0 },
                                        (struct diag_mark){ NULL, 0, 0 }, &fw),
                         0);
        assert_string_equal(fw.name, names[i]);
        assert_non_null(fw.read);
        assert_true(fw.read[0] != '\0');
        for (int k = 0; k < fw.nsettings; k++) {
            const char *src = fw.settings[k].source;
            assert_non_null(src);
            if (src[0] >= 'A' && src[0] <= 'Z' && src[1] == ':')
                fail_msg("%s %s: %s cites an abbreviation: '%s'", fw.name, fw.version,
                         fw.settings[k].key, src);
            if (!strstr(src, ".py") && !strstr(src, ".yaml") && !strstr(src, ".json") &&
                !strstr(src, ".sh") && !strstr(src, ".md") && !strchr(src, '@') &&
                !strstr(src, " L"))
                fail_msg("%s %s: %s cites no file or commit: '%s'", fw.name, fw.version,
                         fw.settings[k].key, src);
            settings++;
        }
    }
    assert_true(settings > 100);
    arena_release(&a);
}

/* docs/frameworks.md holds the generated reference (`simtrain frameworks --markdown`) unchanged. */
static void test_profile_reference_doc_is_current(void **state)
{
    FILE *f = tmpfile();
    char *gen, *doc;
    size_t len;
    const char *why;

    (void)state;
    assert_int_equal(profile_write_reference(f, true, NULL, stderr), 0);
    gen = slurp_file(f);
    fclose(f);
    doc = files_read_input("docs/frameworks.md", 1 << 24, &len, &why);
    assert_non_null(doc);
    if (!strstr(doc, gen))
        fail_msg("docs/frameworks.md is out of date: regenerate its reference with `simtrain "
                 "frameworks --markdown` (docs/gen-frameworks.sh)");
    assert_non_null(strstr(gen, "## torchtitan"));
    assert_non_null(strstr(gen, "| `fsdp.reduce_dtype` | `fp32` | always |"));
    free(gen);
    free(doc);
}

/* ---- layering -------------------------------------------------------------------------- */

/*
 * schema defaults < profile defaults < profile rules < the scenario file < --set: torchtitan
 * sets FSDP2 with fp32 reduce-scatters; the file's own fsdp.param_dtype stays; --set wins over
 * the profile's loss; the report's state says which settings applied and which the scenario
 * set itself.
 */
static void test_profile_layering(void **state)
{
    char *text = scenario_text("  framework: torchtitan\n  framework_version: \"2024-12\"\n",
                               "fsdp:\n  param_dtype: fp32\n");
    const char *sets[] = { "training.cross_entropy=fused", NULL };
    struct scenario *s = test_load("t.yaml", text, sets);
    const struct fw_setting *st;
    int over = 0;

    (void)state;
    assert_string_equal(s->fw.name, "torchtitan");
    assert_string_equal(s->fw.version, "2024-12");
    assert_int_equal(s->par.sharding, SHARD_FSDP);
    assert_int_equal(s->fsdp.version, 2);
    assert_int_equal(s->fsdp.reduce_dtype, DT_FP32);
    assert_int_equal(s->fsdp.param_dtype, DT_FP32);     /* the file's */
    assert_int_equal(s->train.cross_entropy, CE_FUSED); /* --set's */
    assert_int_equal(s->par.framework, FW_PYTORCH);
    assert_false(s->model.dropout);
    st = profile_applied(s, "fsdp.reduce_dtype");
    assert_non_null(st);
    assert_non_null(strstr(st->source, "config_manager.py"));
    assert_null(profile_applied(s, "fsdp.param_dtype"));
    for (int i = 0; i < s->fw.nsettings; i++)
        if (fw_setting_status(&s->fw, i) == FWS_OVERRIDDEN) {
            over++;
            assert_true(!strcmp(s->fw.settings[i].key, "fsdp.param_dtype") ||
                        !strcmp(s->fw.settings[i].key, "training.cross_entropy") ||
                        !strcmp(s->fw.settings[i].key, "workload.dropout"));
        }
    assert_int_equal(over, 3); /* llama3-8b.yaml states dropout: false itself */
    cfg_free(s);
    free(text);
}

/*
 * Rules follow the scenario's values, also after cfg_set (sweeps): Megatron 2022 accumulates
 * bf16 runs in fp32 with fused accumulation and turns async TP off under sequence parallelism;
 * set fp16 and the gradients become fp16 and fusion goes off; drop sequence parallelism and
 * async TP comes back; a key the sweep set stays set when a rule would change it.
 */
static void test_profile_rules_follow_cfg_set(void **state)
{
    char *text = scenario_text("  framework: megatron\n  framework_version: \"2022\"\n",
                               "parallelism:\n  tp: 2\n  sequence_parallel: true\n");
    struct scenario *s = test_load("t.yaml", text, NULL);
    struct cfg_error err;

    (void)state;
    assert_int_equal(s->train.grad_dtype, DT_FP32);
    assert_true(s->ddp.grad_accum_fusion);
    assert_false(s->par.tp_async_allreduce);
    assert_false(s->ddp.overlap);
    assert_int_equal(cfg_set(s, "training.precision", "fp16", &err), 0);
    assert_int_equal(s->train.grad_dtype, DT_FP16);
    assert_false(s->ddp.grad_accum_fusion);
    assert_int_equal(cfg_set(s, "parallelism.sequence_parallel", "false", &err), 0);
    assert_true(s->par.tp_async_allreduce);
    assert_int_equal(cfg_set(s, "training.grad_dtype", "fp32", &err), 0);
    assert_true(s->ddp.grad_accum_fusion);
    assert_int_equal(cfg_set(s, "training.precision", "bf16", &err), 0);
    assert_int_equal(s->train.grad_dtype, DT_FP32); /* the sweep's own value stays */
    assert_int_equal(cfg_set(s, "training.framework", "nemo", &err), -1);
    assert_non_null(strstr(err.msg, "cannot be changed after loading"));
    cfg_free(s);
    free(text);
}

/*
 * NeMo's and Megatron-Bridge's recipe defaults: sequence parallelism whenever tp > 1 (unless the
 * scenario says otherwise), bf16 gradients and FP8 parameters for FP8 runs (25.04's
 * performance scripts; 24.07's FP8 launchers reduce in bf16 without FP8 parameters), Nemotron-4
 * 340B's selective recompute in the 24.07 launcher, and Megatron-Core's embedding and loss
 * accounting that lets 126 layers run on pp 8 x vpp 8 (Megatron-Bridge's 405B layout).
 */
static void test_profile_nemo_recipes(void **state)
{
    const char *tp4[] = { "parallelism.tp=4", "training.global_batch=64", NULL };
    const char *fp8[] = { "parallelism.tp=4", "training.precision=fp8", NULL };
    const char *own[] = { "parallelism.tp=4", "parallelism.sequence_parallel=false", NULL };
    const char *n340[] = { "workload.layers=96", "workload.hidden=18432", "workload.heads=96",
                           NULL };
    char *t25 = scenario_text("  framework: nemo\n  framework_version: \"25.04\"\n", NULL);
    char *t24 = scenario_text("  framework: nemo\n  framework_version: \"24.07\"\n", NULL);
    char *tbr = scenario_text("  framework: nemo\n  framework_version: \"26.04.01\"\n",
                              "parallelism: {tp: 4, pp: 8, vpp: 8}\n");
    struct scenario *s;

    (void)state;
    s = test_load("t.yaml", t25, tp4);
    assert_true(s->par.sequence_parallel);
    assert_int_equal(s->train.grad_dtype, DT_FP32);
    assert_false(s->train.fp8_params);
    cfg_free(s);
    s = test_load("t.yaml", t25, fp8);
    assert_int_equal(s->train.grad_dtype, DT_BF16);
    assert_true(s->train.fp8_params);
    cfg_free(s);
    s = test_load("t.yaml", t25, own);
    assert_false(s->par.sequence_parallel);
    cfg_free(s);
    s = test_load("t.yaml", t24, fp8);
    assert_int_equal(s->train.grad_dtype, DT_BF16);
    assert_false(s->train.fp8_params);
    cfg_free(s);
    s = test_load("t.yaml", t24, n340);
    assert_int_equal(s->train.recompute, RC_SELECTIVE);
    cfg_free(s);
    s = test_load("t.yaml", t24, NULL);
    assert_int_equal(s->train.recompute, RC_NONE);
    cfg_free(s);
    {
        const char *l405[] = { "workload.layers=126", "training.global_batch=64", "cluster.nodes=4",
                               NULL };
        s = test_load("t.yaml", tbr, l405);
        assert_string_equal(s->fw.version, "bridge-0.2");
        assert_int_equal(s->par.pp_split, SPLIT_AUTO);
        assert_true(s->par.sequence_parallel);
        cfg_free(s);
    }
    free(t25);
    free(t24);
    free(tbr);
}

/* An inherited version applies its parent's settings first: axolotl 0.6 on hf accelerate-1.0. */
static void test_profile_inherits(void **state)
{
    char *text = scenario_text("  framework: axolotl\n", "parallelism:\n  sharding: zero3\n");
    struct scenario *s = test_load("t.yaml", text, NULL);

    (void)state;
    assert_string_equal(s->fw.version, "0.6");
    assert_int_equal(s->train.model_code, CODE_HF);
    assert_int_equal(s->fsdp.backward_prefetch, BWD_PREFETCH_NONE); /* hf's */
    assert_int_equal(s->par.framework, FW_DEEPSPEED);               /* hf's rule */
    assert_non_null(profile_applied(s, "parallelism.framework")->when);
    cfg_free(s);
    free(text);
}

/* Unknown framework names and unreadable versions are errors at the key, with the accepted ones. */
static void test_profile_unknown_names(void **state)
{
    char *text = scenario_text("  framework: megatorn\n", NULL);
    char *msg = load_error(text, NULL);

    (void)state;
    assert_non_null(strstr(msg, "t.yaml:7:14: error: unknown framework 'megatorn' (did you mean "
                                "'megatron'?) (accepted: axolotl, deepspeed, fms-fsdp, fsdp, "
                                "hf, litgpt, llm-foundry, megatron, nemo, other, torchtitan)"));
    free(msg);
    free(text);
    text = scenario_text("  framework: torchtitan\n  framework_version: \"the-first\"\n", NULL);
    msg = load_error(text, NULL);
    assert_non_null(strstr(msg, "t.yaml:8:22: error: framework_version 'the-first' of framework "
                                "'torchtitan': not a version string; accepted: its versions and "
                                "their aliases (2024-12, 9dec370, 2025-06, v0.1.0, 2025-10, "
                                "v0.2.0)"));
    free(msg);
    free(text);
    text = scenario_text("", NULL);
    msg = load_error(text, "training.framework_version=2021");
    assert_non_null(strstr(msg, "error: framework_version needs training.framework"));
    free(msg);
    free(text);
}

/* ---- profile files with errors ----------------------------------------------------------- */

/* Write frameworks/bad.yaml under a fresh $SIMTRAIN_DATA directory; returns the directory. */
static char *data_dir_with(const char *profile)
{
    char tmpl[] = "/tmp/simtrain-profile-XXXXXX";
    char *dir = xstrdup(mkdtemp(tmpl)), *sub = xasprintf("%s/frameworks", dir);
    char *path = xasprintf("%s/bad.yaml", sub);
    FILE *f;

    assert_int_equal(mkdir(sub, 0700), 0);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(profile, f);
    fclose(f);
    setenv("SIMTRAIN_DATA", dir, 1);
    free(sub);
    free(path);
    return dir;
}

static void remove_data_dir(char *dir)
{
    char *path = xasprintf("%s/frameworks/bad.yaml", dir), *sub = xasprintf("%s/frameworks", dir);

    unlink(path);
    rmdir(sub);
    rmdir(dir);
    unsetenv("SIMTRAIN_DATA");
    free(path);
    free(sub);
    free(dir);
}

/*
 * A profile file's mistakes are reported at their place in it: an unknown key, a key a profile
 * may not set, a value of the wrong kind, a setting without a source, a comparison on a word.
 */
static void test_profile_file_errors(void **state)
{
    static const struct {
        const char *setting, *message;
    } cases[] = {
        { "training.bogus: {value: 1, source: \"x.py L1\"}", "unknown key 'bogus' in 'training'" },
        { "parallelism.tp: {value: 2, source: \"x.py L1\"}",
          "'parallelism.tp' cannot be set by a profile: the layout degrees are the scenario's "
          "own" },
        { "training.precision: {value: fp12, source: \"x.py L1\"}", "unknown value 'fp12'" },
        { "training.precision: {value: fp16}", "missing required key 'source' in the profile" },
        { "hardware.nodes: {value: 2, source: \"x.py L1\"}",
          "a profile sets keys of training, parallelism, ddp, zero, fsdp, nccl and host" },
    };
    char *text = scenario_text("  framework: bad\n", NULL);

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *profile = xasprintf("framework: bad\ndescription: test\ncurrent: \"1\"\n"
                                  "versions:\n  - name: \"1\"\n    read: here\n    defaults:\n"
                                  "      %s\n",
                                  cases[i].setting);
        char *dir = data_dir_with(profile);
        char *msg = load_error(text, NULL);

        if (!strstr(msg, cases[i].message) || !strstr(msg, "frameworks/bad.yaml:8:"))
            fail_msg("case %zu: expected '%s' at frameworks/bad.yaml:8, got:\n%s", i,
                     cases[i].message, msg);
        free(msg);
        remove_data_dir(dir);
        free(profile);
    }
    {
        char *dir = data_dir_with("framework: bad\ndescription: t\ncurrent: \"1\"\nversions:\n"
                                  "  - name: \"1\"\n    read: here\n    rules:\n"
                                  "      - if: {training.precision: \">1\"}\n"
                                  "        set: {ddp.overlap: {value: true, source: \"x.py\"}}\n");
        char *msg = load_error(text, NULL);
        assert_non_null(strstr(msg, "frameworks/bad.yaml:8:34: error: 'training.precision' is "
                                    "not a number: only == and != apply"));
        free(msg);
        remove_data_dir(dir);
    }
    free(text);
}

/*
 * A profile's calendar and release dates are checked at load, at their place: an unreadable
 * date, a calendar entry that is no release number, versions out of date order, a version
 * without a date among several, a `since` after `released` (config/profile_version.c).
 */
static void test_profile_file_date_errors(void **state)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        { "calendar: {source: s, releases: {v1.0: 2024-13-01}}\nversions:\n"
          "  - {name: a, released: \"2024-01-01\", read: r}\n",
          "bad.yaml:4:40: error: expected the date of release 'v1.0'" },
        { "calendar: {source: s, releases: {latest: 2024-01-01}}\nversions:\n"
          "  - {name: a, released: \"2024-01-01\", read: r}\n",
          "bad.yaml:4:34: error: 'latest' is not a release number" },
        { "versions:\n  - {name: a, released: \"2024-05-01\", read: r}\n"
          "  - {name: b, released: \"2024-01-01\", read: r}\n",
          "bad.yaml:6:12: error: version 'b' starts before 'a' listed above it" },
        { "versions:\n  - {name: a, released: \"2024-05-01\", read: r}\n"
          "  - {name: b, read: r}\n",
          "bad.yaml:6:12: error: version 'b' needs 'released'" },
        { "versions:\n  - {name: a, released: \"May 2024\", read: r}\n",
          "bad.yaml:5:25: error: expected a date for 'released'" },
        { "versions:\n  - name: a\n    released: \"2024-01-01\"\n    read: r\n"
          "    since: {release: v1, date: \"2024-02-01\", source: s}\n",
          "bad.yaml:8:32: error: a version's 'since' cannot be later than its 'released'" },
    };
    char *text = scenario_text("  framework: bad\n", NULL);

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *profile = xasprintf("framework: bad\ndescription: t\ncurrent: a\n%s", cases[i].text);
        char *dir = data_dir_with(profile);
        char *msg = load_error(text, NULL);

        if (!strstr(msg, cases[i].message))
            fail_msg("case %zu: expected '%s', got:\n%s", i, cases[i].message, msg);
        free(msg);
        remove_data_dir(dir);
        free(profile);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_shipped_profiles_cite_sources),
        cmocka_unit_test(test_profile_reference_doc_is_current),
        cmocka_unit_test(test_profile_layering),
        cmocka_unit_test(test_profile_rules_follow_cfg_set),
        cmocka_unit_test(test_profile_inherits),
        cmocka_unit_test(test_profile_nemo_recipes),
        cmocka_unit_test(test_profile_unknown_names),
        cmocka_unit_test(test_profile_file_errors),
        cmocka_unit_test(test_profile_file_date_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
