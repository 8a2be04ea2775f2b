/*
 * Copyright (c) 2026 The pnbc developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * ompi5_names.c: persistent collectives and partitioned communication
 * through Open MPI 5.0's own MPI-4 names (MPI_Allreduce_init, ...,
 * MPI_Psend_init, MPI_Pready_list, MPI_Parrived), built with plain mpicc:
 * no pnbc header, no pnbc library.  Whichever component Open MPI selects
 * serves the calls (coll/pnbc, part/pnbc when they are there); the cases
 * (cases.d/ompi5.sh) check from the verbose output which one did.
 *
 *   coll: allreduce (sum, max), bcast, allgather, alltoall, reduce at
 *         several counts, each request started NSTARTS times with new data,
 *         every element checked against values computed locally; barrier
 *         checked through a shared-memory window (no rank leaves round r
 *         before every rank has entered it, one rank late each round).
 *   part: each rank sends to its right neighbour and receives from its
 *         left one, with unequal partition counts on the two sides (two
 *         layouts), restarted PART_ROUNDS times with new data each round;
 *         the sender marks partitions ready in a random order with
 *         MPI_Pready, MPI_Pready_range or MPI_Pready_list; the receiver
 *         either polls MPI_Parrived and checks a partition's data as soon
 *         as flag=1, or only waits; every element is checked, the receive
 *         buffer is poisoned before every round.
 *
 * Usage: ompi5_names [coll|part|all]     (default all)
 * Prints "PASS ompi5_names <what>" on rank 0 when every check passed on
 * every rank, "FAIL ..." lines otherwise (exit status 1).
 */
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSTARTS 4
#define PART_ROUNDS 20
#define POISON (-0x5a5a5a5a)
#define MAX_REPORTS 12
#define POLL_LIMIT 3 /* seconds a receiver polls MPI_Parrived in one round */

static int rank, size;
static long nerr;

/* requests made per collective on each rank, printed for the cases */
enum { I_ALLREDUCE, I_BCAST, I_ALLGATHER, I_ALLTOALL, I_REDUCE, I_BARRIER, I_N };
static const char *const init_names[I_N] = { "allreduce", "bcast", "allgather",
                                             "alltoall", "reduce", "barrier" };
static int ninit[I_N];
static int npart_init; /* MPI_Psend_init calls (as many MPI_Precv_init) */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    if (nerr++ < MAX_REPORTS) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAIL rank %d: ", rank);
        vprintf(fmt, ap);
        printf("\n");
        fflush(stdout);
        va_end(ap);
    }
}

static void check_rc(int rc, const char *what)
{
    if (MPI_SUCCESS != rc) {
        fail("%s returned %d", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#define CALL(x) check_rc((x), #x)

static void watchdog(int sig)
{
    static const char msg[] = "WATCHDOG ompi5_names: no progress for 240 s\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0) {
        _exit(3);
    }
    _exit(3);
}

/* element i of rank r's contribution in start s (collectives) */
static int cval(int s, int r, long i)
{
    return (int)(((long)s * 7919 + (long)r * 104729 + i * 31) % 1000003) - 500000;
}

/* element i of the message rank r sends in partitioned round s */
static int pval(int s, int r, long i)
{
    return (int)((((long)s + 1) * 1000003 + (long)r * 7907 + i * 13) % 2000000011);
}

/* ---- persistent collectives ---- */

static const int counts[] = { 1, 7, 1000, 20000 };
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

/* MPI_Allreduce_init (root < 0) or MPI_Reduce_init to root, op sum or max:
 * the result checked on every rank (allreduce) or on the root, whose
 * receive buffer alone may be written (reduce) */
static void coll_reduction(int count, MPI_Op op, int root)
{
    const char *what = root < 0 ? "allreduce" : "reduce";
    const char *opname = op == MPI_SUM ? "sum" : "max";
    int *sb = calloc(count, sizeof(int)), *rb = calloc(count, sizeof(int));
    MPI_Request req;
    if (root < 0) {
        CALL(MPI_Allreduce_init(sb, rb, count, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        ninit[I_ALLREDUCE]++;
    } else {
        CALL(MPI_Reduce_init(sb, rb, count, MPI_INT, op, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &req));
        ninit[I_REDUCE]++;
    }
    for (int s = 0; s < NSTARTS; s++) {
        for (int i = 0; i < count; i++) {
            sb[i] = cval(s, rank, i);
            rb[i] = POISON;
        }
        CALL(MPI_Start(&req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < count; i++) {
            int want = cval(s, 0, i);
            for (int r = 1; r < size; r++) {
                int v = cval(s, r, i);
                want = (op == MPI_SUM) ? want + v : (v > want ? v : want);
            }
            if ((root < 0 || rank == root) && rb[i] != want) {
                fail("%s %s count %d root %d start %d elem %d: got %d want %d", what, opname,
                     count, root, s, i, rb[i], want);
            }
            if (root >= 0 && rank != root && rb[i] != POISON) {
                fail("reduce count %d root %d start %d: a non-root's receive buffer was written",
                     count, root, s);
                break;
            }
        }
    }
    CALL(MPI_Request_free(&req));
    free(sb);
    free(rb);
}

static void coll_bcast(int count, int root)
{
    int *b = malloc(count * sizeof(int));
    MPI_Request req;
    CALL(MPI_Bcast_init(b, count, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    ninit[I_BCAST]++;
    for (int s = 0; s < NSTARTS; s++) {
        for (int i = 0; i < count; i++) {
            b[i] = rank == root ? cval(s, root, i) : POISON;
        }
        CALL(MPI_Start(&req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < count; i++) {
            if (b[i] != cval(s, root, i)) {
                fail("bcast count %d root %d start %d elem %d: got %d want %d", count, root, s, i,
                     b[i], cval(s, root, i));
            }
        }
    }
    CALL(MPI_Request_free(&req));
    free(b);
}

static void coll_allgather(int count)
{
    int *sb = malloc(count * sizeof(int)), *rb = malloc((size_t)count * size * sizeof(int));
    MPI_Request req;
    CALL(MPI_Allgather_init(sb, count, MPI_INT, rb, count, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req));
    ninit[I_ALLGATHER]++;
    for (int s = 0; s < NSTARTS; s++) {
        for (int i = 0; i < count; i++) {
            sb[i] = cval(s, rank, i);
        }
        for (long i = 0; i < (long)count * size; i++) {
            rb[i] = POISON;
        }
        CALL(MPI_Start(&req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < count; i++) {
                if (rb[(long)r * count + i] != cval(s, r, i)) {
                    fail("allgather count %d start %d block %d elem %d: got %d want %d", count, s,
                         r, i, rb[(long)r * count + i], cval(s, r, i));
                }
            }
        }
    }
    CALL(MPI_Request_free(&req));
    free(sb);
    free(rb);
}

static void coll_alltoall(int count)
{
    long n = (long)count * size;
    int *sb = malloc(n * sizeof(int)), *rb = malloc(n * sizeof(int));
    MPI_Request req;
    CALL(MPI_Alltoall_init(sb, count, MPI_INT, rb, count, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &req));
    ninit[I_ALLTOALL]++;
    for (int s = 0; s < NSTARTS; s++) {
        for (long i = 0; i < n; i++) {
            sb[i] = cval(s, rank, i); /* block d goes to rank d */
            rb[i] = POISON;
        }
        CALL(MPI_Start(&req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < count; i++) {
                int want = cval(s, r, (long)rank * count + i);
                if (rb[(long)r * count + i] != want) {
                    fail("alltoall count %d start %d from %d elem %d: got %d want %d", count, s, r,
                         i, rb[(long)r * count + i], want);
                }
            }
        }
    }
    CALL(MPI_Request_free(&req));
    free(sb);
    free(rb);
}

/* Barrier: each rank writes the round it enters into a shared window before
 * MPI_Start; after MPI_Wait every rank must see every rank at that round or
 * later.  One rank (a different one each round) enters 20 ms late. */
static void coll_barrier(void)
{
    MPI_Comm node;
    MPI_Win win;
    volatile int *mine;
    int nsize;
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &nsize);
    MPI_Request req;
    CALL(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    ninit[I_BARRIER]++;
    if (nsize != size) { /* ranks on several hosts: only start and wait */
        for (int s = 0; s < NSTARTS; s++) {
            CALL(MPI_Start(&req));
            CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        CALL(MPI_Request_free(&req));
        MPI_Comm_free(&node);
        return;
    }
    int *base;
    CALL(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &win));
    mine = base;
    *mine = -1;
    volatile int *peer[64];
    for (int r = 0; r < size && r < 64; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        CALL(MPI_Win_shared_query(win, r, &sz, &du, &p));
        peer[r] = p;
    }
    CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < NSTARTS; s++) {
        if (rank == s % size) {
            usleep(20000);
        }
        *mine = s;
        MPI_Win_sync(win);
        CALL(MPI_Start(&req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MPI_Win_sync(win);
        for (int r = 0; r < size && r < 64; r++) {
            if (peer[r][0] < s) {
                fail("barrier start %d: left it while rank %d was still at round %d", s, r,
                     peer[r][0]);
            }
        }
    }
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Request_free(&req));
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

static void run_colls(void)
{
    for (int c = 0; c < NCOUNTS; c++) {
        coll_reduction(counts[c], MPI_SUM, -1);
        coll_reduction(counts[c], MPI_MAX, -1);
        coll_bcast(counts[c], c % size);
        coll_allgather(counts[c]);
        coll_alltoall(counts[c]);
        coll_reduction(counts[c], c % 2 ? MPI_MAX : MPI_SUM, (c + 1) % size);
    }
    coll_barrier();
}

/* ---- partitioned communication ---- */

static unsigned rnd_state;
static unsigned rnd(unsigned n)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 8) % n;
}

static void shuffle(int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((unsigned)i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* fill partition p (of count elements) of the send buffer for round s */
static void fill(int *sb, int p, int count, int s)
{
    for (int i = 0; i < count; i++) {
        sb[(long)p * count + i] = pval(s, rank, (long)p * count + i);
    }
}

/* Mark every send partition ready, in a random order, with the call the
 * round picks: 0 MPI_Pready one by one, 1 MPI_Pready_range over random
 * runs, 2 MPI_Pready_list over two shuffled halves.  Data is written just
 * before its partition is marked; now and then the sender pauses. */
static void send_round(MPI_Request sreq, int *sb, int parts, int count, int s)
{
    int order[256];
    for (int p = 0; p < parts; p++) {
        order[p] = p;
    }
    shuffle(order, parts);
    switch (s % 3) {
    case 0:
        for (int k = 0; k < parts; k++) {
            fill(sb, order[k], count, s);
            CALL(MPI_Pready(order[k], sreq));
            if (rnd(4) == 0) {
                usleep(300);
            }
        }
        break;
    case 1: {
        /* runs [lo, hi] cut at random, marked in a random order of runs */
        int lo[256], hi[256], nrun = 0;
        for (int p = 0; p < parts;) {
            int len = 1 + (int)rnd(3);
            if (p + len > parts) {
                len = parts - p;
            }
            lo[nrun] = p;
            hi[nrun] = p + len - 1;
            nrun++;
            p += len;
        }
        for (int k = 0; k < nrun; k++) {
            order[k] = k;
        }
        shuffle(order, nrun);
        for (int k = 0; k < nrun; k++) {
            for (int p = lo[order[k]]; p <= hi[order[k]]; p++) {
                fill(sb, p, count, s);
            }
            CALL(MPI_Pready_range(lo[order[k]], hi[order[k]], sreq));
            if (rnd(3) == 0) {
                usleep(300);
            }
        }
        break;
    }
    default: {
        int half = parts / 2;
        for (int k = 0; k < parts; k++) {
            fill(sb, order[k], count, s);
        }
        CALL(MPI_Pready_list(half, order, sreq));
        usleep(500);
        CALL(MPI_Pready_list(parts - half, order + half, sreq));
        break;
    }
    }
}

/* check receive partition p (of count elements) from rank src in round s */
static void check_part(const int *rb, int p, int count, int src, int s, const char *when)
{
    for (int i = 0; i < count; i++) {
        long e = (long)p * count + i;
        if (rb[e] != pval(s, src, e)) {
            fail("part round %d from %d receive partition %d (of %d ints) elem %d (%s): got %d "
                 "want %d%s", s, src, p, count, i, when, rb[e], pval(s, src, e),
                 rb[e] == POISON ? " (not written yet)"
                 : (s > 0 && rb[e] == pval(s - 1, src, e)) ? " (the previous round's data)" : "");
            return;
        }
    }
}

/* one layout: sparts x scount sent, rparts x rcount received (same total) */
static void run_part(int sparts, int scount, int rparts, int rcount)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long n = (long)sparts * scount;
    int *sb = malloc(n * sizeof(int)), *rb = malloc(n * sizeof(int));
    MPI_Request sreq, rreq;
    int tag = 100 + sparts;
    CALL(MPI_Precv_init(rb, rparts, rcount, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &rreq));
    CALL(MPI_Psend_init(sb, sparts, scount, MPI_INT, right, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &sreq));
    npart_init++;
    for (int s = 0; s < PART_ROUNDS; s++) {
        int poll = (rank + s) % 2 == 0;
        rnd_state = 2654435761u * (unsigned)(s + 1) + 40503u * (unsigned)rank + (unsigned)sparts;
        for (long i = 0; i < n; i++) {
            rb[i] = POISON;
        }
        CALL(MPI_Start(&rreq));
        CALL(MPI_Start(&sreq));
        send_round(sreq, sb, sparts, scount, s);
        if (poll) {
            char seen[256] = { 0 };
            int left_parts = rparts;
            double t0 = MPI_Wtime();
            while (left_parts > 0) {
                if (MPI_Wtime() - t0 > POLL_LIMIT) {
                    /* say which, then wait: the data check after MPI_Wait
                     * tells whether the data came */
                    char list[1024] = "";
                    for (int p = 0, o = 0; p < rparts && o < 1000; p++) {
                        if (!seen[p]) {
                            o += snprintf(list + o, sizeof list - o, " %d", p);
                        }
                    }
                    fail("part %dx%d -> %dx%d round %d: MPI_Parrived never said flag=1 in %d s "
                         "for receive partition(s)%s",
                         sparts, scount, rparts, rcount, s, POLL_LIMIT, list);
                    break;
                }
                for (int p = 0; p < rparts; p++) {
                    int flag = 0;
                    if (seen[p]) {
                        continue;
                    }
                    CALL(MPI_Parrived(rreq, p, &flag));
                    if (flag) {
                        check_part(rb, p, rcount, left, s, "right after MPI_Parrived flag=1");
                        seen[p] = 1;
                        left_parts--;
                    }
                }
            }
        }
        CALL(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        for (int p = 0; p < rparts; p++) {
            check_part(rb, p, rcount, left, s, poll ? "after MPI_Wait, polled" : "after MPI_Wait");
        }
        CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    CALL(MPI_Request_free(&sreq));
    CALL(MPI_Request_free(&rreq));
    free(sb);
    free(rb);
}

static void run_parts(void)
{
    run_part(8, 96, 12, 64);  /* more partitions on the receiving side */
    run_part(12, 64, 4, 192); /* fewer */
    run_part(6, 128, 6, 128); /* equal */
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int do_coll = !strcmp(what, "coll") || !strcmp(what, "all");
    int do_part = !strcmp(what, "part") || !strcmp(what, "all");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!do_coll && !do_part) {
        if (rank == 0) {
            fprintf(stderr, "usage: ompi5_names [coll|part|all]\n");
        }
        MPI_Finalize();
        return 2;
    }
    signal(SIGALRM, watchdog);
    alarm(240);
    if (do_coll) {
        run_colls();
    }
    if (do_part) {
        run_parts();
    }
    alarm(0);
    long total = 0;
    MPI_Allreduce(&nerr, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && do_coll) {
        printf("inits per rank:");
        for (int k = 0; k < I_N; k++) {
            printf(" %s_init=%d", init_names[k], ninit[k]);
        }
        printf("\n");
    }
    if (rank == 0 && do_part) {
        printf("part inits per rank: psend_init=%d precv_init=%d\n", npart_init, npart_init);
    }
    if (rank == 0) {
        if (total == 0) {
            printf("PASS ompi5_names %s (np %d)\n", what, size);
        } else {
            printf("FAIL ompi5_names %s (np %d): %ld check(s) failed\n", what, size, total);
        }
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
