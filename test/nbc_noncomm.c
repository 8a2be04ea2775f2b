/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * nbc_noncomm: nonblocking and persistent reductions with a
 * non-commutative user op on messages large enough to be read in one
 * copy and folded where the result lands (common_pnbc_shm_copy.c,
 * fold_in_landing), against products computed locally.
 *
 * The op is the test library's OP_U_MATMUL on T_MAT2C (2x2 int matrices,
 * products mod MAT_P, common_ops.c), so the result depends on the order
 * MPI defines; inputs and references are the library's too (fill_input,
 * fold_reference).  MPI_Ireduce (to the first and the last rank) and
 * MPI_Iallreduce are called three times each with the same arguments (a
 * miss, then cached instances, whose paired messages are offered), with new
 * data each time, then once more through MPIX_Reduce_init /
 * MPIX_Allreduce_init.
 * Usage: nbc_noncomm [elements, default 4096 (64 KiB)]
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int n = (argc > 1) ? atoi(argv[1]) : 4096;
    if (MPI_SUCCESS != types_create()) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const dtype_t *dt = &T_MAT2C;
    const MPI_Datatype mat = dt->type;
    MPI_Op op = op_create(OP_U_MATMUL, dt);
    const size_t bytes = (size_t) n * dt->extent;
    void *s = malloc(bytes), *r = malloc(bytes), *exp = malloc(bytes), *tmp = malloc(bytes);
    MPI_Request req;

    for (int form = 0; form < 3; ++form) {
        const int root = (0 == form) ? 0 : p - 1;     /* form 2: allreduce */
        const char *what = (2 == form) ? "iallreduce" : (0 == form) ? "ireduce root 0"
                                                                    : "ireduce root p-1";
        for (int iter = 0; iter < 4; ++iter) {
            fill_input(s, dt, n, OP_U_MATMUL, input_seed((uint64_t) form, iter, rank));
            memset(r, POISON_RECV, bytes);
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
                fold_reference(exp, tmp, dt, n, OP_U_MATMUL, (uint64_t) form, iter, 0, p - 1);
                char msg[256];
                if (0 != compare_buffers(r, exp, dt, n, msg, sizeof(msg))) {
                    fprintf(stderr, "rank %d: %s iteration %d: %s\n", rank, what, iter, msg);
                    fails++;
                }
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
    types_free();
    free(s);
    free(r);
    free(exp);
    free(tmp);
    MPI_Finalize();
    return total ? 1 : 0;
}
