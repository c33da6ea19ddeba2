/*
 * profile_doc.c - `simtrain frameworks`: every profile with its versions and settings, as plain
 * text or as the Markdown of docs/frameworks.md (see profile.h).
 */
#include "config/profile_internal.h"

#include <string.h>

/* Settings of v before index `own` came from what it inherits. */
static int inherited_count(const struct fw_version *v)
{
    return v->nall - v->nown;
}

/* Markdown table cells must not hold a '|'. */
static void md_cell(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

static void text_version(FILE *out, const struct fw_file *f, const struct fw_version *v)
{
    int inh = inherited_count(v);

    fprintf(out, "  %s%s", v->name, strcmp(v->name, f->current) == 0 ? " (current)" : "");
    for (int k = 0; k < v->nreleases; k++)
        fprintf(out, "%s%s", k ? ", " : "  releases: ", v->releases[k]);
    for (int k = 0; k < v->naliases; k++)
        fprintf(out, "%s%s", k ? ", " : "  also: ", v->aliases[k]);
    fprintf(out, "\n    read      %s\n", v->read);
    if (v->released)
        fprintf(out, "    released  %s\n", v->released);
    if (v->since)
        fprintf(out, "    since     %s: %s\n", v->since, v->since_source);
    if (v->inherits)
        fprintf(out, "    inherits  %s (%d settings, applied first)\n", v->inherits, inh);
    if (v->note)
        fprintf(out, "    note      %s\n", v->note);
    for (int i = inh; i < v->nall; i++) {
        const struct fw_setting *st = &v->all[i];
        if (st->when)
            fprintf(out, "    %-34s %-16s if %s\n", st->key, st->value, st->when);
        else
            fprintf(out, "    %-34s %s\n", st->key, st->value);
        fprintf(out, "      source: %s\n", st->source);
    }
    for (int i = 0; i < v->nnotes; i++)
        fprintf(out, "    not modelled: %s\n", v->notes[i]);
}

static void md_version(FILE *out, const struct fw_file *f, const struct fw_version *v)
{
    int inh = inherited_count(v);

    fprintf(out, "### %s `%s`%s\n\n", f->name, v->name,
            strcmp(v->name, f->current) == 0 ? " (current)" : "");
    if (v->nreleases) {
        fputs("The release", out);
        for (int k = 0; k < v->nreleases; k++)
            fprintf(out, "%s `%s`", k ? "," : "", v->releases[k]);
        fputs(".\n", out);
    }
    if (v->naliases) {
        fputs("Also selected by:", out);
        for (int k = 0; k < v->naliases; k++)
            fprintf(out, "%s `%s`", k ? "," : "", v->aliases[k]);
        fputs(".\n", out);
    }
    fprintf(out, "Read from %s%s%s.\n", v->read, v->released ? "; released " : "",
            v->released ? v->released : "");
    if (v->since)
        fprintf(out, "In effect since %s: %s.\n", v->since, v->since_source);
    if (v->inherits)
        fprintf(out, "Inherits the %d settings of `%s`, applied before its own.\n", inh,
                v->inherits);
    if (v->note)
        fprintf(out, "\n**Note.** %s\n", v->note);
    if (v->nall > inh) {
        fputs("\n| key | value | when | source |\n|---|---|---|---|\n", out);
        for (int i = inh; i < v->nall; i++) {
            const struct fw_setting *st = &v->all[i];
            fprintf(out, "| `%s` | `%s` | ", st->key, st->value);
            md_cell(out, st->when ? st->when : "always");
            fputs(" | ", out);
            md_cell(out, st->source);
            fputs(" |\n", out);
        }
    }
    if (v->nnotes) {
        fputs("\nWhat this version does that simtrain does not model:\n\n", out);
        for (int i = 0; i < v->nnotes; i++)
            fprintf(out, "- %s\n", v->notes[i]);
    }
    fputs("\n", out);
}

/* The release calendar: "v0.3.13 2021-03-16, v0.4.0 2021-06-08, ...". */
static void write_calendar(FILE *out, bool markdown, const struct fw_file *f)
{
    if (!f->ncal)
        return;
    fputs(markdown ? "Release calendar (" : "  calendar ", out);
    fputs(f->cal_source, out);
    fputs(markdown ? "): " : ":\n    ", out);
    for (int i = 0; i < f->ncal; i++)
        fprintf(out, markdown ? "%s`%s` %s" : "%s%s %s", i ? ", " : "", f->cal[i].id,
                f->cal[i].when);
    fputs(markdown ? ".\n\n" : "\n", out);
}

static void write_file(FILE *out, bool markdown, const struct fw_file *f)
{
    if (markdown)
        fprintf(out, "## %s\n\n%s (`frameworks/%s.yaml`; current version `%s`).\n\n", f->name,
                f->description, f->name, f->current);
    else
        fprintf(out, "%s: %s\n  file %s, current version %s\n", f->name, f->description, f->path,
                f->current);
    write_calendar(out, markdown, f);
    for (int i = 0; i < f->nv; i++)
        (markdown ? md_version : text_version)(out, f, &f->v[i]);
    if (!markdown)
        fputs("\n", out);
}

int profile_write_reference(FILE *out, bool markdown, const char *only, FILE *diag)
{
    struct arena a;
    struct schema_ctx c = { .diag = diag, .a = &a };
    const char **names;
    int n, rc = 0;

    arena_init(&a);
    n = profile_names(&a, &names);
    if (only) {
        names = &only;
        n = 1;
    }
    for (int i = 0; i < n; i++) {
        struct fw_file *f = profile_load_file(&c, names[i], (struct diag_mark){ NULL, 0, 0 });

        for (int k = 0; f && k < f->nv; k++)
            if (profile_resolve(&c, f, &f->v[k]))
                f = NULL;
        if (!f) {
            rc = -1;
            continue;
        }
        write_file(out, markdown, f);
    }
    arena_release(&a);
    return rc;
}
