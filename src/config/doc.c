/*
 * doc.c - the key reference of every file kind as Markdown, generated
 * from the schema tables (`simtrain schema`; docs/yaml-reference.md embeds it
 * and a test keeps the two equal).
 */
#include "config/schema.h"

static void bounds(const struct field *f, char *buf, size_t n)
{
    bool zero_ok = (f->flags & F_ZERO_OK) != 0;

    if (f->type == FT_INT) {
        if (f->max > 0 && f->max < 1e6)
            snprintf(buf, n, " %g..%g", f->min, f->max);
        else
            snprintf(buf, n, " >= %g", f->min);
    } else if (f->min > 0) {
        snprintf(buf, n, " >= %g", f->min);
    } else if (f->max > 0) {
        snprintf(buf, n, " in %s0, %g]", zero_ok ? "[" : "(", f->max);
    } else {
        snprintf(buf, n, zero_ok ? " >= 0" : " > 0");
    }
}

static void type_of(const struct field *f, char *buf, size_t n)
{
    static const char *const kinds[UNIT_KIND_COUNT] = { "bytes", "bandwidth", "compute rate",
                                                        "time",  "power",     "rate",
                                                        "count", "frequency" };
    char b[64] = "";
    size_t used;

    switch (f->type) {
    case FT_INT:
        bounds(f, b, sizeof(b));
        snprintf(buf, n, "integer%s", b);
        return;
    case FT_FLOAT:
        bounds(f, b, sizeof(b));
        snprintf(buf, n, "number%s", b);
        return;
    case FT_QTY:
        bounds(f, b, sizeof(b));
        snprintf(buf, n, "%s%s", kinds[f->unit], b);
        return;
    case FT_BOOL:
        snprintf(buf, n, "boolean");
        return;
    case FT_ENUM:
    case FT_FLAGS:
        used = (size_t)snprintf(buf, n, "%s", f->type == FT_FLAGS ? "list of " : "");
        for (const struct enum_name *e = f->names; e->name && used < n; e++)
            used += (size_t)snprintf(buf + used, n - used, "%s`%s`", e == f->names ? "" : " \\| ",
                                     e->name);
        return;
    case FT_STR:
        snprintf(buf, n, "text");
        return;
    case FT_ORDER:
        snprintf(buf, n, "placement");
        return;
    case FT_SECTION:
        snprintf(buf, n, "mapping");
        return;
    case FT_REF:
        snprintf(buf, n, "name, path or mapping");
        return;
    case FT_TABLE:
        snprintf(buf, n, "list of mappings");
        return;
    case FT_ANY:
        snprintf(buf, n, "anything");
        return;
    }
}

static void rows(FILE *out, const struct section *sec, const char *prefix, bool no_defaults)
{
    for (size_t i = 0; i < sec->nfields; i++) {
        const struct field *f = &sec->fields[i];
        char type[256], key[160], dflt[160];

        if (f->flags & F_NO_DOC)
            continue;
        snprintf(key, sizeof(key), "%s%s", prefix, f->key);
        type_of(f, type, sizeof(type));
        if (no_defaults && !(f->flags & F_REQUIRED) && f->type != FT_SECTION)
            snprintf(dflt, sizeof(dflt), "unchanged");
        else if (f->def_doc)
            snprintf(dflt, sizeof(dflt), "%s", f->def_doc);
        else if (f->def)
            snprintf(dflt, sizeof(dflt), "`%s`", f->def);
        else
            snprintf(dflt, sizeof(dflt), "%s", f->flags & F_REQUIRED ? "**required**" : "none");
        fprintf(out, "| `%s` | %s | %s | %s |\n", key, type, dflt, f->doc ? f->doc : "");
        if (f->type == FT_SECTION || f->type == FT_TABLE) {
            char sub[200];

            snprintf(sub, sizeof(sub), "%s%s.", key, f->type == FT_TABLE ? "[]" : "");
            rows(out, f->sub, sub, no_defaults);
        }
    }
}

static void table(FILE *out, const char *title, const struct section *sec, bool no_defaults)
{
    fprintf(out, "### %s\n\n", title);
    fprintf(out, "| key | type | default | description |\n|---|---|---|---|\n");
    rows(out, sec, "", no_defaults);
    fputc('\n', out);
}

void cfg_write_reference(FILE *out)
{
    fprintf(out, "Numbers and quantities must be positive unless the type column says `>= 0`;\n"
                 "a section marked **required** must be present, and so must its required keys.\n"
                 "A required key inside an optional section is required only when the section is\n"
                 "present.\n\n");
    table(out, "Hardware file", &schema_hardware, false);
    table(out, "Calibration file (keys it leaves out keep the hardware file's values)",
          &schema_calibration, true);
    table(out, "Workload file", &schema_workload, false);
    table(out, "Scenario file", &schema_scenario, false);
}
