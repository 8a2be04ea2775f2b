/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * first_rounds: the time of each of the first starts of one persistent
 * (or, with "n", nonblocking) allreduce, each after a barrier, as the
 * many-request benchmark's 19 timed rounds run them: the first starts
 * are where a request's boxes are touched for the first time
 * (docs/many/lockstep.md).
 *
 * Usage: first_rounds [p|n [BYTES [ROUNDS]]]     (default p 16384 40)
 * Rank 0 prints each start's time in µs (the maximum over the ranks),
 * then each rank its minor page faults per start.
 */
#include <mpi.h>
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define MPIX_Allreduce_init MPI_Allreduce_init  /* 5.0: the standard name */
#else
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int persistent = argc < 2 || 'n' != argv[1][0];
    const int count = (int) ((argc > 2 ? atol(argv[2]) : 16384) / (long) sizeof(int));
    const int rounds = argc > 3 ? atoi(argv[3]) : 40;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *s = calloc((size_t) count + 1, sizeof(int)), *r = calloc((size_t) count + 1, sizeof(int));
    double *t = calloc((size_t) rounds, sizeof(double)), *tmax = calloc((size_t) rounds, sizeof(double));
    long *faults = calloc((size_t) rounds, sizeof(long));
    if (NULL == s || NULL == r || NULL == t || NULL == tmax || NULL == faults) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (persistent) {
        MPIX_Allreduce_init(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    }
    for (int i = 0; i < rounds; ++i) {
        memset(s, i, (size_t) count * sizeof(int));
        MPI_Barrier(MPI_COMM_WORLD);
        const long f0 = minor_faults();
        const double t0 = MPI_Wtime();
        if (persistent) {
            MPI_Start(&req);
        } else {
            MPI_Iallreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        t[i] = MPI_Wtime() - t0;
        faults[i] = minor_faults() - f0;
    }
    MPI_Reduce(t, tmax, rounds, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("us:");
        for (int i = 0; i < rounds; ++i) {
            printf(" %.1f", tmax[i] * 1e6);
        }
        printf("\n");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d faults:", rank);
    for (int i = 0; i < rounds; ++i) {
        printf(" %ld", faults[i]);
    }
    printf("\n");
    if (persistent) {
        MPI_Request_free(&req);
    }
    free(s);
    free(r);
    free(t);
    free(tmax);
    free(faults);
    MPI_Finalize();
    return 0;
}
