/*
 * lifecycle: request life-cycle semantics of persistent collectives.
 *
 * Sub-tests (each reported individually as "PASS|FAIL lifecycle/<name> np=N"):
 *   a-start-order         rank-dependent order of MPI_Start of 4 persistent
 *                         collectives (two of them identical allreduces)
 *   b-startall-permuted   MPI_Startall of 6 requests in a rank-dependent order
 *   c-mixed-p2p           persistent collectives + MPI_Send_init/MPI_Recv_init in
 *                         one MPI_Startall, completed with Waitall, Waitany,
 *                         Testall, Testany, Testsome, Waitsome, Test, Wait
 *   d-wait-never-started  Test/Wait/Waitall/Testall/Waitany on never-started
 *                         requests return at once with an empty status
 *   e-startall-active     MPI_Startall on an active request -> MPI_ERR_REQUEST
 *   e-start-active        MPI_Start on an active request -> MPI_ERR_REQUEST,
 *                         the request then still completes correctly
 *   f-free-active         MPI_Request_free on an active request ->
 *                         MPI_ERR_REQUEST, handle kept, completes, then frees
 *   g-free-never-started  MPI_Request_free of never-started / completed requests
 *   h-freed-type-op       user datatypes and user ops freed right after *_init
 *                         (and their memory recycled) -> results still right
 *   i-comm-self           all four collectives on MPI_COMM_SELF and a dup of it
 *
 * MPI_ERRORS_RETURN is set on MPI_COMM_WORLD (Open MPI reports
 * MPI_Request_free/MPI_Startall errors through it), MPI_COMM_SELF and every test
 * communicator.  Completion uses MPI_Test loops with a timeout (10 s) so one
 * broken sub-test does not hang the others; a SIGALRM watchdog ends the program
 * if a call never returns.  Sub-tests most likely to break an implementation
 * run last.
 *
 * Usage: lifecycle [name-or-letter ...]   (default: all; "e" selects both e-*)
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TMO 10.0
#define SUB_WATCHDOG 45

static int wrank, wsize;
static int sub_fail, n_pass, n_fail, tainted;
static char sub_name[64];
static uint64_t next_id = 1;

static void sfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sfail(const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sub_fail < 6) printf("  lifecycle/%s np=%d rank %d: %s\n", sub_name, wsize, wrank, msg);
    sub_fail++;
}

#define CHK(call)                                                                        \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS) sfail("line %d: %s -> %s", __LINE__, #call, err_class_str(rc_)); \
    } while (0)

static MPI_Comm sub_begin(const char *name)
{
    MPI_Comm c;
    snprintf(sub_name, sizeof sub_name, "%s", name);
    sub_fail = 0;
    watchdog_arm(SUB_WATCHDOG, "lifecycle/%s", name);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

static void sub_end(MPI_Comm *c)
{
    int f = sub_fail;
    int t = tainted;
    MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    tainted = t;
    if (f) n_fail++;
    else n_pass++;
    if (wrank == 0) printf("%s lifecycle/%s np=%d\n", f ? "FAIL" : "PASS", sub_name, wsize);
    if (!tainted && c && *c != MPI_COMM_NULL) MPI_Comm_free(c);
    watchdog_disarm();
    watchdog_note("lifecycle: after sub-test %s", sub_name);
}

/* 1 once TMO s have passed since t0: reports the hang and taints the run. */
static int hung_since(double t0, const char *what)
{
    if (now_sec() - t0 <= TMO) return 0;
    sfail("%s: not complete after %.0f s (hang)", what, TMO);
    tainted = 1;
    return 1;
}

/* MPI_Test loop with timeout.  0 = complete, -1 = timeout/error (reported). */
static int wait_tmo(MPI_Request *r, MPI_Status *st, const char *what)
{
    double t0 = now_sec();
    int flag = 0;
    MPI_Status dummy;
    for (;;) {
        int rc = MPI_Test(r, &flag, st ? st : &dummy);
        if (rc != MPI_SUCCESS) {
            sfail("%s: MPI_Test returned %s", what, err_class_str(rc));
            return -1;
        }
        if (flag) return 0;
        if (hung_since(t0, what)) return -1;
    }
}

/* the same with MPI_Testall */
static int waitall_tmo(int n, MPI_Request *r, const char *what)
{
    double t0 = now_sec();
    int flag = 0;
    for (;;) {
        int rc = MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) {
            sfail("%s: MPI_Testall returned %s", what, err_class_str(rc));
            return -1;
        }
        if (flag) return 0;
        if (hung_since(t0, what)) return -1;
    }
}

static int check_p(preq_t *p, int it, const char *what)
{
    char m[600];
    if (preq_check(p, it, m, sizeof m)) {
        sfail("%s: iteration %d: %s count=%d type=%s op=%s root=%d: %s", what, it, coll_name(p->coll),
              p->count, p->dt.name, op_name(p->opk), p->root, m);
        return 1;
    }
    return 0;
}

static int init_p(preq_t *p)
{
    int rc = preq_init(p, MPI_INFO_NULL);
    if (rc != MPI_SUCCESS) sfail("MPIX_%s_init returned %s", coll_name(p->coll), err_class_str(rc));
    return rc;
}

static void setup(preq_t *p, coll_t coll, MPI_Comm comm, const dtype_t *dt, opk_t opk, int count,
                  int root, int inplace)
{
    preq_setup(p, coll, comm, dt, opk, coll_op(coll, opk, dt), count, root, inplace, 0, next_id++);
}

static void free_p(preq_t *p)
{
    if (p->req != MPI_REQUEST_NULL && !tainted) {
        int rc = MPI_Request_free(&p->req);
        if (rc != MPI_SUCCESS) sfail("MPI_Request_free (inactive %s) returned %s", coll_name(p->coll), err_class_str(rc));
        else if (p->req != MPI_REQUEST_NULL) sfail("MPI_Request_free did not set MPI_REQUEST_NULL");
    }
    preq_release(p);
}

/* one ordinary start/complete/check round */
static int normal_round(preq_t *p, int it, const char *what)
{
    preq_prepare(p, it);
    int rc = MPI_Start(&p->req);
    if (rc != MPI_SUCCESS) {
        sfail("%s: MPI_Start returned %s", what, err_class_str(rc));
        return -1;
    }
    if (wait_tmo(&p->req, NULL, what)) return -1;
    return check_p(p, it, what) ? -1 : 0;
}

/* drive progress without completing a given request: blocking barriers on
 * another communicator and short sleeps */
static void progress_elsewhere(MPI_Comm side)
{
    for (int i = 0; i < 20; i++) {
        MPI_Barrier(side);
        usleep(1000);
    }
}

/* ================================================================ a */
static void test_a(void)
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
static void test_b(void)
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

static void test_c(void)
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

/* ================================================================ d */
static void check_empty_status(const MPI_Status *st, const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG || cnt != 0)
        sfail("%s: status not empty: source=%d tag=%d count=%d", what, st->MPI_SOURCE, st->MPI_TAG, cnt);
}

static void test_d(void)
{
    MPI_Comm c = sub_begin("d-wait-never-started");
    int n = wsize;
    enum { N = 4 };
    preq_t p[N];
    MPI_Request rq[N];
    MPI_Status st;
    setup(&p[0], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    setup(&p[1], C_BCAST, c, &T_INT, OP_NONE, 100, 0, 0);
    setup(&p[2], C_REDUCE, c, &T_DOUBLE, OP_SUM, 100, n - 1, 0);
    setup(&p[3], C_ALLREDUCE, c, &T_INT, OP_SUM, 100, 0, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    for (int i = 0; ok && i < N; i++) {
        int flag = 0;
        MPI_Request r = p[i].req;
        memset(&st, 0x55, sizeof st);
        int rc = MPI_Test(&p[i].req, &flag, &st);
        if (rc != MPI_SUCCESS || !flag) {
            sfail("MPI_Test on never-started %s: %s flag=%d (expected success, flag=1)", coll_name(p[i].coll),
                  err_class_str(rc), flag);
            ok = 0;             /* MPI_Wait would hang */
            break;
        }
        check_empty_status(&st, "MPI_Test on never-started request");
        if (p[i].req != r) sfail("MPI_Test on a never-started request changed the handle");
        double t0 = now_sec();
        memset(&st, 0x55, sizeof st);
        rc = MPI_Wait(&p[i].req, &st);
        double dt = now_sec() - t0;
        if (rc != MPI_SUCCESS) sfail("MPI_Wait on never-started %s returned %s", coll_name(p[i].coll), err_class_str(rc));
        else check_empty_status(&st, "MPI_Wait on never-started request");
        if (dt > 1.0) sfail("MPI_Wait on never-started %s took %.2f s", coll_name(p[i].coll), dt);
        if (p[i].req != r) sfail("MPI_Wait on a never-started request changed the handle");
    }
    if (ok && !sub_fail) {
        int flag = 0, idx = -5;
        for (int i = 0; i < N; i++) rq[i] = p[i].req;
        CHK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
        CHK(MPI_Testall(N, rq, &flag, MPI_STATUSES_IGNORE));
        if (!flag) sfail("MPI_Testall on never-started requests: flag=0");
        CHK(MPI_Waitany(N, rq, &idx, MPI_STATUS_IGNORE));
        if (idx != MPI_UNDEFINED) sfail("MPI_Waitany on never-started requests: index=%d, expected MPI_UNDEFINED", idx);
        for (int i = 0; i < N; i++)
            if (rq[i] != p[i].req) sfail("Waitall/Testall/Waitany on never-started requests changed handle %d", i);
        /* the requests still work, and completing them twice is harmless */
        for (int it = 0; it < 3 && !sub_fail; it++) {
            for (int i = 0; i < N; i++) preq_prepare(&p[i], it);
            int rc = MPI_Startall(N, rq);
            if (rc != MPI_SUCCESS) {
                sfail("MPI_Startall returned %s", err_class_str(rc));
                break;
            }
            if (waitall_tmo(N, rq, "d: waitall")) break;
            for (int i = 0; i < N; i++) check_p(&p[i], it, "d");
            for (int i = 0; i < N; i++) {
                double t0 = now_sec();
                CHK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
                if (now_sec() - t0 > 1.0) sfail("second MPI_Wait on a completed request took > 1 s");
            }
        }
    }
    for (int i = 0; i < N; i++) free_p(&p[i]);
    sub_end(&c);
}

/* ================================================================ e */
/* Is rc of the error class MPI_ERR_REQUEST? */
static int is_err_request(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls == MPI_ERR_REQUEST;
}

static void test_e_startall(void)
{
    MPI_Comm c = sub_begin("e-startall-active");
    preq_t p;
    setup(&p, C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    if (init_p(&p) == MPI_SUCCESS) {
        preq_prepare(&p, 0);
        CHK(MPI_Start(&p.req));
        MPI_Request r = p.req;
        int rc = MPI_Startall(1, &p.req);
        if (!is_err_request(rc))
            sfail("MPI_Startall on an active request returned %s, expected class MPI_ERR_REQUEST", err_class_str(rc));
        if (p.req != r) sfail("MPI_Startall on an active request changed the handle");
        if (p.req != MPI_REQUEST_NULL && !wait_tmo(&p.req, NULL, "e-startall: wait")) {
            check_p(&p, 0, "e-startall: after the failed second start");
            normal_round(&p, 1, "e-startall: next normal round");
        }
    }
    free_p(&p);
    sub_end(&c);
}

/* Start p (iteration `it`), optionally let it progress, then call MPI_Start
 * (e, use_free = 0) or MPI_Request_free (f, use_free = 1) on the active
 * request: class MPI_ERR_REQUEST, handle unchanged; the request then still
 * completes with the right result and runs a normal round (it + 1). */
static void misuse_active(preq_t *p, MPI_Comm side, int after_progress, int it, const char *what,
                          int use_free)
{
    const char *call = use_free ? "MPI_Request_free" : "MPI_Start";
    preq_prepare(p, it);
    int rc = MPI_Start(&p->req);
    if (rc != MPI_SUCCESS) {
        sfail("%s: %sMPI_Start returned %s", what, use_free ? "" : "first ", err_class_str(rc));
        return;
    }
    if (after_progress) progress_elsewhere(side);
    MPI_Request r = p->req;
    rc = use_free ? MPI_Request_free(&p->req) : MPI_Start(&p->req);
    if (!is_err_request(rc))
        sfail("%s: %s on an active %s request returned %s, expected class MPI_ERR_REQUEST", what, call,
              coll_name(p->coll), err_class_str(rc));
    if (p->req != r) {
        if (!use_free) {
            sfail("%s: MPI_Start on an active request changed the handle", what);
            return;
        }
        sfail("%s: MPI_Request_free on an active request changed the handle (%s)", what,
              p->req == MPI_REQUEST_NULL ? "set to MPI_REQUEST_NULL: the request was freed" : "changed");
        p->req = MPI_REQUEST_NULL;      /* can no longer be used */
        return;
    }
    if (wait_tmo(&p->req, NULL, what)) return;
    check_p(p, it, what);
    normal_round(p, it + 1, what);
}

static void test_e_start(void)
{
    MPI_Comm c = sub_begin("e-start-active");
    MPI_Comm side;
    int n = wsize;
    preq_t p[3];
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    setup(&p[0], C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    setup(&p[1], C_BCAST, c, &T_DOUBLE, OP_NONE, 100, n - 1, 0);
    setup(&p[2], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    int ok = 1;
    for (int i = 0; i < 3; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    /* second start after the operation had time to finish internally, then
     * second start immediately after the first */
    for (int i = 0; ok && i < 3 && !tainted; i++) misuse_active(&p[i], side, 1, 0, "e-start (after progress)", 0);
    for (int i = 0; ok && i < 3 && !tainted; i++) misuse_active(&p[i], side, 0, 2, "e-start (immediately)", 0);
    for (int i = 0; i < 3; i++) free_p(&p[i]);
    if (!tainted) MPI_Comm_free(&side);
    sub_end(&c);
}

/* ================================================================ f */
static void test_f(void)
{
    MPI_Comm c = sub_begin("f-free-active");
    MPI_Comm side;
    int n = wsize;
    enum { N = 4 };
    preq_t p[N];
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    setup(&p[0], C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
    setup(&p[1], C_BCAST, c, &T_DOUBLE, OP_NONE, 100, n - 1, 0);
    setup(&p[2], C_REDUCE, c, &T_INT, OP_SUM, 100, 0, 0);
    setup(&p[3], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    for (int i = 0; ok && i < N && !tainted; i++)
        if (p[i].req != MPI_REQUEST_NULL) misuse_active(&p[i], side, 0, 0, "f-free (immediately after start)", 1);
    for (int i = 0; ok && i < N && !tainted; i++)
        if (p[i].req != MPI_REQUEST_NULL) misuse_active(&p[i], side, 1, 2, "f-free (after progress)", 1);
    for (int i = 0; i < N; i++) free_p(&p[i]);
    if (!tainted) MPI_Comm_free(&side);
    sub_end(&c);
}

/* ================================================================ g */
static void test_g(void)
{
    MPI_Comm c = sub_begin("g-free-never-started");
    int n = wsize;
    for (int round = 0; round < 2; round++) {
        preq_t p[4];
        setup(&p[0], C_BARRIER, c, &T_INT, OP_NONE, 0, 0, 0);
        setup(&p[1], C_BCAST, c, &T_VECD, OP_NONE, 100, n - 1, 0);
        setup(&p[2], C_REDUCE, c, &T_MAT2H, OP_U_MATMUL, 100, 0, 0);
        setup(&p[3], C_ALLREDUCE, c, &T_DOUBLE, OP_SUM, 100, 0, 1);
        for (int i = 0; i < 4; i++) {
            if (init_p(&p[i]) != MPI_SUCCESS) continue;
            if (round == 1)             /* completed a few times, then freed */
                for (int it = 0; it < 3; it++)
                    if (normal_round(&p[i], it, "g (completed rounds)")) break;
            if (tainted) break;
            int rc = MPI_Request_free(&p[i].req);
            if (rc != MPI_SUCCESS)
                sfail("MPI_Request_free of a %s %s request returned %s", round ? "completed" : "never-started",
                      coll_name(p[i].coll), err_class_str(rc));
            else if (p[i].req != MPI_REQUEST_NULL)
                sfail("MPI_Request_free of a %s request did not set MPI_REQUEST_NULL", coll_name(p[i].coll));
        }
        for (int i = 0; i < 4; i++) preq_release(&p[i]);
    }
    /* many never-started requests freed in reverse order */
    enum { M = 50 };
    MPI_Request many[M];
    int buf[M];
    for (int i = 0; i < M; i++) CHK(MPIX_Allreduce_init(MPI_IN_PLACE, &buf[i], 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &many[i]));
    for (int i = M - 1; i >= 0 && !sub_fail; i--) {
        CHK(MPI_Request_free(&many[i]));
        if (many[i] != MPI_REQUEST_NULL) sfail("request %d not MPI_REQUEST_NULL after free", i);
    }
    /* the communicator still works */
    if (!sub_fail) {
        preq_t q;
        setup(&q, C_ALLREDUCE, c, &T_INT, OP_SUM, 1000, 0, 0);
        if (init_p(&q) == MPI_SUCCESS) normal_round(&q, 0, "g (after frees)");
        free_p(&q);
    }
    sub_end(&c);
}

/* ================================================================ h */
static void garbage_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)dt;
    memset(inout, 0x7f, (size_t)*len * 4);
}

static void test_h(void)
{
    MPI_Comm c = sub_begin("h-freed-type-op");
    int n = wsize;
    dtype_t d_h, d_v, d_s;
    enum { N = 5, NCLOB = 30, NOPS = 8 };
    preq_t p[N];
    MPI_Datatype clob[NCLOB];
    MPI_Op clob_op[NOPS];
    CHK(dtype_clone(&d_h, &T_MAT2H));
    CHK(dtype_clone(&d_v, &T_VECD));
    CHK(dtype_clone(&d_s, &T_STRUCTH));
    MPI_Op op_mm = op_create(OP_U_MATMUL, &T_MAT2H);    /* layout of d_h */
    MPI_Op op_ds = op_create(OP_U_DSUM, &T_VECD);       /* layout of d_v */
    preq_setup(&p[0], C_ALLREDUCE, c, &d_h, OP_U_MATMUL, op_mm, 17, 0, 0, 0, next_id++);
    preq_setup(&p[1], C_REDUCE, c, &d_h, OP_U_MATMUL, op_mm, 1000, n - 1, 0, 0, next_id++);
    preq_setup(&p[2], C_BCAST, c, &d_s, OP_NONE, MPI_OP_NULL, 50, 0, 0, 0, next_id++);
    preq_setup(&p[3], C_ALLREDUCE, c, &d_v, OP_U_DSUM, op_ds, 33, 0, 1, 0, next_id++);
    preq_setup(&p[4], C_REDUCE, c, &d_v, OP_U_DSUM, op_ds, 3, 0, 0, 1, next_id++);
    int ok = !sub_fail;
    for (int i = 0; i < N; i++) ok &= init_p(&p[i]) == MPI_SUCCESS;
    /* free the user objects right after init ... */
    CHK(MPI_Type_free(&d_h.type));
    CHK(MPI_Type_free(&d_v.type));
    CHK(MPI_Type_free(&d_s.type));
    CHK(MPI_Op_free(&op_mm));
    CHK(MPI_Op_free(&op_ds));
    if (d_h.type != MPI_DATATYPE_NULL || op_mm != MPI_OP_NULL) sfail("handles not set to NULL by the free calls");
    /* ... and recycle their memory with different objects */
    for (int i = 0; i < NCLOB; i++) {
        MPI_Datatype t;
        switch (i % 3) {
        case 0: MPI_Type_contiguous(1 + i, MPI_CHAR, &t); break;
        case 1: MPI_Type_vector(2 + i, 1, 3, MPI_SHORT, &t); break;
        default: MPI_Type_create_hvector(3, 2, 40 + i, MPI_FLOAT, &t); break;
        }
        MPI_Type_commit(&t);
        clob[i] = t;
    }
    for (int i = 0; i < NOPS; i++) MPI_Op_create(garbage_op, i % 2, &clob_op[i]);
    for (int it = 0; ok && it < 5; it++) {
        MPI_Request rq[N];
        for (int i = 0; i < N; i++) {
            preq_prepare(&p[i], it);
            rq[i] = p[i].req;
        }
        int rc = MPI_Startall(N, rq);
        if (rc != MPI_SUCCESS) {
            sfail("MPI_Startall returned %s", err_class_str(rc));
            break;
        }
        if (waitall_tmo(N, rq, "h: waitall")) break;
        for (int i = 0; i < N; i++) check_p(&p[i], it, "h (type/op freed after init)");
    }
    for (int i = 0; i < N; i++) free_p(&p[i]);
    for (int i = 0; i < NCLOB; i++) MPI_Type_free(&clob[i]);
    for (int i = 0; i < NOPS; i++) MPI_Op_free(&clob_op[i]);
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

static void test_i(void)
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

/* ================================================================ main */
typedef struct { const char *name; void (*fn)(void); } subtest_t;

int main(int argc, char **argv)
{
    /* ordered so that the sub-tests most likely to break an implementation
     * (and leave it unusable) run last */
    subtest_t all[] = {
        { "d-wait-never-started", test_d }, { "g-free-never-started", test_g },
        { "a-start-order", test_a },        { "b-startall-permuted", test_b },
        { "c-mixed-p2p", test_c },          { "i-comm-self", test_i },
        { "h-freed-type-op", test_h },      { "e-startall-active", test_e_startall },
        { "f-free-active", test_f },        { "e-start-active", test_e_start },
    };
    int nall = (int)(sizeof all / sizeof all[0]);
    test_init(&argc, &argv, "lifecycle", &wrank, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    abort_unless(types_create() == MPI_SUCCESS && ops_create() == MPI_SUCCESS, "test datatypes/ops");
    for (int k = 0; k < nall; k++) {
        int run = argc < 2;
        for (int a = 1; a < argc; a++)     /* full name, or its letter */
            if (!strcmp(all[k].name, argv[a]) || (strlen(argv[a]) == 1 && all[k].name[0] == argv[a][0]))
                run = 1;
        if (!run) continue;
        if (tainted) {
            if (wrank == 0) printf("FAIL lifecycle/%s np=%d: not run (an earlier sub-test left a request hanging)\n",
                                   all[k].name, wsize);
            n_fail++;
            continue;
        }
        all[k].fn();
    }
    if (wrank == 0) printf("lifecycle np=%d: %d sub-tests passed, %d failed\n", wsize, n_pass, n_fail);
    if (tainted) {
        /* a request is stuck: MPI_Finalize could hang */
        if (wrank == 0) printf("lifecycle: requests left hanging, exiting without MPI_Finalize\n");
        fflush(stdout);
        _exit(1);
    }
    watchdog_arm(60, "lifecycle: MPI_Finalize");
    ops_free();
    types_free();
    MPI_Finalize();
    return n_fail ? 1 : 0;
}
