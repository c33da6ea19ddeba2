/*
 * mpi_module.h - the interface of libsimtrain_mpi, the MPI part of `simtrain
 * sweep --mpi`, built as a module of its own (mpi_module.c) and loaded only
 * when --mpi is given (mpi_sweep.c), so that every other run of simtrain
 * starts without loading libmpi and its dependencies (2.3 ms of the
 * flagship's run on the development VM: docs/performance.md).
 */
#ifndef SIMTRAIN_MPI_MODULE_H
#define SIMTRAIN_MPI_MODULE_H

#include <stddef.h>

/* One sweep's points as bytes; run() evaluates shard `rank` of `size` into them. */
struct simtrain_mpi_job {
    void *points; /* npoints records of point_size bytes */
    long npoints;
    size_t point_size;
    void (*run)(void *ctx, int rank, int size);
    void *ctx;
};

/*
 * Initialise MPI (unless it is), run shard rank of size, send the shard's
 * records to rank 0, which receives every other rank's into job->points;
 * finalise what it initialised. Returns 1 on rank 0, 0 on the others, -1
 * with a message in msg.
 */
typedef int (*simtrain_mpi_sweep_fn)(const struct simtrain_mpi_job *job, char *msg, size_t msglen);

#define SIMTRAIN_MPI_SWEEP_SYMBOL "simtrain_mpi_sweep"

#endif
