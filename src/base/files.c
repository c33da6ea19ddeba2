/*
 * files.c - inputs read and noted, outputs checked (files.h).
 */
#define _POSIX_C_SOURCE 200809L /* fileno(), mkdir() */

#include "base/files.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/util.h"

struct input {
    dev_t dev;
    ino_t ino;
    char *path; /* as it was read */
};

/* The inputs read so far: shared by the threads of `simtrain serve`, so behind a lock. */
static struct input *inputs;
static size_t ninputs, cap_inputs;
static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;

static void note(const char *path, const struct stat *st)
{
    pthread_mutex_lock(&inputs_lock);
    for (size_t i = 0; i < ninputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino) {
            pthread_mutex_unlock(&inputs_lock);
            return;
        }
    grow_array((void **)&inputs, &cap_inputs, ninputs + 1, sizeof(*inputs));
    inputs[ninputs].dev = st->st_dev;
    inputs[ninputs].ino = st->st_ino;
    inputs[ninputs].path = xstrdup(path);
    ninputs++;
    pthread_mutex_unlock(&inputs_lock);
}

void files_note_input(const char *path)
{
    struct stat st;

    if (stat(path, &st) == 0)
        note(path, &st);
}

char *files_read_input(const char *path, size_t max_bytes, size_t *len, const char **why)
{
    static _Thread_local char too_big[64];
    struct stat st;
    char *text;

    if (stat(path, &st) != 0) {
        *why = strerror(errno);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        return NULL;
    }
    if ((unsigned long long)st.st_size > max_bytes) {
        snprintf(too_big, sizeof(too_big), "larger than %zu MiB", max_bytes >> 20);
        *why = too_big;
        return NULL;
    }
    text = read_file(path, len);
    if (!text) {
        *why = strerror(errno);
        return NULL;
    }
    note(path, &st);
    return text;
}

static const char *input_of(const struct stat *st)
{
    const char *path = NULL;

    if (!S_ISREG(st->st_mode))
        return NULL; /* devices (/dev/null, /dev/stdout) and pipes are not files to destroy */
    pthread_mutex_lock(&inputs_lock);
    for (size_t i = 0; i < ninputs && !path; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
            path = inputs[i].path; /* never freed: the list lives as long as the process */
    pthread_mutex_unlock(&inputs_lock);
    return path;
}

const char *files_input_at(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? input_of(&st) : NULL;
}

const char *files_input_fd(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 ? input_of(&st) : NULL;
}

static char *parent_of(const char *dir);

/* Is the directory `path` would go in missing? Then true, with the message. */
static bool missing_parent(const char *path, char *msg, size_t msglen)
{
    char *parent = parent_of(path);
    struct stat st;
    bool missing = stat(parent, &st) != 0 || !S_ISDIR(st.st_mode);

    if (missing)
        snprintf(msg, msglen, "cannot write '%s': its directory '%s' does not exist", path, parent);
    free(parent);
    return missing;
}

int files_check_output(const char *path, char *msg, size_t msglen)
{
    bool is_stdout = strcmp(path, "-") == 0;
    const char *in = is_stdout ? files_input_fd(fileno(stdout)) : files_input_at(path);
    struct stat st;

    if (!path[0])
        snprintf(msg, msglen,
                 "an empty output path names no file (give a path, or '-' for "
                 "standard output)");
    else if (in && is_stdout)
        snprintf(msg, msglen,
                 "refusing to write to standard output: it is '%s', an input of this run", in);
    else if (in && strcmp(in, path) == 0)
        snprintf(msg, msglen, "refusing to write '%s': it is an input of this run", path);
    else if (in)
        snprintf(msg, msglen, "refusing to write '%s': it is '%s', an input of this run", path, in);
    else if (!is_stdout && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(msg, msglen, "cannot write '%s': it is a directory", path);
    else if (!is_stdout && missing_parent(path, msg, msglen))
        ; /* found before any simulation, not after it */
    else
        return 0;
    return -1;
}

FILE *files_open_output(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    if (files_input_at(path)) {
        errno = EEXIST;
        return NULL;
    }
    return fopen(path, "w");
}

int files_close_output(FILE *f)
{
    int seen = errno; /* after a failed write, usually why it failed */
    int err = 0, rc = 0;

    if (fflush(f) != 0) {
        err = errno;
        rc = -1;
    }
    if (ferror(f)) {
        err = err ? err : seen;
        rc = -1;
    }
    if (f != stdout && fclose(f) != 0) {
        err = err ? err : errno;
        rc = -1;
    }
    if (rc != 0)
        errno = err ? err : EIO;
    return rc;
}

/* The directory that holds `dir` ("out" -> ".", "/x" -> "/", "a/b/" -> "a"); heap string. */
static char *parent_of(const char *dir)
{
    size_t n = strlen(dir);
    char *p, *slash;

    while (n > 1 && dir[n - 1] == '/')
        n--;
    p = xstrndup(dir, n);
    slash = strrchr(p, '/');
    if (!slash) {
        free(p);
        return xstrdup(".");
    }
    while (slash > p && slash[-1] == '/')
        slash--;
    slash[slash == p ? 1 : 0] = '\0';
    return p;
}

int files_check_dir(const char *dir, char *msg, size_t msglen)
{
    struct stat st;
    char *parent;
    int rc = 0;

    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        snprintf(msg, msglen, "cannot create directory '%s': a file of that name exists", dir);
        return -1;
    }
    parent = parent_of(dir);
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, msglen, "cannot create directory '%s': its parent '%s' does not exist", dir,
                 parent);
        rc = -1;
    }
    free(parent);
    return rc;
}

int files_make_dir(const char *dir, char *msg, size_t msglen)
{
    struct stat st;

    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    if (files_check_dir(dir, msg, msglen) != 0)
        return -1;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(msg, msglen, "cannot create directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}
