/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * comm_from_group: persistent and nonblocking collectives on communicators
 * made by MPI_Comm_create_from_group (MPI-4.1 sec. 7.4.2; Open MPI 5.0),
 * whose context ids are "extended" (agreed through PMIx) rather than the
 * classic ones: pnbc names its shared-memory objects after a key derived
 * from them (common_pnbc_compat.h), which must be equal in all processes
 * of a communicator and differ between live communicators.
 *
 * Rank 0 first duplicates MPI_COMM_SELF twice, so the process-local
 * indexes of the communicators made afterwards differ between rank 0 and
 * the others (keys taken from those indexes would not match).
 *
 * Four communicators live at once: two made from the world group with
 * different string tags, one from the world group in reversed rank order,
 * and a classic MPI_Comm_dup.  On each, persistent allreduce (sum), bcast
 * (rotating root), allgather and alltoall of 8 B, 4 KiB and 96 KiB blocks
 * run together in one MPI_Startall, 6 rounds with new inputs, plus an
 * MPI_Iallreduce per communicator and round; every element is checked
 * against values computed locally.  Prints PASS/FAIL; exit status 1 on a
 * failure.
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOMM 4
#define NSIZE 3
#define ROUNDS 6

static const int sizes[NSIZE] = { 1, 512, 12288 };   /* doubles per block */

static double value(int rank, int i, int round, int c)
{
    return (double) ((rank + 1) * 1000 + (i % 977) + round * 7 + c * 13);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    MPI_Comm selfdup[2] = { MPI_COMM_NULL, MPI_COMM_NULL };
    if (0 == me) {
        MPI_Comm_dup(MPI_COMM_SELF, &selfdup[0]);
        MPI_Comm_dup(MPI_COMM_SELF, &selfdup[1]);
    }

    MPI_Group world, reversed;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *order = malloc(sizeof(int) * np);
    for (int i = 0; i < np; ++i) order[i] = np - 1 - i;
    MPI_Group_incl(world, np, order, &reversed);
    free(order);

    MPI_Comm comm[NCOMM];
    int err = 0;
    err |= MPI_Comm_create_from_group(world, "org.pnbc.test.a", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                      &comm[0]);
    err |= MPI_Comm_create_from_group(world, "org.pnbc.test.b", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                      &comm[1]);
    err |= MPI_Comm_create_from_group(reversed, "org.pnbc.test.r", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &comm[2]);
    err |= MPI_Comm_dup(MPI_COMM_WORLD, &comm[3]);
    if (MPI_SUCCESS != err) {
        printf("FAIL comm_from_group: making the communicators failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* per communicator and size: 4 persistent requests and their buffers */
    enum { AR, BC, AG, A2A, NKIND };
    const int nreq = NCOMM * NSIZE * NKIND;
    MPI_Request *req = malloc(sizeof(MPI_Request) * nreq);
    double *sbuf[NCOMM][NSIZE][NKIND], *rbuf[NCOMM][NSIZE][NKIND];
    int k = 0;
    for (int c = 0; c < NCOMM; ++c) {
        int cr, cn;
        MPI_Comm_rank(comm[c], &cr);
        MPI_Comm_size(comm[c], &cn);
        for (int s = 0; s < NSIZE; ++s) {
            const int n = sizes[s];
            for (int t = 0; t < NKIND; ++t) {
                const size_t elems = (AG == t || A2A == t) ? (size_t) n * cn : (size_t) n;
                sbuf[c][s][t] = calloc(elems, sizeof(double));
                rbuf[c][s][t] = calloc(elems, sizeof(double));
            }
            MPI_Allreduce_init(sbuf[c][s][AR], rbuf[c][s][AR], n, MPI_DOUBLE, MPI_SUM, comm[c],
                               MPI_INFO_NULL, &req[k++]);
            MPI_Bcast_init(rbuf[c][s][BC], n, MPI_DOUBLE, (c + s) % cn, comm[c], MPI_INFO_NULL,
                           &req[k++]);
            MPI_Allgather_init(sbuf[c][s][AG], n, MPI_DOUBLE, rbuf[c][s][AG], n, MPI_DOUBLE,
                               comm[c], MPI_INFO_NULL, &req[k++]);
            MPI_Alltoall_init(sbuf[c][s][A2A], n, MPI_DOUBLE, rbuf[c][s][A2A], n, MPI_DOUBLE,
                              comm[c], MPI_INFO_NULL, &req[k++]);
        }
    }

    long bad = 0;
    double *ia_in = malloc(sizeof(double) * 4096), *ia_out = malloc(sizeof(double) * 4096);
    for (int round = 0; round < ROUNDS; ++round) {
        for (int c = 0; c < NCOMM; ++c) {
            int cr, cn;
            MPI_Comm_rank(comm[c], &cr);
            MPI_Comm_size(comm[c], &cn);
            for (int s = 0; s < NSIZE; ++s) {
                const int n = sizes[s];
                for (int i = 0; i < n; ++i) sbuf[c][s][AR][i] = value(cr, i, round, c);
                for (int i = 0; i < n; ++i)
                    rbuf[c][s][BC][i] = (cr == (c + s) % cn) ? value(cr, i, round, c) : -1.0;
                for (int i = 0; i < n; ++i) sbuf[c][s][AG][i] = value(cr, i, round, c);
                for (int j = 0; j < cn; ++j)
                    for (int i = 0; i < n; ++i)
                        sbuf[c][s][A2A][(size_t) j * n + i] = value(cr, i + j * 31, round, c);
                memset(rbuf[c][s][AR], 0, sizeof(double) * n);
                memset(rbuf[c][s][AG], 0, sizeof(double) * n * cn);
                memset(rbuf[c][s][A2A], 0, sizeof(double) * n * cn);
            }
        }
        MPI_Startall(nreq, req);
        for (int c = 0; c < NCOMM; ++c) {  /* a nonblocking call beside them */
            int cr;
            MPI_Comm_rank(comm[c], &cr);
            for (int i = 0; i < 4096; ++i) ia_in[i] = value(cr, i, round, c);
            MPI_Request r;
            MPI_Iallreduce(ia_in, ia_out, 4096, MPI_DOUBLE, MPI_MAX, comm[c], &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            int cn;
            MPI_Comm_size(comm[c], &cn);
            for (int i = 0; i < 4096; ++i)
                if (ia_out[i] != value(cn - 1, i, round, c)) bad++;
        }
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
        for (int c = 0; c < NCOMM; ++c) {
            int cr, cn;
            MPI_Comm_rank(comm[c], &cr);
            MPI_Comm_size(comm[c], &cn);
            for (int s = 0; s < NSIZE; ++s) {
                const int n = sizes[s];
                for (int i = 0; i < n; ++i) {
                    double sum = 0;
                    for (int j = 0; j < cn; ++j) sum += value(j, i, round, c);
                    if (rbuf[c][s][AR][i] != sum) bad++;
                    if (rbuf[c][s][BC][i] != value((c + s) % cn, i, round, c)) bad++;
                }
                for (int j = 0; j < cn; ++j)
                    for (int i = 0; i < n; ++i) {
                        if (rbuf[c][s][AG][(size_t) j * n + i] != value(j, i, round, c)) bad++;
                        if (rbuf[c][s][A2A][(size_t) j * n + i] != value(j, i + cr * 31, round, c))
                            bad++;
                    }
            }
        }
    }

    for (int i = 0; i < nreq; ++i) MPI_Request_free(&req[i]);
    for (int c = 0; c < NCOMM; ++c) {
        for (int s = 0; s < NSIZE; ++s)
            for (int t = 0; t < NKIND; ++t) {
                free(sbuf[c][s][t]);
                free(rbuf[c][s][t]);
            }
        MPI_Comm_free(&comm[c]);
    }
    free(req);
    free(ia_in);
    free(ia_out);
    MPI_Group_free(&world);
    MPI_Group_free(&reversed);
    for (int i = 0; i < 2; ++i)
        if (MPI_COMM_NULL != selfdup[i]) MPI_Comm_free(&selfdup[i]);

    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == me) {
        printf("%s comm_from_group np=%d: %ld wrong elements\n", total ? "FAIL" : "PASS", np,
               total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
