/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * kslack_ring: a producer/consumer circular buffer on a K-slack channel
 * (pnbc's MPIX_Bind_slack_channel).
 *
 * Rank 0 produces ITEMS records of REC doubles into a ring of K slots;
 * rank 1 consumes them from its own ring of K slots.  Each side binds one
 * persistent request (MPI_Send_init / MPI_Recv_init on slot 0) into a
 * K-slack channel: the n-th start moves slot n mod K (the channel
 * advances the address itself, by address_base_increment elements -- here
 * the default, one record), and one MPI_Wait completes every start made
 * before it.  So the producer fills up to K slots, starting each as soon
 * as it is written, and waits once per K records; the consumer starts K
 * receives ahead (ready semantics: a receive is started before its
 * send) and processes the K records after one wait.  The starts are
 * MPIX_Start_slack: Open MPI 4.1.5+ and 5.0 refuse a second MPI_Start of
 * a request before its completion call (MPI_Start would do on 4.1.4 and
 * below, or with --mca mpi_param_check 0).
 *
 *   mpicc-pnbc kslack_ring.c -o kslack_ring     (or -lpnbc, see the README)
 *   mpirun -np 2 ./kslack_ring [K] [ITEMS]
 *
 * The consumer checks every record against the producer's formula and
 * the program exits non-zero on any mismatch.  Ranks beyond 1 idle.
 */
#include <mpi.h>
#include "mpiext_pnbc_c.h"      /* pnbc's MPIX_ functions */

#include <stdio.h>
#include <stdlib.h>

#define REC 64      /* doubles per record */

static double value(long item, int j)
{
    return (double) item * 1000.0 + j * 0.5;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int K = (argc > 1) ? atoi(argv[1]) : 8;
    const long items = (argc > 2) ? atol(argv[2]) : 100003;     /* not a multiple of K */
    if (size < 2 || K < 1) {
        if (0 == rank) fprintf(stderr, "kslack_ring: needs 2 processes and K >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (rank < 2) {
        double *ring = calloc((size_t) K * REC, sizeof(double));
        MPI_Request req, chan;
        if (0 == rank) {
            MPI_Send_init(ring, REC, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &req);
        } else {
            MPI_Recv_init(ring, REC, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &req);
        }
        if (MPI_SUCCESS != MPIX_Bind_slack_channel(req, &chan, K, MPI_INFO_NULL)) {
            fprintf(stderr, "kslack_ring: bind failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        long done = 0;
        while (done < items) {
            const long batch = (items - done < K) ? items - done : K;
            if (0 == rank) {                    /* producer */
                for (long n = done; n < done + batch; ++n) {
                    double *slot = ring + (n % K) * REC;
                    for (int j = 0; j < REC; ++j) slot[j] = value(n, j);
                    MPIX_Start_slack(&chan);    /* slot n mod K goes out */
                }
                MPI_Wait(&chan, MPI_STATUS_IGNORE);     /* all K slots free again */
            } else {                            /* consumer */
                for (long n = done; n < done + batch; ++n) MPIX_Start_slack(&chan);
                MPI_Wait(&chan, MPI_STATUS_IGNORE);
                for (long n = done; n < done + batch; ++n) {
                    const double *slot = ring + (n % K) * REC;
                    for (int j = 0; j < REC; ++j) bad += slot[j] != value(n, j);
                }
            }
            done += batch;
        }
        MPIX_Unbind_channel(&chan);
        MPI_Request_free(&req);
        free(ring);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s kslack_ring K=%d: %ld records of %d doubles%s\n", bad ? "FAIL" : "PASS", K, items, REC,
               bad ? ", wrong values received" : ", every value checked");
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
