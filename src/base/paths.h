/*
 * paths.h - where simtrain's own files are: the data directory (hardware/,
 * workloads/, scenarios/, plots/) and the MPI module, for the binary in the
 * build tree and for an installed one.
 *
 * The running executable is found through /proc/self/exe (else argv[0], as
 * given or searched in $PATH). An executable in the build directory
 * (SIMTRAIN_BUILD_DIR at build time: simtrain, the tests, the benchmarks)
 * uses the source tree's data (SIMTRAIN_DATA_DIR) and the module where the
 * build put it; any other is taken as installed by `cmake --install` and
 * uses the install layout relative to its own directory:
 * <bindir>/SIMTRAIN_REL_DATA_DIR (../share/simtrain) and
 * <bindir>/SIMTRAIN_REL_MODULE_DIR (../lib/simtrain), so an install tree can
 * be moved as a whole. `$SIMTRAIN_DATA`, where set, is searched before the
 * data directory by the callers (config/ref.c, report/plot_chart.c).
 *
 * The answers are computed once and kept for the life of the process.
 */
#ifndef SIMTRAIN_PATHS_H
#define SIMTRAIN_PATHS_H

#include <stdbool.h>

/* Remember argv[0], for systems without /proc/self/exe; call first in main() (may be NULL). */
void paths_init(const char *argv0);

/* The directory of the running executable, symbolic links resolved; NULL when unknown. */
const char *paths_exe_dir(void);

/* Whether the running executable is the build tree's (not installed). */
bool paths_uninstalled(void);

/* The data directory (never NULL; "." when nothing better is known). */
const char *paths_data_dir(void);

/* The path of the MPI module (libsimtrain_mpi.so), or NULL in a build without MPI. */
const char *paths_mpi_module(void);

/* The path of the HTTP module of `simtrain serve` (libsimtrain_http.so), or NULL. */
const char *paths_http_module(void);

#endif
