/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * express_test: small persistent collectives over many starts, new data at
 * every start, each result checked against a reference computed locally.
 * On one node such messages (one shm box, contiguous, up to 4 KiB) take
 * the shared-memory transport's express path (common_pnbc_shm_express.c),
 * whose posts and tests are a copy and a flag: a wrong box, a stale flag
 * or a message read before it is whole shows here as wrong data.
 *
 *   express_test [STARTS]        (default 20000)
 *
 * Requests: barrier; bcast and reduce (MPI_SUM on doubles) from every
 * root; allreduce (MPI_SUM on doubles, in place too, and a non-commutative
 * user op on ints, folded into the receive); allgather and alltoall; of
 * 1 double (8 B) and 512 doubles (4 KiB); plus, for contrast, one allreduce
 * and one allgather of 5000 B (above the express path's 4 KiB).  Start s
 * runs request s mod n (so consecutive starts use other slots, and every
 * box of a slot is used in turn), by MPI_Start or MPI_Startall(1), completed
 * by MPI_Wait or an MPI_Test loop.  Every 61st start, and every barrier,
 * one rank (in turn) sleeps 300 us first, so the others complete in
 * progress rather than in their start; a barrier is checked: nobody left
 * it before the sleeper entered.  Every 997th start every request is started at once
 * (MPI_Startall, a rank-dependent order; more than 16 active requests: they
 * park on bells) and completed by MPI_Waitall, each one checked.
 *
 * Output: "FAIL ..." per wrong result; rank 0: "express_test: N checks,
 * M failures".  Exit status non-zero on any failure.
 */
#include "common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXREQ 64
#define POISON_BYTE 0xA5

static int wrank, wsize;
static long nchecks, nfail;

/* allgather / alltoall of `count` doubles per block */
typedef struct {
    int alltoall;
    int count;
    double *sbuf, *rbuf;
    MPI_Request req;
} xreq_t;

typedef struct {
    int is_x;
    preq_t p;
    xreq_t x;
} req_t;

static req_t reqs[MAXREQ];
static int nreq;

/* Element i of the block that rank `from` sends to rank `to` at start it. */
static double xval(int from, int to, int i, int it)
{
    return (double) (mix64((uint64_t) from * 7919u + (uint64_t) to * 104729u +
                           (uint64_t) it * 1000003u + (uint64_t) i) % 1000000u);
}

static void x_setup(xreq_t *x, int alltoall, int count)
{
    const size_t blocks = (size_t) count * (size_t) wsize;
    x->alltoall = alltoall;
    x->count = count;
    x->sbuf = xmalloc((alltoall ? blocks : (size_t) count) * sizeof(double));
    x->rbuf = xmalloc(blocks * sizeof(double));
    int rc = alltoall ? MPIX_Alltoall_init(x->sbuf, count, MPI_DOUBLE, x->rbuf, count,
                                           MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &x->req)
                      : MPIX_Allgather_init(x->sbuf, count, MPI_DOUBLE, x->rbuf, count,
                                            MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &x->req);
    abort_unless(MPI_SUCCESS == rc, "MPIX_Allgather_init / MPIX_Alltoall_init");
}

static void x_prepare(xreq_t *x, int it)
{
    const int nsend = x->alltoall ? wsize : 1;
    for (int to = 0; to < nsend; ++to) {
        for (int i = 0; i < x->count; ++i) {
            x->sbuf[(size_t) to * x->count + i] = xval(wrank, x->alltoall ? to : -1, i, it);
        }
    }
    memset(x->rbuf, POISON_BYTE, (size_t) x->count * wsize * sizeof(double));
}

static int x_check(const xreq_t *x, int it, char *msg, size_t len)
{
    for (int from = 0; from < wsize; ++from) {
        for (int i = 0; i < x->count; ++i) {
            const double want = xval(from, x->alltoall ? wrank : -1, i, it);
            const double got = x->rbuf[(size_t) from * x->count + i];
            if (got != want) {
                snprintf(msg, len, "block of rank %d element %d: %g, expected %g", from, i, got,
                         want);
                return 1;
            }
        }
    }
    return 0;
}

static MPI_Request *req_handle(req_t *r)
{
    return r->is_x ? &r->x.req : &r->p.req;
}

static void add_preq(coll_t coll, const dtype_t *dt, opk_t opk, int count, int root, int inplace)
{
    abort_unless(nreq < MAXREQ, "too many requests");
    req_t *r = &reqs[nreq];
    r->is_x = 0;
    preq_setup(&r->p, coll, MPI_COMM_WORLD, dt, opk, coll_op(coll, opk, dt), count, root,
               inplace, 0, (uint64_t) nreq + 1);
    abort_unless(MPI_SUCCESS == preq_init(&r->p, MPI_INFO_NULL), "MPIX_<coll>_init");
    nreq++;
}

static void add_x(int alltoall, int count)
{
    abort_unless(nreq < MAXREQ, "too many requests");
    reqs[nreq].is_x = 1;
    x_setup(&reqs[nreq].x, alltoall, count);
    nreq++;
}

static void prepare(req_t *r, int it)
{
    if (r->is_x) {
        x_prepare(&r->x, it);
    } else {
        preq_prepare(&r->p, it);
    }
}

static void check(req_t *r, int k, int it)
{
    char msg[256] = "";
    const int bad = r->is_x ? x_check(&r->x, it, msg, sizeof(msg))
                            : preq_check(&r->p, it, msg, sizeof(msg));
    nchecks++;
    if (bad) {
        nfail++;
        printf("FAIL rank %d: request %d (%s) start %d: %s\n", wrank, k,
               r->is_x ? (r->x.alltoall ? "alltoall" : "allgather") : coll_name(r->p.coll), it,
               msg);
        fflush(stdout);
    }
}

/* The barrier at a start where rank `sleeper` slept before entering:
 * nobody may have left before it entered. */
static void check_barrier(double entered, double left, int sleeper, int it)
{
    double t[2] = { entered, left }, *all = xmalloc(2 * (size_t) wsize * sizeof(double));
    MPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
    nchecks++;
    if (left < all[2 * sleeper]) {
        nfail++;
        printf("FAIL rank %d: barrier start %d left %.1f us before rank %d entered\n", wrank, it,
               (all[2 * sleeper] - left) * 1e6, sleeper);
    }
    free(all);
}

/* Every request at once, in a rank-dependent order. */
static void start_all(int it)
{
    MPI_Request handles[MAXREQ];
    int order[MAXREQ];
    for (int k = 0; k < nreq; ++k) {
        order[k] = k;
    }
    for (int k = nreq - 1; k > 0; --k) {
        const int j = (int) (mix64((uint64_t) it * 31u + (uint64_t) wrank * 17u + (uint64_t) k) %
                             (uint64_t) (k + 1));
        const int t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < nreq; ++k) {
        prepare(&reqs[order[k]], it);
        handles[k] = *req_handle(&reqs[order[k]]);
    }
    abort_unless(MPI_SUCCESS == MPI_Startall(nreq, handles), "MPI_Startall");
    abort_unless(MPI_SUCCESS == MPI_Waitall(nreq, handles, MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (int k = 0; k < nreq; ++k) {
        check(&reqs[order[k]], order[k], it);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "express_test", &wrank, &wsize);
    const int starts = argc > 1 ? atoi(argv[1]) : 20000;
    abort_unless(MPI_SUCCESS == types_create() && MPI_SUCCESS == ops_create(), "types/ops");

    add_preq(C_BARRIER, &T_DOUBLE, OP_NONE, 0, 0, 0);
    const int barrier = 0;
    for (int root = 0; root < wsize; ++root) {
        add_preq(C_BCAST, &T_DOUBLE, OP_NONE, 1, root, 0);
        add_preq(C_BCAST, &T_DOUBLE, OP_NONE, 512, root, 0);
        add_preq(C_REDUCE, &T_DOUBLE, OP_SUM, 1, root, 0);
    }
    add_preq(C_ALLREDUCE, &T_DOUBLE, OP_SUM, 1, 0, 0);
    add_preq(C_ALLREDUCE, &T_DOUBLE, OP_SUM, 1, 0, 1);
    add_preq(C_ALLREDUCE, &T_DOUBLE, OP_SUM, 512, 0, 0);
    add_preq(C_ALLREDUCE, &T_INT, OP_U_AFFINE, 2, 0, 0);
    add_preq(C_ALLREDUCE, &T_CHAR, OP_BXOR, 5000, 0, 0);
    add_x(0, 1);
    add_x(0, 512);
    add_x(1, 1);
    add_x(1, 512);
    add_x(0, 625);      /* 5000 B */

    watchdog_arm(600, "express_test: %d starts", starts);
    for (int it = 0; it < starts; ++it) {
        if (0 == it % 997) {
            start_all(it);
            continue;
        }
        const int k = it % nreq;
        req_t *r = &reqs[k];
        const int sleeper = (it / 61) % wsize;
        const bool skew = (0 == it % 61) || k == barrier;
        prepare(r, it);
        if (skew && wrank == sleeper) {
            usleep(300);
        }
        const double entered = now_sec();
        if (MPI_SUCCESS != start_complete_req(req_handle(r), it)) {
            nfail++;
            printf("FAIL rank %d: request %d start %d: an error\n", wrank, k, it);
        }
        const double left = now_sec();
        check(r, k, it);
        if (k == barrier) {
            check_barrier(entered, left, sleeper, it);
        }
    }
    watchdog_disarm();

    for (int k = 0; k < nreq; ++k) {
        if (reqs[k].is_x) {
            MPI_Request_free(&reqs[k].x.req);
            free(reqs[k].x.sbuf);
            free(reqs[k].x.rbuf);
        } else {
            preq_release(&reqs[k].p);
        }
    }
    long totals[2] = { nchecks, nfail }, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == wrank) {
        printf("express_test: %ld checks, %ld failures\n", sums[0], sums[1]);
    }
    ops_free();
    types_free();
    MPI_Finalize();
    return nfail > 0;
}
