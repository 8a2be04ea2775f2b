/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * nbc_noncomm: nonblocking and persistent reductions with a
 * non-commutative user op on messages large enough to be read in one
 * copy and folded where the result lands (common_pnbc_shm_copy.c,
 * fold_in_landing), against products computed locally.
 *
 * Each element is a 2x2 matrix of longs modulo a prime (a derived type of
 * 4 MPI_LONG); the op multiplies them, so the result depends on the order
 * MPI defines: rank 0's matrix times rank 1's ... times rank p-1's.
 * MPI_Ireduce (to the first and the last rank) and MPI_Iallreduce are
 * called three times each with the same arguments (a miss, then cached
 * instances, whose paired messages are offered), with new data each time,
 * then once more through MPIX_Reduce_init / MPIX_Allreduce_init.
 * Usage: nbc_noncomm [elements, default 2048 (64 KiB)]
 */
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODP 1000003L

static void mat_mul(const long *a, const long *b, long *out)
{
    long r[4];
    r[0] = (a[0] * b[0] + a[1] * b[2]) % MODP;
    r[1] = (a[0] * b[1] + a[1] * b[3]) % MODP;
    r[2] = (a[2] * b[0] + a[3] * b[2]) % MODP;
    r[3] = (a[2] * b[1] + a[3] * b[3]) % MODP;
    memcpy(out, r, sizeof(r));
}

/* inout = in * inout: in holds the lower ranks' product */
static void op_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; ++i) {
        mat_mul((const long *) in + 4 * i, (long *) inout + 4 * i, (long *) inout + 4 * i);
    }
}

static void fill(long *m, int rank, int n, int iter)
{
    for (int i = 0; i < n; ++i) {
        long s = (long) (rank + 1) * 7919 + (long) i * 104729 + (long) iter * 31;
        m[4 * i + 0] = (s % 13) + 1;
        m[4 * i + 1] = (s % 7);
        m[4 * i + 2] = ((s / 7) % 5);
        m[4 * i + 3] = ((s / 13) % 11) + 1;
    }
}

static int check(const long *got, int p, int n, int iter, const char *what, int rank)
{
    long *mine = malloc(sizeof(long) * 4 * (size_t) n);
    long *exp = malloc(sizeof(long) * 4 * (size_t) n);
    fill(exp, 0, n, iter);
    for (int r = 1; r < p; ++r) {
        fill(mine, r, n, iter);
        for (int i = 0; i < n; ++i) {
            mat_mul(exp + 4 * i, mine + 4 * i, exp + 4 * i);
        }
    }
    int bad = 0;
    for (int i = 0; i < 4 * n && !bad; ++i) {
        if (got[i] != exp[i]) {
            fprintf(stderr, "rank %d: %s iteration %d: element %d word %d is %ld, expected %ld\n",
                    rank, what, iter, i / 4, i % 4, got[i], exp[i]);
            bad = 1;
        }
    }
    free(mine);
    free(exp);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int n = (argc > 1) ? atoi(argv[1]) : 2048;
    MPI_Datatype mat;
    MPI_Op op;
    MPI_Type_contiguous(4, MPI_LONG, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(op_fn, 0, &op);
    long *s = malloc(sizeof(long) * 4 * (size_t) n);
    long *r = malloc(sizeof(long) * 4 * (size_t) n);
    MPI_Request req;

    for (int form = 0; form < 3; ++form) {
        const int root = (0 == form) ? 0 : p - 1;     /* form 2: allreduce */
        const char *what = (2 == form) ? "iallreduce" : (0 == form) ? "ireduce root 0"
                                                                    : "ireduce root p-1";
        for (int iter = 0; iter < 4; ++iter) {
            fill(s, rank, n, iter + 10 * form);
            memset(r, 0xff, sizeof(long) * 4 * (size_t) n);
            if (iter < 3) {
                if (2 == form) {
                    MPI_Iallreduce(s, r, n, mat, op, MPI_COMM_WORLD, &req);
                } else {
                    MPI_Ireduce(s, r, n, mat, op, root, MPI_COMM_WORLD, &req);
                }
            } else if (2 == form) {
                MPIX_Allreduce_init(s, r, n, mat, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
                MPI_Start(&req);
            } else {
                MPIX_Reduce_init(s, r, n, mat, op, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
                MPI_Start(&req);
            }
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (3 == iter) {
                MPI_Request_free(&req);
            }
            if (2 == form || rank == root) {
                fails += check(r, p, n, iter + 10 * form, what, rank);
            }
        }
    }

    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s nbc_noncomm: %d elements, %d ranks, %d failures\n",
               total ? "FAIL" : "PASS", n, p, total);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
    free(s);
    free(r);
    MPI_Finalize();
    return total ? 1 : 0;
}
