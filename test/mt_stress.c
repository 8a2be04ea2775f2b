/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * mt_stress: pnbc's requests driven from many threads at once under
 * MPI_THREAD_MULTIPLE (a library that does not provide it is a FAIL).
 *
 *   mt_stress [iterations per worker thread] [Pready iterations] [re-init period]
 *                                     (defaults 10000, 2000 and 25)
 *
 * Phase "mix": 4 worker threads, each on its own communicator (dup'ed
 * before the threads start), run their iterations concurrently.  Each
 * worker keeps a set of persistent requests -- an allreduce, a bcast, one
 * of 7 other persistent collectives (allgather, alltoall, reduce, scan,
 * reduce_scatter_block, gather, scatter; which one, the counts, the root
 * and the op vary with the thread and the generation), a partitioned
 * send/receive pair (ring: to rank+1, from rank-1) and a bound channel
 * pair (ring) -- freed and initialised again every 25 iterations (the
 * re-init period; 400 generations per thread by default); every eighth
 * re-init the worker also replaces its communicator by a dup of it
 * (MPI_Comm_dup, MPI_Comm_free in the thread, concurrently with the
 * others' traffic: coll modules made and destroyed at once).
 * Iteration i runs, by i % 6: the allreduce; the bcast or the other
 * collective; a nonblocking collective (MPI_Iallreduce, _Ibcast,
 * _Iallgather, _Ialltoall, _Ireduce; coll/pnbc's schedule cache); the
 * partitioned pair (MPI_Pready in order, MPI_Pready_list reversed, or
 * MPI_Pready_range, sometimes polling MPI_Parrived); the channels (in odd
 * generations K-slack channels, K = 2..4, with 1..K starts in flight); or all
 * seven persistent requests in one MPI_Startall.  Completion mostly by
 * loops of MPI_Test, _Testall, _Testany or _Testsome, one time in 16 by
 * MPI_Wait or MPI_Waitall; one nonblocking collective in 8 is handed to the
 * partner thread (t ^ 1), which completes and frees it while this thread
 * completes the partner's.  Every input depends on (thread, iteration,
 * rank) and every result is checked against values computed locally.  Meanwhile the main thread, on its own communicator, is "the
 * waiter": per round (ROUNDS rounds) it starts a persistent allreduce and
 * a partitioned pair whose send partitions the 4 workers ready only at
 * the end of their batch of iterations, and waits on them (MPI_Wait each,
 * MPI_Waitall, or loops of MPI_Test, _Testall, _Testany, _Testsome, by
 * round) while the workers start and complete their own requests; then it
 * checks them.
 *
 * Phase "pready8": one partitioned send of 64 partitions readied by 8
 * threads at once (strided partitions in order, reversed, as one
 * MPI_Pready_list, or a contiguous block with MPI_Pready_range) while the
 * main thread polls MPI_Parrived on the receive (64 or 16 partitions,
 * alternating) and checks each partition as soon as it is reported, then
 * the whole buffer after MPI_Waitall; each of the 8 threads, once its
 * partitions are readied, polls MPI_Parrived on a stripe of the receive
 * partitions too and checks them.
 *
 * A SIGALRM watchdog (re-armed every round) prints what every thread was
 * doing and exits when a round hangs.  MT_STRESS_VERBOSE=1 prints a line
 * per round.  mt_stress.h holds the helpers and the workers' request set.
 */
#include "mt_stress.h"

#define ROUNDS 20           /* waiter rounds of the mix phase */
static long reinit = 25;    /* iterations between re-inits of a worker's requests */
static long iters = 10000, p8iters = 2000;
static int verbose;         /* MT_STRESS_VERBOSE=1: a line per round */
static double t_start;

/* Hand-off of nonblocking requests between the workers t and t ^ 1: each
 * completes (MPI_Test loop, which frees it) the request its partner
 * started, so instances go back to the schedule cache from another thread
 * than the one that took them.  seq: the iteration whose request is in
 * `req`; done: the iteration whose request the partner completed. */
static struct {
    MPI_Request req;
    long seq, done;
} mbox[NW];

static void spin_until(long *v, long want, int t, const char *what, long it)
{
    note(t + 1, "iteration %ld: waiting for thread %d to %s", it, t ^ 1, what);
    while (__atomic_load_n(v, __ATOMIC_ACQUIRE) != want) sched_yield();
}

static void handoff(worker_t *w, long it, MPI_Request *rq)
{
    const int t = w->t;
    int flag = 0;
    mbox[t].req = *rq;
    __atomic_store_n(&mbox[t].seq, it, __ATOMIC_RELEASE);
    spin_until(&mbox[t ^ 1].seq, it, t, "hand over its request", it);
    MPI_Request theirs = mbox[t ^ 1].req;
    while (!flag) CK(MPI_Test(&theirs, &flag, MPI_STATUS_IGNORE));
    if (MPI_REQUEST_NULL != theirs) fail("thread %d iteration %ld: partner's request not freed", t, it);
    __atomic_store_n(&mbox[t ^ 1].done, it, __ATOMIC_RELEASE);
    spin_until(&mbox[t].done, it, t, "complete this thread's request", it);
    *rq = MPI_REQUEST_NULL;
}

/* A nonblocking collective: kind and count from the iteration; every
 * eighth time completed by the partner thread (handoff). */
static void run_nbc(worker_t *w, long it)
{
    const unsigned wh = WHAT(K_NBC, w->t);
    const int kind = (int) ((it / 6 + w->t) % 5), n = 1 + (int) ((it / 30) % 4), S = w->size, me = w->rank;
    const int root = (int) (it % S);
    int exp[CMAX * MAXNP];
    MPI_Request rq;
    for (int k = 0; k < n * S; k++) {
        w->nb_s[k] = V(wh, it, me, k);
        w->nb_r[k] = POISON;
        exp[k] = POISON;
    }
    switch (kind) {
    case 0:
        CK(MPI_Iallreduce(w->nb_s, w->nb_r, n, MPI_INT, MPI_SUM, w->comm, &rq));
        for (int k = 0; k < n; k++) {
            exp[k] = 0;
            for (int r = 0; r < S; r++) exp[k] += V(wh, it, r, k);
        }
        break;
    case 1:
        if (me != root)
            for (int k = 0; k < n; k++) w->nb_s[k] = POISON;
        CK(MPI_Ibcast(w->nb_s, n, MPI_INT, root, w->comm, &rq));
        break;
    case 2:
        CK(MPI_Iallgather(w->nb_s, n, MPI_INT, w->nb_r, n, MPI_INT, w->comm, &rq));
        for (int r = 0; r < S; r++)
            for (int k = 0; k < n; k++) exp[r * n + k] = V(wh, it, r, k);
        break;
    case 3:
        CK(MPI_Ialltoall(w->nb_s, n, MPI_INT, w->nb_r, n, MPI_INT, w->comm, &rq));
        for (int r = 0; r < S; r++)
            for (int k = 0; k < n; k++) exp[r * n + k] = V(wh, it, r, me * n + k);
        break;
    default:
        CK(MPI_Ireduce(w->nb_s, w->nb_r, n, MPI_INT, MPI_MAX, root, w->comm, &rq));
        if (me == root)
            for (int k = 0; k < n; k++) {
                exp[k] = 0;
                for (int r = 0; r < S; r++) exp[k] = V(wh, it, r, k) > exp[k] ? V(wh, it, r, k) : exp[k];
            }
        break;
    }
    if (5 == (it / 6) % 8) {
        handoff(w, it, &rq);
    } else {
        complete(w_method(it), 1, &rq);
    }
    if (MPI_REQUEST_NULL != rq) fail("thread %d iteration %ld: nonblocking request not freed", w->t, it);
    static const char *nm[] = { "MPI_Iallreduce", "MPI_Ibcast", "MPI_Iallgather", "MPI_Ialltoall", "MPI_Ireduce" };
    if (1 == kind) {
        for (int k = 0; k < n; k++) exp[k] = V(wh, it, root, k);
        expect(w->nb_s, exp, n, nm[kind], w->t, it);
    } else {
        expect(w->nb_r, exp, n * S, nm[kind], w->t, it);     /* the rest must keep the poison */
    }
}

static void w_iteration(worker_t *w, long it)
{
    const int method = w_method(it);
    MPI_Request all[7];
    int flag;
    switch (it % 6) {
    case 0:
        fill_ar(w, it);
        CK(MPI_Start(&w->ar));
        complete(method, 1, &w->ar);
        check_ar(w, it);
        break;
    case 1:
        if ((it / 6) % 2) {
            fill_bc(w, it);
            CK(MPI_Start(&w->bc));
            complete(method, 1, &w->bc);
            check_bc(w, it);
        } else {
            fill_x(w, it);
            CK(MPI_Startall(1, &w->x));
            complete(method, 1, &w->x);
            check_x(w, it);
        }
        break;
    case 2:
        run_nbc(w, it);
        break;
    case 3:
        for (int k = 0; k < w->nparts * w->pcount; k++) w->pr_b[k] = POISON;
        all[0] = w->pr;
        all[1] = w->ps;
        CK(MPI_Startall(2, all));
        ready_pt(w, it);
        if ((it / 6) % 4 == 3) {      /* poll every partition's arrival first */
            for (int p = 0; p < w->nparts; p++)
                for (flag = 0; !flag;) CK(MPI_Parrived(w->pr, p, &flag));
        }
        complete(method, 2, all);
        check_pt(w, it);
        break;
    case 4: {   /* m starts of each side (receives first: ready semantics), then complete */
        const int m = 1 + (int) ((it / 6) % w->ch_k);
        fill_ch(w, it, m);
        for (int j = 0; j < m; j++) CK(MPIX_Start_slack(&w->ch[1]));
        for (int j = 0; j < m; j++) CK(MPIX_Start_slack(&w->ch[0]));
        complete(method, 2, (MPI_Request[]) { w->ch[0], w->ch[1] });
        check_ch(w, it, m);
        break;
    }
    default:
        fill_ar(w, it);
        fill_bc(w, it);
        fill_x(w, it);
        fill_ch(w, it, 1);
        for (int k = 0; k < w->nparts * w->pcount; k++) w->pr_b[k] = POISON;
        all[0] = w->x; all[1] = w->ch[1]; all[2] = w->pr; all[3] = w->ar;
        all[4] = w->ps; all[5] = w->bc; all[6] = w->ch[0];
        CK(MPI_Startall(7, all));
        ready_pt(w, it);
        complete(method, 7, all);
        check_ar(w, it);
        check_bc(w, it);
        check_x(w, it);
        check_pt(w, it);
        check_ch(w, it, 1);
        break;
    }
}

/* ---------------------------------------------------------------- mix phase */
static struct {
    worker_t w[NW];
    pthread_barrier_t go, done;
    MPI_Request wps;            /* the waiter's send, readied by the workers */
    int wps_b[2 * NW * 2];      /* 2*NW partitions of 2 ints */
    long per_round;
} mx;

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    long it = 0;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&mx.go);
        for (long end = (round + 1) * mx.per_round; it < end && it < iters; it++) {
            if (0 == it % reinit) {
                note(w->t + 1, "re-init generation %ld (iteration %ld)", it / reinit, it);
                if (it > 0) w_free(w);
                w->gen = it / reinit;
                if (7 == w->gen % 8) {  /* a new communicator, made and freed in this thread */
                    MPI_Comm nc;
                    note(w->t + 1, "MPI_Comm_dup / MPI_Comm_free (generation %ld)", w->gen);
                    CK(MPI_Comm_dup(w->comm, &nc));
                    CK(MPI_Comm_free(&w->comm));
                    w->comm = nc;
                }
                w_init(w);
            }
            note(w->t + 1, "iteration %ld kind %ld (%s, gen %ld)", it, it % 6, x_names[w->x_kind], w->gen);
            w_iteration(w, it);
        }
        /* ready this thread's partitions of the waiter's send */
        note(w->t + 1, "readying the waiter's partitions, round %d", round);
        for (int p = w->t; p < 2 * NW; p += NW) {
            for (int k = 2 * p; k < 2 * p + 2; k++) mx.wps_b[k] = V(WHAT(K_WAIT, 0), round, w->rank, k);
            CK(MPI_Pready(p, mx.wps));
        }
        pthread_barrier_wait(&mx.done);
    }
    w_free(w);
    note(w->t + 1, "done");
    return NULL;
}

static void phase_mix(MPI_Comm wcomm[NW], MPI_Comm cm)
{
    pthread_t th[NW];
    int rank, size, wpr_b[2 * NW * 2], ar_s[4], ar_r[4];
    MPI_Request rq[3];   /* wpr, wps, allreduce */
    MPI_Comm_rank(cm, &rank);
    MPI_Comm_size(cm, &size);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    mx.per_round = (iters + ROUNDS - 1) / ROUNDS;
    CK(MPI_Psend_init(mx.wps_b, 2 * NW, 2, MPI_INT, next, 3, cm, MPI_INFO_NULL, &mx.wps));
    CK(MPI_Precv_init(wpr_b, NW, 4, MPI_INT, prev, 3, cm, MPI_INFO_NULL, &rq[0]));
    CK(MPI_Allreduce_init(ar_s, ar_r, 4, MPI_INT, MPI_SUM, cm, MPI_INFO_NULL, &rq[2]));
    pthread_barrier_init(&mx.go, NULL, NW + 1);
    pthread_barrier_init(&mx.done, NULL, NW + 1);
    for (int t = 0; t < NW; t++) {
        worker_t *w = &mx.w[t];
        memset(w, 0, sizeof *w);
        w->t = t;
        w->comm = wcomm[t];
        MPI_Comm_rank(w->comm, &w->rank);
        MPI_Comm_size(w->comm, &w->size);
        w->next = (w->rank + 1) % w->size;
        w->prev = (w->rank + w->size - 1) % w->size;
        pthread_create(&th[t], NULL, worker_main, w);
    }
    for (int round = 0; round < ROUNDS; round++) {
        alarm(WD_SECS);
        for (int k = 0; k < 2 * NW * 2; k++) wpr_b[k] = POISON;
        for (int k = 0; k < 4; k++) {
            ar_s[k] = V(WHAT(K_WAR, 0), round, rank, k);
            ar_r[k] = POISON;
        }
        rq[1] = mx.wps;
        CK(MPI_Startall(3, rq));
        pthread_barrier_wait(&mx.go);
        note(0, "waiter round %d: method %d on the partitioned pair and the allreduce", round, round % 6);
        complete(round, 3, rq);    /* completes only once the peer's workers end their batch */
        pthread_barrier_wait(&mx.done);
        int exp[2 * NW * 2];
        for (int k = 0; k < 2 * NW * 2; k++) exp[k] = V(WHAT(K_WAIT, 0), round, prev, k);
        expect(wpr_b, exp, 2 * NW * 2, "waiter's partitioned receive", -1, round);
        for (int k = 0; k < 4; k++) {
            exp[k] = 0;
            for (int r = 0; r < size; r++) exp[k] += V(WHAT(K_WAR, 0), round, r, k);
        }
        expect(ar_r, exp, 4, "waiter's persistent allreduce", -1, round);
        if (verbose) printf("mt_stress rank %d: round %d done at %.1f s\n", wrank, round, MPI_Wtime() - t_start);
    }
    for (int t = 0; t < NW; t++) pthread_join(th[t], NULL);
    CK(MPI_Request_free(&rq[0]));
    CK(MPI_Request_free(&mx.wps));
    CK(MPI_Request_free(&rq[2]));
    pthread_barrier_destroy(&mx.go);
    pthread_barrier_destroy(&mx.done);
}

/* ---------------------------------------------------------------- pready8 phase */
#define P8N 64          /* send partitions */
#define P8C 2           /* ints per send partition */
static struct {
    MPI_Request ps[2], pr;      /* pr: this iteration's receive */
    int sbuf[P8N * P8C], *rbuf, *exp, nr;
    long it;
    int rank, stop;
    pthread_barrier_t go, done;
} p8;

static void *p8_main(void *arg)
{
    const int t = (int) (intptr_t) arg;
    int mine[P8N / NP8];
    for (;;) {
        pthread_barrier_wait(&p8.go);
        if (p8.stop) break;
        const long it = p8.it;
        const int mode = (int) (it / 2 % 4);
        MPI_Request ps = p8.ps[it % 2];
        note(t + 1, "pready8 iteration %ld mode %d", it, mode);
        for (int j = 0; j < P8N / NP8; j++) {
            int p = 3 == mode ? t * (P8N / NP8) + j : t + NP8 * (1 == mode ? P8N / NP8 - 1 - j : j);
            mine[j] = p;
            for (int k = p * P8C; k < (p + 1) * P8C; k++) p8.sbuf[k] = V(WHAT(K_P8, 0), it, p8.rank, k);
            if (mode < 2) CK(MPI_Pready(p, ps));
        }
        if (2 == mode) CK(MPI_Pready_list(P8N / NP8, mine, ps));
        if (3 == mode) CK(MPI_Pready_range(mine[0], mine[P8N / NP8 - 1], ps));
        /* then poll MPI_Parrived on a stripe of the receive too (the main
         * thread polls all of it at the same time) */
        note(t + 1, "pready8 iteration %ld: MPI_Parrived on receive partitions %d + 8k", it, t);
        const int per = P8N * P8C / p8.nr;
        for (int q = t; q < p8.nr; q += NP8) {
            for (int flag = 0; !flag;) CK(MPI_Parrived(p8.pr, q, &flag));
            expect(p8.rbuf + q * per, p8.exp + q * per, per, "pready8 receive partition (worker's MPI_Parrived)", t,
                   it);
        }
        pthread_barrier_wait(&p8.done);
    }
    return NULL;
}

static void phase_pready8(MPI_Comm c)
{
    int size, rbuf[P8N * P8C], exp[P8N * P8C];
    static const int nrecv[2] = { P8N, 16 };
    MPI_Request pr[2];
    pthread_t th[NP8];
    MPI_Comm_rank(c, &p8.rank);
    MPI_Comm_size(c, &size);
    const int next = (p8.rank + 1) % size, prev = (p8.rank + size - 1) % size;
    for (int j = 0; j < 2; j++) {
        CK(MPI_Psend_init(p8.sbuf, P8N, P8C, MPI_INT, next, 20 + j, c, MPI_INFO_NULL, &p8.ps[j]));
        CK(MPI_Precv_init(rbuf, nrecv[j], P8N * P8C / nrecv[j], MPI_INT, prev, 20 + j, c, MPI_INFO_NULL, &pr[j]));
    }
    pthread_barrier_init(&p8.go, NULL, NP8 + 1);
    pthread_barrier_init(&p8.done, NULL, NP8 + 1);
    for (int t = 0; t < NP8; t++) pthread_create(&th[t], NULL, p8_main, (void *) (intptr_t) t);
    for (long it = 0; it < p8iters; it++) {
        const int j = (int) (it % 2), nr = nrecv[j], per = P8N * P8C / nr;
        char seen[P8N] = { 0 };
        int left = nr;
        if (0 == it % 20) alarm(WD_SECS);
        for (int k = 0; k < P8N * P8C; k++) {
            rbuf[k] = POISON;
            exp[k] = V(WHAT(K_P8, 0), it, prev, k);
        }
        MPI_Request rq[2] = { pr[j], p8.ps[j] };
        CK(MPI_Startall(2, rq));
        p8.it = it;
        p8.pr = pr[j];
        p8.nr = nr;
        p8.rbuf = rbuf;
        p8.exp = exp;
        note(0, "pready8 iteration %ld: polling MPI_Parrived on %d partitions", it, nr);
        pthread_barrier_wait(&p8.go);
        while (left > 0) {
            for (int q = 0; q < nr; q++) {
                int flag = 0;
                if (seen[q]) continue;
                CK(MPI_Parrived(pr[j], q, &flag));
                if (!flag) continue;
                seen[q] = 1;
                left--;
                char what[64];
                snprintf(what, sizeof what, "pready8 receive partition %d (reported arrived)", q);
                expect(rbuf + q * per, exp + q * per, per, what, -1, it);
            }
        }
        note(0, "pready8 iteration %ld: MPI_Waitall", it);
        CK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        pthread_barrier_wait(&p8.done);
        expect(rbuf, exp, P8N * P8C, "pready8 receive buffer", -1, it);
    }
    p8.stop = 1;
    pthread_barrier_wait(&p8.go);
    for (int t = 0; t < NP8; t++) pthread_join(th[t], NULL);
    for (int j = 0; j < 2; j++) {
        CK(MPI_Request_free(&p8.ps[j]));
        CK(MPI_Request_free(&pr[j]));
    }
    pthread_barrier_destroy(&p8.go);
    pthread_barrier_destroy(&p8.done);
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Comm wcomm[NW], cm, c8;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("FAIL mt_stress rank %d: MPI_Init_thread provided thread level %d, not MPI_THREAD_MULTIPLE (%d)\n",
               wrank, provided, MPI_THREAD_MULTIPLE);
        MPI_Finalize();
        return 1;
    }
    if (wsize > MAXNP) {
        if (0 == wrank) printf("FAIL mt_stress: at most %d ranks\n", MAXNP);
        MPI_Finalize();
        return 1;
    }
    if (argc > 1 && atol(argv[1]) > 0) iters = atol(argv[1]);
    if (argc > 2 && atol(argv[2]) >= 0) p8iters = atol(argv[2]);
    if (argc > 3 && atol(argv[3]) > 0) reinit = atol(argv[3]);
    verbose = NULL != getenv("MT_STRESS_VERBOSE");
    t_start = MPI_Wtime();
    signal(SIGALRM, on_alarm);
    alarm(WD_SECS);
    note(0, "setup");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* every thread's communicator, before any thread starts */
    for (int t = 0; t < NW; t++) CK(MPI_Comm_dup(MPI_COMM_WORLD, &wcomm[t]));
    CK(MPI_Comm_dup(MPI_COMM_WORLD, &cm));
    CK(MPI_Comm_dup(MPI_COMM_WORLD, &c8));

    double t0 = MPI_Wtime();
    phase_mix(wcomm, cm);
    double t1 = MPI_Wtime();
    alarm(WD_SECS);
    note(0, "between the phases");
    CK(MPI_Barrier(MPI_COMM_WORLD));
    phase_pready8(c8);
    double t2 = MPI_Wtime();
    alarm(WD_SECS);
    note(0, "final");

    long f = nfail, tot = 0;
    MPI_Allreduce(&f, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == wrank)
        printf("%s mt_stress np=%d: mix %d threads x %ld iterations (%.1f s), waiter %d rounds, pready8 %d threads x "
               "%ld iterations (%.1f s), %ld failures\n", tot ? "FAIL" : "PASS", wsize, NW, iters, t1 - t0, ROUNDS,
               NP8, p8iters, t2 - t1, tot);
    for (int t = 0; t < NW; t++) MPI_Comm_free(&mx.w[t].comm);    /* (a dup of wcomm[t] by now) */
    MPI_Comm_free(&cm);
    MPI_Comm_free(&c8);
    MPI_Finalize();
    return tot ? 1 : 0;
}
