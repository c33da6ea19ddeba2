/*
 * test_cli_flags.c - every numeric option of every command refuses what no number of it can be
 * (issue 25: "the same classes swept across every key, flag and importer"). The cases are
 * generated from the commands' own option tables (cli/cmd.h: the tables `--help` prints), not
 * listed by hand, so an option added later is covered the day it is added: each option whose
 * value is an integer, a number or a value of its own parser (CLI_INT, CLI_DOUBLE, CLI_CUSTOM)
 * is given NaN and infinities, a negative number, an integer beyond any int, a number past any
 * double, trailing junk, a hex number, an empty value and a denormal, one below its minimum
 * and one above its maximum, and zero where zero is outside its bounds. Each must be refused
 * by the parser (CLI_ERROR, the exit status 2 of a usage error) with a message that names the
 * option; nothing may be accepted or crash.
 */
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

/* Every command of the command line (cli/cmd.h); main.c dispatches to the same specs. */
static const struct cli_command *const commands[] = {
    &cmd_run_spec,        &cmd_memory_spec, &cmd_collective_spec, &cmd_validate_spec,
    &cmd_calibrate_spec,  &cmd_sweep_spec,  &cmd_plan_spec,       &cmd_schema_spec,
    &cmd_frameworks_spec, &cmd_import_spec, &cmd_serve_spec,
};

/* Values no numeric option may take, whatever its bounds. */
static const char *const never[] = {
    "nan",
    "NaN",
    "inf",
    "-inf",
    "infinity",
    "-1",
    "-0.5",
    "99999999999999999999",
    "-99999999999999999999",
    "1e999",
    "-1e999",
    "5x",
    "5 ",
    "1,",
    "0x10",
    "",
    "1e-310",
};

/* The argument structs of the commands are smaller than this (each command's own struct). */
static max_align_t args_buf[8192];

struct tally {
    int cases, failures;
};

/* Parse `--opt value` for cmd; the first line of what it printed goes to msg. */
static enum cli_result parse_one(const struct cli_command *cmd, const char *opt, const char *value,
                                 char *msg, size_t msglen)
{
    char a0[32], a1[64], a2[64];
    char *argv[4] = { a0, a1, a2, NULL };
    FILE *tmp = tmpfile();
    int saved;
    enum cli_result r;
    size_t n;

    assert_non_null(tmp);
    snprintf(a0, sizeof(a0), "%s", cmd->name ? cmd->name : "simtrain");
    snprintf(a1, sizeof(a1), "%s", opt);
    snprintf(a2, sizeof(a2), "%s", value);
    memset(args_buf, 0, sizeof(args_buf));
    fflush(stderr);
    saved = dup(fileno(stderr));
    dup2(fileno(tmp), fileno(stderr));
    r = cli_parse(cmd, 3, argv, args_buf);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    cli_release(cmd, args_buf);
    rewind(tmp);
    n = fread(msg, 1, msglen - 1, tmp);
    msg[n] = '\0';
    msg[strcspn(msg, "\n")] = '\0';
    fclose(tmp);
    return r;
}

static void expect_refused(struct tally *t, const struct cli_command *cmd, const struct cli_opt *o,
                           const char *value, const char *why)
{
    char msg[512];
    enum cli_result r = parse_one(cmd, o->name, value, msg, sizeof(msg));

    t->cases++;
    if (r == CLI_ERROR && strstr(msg, o->name))
        return;
    fprintf(stderr, "%s %s '%s' (%s): %s%s\n", cmd->name ? cmd->name : "simtrain", o->name, value,
            why, r == CLI_ERROR ? "refused without naming the option: " : "accepted",
            r == CLI_ERROR ? msg : "");
    t->failures++;
}

static void check_option(struct tally *t, const struct cli_command *cmd, const struct cli_opt *o)
{
    char v[64];

    for (size_t i = 0; i < ARRAY_LEN(never); i++)
        expect_refused(t, cmd, o, never[i], "no number of it");
    if (o->kind == CLI_CUSTOM) {
        expect_refused(t, cmd, o, "0", "zero"); /* every custom value is positive or a form */
        return;
    }
    snprintf(v, sizeof(v), "%.17g", o->max * 2 + 1);
    expect_refused(t, cmd, o, v, "above its maximum");
    if (o->min > 0 || o->min_open) {
        snprintf(v, sizeof(v), "%.17g", o->min_open ? o->min : o->min - 1);
        expect_refused(t, cmd, o, v, "at or below its minimum");
    }
    if (o->min > 0 || (o->min_open && !(o->min < 0)))
        expect_refused(t, cmd, o, "0", "zero");
    if (o->kind == CLI_INT)
        expect_refused(t, cmd, o, "1.5", "not an integer");
}

/* A valid value of each bounded option is accepted: the refusals above are not the parser
 * refusing everything. */
static void check_accepts(struct tally *t, const struct cli_command *cmd, const struct cli_opt *o)
{
    char v[64], msg[512];

    if (o->kind == CLI_CUSTOM)
        return;
    snprintf(v, sizeof(v), "%.17g", o->max);
    t->cases++;
    if (parse_one(cmd, o->name, v, msg, sizeof(msg)) != CLI_OK) {
        fprintf(stderr, "%s %s '%s' (its maximum): refused: %s\n",
                cmd->name ? cmd->name : "simtrain", o->name, v, msg);
        t->failures++;
    }
}

static void test_cli_numeric_flags(void **state)
{
    struct tally t = { 0, 0 };
    int options = 0;

    (void)state;
    for (size_t c = 0; c < ARRAY_LEN(commands); c++)
        for (size_t i = 0; i < commands[c]->nopts; i++) {
            const struct cli_opt *o = &commands[c]->opts[i];
            if (o->kind != CLI_INT && o->kind != CLI_DOUBLE && o->kind != CLI_CUSTOM)
                continue;
            options++;
            check_option(&t, commands[c], o);
            check_accepts(&t, commands[c], o);
        }
    fprintf(stderr, "cli flags: %d numeric options of %zu commands, %d cases, %d failures\n",
            options, ARRAY_LEN(commands), t.cases, t.failures);
    assert_true(options >= 20);
    assert_int_equal(t.failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_numeric_flags),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
