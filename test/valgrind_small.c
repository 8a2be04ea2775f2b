/*
 * valgrind_small: a short persistent-collective workload for valgrind_test.sh
 * (meant for np=2).  User datatypes (a struct with holes and a strided
 * vector) and a user non-commutative op are freed right after *_init; the
 * requests are then started 4 times with MPI_Startall and completed with
 * MPI_Waitall, results checked, requests freed.  Exit status 1 on wrong
 * results.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    enum { N = 6 };
    preq_t p[N];
    MPI_Request rq[N];
    dtype_t d_h, d_v;
    char msg[600];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    watchdog_init("valgrind_small", rank);
    watchdog_arm(250, "valgrind_small");
    if (types_create() != MPI_SUCCESS || dtype_clone(&d_h, &T_MAT2H) != MPI_SUCCESS ||
        dtype_clone(&d_v, &T_VECD) != MPI_SUCCESS) {
        printf("FAIL valgrind_small: cannot create datatypes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Op op_mm = op_create(OP_U_MATMUL, &T_MAT2H);
    preq_setup(&p[0], C_ALLREDUCE, MPI_COMM_WORLD, &d_h, OP_U_MATMUL, op_mm, 9, 0, 0, 0, 1);
    preq_setup(&p[1], C_REDUCE, MPI_COMM_WORLD, &d_h, OP_U_MATMUL, op_mm, 50, size - 1, 0, 0, 2);
    preq_setup(&p[2], C_BCAST, MPI_COMM_WORLD, &d_v, OP_NONE, MPI_OP_NULL, 7, 0, 0, 0, 3);
    preq_setup(&p[3], C_BARRIER, MPI_COMM_WORLD, &T_INT, OP_NONE, MPI_OP_NULL, 0, 0, 0, 0, 4);
    preq_setup(&p[4], C_ALLREDUCE, MPI_COMM_WORLD, &T_DOUBLE, OP_SUM, MPI_SUM, 100, 0, 1, 0, 5);
    preq_setup(&p[5], C_REDUCE, MPI_COMM_WORLD, &T_INT, OP_MAX, MPI_MAX, 1000, 0, 0, 1, 6);
    for (int i = 0; i < N; i++) {
        int rc = preq_init(&p[i], MPI_INFO_NULL);
        if (rc != MPI_SUCCESS) {
            printf("FAIL valgrind_small: init %d returned %s\n", i, err_class_str(rc));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        rq[i] = p[i].req;
    }
    MPI_Type_free(&d_h.type);
    MPI_Type_free(&d_v.type);
    MPI_Op_free(&op_mm);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++) preq_prepare(&p[i], it);
        MPI_Startall(N, rq);
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            if (preq_check(&p[i], it, msg, sizeof msg)) {
                printf("FAIL valgrind_small rank %d: iteration %d request %d (%s %s): %s\n", rank, it, i,
                       coll_name(p[i].coll), p[i].dt.name, msg);
                bad = 1;
            }
    }
    for (int i = 0; i < N; i++) {
        MPI_Request_free(&rq[i]);
        preq_release(&p[i]);
    }
    types_free();
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("valgrind_small np=%d: results %s\n", size, bad ? "WRONG" : "ok");
    MPI_Finalize();
    return bad;
}
