/*
 * args.c - the option parser and help printer shared by every command (see
 * args.h).
 */
#include "cli/args.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/files.h"
#include "base/util.h"
#include "config/config.h"
#include "config/schema.h"

#define HELP_WIDTH 80 /* columns of the help text */
#define OPT_COLUMN 26 /* where an option's help starts */

static const struct cli_opt help_opt = { "--help", 'h', NULL, "print this help and exit",
                                         .kind = CLI_FLAG };

const char *cli_prog(const struct cli_command *cmd)
{
    static char buf[64];

    if (!cmd->name)
        return "simtrain";
    snprintf(buf, sizeof(buf), "simtrain %s", cmd->name);
    return buf;
}

static void *field_of(void *args, const struct cli_opt *o)
{
    return (char *)args + o->offset;
}

static void list_push(struct cli_list *l, const char *s)
{
    l->items = xrealloc(l->items, sizeof(*l->items) * (size_t)(l->n + 1));
    l->items[l->n++] = s;
}

/* ---- values ------------------------------------------------------------------------------ */

static int choice_count(const struct cli_opt *o)
{
    int n = 0;

    if (!o->choices)
        return o->nchoices;
    while (o->choices[n])
        n++;
    return n;
}

static const char *choice_at(const struct cli_opt *o, int i)
{
    return o->choices ? o->choices[i] : o->choice_name(i);
}

/* "'time' or 'cost'", "one of 'a', 'b' or 'c'": the choices of an option, for its errors. */
static void choices_text(const struct cli_opt *o, char *buf, size_t n)
{
    int count = choice_count(o), len;

    len = snprintf(buf, n, "%s", count > 2 ? "one of " : "");
    for (int i = 0; i < count && len >= 0 && (size_t)len < n; i++)
        len += snprintf(buf + len, n - (size_t)len, "%s'%s'",
                        i == 0           ? ""
                        : i + 1 == count ? " or "
                                         : ", ",
                        choice_at(o, i));
}

static void expect_text(const struct cli_opt *o, char *buf, size_t n)
{
    if (o->expect)
        snprintf(buf, n, "%s", o->expect);
    else if (o->kind == CLI_CHOICE)
        choices_text(o, buf, n);
    else if (o->kind == CLI_INT)
        snprintf(buf, n, "an integer from %.0f to %.0f", o->min, o->max);
    else if (o->kind == CLI_DOUBLE)
        snprintf(buf, n, "a number %s %g and at most %g", o->min_open ? "above" : "from", o->min,
                 o->max);
    else
        snprintf(buf, n, "%s", o->metavar ? o->metavar : "a value");
}

static int parse_int(const struct cli_opt *o, const char *v, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);

    if (end == v || *end || (double)x < o->min || (double)x > o->max)
        return -1;
    *out = (int)x;
    return 0;
}

static int parse_double(const struct cli_opt *o, const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);

    /* hexadecimal (0x10, 0x1p3) and denormal numbers are typos, not values of an option */
    if (end == v || *end || !isfinite(x) || x > o->max ||
        (o->min_open ? !(x > o->min) : x < o->min) || strpbrk(v, "xX") ||
        fpclassify(x) == FP_SUBNORMAL)
        return -1;
    *out = x;
    return 0;
}

static int parse_choice(const struct cli_opt *o, const char *v, int *out)
{
    for (int i = 0; i < choice_count(o); i++)
        if (strcmp(v, choice_at(o, i)) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

/* Store the value of option o; 0, or -1 with the message printed. */
static int take_value(const struct cli_command *cmd, const struct cli_opt *o, const char *v,
                      void *args)
{
    void *f = field_of(args, o);
    char want[256];
    int rc = 0;

    if (!v[0] && o->kind != CLI_FLAG) {
        /* a path, a name or a list: an empty one names nothing (--json "" would be lost) */
        fprintf(stderr, "%s: error: %s takes a value, got an empty one\n", cli_prog(cmd), o->name);
        return -1;
    }
    switch (o->kind) {
    case CLI_STRING:
        *(const char **)f = v;
        return 0;
    case CLI_LIST:
        list_push(f, v);
        return 0;
    case CLI_SET: {
        struct cli_overrides *s = f;
        s->ovr = xrealloc(s->ovr, sizeof(*s->ovr) * (size_t)(s->n + 1));
        if (cfg_override_init(&s->ovr[s->n], v, stderr) != 0)
            return -1; /* cfg_override_init() printed where the argument is wrong */
        s->n++;
        return 0;
    }
    case CLI_INT:
        rc = parse_int(o, v, f);
        break;
    case CLI_DOUBLE:
        rc = parse_double(o, v, f);
        break;
    case CLI_CHOICE:
        rc = parse_choice(o, v, f);
        break;
    case CLI_CUSTOM:
        rc = o->parse(v, f);
        break;
    case CLI_FLAG:
        break;
    }
    if (rc != 0) {
        expect_text(o, want, sizeof(want));
        fprintf(stderr, "%s: error: %s takes %s, got '%s'\n", cli_prog(cmd), o->name, want, v);
        return -1;
    }
    return 0;
}

/* ---- parsing ----------------------------------------------------------------------------- */

static const struct cli_opt *find_long(const struct cli_command *cmd, const char *name, size_t len)
{
    if (strlen(help_opt.name) == len && strncmp(help_opt.name, name, len) == 0)
        return &help_opt;
    for (size_t i = 0; i < cmd->nopts; i++)
        if (strlen(cmd->opts[i].name) == len && strncmp(cmd->opts[i].name, name, len) == 0)
            return &cmd->opts[i];
    return NULL;
}

static const struct cli_opt *find_short(const struct cli_command *cmd, char c)
{
    if (c == help_opt.short_name)
        return &help_opt;
    for (size_t i = 0; i < cmd->nopts; i++)
        if (cmd->opts[i].short_name && cmd->opts[i].short_name == c)
            return &cmd->opts[i];
    return NULL;
}

static void unknown_option(const struct cli_command *cmd, const char *arg, size_t len)
{
    const char **names = xcalloc(cmd->nopts + 1, sizeof(*names));
    char *word = xstrndup(arg, len);
    const char *best;

    for (size_t i = 0; i < cmd->nopts; i++)
        names[i] = cmd->opts[i].name;
    names[cmd->nopts] = help_opt.name;
    best = len > 2 && arg[1] == '-' ? diag_did_you_mean(word, names, cmd->nopts + 1) : NULL;
    if (best)
        fprintf(stderr, "%s: error: unknown option '%s' (did you mean '%s'?)\n", cli_prog(cmd),
                word, best);
    else
        fprintf(stderr, "%s: error: unknown option '%s' (see '%s --help')\n", cli_prog(cmd), word,
                cli_prog(cmd));
    free(word);
    free(names);
}

static int take_positional(const struct cli_command *cmd, const char *arg, void *args)
{
    struct cli_list *l = (struct cli_list *)((char *)args + cmd->positional);

    if (cmd->max_positional >= 0 && l->n >= cmd->max_positional) {
        if (cmd->max_positional == 1 && cmd->positional_noun)
            fprintf(stderr, "%s: error: more than one %s ('%s' and '%s')\n", cli_prog(cmd),
                    cmd->positional_noun, l->items[0], arg);
        else
            fprintf(stderr, "%s: error: unexpected argument '%s'\n", cli_prog(cmd), arg);
        return -1;
    }
    list_push(l, arg);
    return 0;
}

enum cli_result cli_parse(const struct cli_command *cmd, int argc, char **argv, void *args)
{
    bool options = true;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        const struct cli_opt *o;
        size_t len;

        if (!options || a[0] != '-' || a[1] == '\0') {
            if (take_positional(cmd, a, args) != 0)
                return CLI_ERROR;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options = false;
            continue;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a, '=');
            len = eq ? (size_t)(eq - a) : strlen(a);
            value = eq ? eq + 1 : NULL;
            o = find_long(cmd, a, len);
        } else {
            len = 2;
            o = a[2] == '\0' ? find_short(cmd, a[1]) : NULL;
            if (!o)
                len = strlen(a);
        }
        if (!o) {
            unknown_option(cmd, a, len);
            return CLI_ERROR;
        }
        if (o == &help_opt) {
            cli_help(cmd, stdout);
            return CLI_HELP;
        }
        if (o->kind == CLI_FLAG) {
            if (value) {
                fprintf(stderr, "%s: error: %s takes no value, got '%s'\n", cli_prog(cmd), o->name,
                        a);
                return CLI_ERROR;
            }
            *(bool *)field_of(args, o) = true;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: error: %s needs a value (%s)\n", cli_prog(cmd), o->name,
                        o->metavar ? o->metavar : "VALUE");
                return CLI_ERROR;
            }
            value = argv[++i];
        }
        if (take_value(cmd, o, value, args) != 0)
            return CLI_ERROR;
    }
    return CLI_OK;
}

void cli_release(const struct cli_command *cmd, void *args)
{
    struct cli_list *pos = (struct cli_list *)((char *)args + cmd->positional);

    for (size_t i = 0; i < cmd->nopts; i++) {
        const struct cli_opt *o = &cmd->opts[i];
        if (o->kind == CLI_LIST) {
            struct cli_list *l = field_of(args, o);
            free(l->items);
            l->items = NULL;
            l->n = 0;
        } else if (o->kind == CLI_SET) {
            struct cli_overrides *s = field_of(args, o);
            for (int k = 0; k < s->n; k++)
                cfg_override_release(&s->ovr[k]);
            free(s->ovr);
            s->ovr = NULL;
            s->n = 0;
        }
    }
    free(pos->items);
    pos->items = NULL;
    pos->n = 0;
}

/* ---- help -------------------------------------------------------------------------------- */

/* Write `text` from column `col` (already reached) wrapped at HELP_WIDTH, continuing at `indent`.
 */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;

    while (*p) {
        size_t word = strcspn(p, " \n");
        if (col > indent && col + 1 + (int)word > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, word, f);
        col += (int)word;
        p += word;
        if (*p == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        }
        while (*p == ' ' || *p == '\n')
            p++;
    }
    fputc('\n', f);
}

static void print_option(const struct cli_opt *o, FILE *f)
{
    char head[96];
    int n;

    if (o->short_name)
        n = snprintf(head, sizeof(head), "  -%c, %s", o->short_name, o->name);
    else
        n = snprintf(head, sizeof(head), "      %s", o->name);
    if (o->metavar)
        n += snprintf(head + n, sizeof(head) - (size_t)n, " %s", o->metavar);
    fputs(head, f);
    if (n + 2 > OPT_COLUMN)
        fprintf(f, "\n%*s", OPT_COLUMN, "");
    else
        fprintf(f, "%*s", OPT_COLUMN - n, "");
    if (o->kind == CLI_CHOICE && !strchr(o->metavar, '|')) {
        char choices[512], *text;
        choices_text(o, choices, sizeof(choices));
        text = xasprintf("%s; %s is %s", o->help, o->metavar, choices);
        wrap(f, text, OPT_COLUMN, OPT_COLUMN);
        free(text);
        return;
    }
    wrap(f, o->help, OPT_COLUMN, OPT_COLUMN);
}

void cli_print_options(const struct cli_command *cmd, FILE *f)
{
    for (size_t i = 0; i < cmd->nopts; i++)
        print_option(&cmd->opts[i], f);
    print_option(&help_opt, f);
}

void cli_usage(const struct cli_command *cmd, FILE *f)
{
    const char *p = cmd->synopsis;
    bool first = true;

    while (*p) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "%s%.*s\n", first ? "usage: " : "       ", (int)n, p);
        first = false;
        p += n;
        if (*p == '\n')
            p++;
    }
}

void cli_help(const struct cli_command *cmd, FILE *f)
{
    cli_usage(cmd, f);
    if (cmd->about) {
        fputc('\n', f);
        fputs(cmd->about, f);
    }
    fputs("\noptions:\n", f);
    cli_print_options(cmd, f);
}

enum cli_result cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: error: ", cli_prog(cmd));
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cli_usage(cmd, stderr);
    return CLI_ERROR;
}

int cli_check_outputs(const struct cli_command *cmd, const char *const *files, size_t nfiles,
                      const char *const *dirs, size_t ndirs)
{
    char msg[600];

    if (files_check_output("-", msg, sizeof(msg)) != 0)
        goto refused;
    for (size_t i = 0; i < nfiles; i++) {
        if (files[i] && files_check_output(files[i], msg, sizeof(msg)) != 0)
            goto refused;
        for (size_t j = 0; j < i && files[i]; j++)
            if (files[j] && strcmp(files[i], files[j]) == 0) {
                if (strcmp(files[i], "-") == 0)
                    snprintf(msg, sizeof(msg),
                             "standard output ('-') is named for two outputs: they would be "
                             "one stream of two documents");
                else
                    snprintf(msg, sizeof(msg), "'%s' is named for two outputs", files[i]);
                goto refused;
            }
    }
    for (size_t i = 0; i < ndirs; i++)
        if (dirs[i] && files_check_dir(dirs[i], msg, sizeof(msg)) != 0)
            goto refused;
    return 0;
refused:
    fprintf(stderr, "%s: error: %s\n", cli_prog(cmd), msg);
    return -1;
}

/* ---- shared value parsers ---------------------------------------------------------------- */

int cli_parse_shard(const char *text, void *field)
{
    struct cli_shard *s = field;
    char *end;
    long a = strtol(text, &end, 10), b;

    if (end == text || *end != '/')
        return -1;
    text = end + 1;
    b = strtol(text, &end, 10);
    if (end == text || *end != '\0' || a < 0 || b < 1 || a >= b || b > 1000000)
        return -1;
    s->k = (int)a;
    s->n = (int)b;
    return 0;
}
