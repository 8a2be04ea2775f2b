/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part_mixed: partitioned requests together with other requests, init
 * that never waits for the peer, and a long start/Pready/wait loop.
 *
 *   part_mixed [mixed] [init] [long [N]]     (default: mixed init)
 *
 * mixed  one array of persistent requests: a partitioned send and receive
 *        (ring: to r+1, from r-1), MPI_Allreduce_init and MPI_Bcast_init
 *        (persistent collectives; same relative order on every rank, as
 *        MPI requires), MPI_Send_init / MPI_Recv_init (ob1 persistent
 *        point-to-point), and a second partitioned pair on another tag;
 *        started with one MPI_Startall in an order permuted every
 *        iteration, then the partitions readied, then completed with each
 *        MPI_Wait* / MPI_Test* family in turn; every result checked
 *        against values computed locally; 16 iterations with new data.
 * init   init is local: rank 0 inits a partitioned send, starts it, readies
 *        every partition and only then sends rank 1 a token (a plain
 *        MPI_Send); rank 1 waits for the token, sleeps 100 ms and only then
 *        calls MPI_Precv_init, while rank 0 completes its send with an
 *        MPI_Test loop (no barrier).  An init or start that waits for the
 *        peer deadlocks here (watchdog).  The same with the roles of
 *        sender and receiver swapped, then a second epoch with the late
 *        side sleeping before MPI_Start.  At np=1 the receive is
 *        initialized 100 ms after the send was started and readied.
 * long   N (default 100000) start / Pready / wait cycles of a 32-byte
 *        message (4 send partitions -> 2 receive partitions, Pready,
 *        Pready_range and Pready_list in turn), every cycle's data checked.
 */
#include "part_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wrank, wsize, dst, src;
static MPI_Comm comm, ctrl;

/* ---------------------------------------------------------------- mixed */
#define MX_N 1000               /* ints per message */
enum { R_PSEND, R_PRECV, R_ALLRED, R_BCAST, R_SEND, R_RECV, R_PSEND2, R_PRECV2, R_NREQ };

static int val(int kind, int it, int rank, int i)
{
    return (int)(mix64(((uint64_t)kind << 40) ^ ((uint64_t)it << 20) ^ ((uint64_t)rank << 32) ^ (uint64_t)i) %
                 100000);
}

static void case_mixed(void)
{
    int *ps = xmalloc(sizeof(int) * MX_N), *pr = xmalloc(sizeof(int) * MX_N);
    int *ps2 = xmalloc(sizeof(int) * 30), *pr2 = xmalloc(sizeof(int) * 30);
    int *ain = xmalloc(sizeof(int) * MX_N), *aout = xmalloc(sizeof(int) * MX_N);
    int *bc = xmalloc(sizeof(int) * MX_N), *sb = xmalloc(sizeof(int) * MX_N), *rb = xmalloc(sizeof(int) * MX_N);
    MPI_Request rq[R_NREQ], arr[R_NREQ];
    MPI_Status st[R_NREQ];
    int rc[R_NREQ], perm[R_NREQ];
    case_begin("part_mixed mixed np=%d (partitioned + Allreduce_init + Bcast_init + Send_init/Recv_init in one "
               "MPI_Startall)", wsize);
    rc[R_PSEND] = MPI_Psend_init(ps, 8, MX_N / 8, MPI_INT, dst, 11, comm, MPI_INFO_NULL, &rq[R_PSEND]);
    rc[R_ALLRED] = MPI_Allreduce_init(ain, aout, MX_N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &rq[R_ALLRED]);
    rc[R_PRECV] = MPI_Precv_init(pr, 5, MX_N / 5, MPI_INT, src, 11, comm, MPI_INFO_NULL, &rq[R_PRECV]);
    rc[R_SEND] = MPI_Send_init(sb, MX_N, MPI_INT, dst, 11, comm, &rq[R_SEND]);
    rc[R_BCAST] = MPI_Bcast_init(bc, MX_N, MPI_INT, 0, comm, MPI_INFO_NULL, &rq[R_BCAST]);
    rc[R_RECV] = MPI_Recv_init(rb, MX_N, MPI_INT, src, 11, comm, &rq[R_RECV]);
    rc[R_PRECV2] = MPI_Precv_init(pr2, 3, 10, MPI_INT, src, 12, comm, MPI_INFO_NULL, &rq[R_PRECV2]);
    rc[R_PSEND2] = MPI_Psend_init(ps2, 2, 15, MPI_INT, dst, 12, comm, MPI_INFO_NULL, &rq[R_PSEND2]);
    int ok = 1;
    for (int k = 0; k < R_NREQ; k++)
        if (rc[k] != MPI_SUCCESS) {
            case_fail(-1, "init of request %d returned %s", k, err_class_str(rc[k]));
            ok = 0;
        }
    if (!all_ok(comm, ok)) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int it = 0; it < 16; it++) {
        int method = it % CM_N, to = 0, r;
        uint64_t rng = mix64(1000 + (uint64_t)it);     /* same permutation on every rank */
        for (int k = 0; k < R_NREQ; k++) perm[k] = k;
        pt_shuffle(perm, R_NREQ, &rng);
        for (int i = 0; i < MX_N; i++) {
            ain[i] = val(1, it, wrank, i);
            bc[i] = wrank == 0 ? val(2, it, 0, i) : -1;
            sb[i] = val(3, it, wrank, i);
            ps[i] = -2;         /* partitioned data written right before Pready */
            pr[i] = rb[i] = aout[i] = -3;
        }
        for (int i = 0; i < 30; i++) pr2[i] = -3;
        for (int k = 0; k < R_NREQ; k++) arr[k] = rq[perm[k]];
        r = MPI_Startall(R_NREQ, arr);
        for (int k = 0; k < R_NREQ; k++) rq[perm[k]] = arr[k];
        if (r != MPI_SUCCESS) {
            case_fail(it, "MPI_Startall of the mixed array returned %s", err_class_str(r));
            break;
        }
        /* ready the partitions: the second pair first, one with a list */
        for (int i = 0; i < 30; i++) ps2[i] = val(5, it, wrank, i);
        int l2[2] = { 1, 0 };
        r = MPI_Pready_list(2, l2, rq[R_PSEND2]);
        for (int p = 7; p >= 0 && r == MPI_SUCCESS; p--) {
            for (int i = p * (MX_N / 8); i < (p + 1) * (MX_N / 8); i++) ps[i] = val(4, it, wrank, i);
            r = MPI_Pready(p, rq[R_PSEND]);
        }
        if (r != MPI_SUCCESS) case_fail(it, "Pready returned %s", err_class_str(r));
        /* complete in a permuted order too */
        for (int k = 0; k < R_NREQ; k++) arr[k] = rq[perm[k]];
        r = pt_complete(method, R_NREQ, arr, st, &to);
        MPI_Status s2[R_NREQ];
        for (int k = 0; k < R_NREQ; k++) {
            rq[perm[k]] = arr[k];
            s2[perm[k]] = st[k];
        }
        if (r != MPI_SUCCESS) {
            case_fail(it, "MPI_%s of the mixed array: %s%s", pt_method_name(method), err_class_str(r),
                      to ? " (timed out)" : "");
            break;
        }
        pt_check_status(&s2[R_PRECV], src, 11, MPI_INT, MX_N, it);
        pt_check_status(&s2[R_PRECV2], src, 12, MPI_INT, 30, it);
        pt_check_status(&s2[R_RECV], src, 11, MPI_INT, MX_N, it);
        n_checks += 4;
        for (int i = 0; i < MX_N; i++) {
            int sum = 0;
            for (int q = 0; q < wsize; q++) sum += val(1, it, q, i);
            if (aout[i] != sum) {
                case_fail(it, "allreduce [%d] = %d, expected %d", i, aout[i], sum);
                break;
            }
            if (bc[i] != val(2, it, 0, i)) {
                case_fail(it, "bcast [%d] = %d, expected %d", i, bc[i], val(2, it, 0, i));
                break;
            }
            if (rb[i] != val(3, it, src, i)) {
                case_fail(it, "MPI_Recv_init data [%d] = %d, expected %d", i, rb[i], val(3, it, src, i));
                break;
            }
            if (pr[i] != val(4, it, src, i)) {
                case_fail(it, "partitioned receive [%d] = %d, expected %d", i, pr[i], val(4, it, src, i));
                break;
            }
        }
        for (int i = 0; i < 30; i++)
            if (pr2[i] != val(5, it, src, i)) {
                case_fail(it, "second partitioned receive [%d] = %d, expected %d", i, pr2[i], val(5, it, src, i));
                break;
            }
        if (!all_ok(comm, !case_failed)) break;
    }
    for (int k = 0; k < R_NREQ; k++) case_free_req(&rq[k]);
    free(ps); free(pr); free(ps2); free(pr2); free(ain); free(aout); free(bc); free(sb); free(rb);
}

/* ---------------------------------------------------------------- init */
#define IN_N 4096
static int check_ints(const int *b, int n, int kind, int it, int from, const char *what)
{
    n_checks++;
    for (int i = 0; i < n; i++)
        if (b[i] != val(kind, it, from, i)) {
            case_fail(it, "%s [%d] = %d, expected %d", what, i, b[i], val(kind, it, from, i));
            return 0;
        }
    return 1;
}

static int test_loop(MPI_Request *r, MPI_Status *st, const char *what, int it)
{
    int flag = 0, rc;
    double t0 = now_sec();
    do {
        rc = MPI_Test(r, &flag, st);
        if (rc == MPI_SUCCESS && !flag && now_sec() - t0 > PT_POLL_LIMIT) {
            case_fail(it, "%s: no completion within %.0f s", what, PT_POLL_LIMIT);
            return 0;
        }
    } while (rc == MPI_SUCCESS && !flag);
    if (rc != MPI_SUCCESS) case_fail(it, "%s: MPI_Test returned %s", what, err_class_str(rc));
    return rc == MPI_SUCCESS;
}

/* early: the side that inits (and starts, and readies) first; late: the other */
static void init_variant(int send_first)
{
    int *buf = xmalloc(sizeof(int) * IN_N), token = 0, rc;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    int role = wrank == 0 ? (send_first ? 0 : 1) : (send_first ? 1 : 0);    /* 0 sender, 1 receiver */
    int peer = 1 - wrank, early = wrank == 0, kind = 6 + send_first;
    case_begin("part_mixed init np=%d (%s initializes, starts%s first; the peer inits 100 ms after a token)", wsize,
               send_first ? "the sender" : "the receiver", send_first ? " and readies" : "");
    watchdog_arm(40, "part_mixed init: %s first, world rank %d as %s (an init or start waiting for the peer "
                 "deadlocks here)", send_first ? "sender" : "receiver", wrank, role ? "receiver" : "sender");
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < IN_N; i++) buf[i] = role ? -1 : val(kind, it, wrank, i);
        if (early) {
            if (it == 0) {
                rc = role ? MPI_Precv_init(buf, 4, IN_N / 4, MPI_INT, peer, 30, comm, MPI_INFO_NULL, &r)
                          : MPI_Psend_init(buf, 8, IN_N / 8, MPI_INT, peer, 30, comm, MPI_INFO_NULL, &r);
                if (rc != MPI_SUCCESS) case_fail(it, "init returned %s", err_class_str(rc));
            }
            if ((rc = MPI_Start(&r)) != MPI_SUCCESS) case_fail(it, "MPI_Start returned %s", err_class_str(rc));
            if (!role && (rc = MPI_Pready_range(0, 7, r)) != MPI_SUCCESS)
                case_fail(it, "MPI_Pready_range returned %s", err_class_str(rc));
            token = it;
            MPI_Send(&token, 1, MPI_INT, peer, 1, ctrl);
            if (test_loop(&r, &st, "the early side's MPI_Test loop", it) && role) {
                pt_check_status(&st, peer, 30, MPI_INT, IN_N, it);
                check_ints(buf, IN_N, kind, it, peer, "data received by the early receiver");
            }
        } else {
            MPI_Recv(&token, 1, MPI_INT, peer, 1, ctrl, MPI_STATUS_IGNORE);
            usleep(100000);
            if (it == 0) {
                rc = role ? MPI_Precv_init(buf, 4, IN_N / 4, MPI_INT, peer, 30, comm, MPI_INFO_NULL, &r)
                          : MPI_Psend_init(buf, 8, IN_N / 8, MPI_INT, peer, 30, comm, MPI_INFO_NULL, &r);
                if (rc != MPI_SUCCESS) case_fail(it, "init returned %s", err_class_str(rc));
            }
            if ((rc = MPI_Start(&r)) != MPI_SUCCESS) case_fail(it, "MPI_Start returned %s", err_class_str(rc));
            if (!role) {
                int l[8] = { 3, 1, 7, 5, 0, 2, 4, 6 };
                if ((rc = MPI_Pready_list(8, l, r)) != MPI_SUCCESS)
                    case_fail(it, "MPI_Pready_list returned %s", err_class_str(rc));
            }
            if ((rc = MPI_Wait(&r, &st)) != MPI_SUCCESS) case_fail(it, "MPI_Wait returned %s", err_class_str(rc));
            else if (role) {
                pt_check_status(&st, peer, 30, MPI_INT, IN_N, it);
                check_ints(buf, IN_N, kind, it, peer, "data received by the late receiver");
            }
        }
    }
    case_free_req(&r);
    free(buf);
}

static void init_self(void)
{
    int *sb = xmalloc(sizeof(int) * IN_N), *rb = xmalloc(sizeof(int) * IN_N), rc;
    MPI_Request s, r;
    MPI_Status st;
    case_begin("part_mixed init np=1 (receive initialized 100 ms after the send was started and readied)");
    for (int i = 0; i < IN_N; i++) {
        sb[i] = val(8, 0, 0, i);
        rb[i] = -1;
    }
    rc = MPI_Psend_init(sb, 8, IN_N / 8, MPI_INT, 0, 31, comm, MPI_INFO_NULL, &s);
    if (rc == MPI_SUCCESS) rc = MPI_Start(&s);
    if (rc == MPI_SUCCESS) rc = MPI_Pready_range(0, 7, s);
    if (rc != MPI_SUCCESS) {
        case_fail(0, "send side returned %s", err_class_str(rc));
        return;
    }
    usleep(100000);
    rc = MPI_Precv_init(rb, 2, IN_N / 2, MPI_INT, 0, 31, comm, MPI_INFO_NULL, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Start(&r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, &st);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&s, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) case_fail(0, "receive side returned %s", err_class_str(rc));
    else check_ints(rb, IN_N, 8, 0, 0, "data");
    case_free_req(&s);
    case_free_req(&r);
    free(sb);
    free(rb);
}

/* ---------------------------------------------------------------- long */
static void case_long(long n)
{
    int sb[8], rb[8], rc;
    MPI_Request rq[2];
    case_begin("part_mixed long np=%d (%ld cycles, 4 -> 2 partitions of 32 bytes)", wsize, n);
    watchdog_arm(250, "part_mixed long np=%d (%ld cycles)", wsize, n);
    rc = MPI_Psend_init(sb, 4, 2, MPI_INT, dst, 40, comm, MPI_INFO_NULL, &rq[0]);
    if (rc == MPI_SUCCESS) rc = MPI_Precv_init(rb, 2, 4, MPI_INT, src, 40, comm, MPI_INFO_NULL, &rq[1]);
    if (!all_ok(comm, rc == MPI_SUCCESS)) {
        case_fail(-1, "init returned %s", err_class_str(rc));
        return;
    }
    double t0 = now_sec();
    for (long it = 0; it < n; it++) {
        int l[2] = { 3, 1 };
        for (int i = 0; i < 8; i++) sb[i] = -7;
        memset(rb, 0xA5, sizeof rb);
        rc = MPI_Startall(2, rq);
        /* partitions 0/2 through Pready or Pready_range; 1/3 through a list */
        for (int i = 0; i < 8; i++) sb[i] = (int)(it * 8 + i) ^ (wrank << 24);
        if (rc == MPI_SUCCESS) rc = MPI_Pready_list(2, l, rq[0]);
        if (rc == MPI_SUCCESS) rc = (it & 1) ? MPI_Pready(2, rq[0]) : MPI_Pready_range(2, 2, rq[0]);
        if (rc == MPI_SUCCESS) rc = MPI_Pready(0, rq[0]);
        if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) {
            case_fail((int)it, "cycle returned %s", err_class_str(rc));
            break;
        }
        for (int i = 0; i < 8; i++)
            if (rb[i] != ((int)(it * 8 + i) ^ (src << 24))) {
                case_fail((int)it, "received [%d] = %d, expected %d", i, rb[i], (int)(it * 8 + i) ^ (src << 24));
                it = n;
                break;
            }
    }
    n_checks += n;
    if (wrank == 0) printf("part_mixed long: %ld cycles, %.2f us per cycle\n", n, (now_sec() - t0) * 1e6 / n);
    case_free_req(&rq[0]);
    case_free_req(&rq[1]);
}

int main(int argc, char **argv)
{
    int do_mixed = 0, do_init = 0;
    long nlong = 0;
    test_init(&argc, &argv, "part_mixed", &wrank, &wsize);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "mixed")) do_mixed = 1;
        else if (!strcmp(argv[i], "init")) do_init = 1;
        else if (!strcmp(argv[i], "long")) {
            nlong = 100000;
            if (i + 1 < argc && atol(argv[i + 1]) > 0) nlong = atol(argv[++i]);
        }
    }
    if (!do_mixed && !do_init && !nlong) do_mixed = do_init = 1;
    pt_ring(&comm, &dst, &src);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctrl);
    if (do_mixed) case_mixed();
    MPI_Barrier(comm);
    if (do_init) {
        if (wsize == 1) {
            init_self();
        } else if (wrank < 2) {
            init_variant(1);
            init_variant(0);
        }
    }
    MPI_Barrier(comm);
    if (nlong) case_long(nlong);
    int status = pt_report("part_mixed");
    MPI_Comm_free(&ctrl);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return status;
}
