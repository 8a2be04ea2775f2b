/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * many_bench: the cost of many live persistent requests, as an
 * application that keeps one per field sees it.  N allreduce requests of
 * `bytes` each (MPI_SUM of MPI_INT on distinct buffers) are created, then
 * started together (MPI_Startall) and completed together (MPI_Waitall):
 * one first round, then `rounds` timed rounds, then a late round; then
 * freed.  Every round's results are checked (element i of request r on
 * rank p holds p + r + i + round; the sum is computed locally).
 *
 * The late round measures what progress costs while the N requests wait:
 * every rank but 0 starts them, then calls MPI_Test on an unrelated
 * MPI_Irecv (each call runs the progress engine once) 2 x IDLE_TESTS
 * times -- the second batch timed, the first lets what the start set in
 * motion settle -- and only then lets rank 0 start.
 *
 * With `nb` the same rounds call MPI_Iallreduce N times instead (the same
 * N argument sets every round, all outstanding until one MPI_Waitall): a
 * nonblocking library that caches schedules serves the first round from
 * misses and the others from its cache; init, free and the late round
 * are then 0.
 *
 * Usage: many_bench N BYTES [ROUNDS [nb]]      (ROUNDS default 19)
 * Prints one line (rank 0), times the maximum over ranks:
 *   N,bytes,np,init_s,first_s,rounds_s,free_s,maxrss_kb,idle_test_s,ok
 * idle_test_s: one MPI_Test of the late round (np=1: 0).
 * maxrss_kb: the largest ru_maxrss of the ranks (after the free).
 * Builds with Open MPI 4.1 (<mpi-ext.h> MPIX_Allreduce_init), Open MPI 5.0
 * and MPICH (-DMANY_BENCH_MPI4 or OMPI_MAJOR_VERSION >= 5: MPI_Allreduce_init).
 */
#include <mpi.h>
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5 && !defined(MANY_BENCH_MPI4)
#define MANY_BENCH_MPI4 1
#endif
#ifndef MANY_BENCH_MPI4
#include <mpi-ext.h>
#define ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int fill(int *send, int count, int rank, int r, int round)
{
    for (int i = 0; i < count; ++i) {
        send[i] = rank + r + i + round;
    }
    return 0;
}

static int check(const int *recv, int count, int np, int r, int round)
{
    /* sum over p of (p + r + i + round) */
    const long base = (long) np * (np - 1) / 2;
    for (int i = 0; i < count; ++i) {
        if (recv[i] != (int) (base + (long) np * (r + i + round))) {
            return 1;
        }
    }
    return 0;
}

#define IDLE_TESTS 2000

/* The late round (see above): the mean time of one MPI_Test while the
 * requests wait for rank 0 (0 on rank 0). */
static double late_round(int n, MPI_Request *req, int rank, int np)
{
    int tok = 0, flag;
    double t = 0.0;
    MPI_Request x;
    if (0 != rank) {
        MPI_Startall(n, req);
        MPI_Irecv(&tok, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &x);
        for (int k = 0; k < IDLE_TESTS; ++k) {
            MPI_Test(&x, &flag, MPI_STATUS_IGNORE);
        }
        const double t0 = MPI_Wtime();
        for (int k = 0; k < IDLE_TESTS; ++k) {
            MPI_Test(&x, &flag, MPI_STATUS_IGNORE);
        }
        t = (MPI_Wtime() - t0) / IDLE_TESTS;
        MPI_Send(&tok, 1, MPI_INT, 0, 98, MPI_COMM_WORLD);
        MPI_Wait(&x, MPI_STATUS_IGNORE);
    } else {
        for (int p = 1; p < np; ++p) {
            MPI_Recv(&tok, 1, MPI_INT, p, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (int p = 1; p < np; ++p) {
            MPI_Send(&tok, 1, MPI_INT, p, 99, MPI_COMM_WORLD);
        }
        MPI_Startall(n, req);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return t;
}

static double max_over_ranks(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3) {
        if (0 == rank) {
            fprintf(stderr, "usage: many_bench N BYTES [ROUNDS [nb]]\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int n = atoi(argv[1]);
    const int count = (int) (atol(argv[2]) / (long) sizeof(int));
    const int rounds = (argc > 3) ? atoi(argv[3]) : 19;
    const int nb = (argc > 4) && 0 == strcmp(argv[4], "nb");
    const size_t stride = (count > 0) ? (size_t) count : 1;
    int *send = malloc((size_t) n * stride * sizeof(int));
    int *recv = malloc((size_t) n * stride * sizeof(int));
    MPI_Request *req = malloc((size_t) n * sizeof(MPI_Request));
    int bad = (NULL == send || NULL == recv || NULL == req);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < n; ++r) {
        req[r] = MPI_REQUEST_NULL;
    }
    for (int r = 0; r < n && !bad && !nb; ++r) {
        bad |= MPI_SUCCESS != ALLREDUCE_INIT(send + (size_t) r * stride, recv + (size_t) r * stride,
                                             count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                             &req[r]);
    }
    const double init = MPI_Wtime() - t0;
    double first = 0.0, steady = 0.0;
    for (int round = 0; round <= rounds && !bad; ++round) {
        for (int r = 0; r < n; ++r) {
            fill(send + (size_t) r * stride, count, rank, r, round);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (nb) {
            for (int r = 0; r < n; ++r) {
                bad |= MPI_SUCCESS != MPI_Iallreduce(send + (size_t) r * stride,
                                                     recv + (size_t) r * stride, count, MPI_INT,
                                                     MPI_SUM, MPI_COMM_WORLD, &req[r]);
            }
        } else {
            bad |= MPI_SUCCESS != MPI_Startall(n, req);
        }
        bad |= MPI_SUCCESS != MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        const double t = MPI_Wtime() - t0;
        if (0 == round) {
            first = t;
        } else {
            steady += t;
        }
        for (int r = 0; r < n && !bad; ++r) {
            bad |= check(recv + (size_t) r * stride, count, np, r, round);
        }
    }
    double idle = 0.0;
    if (!bad && !nb) {
        for (int r = 0; r < n; ++r) {
            fill(send + (size_t) r * stride, count, rank, r, rounds + 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        idle = late_round(n, req, rank, np);
        for (int r = 0; r < n && !bad; ++r) {
            bad |= check(recv + (size_t) r * stride, count, np, r, rounds + 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int r = 0; r < n; ++r) {
        if (MPI_REQUEST_NULL != req[r]) {
            MPI_Request_free(&req[r]);
        }
    }
    const double freet = MPI_Wtime() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long rss = ru.ru_maxrss, maxrss;
    MPI_Reduce(&rss, &maxrss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    const double mi = max_over_ranks(init), mf = max_over_ranks(first);
    const double ms = max_over_ranks(steady), mfr = max_over_ranks(freet);
    const double mid = max_over_ranks(idle);
    if (0 == rank) {
        printf("%d,%ld,%d,%.6f,%.6f,%.6f,%.6f,%ld,%.9f,%s\n", n,
               (long) count * (long) sizeof(int), np, mi, mf, ms, mfr, maxrss, mid,
               anybad ? "BAD" : "ok");
    }
    free(send);
    free(recv);
    free(req);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
