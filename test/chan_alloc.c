/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_alloc: heap calls of channels, counted by the alloc_counter preload
 * library (LD_PRELOAD=.../alloc_counter.so, ALLOC_COUNTER_MATCH=pnbc: the
 * engine library, libpnbc and the coll component).  Pairs (2i, 2i+1).
 *
 * cycles  for 8 B, 4 KiB, 64 KiB (single copy on one node) and 1 MiB of
 *         MPI_INT, and a strided type with holes (4 KiB): bind a channel
 *         each way (K = 1) and a K = 4 channel each way; 50 warm-up
 *         cycles, reset the counters, 1000 cycles of ping-pong on the
 *         K = 1 channels plus 4 starts + one wait on the K = 4 ones, read
 *         the counters.  Asserted: no malloc / calloc / realloc / free from
 *         a matching object in the 1000 cycles; the last cycle's data.
 * leak    20 warm-up, then 200 measured rounds of bind + one transfer +
 *         unbind: the matching objects freed at least as many blocks as
 *         they allocated (nothing kept per channel).
 */
#define _GNU_SOURCE
#include "pnbc_mpi4.h"
#include "alloc_counter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, fails;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fails++;                                                         \
            printf("FAIL chan_alloc rank %d: ", rank);                       \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
            fflush(stdout);                                                  \
        }                                                                    \
    } while (0)

static void bind_pair(MPI_Datatype t, int count, int peer, int *s, int *r, int K, MPI_Request in[2],
                      MPI_Request ch[2])
{
    int ks[2] = { K, K };
    MPI_Send_init(s, count, t, peer, 11 + K, MPI_COMM_WORLD, &in[0]);
    MPI_Recv_init(r, count, t, peer, 11 + K, MPI_COMM_WORLD, &in[1]);
    CHECK(MPI_SUCCESS == MPIX_Bind_slack_channels(in, ch, 2, ks, NULL), "bind K %d", K);
}

static void unbind_pair(MPI_Request in[2], MPI_Request ch[2])
{
    CHECK(MPI_SUCCESS == MPIX_Unbind_channels(ch, 2), "unbind");
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
}

/* One cycle: ping-pong on c1, then 4 starts each way on c4 + waits. */
static void cycle(MPI_Request c1[2], MPI_Request c4[2], int low)
{
    MPI_Start(&c1[1]);
    if (low) {
        MPI_Start(&c1[0]);
        MPI_Wait(&c1[0], MPI_STATUS_IGNORE);
        MPI_Wait(&c1[1], MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&c1[1], MPI_STATUS_IGNORE);
        MPI_Start(&c1[0]);
        MPI_Wait(&c1[0], MPI_STATUS_IGNORE);
    }
    for (int j = 0; j < 4; ++j) MPIX_Start_slack(&c4[1]);
    for (int j = 0; j < 4; ++j) MPIX_Start_slack(&c4[0]);
    MPI_Waitall(2, c4, MPI_STATUSES_IGNORE);
}

static void case_cycles(int peer, int low)
{
    static const int counts[] = { 2, 1024, 16384, 262144, 1024 };
    MPI_Datatype strided, v;
    MPI_Type_vector(1, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 2 * sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&v);
    for (int c = 0; c < 5; ++c) {
        const int count = counts[c], stride = (4 == c) ? 2 : 1;
        MPI_Datatype t = (4 == c) ? strided : MPI_INT;
        const size_t n = (size_t) count * stride;
        int *s1 = calloc(n, sizeof(int)), *r1 = calloc(n, sizeof(int));
        int *s4 = calloc(4 * n, sizeof(int)), *r4 = calloc(4 * n, sizeof(int));
        MPI_Request i1[2], c1[2], i4[2], c4[2];
        bind_pair(t, count, peer, s1, r1, 1, i1, c1);
        bind_pair(t, count, peer, s4, r4, 4, i4, c4);
        for (int it = 0; it < 50; ++it) cycle(c1, c4, low);
        unsigned long m[4], o[4];
        ac_reset();
        for (int it = 0; it < 1000; ++it) {
            if (999 == it) {
                for (size_t k = 0; k < 4 * n; k += stride) s4[k] = (int) (k * 7 + rank);
                for (size_t k = 0; k < n; k += stride) s1[k] = (int) (k * 3 + rank);
            }
            cycle(c1, c4, low);
        }
        ac_get(m, o);
        CHECK(0 == m[0] + m[1] + m[2] + m[3], "count %d stride %d: %lu malloc %lu calloc %lu realloc %lu free "
              "from pnbc in 1000 cycles", count, stride, m[0], m[1], m[2], m[3]);
        int bad = 0;
        for (size_t k = 0; k < 4 * n; k += stride) bad += r4[k] != (int) (k * 7 + peer);
        for (size_t k = 0; k < n; k += stride) bad += r1[k] != (int) (k * 3 + peer);
        CHECK(0 == bad, "count %d: %d wrong elements in the last cycle", count, bad);
        unbind_pair(i1, c1);
        unbind_pair(i4, c4);
        free(s1);
        free(r1);
        free(s4);
        free(r4);
    }
    MPI_Type_free(&strided);
}

static void case_leak(int peer)
{
    int s[16], r[16];
    unsigned long m[4], o[4];
    for (int round = 0; round < 220; ++round) {
        if (20 == round) ac_reset();
        MPI_Request in[2], ch[2];
        for (int k = 0; k < 16; ++k) s[k] = round * 16 + k + rank;
        bind_pair(MPI_INT, 16, peer, s, r, 1, in, ch);
        MPI_Start(&ch[1]);
        MPI_Start(&ch[0]);
        MPI_Waitall(2, ch, MPI_STATUSES_IGNORE);
        CHECK(r[15] == round * 16 + 15 + peer, "leak round %d data", round);
        unbind_pair(in, ch);
    }
    ac_get(m, o);
    CHECK(m[3] >= m[0] + m[1], "bind/unbind: %lu malloc + %lu calloc but %lu free from pnbc in 200 rounds",
          m[0], m[1], m[3]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!ac_find()) {
        if (0 == rank) printf("FAIL chan_alloc: run with LD_PRELOAD=<path>/alloc_counter.so\n");
        MPI_Finalize();
        return 2;
    }
    {   /* self-check: the counter sees heap calls */
        unsigned long nmalloc, nfree;
        ac_probe(10, &nmalloc, &nfree);
        CHECK(nmalloc >= 10 && nfree >= 10, "the counter saw too few calls");
        CHECK(ac_loaded() > 0, "no loaded object matches ALLOC_COUNTER_MATCH");
    }
    const int peer = rank ^ 1;
    if (peer < size) {
        case_cycles(peer, rank < peer);
        case_leak(peer);
    }
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) printf("%s chan_alloc np=%d\n", fails ? "FAIL" : "PASS", size);
    MPI_Finalize();
    return fails ? 1 : 0;
}
