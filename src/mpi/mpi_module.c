/*
 * mpi_module.c - libsimtrain_mpi (mpi_module.h): the only file that includes
 * <mpi.h>. Rank r of size evaluates the points i with i % size == r, the same
 * split as `--shard r/size`, and sends them to rank 0. Points are plain
 * structs of one binary, so they travel as bytes.
 */
#include "mpi/mpi_module.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_POINTS 7301

int simtrain_mpi_sweep(const struct simtrain_mpi_job *job, char *msg, size_t msglen);

/* Copy the records of shard `who` of `size` between `all` and the packed `buf`. */
static void pack(const struct simtrain_mpi_job *job, char *buf, int who, int size, int to_buf)
{
    char *all = job->points;
    size_t k = 0;

    for (long i = who; i < job->npoints; i += size, k++) {
        char *rec = all + (size_t)i * job->point_size, *slot = buf + k * job->point_size;
        if (to_buf)
            memcpy(slot, rec, job->point_size);
        else
            memcpy(rec, slot, job->point_size);
    }
}

static long shard_len(long npoints, int who, int size)
{
    return npoints > who ? (npoints - who + size - 1) / size : 0;
}

/* Rank 0: receive shard src into the points. Other ranks: send their own (src = rank). */
static int exchange(const struct simtrain_mpi_job *job, int rank, int src, int size, char *msg,
                    size_t msglen)
{
    long n = shard_len(job->npoints, src, size);
    int bytes = (int)((size_t)n * job->point_size);
    char *buf = malloc(job->point_size * (size_t)(n > 0 ? n : 1));

    if (!buf) {
        snprintf(msg, msglen, "out of memory for %ld sweep points", n);
        return -1;
    }
    if (rank != 0) {
        pack(job, buf, rank, size, 1);
        MPI_Send(buf, bytes, MPI_BYTE, 0, TAG_POINTS, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, bytes, MPI_BYTE, src, TAG_POINTS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pack(job, buf, src, size, 0);
    }
    free(buf);
    return 0;
}

int simtrain_mpi_sweep(const struct simtrain_mpi_job *job, char *msg, size_t msglen)
{
    int inited = 0, rank = 0, size = 1, rc = 0;

    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(msg, msglen, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    job->run(job->ctx, rank, size);
    if (rank != 0)
        rc = exchange(job, rank, rank, size, msg, msglen);
    for (int src = 1; rank == 0 && src < size && rc == 0; src++)
        rc = exchange(job, rank, src, size, msg, msglen);
    if (rc != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (!inited)
        MPI_Finalize();
    return rank == 0 ? 1 : 0;
}
