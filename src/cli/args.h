/*
 * args.h - the one option parser of the simtrain command line. Every command
 * (the run itself and each subcommand) declares its options in one table of
 * struct cli_opt: name, value placeholder, one line of help, the kind of value
 * and where it goes in the command's argument struct. cli_parse() reads argv
 * against the table and cli_help() prints the command's help from the same
 * table, so the help cannot omit a flag the parser accepts.
 *
 * Syntax, the same for every command: `--name VALUE` or `--name=VALUE` for an
 * option with a value, `--name` for a flag, `-h`/`--help` everywhere, short
 * aliases where the table gives one (`-q`), `--` ends the options, and every
 * other word is a positional argument (`-` included, for standard input or
 * output). A repeated option with a value keeps the last value, except the
 * list kinds (CLI_LIST, CLI_SET), which collect every occurrence in order.
 *
 * Errors name the option and exit with status 2 (usage), as every simtrain
 * command does: an unknown option (with a did-you-mean over the table), a
 * missing value, a value of the wrong form (with what was expected). Checks
 * that need more than one option, or a loaded file, stay with the command.
 *
 * Memory: lists and overrides collected by cli_parse() point into argv and
 * into heap arrays the argument struct owns; cli_release() frees them.
 */
#ifndef SIMTRAIN_CLI_ARGS_H
#define SIMTRAIN_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cfg_override;

/* What an option takes, and the type of the field at its offset. */
enum cli_kind {
    CLI_FLAG,   /* bool: set to true; takes no value */
    CLI_STRING, /* const char *: the value as given */
    CLI_LIST,   /* struct cli_list: every value, in order */
    CLI_SET,    /* struct cli_overrides: `--set KEY=VALUE`, in order */
    CLI_INT,    /* int within [min, max] */
    CLI_DOUBLE, /* double within [min, max] (min exclusive when min_open) */
    CLI_CHOICE, /* int: the index of the value in choices[] (or among choice_name(0..n-1)) */
    CLI_CUSTOM  /* whatever parse() writes; 0, or -1 when the value is malformed */
};

/* Growable list of argument strings (pointing into argv). */
struct cli_list {
    const char **items;
    int n;
};

/* The --set overrides of a command, parsed by cfg_override_init(). */
struct cli_overrides {
    struct cfg_override *ovr;
    int n;
};

struct cli_opt {
    const char *name;    /* "--json" */
    char short_name;     /* 'q' for -q, or 0 */
    const char *metavar; /* "FILE"; NULL for flags */
    const char *help;    /* one sentence, lowercase, no full stop; wrapped by cli_help() */
    enum cli_kind kind;
    size_t offset;                   /* offsetof(args struct, field) */
    double min, max;                 /* CLI_INT, CLI_DOUBLE bounds */
    bool min_open;                   /* CLI_DOUBLE: the value must exceed min */
    const char *const *choices;      /* CLI_CHOICE: NULL-terminated names, or NULL and: */
    const char *(*choice_name)(int); /* CLI_CHOICE: the name of value i < nchoices */
    int nchoices;
    int (*parse)(const char *value, void *field); /* CLI_CUSTOM */
    const char *expect; /* what a good value looks like, for errors ("K/N with 0 <= K < N") */
};

struct cli_command {
    const char *name;     /* "sweep"; NULL for the run command (`simtrain SCENARIO.yaml`) */
    const char *synopsis; /* usage lines after "usage: ", "\n"-separated, without options */
    const char *about;    /* paragraph(s) of the help, or NULL */
    const struct cli_opt *opts;
    size_t nopts;
    size_t positional;           /* offsetof(args struct, struct cli_list of positionals) */
    int max_positional;          /* most positionals (-1: any number) */
    const char *positional_noun; /* "scenario": for "more than one scenario ('a' and 'b')" */
};

enum cli_result {
    CLI_OK = 0,    /* parsed: run the command */
    CLI_HELP = 1,  /* --help printed on stdout: exit 0 */
    CLI_ERROR = -1 /* message printed on stderr: exit 2 */
};

/*
 * Parse argv[1..argc) (argv[0] is the command's name) into `args`, which the
 * caller zeroes and fills with defaults first. Returns a cli_result.
 */
enum cli_result cli_parse(const struct cli_command *cmd, int argc, char **argv, void *args);

/* The exit status after a parse that did not return CLI_OK: 0 after --help, 2 after an error. */
static inline int cli_exit_status(enum cli_result r)
{
    return r == CLI_HELP ? 0 : 2;
}

/* Free what cli_parse() allocated in `args` (lists, overrides); safe after a failed parse. */
void cli_release(const struct cli_command *cmd, void *args);

/* The whole help of a command: usage, about, every option with its help. */
void cli_help(const struct cli_command *cmd, FILE *f);

/* Only the usage lines (for a usage error). */
void cli_usage(const struct cli_command *cmd, FILE *f);

/* The options of a command as a help block (used for the top-level help as well). */
void cli_print_options(const struct cli_command *cmd, FILE *f);

/*
 * A usage error found after parsing: "simtrain CMD: error: MESSAGE" and the
 * usage lines on stderr. Returns CLI_ERROR, so that a command can
 * `return cli_usage_error(...)`.
 */
enum cli_result cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Refuse, before any work is done, outputs that would overwrite an input of
 * the run or cannot be written: each non-NULL entry of files[] (a path, or
 * "-"), of dirs[] (a --plot directory: it, or its parent, must exist) and
 * standard output itself. Call it once the inputs are read. 0, or -1 with
 * "PROG: error: ..." printed (the command then exits with status 1).
 */
int cli_check_outputs(const struct cli_command *cmd, const char *const *files, size_t nfiles,
                      const char *const *dirs, size_t ndirs);

/* "simtrain" or "simtrain CMD", the prefix of every message of the command. */
const char *cli_prog(const struct cli_command *cmd);

/* ---- value parsers shared by several commands (CLI_CUSTOM) ------------------------------ */

/* Two ints of struct cli_shard from "K/N" with 0 <= K < N <= 1,000,000. */
struct cli_shard {
    int k, n;
};
int cli_parse_shard(const char *text, void *field);

#endif
