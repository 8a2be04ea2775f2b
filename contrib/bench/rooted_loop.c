/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * rooted_loop: where a loop of rooted calls spends its processes' time.
 * N times MPI_I<coll> + MPI_Wait (n), MPI_Start + MPI_Wait of one
 * persistent request (p) or the blocking call (b), root 0, on
 * MPI_COMM_WORLD, after a tenth as many untimed.  Rank 0 prints the time
 * per call, then for each rank its user and system CPU time per call and
 * its voluntary and involuntary context switches per call (getrusage).
 * Oversubscribed (more ranks than cores, mpi_yield_when_idle 1), a rank
 * that polls in vain yields the CPU: system time and context switches
 * show how often (docs/nbc-rings.md).  On x86-64 each rank also says how
 * many time-stamp-counter ticks a call spent in the call itself and in
 * MPI_Wait: a rank that never waits sets the pace.  SPIN makes one rank
 * count to SPINS after each call (before its wait): the rank whose
 * extra work does not lengthen the loop had that much slack.
 *
 * Usage: rooted_loop n|p|b bcast|reduce|gather [N [BYTES [ROOT [RANK:SPINS]]]]
 *        (default N 200000, BYTES 8, ROOT 0; BYTES per rank, a multiple of 8)
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#define TICKS() __rdtsc()
#else
#define TICKS() 0ULL
#endif

enum { BCAST, REDUCE, GATHER };

static double usec(struct timeval t)
{
    return t.tv_sec * 1e6 + t.tv_usec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || !strchr("npb", argv[1][0])) {
        if (0 == rank) {
            fprintf(stderr, "usage: rooted_loop n|p|b bcast|reduce|gather [N [BYTES]]\n");
        }
        MPI_Finalize();
        return 1;
    }
    const char mode = argv[1][0];
    const int coll = !strcmp(argv[2], "bcast") ? BCAST : !strcmp(argv[2], "reduce") ? REDUCE
                                                                                    : GATHER;
    const int n = (argc > 3) ? atoi(argv[3]) : 200000;
    const int count = ((argc > 4) ? atoi(argv[4]) : 8) / 8;
    const int root = (argc > 5) ? atoi(argv[5]) % np : 0;
    const int spin_rank = (argc > 6) ? atoi(argv[6]) : -1;
    const char *colon = (argc > 6) ? strchr(argv[6], ':') : NULL;
    const long spins = (NULL != colon) ? atol(colon + 1) : 0;
    volatile long sink = 0;
    double *sbuf = calloc((size_t) count, sizeof(double));
    double *rbuf = calloc((size_t) count * np, sizeof(double));
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;

    if ('p' == mode) {
        if (BCAST == coll) {
            MPIX_Bcast_init(sbuf, count, MPI_DOUBLE, root, w, MPI_INFO_NULL, &req);
        } else if (REDUCE == coll) {
            MPIX_Reduce_init(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, root, w, MPI_INFO_NULL, &req);
        } else {
            MPIX_Gather_init(sbuf, count, MPI_DOUBLE, rbuf, count, MPI_DOUBLE, root, w,
                             MPI_INFO_NULL, &req);
        }
    }
    for (int pass = 0; pass < 2; ++pass) {
        const int iters = pass ? n : n / 10;
        struct rusage r0, r1;
        MPI_Barrier(w);
        getrusage(RUSAGE_SELF, &r0);
        const double t0 = MPI_Wtime();
        unsigned long long in_call = 0, in_wait = 0;
        for (int i = 0; i < iters; ++i) {
            const unsigned long long k0 = TICKS();
            if ('p' == mode) {
                MPI_Start(&req);
            } else if (BCAST == coll) {
                if ('n' == mode) MPI_Ibcast(sbuf, count, MPI_DOUBLE, root, w, &req);
                else MPI_Bcast(sbuf, count, MPI_DOUBLE, root, w);
            } else if (REDUCE == coll) {
                if ('n' == mode) MPI_Ireduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, root, w, &req);
                else MPI_Reduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, root, w);
            } else {
                if ('n' == mode) MPI_Igather(sbuf, count, MPI_DOUBLE, rbuf, count, MPI_DOUBLE,
                                             root, w, &req);
                else MPI_Gather(sbuf, count, MPI_DOUBLE, rbuf, count, MPI_DOUBLE, root, w);
            }
            const unsigned long long k1 = TICKS();
            if (rank == spin_rank) {
                for (long k = 0; k < spins; ++k) {
                    sink = sink + 1;
                }
            }
            const unsigned long long k2 = TICKS();
            if ('b' != mode) {
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            in_call += k1 - k0;
            in_wait += TICKS() - k2;
        }
        const double t = MPI_Wtime() - t0;
        getrusage(RUSAGE_SELF, &r1);
        if (0 == pass) {
            continue;
        }
        double mine[6] = { (usec(r1.ru_utime) - usec(r0.ru_utime)) / n,
                           (usec(r1.ru_stime) - usec(r0.ru_stime)) / n,
                           (double) (r1.ru_nvcsw - r0.ru_nvcsw) / n,
                           (double) (r1.ru_nivcsw - r0.ru_nivcsw) / n,
                           (double) in_call / n, (double) in_wait / n };
        double *all = malloc(6 * sizeof(double) * np), tmax;
        MPI_Gather(mine, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, 0, w);
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, w);
        if (0 == rank) {
            printf("%c %s %d B root %d: %.3f us/call", mode, argv[2], 8 * count, root,
                   tmax / n * 1e6);
            for (int k = 0; k < np; ++k) {
                const double *a = &all[6 * k];
                printf(" | rank %d: user %.2f sys %.2f us, csw %.3f + %.3f", k, a[0], a[1], a[2],
                       a[3]);
                if (TICKS() != 0) {
                    printf(", ticks in call %.0f, in wait %.0f", a[4], a[5]);
                }
            }
            printf("\n");
        }
        free(all);
    }
    if ('p' == mode) {
        MPI_Request_free(&req);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
