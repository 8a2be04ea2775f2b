/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part_test: data correctness of partitioned communication at any np
 * (rank r sends to r+1 and receives from r-1, around a ring; at np=1 rank
 * 0 sends to itself).
 *
 *   part_test [data|staged|multi ...] [--no-early-bird]   (default: all three groups)
 *
 * data    send partitions x count = receive partitions x count with
 *         equal and unequal partition counts both ways (8->2, 2->8, 3->5,
 *         5->3, 64->1, 1->64, ...), 1 to 64 partitions, 8 B to 4 MiB,
 *         contiguous / vector / struct-with-holes types, zero count per
 *         partition; Pready in order, reversed, random, with Pready_range,
 *         with Pready_list, mixed; >= 3 starts each with new data; every
 *         MPI_Wait* / MPI_Test* family in turn; optional MPI_Parrived
 *         polling (a partition's bytes checked the moment it is reported).
 *         A partition's send data is written only right before its Pready
 *         (junk before), so an implementation reading data at MPI_Start
 *         fails.  Receive holes and a guard area must keep their poison;
 *         the send buffer must come back unchanged; status source/tag/count.
 * staged  the sender readies its partitions in 4 stages and tells the
 *         receiver (control messages on another communicator) after each,
 *         waiting for an acknowledgement before the next: the receiver
 *         checks that MPI_Parrived reports exactly the partitions covered
 *         by readied send partitions (never one that is not yet complete),
 *         and their data when it does (--no-early-bird: only that no
 *         partition is reported early, all after the last stage).
 * multi   several partitioned requests with the same (comm, tag, source),
 *         and one with another tag in between, with different partition
 *         counts: matched in init order even when started in another order
 *         (each receive buffer must hold the data of its own send).
 */
#include "part_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize, dst, src;
/* pnbc sends each partition as soon as it is ready, so a receive partition
 * must be reported arrived once the send partitions covering it are
 * readied, before the others are.  MPI allows delaying the transfer until
 * the whole message is ready, which MPICH 4.0.2 does (known): there, and
 * with --no-early-bird, the staged cases only check that no partition is
 * reported early, and that all are reported after the last stage. */
#ifdef MPICH_VERSION
static int early_bird = 0;
#else
static int early_bird = 1;
#endif
static MPI_Comm comm, ctrl;

typedef struct {
    const char *name;
    int ps, pr;                 /* send / receive partitions */
    size_t n;                   /* total elements */
    dtype_t *dt;
    pmode_t mode;
    int poll;                   /* receiver polls MPI_Parrived */
    int iters;
} dcase_t;

static const dcase_t data_cases[] = {
    { "8to2-int", 8, 2, 64, &T_INT, PM_INORDER, 0, 3 },
    { "2to8-int", 2, 8, 64, &T_INT, PM_RANDOM, 1, 3 },
    { "3to5-byte-15B", 3, 5, 15, &T_BYTE, PM_RANDOM, 1, 4 },
    { "5to3-byte", 5, 3, 4500, &T_BYTE, PM_LIST, 0, 3 },
    { "3to5-structh", 3, 5, 150, &T_STRUCTH, PM_LIST, 1, 3 },
    { "5to3-vecd", 5, 3, 300, &T_VECD, PM_RANGE, 0, 3 },
    { "1to1-8B", 1, 1, 8, &T_BYTE, PM_INORDER, 1, 3 },
    { "1to1-2int", 1, 1, 2, &T_INT, PM_INORDER, 0, 3 },
    { "64to64-double-512K", 64, 64, 65536, &T_DOUBLE, PM_RANDOM, 1, 3 },
    { "64to1-byte-4M", 64, 1, 4 << 20, &T_BYTE, PM_MIXED, 0, 3 },
    { "1to64-int-4M", 1, 64, 1 << 20, &T_INT, PM_INORDER, 1, 3 },
    { "16to4-contig3i", 16, 4, 144, &T_CONTIG3I, PM_REVERSE, 1, 3 },
    { "7to3-structh-1M", 7, 3, 42000, &T_STRUCTH, PM_MIXED, 1, 3 },
    { "33to11-vecd", 33, 11, 132, &T_VECD, PM_LIST, 0, 3 },
    { "48to64-long", 48, 64, 19200, &T_LONG, PM_RANGE, 1, 3 },
    { "64to2-vecd", 64, 2, 2048, &T_VECD, PM_RANGE, 1, 3 },
    { "2to64-structh", 2, 64, 1024, &T_STRUCTH, PM_RANDOM, 1, 3 },
    { "4to4-int-zero", 4, 4, 0, &T_INT, PM_RANDOM, 1, 3 },
    { "5to3-structh-zero", 5, 3, 0, &T_STRUCTH, PM_RANGE, 0, 3 },
    { "1to1-int-zero", 1, 1, 0, &T_INT, PM_INORDER, 1, 3 },
    { "32to32-int-256K", 32, 32, 65536, &T_INT, PM_MIXED, 0, 4 },
    { "8to8-vecd-4M", 8, 8, 131072, &T_VECD, PM_RANDOM, 1, 3 },
};
#define NDATA ((int)(sizeof data_cases / sizeof data_cases[0]))

/* ---------------------------------------------------------------- Parrived polling */
typedef struct {
    MPI_Request req;
    int pr;
    size_t pbytes;              /* bytes of one receive partition (extent * count) */
    const dtype_t *dt;
    unsigned char *rbuf, *exp;
    char *arrived;              /* reported so far */
    const char *covered;        /* staged: partitions that may be reported (NULL: all) */
    int it, nleft;
} poll_t;

/* One round of MPI_Parrived over the partitions not reported yet.  Returns
 * 0 after a failure. */
static int poll_round(poll_t *p)
{
    char msg[400];
    for (int j = 0; j < p->pr; j++) {
        int flag = 0;
        if (p->arrived[j]) continue;
        int rc = MPI_Parrived(p->req, j, &flag);
        if (rc != MPI_SUCCESS) {
            case_fail(p->it, "MPI_Parrived(%d) returned %s", j, err_class_str(rc));
            return 0;
        }
        if (!flag) continue;
        n_checks++;
        if (p->covered && !p->covered[j]) {
            case_fail(p->it, "MPI_Parrived reports receive partition %d before all send partitions "
                      "overlapping it were readied", j);
            return 0;
        }
        p->arrived[j] = 1;
        p->nleft--;
        /* the data of partition j must be complete the moment it is reported */
        if (pt_cmp(p->rbuf, p->exp, (size_t)j * p->pbytes, (size_t)(j + 1) * p->pbytes, p->dt, msg,
                   sizeof msg)) {
            case_fail(p->it, "receive partition %d reported arrived, but %s", j, msg);
            return 0;
        }
    }
    return 1;
}

/* Poll until every partition allowed by `covered` is reported. */
static int poll_until(poll_t *p, int want)
{
    double t0 = now_sec();
    while (p->nleft > p->pr - want) {
        if (!poll_round(p)) return 0;
        if (now_sec() - t0 > PT_POLL_LIMIT) {
            int j = 0;
            while (j < p->pr && (p->arrived[j] || (p->covered && !p->covered[j]))) j++;
            case_fail(p->it, "receive partition %d never reported arrived (%d of %d still missing) "
                      "after %.0f s of MPI_Parrived", j, p->nleft - (p->pr - want), want, PT_POLL_LIMIT);
            return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- common checks */
static void check_after(int it, int rc, int to, const char *how, MPI_Status *rst, int tag, const dcase_t *c,
                        const unsigned char *rbuf, const unsigned char *exp, const unsigned char *sbuf,
                        const unsigned char *sexp, size_t bytes)
{
    char msg[400];
    if (rc != MPI_SUCCESS) {
        case_fail(it, "%s: %s%s", how, err_class_str(rc), to ? " (no completion within the time limit)" : "");
        return;
    }
    pt_check_status(rst, src, tag, c->dt->type, (MPI_Count)c->n, it);
    n_checks++;
    if (pt_cmp(rbuf, exp, 0, bytes + PT_GUARD, c->dt, msg, sizeof msg))
        case_fail(it, "receive buffer (from rank %d): %s", src, msg);
    n_checks++;
    if (pt_cmp(sbuf, sexp, 0, bytes + PT_GUARD, c->dt, msg, sizeof msg))
        case_fail(it, "send buffer changed: %s", msg);
}

/* Both requests made on every rank, or neither (reports and frees). */
static int init_pair(const dcase_t *c, int id, void *sbuf, void *rbuf, int tag, MPI_Request *sreq,
                     MPI_Request *rreq)
{
    MPI_Count cs = c->n / (size_t)c->ps, cr = c->n / (size_t)c->pr;
    int rs, rr;
    *sreq = *rreq = MPI_REQUEST_NULL;
    if (id % 2) {
        rr = MPI_Precv_init(rbuf, c->pr, cr, c->dt->type, src, tag, comm, MPI_INFO_NULL, rreq);
        rs = MPI_Psend_init(sbuf, c->ps, cs, c->dt->type, dst, tag, comm, MPI_INFO_NULL, sreq);
    } else {
        rs = MPI_Psend_init(sbuf, c->ps, cs, c->dt->type, dst, tag, comm, MPI_INFO_NULL, sreq);
        rr = MPI_Precv_init(rbuf, c->pr, cr, c->dt->type, src, tag, comm, MPI_INFO_NULL, rreq);
    }
    if (rs != MPI_SUCCESS) case_fail(-1, "MPI_Psend_init returned %s", err_class_str(rs));
    if (rr != MPI_SUCCESS) case_fail(-1, "MPI_Precv_init returned %s", err_class_str(rr));
    if (all_ok(comm, rs == MPI_SUCCESS && rr == MPI_SUCCESS)) return 1;
    if (rs == MPI_SUCCESS) MPI_Request_free(sreq);
    if (rr == MPI_SUCCESS) MPI_Request_free(rreq);
    return 0;
}

/* Write send partition i's data, for every partition of plan group g. */
static void fill_group(const pt_plan_t *pl, int g, unsigned char *sbuf, const dcase_t *c, uint64_t seed)
{
    size_t cs = c->n / (size_t)c->ps;
    for (int k = pl->gstart[g]; k < pl->gstart[g + 1]; k++)
        pt_fill(sbuf, c->dt, (size_t)pl->order[k] * cs, (size_t)(pl->order[k] + 1) * cs, seed);
}

/* ---------------------------------------------------------------- data / staged */
static void run_case(const dcase_t *c, int id, int staged)
{
    size_t bytes = c->n * c->dt->extent;
    size_t cr = c->n / (size_t)c->pr, cs = c->n / (size_t)c->ps;
    unsigned char *sbuf = xmalloc(bytes + PT_GUARD), *rbuf = xmalloc(bytes + PT_GUARD);
    unsigned char *exp = xmalloc(bytes + PT_GUARD), *sexp = xmalloc(bytes + PT_GUARD);
    char *arrived = xmalloc((size_t)c->pr), *covered = xmalloc((size_t)c->pr), *peer_ready = xmalloc((size_t)c->ps);
    int tag = 100 + id;
    MPI_Request rq[2];
    MPI_Status st[2];

    case_begin("part_test %s %s np=%d (%d x %zu -> %d x %zu %s, %s, %s)", staged ? "staged" : "data", c->name, wsize,
               c->ps, cs, c->pr, cr, c->dt->name, pt_mode_name(staged ? PM_RANDOM : c->mode),
               staged || c->poll ? "Parrived polling" : "no polling");
    memset(sbuf, JUNK_SEND, bytes + PT_GUARD);
    memset(rbuf, JUNK_RECV, bytes + PT_GUARD);
    int sfirst = id % 3 != 0;   /* position of the send request in rq[] */
    if (!init_pair(c, id, sbuf, rbuf, tag, &rq[sfirst ? 0 : 1], &rq[sfirst ? 1 : 0])) goto out;
    MPI_Request *sreq = &rq[sfirst ? 0 : 1], *rreq = &rq[sfirst ? 1 : 0];
    for (int it = 0; it < c->iters; it++) {
        uint64_t sseed = pt_seed(id, it, wrank, 0), rseed = pt_seed(id, it, src, 0);
        int method = (id + it) % CM_N, to = 0, rc;
        memset(rbuf, POISON_RECV, bytes + PT_GUARD);
        pt_expect(exp, bytes, c->dt, c->n, rseed);
        memset(sbuf, JUNK_SEND, bytes + PT_GUARD);
        memset(sexp, JUNK_SEND, bytes + PT_GUARD);
        pt_fill(sexp, c->dt, 0, c->n, sseed);
        memset(arrived, 0, (size_t)c->pr);
        poll_t pl = { *rreq, c->pr, cr * c->dt->extent, c->dt, rbuf, exp, arrived, NULL, it, c->pr };

        rc = it % 2 ? MPI_Startall(2, rq) : MPI_Start(&rq[1]);
        if (rc == MPI_SUCCESS && it % 2 == 0) rc = MPI_Start(&rq[0]);
        if (rc != MPI_SUCCESS) {
            case_fail(it, "%s returned %s", it % 2 ? "MPI_Startall" : "MPI_Start", err_class_str(rc));
            break;
        }
        pt_plan_t plan, peer;
        pt_plan_make(&plan, c->ps, staged ? PM_RANDOM : c->mode, sseed);
        pt_plan_make(&peer, c->ps, PM_RANDOM, rseed);   /* staged: what the sender to us does */
        int nst = staged ? (c->ps < 4 ? c->ps : 4) : 1, ok = 1;
        memset(peer_ready, 0, (size_t)c->ps);
        for (int s = 0; s < nst; s++) {
            int g0 = plan.ngroups * s / nst, g1 = plan.ngroups * (s + 1) / nst;
            for (int g = g0; g < g1; g++) {
                fill_group(&plan, g, sbuf, c, sseed);
                rc = pt_plan_exec(&plan, g, *sreq);
                if (rc != MPI_SUCCESS && ok) {
                    case_fail(it, "MPI_Pready%s returned %s", plan.gkind[g] == 'r' ? "_range"
                              : plan.gkind[g] == 'l' ? "_list" : "", err_class_str(rc));
                    ok = 0;
                }
                if (ok && c->poll && !staged) ok = poll_round(&pl);
            }
            if (!staged) break;
            /* tell dst that stage s is readied; learn that src readied its stage s
             * (the control messages go on even after a failure: no peer hangs) */
            int mine = s, theirs = -1, want = 0;
            MPI_Sendrecv(&mine, 1, MPI_INT, dst, 1, &theirs, 1, MPI_INT, src, 1, ctrl, MPI_STATUS_IGNORE);
            if (theirs != s && ok) {
                case_fail(it, "control message out of step: stage %d, got %d", s, theirs);
                ok = 0;
            }
            for (int g = peer.ngroups * s / nst; g < peer.ngroups * (s + 1) / nst; g++)
                for (int k = peer.gstart[g]; k < peer.gstart[g + 1]; k++) peer_ready[peer.order[k]] = 1;
            for (int j = 0; j < c->pr; j++) {
                covered[j] = 1;
                if (cr == 0) continue;
                for (size_t i = (size_t)j * cr / cs; i <= ((size_t)(j + 1) * cr - 1) / cs; i++)
                    if (!peer_ready[i]) covered[j] = 0;
                want += covered[j];
            }
            pl.covered = covered;
            if (cr == 0) want = c->pr;
            /* without early-bird delivery only the last stage must show partitions */
            if (ok && (early_bird || s == nst - 1)) ok = poll_until(&pl, want);
            /* a few more rounds: an incomplete partition must not show up */
            for (int r = 0; r < 20 && ok; r++) ok = poll_round(&pl);
            MPI_Sendrecv(&mine, 1, MPI_INT, src, 2, &theirs, 1, MPI_INT, dst, 2, ctrl, MPI_STATUS_IGNORE);
        }
        pt_plan_free(&plan);
        pt_plan_free(&peer);
        if (ok && c->poll && !staged) ok = poll_until(&pl, c->pr);
        if (!ok) {              /* ready what is left so the peers can finish */
            for (int i = 0; i < c->ps; i++) MPI_Pready(i, *sreq);
        }
        rc = pt_complete(method, 2, rq, st, &to);
        char how[64];
        snprintf(how, sizeof how, "completion with MPI_%s", pt_method_name(method));
        check_after(it, rc, to, how, &st[sfirst ? 1 : 0], tag, c, rbuf, exp, sbuf, sexp, bytes);
        if (to || !all_ok(comm, !case_failed)) break;
    }
    case_free_req(&rq[0]);
    case_free_req(&rq[1]);
out:
    free(sbuf);
    free(rbuf);
    free(exp);
    free(sexp);
    free(arrived);
    free(covered);
    free(peer_ready);
    MPI_Barrier(comm);
}

static const dcase_t staged_cases[] = {
    { "8to2-int", 8, 2, 64, &T_INT, PM_RANDOM, 1, 3 },
    { "2to8-int", 2, 8, 64, &T_INT, PM_RANDOM, 1, 3 },
    { "3to5-structh", 3, 5, 150, &T_STRUCTH, PM_RANDOM, 1, 3 },
    { "5to3-vecd", 5, 3, 300, &T_VECD, PM_RANDOM, 1, 3 },
    { "7to7-byte", 7, 7, 7 * 100, &T_BYTE, PM_RANDOM, 1, 3 },
    { "64to64-int-1M", 64, 64, 1 << 18, &T_INT, PM_RANDOM, 1, 3 },
    { "16to48-double", 16, 48, 4800, &T_DOUBLE, PM_RANDOM, 1, 3 },
    { "1to4-int-64K", 1, 4, 16384, &T_INT, PM_RANDOM, 1, 3 },
};

/* ---------------------------------------------------------------- multi */
#define NMULTI 4                /* 3 with tag T, one with tag T+1 (index 1 on the send side) */
static void run_multi(int id)
{
    const int n = 96;
    int sparts[NMULTI] = { 4, 3, 2, 8 }, rparts[NMULTI] = { 2, 8, 12, 6 };
    int stag[NMULTI], rtag[NMULTI], rdata[NMULTI];
    int T = 500 + id;
    int *sb[NMULTI], *rb[NMULTI];
    MPI_Request rq[2 * NMULTI];
    MPI_Status st[2 * NMULTI];
    char msg[400];
    case_begin("part_test multi np=%d (%d requests with the same (comm, tag, source), one other tag)", wsize, NMULTI);
    /* sends, in init order: A(T), X(T+1), B(T), C(T); receives: A(T), B(T), X(T+1), C(T) */
    stag[0] = T; stag[1] = T + 1; stag[2] = T; stag[3] = T;
    rtag[0] = T; rtag[1] = T; rtag[2] = T + 1; rtag[3] = T;
    rdata[0] = 0; rdata[1] = 2; rdata[2] = 1; rdata[3] = 3;    /* which send's data each receive gets */
    int rc = MPI_SUCCESS;
    for (int k = 0; k < NMULTI; k++) {
        sb[k] = xmalloc(sizeof(int) * n + PT_GUARD);
        rb[k] = xmalloc(sizeof(int) * n + PT_GUARD);
        memset(sb[k], JUNK_SEND, sizeof(int) * n + PT_GUARD);
        /* inits interleaved send/receive; different counts per partition */
        int r1 = MPI_Psend_init(sb[k], sparts[k], n / sparts[k], MPI_INT, dst, stag[k], comm, MPI_INFO_NULL,
                                &rq[k]);
        int r2 = MPI_Precv_init(rb[k], rparts[k], n / rparts[k], MPI_INT, src, rtag[k], comm, MPI_INFO_NULL,
                                &rq[NMULTI + k]);
        if (r1 != MPI_SUCCESS || r2 != MPI_SUCCESS) rc = r1 != MPI_SUCCESS ? r1 : r2;
    }
    if (!all_ok(comm, rc == MPI_SUCCESS)) {
        case_fail(-1, "init returned %s", err_class_str(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *exp = xmalloc(sizeof(int) * n + PT_GUARD);
    for (int it = 0; it < 3 && !case_failed; it++) {
        for (int k = 0; k < NMULTI; k++) memset(rb[k], POISON_RECV, sizeof(int) * n + PT_GUARD);
        /* receives started last-initialized first, sends in init order (or
         * all in one MPI_Startall in a rotated order) */
        if (it == 1) {
            MPI_Request tmp[2 * NMULTI];
            int perm[2 * NMULTI];
            for (int i = 0; i < 2 * NMULTI; i++) perm[i] = (i * 5 + 3) % (2 * NMULTI);
            for (int i = 0; i < 2 * NMULTI; i++) tmp[i] = rq[perm[i]];
            rc = MPI_Startall(2 * NMULTI, tmp);
        } else {
            for (int k = NMULTI - 1; k >= 0 && rc == MPI_SUCCESS; k--) rc = MPI_Start(&rq[NMULTI + k]);
            for (int k = 0; k < NMULTI && rc == MPI_SUCCESS; k++) rc = MPI_Start(&rq[k]);
        }
        if (rc != MPI_SUCCESS) {
            case_fail(it, "start returned %s", err_class_str(rc));
            break;
        }
        for (int k = NMULTI - 1; k >= 0; k--) {      /* data and Pready, last send first */
            pt_fill((unsigned char *)sb[k], &T_INT, 0, (size_t)n, pt_seed(id, it, wrank, k));
            rc = MPI_Pready_range(0, sparts[k] - 1, rq[k]);
            if (rc != MPI_SUCCESS) case_fail(it, "MPI_Pready_range on send %d returned %s", k, err_class_str(rc));
        }
        int to = 0;
        rc = pt_complete(it == 2 ? CM_WAITSOME : CM_WAITALL, 2 * NMULTI, rq, st, &to);
        if (rc != MPI_SUCCESS) case_fail(it, "completion: %s", err_class_str(rc));
        for (int k = 0; k < NMULTI && rc == MPI_SUCCESS; k++) {
            pt_check_status(&st[NMULTI + k], src, rtag[k], MPI_INT, n, it);
            pt_expect(exp, sizeof(int) * n, &T_INT, (size_t)n, pt_seed(id, it, src, rdata[k]));
            n_checks++;
            if (pt_cmp((unsigned char *)rb[k], exp, 0, sizeof(int) * n + PT_GUARD, &T_INT, msg, sizeof msg)) {
                int which = -1;
                for (int j = 0; j < NMULTI; j++) {
                    pt_expect(exp, sizeof(int) * n, &T_INT, (size_t)n, pt_seed(id, it, src, j));
                    if (!memcmp(exp, rb[k], sizeof(int) * n)) which = j;
                }
                char w[64] = "";
                if (which >= 0) snprintf(w, sizeof w, "; it holds the data of send %d", which);
                case_fail(it, "receive %d (tag %d, init position %d) must hold send %d's data; %s%s", k, rtag[k], k,
                          rdata[k], msg, w);
            }
        }
        all_ok(comm, !case_failed);
    }
    free(exp);
    for (int k = 0; k < 2 * NMULTI; k++) case_free_req(&rq[k]);
    for (int k = 0; k < NMULTI; k++) {
        free(sb[k]);
        free(rb[k]);
    }
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    int do_data = 0, do_staged = 0, do_multi = 0;
    test_init(&argc, &argv, "part_test", &wrank, &wsize);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "data")) do_data = 1;
        else if (!strcmp(argv[i], "staged")) do_staged = 1;
        else if (!strcmp(argv[i], "multi")) do_multi = 1;
        else if (!strcmp(argv[i], "--no-early-bird")) early_bird = 0;
        else if (!strcmp(argv[i], "--max-print") && i + 1 < argc) max_print = atoi(argv[++i]);
    }
    if (!do_data && !do_staged && !do_multi) do_data = do_staged = do_multi = 1;
    abort_unless(types_create() == MPI_SUCCESS, "the derived datatypes");
    pt_ring(&comm, &dst, &src);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctrl);
    if (do_data)
        for (int i = 0; i < NDATA; i++) run_case(&data_cases[i], i, 0);
    if (do_staged)
        for (int i = 0; i < (int)(sizeof staged_cases / sizeof staged_cases[0]); i++)
            run_case(&staged_cases[i], 40 + i, 1);
    if (do_multi) run_multi(60);
    int status = pt_report("part_test");
    types_free();
    MPI_Comm_free(&ctrl);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return status;
}
