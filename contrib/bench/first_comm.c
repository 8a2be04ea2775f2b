/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * first_comm: what a new communicator and its first nonblocking call cost.
 * N times: MPI_Comm_dup of MPI_COMM_WORLD (timed after a barrier: the
 * coll components' selection and set-up), a barrier on it, then the time of
 * one MPI_Iallreduce + MPI_Wait of one int on it (its first call) and,
 * after another barrier, of the same call again (a cached schedule's).
 * Times are the maximum over the ranks; rank 0 prints the median and the
 * minimum over the N communicators, and its minor page faults per first
 * call (docs/many/first-start.md, "A new communicator's first call"), and
 * the median time of the MPI_Comm_dup.
 *
 * Usage: first_comm [N]      (default 100)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench_util.h"

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* One MPI_Iallreduce + MPI_Wait on comm, after a barrier: seconds. */
static double one_call(MPI_Comm comm)
{
    int s = 1, r = 0;
    MPI_Request req;
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    MPI_Iallreduce(&s, &r, 1, MPI_INT, MPI_SUM, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int n = (argc > 1) ? atoi(argv[1]) : 100;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm *comms = malloc((size_t) n * sizeof(*comms));
    double *first = malloc((size_t) n * sizeof(*first)), *again = malloc((size_t) n * sizeof(*again));
    double *dup = malloc((size_t) n * sizeof(*dup));
    if (n < 1 || NULL == comms || NULL == first || NULL == again || NULL == dup) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long faults = 0;
    for (int i = 0; i < n; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        dup[i] = MPI_Wtime() - t0;
        const long f0 = minor_faults();
        first[i] = one_call(comms[i]);
        faults += minor_faults() - f0;
        again[i] = one_call(comms[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, first, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, again, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, dup, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(first, (size_t) n, sizeof(*first), bench_cmp_double);
    qsort(again, (size_t) n, sizeof(*again), bench_cmp_double);
    qsort(dup, (size_t) n, sizeof(*dup), bench_cmp_double);
    if (0 == rank) {
        printf("first call on a new communicator: median %.1f us, min %.1f us, "
               "%.2f page faults (rank 0); second call: median %.1f us; "
               "MPI_Comm_dup: median %.1f us\n",
               first[n / 2] * 1e6, first[0] * 1e6, (double) faults / n, again[n / 2] * 1e6,
               dup[n / 2] * 1e6);
    }
    for (int i = 0; i < n; ++i) {
        MPI_Comm_free(&comms[i]);
    }
    free(comms);
    free(first);
    free(again);
    free(dup);
    MPI_Finalize();
    return 0;
}
