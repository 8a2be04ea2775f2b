/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * first_batches: where the nonblocking benchmark's first calls spend
 * their time.  pcoll_bench measures a first call as batches of 20
 * MPI_I<coll> + MPI_Wait, each on buffers not used before (so that a
 * cache of schedules misses), each batch after a barrier.  This program
 * runs the same batches of MPI_Igather (root 0) after WARMUP calls on one
 * buffer, and reports per batch: µs per call (the maximum over the
 * ranks), and for each rank the batch's wall time, its context switches
 * (getrusage) and, on x86-64, its time-stamp-counter ticks per call
 * inside MPI_Igather and inside MPI_Wait.  Where processes outnumber
 * cores, a root that waits while its senders' calls take little time
 * waits for them to be scheduled (docs/nbc-targets.md).
 *
 * Usage: first_batches [BYTES [WARMUP [BATCHES]]]   (default 8 20000 5)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#define TICKS() __rdtsc()
#else
#define TICKS() 0ULL
#endif

#define CALLS 20    /* a batch, as pcoll_bench's first-call column runs it */
#define FIELDS 4

static long switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int bytes = (argc > 1) ? atoi(argv[1]) : 8;
    const long warmup = (argc > 2) ? atol(argv[2]) : 20000;
    const int batches = (argc > 3) ? atoi(argv[3]) : 5;
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const size_t shifts = (size_t) batches * CALLS + 1;    /* a new offset per call */
    char *s = calloc((size_t) bytes + 8 * shifts, 1);
    char *r = calloc((size_t) bytes * np + 8 * shifts, 1);
    long *all = malloc(sizeof(long) * FIELDS * (size_t) np);
    if (NULL == s || NULL == r || NULL == all || bytes < 1 || batches < 1) {
        fprintf(stderr, "first_batches: bad arguments or out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Request q;
    for (long i = 0; i < warmup; ++i) {     /* the same count on every rank */
        MPI_Igather(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    size_t used = 0;
    for (int b = 0; b < batches; ++b) {
        MPI_Barrier(MPI_COMM_WORLD);
        const long sw0 = switches();
        unsigned long long in_call = 0, in_wait = 0;
        const double t0 = MPI_Wtime();
        for (int i = 0; i < CALLS; ++i) {
            ++used;
            const unsigned long long a = TICKS();
            MPI_Igather(s + 8 * used, bytes, MPI_BYTE, r + 8 * used, bytes, MPI_BYTE, 0,
                        MPI_COMM_WORLD, &q);
            const unsigned long long m = TICKS();
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            in_call += m - a;
            in_wait += TICKS() - m;
        }
        const double wall = MPI_Wtime() - t0;
        double per_call = wall / CALLS * 1e6, per_call_max;
        MPI_Reduce(&per_call, &per_call_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        long mine[FIELDS] = { (long) (wall * 1e6), switches() - sw0, (long) (in_call / CALLS),
                              (long) (in_wait / CALLS) };
        MPI_Gather(mine, FIELDS, MPI_LONG, all, FIELDS, MPI_LONG, 0, MPI_COMM_WORLD);
        if (0 == rank) {
            printf("batch %d: %.2f us/call |", b, per_call_max);
            for (int k = 0; k < np; ++k) {
                const long *v = all + FIELDS * k;
                printf(" r%d wall %ld us, csw %ld, ticks in call %ld, in wait %ld |", k, v[0],
                       v[1], v[2], v[3]);
            }
            printf("\n");
        }
    }
    free(s);
    free(r);
    free(all);
    MPI_Finalize();
    return 0;
}
