/*
 * ref.c - finding the files a configuration names: bare names searched
 * in the data directories, paths relative to the referencing file, lexical
 * path cleaning for readable diagnostics, did-you-mean over the files found.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, readdir, stat */

#include "config/config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/files.h"
#include "base/paths.h"
#include "config/schema.h"

#define MAX_FILE_BYTES (16 << 20) /* configuration files are small; refuse devices and giants */

const char *cfg_data_dir(void)
{
    return paths_data_dir();
}

/*
 * Read a configuration file: a regular file of at most MAX_FILE_BYTES (so a
 * reference to /dev/zero or a FIFO cannot hang the loader). NULL with *why set.
 */
char *cfg_read_file(const char *path, size_t *len, const char **why)
{
    return files_read_input(path, MAX_FILE_BYTES, len, why);
}

char *cfg_locate_input(const char *path)
{
    const char *dirs[2] = { getenv("SIMTRAIN_DATA"), cfg_data_dir() };
    struct stat st;

    if (path[0] == '/' || stat(path, &st) == 0 || errno != ENOENT)
        return xstrdup(path);
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *cand;
        if (!dirs[i] || !*dirs[i])
            continue;
        cand = xasprintf("%s/%s", dirs[i], path);
        if (stat(cand, &st) == 0)
            return cand;
        free(cand);
    }
    return NULL;
}

/* ---- paths ------------------------------------------------------------------------------- */

/* Lexically normalize "a/./b/../c" to "a/c" (leading ".." kept), into the arena. */
static char *clean_path(struct arena *a, const char *path)
{
    size_t n = strlen(path);
    char *out = arena_alloc(a, n + 2);
    size_t len = 0, keep = 0; /* keep: bytes of leading "/" and "../" that cannot be popped */
    const char *p = path;

    if (*p == '/') {
        out[len++] = '/';
        keep = 1;
    }
    while (*p) {
        const char *q = p;
        size_t c;

        while (*q && *q != '/')
            q++;
        c = (size_t)(q - p);
        if (c == 0 || (c == 1 && p[0] == '.')) {
            /* skip */
        } else if (c == 2 && p[0] == '.' && p[1] == '.' && len > keep) {
            while (len > keep && out[len - 1] != '/')
                len--;
            if (len > keep)
                len--;
            else if (len == keep && keep > 0 && out[len - 1] != '/')
                len = keep;
        } else {
            if (len > 0 && out[len - 1] != '/')
                out[len++] = '/';
            memcpy(out + len, p, c);
            len += c;
            if (c == 2 && p[0] == '.' && p[1] == '.')
                keep = len;
        }
        p = *q ? q + 1 : q;
    }
    if (len == 0)
        out[len++] = '.';
    out[len] = '\0';
    return out;
}

static char *dir_of(struct arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    char *d;

    if (!slash)
        return arena_strdup(a, ".");
    if (slash == path)
        return arena_strdup(a, "/");
    d = arena_alloc(a, (size_t)(slash - path) + 1);
    memcpy(d, path, (size_t)(slash - path));
    return d;
}

static char *join(struct arena *a, const char *dir, const char *rest)
{
    char *tmp = xasprintf("%s/%s", dir, rest);
    char *r = clean_path(a, tmp);

    free(tmp);
    return r;
}

/* "dir/dgx-h100.yaml" -> "dgx-h100" */
char *cfg_stem(struct arena *a, const char *path)
{
    const char *b = strrchr(path, '/');
    size_t n;
    char *s;

    b = b ? b + 1 : path;
    n = strlen(b);
    if (n > 5 && strcmp(b + n - 5, ".yaml") == 0)
        n -= 5;
    else if (n > 4 && strcmp(b + n - 4, ".yml") == 0)
        n -= 4;
    s = arena_alloc(a, n + 1);
    memcpy(s, b, n);
    return s;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool valid_name(const char *s)
{
    if (!*s || *s == '.' || *s == '-')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.' || *s == '+'))
            return false;
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The closest YAML stem in the searched directories, for "did you mean". */
static const char *suggest_file(struct arena *a, char **dirs, int ndirs, const char *name)
{
    const char *stems[256];
    size_t n = 0;

    for (int i = 0; i < ndirs; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;

        while (d && (e = readdir(d)) && n < ARRAY_LEN(stems))
            if (e->d_name[0] != '.' && ends_with(e->d_name, ".yaml"))
                stems[n++] = cfg_stem(a, e->d_name);
        if (d)
            closedir(d);
    }
    qsort(stems, n, sizeof(stems[0]), cmp_str);
    return diag_did_you_mean(name, stems, n);
}

/* A name of the shipped library for a message about `subdir`'s references. */
static const char *library_example(const char *subdir)
{
    if (strcmp(subdir, "hardware") == 0)
        return "dgx-h100";
    if (strcmp(subdir, "workloads") == 0)
        return "llama3-70b";
    if (strcmp(subdir, "hardware/calibration") == 0)
        return "dgx-h100";
    return "megatron";
}

/* See schema.h. */
int cfg_resolve(struct schema_ctx *c, const char *what, const char *subdir, const char *ref,
                struct diag_mark at, const char *from, struct cfg_found *out)
{
    /* A path typed on the command line is relative to the working directory. */
    const char *path_from = at.src && strcmp(at.src->path, CMDLINE) == 0 ? NULL : from;
    /* written by a client of simtrain serve: a name of the library, nothing else */
    bool posted =
        c->library_only && (!at.src || at.src == c->posted || strcmp(at.src->path, CMDLINE) == 0);
    char *tried[3], *dirs[3];
    int ntried = 0;
    const char *env = getenv("SIMTRAIN_DATA");
    char q[80];
    struct strbuf sb;

    diag_clip(q, sizeof(q), ref, strlen(ref));
    if (!*ref) {
        schema_error(c, at, "empty %s reference", what);
        return -1;
    }
    if (posted && (strchr(ref, '/') || ends_with(ref, ".yaml") || ends_with(ref, ".yml") ||
                   !valid_name(ref))) {
        schema_error(c, at,
                     "a posted scenario names shipped %s by name (e.g. '%s'), not a file: '%s' "
                     "is not a name of the library",
                     what, library_example(subdir), q);
        return -1;
    }
    if (strchr(ref, '/') || ends_with(ref, ".yaml") || ends_with(ref, ".yml")) {
        const char *path = ref[0] == '/' || !path_from ? clean_path(c->a, ref)
                                                       : join(c->a, dir_of(c->a, path_from), ref);
        const char *why;

        out->text = cfg_read_file(path, &out->len, &why);
        if (!out->text) {
            schema_error(c, at, "cannot read %s file '%s': %s", what, path, why);
            return -1;
        }
        out->path = path;
        return 0;
    }
    if (!valid_name(ref)) {
        schema_error(c, at,
                     "invalid %s name '%s' (expected a name like 'dgx-h100' or a path ending in "
                     ".yaml)",
                     what, q);
        return -1;
    }
    if (from && !posted) {
        char *up = xasprintf("../%s", subdir);

        dirs[ntried++] = join(c->a, dir_of(c->a, from), up);
        free(up);
    }
    if (env && *env)
        dirs[ntried++] = join(c->a, env, subdir);
    dirs[ntried++] = join(c->a, cfg_data_dir(), subdir);
    for (int i = 0; i < ntried; i++) {
        char *file = xasprintf("%s.yaml", ref);
        const char *why;

        tried[i] = join(c->a, dirs[i], file);
        free(file);
        out->text = cfg_read_file(tried[i], &out->len, &why);
        if (out->text) {
            out->path = tried[i];
            return 0;
        }
    }
    {
        const char *best = suggest_file(c->a, dirs, ntried, ref);

        if (best)
            schema_error(c, at, "%s '%s' not found (did you mean '%s'?)", what, q, best);
        else
            schema_error(c, at, "%s '%s' not found", what, q);
    }
    sb_init(&sb);
    for (int i = 0; i < ntried; i++)
        sb_addf(&sb, "%s%s", i ? ", " : "", tried[i]);
    if (c->diag && c->errors <= SCHEMA_MAX_ERRORS && !posted)
        diag_note(c->diag, (struct diag_mark){ NULL, 0, 0 }, "tried %s", sb.buf);
    sb_release(&sb);
    return -1;
}
