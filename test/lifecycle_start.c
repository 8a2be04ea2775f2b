/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * lifecycle, the sub-tests that start and complete requests (see
 * lifecycle.c): a-start-order, b-startall-permuted, c-mixed-p2p (every
 * completion call) and i-comm-self.
 */
#define _GNU_SOURCE
#include "lifecycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ================================================================ a */
void test_a(void)
{
    MPI_Comm c = sub_begin("a-start-order");
    int n = wsize;
    preq_t p[4];
    setup(&p[0], C_ALLREDUCE, c, &T_INT, OP_SUM, 100, 0, 0);
    setup(&p[1], C_BCAST, c, &T_DOUBLE, OP_NONE, 257, 1 % n, 0);
    setup(&p[2], C_REDUCE, c, &T_INT, OP_MAX, 64, n - 1, 0);
    setup(&p[3], C_ALLREDUCE, c, &T_INT, OP_SUM, 100, 0, 0);   /* same signature as p[0] */
    int ok = 1;
    for (int i = 0; i < 4; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    for (int rep = 0; ok && rep < 6; rep++) {
        MPI_Request rq[4];
        for (int i = 0; i < 4; i++) preq_prepare(&p[i], rep);
        for (int k = 0; k < 4; k++) {
            int i = (wrank % 2 == 0) ? k : 3 - k;   /* even: A B C D, odd: D C B A */
            if (rep % 2 == 1 && wrank % 2 == 1) usleep(2000);
            int rc = MPI_Start(&p[i].req);
            if (rc != MPI_SUCCESS) sfail("rep %d: MPI_Start(%d) returned %s", rep, i, err_class_str(rc));
        }
        for (int i = 0; i < 4; i++) rq[i] = p[i].req;
        if (waitall_tmo(4, rq, "a: waitall")) break;
        for (int i = 0; i < 4; i++) check_p(&p[i], rep, "a");
    }
    for (int i = 0; i < 4; i++) free_p(&p[i]);
    sub_end(&c);
}

/* ================================================================ b */
void test_b(void)
{
    MPI_Comm c = sub_begin("b-startall-permuted");
    int n = wsize;
    enum { N = 6 };
    preq_t p[N];
    setup(&p[0], C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    setup(&p[1], C_ALLREDUCE, c, &T_DOUBLE, OP_SUM, 10, 0, 1);
    setup(&p[2], C_BCAST, c, &T_INT, OP_NONE, 64, 0, 0);
    setup(&p[3], C_BCAST, c, &T_STRUCTH, OP_NONE, 5, n - 1, 0);
    setup(&p[4], C_REDUCE, c, &T_MAT2H, OP_U_MATMUL, 9, 0, 0);
    setup(&p[5], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    for (int rep = 0; ok && rep < 6; rep++) {
        int perm[N];
        MPI_Request rq[N];
        for (int k = 0; k < N; k++) {
            int j = (k + wrank + rep) % N;
            perm[(wrank % 2) ? N - 1 - k : k] = j;
        }
        for (int i = 0; i < N; i++) preq_prepare(&p[i], rep);
        for (int k = 0; k < N; k++) rq[k] = p[perm[k]].req;
        int rc = MPI_Startall(N, rq);
        if (rc != MPI_SUCCESS) {
            sfail("rep %d: MPI_Startall returned %s", rep, err_class_str(rc));
            break;
        }
        if (waitall_tmo(N, rq, "b: waitall")) break;
        for (int i = 0; i < N; i++) check_p(&p[i], rep, "b");
    }
    for (int i = 0; i < N; i++) free_p(&p[i]);
    sub_end(&c);
}

/* ================================================================ c */
static const char *cmode_name[] = { "Waitall", "Waitany", "Testall", "Testany", "Testsome",
                                    "Waitsome", "Test-loop", "Wait-each-reverse" };

void test_c(void)
{
    MPI_Comm c = sub_begin("c-mixed-p2p");
    int n = wsize, right = (wrank + 1) % n, left = (wrank + n - 1) % n;
    enum { NP2P = 256, N = 5 };
    int *sbuf = malloc(NP2P * sizeof(int)), *rbuf = malloc(NP2P * sizeof(int));
    MPI_Request ps = MPI_REQUEST_NULL, pr = MPI_REQUEST_NULL;
    preq_t p[3];
    CHK(MPI_Send_init(sbuf, NP2P, MPI_INT, right, 7, c, &ps));
    CHK(MPI_Recv_init(rbuf, NP2P, MPI_INT, left, 7, c, &pr));
    setup(&p[0], C_ALLREDUCE, c, &T_LONG, OP_SUM, 300, 0, 0);
    setup(&p[1], C_BCAST, c, &T_INT, OP_NONE, 33, 0, 0);
    setup(&p[2], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    int ok = !sub_fail;
    for (int i = 0; i < 3; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    /* array: [send, allreduce, recv, bcast, barrier]; kinds: -1 send, -2 recv, i coll */
    const int kind[N] = { -1, 0, -2, 1, 2 };
    for (int mode = 0; ok && mode < 8; mode++) {
        for (int rep = 0; rep < 2; rep++) {
            int it = mode * 2 + rep;
            MPI_Request rq[N];
            MPI_Status st[N];
            int done[N] = { 0 }, ndone = 0, rc, idx, flag, outc, idxs[N];
            const char *mn = cmode_name[mode];
            for (int k = 0; k < NP2P; k++) {
                sbuf[k] = (int)(mix64((uint64_t)wrank * 1000 + (uint64_t)it) ^ (uint64_t)k);
                rbuf[k] = -1;
            }
            for (int i = 0; i < 3; i++) preq_prepare(&p[i], it);
            for (int i = 0; i < N; i++) {
                rq[i] = kind[i] == -1 ? ps : kind[i] == -2 ? pr : p[kind[i]].req;
                memset(&st[i], 0, sizeof st[i]);
            }
            rc = MPI_Startall(N, rq);
            if (rc != MPI_SUCCESS) {
                sfail("%s: MPI_Startall returned %s", mn, err_class_str(rc));
                ok = 0;
                break;
            }
            double t0 = now_sec();
            int timeout = 0;
            switch (mode) {
            case 0:
                rc = MPI_Waitall(N, rq, st);
                if (rc != MPI_SUCCESS) sfail("Waitall returned %s", err_class_str(rc));
                for (int i = 0; i < N; i++) done[i] = 1;
                ndone = N;
                break;
            case 1:
                while (ndone < N) {
                    rc = MPI_Waitany(N, rq, &idx, &st[0]);
                    if (rc != MPI_SUCCESS || idx == MPI_UNDEFINED || idx < 0 || idx >= N || done[idx]) {
                        sfail("Waitany: rc=%s index=%d (done %d of %d)", err_class_str(rc), idx, ndone, N);
                        break;
                    }
                    done[idx] = 1;
                    ndone++;
                    if (kind[idx] == -2) st[2] = st[0];
                }
                rc = MPI_Waitany(N, rq, &idx, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS || idx != MPI_UNDEFINED)
                    sfail("Waitany on all-inactive requests: rc=%s index=%d (expected MPI_UNDEFINED)",
                          err_class_str(rc), idx);
                break;
            case 2:
                do {
                    rc = MPI_Testall(N, rq, &flag, st);
                    if ((timeout = now_sec() - t0 > TMO)) break;
                } while (rc == MPI_SUCCESS && !flag);
                if (rc != MPI_SUCCESS) sfail("Testall returned %s", err_class_str(rc));
                if (flag) {
                    for (int i = 0; i < N; i++) done[i] = 1;
                    ndone = N;
                }
                break;
            case 3:
                while (ndone < N) {
                    rc = MPI_Testany(N, rq, &idx, &flag, &st[4]);
                    if (rc != MPI_SUCCESS) {
                        sfail("Testany returned %s", err_class_str(rc));
                        break;
                    }
                    if (flag) {
                        if (idx == MPI_UNDEFINED || idx < 0 || idx >= N || done[idx]) {
                            sfail("Testany: flag=1 index=%d (done %d of %d)", idx, ndone, N);
                            break;
                        }
                        done[idx] = 1;
                        ndone++;
                        if (kind[idx] == -2) st[2] = st[4];
                    }
                    if ((timeout = now_sec() - t0 > TMO)) break;
                }
                if (ndone == N) {
                    rc = MPI_Testany(N, rq, &idx, &flag, MPI_STATUS_IGNORE);
                    if (rc != MPI_SUCCESS || !flag || idx != MPI_UNDEFINED)
                        sfail("Testany on all-inactive requests: rc=%s flag=%d index=%d (expected 1, MPI_UNDEFINED)",
                              err_class_str(rc), flag, idx);
                }
                break;
            case 4:
            case 5:
                while (ndone < N) {
                    MPI_Status sst[N];
                    rc = mode == 4 ? MPI_Testsome(N, rq, &outc, idxs, sst)
                                   : MPI_Waitsome(N, rq, &outc, idxs, sst);
                    if (rc != MPI_SUCCESS || outc == MPI_UNDEFINED) {
                        sfail("%s: rc=%s outcount=%d (done %d of %d)", mn, err_class_str(rc), outc, ndone, N);
                        break;
                    }
                    for (int k = 0; k < outc; k++) {
                        if (idxs[k] < 0 || idxs[k] >= N || done[idxs[k]]) {
                            sfail("%s: bad or repeated index %d", mn, idxs[k]);
                            continue;
                        }
                        done[idxs[k]] = 1;
                        ndone++;
                        if (kind[idxs[k]] == -2) st[2] = sst[k];
                    }
                    if ((timeout = now_sec() - t0 > TMO)) break;
                }
                if (ndone == N) {
                    rc = mode == 4 ? MPI_Testsome(N, rq, &outc, idxs, MPI_STATUSES_IGNORE)
                                   : MPI_Waitsome(N, rq, &outc, idxs, MPI_STATUSES_IGNORE);
                    if (rc != MPI_SUCCESS || outc != MPI_UNDEFINED)
                        sfail("%s on all-inactive requests: rc=%s outcount=%d (expected MPI_UNDEFINED)", mn,
                              err_class_str(rc), outc);
                }
                break;
            case 6:
                for (int i = 0; i < N; i++) {
                    if (wait_tmo(&rq[i], &st[i], "Test-loop")) {
                        timeout = 1;
                        break;
                    }
                    done[i] = 1;
                    ndone++;
                }
                break;
            case 7:
                for (int i = N - 1; i >= 0; i--) {
                    rc = MPI_Wait(&rq[i], &st[i]);
                    if (rc != MPI_SUCCESS) sfail("Wait(%d) returned %s", i, err_class_str(rc));
                    done[i] = 1;
                    ndone++;
                }
                break;
            }
            if (timeout) {
                sfail("%s: requests not complete after %.0f s (hang); done %d of %d", mn, TMO, ndone, N);
                tainted = 1;
                ok = 0;
                break;
            }
            if (ndone != N) {
                ok = 0;
                break;
            }
            for (int i = 0; i < N; i++)
                if (rq[i] == MPI_REQUEST_NULL) sfail("%s: persistent request %d became MPI_REQUEST_NULL", mn, i);
            /* the receive: status and data */
            {
                int cnt = -1;
                MPI_Get_count(&st[2], MPI_INT, &cnt);
                if (st[2].MPI_SOURCE != left || st[2].MPI_TAG != 7 || cnt != NP2P)
                    sfail("%s: receive status source=%d tag=%d count=%d, expected %d/7/%d", mn, st[2].MPI_SOURCE,
                          st[2].MPI_TAG, cnt, left, NP2P);
            }
            for (int k = 0; k < NP2P; k++) {
                int e = (int)(mix64((uint64_t)left * 1000 + (uint64_t)it) ^ (uint64_t)k);
                if (rbuf[k] != e) {
                    sfail("%s: p2p data from %d wrong at %d: got %d expected %d", mn, left, k, rbuf[k], e);
                    break;
                }
            }
            for (int i = 0; i < 3; i++) check_p(&p[i], it, mn);
        }
    }
    if (!tainted) {
        if (ps != MPI_REQUEST_NULL) CHK(MPI_Request_free(&ps));
        if (pr != MPI_REQUEST_NULL) CHK(MPI_Request_free(&pr));
    }
    for (int i = 0; i < 3; i++) free_p(&p[i]);
    free(sbuf);
    free(rbuf);
    sub_end(&c);
}

/* ================================================================ i */
static void self_round(MPI_Comm comm, const char *cname)
{
    preq_t p[10];
    int np = 0;
    setup(&p[np++], C_BARRIER, comm, &T_INT, OP_NONE, 0, 0, 0);
    setup(&p[np++], C_BCAST, comm, &T_STRUCTH, OP_NONE, 7, 0, 0);
    setup(&p[np++], C_BCAST, comm, &T_INT, OP_NONE, 1000, 0, 0);
    setup(&p[np++], C_REDUCE, comm, &T_INT, OP_SUM, 100, 0, 0);
    setup(&p[np++], C_REDUCE, comm, &T_INT, OP_SUM, 100, 0, 1);
    setup(&p[np++], C_REDUCE, comm, &T_MAT2H, OP_U_MATMUL, 5, 0, 0);
    setup(&p[np++], C_ALLREDUCE, comm, &T_DOUBLE, OP_SUM, 100, 0, 0);
    setup(&p[np++], C_ALLREDUCE, comm, &T_DOUBLE, OP_SUM, 100, 0, 1);
    setup(&p[np++], C_ALLREDUCE, comm, &T_INT, OP_U_AFFINE, 65539, 0, 0);
    setup(&p[np++], C_ALLREDUCE, comm, &T_MAT2V, OP_U_MATMUL, 9, 0, 1);
    for (int i = 0; i < np && !tainted; i++) {
        char what[128];
        snprintf(what, sizeof what, "i (%s, %s%s)", cname, coll_name(p[i].coll), p[i].inplace ? " in-place" : "");
        if (init_p(&p[i]) != MPI_SUCCESS) continue;
        for (int it = 0; it < 3; it++)
            if (normal_round(&p[i], it, what)) break;
    }
    for (int i = 0; i < np; i++) free_p(&p[i]);
}

void test_i(void)
{
    MPI_Comm c = sub_begin("i-comm-self");
    MPI_Comm selfdup;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    self_round(MPI_COMM_SELF, "MPI_COMM_SELF");
    MPI_Comm_dup(MPI_COMM_SELF, &selfdup);
    MPI_Comm_set_errhandler(selfdup, MPI_ERRORS_RETURN);
    self_round(selfdup, "dup(MPI_COMM_SELF)");
    if (!tainted) MPI_Comm_free(&selfdup);
    sub_end(&c);
}
