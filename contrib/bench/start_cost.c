/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Instructions per MPI_Start + MPI_Wait of a persistent collective, for
 * valgrind --tool=callgrind on one rank (see run-callgrind.sh): only the
 * 1000 timed iterations are instrumented.  Argument: allreduce (8 B,
 * default), bcast (8 B) or barrier.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <string.h>
#include <valgrind/callgrind.h>

int main(int argc, char **argv)
{
    double s[1] = { 1 }, r[1];
    MPI_Request req;
    const char *coll = argc > 1 ? argv[1] : "allreduce";

    MPI_Init(&argc, &argv);
    if (0 == strcmp(coll, "bcast")) {
        MPIX_Bcast_init(r, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    } else if (0 == strcmp(coll, "barrier")) {
        MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    } else {
        MPIX_Allreduce_init(s, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    }
    for (int i = 0; i < 100; i++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CALLGRIND_START_INSTRUMENTATION;
    for (int i = 0; i < 1000; i++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    MPI_Request_free(&req);
    MPI_Finalize();
    return 0;
}
