/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * copy_distance: collectives whose local copy has its destination a
 * chosen number of bytes past its source modulo 4 KiB.  pnbc copies
 * 2 KiB .. 512 KiB blocks 1..63 bytes apart (mod 4 KiB) in 2 KiB pieces
 * (pnbc_copy(), common_pnbc.h); this places the buffers so that each
 * rank's own block of an allgather and of the root's gather lands at
 * distances 0, 8, 16, 40, 63 and 64, for block sizes around the piece
 * size and the limit (2049 .. 524289 bytes, odd ones leave a short last
 * piece), and checks every byte against locally computed values: the
 * persistent MPIX_Allgather_init (three starts, new inputs each),
 * MPI_Iallgather and MPI_Igather.  Prints "PASS copy_distance: N checks"
 * or the first failures; exit status 1 on any failure.
 */
#include <mpi.h>
#include "pcoll_names.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, np, failures, checks;

static unsigned char value(int r, size_t i, int gen)
{
    return (unsigned char) (r * 131 + (int) (i * 7) + gen * 29 + (int) (i >> 9));
}

static void fill(unsigned char *sbuf, size_t size, int gen)
{
    for (size_t i = 0; i < size; ++i) {
        sbuf[i] = value(rank, i, gen);
    }
}

/* rbuf holds block r of every rank r in blocks (all of them, or only
 * `only` when >= 0) */
static void verify(const char *what, const unsigned char *rbuf, size_t size, int gen,
                   size_t dist, int only)
{
    for (int r = 0; r < np; ++r) {
        if (only >= 0 && r != only) {
            continue;
        }
        for (size_t i = 0; i < size; ++i) {
            ++checks;
            if (rbuf[(size_t) r * size + i] != value(r, i, gen)) {
                if (++failures <= 10) {
                    printf("FAIL copy_distance: rank %d %s size %zu distance %zu: block %d "
                           "byte %zu is %d, expected %d\n", rank, what, size, dist, r, i,
                           rbuf[(size_t) r * size + i], value(r, i, gen));
                }
                break;
            }
        }
    }
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 2049, 4096, 4101, 65539, 300007, 524289 };
    static const size_t dists[] = { 0, 8, 16, 40, 63, 64 };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    for (size_t zi = 0; zi < sizeof(sizes) / sizeof(sizes[0]); ++zi) {
        const size_t size = sizes[zi];
        for (size_t di = 0; di < sizeof(dists) / sizeof(dists[0]); ++di) {
            const size_t dist = dists[di];
            /* rbuf - sbuf = whole pages past the send block, then the
             * amount that puts this rank's block `dist` past sbuf */
            const size_t own = ((size_t) rank * size) % 4096;
            const size_t gap = ((size + 64) / 4096 + 1) * 4096 + (dist + 4096 - own) % 4096;
            unsigned char *base = NULL;
            if (0 != posix_memalign((void **) &base, 4096, 64 + gap + (size_t) np * size)) {
                printf("FAIL copy_distance: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            unsigned char *sbuf = base + 64, *rbuf = sbuf + gap;

            MPI_Request req;
            MPIX_Allgather_init(sbuf, (int) size, MPI_BYTE, rbuf, (int) size, MPI_BYTE,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &req);
            for (int gen = 0; gen < 3; ++gen) {
                fill(sbuf, size, gen);
                memset(rbuf, 0xa5, (size_t) np * size);
                MPI_Start(&req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                verify("persistent allgather", rbuf, size, gen, dist, -1);
            }
            MPI_Request_free(&req);

            fill(sbuf, size, 3);
            memset(rbuf, 0xa5, (size_t) np * size);
            MPI_Iallgather(sbuf, (int) size, MPI_BYTE, rbuf, (int) size, MPI_BYTE,
                           MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            verify("iallgather", rbuf, size, 3, dist, -1);

            /* the root's own block: only rank 0's distance is `dist` */
            fill(sbuf, size, 4);
            memset(rbuf, 0xa5, (size_t) np * size);
            MPI_Igather(sbuf, (int) size, MPI_BYTE, rbuf, (int) size, MPI_BYTE, 0,
                        MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (0 == rank) {
                verify("igather", rbuf, size, 4, dist, -1);
            }
            free(base);
        }
    }

    int all = 0, total = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        if (0 == all) {
            printf("PASS copy_distance: %d checks (np %d)\n", total, np);
        } else {
            printf("FAIL copy_distance: %d failures of %d checks (np %d)\n", all, total, np);
        }
    }
    MPI_Finalize();
    return (0 == all) ? 0 : 1;
}
