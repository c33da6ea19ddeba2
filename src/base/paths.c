/*
 * paths.c - the data directory and the MPI module of the running executable
 * (paths.h).
 */
#define _DEFAULT_SOURCE /* readlink(), realpath() */

#include "base/paths.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#ifndef SIMTRAIN_DATA_DIR
#define SIMTRAIN_DATA_DIR "."
#endif
#ifndef SIMTRAIN_REL_DATA_DIR
#define SIMTRAIN_REL_DATA_DIR "../share/simtrain"
#endif
#ifndef SIMTRAIN_REL_MODULE_DIR
#define SIMTRAIN_REL_MODULE_DIR "../lib/simtrain"
#endif

static const char *argv0;
static char *exe_dir, *data_dir, *module, *http_module;
static bool exe_known, resolved;

void paths_init(const char *arg0)
{
    argv0 = arg0;
}

/* argv[0] as a file: as given when it has a slash, else the first match in $PATH. */
static char *from_argv0(void)
{
    const char *path = getenv("PATH");
    char *found = NULL;

    if (!argv0 || !*argv0)
        return NULL;
    if (strchr(argv0, '/'))
        return realpath(argv0, NULL);
    while (path && *path && !found) {
        size_t n = strcspn(path, ":");
        char *cand = xasprintf("%.*s/%s", (int)n, n ? path : ".", argv0);
        if (access(cand, X_OK) == 0)
            found = realpath(cand, NULL);
        free(cand);
        path += n + (path[n] == ':');
    }
    return found;
}

static void find_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    char *exe = NULL, *slash;

    exe_known = true;
    if (n > 0) {
        buf[n] = '\0';
        exe = xstrdup(buf);
    } else {
        exe = from_argv0();
    }
    if (!exe)
        return;
    slash = strrchr(exe, '/');
    if (slash == exe)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    exe_dir = exe;
}

const char *paths_exe_dir(void)
{
    if (!exe_known)
        find_exe();
    return exe_dir;
}

/* Whether two paths name the same directory (by device and inode). */
static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

bool paths_uninstalled(void)
{
    const char *dir = paths_exe_dir();

#ifdef SIMTRAIN_BUILD_DIR
    return !dir || same_dir(dir, SIMTRAIN_BUILD_DIR);
#else
    (void)dir;
    (void)same_dir;
    return true;
#endif
}

/* `path` with symbolic links and ".." resolved when it exists (frees path), else as it is. */
static char *clean(char *path)
{
    char *real = realpath(path, NULL);

    if (!real)
        return path;
    free(path);
    return real;
}

static void resolve(void)
{
    const char *dir = paths_exe_dir();

    resolved = true;
    if (paths_uninstalled() || !dir) {
        data_dir = xstrdup(SIMTRAIN_DATA_DIR);
#ifdef SIMTRAIN_MPI_MODULE
        module = xstrdup(SIMTRAIN_MPI_MODULE);
#endif
#ifdef SIMTRAIN_HTTP_MODULE
        http_module = xstrdup(SIMTRAIN_HTTP_MODULE);
#endif
        return;
    }
    data_dir = clean(xasprintf("%s/%s", dir, SIMTRAIN_REL_DATA_DIR));
    {
        char *mdir = clean(xasprintf("%s/%s", dir, SIMTRAIN_REL_MODULE_DIR));
#ifdef SIMTRAIN_MPI_MODULE_NAME
        module = xasprintf("%s/%s", mdir, SIMTRAIN_MPI_MODULE_NAME);
#endif
#ifdef SIMTRAIN_HTTP_MODULE_NAME
        http_module = xasprintf("%s/%s", mdir, SIMTRAIN_HTTP_MODULE_NAME);
#endif
        free(mdir);
    }
}

const char *paths_data_dir(void)
{
    if (!resolved)
        resolve();
    return data_dir;
}

const char *paths_mpi_module(void)
{
    if (!resolved)
        resolve();
    return module;
}

const char *paths_http_module(void)
{
    if (!resolved)
        resolve();
    return http_module;
}
