/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * lifecycle, the sub-tests that misuse or free requests (see lifecycle.c):
 * d-wait-never-started, e-startall-active, e-start-active, f-free-active,
 * g-free-never-started and h-freed-type-op (user datatypes and ops freed
 * right after init).
 */
#define _GNU_SOURCE
#include "lifecycle.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* drive progress without completing a given request: blocking barriers on
 * another communicator and short sleeps */
static void progress_elsewhere(MPI_Comm side)
{
    for (int i = 0; i < 20; i++) {
        MPI_Barrier(side);
        usleep(1000);
    }
}

/* ================================================================ d */
static void check_empty_status(const MPI_Status *st, const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG || cnt != 0)
        sfail("%s: status not empty: source=%d tag=%d count=%d", what, st->MPI_SOURCE, st->MPI_TAG, cnt);
}

void test_d(void)
{
    MPI_Comm c = sub_begin("d-wait-never-started");
    int n = wsize;
    enum { N = 4 };
    preq_t p[N];
    MPI_Request rq[N];
    MPI_Status st;
    setup(&p[0], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    setup(&p[1], C_BCAST, c, &T_INT, OP_NONE, 100, 0, 0);
    setup(&p[2], C_REDUCE, c, &T_DOUBLE, OP_SUM, 100, n - 1, 0);
    setup(&p[3], C_ALLREDUCE, c, &T_INT, OP_SUM, 100, 0, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    for (int i = 0; ok && i < N; i++) {
        int flag = 0;
        MPI_Request r = p[i].req;
        memset(&st, 0x55, sizeof st);
        int rc = MPI_Test(&p[i].req, &flag, &st);
        if (rc != MPI_SUCCESS || !flag) {
            sfail("MPI_Test on never-started %s: %s flag=%d (expected success, flag=1)", coll_name(p[i].coll),
                  err_class_str(rc), flag);
            ok = 0;             /* MPI_Wait would hang */
            break;
        }
        check_empty_status(&st, "MPI_Test on never-started request");
        if (p[i].req != r) sfail("MPI_Test on a never-started request changed the handle");
        double t0 = now_sec();
        memset(&st, 0x55, sizeof st);
        rc = MPI_Wait(&p[i].req, &st);
        double dt = now_sec() - t0;
        if (rc != MPI_SUCCESS) sfail("MPI_Wait on never-started %s returned %s", coll_name(p[i].coll), err_class_str(rc));
        else check_empty_status(&st, "MPI_Wait on never-started request");
        if (dt > 1.0) sfail("MPI_Wait on never-started %s took %.2f s", coll_name(p[i].coll), dt);
        if (p[i].req != r) sfail("MPI_Wait on a never-started request changed the handle");
    }
    if (ok && !sub_fail) {
        int flag = 0, idx = -5;
        for (int i = 0; i < N; i++) rq[i] = p[i].req;
        CHK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
        CHK(MPI_Testall(N, rq, &flag, MPI_STATUSES_IGNORE));
        if (!flag) sfail("MPI_Testall on never-started requests: flag=0");
        CHK(MPI_Waitany(N, rq, &idx, MPI_STATUS_IGNORE));
        if (idx != MPI_UNDEFINED) sfail("MPI_Waitany on never-started requests: index=%d, expected MPI_UNDEFINED", idx);
        for (int i = 0; i < N; i++)
            if (rq[i] != p[i].req) sfail("Waitall/Testall/Waitany on never-started requests changed handle %d", i);
        /* the requests still work, and completing them twice is harmless */
        for (int it = 0; it < 3 && !sub_fail; it++) {
            for (int i = 0; i < N; i++) preq_prepare(&p[i], it);
            int rc = MPI_Startall(N, rq);
            if (rc != MPI_SUCCESS) {
                sfail("MPI_Startall returned %s", err_class_str(rc));
                break;
            }
            if (waitall_tmo(N, rq, "d: waitall")) break;
            for (int i = 0; i < N; i++) check_p(&p[i], it, "d");
            for (int i = 0; i < N; i++) {
                double t0 = now_sec();
                CHK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
                if (now_sec() - t0 > 1.0) sfail("second MPI_Wait on a completed request took > 1 s");
            }
        }
    }
    for (int i = 0; i < N; i++) free_p(&p[i]);
    sub_end(&c);
}

/* ================================================================ e */
/* Is rc of the error class MPI_ERR_REQUEST? */
static int is_err_request(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls == MPI_ERR_REQUEST;
}

void test_e_startall(void)
{
    MPI_Comm c = sub_begin("e-startall-active");
    preq_t p;
    setup(&p, C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    if (init_p(&p) == MPI_SUCCESS) {
        preq_prepare(&p, 0);
        CHK(MPI_Start(&p.req));
        MPI_Request r = p.req;
        int rc = MPI_Startall(1, &p.req);
        if (!is_err_request(rc))
            sfail("MPI_Startall on an active request returned %s, expected class MPI_ERR_REQUEST", err_class_str(rc));
        if (p.req != r) sfail("MPI_Startall on an active request changed the handle");
        if (p.req != MPI_REQUEST_NULL && !wait_tmo(&p.req, NULL, "e-startall: wait")) {
            check_p(&p, 0, "e-startall: after the failed second start");
            normal_round(&p, 1, "e-startall: next normal round");
        }
    }
    free_p(&p);
    sub_end(&c);
}

/* Start p (iteration `it`), optionally let it progress, then call MPI_Start
 * (e, use_free = 0) or MPI_Request_free (f, use_free = 1) on the active
 * request: class MPI_ERR_REQUEST, handle unchanged; the request then still
 * completes with the right result and runs a normal round (it + 1). */
static void misuse_active(preq_t *p, MPI_Comm side, int after_progress, int it, const char *what,
                          int use_free)
{
    const char *call = use_free ? "MPI_Request_free" : "MPI_Start";
    preq_prepare(p, it);
    int rc = MPI_Start(&p->req);
    if (rc != MPI_SUCCESS) {
        sfail("%s: %sMPI_Start returned %s", what, use_free ? "" : "first ", err_class_str(rc));
        return;
    }
    if (after_progress) progress_elsewhere(side);
    MPI_Request r = p->req;
    rc = use_free ? MPI_Request_free(&p->req) : MPI_Start(&p->req);
    if (!is_err_request(rc))
        sfail("%s: %s on an active %s request returned %s, expected class MPI_ERR_REQUEST", what, call,
              coll_name(p->coll), err_class_str(rc));
    if (p->req != r) {
        if (!use_free) {
            sfail("%s: MPI_Start on an active request changed the handle", what);
            return;
        }
        sfail("%s: MPI_Request_free on an active request changed the handle (%s)", what,
              p->req == MPI_REQUEST_NULL ? "set to MPI_REQUEST_NULL: the request was freed" : "changed");
        p->req = MPI_REQUEST_NULL;      /* can no longer be used */
        return;
    }
    if (wait_tmo(&p->req, NULL, what)) return;
    check_p(p, it, what);
    normal_round(p, it + 1, what);
}

void test_e_start(void)
{
    MPI_Comm c = sub_begin("e-start-active");
    MPI_Comm side;
    int n = wsize;
    preq_t p[3];
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    setup(&p[0], C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    setup(&p[1], C_BCAST, c, &T_DOUBLE, OP_NONE, 100, n - 1, 0);
    setup(&p[2], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    int ok = 1;
    for (int i = 0; i < 3; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    /* second start after the operation had time to finish internally, then
     * second start immediately after the first */
    for (int i = 0; ok && i < 3 && !tainted; i++) misuse_active(&p[i], side, 1, 0, "e-start (after progress)", 0);
    for (int i = 0; ok && i < 3 && !tainted; i++) misuse_active(&p[i], side, 0, 2, "e-start (immediately)", 0);
    for (int i = 0; i < 3; i++) free_p(&p[i]);
    if (!tainted) MPI_Comm_free(&side);
    sub_end(&c);
}

/* ================================================================ f */
void test_f(void)
{
    MPI_Comm c = sub_begin("f-free-active");
    MPI_Comm side;
    int n = wsize;
    enum { N = 4 };
    preq_t p[N];
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    setup(&p[0], C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    setup(&p[1], C_BCAST, c, &T_DOUBLE, OP_NONE, 100, n - 1, 0);
    setup(&p[2], C_REDUCE, c, &T_INT, OP_SUM, 100, 0, 0);
    setup(&p[3], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    for (int i = 0; ok && i < N && !tainted; i++)
        if (p[i].req != MPI_REQUEST_NULL) misuse_active(&p[i], side, 0, 0, "f-free (immediately after start)", 1);
    for (int i = 0; ok && i < N && !tainted; i++)
        if (p[i].req != MPI_REQUEST_NULL) misuse_active(&p[i], side, 1, 2, "f-free (after progress)", 1);
    for (int i = 0; i < N; i++) free_p(&p[i]);
    if (!tainted) MPI_Comm_free(&side);
    sub_end(&c);
}

/* ================================================================ g */
void test_g(void)
{
    MPI_Comm c = sub_begin("g-free-never-started");
    int n = wsize;
    for (int round = 0; round < 2; round++) {
        preq_t p[4];
        setup(&p[0], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
        setup(&p[1], C_BCAST, c, &T_VECD, OP_NONE, 100, n - 1, 0);
        setup(&p[2], C_REDUCE, c, &T_MAT2H, OP_U_MATMUL, 100, 0, 0);
        setup(&p[3], C_ALLREDUCE, c, &T_DOUBLE, OP_SUM, 100, 0, 1);
        for (int i = 0; i < 4; i++) {
            if (init_p(&p[i]) != MPI_SUCCESS) continue;
            if (round == 1)             /* completed a few times, then freed */
                for (int it = 0; it < 3; it++)
                    if (normal_round(&p[i], it, "g (completed rounds)")) break;
            if (tainted) break;
            int rc = MPI_Request_free(&p[i].req);
            if (rc != MPI_SUCCESS)
                sfail("MPI_Request_free of a %s %s request returned %s", round ? "completed" : "never-started",
                      coll_name(p[i].coll), err_class_str(rc));
            else if (p[i].req != MPI_REQUEST_NULL)
                sfail("MPI_Request_free of a %s request did not set MPI_REQUEST_NULL", coll_name(p[i].coll));
        }
        for (int i = 0; i < 4; i++) preq_release(&p[i]);
    }
    /* many never-started requests freed in reverse order */
    enum { M = 50 };
    MPI_Request many[M];
    int buf[M];
    for (int i = 0; i < M; i++) CHK(MPIX_Allreduce_init(MPI_IN_PLACE, &buf[i], 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &many[i]));
    for (int i = M - 1; i >= 0 && !sub_fail; i--) {
        CHK(MPI_Request_free(&many[i]));
        if (many[i] != MPI_REQUEST_NULL) sfail("request %d not MPI_REQUEST_NULL after free", i);
    }
    /* the communicator still works */
    if (!sub_fail) {
        preq_t q;
        setup(&q, C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
        if (init_p(&q) == MPI_SUCCESS) normal_round(&q, 0, "g (after frees)");
        free_p(&q);
    }
    sub_end(&c);
}

/* ================================================================ h */
static void garbage_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)dt;
    memset(inout, 0x7f, (size_t)*len * 4);
}

void test_h(void)
{
    MPI_Comm c = sub_begin("h-freed-type-op");
    int n = wsize;
    dtype_t d_h, d_v, d_s;
    enum { N = 5, NCLOB = 30, NOPS = 8 };
    preq_t p[N];
    MPI_Datatype clob[NCLOB];
    MPI_Op clob_op[NOPS];
    CHK(dtype_clone(&d_h, &T_MAT2H));
    CHK(dtype_clone(&d_v, &T_VECD));
    CHK(dtype_clone(&d_s, &T_STRUCTH));
    MPI_Op op_mm = op_create(OP_U_MATMUL, &T_MAT2H);    /* layout of d_h */
    MPI_Op op_ds = op_create(OP_U_DSUM, &T_VECD);       /* layout of d_v */
    preq_setup(&p[0], C_ALLREDUCE, c, &d_h, OP_U_MATMUL, op_mm, 17, 0, 0, 0, next_id++);
    preq_setup(&p[1], C_REDUCE, c, &d_h, OP_U_MATMUL, op_mm, 1000, n - 1, 0, 0, next_id++);
    preq_setup(&p[2], C_BCAST, c, &d_s, OP_NONE, MPI_OP_NULL, 50, 0, 0, 0, next_id++);
    preq_setup(&p[3], C_ALLREDUCE, c, &d_v, OP_U_DSUM, op_ds, 33, 0, 1, 0, next_id++);
    preq_setup(&p[4], C_REDUCE, c, &d_v, OP_U_DSUM, op_ds, 3, 0, 0, 1, next_id++);
    int ok = !sub_fail;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    /* free the user objects right after init ... */
    CHK(MPI_Type_free(&d_h.type));
    CHK(MPI_Type_free(&d_v.type));
    CHK(MPI_Type_free(&d_s.type));
    CHK(MPI_Op_free(&op_mm));
    CHK(MPI_Op_free(&op_ds));
    if (d_h.type != MPI_DATATYPE_NULL || op_mm != MPI_OP_NULL) sfail("handles not set to NULL by the free calls");
    /* ... and recycle their memory with different objects */
    for (int i = 0; i < NCLOB; i++) {
        MPI_Datatype t;
        switch (i % 3) {
        case 0: MPI_Type_contiguous(1 + i, MPI_CHAR, &t); break;
        case 1: MPI_Type_vector(2 + i, 1, 3, MPI_SHORT, &t); break;
        default: MPI_Type_create_hvector(3, 2, 40 + i, MPI_FLOAT, &t); break;
        }
        MPI_Type_commit(&t);
        clob[i] = t;
    }
    for (int i = 0; i < NOPS; i++) MPI_Op_create(garbage_op, i % 2, &clob_op[i]);
    for (int it = 0; ok && it < 5; it++) {
        MPI_Request rq[N];
        for (int i = 0; i < N; i++) {
            preq_prepare(&p[i], it);
            rq[i] = p[i].req;
        }
        int rc = MPI_Startall(N, rq);
        if (rc != MPI_SUCCESS) {
            sfail("MPI_Startall returned %s", err_class_str(rc));
            break;
        }
        if (waitall_tmo(N, rq, "h: waitall")) break;
        for (int i = 0; i < N; i++) check_p(&p[i], it, "h (type/op freed after init)");
    }
    for (int i = 0; i < N; i++) free_p(&p[i]);
    for (int i = 0; i < NCLOB; i++) MPI_Type_free(&clob[i]);
    for (int i = 0; i < NOPS; i++) MPI_Op_free(&clob_op[i]);
    sub_end(&c);
}
