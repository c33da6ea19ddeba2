/* test_profile_version.c - version strings as users write them (config/profile_version.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/profile_internal.h"
#include "support.h"

static const struct diag_mark nowhere = { NULL, 0, 0 };

/* Select `version` of `framework`; the version name, or NULL with the message in msg[]. */
static const char *pick(struct arena *a, const char *framework, const char *version,
                        const char **reading, char *msg, size_t n)
{
    struct schema_ctx c = { .a = a, .msg = msg, .msglen = n };
    struct fw_state fw;

    msg[0] = '\0';
    if (profile_select(&c, framework, version, nowhere, nowhere, &fw))
        return NULL;
    if (reading)
        *reading = fw.reading;
    return fw.version;
}

/*
 * Version strings copied from logs, containers, pip and papers, each with the profile version
 * it selects: the newest version in effect on or before the release (by the stack's release
 * calendar and each version's `since`), the oldest when older than all, the newest when newer
 * than all or for main / latest. Where the forms map differently per stack (a container is a
 * date; a bare number is a DeepSpeed, Megatron-Core, Accelerate or PyTorch release), each
 * framework has its own rows.
 */
static void test_profile_version_table(void **state)
{
    static const struct {
        const char *fw, *written, *expect;
    } cases[] = {
        /* DeepSpeed: its own numbers; `current` describes the releases since v0.5.5. */
        { "deepspeed", "0.14.4", "current" },
        { "deepspeed", "v0.16.0", "current" },
        { "deepspeed", "2024-07", "current" }, /* vTrain's Megatron-DeepSpeed rows */
        { "deepspeed", "2024-05", "current" },
        { "deepspeed", "2022-02", "current" },
        { "deepspeed", "0.5.4", "2021" },
        { "deepspeed", "0.5.5", "current" },
        { "deepspeed", "0.3.0", "2021" }, /* older than every version: the oldest */
        { "deepspeed", "2020", "2021" },
        { "deepspeed", "0.20.1", "current" }, /* newer than the calendar */
        { "deepspeed", "main", "current" },
        { "deepspeed", "0.14.4+cu121", "current" },
        { "deepspeed", "24.09", "current" }, /* a container tag is its month */
        /* Megatron: core_rX.Y.Z / core_vX.Y.Z, pip's bare number, Megatron-LM's v2.x tags. */
        { "megatron", "core_r0.8.0", "core_r0.8.0" },
        { "megatron", "core_v0.8.0", "core_r0.8.0" },
        { "megatron", "0.8.0", "core_r0.8.0" },
        { "megatron", "core_r0.6.0", "2022" },
        { "megatron", "core_v0.14.0rc3", "core_v0.12.0" },
        { "megatron", "v0.11.0", "core_r0.8.0" },
        { "megatron", "v2.6", "2021" },
        { "megatron", "2023-06", "2022" },
        { "megatron", "24.09", "core_r0.8.0" },
        { "megatron", "25.11", "core_v0.12.0" },
        { "megatron", "latest", "core_v0.12.0" },
        /* NeMo: containers YY.MM[.patch] (24.09 ships NeMo 2.0.0), NeMo's and Megatron-Bridge's
       numbers. */
        { "nemo", "24.09", "2.0" },
        { "nemo", "24.12", "2.0" },
        { "nemo", "25.11", "25.04" },
        { "nemo", "26.04.01", "bridge-0.2" },
        { "nemo", "0.2.0", "bridge-0.2" }, /* a bare 0.x is Megatron-Bridge's */
        { "nemo", "bridge-v0.3.0", "bridge-0.2" },
        { "nemo", "24.05", "24.07" },
        { "nemo", "nvcr.io/nvidia/nemo:24.12", "2.0" },
        { "nemo", "2.0.0rc1", "24.07" },
        { "nemo", "2.0.0", "2.0" },
        { "nemo", "v2.1.0", "2.0" },
        { "nemo", "2.3.0", "25.04" },
        /* torchtitan: dated commits, then v0.1.0 and v0.2.0 with or without the v. */
        { "torchtitan", "0.1.0", "2025-06" },
        { "torchtitan", "v0.1.0", "2025-06" },
        { "torchtitan", "0.0.9", "2024-12" },
        { "torchtitan", "2025-01", "2024-12" },
        { "torchtitan", "v0.2.2", "2025-10" },
        { "torchtitan", "main", "2025-10" },
        /* Hugging Face: a bare number is an Accelerate release. */
        { "hf", "1.3.0", "accelerate-1.0" },
        { "hf", "0.34.2", "accelerate-1.0" },
        { "hf", "2025-04", "accelerate-1.6" },
        /* plain FSDP: a PyTorch release selects the API it documents. */
        { "fsdp", "2.4", "fsdp1" },
        { "fsdp", "2.6.0", "fsdp2" },
        { "fsdp", "1.13", "fsdp1" },
        { "fsdp", "fully_shard", "fsdp2" },
        /* llm-foundry: its releases placed among the dated commits. */
        { "llm-foundry", "0.3.0", "2023-05" },
        { "llm-foundry", "0.4.0", "2023-10" },
        { "llm-foundry", "v0.10.0", "2024-01" },
        { "llm-foundry", "2022", "2023-05" },
        /* one-version profiles: every readable string selects it. */
        { "axolotl", "0.8.1", "0.6" },
        { "litgpt", "2025-02-14", "0.5" },
        { "fms-fsdp", "main", "2025-07" },
    };
    struct arena a;
    char msg[512];

    (void)state;
    arena_init(&a);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *got = pick(&a, cases[i].fw, cases[i].written, NULL, msg, sizeof(msg));
        if (!got || strcmp(got, cases[i].expect) != 0)
            fail_msg("%s %s: expected '%s', got '%s' %s", cases[i].fw, cases[i].written,
                     cases[i].expect, got ? got : "(error)", msg);
    }
    assert_true(ARRAY_LEN(cases) >= 30);
    arena_release(&a);
}

/*
 * The reading is stated: how the string was placed and what it selected; a version's own name
 * needs none.
 */
static void test_profile_version_reading(void **state)
{
    struct arena a;
    const char *reading = NULL;
    char msg[512];

    (void)state;
    arena_init(&a);
    assert_string_equal(pick(&a, "deepspeed", "0.14.4", &reading, msg, sizeof(msg)), "current");
    assert_non_null(reading);
    assert_non_null(strstr(reading, "deepspeed 0.14.4 -> profile 'current' (v0.16.0, "
                                    "2024-11-25; in effect since v0.5.5)"));
    assert_non_null(strstr(reading, "on or after v0.14.0 of 2024-03-07"));
    assert_string_equal(pick(&a, "deepspeed", "0.3.0", &reading, msg, sizeof(msg)), "2021");
    assert_non_null(strstr(reading, "older than every version: the oldest"));
    assert_string_equal(pick(&a, "deepspeed", "0.20.1", &reading, msg, sizeof(msg)), "current");
    assert_non_null(strstr(reading, "newer than every release in the calendar (v0.19.5)"));
    assert_string_equal(pick(&a, "nemo", "24.09", &reading, msg, sizeof(msg)), "2.0");
    assert_non_null(strstr(reading, "a release of it"));
    assert_string_equal(pick(&a, "torchtitan", "main", &reading, msg, sizeof(msg)), "2025-10");
    assert_non_null(strstr(reading, "the newest version"));
    assert_string_equal(pick(&a, "megatron", "core_v0.12.0", &reading, msg, sizeof(msg)),
                        "core_v0.12.0");
    assert_null(reading);
    arena_release(&a);
}

/*
 * Only a string of no version form is an error; it names the field, the framework, every
 * version with its aliases, and the accepted forms. A release of a series the stack does not
 * have (core_r on DeepSpeed) is one too.
 */
static void test_profile_version_errors(void **state)
{
    static const char *const bad[] = { "foo", "1.2.3.4.5",    "2024-13", "2024-02-30",
                                       "v",   "0.14.4-beta!", "9dec371" };
    struct arena a;
    char msg[512];

    (void)state;
    arena_init(&a);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        if (pick(&a, "torchtitan", bad[i], NULL, msg, sizeof(msg)))
            fail_msg("'%s' was accepted", bad[i]);
        if (!strstr(msg, "framework_version '") || !strstr(msg, "of framework 'torchtitan'") ||
            !strstr(msg, "not a version string") ||
            !strstr(msg, "(2024-12, 9dec370, 2025-06, v0.1.0, 2025-10, v0.2.0)") ||
            !strstr(msg, "a container tag YY.MM[.patch]") || !strstr(msg, "main or latest"))
            fail_msg("'%s': %s", bad[i], msg);
    }
    assert_null(pick(&a, "deepspeed", "core_r0.8.0", NULL, msg, sizeof(msg)));
    assert_non_null(strstr(msg, "lists no release of the series 'core' in its calendar"));
    arena_release(&a);
}

/* The parsers: dates with their day ranges, release numbers with series and pre-releases. */
static void test_profile_version_parsers(void **state)
{
    struct fw_date d;
    struct fw_relnum r;

    (void)state;
    assert_int_equal(profile_parse_date("2024", &d), 0);
    assert_int_equal(d.lo, 20240101);
    assert_int_equal(d.hi, 20241231);
    assert_int_equal(profile_parse_date("2024-02-29", &d), 0);
    assert_int_equal(profile_parse_date("2023-02-29", &d), -1);
    assert_int_equal(profile_parse_date("2024-7", &d), -1);
    assert_int_equal(profile_parse_release("core_r0.8.0", &r), 0);
    assert_string_equal(r.series, "core");
    assert_int_equal(r.num[1], 8);
    assert_int_equal(profile_parse_release("V2.0.0rc1", &r), 0);
    assert_string_equal(r.series, "");
    assert_int_equal(r.pre, 2);
    assert_int_equal(profile_parse_release("0.5.1.post1", &r), 0);
    assert_int_equal(r.pre, 0);
    assert_int_equal(profile_parse_release("2.5.0.dev20240912", &r), 0);
    assert_true(r.pre > 0);
    assert_int_equal(profile_parse_release("0.1.0-alpha", &r), 0);
    assert_int_equal(profile_parse_release("1.2.x", &r), -1);
    assert_int_equal(profile_parse_release("core_0.8.0_final", &r), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_version_table),
        cmocka_unit_test(test_profile_version_reading),
        cmocka_unit_test(test_profile_version_errors),
        cmocka_unit_test(test_profile_version_parsers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
