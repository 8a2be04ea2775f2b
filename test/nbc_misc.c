/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * nbc_misc: nonblocking collectives beyond one call at a time, each
 * result checked against values computed locally (nbc_common.h):
 *
 *   outstanding  1000 MPI_Iallreduce with distinct arguments outstanding
 *                at once, twice (or ROUNDS times), of 2 longs each (or
 *                COUNT); 1000 outstanding
 *                MPI_Ibarrier (one key, an instance each); MPI_Ibcast with
 *                a different root each, outstanding together
 *   interleave   a persistent allreduce (MPIX_Allreduce_init + MPI_Start),
 *                MPI_Iallreduce, blocking MPI_Allreduce and MPI_Ibcast on
 *                one communicator, completed in another order; a receive
 *                with MPI_ANY_SOURCE/MPI_ANY_TAG posted throughout must get
 *                only the point-to-point message sent after them
 *   freed        derived datatype and user op freed by the user while a
 *                call using them is outstanding, and while cached
 *   memo         MPI_Iallreduce / MPI_Ibcast calls in which one argument at
 *                a time changes against the call before (op, datatype,
 *                count, in place, send buffer, root), each set repeated:
 *                a repeated call's instance is found by its arguments as
 *                passed (coll_pnbc_nbc.c), so none may stand for another
 *   comms        8 duplicates of the communicator (alike, so their calls
 *                carry the same tags), an MPI_Iallreduce and an MPI_Ibcast
 *                on each outstanding together, each rank calling them in
 *                its own order of communicators: the messages of all of
 *                them share a ring per pair of processes (the mailbox),
 *                told apart by their communicator
 *   inter        ibarrier, ibcast, iallreduce, ireduce, iallgather,
 *                ialltoall, igather, iscatter, iallgatherv, ialltoallv on an
 *                intercommunicator (2+ ranks)
 *
 * Usage: nbc_misc [part]   (default: all parts)
 *        nbc_misc outstanding ROUNDS [COUNT]
 */
#include "nbc_common.h"

#include <limits.h>

#if defined(MPICH_VERSION) && MPI_VERSION >= 4
#define MPIX_Allreduce_init MPI_Allreduce_init
#else
#include "pcoll_names.h"
#endif

#define NOUT 1000

static int wsize;

static void check_rc(int rc, const char *what)
{
    if (MPI_SUCCESS != rc) {
        nbc_fail("%s: error %d", what, rc);
    }
}

static void part_outstanding(MPI_Comm comm, int rounds, int n)
{
    long *s = nbc_alloc((size_t) NOUT * n), *r = nbc_alloc((size_t) NOUT * n);
    MPI_Request *req = malloc(NOUT * sizeof(MPI_Request));
    char what[96];

    for (int round = 0; round < rounds; ++round) {
        nbc_poison(r, (size_t) NOUT * n);
        for (int k = 0; k < NOUT; ++k) {
            for (int i = 0; i < n; ++i) s[k * n + i] = nbc_val(nbc_wrank, k * n + i, round);
            check_rc(MPI_Iallreduce(s + k * n, r + k * n, n, MPI_LONG, MPI_SUM, comm, &req[k]),
                     "MPI_Iallreduce outstanding");
        }
        check_rc(MPI_Waitall(NOUT, req, MPI_STATUSES_IGNORE), "MPI_Waitall iallreduce");
        for (int k = 0; k < NOUT * n; ++k) {
            long e = 0;
            for (int q = 0; q < wsize; ++q) e += nbc_val(q, k, round);
            if (r[k] != e) {
                snprintf(what, sizeof(what), "outstanding iallreduce round %d", round);
                nbc_fail("%s: element %d is %ld, expected %ld", what, k, r[k], e);
                break;
            }
        }
    }
    for (int k = 0; k < NOUT; ++k) {
        check_rc(MPI_Ibarrier(comm, &req[k]), "MPI_Ibarrier outstanding");
    }
    check_rc(MPI_Waitall(NOUT, req, MPI_STATUSES_IGNORE), "MPI_Waitall ibarrier");
    /* one bcast per root, all outstanding, completed in reverse order */
    nbc_poison(r, (size_t) NOUT * n);
    for (int root = 0; root < wsize; ++root) {
        for (int i = 0; i < n; ++i) {
            if (root == nbc_wrank) r[root * n + i] = nbc_val(root, i, 7);
        }
        check_rc(MPI_Ibcast(r + root * n, n, MPI_LONG, root, comm, &req[root]), "MPI_Ibcast");
    }
    for (int root = wsize - 1; root >= 0; --root) {
        check_rc(MPI_Wait(&req[root], MPI_STATUS_IGNORE), "MPI_Wait ibcast");
    }
    for (int root = 0; root < wsize; ++root) {
        for (int i = 0; i < n; ++i) {
            if (r[root * n + i] != nbc_val(root, i, 7)) {
                nbc_fail("ibcast root %d element %d is %ld", root, i, r[root * n + i]);
            }
        }
    }
    free(s);
    free(r);
    free(req);
}

static void part_comms(MPI_Comm comm)
{
    enum { NC = 8, N = 3 };
    MPI_Comm c[NC];
    long s[NC][N], r[NC][N], b[NC][N];
    MPI_Request rq[2 * NC];

    for (int k = 0; k < NC; ++k) {
        check_rc(MPI_Comm_dup(comm, &c[k]), "MPI_Comm_dup");
    }
    for (int it = 0; it < 30; ++it) {
        for (int j = 0; j < NC; ++j) {
            const int k = (j + nbc_wrank * 3 + it) % NC, root = (it + k) % wsize;
            for (int i = 0; i < N; ++i) {
                s[k][i] = nbc_val(nbc_wrank, i + 40 * k, it);
                r[k][i] = NBC_POISON;
                b[k][i] = (root == nbc_wrank) ? nbc_val(root, i + 40 * k + 20, it) : NBC_POISON;
            }
            check_rc(MPI_Iallreduce(s[k], r[k], N, MPI_LONG, MPI_SUM, c[k], &rq[2 * j]),
                     "MPI_Iallreduce comms");
            check_rc(MPI_Ibcast(b[k], N, MPI_LONG, root, c[k], &rq[2 * j + 1]), "MPI_Ibcast comms");
        }
        for (int j = 2 * NC - 1; j >= 0; --j) {
            check_rc(MPI_Wait(&rq[j], MPI_STATUS_IGNORE), "MPI_Wait comms");
        }
        for (int k = 0; k < NC; ++k) {
            const int root = (it + k) % wsize;
            for (int i = 0; i < N; ++i) {
                long e = 0;
                for (int q = 0; q < wsize; ++q) {
                    e += nbc_val(q, i + 40 * k, it);
                }
                if (r[k][i] != e || b[k][i] != nbc_val(root, i + 40 * k + 20, it)) {
                    nbc_fail("comms it %d communicator %d element %d: allreduce %ld/%ld bcast %ld/%ld",
                             it, k, i, r[k][i], e, b[k][i], nbc_val(root, i + 40 * k + 20, it));
                    break;
                }
            }
        }
    }
    for (int k = 0; k < NC; ++k) {
        MPI_Comm_free(&c[k]);
    }
}

static void part_interleave(MPI_Comm comm)
{
    enum { N = 4 };
    long ps[N] = { 0 }, pr[N] = { 0 }, is[N], ir[N], bs[N], br[N], bc[N], p2p = -1, e;
    MPI_Request preq, rq[3], anyreq;
    MPI_Status st;

    check_rc(MPIX_Allreduce_init(ps, pr, N, MPI_LONG, MPI_SUM, comm, MPI_INFO_NULL, &preq),
             "MPIX_Allreduce_init");
    check_rc(MPI_Irecv(&p2p, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &anyreq),
             "MPI_Irecv any");
    for (int it = 0; it < 50; ++it) {
        const int root = it % wsize;
        for (int i = 0; i < N; ++i) {
            ps[i] = nbc_val(nbc_wrank, i, it);
            is[i] = nbc_val(nbc_wrank, i + 10, it);
            bs[i] = nbc_val(nbc_wrank, i + 20, it);
            bc[i] = (root == nbc_wrank) ? nbc_val(root, i + 30, it) : NBC_POISON;
            pr[i] = ir[i] = br[i] = NBC_POISON;
        }
        check_rc(MPI_Start(&preq), "MPI_Start");
        check_rc(MPI_Iallreduce(is, ir, N, MPI_LONG, MPI_SUM, comm, &rq[0]), "MPI_Iallreduce");
        check_rc(MPI_Allreduce(bs, br, N, MPI_LONG, MPI_SUM, comm), "MPI_Allreduce");
        check_rc(MPI_Ibcast(bc, N, MPI_LONG, root, comm, &rq[1]), "MPI_Ibcast");
        rq[2] = preq;
        check_rc(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE), "MPI_Waitall mixed");
        for (int i = 0; i < N; ++i) {
            long ep = 0, ei = 0, eb = 0;
            for (int q = 0; q < wsize; ++q) {
                ep += nbc_val(q, i, it);
                ei += nbc_val(q, i + 10, it);
                eb += nbc_val(q, i + 20, it);
            }
            if (pr[i] != ep || ir[i] != ei || br[i] != eb || bc[i] != nbc_val(root, i + 30, it)) {
                nbc_fail("interleave it %d element %d: persistent %ld/%ld nonblocking %ld/%ld "
                         "blocking %ld/%ld bcast %ld", it, i, pr[i], ep, ir[i], ei, br[i], eb,
                         bc[i]);
                break;
            }
        }
    }
    int flag = 0;
    MPI_Test(&anyreq, &flag, &st);
    if (flag) {
        nbc_fail("a receive with MPI_ANY_TAG matched collective traffic (value %ld)", p2p);
    }
    MPI_Barrier(comm);      /* every rank has looked before anyone sends */
    /* now the point-to-point message: from the left neighbour, tag 5 */
    e = nbc_val((nbc_wrank + wsize - 1) % wsize, 99, 99);
    long out = nbc_val(nbc_wrank, 99, 99);
    check_rc(MPI_Send(&out, 1, MPI_LONG, (nbc_wrank + 1) % wsize, 5, comm), "MPI_Send");
    check_rc(MPI_Wait(&anyreq, &st), "MPI_Wait any");
    if (p2p != e || st.MPI_TAG != 5) {
        nbc_fail("point-to-point after collectives: %ld tag %d, expected %ld tag 5", p2p,
                 st.MPI_TAG, e);
    }
    MPI_Request_free(&preq);
}

static void sum2_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < 2 * *len; ++i) {
        ((long *) inout)[i] += ((const long *) in)[i];
    }
}

static void part_freed(MPI_Comm comm)
{
    long s[6], r[6];
    MPI_Request req;

    for (int it = 0; it < 6; ++it) {
        MPI_Datatype t;
        MPI_Op op;
        MPI_Type_contiguous(2, MPI_LONG, &t);
        MPI_Type_commit(&t);
        MPI_Op_create(sum2_fn, 1, &op);
        for (int rep = 0; rep < 3; ++rep) {     /* cached, then hits */
            for (int i = 0; i < 6; ++i) {
                s[i] = nbc_val(nbc_wrank, i, it * 3 + rep);
                r[i] = NBC_POISON;
            }
            check_rc(MPI_Iallreduce(s, r, 3, t, op, comm, &req), "MPI_Iallreduce freed");
            if (2 == rep) {     /* freed while outstanding (and while cached) */
                MPI_Type_free(&t);
                MPI_Op_free(&op);
            }
            check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait freed");
            for (int i = 0; i < 6; ++i) {
                long e = 0;
                for (int q = 0; q < wsize; ++q) e += nbc_val(q, i, it * 3 + rep);
                if (r[i] != e) {
                    nbc_fail("freed type/op it %d rep %d element %d: %ld, expected %ld", it, rep,
                             i, r[i], e);
                    break;
                }
            }
        }
    }
}

/* intercommunicator: group 0 = world ranks [0, h), group 1 = [h, wsize) */
static void part_inter(void)
{
    enum { N = 3 };
    const int h = wsize / 2, g = nbc_wrank >= h, lrank = g ? nbc_wrank - h : nbc_wrank;
    const int rfirst = g ? 0 : h, rsize = g ? h : wsize - h;
    MPI_Comm local, inter;
    MPI_Request req;
    long s[N * 8], r[N * 8];
    char what[64];

    MPI_Comm_split(MPI_COMM_WORLD, g, nbc_wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rfirst, 77, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    for (int it = 0; it < 20; ++it) {
        const char *colls[] = { "ibarrier", "ibcast", "iallreduce", "ireduce", "iallgather",
                                "ialltoall", "igather", "iscatter", "iallgatherv", "ialltoallv" };
        for (int c = 0; c < 10; ++c) {
            int cnt[8], dsp[8];
            long exp[N * 8];
            int rc = MPI_SUCCESS;
            nbc_poison(r, N * 8);
            nbc_poison(exp, N * 8);
            for (int i = 0; i < N * 8; ++i) s[i] = nbc_val(nbc_wrank, i, it);
            /* rooted ones: root is local rank 0 of group 0 */
            const int root = g ? 0 : (0 == lrank ? MPI_ROOT : MPI_PROC_NULL);
            switch (c) {
            case 0:
                rc = MPI_Ibarrier(inter, &req);
                break;
            case 1:
                for (int i = 0; i < N; ++i) {
                    if (MPI_ROOT == root) r[i] = exp[i] = nbc_val(0, i, it);
                    else if (g) exp[i] = nbc_val(0, i, it);
                }
                rc = MPI_Ibcast(r, N, MPI_LONG, root, inter, &req);
                break;
            case 2:
            case 3:
                for (int i = 0; i < N; ++i) {
                    long e = 0;
                    for (int q = 0; q < rsize; ++q) e += nbc_val(rfirst + q, i, it);
                    if (2 == c || MPI_ROOT == root) exp[i] = e;
                    else if (g) exp[i] = NBC_ANY;
                }
                rc = (2 == c) ? MPI_Iallreduce(s, r, N, MPI_LONG, MPI_SUM, inter, &req)
                              : MPI_Ireduce(s, r, N, MPI_LONG, MPI_SUM, root, inter, &req);
                break;
            case 4:
            case 5:
            case 6:
                for (int q = 0; q < rsize; ++q) {
                    for (int i = 0; i < N; ++i) {
                        long v = nbc_val(rfirst + q, (5 == c ? lrank * N : 0) + i, it);
                        if (6 != c || MPI_ROOT == root) exp[q * N + i] = v;
                    }
                }
                if (4 == c) rc = MPI_Iallgather(s, N, MPI_LONG, r, N, MPI_LONG, inter, &req);
                else if (5 == c) rc = MPI_Ialltoall(s, N, MPI_LONG, r, N, MPI_LONG, inter, &req);
                else rc = MPI_Igather(s, N, MPI_LONG, r, N, MPI_LONG, root, inter, &req);
                break;
            case 7:     /* root's block q goes to remote rank q */
                for (int i = 0; i < N && g; ++i) exp[i] = nbc_val(0, lrank * N + i, it);
                rc = MPI_Iscatter(s, N, MPI_LONG, r, N, MPI_LONG, root, inter, &req);
                break;
            case 8:     /* remote rank q sends N - q % 2 elements, block q at q * N */
                for (int q = 0; q < rsize; ++q) {
                    cnt[q] = N - q % 2;
                    dsp[q] = q * N;
                    for (int i = 0; i < cnt[q]; ++i) exp[q * N + i] = nbc_val(rfirst + q, i, it);
                }
                rc = MPI_Iallgatherv(s, N - lrank % 2, MPI_LONG, r, cnt, dsp, MPI_LONG, inter,
                                     &req);
                break;
            case 9:     /* to remote rank q: N - (lrank + q) % 2 elements of block q */
                for (int q = 0; q < rsize; ++q) {
                    cnt[q] = N - (lrank + q) % 2;
                    dsp[q] = q * N;
                    for (int i = 0; i < cnt[q]; ++i)
                        exp[q * N + i] = nbc_val(rfirst + q, lrank * N + i, it);
                }
                rc = MPI_Ialltoallv(s, cnt, dsp, MPI_LONG, r, cnt, dsp, MPI_LONG, inter, &req);
                break;
            }
            if (MPI_SUCCESS == rc) rc = nbc_complete(&req, it + c);
            snprintf(what, sizeof(what), "inter %s it %d", colls[c], it);
            check_rc(rc, what);
            nbc_compare(r, exp, N * 8, what);
        }
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

/* Argument sets that differ from the one before in one word each. */
static void part_memo(MPI_Comm comm)
{
    enum { N = 6, NSETS = 6 };
    long s[N], s2[N], r[N], e[N];
    int si[N], ri[N];

    for (int it = 0; it < 4 * NSETS; ++it) {
        const int set = it % NSETS, seed = 50 + it;
        MPI_Request req;
        for (int i = 0; i < N; ++i) {
            s[i] = nbc_val(nbc_wrank, i, seed);
            s2[i] = nbc_val(nbc_wrank, i, seed + 1000);
            r[i] = NBC_POISON;
            si[i] = (int) (s[i] % 1000);
            ri[i] = -1;
        }
        int n = N, rc;
        MPI_Op op = MPI_SUM;
        const long *src = s;
        switch (set) {
        case 0: rc = MPI_Iallreduce(s, r, N, MPI_LONG, MPI_SUM, comm, &req); break;
        case 1: op = MPI_MAX; rc = MPI_Iallreduce(s, r, N, MPI_LONG, MPI_MAX, comm, &req); break;
        case 2: n = N - 1; rc = MPI_Iallreduce(s, r, N - 1, MPI_LONG, MPI_SUM, comm, &req); break;
        case 3:
            src = s2;
            memcpy(r, s2, sizeof(r));
            rc = MPI_Iallreduce(MPI_IN_PLACE, r, N, MPI_LONG, MPI_SUM, comm, &req);
            break;
        case 4: src = s2; rc = MPI_Iallreduce(s2, r, N, MPI_LONG, MPI_SUM, comm, &req); break;
        default: rc = MPI_Iallreduce(si, ri, N, MPI_INT, MPI_SUM, comm, &req); break;
        }
        check_rc(rc, "MPI_Iallreduce memo");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait memo");
        for (int i = 0; i < N; ++i) {
            long x = (MPI_MAX == op) ? LONG_MIN : 0;
            for (int k = 0; k < wsize; ++k) {
                const long v = (5 == set) ? nbc_val(k, i, seed) % 1000
                             : nbc_val(k, i, (src == s2) ? seed + 1000 : seed);
                x = (MPI_MAX == op) ? (v > x ? v : x) : x + v;
            }
            e[i] = (i < n) ? x : NBC_POISON;
            if (5 == set) {
                r[i] = ri[i];
            }
        }
        if (0 != memcmp(r, e, sizeof(r))) {
            nbc_fail("memo allreduce set %d it %d: element 0 is %ld, expected %ld", set, it, r[0],
                     e[0]);
        }
        /* the same buffer broadcast from a root that changes every call */
        const int root = it % wsize;
        for (int i = 0; i < N; ++i) {
            r[i] = (root == nbc_wrank) ? nbc_val(root, i, seed) : NBC_POISON;
        }
        check_rc(MPI_Ibcast(r, N, MPI_LONG, root, comm, &req), "MPI_Ibcast memo");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait memo bcast");
        for (int i = 0; i < N; ++i) {
            if (r[i] != nbc_val(root, i, seed)) {
                nbc_fail("memo bcast root %d it %d element %d is %ld", root, it, i, r[i]);
                break;
            }
        }
    }
}

/* Messages whose middles read like headers of the mailbox ring's next
 * lap (np=2, run alone on a ring of `nunits` units, the test case's
 * coll_pnbc_nbc_mailbox_cells; the layout rules of
 * common_pnbc_shm_mbox.c: units of 128 bytes, a 32-byte header, a
 * message of more than a unit on whole pages of 32 units, none across
 * the ring's end).  Each word that lands on a unit's start holds the
 * stamp a header written there one lap later carries, and the words
 * after it say "skip a unit" (-1, 1: data as common as any); sizes vary,
 * so later messages start where earlier ones had their middles.  A
 * sender that did not clear such a place before the receiver looks there
 * makes the receiver take a middle for a header: it then passes the
 * message written there later (a hang) or takes wrong data. */
static void part_ring(MPI_Comm comm, long nunits)
{
    static const long sizes[] = { 8, 200, 1000, 4000, 8192, 96 };
    enum { CALLS = 3000, MAXL = 8192 / 8 };
    long *buf = malloc(MAXL * sizeof(long)), *want = malloc(MAXL * sizeof(long));
    unsigned long u = 0, rnd = 12345;
    int rank;

    MPI_Comm_rank(comm, &rank);
    for (int it = 0; it < CALLS && 0 == nbc_fails; ++it) {
        rnd = rnd * 6364136223846793005UL + 1442695040888963407UL;
        const long bytes = sizes[(rnd >> 33) % 6], n = bytes / 8;
        unsigned long k = (32 + bytes + 127) / 128;
        k = (k > 1) ? (k + 31) / 32 * 32 : 1;
        const unsigned long pos = u % (unsigned long) nunits;
        unsigned long skip = (k > 1) ? (32 - pos % 32) % 32 : 0;
        if (pos + skip + k > (unsigned long) nunits) {
            skip = (unsigned long) nunits - pos;
        }
        const unsigned long at = u + skip;
        for (long i = 0; i < n; ++i) {
            want[i] = nbc_val(0, i, it);
        }
        for (unsigned long j = 1; j < k && 128 * j - 32 + 24 <= (unsigned long) bytes; ++j) {
            long *h = &want[(128 * j - 32) / 8];
            h[0] = (long) (at + j + (unsigned long) nunits + 1);   /* full */
            h[1] = -1;                                              /* key: a skip */
            h[2] = 1;                                               /* of one unit */
        }
        u = at + k;
        if (0 == rank) {
            memcpy(buf, want, n * sizeof(long));
        } else {
            for (long i = 0; i < n; ++i) {
                buf[i] = NBC_POISON;
            }
        }
        MPI_Request req;
        check_rc(MPI_Ibcast(buf, (int) n, MPI_LONG, 0, comm, &req), "MPI_Ibcast ring");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait ring");
        for (long i = 0; i < n; ++i) {
            if (buf[i] != want[i]) {
                nbc_fail("ring call %d (%ld bytes) element %ld is %ld, not %ld", it, bytes, i,
                         buf[i], want[i]);
                break;
            }
        }
    }
    free(buf);
    free(want);
}

int main(int argc, char **argv)
{
    const char *only = (argc > 1) ? argv[1] : NULL;
    MPI_Comm comm;

    nbc_prog = "nbc_misc";
    wsize = nbc_start(&argc, &argv);
    if (NULL != only && !strcmp(only, "ring")) {
        /* (no MPI_Comm_dup first: its context id's agreement calls
         * MPI_Iallreduce, whose messages would go through the ring) */
        if (2 == wsize && argc > 2) {
            part_ring(MPI_COMM_WORLD, atol(argv[2]));
        }
        return nbc_finish(only, wsize);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    if (NULL == only || !strcmp(only, "outstanding")) {
        part_outstanding(comm, (NULL != only && argc > 2) ? atoi(argv[2]) : 2,
                         (NULL != only && argc > 3) ? atoi(argv[3]) : 2);
    }
    if (NULL == only || !strcmp(only, "interleave")) part_interleave(comm);
    if (NULL == only || !strcmp(only, "comms")) part_comms(comm);
    if (NULL == only || !strcmp(only, "freed")) part_freed(comm);
    if (NULL == only || !strcmp(only, "memo")) part_memo(comm);
    if ((NULL == only || !strcmp(only, "inter")) && wsize >= 2) part_inter();
    MPI_Comm_free(&comm);
    return nbc_finish(only, wsize);
}
