/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Cost of one 8 B channel transfer (np=2):
 *
 *     chan_cost [N]
 *
 * A channel each way (MPIX_Bind_channels of an MPI_Send_init and an
 * MPI_Recv_init of one double), used as a ping-pong: rank 0 starts and
 * waits for its send, then its receive; rank 1 the other way round.  After
 * 100 untimed round trips, N (default 1000) run between
 * CALLGRIND_START/STOP_INSTRUMENTATION, so that valgrind --tool=callgrind
 * --instr-atstart=no on one rank counts their instructions alone
 * (run-callgrind.sh --channel divides by 2 N: per MPI_Start + MPI_Wait).
 * Every message carries its round trip's number and is checked; rank 0
 * prints the time per round trip in ns (meaningful without valgrind).
 */
#include <mpi.h>
#include "mpiext_pnbc_c.h"

#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

static int rank;
static double sbuf, rbuf;
static MPI_Request ch[2];   /* send, receive */

/* Round trip i; returns 1 if the message received was not i's. */
static int round_trip(int i)
{
    sbuf = (double) i + 0.5 * rank;
    for (int k = 0; k < 2; ++k) {
        const int c = (0 == rank) ? k : 1 - k;
        MPI_Start(&ch[c]);
        MPI_Wait(&ch[c], MPI_STATUS_IGNORE);
    }
    return rbuf != (double) i + 0.5 * (1 - rank);
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Request in[2];
    int bad = 0, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 != size) {
        if (0 == rank) {
            fprintf(stderr, "chan_cost: run with 2 processes\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Send_init(&sbuf, 1, MPI_DOUBLE, 1 - rank, 7, MPI_COMM_WORLD, &in[0]);
    MPI_Recv_init(&rbuf, 1, MPI_DOUBLE, 1 - rank, 7, MPI_COMM_WORLD, &in[1]);
    if (MPI_SUCCESS != MPIX_Bind_channels(in, ch, 2, NULL)) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 100; i++) {
        bad += round_trip(i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = MPI_Wtime();
    CALLGRIND_START_INSTRUMENTATION;
    for (int i = 0; i < n; i++) {
        bad += round_trip(100 + i);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    const double dt = MPI_Wtime() - t;
    if (0 == rank) {
        printf("channel 8 B %.1f ns per round trip\n", dt / n * 1e9);
    }
    if (bad > 0) {
        fprintf(stderr, "chan_cost: rank %d: %d wrong messages\n", rank, bad);
    }
    MPIX_Unbind_channels(ch, 2);
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
    MPI_Finalize();
    return bad > 0;
}
