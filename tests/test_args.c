/* test_args.c - the option parser and help printer of the command line (cli/args.h). */
#define _POSIX_C_SOURCE 200809L /* dup(), fileno() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/args.h"
#include "cli/cmd.h"
#include "config/config.h"

struct demo_args {
    struct cli_list pos;
    const char *out;
    struct cli_list vary;
    struct cli_overrides set;
    int count, mode;
    double ratio;
    struct cli_shard shard;
    bool quiet;
};

static const char *const modes[] = { "fast", "slow", NULL };

#define OFF(field) offsetof(struct demo_args, field)

static const struct cli_opt demo_opts[] = {
    { "--out", 0, "FILE", "write here", .kind = CLI_STRING, .offset = OFF(out) },
    { "--vary", 0, "K=V", "an axis", .kind = CLI_LIST, .offset = OFF(vary) },
    { "--set", 0, "K=V", "an override", .kind = CLI_SET, .offset = OFF(set) },
    { "--count", 0, "N", "how many", .kind = CLI_INT, .offset = OFF(count), .min = 1, .max = 10 },
    { "--mode", 0, "M", "how", .kind = CLI_CHOICE, .offset = OFF(mode), .choices = modes },
    { "--ratio", 0, "R", "how much", .kind = CLI_DOUBLE, .offset = OFF(ratio), .min = 0, .max = 1,
      .min_open = true },
    { "--shard", 0, "K/N", "a share", .kind = CLI_CUSTOM, .offset = OFF(shard),
      .parse = cli_parse_shard, .expect = "K/N with 0 <= K < N" },
    { "--quiet", 'q', NULL, "say nothing", .kind = CLI_FLAG, .offset = OFF(quiet) },
};

static const struct cli_command demo = {
    .name = "demo",
    .synopsis = "simtrain demo FILE [OPTION]...",
    .opts = demo_opts,
    .nopts = ARRAY_LEN(demo_opts),
    .positional = OFF(pos),
    .max_positional = 1,
    .positional_noun = "file",
};

/* Parse a NULL-terminated argument list (after the command name) into *a; the stderr text
 * goes to err (when not NULL). */
static enum cli_result parse(struct demo_args *a, char *err, size_t errlen, ...)
{
    static char name[] = "demo";
    char *argv[32] = { name };
    int argc = 1, saved;
    FILE *tmp = tmpfile();
    enum cli_result rc;
    va_list ap;
    size_t n;

    va_start(ap, errlen);
    for (char *s; (s = va_arg(ap, char *)) != NULL;)
        argv[argc++] = s;
    va_end(ap);
    memset(a, 0, sizeof(*a));
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    dup2(fileno(tmp), STDERR_FILENO);
    rc = cli_parse(&demo, argc, argv, a);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    n = fread(err, 1, errlen - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
    return rc;
}

/* Every kind of value, in both spellings (--x V, --x=V), short flags and positionals. */
static void test_args_parses_every_kind(void **state)
{
    struct demo_args a;
    char err[512];

    (void)state;
    assert_int_equal(parse(&a, err, sizeof(err), "in.yaml", "--out", "o.json", "--vary=a=1,2",
                           "--vary", "b=3", "--set", "x.y=4", "--count=7", "--mode", "slow",
                           "--ratio", "0.25", "--shard", "2/5", "-q", NULL),
                     CLI_OK);
    assert_string_equal(err, "");
    assert_int_equal(a.pos.n, 1);
    assert_string_equal(a.pos.items[0], "in.yaml");
    assert_string_equal(a.out, "o.json");
    assert_int_equal(a.vary.n, 2);
    assert_string_equal(a.vary.items[0], "a=1,2");
    assert_string_equal(a.vary.items[1], "b=3");
    assert_int_equal(a.set.n, 1);
    assert_string_equal(a.set.ovr[0].key, "x.y");
    assert_string_equal(a.set.ovr[0].value, "4");
    assert_int_equal(a.count, 7);
    assert_int_equal(a.mode, 1);
    assert_true(a.ratio > 0.249 && a.ratio < 0.251);
    assert_int_equal(a.shard.k, 2);
    assert_int_equal(a.shard.n, 5);
    assert_true(a.quiet);
    cli_release(&demo, &a);
    assert_null(a.vary.items);
    assert_null(a.set.ovr);
}

/* "--" ends the options: a later "--out" and "-" are positionals. */
static void test_args_double_dash_ends_options(void **state)
{
    struct demo_args a;
    char err[512];

    (void)state;
    assert_int_equal(parse(&a, err, sizeof(err), "--", "-", NULL), CLI_OK);
    assert_string_equal(a.pos.items[0], "-");
    cli_release(&demo, &a);
    assert_int_equal(parse(&a, err, sizeof(err), "--", "--out", NULL), CLI_OK);
    assert_string_equal(a.pos.items[0], "--out");
    assert_null(a.out);
    cli_release(&demo, &a);
}

/* Each error names the option and what was wrong, and parsing stops with CLI_ERROR. */
static void test_args_errors_name_the_option(void **state)
{
    static const struct {
        const char *args[3];
        const char *msg;
    } cases[] = {
        { { "--outt", "x" },
          "simtrain demo: error: unknown option '--outt' (did you mean '--out'?)\n" },
        { { "--zzzzzzzz" },
          "simtrain demo: error: unknown option '--zzzzzzzz' (see 'simtrain demo --help')\n" },
        { { "-x" }, "simtrain demo: error: unknown option '-x' (see 'simtrain demo --help')\n" },
        { { "--out" }, "simtrain demo: error: --out needs a value (FILE)\n" },
        { { "--count", "11" },
          "simtrain demo: error: --count takes an integer from 1 to 10, got '11'\n" },
        { { "--count", "2x" },
          "simtrain demo: error: --count takes an integer from 1 to 10, got '2x'\n" },
        { { "--mode=medium" },
          "simtrain demo: error: --mode takes 'fast' or 'slow', got 'medium'\n" },
        { { "--ratio", "0" },
          "simtrain demo: error: --ratio takes a number above 0 and at most 1, got '0'\n" },
        { { "--shard", "5/5" },
          "simtrain demo: error: --shard takes K/N with 0 <= K < N, got '5/5'\n" },
        { { "--quiet=yes" }, "simtrain demo: error: --quiet takes no value, got '--quiet=yes'\n" },
        { { "a", "b" }, "simtrain demo: error: more than one file ('a' and 'b')\n" },
    };
    struct demo_args a;
    char err[512];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *x = (char *)(uintptr_t)cases[i].args[0], *y = (char *)(uintptr_t)cases[i].args[1];
        assert_int_equal(parse(&a, err, sizeof(err), x, y, NULL), CLI_ERROR);
        assert_string_equal(err, cases[i].msg);
        cli_release(&demo, &a);
    }
}

/* A malformed --set is refused with the loader's located diagnostic. */
static void test_args_set_needs_key_value(void **state)
{
    struct demo_args a;
    char err[512];

    (void)state;
    assert_int_equal(parse(&a, err, sizeof(err), "--set", "novalue", NULL), CLI_ERROR);
    assert_non_null(strstr(err, "error: expected key=value, got 'novalue'"));
    cli_release(&demo, &a);
}

/* --help and -h return CLI_HELP (exit status 0) and print on stdout, not stderr. */
static void test_args_help_is_not_an_error(void **state)
{
    struct demo_args a;
    char err[512];

    (void)state;
    assert_int_equal(parse(&a, err, sizeof(err), "--help", NULL), CLI_HELP);
    assert_string_equal(err, "");
    assert_int_equal(cli_exit_status(CLI_HELP), 0);
    assert_int_equal(cli_exit_status(CLI_ERROR), 2);
    cli_release(&demo, &a);
    assert_int_equal(parse(&a, err, sizeof(err), "-h", "--bogus", NULL), CLI_HELP);
    cli_release(&demo, &a);
}

static char *help_of(const struct cli_command *cmd)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    cli_help(cmd, f);
    fclose(f);
    return text;
}

/* Every command's help lists every option of its table, with its value placeholder. */
static void test_args_help_lists_every_option(void **state)
{
    const struct cli_command *cmds[] = { &cmd_run_spec,        &cmd_memory_spec,
                                         &cmd_collective_spec, &cmd_validate_spec,
                                         &cmd_calibrate_spec,  &cmd_sweep_spec,
                                         &cmd_plan_spec,       &cmd_schema_spec };

    (void)state;
    for (size_t c = 0; c < ARRAY_LEN(cmds); c++) {
        char *text = help_of(cmds[c]);
        assert_non_null(strstr(text, "usage: simtrain"));
        assert_non_null(strstr(text, "  -h, --help "));
        for (size_t i = 0; i < cmds[c]->nopts; i++) {
            const struct cli_opt *o = &cmds[c]->opts[i];
            char *want = o->metavar ? xasprintf("%s %s", o->name, o->metavar) : xstrdup(o->name);
            if (!strstr(text, want))
                fail_msg("help of '%s' lacks '%s'", cmds[c]->name ? cmds[c]->name : "run", want);
            assert_true(o->help && o->help[0]);
            free(want);
        }
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_parses_every_kind),
        cmocka_unit_test(test_args_double_dash_ends_options),
        cmocka_unit_test(test_args_errors_name_the_option),
        cmocka_unit_test(test_args_set_needs_key_value),
        cmocka_unit_test(test_args_help_is_not_an_error),
        cmocka_unit_test(test_args_help_lists_every_option),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
