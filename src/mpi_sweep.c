/*
 * mpi_sweep.c - one sweep across MPI ranks (sweep.h, sweep_run_mpi()): rank r
 * of size evaluates the points i with i % size == r, the same split as
 * `--shard r/size`, and sends them to rank 0, which writes the outputs.
 * Points are plain structs of one binary, so they travel as bytes.
 *
 * The only file that includes <mpi.h>; built with MPI where CMake finds it
 * (option SIMTRAIN_MPI, OpenMPI from Debian: libopenmpi-dev), otherwise the
 * function reports that MPI is absent.
 */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

#ifdef SIMTRAIN_HAVE_MPI
#include <mpi.h>

#define TAG_POINTS 7301

int sweep_run_mpi(const struct sweep *sw, struct sweep_point *pts, char *msg, size_t msglen)
{
    int inited = 0, rank = 0, size = 1;
    long mine = 0;
    struct sweep_point *buf;

    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(msg, msglen, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sweep_run(sw, rank, size, pts, NULL);
    for (long i = rank; i < sw->npoints; i += size)
        mine++;
    if (rank != 0) {
        buf = xmalloc(sizeof(*buf) * (size_t)(mine > 0 ? mine : 1));
        for (long i = rank, k = 0; i < sw->npoints; i += size)
            buf[k++] = pts[i];
        MPI_Send(buf, (int)(mine * (long)sizeof(*buf)), MPI_BYTE, 0, TAG_POINTS, MPI_COMM_WORLD);
        free(buf);
    } else {
        for (int src = 1; src < size; src++) {
            long theirs = 0;
            for (long i = src; i < sw->npoints; i += size)
                theirs++;
            buf = xmalloc(sizeof(*buf) * (size_t)(theirs > 0 ? theirs : 1));
            MPI_Recv(buf, (int)(theirs * (long)sizeof(*buf)), MPI_BYTE, src, TAG_POINTS,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = src, k = 0; i < sw->npoints; i += size)
                pts[i] = buf[k++];
            free(buf);
        }
    }
    if (!inited)
        MPI_Finalize();
    return rank == 0 ? 1 : 0;
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
