/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Cost of one 8 B collective call, repeated with the same arguments:
 *
 *     start_cost [COLL [MODE [N]]]
 *
 * COLL: allreduce (default), bcast, reduce, barrier, allgather or
 * alltoall (root 0, one double per rank).  MODE: persistent (MPI_Start + MPI_Wait of one request made
 * by MPIX_<Coll>_init, default), nonblocking (MPI_I<coll> + MPI_Wait) or
 * blocking (MPI_<Coll>: tuned's, the peer a nonblocking call is held to).  After 100 untimed calls, N (default 1000) calls run
 * between CALLGRIND_START/STOP_INSTRUMENTATION, so that valgrind
 * --tool=callgrind --instr-atstart=no on one rank counts their
 * instructions alone (run-callgrind.sh); rank 0 then prints the time per
 * call in ns (meaningful without valgrind, e.g. N = 200000).
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

enum { ALLREDUCE, BCAST, REDUCE, BARRIER, ALLGATHER, ALLTOALL };

enum { PERSISTENT, NONBLOCKING, BLOCKING };

static void call(int coll, int mode, MPI_Request *req, double *s, double *r)
{
    if (BLOCKING == mode) {
        switch (coll) {
        case BCAST: MPI_Bcast(r, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
        case REDUCE: MPI_Reduce(s, r, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
        case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
        case ALLGATHER: MPI_Allgather(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, MPI_COMM_WORLD); break;
        case ALLTOALL: MPI_Alltoall(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, MPI_COMM_WORLD); break;
        default: MPI_Allreduce(s, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
        }
        return;
    }
    if (NONBLOCKING == mode) {
        switch (coll) {
        case BCAST: MPI_Ibcast(r, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, req); break;
        case REDUCE: MPI_Ireduce(s, r, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, req); break;
        case BARRIER: MPI_Ibarrier(MPI_COMM_WORLD, req); break;
        case ALLGATHER:
            MPI_Iallgather(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, MPI_COMM_WORLD, req);
            break;
        case ALLTOALL:
            MPI_Ialltoall(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, MPI_COMM_WORLD, req);
            break;
        default: MPI_Iallreduce(s, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, req); break;
        }
    } else {
        MPI_Start(req);
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    double s[64] = { 1 }, r[64] = { 0 };
    MPI_Request req = MPI_REQUEST_NULL;
    const char *name = argc > 1 ? argv[1] : "allreduce";
    const char *mode_name = argc > 2 ? argv[2] : "persistent";
    const int mode = 0 == strcmp(mode_name, "nonblocking") ? NONBLOCKING
                     : 0 == strcmp(mode_name, "blocking")  ? BLOCKING
                                                           : PERSISTENT;
    const int n = argc > 3 ? atoi(argv[3]) : 1000;
    const int coll = 0 == strcmp(name, "bcast")     ? BCAST
                     : 0 == strcmp(name, "reduce")  ? REDUCE
                     : 0 == strcmp(name, "barrier") ? BARRIER
                     : 0 == strcmp(name, "allgather") ? ALLGATHER
                     : 0 == strcmp(name, "alltoall")  ? ALLTOALL
                                                      : ALLREDUCE;
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (PERSISTENT == mode) {
        switch (coll) {
        case BCAST: MPIX_Bcast_init(r, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req); break;
        case REDUCE:
            MPIX_Reduce_init(s, r, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
            break;
        case BARRIER: MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req); break;
        case ALLGATHER:
            MPIX_Allgather_init(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req);
            break;
        case ALLTOALL:
            MPIX_Alltoall_init(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &req);
            break;
        default:
            MPIX_Allreduce_init(s, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
            break;
        }
    }
    for (int i = 0; i < 100; i++) {
        call(coll, mode, &req, s, r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = MPI_Wtime();
    CALLGRIND_START_INSTRUMENTATION;
    for (int i = 0; i < n; i++) {
        call(coll, mode, &req, s, r);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    const double dt = MPI_Wtime() - t;
    if (0 == rank) {
        printf("%s %s %.1f ns per call\n", name, mode_name, dt / n * 1e9);
    }
    if (PERSISTENT == mode) {
        MPI_Request_free(&req);
    }
    MPI_Finalize();
    return 0;
}
