/*
 * mpi_sweep.c - one sweep across MPI ranks (sweep.h, sweep_run_mpi()). The
 * MPI side lives in the module libsimtrain_mpi (src/mpi/mpi_module.c), built
 * where CMake finds MPI (option SIMTRAIN_MPI, OpenMPI from Debian:
 * libopenmpi-dev) and loaded here only for --mpi, so no other run loads
 * libmpi (installed under lib/simtrain of the prefix, base/paths.h). Without
 * it the function reports that MPI is absent.
 */
#define _GNU_SOURCE /* RTLD_GLOBAL */

#include "whatif/sweep.h"

#include <stdio.h>
#include <string.h>

#ifdef SIMTRAIN_HAVE_MPI
#include <dlfcn.h>

#include "base/paths.h"
#include "mpi/mpi_module.h"

struct shard_ctx {
    const struct sweep *sw;
    struct sweep_point *pts;
};

static void run_shard(void *ctx, int rank, int size)
{
    const struct shard_ctx *c = ctx;

    sweep_run(c->sw, rank, size, c->pts, NULL);
}

/*
 * The module: in the build tree or the install tree, as the executable is
 * (base/paths.h). RTLD_GLOBAL, as OpenMPI's own components expect libmpi's
 * symbols to be global when an application loads it at run time.
 */
static void *load_module(char *msg, size_t msglen)
{
    const char *path = paths_mpi_module();
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;

    if (!h)
        snprintf(msg, msglen, "cannot load the MPI module (%s): %s", path ? path : "?",
                 path ? dlerror() : "no path");
    return h;
}

int sweep_run_mpi(const struct sweep *sw, struct sweep_point *pts, char *msg, size_t msglen)
{
    struct shard_ctx ctx = { sw, pts };
    struct simtrain_mpi_job job = { pts, sw->npoints, sizeof(*pts), run_shard, &ctx };
    simtrain_mpi_sweep_fn fn;
    void *h = load_module(msg, msglen);

    if (!h)
        return -1;
    *(void **)&fn = dlsym(h, SIMTRAIN_MPI_SWEEP_SYMBOL);
    if (!fn) {
        snprintf(msg, msglen, "the MPI module has no %s", SIMTRAIN_MPI_SWEEP_SYMBOL);
        return -1;
    }
    return fn(&job, msg, msglen);
}

#else

int sweep_run_mpi(const struct sweep *sw, struct sweep_point *pts, char *msg, size_t msglen)
{
    (void)sw;
    (void)pts;
    snprintf(msg, msglen,
             "this simtrain was built without MPI (install libopenmpi-dev and "
             "rebuild with -DSIMTRAIN_MPI=ON), use --shard K/N instead");
    return -1;
}

#endif
