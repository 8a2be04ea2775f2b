/*
 * conformance: results of the persistent collectives (MPIX_Barrier_init,
 * MPIX_Bcast_init, MPIX_Reduce_init, MPIX_Allreduce_init) against
 * independent references.
 *
 * References: bcast -> the root's generated data; reduce/allreduce -> the
 * result computed locally in canonical rank order x0 op (x1 op ... x_{n-1})
 * (every rank can generate every other rank's input).  For predefined ops on
 * predefined types the local reference is additionally cross-checked against
 * the BLOCKING MPI_Reduce/MPI_Allreduce (served by tuned/basic, never by a
 * persistent-collective component).  Barrier: nobody may leave before the
 * last rank entered (CLOCK_MONOTONIC is common to all processes of a node).
 *
 * Sweep: counts 0, 1, 7, 1000, 65539; every root for bcast and reduce (for
 * reduce with 65539 elements two roots per type/op combination, rotating so
 * that all roots are covered); in-place and not; reduce non-roots with and
 * without recvbuf = NULL.
 *
 * Every request is started ITERS times with new inputs, receive buffers are
 * poisoned before each start (holes of derived types must stay poisoned),
 * send buffers must stay unchanged.
 *
 * Communicators: MPI_COMM_WORLD (full sweep), a duplicate of it and a split
 * communicator with rank 0 alone and the other ranks in reversed order
 * (sizes 1 and np-1: 3 at np=4) (reduced sweep), plus many requests
 * outstanding at once (MPI_Startall / MPI_Waitall).
 *
 * Output: one "FAIL ..." line per failing case and rank; summary from rank 0.
 * Exit status non-zero on any failure.
 *
 * Usage: conformance [--quick] [--max-print N]
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITERS 3

static int wrank, wsize;
static uint64_t next_id = 1;
static double prof[4][2];       /* seconds per collective: count <= 1000 / larger */

/* ------------------------------------------------------------------ one case */
static void prepare_it(void *p, int it)
{
    preq_prepare(p, it);
}

/* the result of iteration `it`; the request must survive its completion */
static int check_it(void *obj, int it, char *msg, size_t len)
{
    preq_t *p = obj;
    if (p->req == MPI_REQUEST_NULL) {
        snprintf(msg, len, "persistent request became MPI_REQUEST_NULL on completion");
        return 1;
    }
    return preq_check(p, it, msg, len);
}

static void run_case(ctx_t *c, coll_t coll, const dtype_t *dt, opk_t opk, int count, int root,
                     int inplace, int nullrecv)
{
    preq_t p;
    char msg[600];
    MPI_Op op = coll_op(coll, opk, dt);
    int rc;

    double t_case = now_sec();
    preq_setup(&p, coll, c->comm, dt, opk, op, count, root, inplace, nullrecv, next_id++);
    case_begin("coll=%s comm=%s np=%d count=%d type=%s op=%s root=%d in-place=%d%s", coll_name(coll),
               c->name, c->size, count, dt->name, op_name(opk), coll == C_ALLREDUCE ? -1 : root,
               inplace, (coll == C_REDUCE && nullrecv) ? " nonroot-recvbuf=NULL" : "");
    rc = preq_init(&p, MPI_INFO_NULL);
    if (!case_init_ok(c->comm, rc, &p.req)) {
        preq_release(&p);
        return;
    }
    case_iterate(&p.req, ITERS, &p, prepare_it, check_it);
    case_free_req(&p.req);
    /* cross-check of the local reference with the blocking collective */
    if ((coll == C_REDUCE || coll == C_ALLREDUCE) && !op_is_user(opk) && !dt->derived && !inplace &&
        count > 0) {
        int it = ITERS - 1;
        preq_prepare(&p, it);
        if (coll == C_REDUCE)
            rc = MPI_Reduce(p.sbuf, p.rbuf, count, dt->type, op, root, c->comm);
        else
            rc = MPI_Allreduce(p.sbuf, p.rbuf, count, dt->type, op, c->comm);
        case_cross_check(it, rc, rc == MPI_SUCCESS && preq_check(&p, it, msg, sizeof msg),
                         coll == C_REDUCE ? "Reduce" : "Allreduce", msg);
    }
    preq_release(&p);
    prof[coll][count > 1000] += now_sec() - t_case;
}

/* ------------------------------------------------------------------ barrier */
static void barrier_case(ctx_t *c)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int iters = c->size > ITERS ? c->size : ITERS;
    double *enter = malloc(sizeof(double) * (size_t)c->size);
    case_begin("coll=barrier comm=%s np=%d", c->name, c->size);
    int rc = MPIX_Barrier_init(c->comm, MPI_INFO_NULL, &req);
    if (!all_ok(c->comm, rc == MPI_SUCCESS)) {
        case_fail(-1, "init returned %s", err_class_str(rc));
        free(enter);
        return;
    }
    for (int it = 0; it < iters; it++) {
        int late = it % c->size;
        if (c->rank == late) usleep(20000);
        double t_in = now_sec();
        rc = start_req(&req, it);
        if (rc == MPI_SUCCESS) rc = complete_req(&req, it);
        double t_out = now_sec();
        if (rc != MPI_SUCCESS) {
            case_fail(it, "start/complete returned %s", err_class_str(rc));
            break;
        }
        MPI_Allgather(&t_in, 1, MPI_DOUBLE, enter, 1, MPI_DOUBLE, c->comm);
        for (int r = 0; r < c->size; r++)
            if (enter[r] > t_out)
                case_fail(it, "rank %d left the barrier %.6f s before rank %d (late rank %d) entered it",
                          c->rank, enter[r] - t_out, r, late);
    }
    rc = MPI_Request_free(&req);
    if (rc != MPI_SUCCESS || req != MPI_REQUEST_NULL)
        case_fail(-1, "MPI_Request_free: %s", err_class_str(rc));
    free(enter);
}

/* ------------------------------------------------------------------ many outstanding */
static void multi_case(ctx_t *c, MPI_Comm other, const char *othername)
{
    enum { NMAX = 16 };
    preq_t ps[NMAX];
    MPI_Request rq[NMAX];
    MPI_Info info;
    int n = 0, s = c->size, rc;
    char msg[600];

    MPI_Info_create(&info);
    MPI_Info_set(info, "pnbc_test_unknown_key", "true");   /* must be ignored */
#define ADD(comm, coll, dt, opk, count, root, inplace)                                       \
    preq_setup(&ps[n], coll, comm, dt, opk, coll_op(coll, opk, dt), count, root, inplace, 0, \
               next_id++), n++
    ADD(c->comm, C_ALLREDUCE, &T_INT, OP_SUM, 1000, 0, 0);
    ADD(c->comm, C_ALLREDUCE, &T_DOUBLE, OP_MAX, 7, 0, 0);
    ADD(c->comm, C_ALLREDUCE, &T_MAT2H, OP_U_MATMUL, 33, 0, 0);
    ADD(c->comm, C_ALLREDUCE, &T_INT, OP_U_AFFINE, 65539, 0, 1);
    ADD(c->comm, C_BCAST, &T_DOUBLE, OP_NONE, 1000, 0, 0);
    ADD(c->comm, C_BCAST, &T_STRUCTH, OP_NONE, 77, s - 1, 0);
    ADD(c->comm, C_BCAST, &T_BYTE, OP_NONE, 4097, 1 % s, 0);
    ADD(c->comm, C_BCAST, &T_VECD, OP_NONE, 5, 2 % s, 0);
    ADD(c->comm, C_REDUCE, &T_LONG, OP_SUM, 500, s / 2, 0);
    ADD(c->comm, C_REDUCE, &T_MAT2V, OP_U_MATMUL, 9, 0, 1);
    ADD(c->comm, C_BARRIER, &T_INT, OP_NONE, 0, 0, 0);
    ADD(c->comm, C_BARRIER, &T_INT, OP_NONE, 0, 0, 0);
    if (other != MPI_COMM_NULL) {
        ADD(other, C_ALLREDUCE, &T_FLOAT, OP_SUM, 100, 0, 0);
        ADD(other, C_BCAST, &T_INT, OP_NONE, 10, 0, 0);
    }
#undef ADD
    case_begin("many-outstanding (%d requests, Startall/Waitall) comm=%s%s%s np=%d", n, c->name,
               other != MPI_COMM_NULL ? "+" : "", other != MPI_COMM_NULL ? othername : "", c->size);
    int ok = 1;
    for (int i = 0; i < n; i++) {
        rc = preq_init(&ps[i], (i % 3 == 0) ? info : MPI_INFO_NULL);
        if (rc != MPI_SUCCESS) {
            case_fail(-1, "init of request %d (%s) returned %s", i, coll_name(ps[i].coll), err_class_str(rc));
            ok = 0;
        }
        rq[i] = ps[i].req;
    }
    MPI_Info_free(&info);
    if (all_ok(c->comm, ok)) {
        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < n; i++) preq_prepare(&ps[i], it);
            if (case_startall_waitall(n, rq, it) != MPI_SUCCESS) break;
            for (int i = 0; i < n; i++) {
                if (rq[i] == MPI_REQUEST_NULL) {
                    case_fail(it, "request %d became MPI_REQUEST_NULL", i);
                    continue;
                }
                if (preq_check(&ps[i], it, msg, sizeof msg))
                    case_fail(it, "request %d (%s %s count=%d type=%s root=%d): %s", i, coll_name(ps[i].coll),
                              op_name(ps[i].opk), ps[i].count, ps[i].dt.name, ps[i].root, msg);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        if (rq[i] != MPI_REQUEST_NULL) MPI_Request_free(&rq[i]);
        preq_release(&ps[i]);
    }
}

/* ------------------------------------------------------------------ sweep */
static void sweep(ctx_t *c)
{
    static const int counts_full[] = { 0, 1, 7, 1000, 65539 };
    static const int counts_reduced[] = { 0, 1, 1000 };
    const int *counts = c->full ? counts_full : counts_reduced;
    int ncounts = c->full ? 5 : 3;
    dtype_t *btypes[] = { &T_INT, &T_DOUBLE, &T_CHAR, &T_BYTE, &T_CONTIG3I, &T_VECD, &T_STRUCTH };
    combo_t combos[] = {
        { OP_SUM, &T_INT }, { OP_SUM, &T_DOUBLE }, { OP_SUM, &T_LONG }, { OP_SUM, &T_FLOAT },
        { OP_MAX, &T_INT }, { OP_MAX, &T_DOUBLE }, { OP_MAX, &T_LONG }, { OP_MAX, &T_FLOAT },
        { OP_MIN, &T_INT }, { OP_MIN, &T_DOUBLE },
        { OP_PROD, &T_INT }, { OP_PROD, &T_DOUBLE }, { OP_PROD, &T_FLOAT }, { OP_PROD, &T_LONG },
        { OP_BAND, &T_INT }, { OP_BOR, &T_INT }, { OP_BXOR, &T_INT },
        { OP_BAND, &T_LONG }, { OP_BOR, &T_LONG },
        { OP_MINLOC, &T_DINT }, { OP_MAXLOC, &T_DINT },
        { OP_U_AFFINE, &T_INT },
        { OP_U_MATMUL, &T_MAT2C }, { OP_U_MATMUL, &T_MAT2H }, { OP_U_MATMUL, &T_MAT2V },
        { OP_U_DSUM, &T_VECD },
    };
    int ncombos = (int)(sizeof combos / sizeof combos[0]);

    barrier_case(c);
    for (size_t t = 0; t < sizeof btypes / sizeof btypes[0]; t++)
        for (int k = 0; k < ncounts; k++)
            for (int root = 0; root < c->size; root++)
                run_case(c, C_BCAST, btypes[t], OP_NONE, counts[k], root, 0, 0);
    for (int cb = 0; cb < ncombos; cb++)
        for (int k = 0; k < ncounts; k++) {
            for (int inplace = 0; inplace < 2; inplace++)
                run_case(c, C_ALLREDUCE, combos[cb].dt, combos[cb].op, counts[k], 0, inplace, 0);
            for (int root = 0; root < c->size; root++) {
                /* large counts: two roots per combination, rotating so that
                 * every root is still covered across the combinations */
                if (counts[k] > 1000 && c->size > 2 && root != cb % c->size && root != (cb + 1) % c->size)
                    continue;
                for (int inplace = 0; inplace < 2; inplace++)
                    run_case(c, C_REDUCE, combos[cb].dt, combos[cb].op, counts[k], root, inplace,
                             (root + k + cb) & 1);
            }
        }
}

int main(int argc, char **argv)
{
    int quick = 0;
    test_init(&argc, &argv, "conformance", &wrank, &wsize);
    parse_test_args(argc, argv, &quick);
    abort_unless(types_create() == MPI_SUCCESS && ops_create() == MPI_SUCCESS, "test datatypes/ops");
    double t0 = now_sec();

    ctx_t world = { MPI_COMM_WORLD, "world", wrank, wsize, 1 };
    ctx_t dup = { MPI_COMM_NULL, "dup(world)", 0, 0, !!0 };
    ctx_t split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup.comm);
    MPI_Comm_set_errhandler(dup.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(dup.comm, &dup.rank);
    MPI_Comm_size(dup.comm, &dup.size);
    ctx_split_reversed(&split);     /* size np-1 on ranks 1.. */

    if (quick) world.full = 0;
    sweep(&world);
    double t1 = now_sec();
    if (!quick) {
        sweep(&dup);
        sweep(&split);
    }
    double t2 = now_sec();
    /* the split groups ran different numbers of cases: re-synchronise the ids */
    MPI_Allreduce(MPI_IN_PLACE, &next_id, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    multi_case(&world, dup.comm, "dup(world)");
    multi_case(&split, MPI_COMM_NULL, "");
    watchdog_arm(CASE_TIMEOUT, "conformance final reduction of the results");

    totals_t sum = totals_sum();
    double t3 = now_sec();
    if (wrank == 0) {
        printf("conformance np=%d: %ld case runs (summed over ranks), %ld failed; "
               "time world %.1fs dup+split %.1fs multi %.1fs\n",
               wsize, sum.cases, sum.failed, t1 - t0, t2 - t1, t3 - t2);
        printf("conformance time on rank 0 (count<=1000 / larger): bcast %.1f/%.1fs reduce %.1f/%.1fs "
               "allreduce %.1f/%.1fs\n", prof[C_BCAST][0], prof[C_BCAST][1], prof[C_REDUCE][0],
               prof[C_REDUCE][1], prof[C_ALLREDUCE][0], prof[C_ALLREDUCE][1]);
        printf("%s conformance np=%d\n", sum.failed ? "FAIL" : "PASS", wsize);
    }
    MPI_Comm_free(&dup.comm);
    MPI_Comm_free(&split.comm);
    ops_free();
    types_free();
    watchdog_disarm();
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
