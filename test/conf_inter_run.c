/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * conf_inter, running the test cases (see conf_inter.c): the persistent
 * and the blocking call of a case, its inputs and expected bytes at each
 * start, the checks, one case at a time or several outstanding at once.
 */
#define _GNU_SOURCE
#include "conf_inter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tc_free(tcase_t *t)
{
    free(t->sbuf);
    free(t->rbuf);
    free(t->sref);
    free(t->exp);
    free(t->ref);
    free(t);
}

/* The collective with t's arguments: persistent init (recv buffer rbuf) or
 * the blocking call. */
#define CALL(init, blocking, ...) \
    (persistent ? init(__VA_ARGS__, t->ic->inter, MPI_INFO_NULL, &t->req) \
                : blocking(__VA_ARGS__, t->ic->inter))

static int tc_call(tcase_t *t, char *rbuf, int persistent)
{
    char *s = t->sbuf;
    switch (t->kind) {
    case K_BCAST:
        return CALL(MPIX_Bcast_init, MPI_Bcast, rbuf, t->rcount, t->rtype, t->root);
    case K_GATHER:
        return CALL(MPIX_Gather_init, MPI_Gather, s, t->scount, t->stype, rbuf, t->rcount,
                    t->rtype, t->root);
    case K_GATHERV:
        return CALL(MPIX_Gatherv_init, MPI_Gatherv, s, t->scount, t->stype, rbuf,
                    t->rcounts, t->rdispls, t->rtype, t->root);
    case K_SCATTER:
        /* The blocking reference is MPI_Scatterv with equal counts: coll/basic's
         * MPI_Scatter on intercommunicators crashes in Open MPI 4.1.4 (it
         * waits on a request pointer it advanced past the array). */
        if (!persistent) {
            return MPI_Scatterv(s, t->scounts, t->sdispls, t->stype, rbuf, t->rcount,
                                t->rtype, t->root, t->ic->inter);
        }
        return CALL(MPIX_Scatter_init, MPI_Scatter, s, t->scount, t->stype, rbuf, t->rcount,
                    t->rtype, t->root);
    case K_SCATTERV:
        return CALL(MPIX_Scatterv_init, MPI_Scatterv, s, t->scounts, t->sdispls, t->stype,
                    rbuf, t->rcount, t->rtype, t->root);
    case K_ALLGATHER:
        return CALL(MPIX_Allgather_init, MPI_Allgather, s, t->scount, t->stype, rbuf,
                    t->rcount, t->rtype);
    case K_ALLGATHERV:
        return CALL(MPIX_Allgatherv_init, MPI_Allgatherv, s, t->scount, t->stype, rbuf,
                    t->rcounts, t->rdispls, t->rtype);
    case K_ALLTOALL:
        return CALL(MPIX_Alltoall_init, MPI_Alltoall, s, t->scount, t->stype, rbuf,
                    t->rcount, t->rtype);
    case K_ALLTOALLV:
        return CALL(MPIX_Alltoallv_init, MPI_Alltoallv, s, t->scounts, t->sdispls, t->stype,
                    rbuf, t->rcounts, t->rdispls, t->rtype);
    case K_ALLTOALLW:
        return CALL(MPIX_Alltoallw_init, MPI_Alltoallw, s, t->scounts, t->sdispls,
                    t->stypes, rbuf, t->rcounts, t->rdispls, t->rtypes);
    case K_REDUCE:
        return CALL(MPIX_Reduce_init, MPI_Reduce, s, rbuf, t->count, t->rty->t, t->op,
                    t->root);
    case K_ALLREDUCE:
        return CALL(MPIX_Allreduce_init, MPI_Allreduce, s, rbuf, t->count, t->rty->t, t->op);
    case K_RS:
        return CALL(MPIX_Reduce_scatter_init, MPI_Reduce_scatter, s, rbuf, t->rcounts,
                    t->rty->t, t->op);
    case K_RSB:
        return CALL(MPIX_Reduce_scatter_block_init, MPI_Reduce_scatter_block, s, rbuf,
                    t->rcount, t->rty->t, t->op);
    }
    return MPI_ERR_OTHER;
}

/* ---------------------------------------------------------------- failures */

static void check_bytes(const tcase_t *t, int it, const char *what, const char *got,
                        const char *exp, size_t n)
{
    n_checks++;
    const size_t k = first_diff(got, exp, n);
    if (k < n) {
        fail_line(t->desc, it, "%s: first difference at byte %zu of %zu: got 0x%02x expected 0x%02x",
                  what, k, n, (unsigned char) got[k], (unsigned char) exp[k]);
    }
}

/* ---------------------------------------------------------------- inputs / expected */

/* The int stream a block carries at start `it`. */
static void blk_stream(const tcase_t *t, const blk_t *b, int it, int *v)
{
    gen_ints(v, b->cnt * b->ty->nf, data_seed(t->id, it, b->g, b->i, b->key), OPK_NONE);
}

static void fill_blocks(const tcase_t *t, char *buf, const blk_t *b, int n, int it)
{
    for (int k = 0; k < n; ++k) {
        int *v = xcalloc((size_t) (b[k].cnt * b[k].ty->nf), sizeof(int));
        blk_stream(t, &b[k], it, v);
        put_stream(buf + b[k].disp, b[k].ty, b[k].cnt, v);
        free(v);
    }
}

/* Contribution of group g's rank i to a reduction: count records. */
static void red_input(const tcase_t *t, int it, int g, int i, int *v)
{
    gen_ints(v, t->count * t->rty->nf, data_seed(t->id, it, g, i, -1), t->opk);
}

/* New inputs in sbuf, poisoned (or root-filled) rbuf, expected bytes. */
static void tc_prepare(tcase_t *t, int it)
{
    const ictx_t *ic = t->ic;

    memset(t->rbuf, POISON_RECV, t->rbytes);
    memset(t->exp, POISON_RECV, t->rbytes);
    if (t->kind < K_REDUCE) {
        fill_blocks(t, t->sbuf, t->sb, t->nsb, it);
        fill_blocks(t, t->exp, t->rb, t->nrb, it);
        if (K_BCAST == t->kind) {       /* bcast's one buffer: the root's data is in it */
            fill_blocks(t, t->rbuf, t->sb, t->nsb, it);
            fill_blocks(t, t->exp, t->sb, t->nsb, it);
        }
        return;
    }
    const int nf = t->rty->nf, n = t->count * nf;
    int *v = xcalloc((size_t) n, sizeof(int)), *acc = xcalloc((size_t) n, sizeof(int));
    red_input(t, it, ic->gid, ic->lrank, v);
    put_stream(t->sbuf, t->rty, t->count, v);
    if (t->res_cnt > 0) {
        /* fold the remote group's inputs in rank order: acc = x0 op x1 op ... */
        const int rg = 1 - ic->gid;
        red_input(t, it, rg, 0, acc);
        for (int j = 1; j < ic->rsize; ++j) {
            red_input(t, it, rg, j, v);
            for (int e = 0; e < t->count; ++e) {
                rec_op(t->opk, &acc[e * nf], &v[e * nf]);   /* v = acc op v */
            }
            memcpy(acc, v, sizeof(int) * (size_t) n);
        }
        put_stream(t->exp, t->rty, t->res_cnt, acc + (size_t) t->res_first * nf);
    }
    free(v);
    free(acc);
}

static void tc_check(tcase_t *t, int it)
{
    check_bytes(t, it, "persistent result", t->rbuf, t->exp, t->rbytes);
    if (t->blocking_ref) {
        check_bytes(t, it, "blocking reference (test or Open MPI bug)", t->ref, t->exp,
                    t->rbytes);
    }
    check_bytes(t, it, "send buffer modified", t->sbuf, t->sref, t->sbytes);
}

static void tc_before_start(tcase_t *t, int it)
{
    tc_prepare(t, it);
    memcpy(t->sref, t->sbuf, t->sbytes);
    memcpy(t->ref, t->rbuf, t->rbytes);
}

static void tc_init(tcase_t *t)
{
    int rc = tc_call(t, t->rbuf, 1);
    if (MPI_SUCCESS != rc) {
        fail_line(t->desc, -1, "init returned %d", rc);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
}

/* Run one case: init, ITERS x (new inputs, start, wait, blocking
 * reference, check), free. */
void run_case(tcase_t *t)
{
    watchdog_arm(CASE_TIMEOUT, "%s", t->desc);
    tc_init(t);
    for (int it = 0; it < ITERS; ++it) {
        tc_before_start(t, it);
        MPI_Start(&t->req);
        MPI_Wait(&t->req, MPI_STATUS_IGNORE);
        if (t->blocking_ref) {
            tc_call(t, t->ref, 0);
        }
        tc_check(t, it);
    }
    MPI_Request_free(&t->req);
    watchdog_disarm();
    tc_free(t);
}

/* Several requests outstanding at once. */
void run_together(tcase_t **ts, int n)
{
    MPI_Request reqs[16];
    watchdog_arm(CASE_TIMEOUT, "startall of %d requests, first %s", n, ts[0]->desc);
    for (int k = 0; k < n; ++k) {
        tc_init(ts[k]);
    }
    for (int it = 0; it < ITERS; ++it) {
        for (int k = 0; k < n; ++k) {
            tc_before_start(ts[k], it);
            reqs[k] = ts[k]->req;
        }
        MPI_Startall(n, reqs);
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < n; ++k) {
            if (ts[k]->blocking_ref) {
                tc_call(ts[k], ts[k]->ref, 0);
            }
            tc_check(ts[k], it);
        }
    }
    for (int k = 0; k < n; ++k) {
        MPI_Request_free(&ts[k]->req);
        tc_free(ts[k]);
    }
    watchdog_disarm();
}
