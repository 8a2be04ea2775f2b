/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part_threads: MPI_Pready from 4 threads under MPI_THREAD_MULTIPLE.
 *
 *   part_threads [iterations]          (default 200)
 *
 * Ring as in part_test (rank r sends to r+1, receives from r-1; np=1: to
 * itself).  Every iteration the main thread starts the partitioned send
 * and receive, then 4 threads each write and ready their share of the
 * send partitions (thread t: the partitions p with p % 4 == t in a random
 * order with MPI_Pready; or its contiguous quarter with MPI_Pready_range in
 * pieces; or its quarter with one MPI_Pready_list in a random order),
 * while the main thread polls MPI_Parrived on the receive partitions and
 * checks each one's data the moment it is reported; then all join and the
 * main thread completes both requests (MPI_Waitall or an MPI_Testall
 * loop) and checks the whole buffer.  Two configurations: 64 -> 64 and
 * 64 -> 8 partitions (and 16 -> 48 with a struct-with-holes type).
 * Without MPI_THREAD_MULTIPLE: prints "SKIP ..." and exits 77.
 */
#include "part_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4

static int wrank, wsize, dst, src;
static MPI_Comm comm;

typedef struct {
    int ps, pr;
    size_t n;
    dtype_t *dt;
} tcase_t;

/* shared state of one case */
static struct {
    const tcase_t *c;
    MPI_Request sreq;
    unsigned char *sbuf;
    int it, id, stop;
    pthread_barrier_t start, done;
    int err[NTHREADS];          /* first failing return code per thread */
    char errwhat[NTHREADS][80];
} sh;

static void thread_fail(int t, int rc, const char *what, int p)
{
    if (sh.err[t] != MPI_SUCCESS) return;
    sh.err[t] = rc;
    snprintf(sh.errwhat[t], sizeof sh.errwhat[t], "%s (partition %d)", what, p);
}

static void fill_part(int p, uint64_t seed)
{
    size_t cs = sh.c->n / (size_t)sh.c->ps;
    pt_fill(sh.sbuf, sh.c->dt, (size_t)p * cs, (size_t)(p + 1) * cs, seed);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&sh.start);
        if (sh.stop) break;
        const tcase_t *c = sh.c;
        uint64_t seed = pt_seed(sh.id, sh.it, wrank, 0), rng = mix64(seed + (uint64_t)t);
        int q = c->ps / NTHREADS, lo = t * q, hi = lo + q, rc, mine[64], nm = 0;
        switch (sh.it % 3) {
        case 0:                 /* strided partitions, random order, Pready */
            for (int p = t; p < c->ps; p += NTHREADS) mine[nm++] = p;
            pt_shuffle(mine, nm, &rng);
            for (int i = 0; i < nm; i++) {
                fill_part(mine[i], seed);
                if ((rc = MPI_Pready(mine[i], sh.sreq)) != MPI_SUCCESS) thread_fail(t, rc, "MPI_Pready", mine[i]);
            }
            break;
        case 1:                 /* own quarter in pieces of 1..3, Pready_range */
            for (int p = lo; p < hi;) {
                int len = 1 + (int)(pt_rand(&rng) % 3);
                if (len > hi - p) len = hi - p;
                for (int i = p; i < p + len; i++) fill_part(i, seed);
                if ((rc = MPI_Pready_range(p, p + len - 1, sh.sreq)) != MPI_SUCCESS)
                    thread_fail(t, rc, "MPI_Pready_range", p);
                p += len;
            }
            break;
        default:                /* own quarter, one Pready_list in random order */
            for (int p = lo; p < hi; p++) {
                mine[nm++] = p;
                fill_part(p, seed);
            }
            pt_shuffle(mine, nm, &rng);
            if ((rc = MPI_Pready_list(nm, mine, sh.sreq)) != MPI_SUCCESS) thread_fail(t, rc, "MPI_Pready_list", lo);
            break;
        }
        pthread_barrier_wait(&sh.done);
    }
    return NULL;
}

static void run(const tcase_t *c, int id, int iters)
{
    size_t bytes = c->n * c->dt->extent, pbytes = c->n / (size_t)c->pr * c->dt->extent;
    unsigned char *rbuf = xmalloc(bytes + PT_GUARD), *exp = xmalloc(bytes + PT_GUARD);
    unsigned char *sexp = xmalloc(bytes + PT_GUARD);
    char *arrived = xmalloc((size_t)c->pr), msg[400];
    MPI_Request rq[2];
    MPI_Status st[2];
    int rc;
    sh.c = c;
    sh.id = id;
    sh.sbuf = xmalloc(bytes + PT_GUARD);
    case_begin("part_threads np=%d (%d x %zu -> %d x %zu %s, Pready from %d threads)", wsize, c->ps,
               c->n / (size_t)c->ps, c->pr, c->n / (size_t)c->pr, c->dt->name, NTHREADS);
    watchdog_arm(150, "part_threads np=%d %d -> %d partitions, %d iterations", wsize, c->ps, c->pr, iters);
    rc = MPI_Psend_init(sh.sbuf, c->ps, (MPI_Count)(c->n / (size_t)c->ps), c->dt->type, dst, 50 + id, comm,
                        MPI_INFO_NULL, &rq[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Precv_init(rbuf, c->pr, (MPI_Count)(c->n / (size_t)c->pr), c->dt->type, src, 50 + id, comm,
                            MPI_INFO_NULL, &rq[1]);
    if (!all_ok(comm, rc == MPI_SUCCESS)) {
        case_fail(-1, "init returned %s", err_class_str(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sh.sreq = rq[0];
    for (int it = 0; it < iters; it++) {
        uint64_t rseed = pt_seed(id, it, src, 0);
        int to = 0, left = c->pr;
        memset(rbuf, POISON_RECV, bytes + PT_GUARD);
        pt_expect(exp, bytes, c->dt, c->n, rseed);
        memset(sh.sbuf, JUNK_SEND, bytes + PT_GUARD);
        memset(sexp, JUNK_SEND, bytes + PT_GUARD);
        pt_fill(sexp, c->dt, 0, c->n, pt_seed(id, it, wrank, 0));
        memset(arrived, 0, (size_t)c->pr);
        rc = MPI_Startall(2, rq);
        if (rc != MPI_SUCCESS) {
            case_fail(it, "MPI_Startall returned %s", err_class_str(rc));
            break;
        }
        sh.it = it;
        pthread_barrier_wait(&sh.start);
        /* the main thread polls while the workers ready */
        double t0 = now_sec();
        while (left > 0 && !case_failed) {
            for (int j = 0; j < c->pr; j++) {
                int flag = 0;
                if (arrived[j]) continue;
                rc = MPI_Parrived(rq[1], j, &flag);
                if (rc != MPI_SUCCESS) {
                    case_fail(it, "MPI_Parrived(%d) returned %s", j, err_class_str(rc));
                    break;
                }
                if (!flag) continue;
                arrived[j] = 1;
                left--;
                n_checks++;
                if (pt_cmp(rbuf, exp, (size_t)j * pbytes, (size_t)(j + 1) * pbytes, c->dt, msg, sizeof msg))
                    case_fail(it, "receive partition %d reported arrived, but %s", j, msg);
            }
            if (now_sec() - t0 > PT_POLL_LIMIT) {
                case_fail(it, "%d receive partitions never reported arrived", left);
                break;
            }
        }
        pthread_barrier_wait(&sh.done);
        for (int t = 0; t < NTHREADS; t++)
            if (sh.err[t] != MPI_SUCCESS) {
                case_fail(it, "thread %d: %s returned %s", t, sh.errwhat[t], err_class_str(sh.err[t]));
                sh.err[t] = MPI_SUCCESS;
            }
        rc = pt_complete(it % 2 ? CM_TESTALL : CM_WAITALL, 2, rq, st, &to);
        if (rc != MPI_SUCCESS) {
            case_fail(it, "completion: %s%s", err_class_str(rc), to ? " (timed out)" : "");
            break;
        }
        pt_check_status(&st[1], src, 50 + id, c->dt->type, (MPI_Count)c->n, it);
        n_checks += 2;
        if (pt_cmp(rbuf, exp, 0, bytes + PT_GUARD, c->dt, msg, sizeof msg))
            case_fail(it, "receive buffer: %s", msg);
        if (pt_cmp(sh.sbuf, sexp, 0, bytes + PT_GUARD, c->dt, msg, sizeof msg))
            case_fail(it, "send buffer (written by the threads) differs from its expected contents: %s", msg);
        if (!all_ok(comm, !case_failed)) break;
    }
    case_free_req(&rq[0]);
    case_free_req(&rq[1]);
    free(rbuf);
    free(exp);
    free(sexp);
    free(arrived);
    free(sh.sbuf);
}

int main(int argc, char **argv)
{
    int provided = 0, iters = 200;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (wrank == 0)
            printf("SKIP part_threads: the library provides thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Finalize();
        return 77;
    }
    watchdog_init("part_threads", wrank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1 && atoi(argv[1]) > 0) iters = atoi(argv[1]);
    abort_unless(types_create() == MPI_SUCCESS, "the derived datatypes");
    pt_ring(&comm, &dst, &src);

    pthread_t th[NTHREADS];
    pthread_barrier_init(&sh.start, NULL, NTHREADS + 1);
    pthread_barrier_init(&sh.done, NULL, NTHREADS + 1);
    for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    const tcase_t cases[] = {
        { 64, 64, 64 * 64, &T_INT },
        { 64, 8, 64 * 256, &T_INT },
        { 16, 48, 48 * 20, &T_STRUCTH },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        run(&cases[i], i, iters);
        MPI_Barrier(comm);
    }
    sh.stop = 1;
    pthread_barrier_wait(&sh.start);
    for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);

    int status = pt_report("part_threads");
    types_free();
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return status;
}
