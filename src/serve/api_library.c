/*
 * api_library.c - GET /api/library: what a posted scenario may name and start from. The
 * shipped hardware, workloads and framework profiles (names and headline figures), the
 * scenarios with their text (the page edits them), the teaching labs compiled into the binary
 * (assets.h) and the flagship the page opens with. Read afresh for each request.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, readdir */

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "config/profile.h"
#include "config/schema.h"
#include "model/workload.h"
#include "report/report.h"
#include "serve/api_internal.h"
#include "serve/assets.h"

#define FLAGSHIP "70b_256gpu"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The stems of the *.yaml files of `sub` in the data directories, sorted, unique (arena). */
static int list_stems(struct arena *a, const char *sub, const char ***out)
{
    const char *dirs[2] = { getenv("SIMTRAIN_DATA"), cfg_data_dir() };
    const char **names = NULL;
    size_t n = 0, cap = 0;
    int k = 0;

    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *dir;
        DIR *d;
        struct dirent *e;

        if (!dirs[i] || !*dirs[i])
            continue;
        dir = xasprintf("%s/%s", dirs[i], sub);
        d = opendir(dir);
        free(dir);
        while (d && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (e->d_name[0] == '.' || len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
                continue;
            grow_array((void **)&names, &cap, n + 1, sizeof(*names));
            names[n++] = cfg_stem(a, e->d_name);
        }
        if (d)
            closedir(d);
    }
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_str);
    *out = arena_alloc(a, sizeof(**out) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp((*out)[k - 1], names[i]) != 0)
            (*out)[k++] = names[i];
    free(names);
    return k;
}

static void key(FILE *f, const char *name, const char *value)
{
    fprintf(f, "\"%s\":", name);
    fput_json_string(f, value ? value : "");
}

static void hardware(FILE *f, struct arena *a)
{
    const char **names;
    int n = list_stems(a, "hardware", &names);

    fputs("\"hardware\":[", f);
    for (int i = 0; i < n; i++) {
        struct hardware *hw = cfg_load_hardware(names[i], NULL);
        fputs(i ? ",\n{" : "\n{", f);
        key(f, "name", names[i]);
        if (hw) {
            fputc(',', f);
            key(f, "gpu", hw->gpu.model);
            fprintf(f, ",\"gpus_per_node\":%d,\"nodes\":%d,\"memory_bytes\":%.0f",
                    hw->gpus_per_node, hw->nodes, hw->gpu.mem_bytes);
        }
        fputc('}', f);
        cfg_free_hw(hw);
    }
    fputs("],\n", f);
}

static void workloads(FILE *f, struct arena *a)
{
    const char **names;
    int n = list_stems(a, "workloads", &names);

    fputs("\"workloads\":[", f);
    for (int i = 0; i < n; i++) {
        struct model *m = cfg_load_model(names[i], NULL);
        fputs(i ? ",\n{" : "\n{", f);
        key(f, "name", names[i]);
        if (m)
            fprintf(f, ",\"layers\":%d,\"hidden\":%d,\"params\":%.0f", m->layers, m->hidden,
                    workload_params_total(m));
        fputc('}', f);
        cfg_free_model(m);
    }
    fputs("],\n", f);
}

static void frameworks(FILE *f, struct arena *a)
{
    const char **names;
    int n = profile_names(a, &names);

    fputs("\"frameworks\":[", f);
    for (int i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        fput_json_string(f, names[i]);
    }
    fputs("],\n", f);
}

/* A shipped scenario: its text, and what loading it says (name, description, GPUs). */
static void scenario(FILE *f, const char *stem)
{
    const char *dirs[2] = { getenv("SIMTRAIN_DATA"), cfg_data_dir() };
    char *text = NULL, *file = xasprintf("%s.yaml", stem);
    size_t len = 0;
    struct scenario *s = NULL;

    for (size_t i = 0; i < ARRAY_LEN(dirs) && !text; i++) {
        const char *why;
        char *path;
        if (!dirs[i] || !*dirs[i])
            continue;
        path = xasprintf("%s/scenarios/%s", dirs[i], file);
        text = cfg_read_file(path, &len, &why);
        free(path);
    }
    if (text)
        s = cfg_load_scenario_posted(file, text, len, NULL, 0, NULL);
    fputc('{', f);
    key(f, "name", stem);
    fputc(',', f);
    key(f, "file", file);
    if (s) {
        fputc(',', f);
        key(f, "description", s->description);
        fprintf(f, ",\"gpus\":%d,", s->gpus);
        key(f, "workload", s->model.name);
        fputc(',', f);
        key(f, "hardware", s->hw.name);
    }
    fputc(',', f);
    key(f, "text", text);
    fputc('}', f);
    cfg_free(s);
    free(text);
    free(file);
}

static void scenarios(FILE *f, struct arena *a)
{
    const char **names;
    int n = list_stems(a, "scenarios", &names);

    fputs("\"scenarios\":[", f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", f);
        scenario(f, names[i]);
    }
    fputs("],\n", f);
}

/* The labs compiled in (docs/labs/NN-name.md, not the README): name, title, Markdown text. */
static void lab_list(FILE *f)
{
    static const char prefix[] = "docs/labs/";
    bool first = true;

    fputs("\"labs\":[", f);
    for (int i = 0; i < serve_nassets; i++) {
        const struct serve_asset *as = &serve_assets[i];
        const char *text = (const char *)as->data, *base = as->name + strlen(prefix);
        size_t n = strcspn(text, "\n");
        char *title, *name;

        if (strncmp(as->name, prefix, strlen(prefix)) != 0 || strcmp(base, "README.md") == 0)
            continue;
        while (n > 0 && text[0] == '#') {
            text++;
            n--;
        }
        while (n > 0 && text[0] == ' ') {
            text++;
            n--;
        }
        title = xmalloc(n + 1);
        memcpy(title, text, n);
        title[n] = '\0';
        name = xstrdup(base);
        name[strcspn(name, ".")] = '\0';
        fputs(first ? "\n{" : ",\n{", f);
        first = false;
        key(f, "name", name);
        fputc(',', f);
        key(f, "title", title);
        fputc(',', f);
        key(f, "text", (const char *)as->data);
        fputc('}', f);
        free(title);
        free(name);
    }
    fputs("]", f);
}

void api_library(struct api_reply *out)
{
    struct membuf m;
    struct arena a;

    arena_init(&a);
    membuf_open(&m);
    fputc('{', m.f);
    key(m.f, "simtrain_version", SIMTRAIN_VERSION_STRING);
    fputs(",\n", m.f);
    key(m.f, "flagship", FLAGSHIP);
    fputs(",\n", m.f);
    hardware(m.f, &a);
    workloads(m.f, &a);
    frameworks(m.f, &a);
    scenarios(m.f, &a);
    lab_list(m.f);
    fputs("}\n", m.f);
    api_ok(out, "application/json; charset=utf-8", NULL, 0);
    out->body = membuf_close(&m, &out->len);
    arena_release(&a);
}
