/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * random_ops: random sequences of persistent collectives (all 17
 * intracommunicator ones), nonblocking collectives and partitioned
 * requests, kept alive in a pool, each result checked against a reference
 * computed locally.
 *
 *   random_ops [--seed S] [--ops N] [--max-print N] [--timeout SECONDS per epoch, 90]
 *              [--only I,J,...]   (only these ops of the sequence: to narrow a failure down)
 *              [--diag T]   (before completing, poll with MPI_Request_get_status
 *                            and name the requests not complete after T s)
 *
 * Operation i of seed S (random_colls.c: rop_draw) is a persistent or
 * nonblocking collective -- random collective, count (0 included),
 * predefined or derived type (vector, indexed, struct with holes, ...),
 * op, root, in place, communicator (MPI_COMM_WORLD or a split in reversed
 * order), type/op handles freed right after the call -- or a partitioned
 * send/receive pair around a ring (random shift, tag, partition counts,
 * type).  Every rank draws the same sequence from S.
 *
 * The program runs in epochs.  An epoch (1) draws 1-4 new operations: the
 * persistent ones and the partitioned pairs are initialised (in sequence
 * order: init is collective) and join the pool of live requests, where
 * each stays 1-6 epochs; the nonblocking ones are issued in this epoch;
 * (2) picks the pool entries to start in this epoch (the same set on all
 * ranks); (3) starts them in an order that differs per rank (MPI_Start or
 * MPI_Startall of 1-3 entries), interleaved at random with the nonblocking
 * calls (those in sequence order on every rank), readies the partitions
 * (right after the start or after all starts, in a random Pready plan);
 * (4) completes all requests in random chunks, each with one of MPI_Wait,
 * Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome; (5) checks
 * every result and send buffer; (6) frees the pool entries whose time is
 * up (MPI_Request_free).  Rank-dependent choices come from S and the rank.
 *
 * A failure prints "FAIL random_ops seed=S op=I ...": rerun with
 * --seed S --ops I+1 to reproduce (same np).
 */
#include "random_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX 8              /* live persistent/partitioned entries */
#define POOL_REQS 12            /* their requests */
#define NBC_MAX 3               /* nonblocking calls per epoch */
#define ACT_MAX 16              /* pt_complete's limit */
static int epoch_timeout = 90;   /* --timeout: watchdog per epoch */

static int wrank, wsize;
static uint64_t seed = 1;
static long nops = 1000;
static MPI_Comm comms[2];
static const char *comm_names[2] = { "world", "reversed" };
static rop_t pool[POOL_MAX], nbc[NBC_MAX];
static int npool, nnbc;
static uint64_t sr, rr;         /* shared and rank-dependent random state */
static int diag;                /* --diag T: name requests not complete after T s */
static char *only;              /* --only I,J,...: run just these ops of the sequence */
static long n_inits, n_starts, n_nbc, n_part_starts, epochs;

static void op_fail(const rop_t *o, const char *what, const char *msg)
{
    char d[400], w[100];
    rop_describe(o, d, sizeof d);
    snprintf(w, sizeof w, "random_ops seed=%llu op=%ld", (unsigned long long)seed, o->idx);
    fail_line(w, o->it, "%s: %s: %s (reproduce: --seed %llu --ops %ld, np %d)", d, what, msg,
              (unsigned long long)seed, o->idx + 1, wsize);
}

/* An MPI call failed: the job cannot go on consistently. */
static void op_abort(const rop_t *o, const char *what, int rc)
{
    op_fail(o, what, err_class_str(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int pool_reqs(void)
{
    int n = 0;
    for (int i = 0; i < npool; i++) n += pool[i].nreq;
    return n;
}

static int in_list(const char *list, long idx)
{
    for (const char *p = list; *p;) {
        char *e;
        long v = strtol(p, &e, 10);
        if (e == p) return 0;
        if (v == idx) return 1;
        p = *e == ',' ? e + 1 : e;
    }
    return 0;
}

/* (1) draw new operations; persistent/partitioned ones are initialised */
static void draw_new(long *next)
{
    int want = 1 + rnd_int(&sr, 4);
    nnbc = 0;
    for (int k = 0; k < want && *next < nops; k++) {
        rop_t o;
        if (only && !in_list(only, *next)) {
            (*next)++;
            k--;
            continue;
        }
        int ci = wsize > 1 ? (int)(mix64(seed * 31 + (uint64_t)*next) & 1) : 0;
        rop_draw(&o, seed, *next, comms[ci], comm_names[ci]);
        if (o.kind == K_NBC) {
            if (nnbc == NBC_MAX) break;
            rop_alloc(&o);
            nbc[nnbc++] = o;
            n_nbc++;
        } else {
            if (npool == POOL_MAX || pool_reqs() + o.nreq > POOL_REQS) break;
            rop_alloc(&o);
            char d[300];
            rop_describe(&o, d, sizeof d);
            watchdog_note("seed %llu epoch %ld: init of %s", (unsigned long long)seed, epochs, d);
            int rc = rop_issue(&o, pt_rand(&rr));
            if (rc != MPI_SUCCESS) op_abort(&o, "init", rc);
            o.started = 1;      /* a new entry is always started once */
            pool[npool++] = o;
            n_inits++;
        }
        (*next)++;
    }
}

/* (3) start one group of pool entries */
static void start_group(rop_t **ents, int n)
{
    MPI_Request rq[2 * 3];
    int m = 0;
    for (int i = 0; i < n; i++) {
        rop_t *o = ents[i];
        rop_prepare(o);
        if (o->kind == K_PART) n_part_starts++;
        else n_starts++;
        int first = o->nreq == 2 ? rnd_int(&rr, 2) : 0;
        for (int j = 0; j < o->nreq; j++) rq[m++] = o->req[(first + j) % o->nreq];
    }
    int rc = (m == 1 && rnd_int(&rr, 2)) ? MPI_Start(&rq[0]) : MPI_Startall(m, rq);
    if (rc != MPI_SUCCESS) op_abort(ents[0], m == 1 ? "MPI_Start(all)" : "MPI_Startall", rc);
    for (int i = 0; i < n; i++) {
        rop_t *o = ents[i];
        if (o->kind == K_PART && rnd_int(&rr, 2)) {
            rc = rop_pready(o, &rr);
            if (rc != MPI_SUCCESS) op_abort(o, "MPI_Pready*", rc);
        }
    }
}

typedef struct { MPI_Request *h; rop_t *o; } act_t;

/* (4) complete every active request: random chunks, one method each */
static void complete_all(void)
{
    act_t a[ACT_MAX];
    int na = 0;
    for (int i = 0; i < npool; i++)
        if (pool[i].started)
            for (int j = 0; j < pool[i].nreq; j++) a[na++] = (act_t){ &pool[i].req[j], &pool[i] };
    for (int i = 0; i < nnbc; i++) a[na++] = (act_t){ &nbc[i].req[0], &nbc[i] };
    for (int i = na - 1; i > 0; i--) {
        int j = rnd_int(&rr, i + 1);
        act_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    if (diag) {                 /* name the requests that do not complete */
        double t0 = now_sec();
        int left = na;
        char *fin = xcalloc((size_t)na + 1, 1);
        while (left > 0 && now_sec() - t0 < diag) {
            for (int i = 0; i < na; i++) {
                MPI_Request h = *a[i].h;
                int flag = 0;
                if (fin[i] || MPI_Request_get_status(h, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag) continue;
                fin[i] = 1;
                left--;
            }
        }
        for (int i = 0; i < na; i++)
            if (!fin[i]) {
                const rop_t *o = a[i].o;
                op_fail(o, "incomplete", o->kind == K_PART ? (a[i].h == &o->req[0] ? "the partitioned send"
                                                                                  : "the partitioned receive")
                                                           : "no completion");
            }
        free(fin);
        if (left > 0) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int done = 0; done < na;) {
        int len = 1 + rnd_int(&rr, na - done), method = rnd_int(&rr, CM_N), to = 0;
        MPI_Request rq[ACT_MAX];
        MPI_Status st[ACT_MAX];
        for (int i = 0; i < len; i++) rq[i] = *a[done + i].h;
        int rc = pt_complete(method, len, rq, st, &to);
        if (rc != MPI_SUCCESS) {
            char w[80];
            snprintf(w, sizeof w, "MPI_%s of %d requests%s", pt_method_name(method), len,
                     to ? " (no completion within the time limit)" : "");
            op_abort(a[done].o, w, rc);
        }
        for (int i = 0; i < len; i++) *a[done + i].h = rq[i];
        done += len;
    }
}

static void check(rop_t *o)
{
    char msg[600];
    if (rop_check(o, msg, sizeof msg)) op_fail(o, "wrong result", msg);
    o->it++;
}

static void epoch(long *next)
{
    long first = *next;
    epochs++;
    watchdog_arm(epoch_timeout, "seed %llu epoch %ld (ops from %ld)", (unsigned long long)seed, epochs, first);
    for (int i = 0; i < npool; i++) pool[i].started = 0;
    draw_new(next);
    /* (2) the start set: the same on every rank */
    for (int i = 0; i < npool; i++) {
        int r = rnd_int(&sr, 10) < 6;
        if (pool[i].it == 0 && pool[i].life == 1) r = 1;
        pool[i].started |= r;
    }
    for (int i = 0; i < nnbc; i++) rop_prepare(&nbc[i]);
    /* (3) starts in a rank-dependent order, nonblocking calls in sequence order */
    rop_t *ents[POOL_MAX];
    int ne = 0, ie = 0, in = 0;
    for (int i = 0; i < npool; i++)
        if (pool[i].started) ents[ne++] = &pool[i];
    for (int i = ne - 1; i > 0; i--) {
        int j = rnd_int(&rr, i + 1);
        rop_t *t = ents[i];
        ents[i] = ents[j];
        ents[j] = t;
    }
    while (ie < ne || in < nnbc) {
        if (in < nnbc && (ie == ne || rnd_int(&rr, 2))) {
            rop_t *o = &nbc[in++];
            char d[300];
            rop_describe(o, d, sizeof d);
            watchdog_note("seed %llu epoch %ld: call of %s", (unsigned long long)seed, epochs, d);
            int rc = rop_issue(o, pt_rand(&rr));
            if (rc != MPI_SUCCESS) op_abort(o, "nonblocking call", rc);
        } else {
            int k = 1 + rnd_int(&rr, 3);
            if (k > ne - ie) k = ne - ie;
            start_group(&ents[ie], k);
            ie += k;
        }
    }
    for (int i = 0; i < ne; i++)
        if (ents[i]->kind == K_PART && !ents[i]->readied) {
            int rc = rop_pready(ents[i], &rr);
            if (rc != MPI_SUCCESS) op_abort(ents[i], "MPI_Pready*", rc);
        }
    char ids[300];
    size_t l = 0;
    ids[0] = '\0';
    for (int i = 0; i < ne + nnbc && l < sizeof ids - 40; i++) {
        const rop_t *o = i < ne ? ents[i] : &nbc[i - ne];
        l += (size_t)snprintf(ids + l, sizeof ids - l, " %ld:%s%s", o->idx, o->kind == K_NBC ? "i" : "",
                              o->kind == K_PART ? "part" : rop_coll_name(o->coll));
    }
    watchdog_note("seed %llu epoch %ld: completion of %d started entries and %d nonblocking calls (ops%s)",
                  (unsigned long long)seed, epochs, ne, nnbc, ids);
    complete_all();
    /* (5) checks */
    for (int i = 0; i < ne; i++) check(ents[i]);
    for (int i = 0; i < nnbc; i++) {
        check(&nbc[i]);
#ifndef MPICH_VERSION   /* pt_complete's MPICH path completes a copy of the handles */
        if (nbc[i].req[0] != MPI_REQUEST_NULL) op_fail(&nbc[i], "completion", "request not MPI_REQUEST_NULL");
#endif
        rop_release(&nbc[i]);
    }
    nnbc = 0;
    /* (6) the entries whose time is up leave the pool */
    int keep = 0;
    for (int i = 0; i < npool; i++) {
        if (--pool[i].life > 0) {
            pool[keep++] = pool[i];
            continue;
        }
        for (int j = 0; j < pool[i].nreq; j++) {
            int rc = MPI_Request_free(&pool[i].req[j]);
            if (rc != MPI_SUCCESS) op_abort(&pool[i], "MPI_Request_free", rc);
        }
        rop_release(&pool[i]);
    }
    npool = keep;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "random_ops", &wrank, &wsize);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) nops = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-print") && i + 1 < argc) max_print = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) epoch_timeout = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--diag") && i + 1 < argc) diag = atoi(argv[++i]);
    }
    abort_unless(rnd_types_create() == MPI_SUCCESS, "datatypes and user ops");
    comms[0] = MPI_COMM_WORLD;
    abort_unless(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[1]) == MPI_SUCCESS, "reversed split");
    MPI_Comm_set_errhandler(comms[1], MPI_ERRORS_RETURN);
    sr = mix64(seed ^ 0x5eedULL);
    rr = mix64(mix64(seed) + (uint64_t)wrank * 0x9e3779b97f4a7c15ULL + 1);
    double t0 = now_sec();
    long next = 0;
    while (next < nops || npool > 0) epoch(&next);
    watchdog_arm(epoch_timeout, "seed %llu: the final sums", (unsigned long long)seed);
    long mine[5] = { n_inits, n_starts, n_nbc, n_part_starts, epochs }, sum[5];
    MPI_Reduce(mine, sum, 5, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    totals_t t = totals_sum();
    if (wrank == 0)
        printf("%s random_ops seed=%llu np=%d: %ld ops in %ld epochs (%ld inits of persistent collectives and "
               "partitioned pairs, %ld persistent starts, %ld nonblocking calls, %ld partitioned starts), %ld checks, %ld failures, %.1f s\n",
               t.failed ? "FAIL" : "PASS", (unsigned long long)seed, wsize, nops, sum[4], sum[0], sum[1], sum[2],
               sum[3], t.checks, t.failed, now_sec() - t0);
    MPI_Comm_free(&comms[1]);
    rnd_types_free();
    watchdog_disarm();
    MPI_Finalize();
    return t.failed ? 1 : 0;
}
