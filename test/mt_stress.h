/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * mt_stress.h: part of mt_stress.c (included once, by it): the reporting
 * shared by its threads (failure lines, the watchdog's per-thread notes),
 * the data every rank can compute for every peer, the completion calls,
 * and the request set of one worker thread: its persistent collectives,
 * partitioned pair and channel pair, their init/free, inputs and checks.
 */
#ifndef PNBC_MT_STRESS_H
#define PNBC_MT_STRESS_H

#include "pnbc_mpi4.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NW 4            /* worker threads of the mix phase */
#define NP8 8           /* threads readying one request in phase pready8 */
#define CMAX 8          /* largest count per rank */
#define MAXNP 16
#define WD_SECS 60      /* watchdog per round */
#define POISON (-7)

static int wrank, wsize;
static volatile long nfail;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------- report */
static char state[NP8 + 1][120];     /* what each thread is doing (watchdog) */

static void note(int slot, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(state[slot], sizeof state[slot], fmt, ap);
    va_end(ap);
}

static void on_alarm(int sig)
{
    char line[NP8 + 1][160];
    (void) sig;
    for (int s = 0; s <= NP8; s++) {
        int n = snprintf(line[s], sizeof line[s], "WATCHDOG mt_stress rank %d: no progress in %d s; "
                         "thread %d: %s\n", wrank, WD_SECS, s, state[s][0] ? state[s] : "-");
        if (n > 0 && write(STDOUT_FILENO, line[s], (size_t) n) < 0) break;
    }
    _exit(124);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&print_lock);
    if (nfail++ < 30) {
        printf("FAIL mt_stress rank %d: ", wrank);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
    }
    pthread_mutex_unlock(&print_lock);
}

/* An MPI error is fatal: the peers would wait for this rank forever. */
#define CK(call)                                                                       \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (MPI_SUCCESS != rc_) {                                                      \
            char es_[MPI_MAX_ERROR_STRING];                                            \
            int el_ = 0;                                                               \
            MPI_Error_string(rc_, es_, &el_);                                          \
            fail("%s returned %d (%s) at line %d", #call, rc_, es_, __LINE__);         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

/* ---------------------------------------------------------------- data */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Element k sent by `rank` for (what, iteration): small and >= 0, so that
 * sums over ranks cannot overflow.  what = kind << 8 | thread. */
static int V(unsigned what, long it, int rank, int k)
{
    return (int) (mix64(mix64(((uint64_t) what << 40) ^ (uint64_t) it) ^ ((uint64_t) rank << 20 | (unsigned) k)) &
                  0x3fff);
}

enum { K_AR = 1, K_BC, K_X, K_NBC, K_PT, K_CH, K_WAIT, K_WAR, K_P8 };
#define WHAT(kind, t) ((unsigned) (kind) << 8 | (unsigned) (t))

static void expect(const int *got, const int *exp, int n, const char *what, int t, long it)
{
    for (int k = 0; k < n; k++) {
        if (got[k] != exp[k]) {
            fail("thread %d iteration %ld %s: element %d of %d is %d, expected %d", t, it, what, k, n, got[k],
                 exp[k]);
            return;
        }
    }
}

/* Complete n started requests, by method % 6: MPI_Wait each, MPI_Waitall,
 * or loops of MPI_Test each, MPI_Testall, MPI_Testany, MPI_Testsome. */
static void complete(int method, int n, MPI_Request *rq)
{
    int flag = 0, idx, outc, idxs[8], done = 0;
    switch (method % 6) {
    case 0:
        for (int j = 0; j < n; j++) CK(MPI_Wait(&rq[j], MPI_STATUS_IGNORE));
        break;
    case 1:
        CK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        break;
    case 2:
        for (int j = 0; j < n; j++)
            for (flag = 0; !flag;) CK(MPI_Test(&rq[j], &flag, MPI_STATUS_IGNORE));
        break;
    case 3:
        while (!flag) CK(MPI_Testall(n, rq, &flag, MPI_STATUSES_IGNORE));
        break;
    case 4:     /* until every request is done (then: flag with MPI_UNDEFINED) */
        while (done < n) {
            CK(MPI_Testany(n, rq, &idx, &flag, MPI_STATUS_IGNORE));
            if (flag && MPI_UNDEFINED == idx) break;
            done += flag;
        }
        if (done != n) fail("MPI_Testany: %d of %d requests reported complete", done, n);
        break;
    default:
        while (done < n) {
            CK(MPI_Testsome(n, rq, &outc, idxs, MPI_STATUSES_IGNORE));
            if (MPI_UNDEFINED == outc) break;
            done += outc;
        }
        if (done != n) fail("MPI_Testsome: %d of %d requests reported complete", done, n);
        break;
    }
}

/* The workers' completion method for iteration `it`: mostly Test loops;
 * MPI_Wait/MPI_Waitall one time in 16 (Open MPI 4.1's blocking wait with
 * several threads in it costs milliseconds per call on an oversubscribed
 * node, while a Test loop costs microseconds). */
static int w_method(long it)
{
    const int m = (int) ((it / 6) % 32);
    return m < 2 ? m : 2 + m % 4;
}

/* ---------------------------------------------------------------- worker */
typedef struct {
    int t, rank, size, next, prev;
    MPI_Comm comm;
    long gen;
    /* persistent collectives */
    MPI_Request ar, bc, x;
    int ar_n, ar_max, bc_n, bc_root, x_kind, x_n, x_root;
    int ar_s[CMAX], ar_r[CMAX], bc_b[CMAX], x_s[CMAX * MAXNP], x_r[CMAX * MAXNP];
    /* partitioned */
    MPI_Request ps, pr;
    int nparts, pcount;
    int ps_b[8 * 3], pr_b[8 * 3];
    /* channels */
    MPI_Request ch_in[2], ch[2];
    int ch_n, ch_k;             /* count per start; slackness K (1: plain channel) */
    long ch_starts;             /* starts of each side since the bind */
    int ch_s[CMAX * 4], ch_r[CMAX * 4];     /* K slots of ch_n */
    /* nonblocking */
    int nb_s[CMAX * MAXNP], nb_r[CMAX * MAXNP];
} worker_t;

static const char *x_names[] = { "allgather", "alltoall", "reduce", "scan", "reduce_scatter_block", "gather",
                                 "scatter" };

static void w_init(worker_t *w)
{
    const long g = w->gen;
    MPI_Comm c = w->comm;
    w->ar_n = 1 + (int) ((g + w->t) % CMAX);
    w->ar_max = (int) (g % 2);
    CK(MPI_Allreduce_init(w->ar_s, w->ar_r, w->ar_n, MPI_INT, w->ar_max ? MPI_MAX : MPI_SUM, c, MPI_INFO_NULL,
                          &w->ar));
    w->bc_n = 1 + (int) ((g * 3 + w->t) % CMAX);
    w->bc_root = (int) ((g + w->t) % w->size);
    CK(MPI_Bcast_init(w->bc_b, w->bc_n, MPI_INT, w->bc_root, c, MPI_INFO_NULL, &w->bc));
    w->x_kind = (int) ((g + w->t) % 7);
    w->x_n = 1 + (int) ((g / 7 + w->t) % 4);
    w->x_root = (int) ((g / 2) % w->size);
    const int n = w->x_n, r = w->x_root;
    switch (w->x_kind) {
    case 0: CK(MPI_Allgather_init(w->x_s, n, MPI_INT, w->x_r, n, MPI_INT, c, MPI_INFO_NULL, &w->x)); break;
    case 1: CK(MPI_Alltoall_init(w->x_s, n, MPI_INT, w->x_r, n, MPI_INT, c, MPI_INFO_NULL, &w->x)); break;
    case 2: CK(MPI_Reduce_init(w->x_s, w->x_r, n, MPI_INT, MPI_SUM, r, c, MPI_INFO_NULL, &w->x)); break;
    case 3: CK(MPI_Scan_init(w->x_s, w->x_r, n, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &w->x)); break;
    case 4: CK(MPI_Reduce_scatter_block_init(w->x_s, w->x_r, n, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &w->x)); break;
    case 5: CK(MPI_Gather_init(w->x_s, n, MPI_INT, w->x_r, n, MPI_INT, r, c, MPI_INFO_NULL, &w->x)); break;
    default: CK(MPI_Scatter_init(w->x_s, n, MPI_INT, w->x_r, n, MPI_INT, r, c, MPI_INFO_NULL, &w->x)); break;
    }
    w->nparts = (g % 2) ? 8 : 4;
    w->pcount = 1 + (int) (g % 3);
    CK(MPI_Psend_init(w->ps_b, w->nparts, w->pcount, MPI_INT, w->next, 5, c, MPI_INFO_NULL, &w->ps));
    CK(MPI_Precv_init(w->pr_b, w->nparts, w->pcount, MPI_INT, w->prev, 5, c, MPI_INFO_NULL, &w->pr));
    w->ch_n = 1 + (int) ((g + 2 * w->t) % CMAX);
    CK(MPI_Send_init(w->ch_s, w->ch_n, MPI_INT, w->next, 9, c, &w->ch_in[0]));
    CK(MPI_Recv_init(w->ch_r, w->ch_n, MPI_INT, w->prev, 9, c, &w->ch_in[1]));
    w->ch_k = (g % 2) ? 2 + (int) (g / 2 % 3) : 1;  /* odd generations: K-slack, K = 2..4 */
    w->ch_starts = 0;
    if (w->ch_k > 1) {
        CK(MPIX_Bind_slack_channels(w->ch_in, w->ch, 2, (int[]) { w->ch_k, w->ch_k }, NULL));
    } else {
        CK(MPIX_Bind_channels(w->ch_in, w->ch, 2, NULL));
    }
}

static void w_free(worker_t *w)
{
    CK(MPIX_Unbind_channels(w->ch, 2));
    CK(MPI_Request_free(&w->ch_in[0]));
    CK(MPI_Request_free(&w->ch_in[1]));
    CK(MPI_Request_free(&w->ar));
    CK(MPI_Request_free(&w->bc));
    CK(MPI_Request_free(&w->x));
    CK(MPI_Request_free(&w->ps));
    CK(MPI_Request_free(&w->pr));
}

/* Inputs of iteration it, poisoned outputs. */
static void fill_ar(worker_t *w, long it)
{
    for (int k = 0; k < w->ar_n; k++) {
        w->ar_s[k] = V(WHAT(K_AR, w->t), it, w->rank, k);
        w->ar_r[k] = POISON;
    }
}

static void check_ar(worker_t *w, long it)
{
    int exp[CMAX];
    for (int k = 0; k < w->ar_n; k++) {
        exp[k] = 0;
        for (int r = 0; r < w->size; r++) {
            int v = V(WHAT(K_AR, w->t), it, r, k);
            exp[k] = w->ar_max ? (v > exp[k] ? v : exp[k]) : exp[k] + v;
        }
    }
    expect(w->ar_r, exp, w->ar_n, w->ar_max ? "persistent allreduce MAX" : "persistent allreduce SUM", w->t, it);
}

static void fill_bc(worker_t *w, long it)
{
    for (int k = 0; k < w->bc_n; k++)
        w->bc_b[k] = w->rank == w->bc_root ? V(WHAT(K_BC, w->t), it, w->rank, k) : POISON;
}

static void check_bc(worker_t *w, long it)
{
    int exp[CMAX];
    for (int k = 0; k < w->bc_n; k++) exp[k] = V(WHAT(K_BC, w->t), it, w->bc_root, k);
    expect(w->bc_b, exp, w->bc_n, "persistent bcast", w->t, it);
}

/* The other collective: element k of rank r's input is V(r, k); inputs of
 * n*size elements where the collective sends a block per peer. */
static void fill_x(worker_t *w, long it)
{
    const int n = w->x_n, S = w->size, per_peer = (1 == w->x_kind || 4 == w->x_kind ||
                                                   (6 == w->x_kind && w->rank == w->x_root));
    for (int k = 0; k < (per_peer ? n * S : n); k++) w->x_s[k] = V(WHAT(K_X, w->t), it, w->rank, k);
    for (int k = 0; k < n * S; k++) w->x_r[k] = POISON;
}

static void check_x(worker_t *w, long it)
{
    const unsigned wh = WHAT(K_X, w->t);
    const int n = w->x_n, S = w->size, me = w->rank, root = w->x_root;
    int exp[CMAX * MAXNP];
    for (int k = 0; k < n * S; k++) exp[k] = POISON;
    switch (w->x_kind) {
    case 0:     /* allgather: block r is rank r's input */
        for (int r = 0; r < S; r++)
            for (int k = 0; k < n; k++) exp[r * n + k] = V(wh, it, r, k);
        break;
    case 1:     /* alltoall: block r is block `me` of rank r's input */
        for (int r = 0; r < S; r++)
            for (int k = 0; k < n; k++) exp[r * n + k] = V(wh, it, r, me * n + k);
        break;
    case 2:     /* reduce: the root has the sum, the others' buffer is untouched */
    case 3:     /* scan: sum over ranks 0..me */
    case 4:     /* reduce_scatter_block: block `me` of the sum */
        for (int k = 0; k < n; k++) {
            if (2 == w->x_kind && me != root) break;
            int s = 0, hi = 3 == w->x_kind ? me : S - 1, off = 4 == w->x_kind ? me * n : 0;
            for (int r = 0; r <= hi; r++) s += V(wh, it, r, off + k);
            exp[k] = s;
        }
        break;
    case 5:     /* gather at the root */
        if (me == root)
            for (int r = 0; r < S; r++)
                for (int k = 0; k < n; k++) exp[r * n + k] = V(wh, it, r, k);
        break;
    default:    /* scatter: block `me` of the root's input */
        for (int k = 0; k < n; k++) exp[k] = V(wh, it, root, me * n + k);
        break;
    }
    char what[64];
    snprintf(what, sizeof what, "persistent %s (root %d, count %d)", x_names[w->x_kind], root, n);
    expect(w->x_r, exp, n * S, what, w->t, it);   /* the rest must keep the poison */
}

static void fill_pt(worker_t *w, int p, long it)
{
    for (int k = p * w->pcount; k < (p + 1) * w->pcount; k++) w->ps_b[k] = V(WHAT(K_PT, w->t), it, w->rank, k);
}

static void ready_pt(worker_t *w, long it)
{
    int list[8], mode = (int) ((it / 6) % 3);
    if (0 == mode) {
        for (int p = 0; p < w->nparts; p++) {
            fill_pt(w, p, it);
            CK(MPI_Pready(p, w->ps));
        }
    } else if (1 == mode) {
        for (int p = 0; p < w->nparts; p++) {
            fill_pt(w, p, it);
            list[p] = w->nparts - 1 - p;
        }
        CK(MPI_Pready_list(w->nparts, list, w->ps));
    } else {
        for (int p = 0; p < w->nparts; p++) fill_pt(w, p, it);
        CK(MPI_Pready_range(0, w->nparts - 1, w->ps));
    }
}

static void check_pt(worker_t *w, long it)
{
    int exp[8 * 3], n = w->nparts * w->pcount;
    for (int k = 0; k < n; k++) exp[k] = V(WHAT(K_PT, w->t), it, w->prev, k);
    expect(w->pr_b, exp, n, "partitioned receive", w->t, it);
}

/* The channels' next m starts (m <= K): start j of iteration it sends
 * data (it * 8 + j) from slot (starts + j) % K; every receive slot poisoned. */
static void fill_ch(worker_t *w, long it, int m)
{
    for (int k = 0; k < w->ch_k * w->ch_n; k++) w->ch_r[k] = POISON;
    for (int j = 0; j < m; j++) {
        int *slot = w->ch_s + (w->ch_starts + j) % w->ch_k * w->ch_n;
        for (int k = 0; k < w->ch_n; k++) slot[k] = V(WHAT(K_CH, w->t), it * 8 + j, w->rank, k);
    }
}

/* After those m starts completed: the slots used hold the peer's data of
 * their start, the others the poison. */
static void check_ch(worker_t *w, long it, int m)
{
    int exp[CMAX * 4];
    for (int k = 0; k < w->ch_k * w->ch_n; k++) exp[k] = POISON;
    for (int j = 0; j < m; j++) {
        int *slot = exp + (w->ch_starts + j) % w->ch_k * w->ch_n;
        for (int k = 0; k < w->ch_n; k++) slot[k] = V(WHAT(K_CH, w->t), it * 8 + j, w->prev, k);
    }
    expect(w->ch_r, exp, w->ch_k * w->ch_n, w->ch_k > 1 ? "K-slack channel receive" : "channel receive", w->t, it);
    w->ch_starts += m;
}

#endif
