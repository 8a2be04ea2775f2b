/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * badinput, part 2 (see badinput.c): partitioned communication and
 * channels called with invalid arguments (MPI_COMM_WORLD, MPI_ERRORS_RETURN).
 *
 * MPI_Psend_init / MPI_Precv_init (peer: this rank itself, so that every
 * check stays local): comm MPI_COMM_NULL [COMM]; partitions -1 [ARG] (0 is legal: part_conform.c);
 * count -1, partitions * count beyond MPI_Count [COUNT]; datatype MPI_DATATYPE_NULL, uncommitted [TYPE]; peer
 * -5, size, MPI_ANY_SOURCE [RANK]; tag -1, MPI_ANY_TAG, MPI_TAG_UB + 1
 * [TAG]; request NULL [ARG].
 * On a pair of 4 partitions: MPI_Pready / _range / _list before the start
 * (inactive) [REQUEST]; started: partition -1 or 4, an empty or inverted
 * range, a list with an entry out of range (which must change nothing),
 * length -1, a NULL list, a partition readied twice [ARG]; the receive
 * request, MPI_REQUEST_NULL, a persistent collective (inactive and
 * active), a nonblocking collective, a persistent point-to-point request
 * [REQUEST]; MPI_Parrived on the send request, a collective, a
 * point-to-point request [REQUEST], partition -1 or 4, flag NULL [ARG].
 * The pair then completes with the right data.
 * Channels (pnbc only; MPICH has none): binding MPI_REQUEST_NULL, a
 * persistent collective, a partitioned request, an active nonblocking
 * request, an active MPI_PROC_NULL request [REQUEST]; a wildcard receive
 * [RANK / TAG]; channel pointer NULL, n -1, NULL arrays, slackness 0 (on
 * an MPI_PROC_NULL request: nobody to tell), NULL slackness array [ARG];
 * unbinding NULL, n -1 [ARG], MPI_REQUEST_NULL, a collective [REQUEST].
 * Also here: the reporting helpers of badinput.h, and the correct
 * operations run after the misuse (collectives, a partitioned ring, a
 * channel ring), each result checked against values computed locally.
 */
#include "badinput.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ reporting */
const char *bi_class_name(int cls)
{
    static char other[32];
    static const struct { int c; const char *n; } t[] = {
        { MPI_SUCCESS, "MPI_SUCCESS" }, { MPI_ERR_COMM, "MPI_ERR_COMM" },
        { MPI_ERR_TYPE, "MPI_ERR_TYPE" }, { MPI_ERR_COUNT, "MPI_ERR_COUNT" },
        { MPI_ERR_ROOT, "MPI_ERR_ROOT" }, { MPI_ERR_RANK, "MPI_ERR_RANK" },
        { MPI_ERR_TAG, "MPI_ERR_TAG" }, { MPI_ERR_OP, "MPI_ERR_OP" },
        { MPI_ERR_BUFFER, "MPI_ERR_BUFFER" }, { MPI_ERR_ARG, "MPI_ERR_ARG" },
        { MPI_ERR_REQUEST, "MPI_ERR_REQUEST" }, { MPI_ERR_INFO, "MPI_ERR_INFO" },
        { MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY" }, { MPI_ERR_OTHER, "MPI_ERR_OTHER" },
        { MPI_ERR_INTERN, "MPI_ERR_INTERN" }, { MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE" },
        { MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE" }, { MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].c == cls) return t[i].n;
    snprintf(other, sizeof other, "class %d", cls);
    return other;
}

int bi_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS && MPI_SUCCESS != MPI_Error_class(rc, &c)) c = -1;
    return c;
}

int bi_expect(int rc, int want, int alt, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    bi_tried++;
    n_checks++;
    int c = bi_class(rc);
    if (c == want || (alt >= 0 && c == alt)) return 1;
    fail_line("badinput", bi_round, "%s: expected %s%s%s, got %s", what, bi_class_name(want),
              alt >= 0 ? " or " : "", alt >= 0 ? bi_class_name(alt) : "", bi_class_name(c));
    return 0;
}

void bi_untouched(MPI_Request *r, MPI_Request sentinel, const char *what)
{
    n_checks++;
    if (*r == sentinel || *r == MPI_REQUEST_NULL) return;
    fail_line("badinput", bi_round, "%s: the failed call set the request handle", what);
    MPI_Request_free(r);
}

void bi_check(int ok, const char *fmt, ...)
{
    n_checks++;
    if (ok) return;
    va_list ap;
    va_start(ap, fmt);
    vfail_line("badinput verify", bi_round, fmt, ap);
    va_end(ap);
}


#define NPART 4
#define PCOUNT 3        /* ints per partition */

static int psbuf[NPART * PCOUNT], prbuf[NPART * PCOUNT];

/* Both init forms with one invalid argument. */
static void part_init_misuse(void)
{
    void *v;
    int flag = 0, ub = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    if (flag) ub = *(int *)v;
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    const struct {
        const char *what;
        int parts;
        MPI_Count count;
        int peer, tag, cls;
        MPI_Datatype type;
        int nullcomm, nullreq;
    } t[] = {
        { "comm=MPI_COMM_NULL", NPART, PCOUNT, bi_wrank, 5, MPI_ERR_COMM, MPI_INT, 1, 0 },
        { "partitions=-1", -1, PCOUNT, bi_wrank, 5, MPI_ERR_ARG, MPI_INT, 0, 0 },
        { "count=-1", NPART, -1, bi_wrank, 5, MPI_ERR_COUNT, MPI_INT, 0, 0 },
        { "partitions * count beyond MPI_Count", NPART, (MPI_Count)1 << 62, bi_wrank, 5, MPI_ERR_COUNT, MPI_INT,
          0, 0 },
        { "datatype=MPI_DATATYPE_NULL", NPART, PCOUNT, bi_wrank, 5, MPI_ERR_TYPE, MPI_DATATYPE_NULL, 0, 0 },
        { "datatype uncommitted", NPART, PCOUNT, bi_wrank, 5, MPI_ERR_TYPE, unc, 0, 0 },
        { "peer=-5", NPART, PCOUNT, -5, 5, MPI_ERR_RANK, MPI_INT, 0, 0 },
        { "peer=size", NPART, PCOUNT, bi_wsize, 5, MPI_ERR_RANK, MPI_INT, 0, 0 },
        { "peer=MPI_ANY_SOURCE", NPART, PCOUNT, MPI_ANY_SOURCE, 5, MPI_ERR_RANK, MPI_INT, 0, 0 },
        { "tag=-1", NPART, PCOUNT, bi_wrank, -1, MPI_ERR_TAG, MPI_INT, 0, 0 },
        { "tag=MPI_ANY_TAG", NPART, PCOUNT, bi_wrank, MPI_ANY_TAG, MPI_ERR_TAG, MPI_INT, 0, 0 },
        { "tag=MPI_TAG_UB+1", NPART, PCOUNT, bi_wrank, (ub > 0 && ub < 0x7fffffff) ? ub + 1 : -2,
          MPI_ERR_TAG, MPI_INT, 0, 0 },
        { "request=NULL", NPART, PCOUNT, bi_wrank, 5, MPI_ERR_ARG, MPI_INT, 0, 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        for (int send = 0; send < 2; send++) {
            MPI_Request r = bi_sentinel;
            MPI_Comm c = t[i].nullcomm ? MPI_COMM_NULL : MPI_COMM_WORLD;
            MPI_Request *rp = t[i].nullreq ? NULL : &r;
            char what[128];
            snprintf(what, sizeof what, "%s %s", send ? "MPI_Psend_init" : "MPI_Precv_init", t[i].what);
            watchdog_note("badinput: %s", what);
            int rc = send ? MPI_Psend_init(psbuf, t[i].parts, t[i].count, t[i].type, t[i].peer, t[i].tag, c,
                                           MPI_INFO_NULL, rp)
                          : MPI_Precv_init(prbuf, t[i].parts, t[i].count, t[i].type, t[i].peer, t[i].tag, c,
                                           MPI_INFO_NULL, rp);
            /* Open MPI 5's MPI_Psend_init / MPI_Precv_init refuse a NULL
             * request pointer themselves, as MPI_ERR_REQUEST */
            bi_expect(rc, t[i].cls, (BI_OMPI5 && t[i].nullreq) ? MPI_ERR_REQUEST : -1, "%s", what);
            bi_untouched(&r, bi_sentinel, what);
        }
    }
    MPI_Type_free(&unc);
}

/* A self pair; started when `start`. */
static int self_pair(MPI_Request *ps, MPI_Request *pr, int tag)
{
    int rc = MPI_Psend_init(psbuf, NPART, PCOUNT, MPI_INT, bi_wrank, tag, MPI_COMM_WORLD, MPI_INFO_NULL, ps);
    if (rc == MPI_SUCCESS)
        rc = MPI_Precv_init(prbuf, NPART, PCOUNT, MPI_INT, bi_wrank, tag, MPI_COMM_WORLD, MPI_INFO_NULL, pr);
    bi_check(rc == MPI_SUCCESS, "partitioned self pair init: %s", bi_class_name(bi_class(rc)));
    return rc;
}

#define TRY(call, cls, what) bi_expect((watchdog_note("badinput: %s", what), (call)), cls, -1, "%s", what)

void bi_partitioned(void)
{
    case_begin("partitioned misuse");
    part_init_misuse();

    MPI_Request ps, pr, coll, ib, p2p;
    if (self_pair(&ps, &pr, 6) != MPI_SUCCESS) return;
    long x = 1, y = 0;
    MPIX_Allreduce_init(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &coll);
    MPI_Recv_init(&y, 1, MPI_LONG, MPI_PROC_NULL, 0, MPI_COMM_SELF, &p2p);
    /* Open MPI 5's MPI_Pready_list readies its entries one call at a time,
     * so entries before a bad one are readied: there the bad one comes
     * first (with 4.1's MPIX_Pready_list pnbc checks them all first) */
    int bad_list[2] = { BI_OMPI5 ? NPART : 0, BI_OMPI5 ? 0 : NPART }, good_list[3] = { 0, 2, 3 };
    int flag = -1;

    /* inactive (never started) */
    TRY(MPI_Pready(0, ps), MPI_ERR_REQUEST, "MPI_Pready on an inactive send request");
    TRY(MPI_Pready_range(0, 1, ps), MPI_ERR_REQUEST, "MPI_Pready_range on an inactive send request");
    TRY(MPI_Pready_list(2, good_list, ps), MPI_ERR_REQUEST, "MPI_Pready_list on an inactive send request");
    /* not a partitioned send request */
    TRY(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST, "MPI_Pready on MPI_REQUEST_NULL");
    TRY(MPI_Pready(0, coll), MPI_ERR_REQUEST, "MPI_Pready on an inactive persistent collective");
    TRY(MPI_Pready(0, p2p), MPI_ERR_REQUEST, "MPI_Pready on a persistent point-to-point request");
    TRY(MPI_Parrived(coll, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived on a persistent collective");
    TRY(MPI_Parrived(p2p, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived on a point-to-point request");
    MPI_Start(&coll);
    TRY(MPI_Pready(0, coll), MPI_ERR_REQUEST, "MPI_Pready on an active persistent collective");
    TRY(MPI_Pready_range(0, 0, coll), MPI_ERR_REQUEST, "MPI_Pready_range on an active persistent collective");
    TRY(MPI_Pready_list(1, good_list, coll), MPI_ERR_REQUEST, "MPI_Pready_list on an active persistent collective");
    MPI_Wait(&coll, MPI_STATUS_IGNORE);
    bi_check(y == 1, "allreduce on MPI_COMM_SELF after misuse: %ld", y);
    MPI_Ibarrier(MPI_COMM_SELF, &ib);
    TRY(MPI_Pready(0, ib), MPI_ERR_REQUEST, "MPI_Pready on a nonblocking collective");
    MPI_Wait(&ib, MPI_STATUS_IGNORE);

    for (int i = 0; i < NPART * PCOUNT; i++) {
        psbuf[i] = 100 * bi_round + i;
        prbuf[i] = -1;
    }
    MPI_Request both[2] = { pr, ps };
    MPI_Startall(2, both);
    TRY(MPI_Pready(-1, ps), MPI_ERR_ARG, "MPI_Pready partition -1");
    TRY(MPI_Pready(NPART, ps), MPI_ERR_ARG, "MPI_Pready partition = partitions");
    TRY(MPI_Pready_range(2, 1, ps), MPI_ERR_ARG, "MPI_Pready_range low > high");
    TRY(MPI_Pready_range(-1, 0, ps), MPI_ERR_ARG, "MPI_Pready_range low -1");
    TRY(MPI_Pready_range(0, NPART, ps), MPI_ERR_ARG, "MPI_Pready_range high = partitions");
    TRY(MPI_Pready_list(2, bad_list, ps), MPI_ERR_ARG, "MPI_Pready_list entry out of range");
    /* (Open MPI 5's MPI_Pready_list returns MPI_SUCCESS for length -1
     * without calling any component: not checked there) */
    if (!BI_OMPI5) TRY(MPI_Pready_list(-1, good_list, ps), MPI_ERR_ARG, "MPI_Pready_list length -1");
    /* Open MPI 5's MPI_Pready_list reads the list itself, entry by entry,
     * before any component sees it: a NULL list crashes there */
    if (!BI_OMPI5) TRY(MPI_Pready_list(1, NULL, ps), MPI_ERR_ARG, "MPI_Pready_list NULL list");
    TRY(MPI_Pready(0, pr), MPI_ERR_REQUEST, "MPI_Pready on a receive request");
    TRY(MPI_Pready_range(0, 1, pr), MPI_ERR_REQUEST, "MPI_Pready_range on a receive request");
    TRY(MPI_Pready_list(1, good_list, pr), MPI_ERR_REQUEST, "MPI_Pready_list on a receive request");
    TRY(MPI_Parrived(ps, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived on a send request");
    TRY(MPI_Parrived(pr, -1, &flag), MPI_ERR_ARG, "MPI_Parrived partition -1");
    TRY(MPI_Parrived(pr, NPART, &flag), MPI_ERR_ARG, "MPI_Parrived partition = partitions");
    TRY(MPI_Parrived(pr, 0, NULL), MPI_ERR_ARG, "MPI_Parrived flag NULL");
    /* partition 1 ready, then again */
    int rc = MPI_Pready(1, ps);
    bi_check(rc == MPI_SUCCESS, "MPI_Pready(1): %s", bi_class_name(bi_class(rc)));
    TRY(MPI_Pready(1, ps), MPI_ERR_ARG, "MPI_Pready of a partition already ready");
    TRY(MPI_Pready_range(1, 2, ps), MPI_ERR_ARG, "MPI_Pready_range over a partition already ready");
    /* the failed calls readied nothing: 0, 2 and 3 still can be */
    rc = MPI_Pready_list(3, good_list, ps);
    bi_check(rc == MPI_SUCCESS, "MPI_Pready_list(0,2,3) after the misuse: %s", bi_class_name(bi_class(rc)));
    rc = MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
    bi_check(rc == MPI_SUCCESS, "partitioned self pair completion: %s", bi_class_name(bi_class(rc)));
    for (int i = 0; i < NPART * PCOUNT && rc == MPI_SUCCESS; i++)
        bi_check(prbuf[i] == 100 * bi_round + i, "partitioned self pair data [%d] = %d", i, prbuf[i]);
    /* inactive again after completion */
    TRY(MPI_Pready(0, ps), MPI_ERR_REQUEST, "MPI_Pready on a completed (inactive) send request");
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
    MPI_Request_free(&coll);
    MPI_Request_free(&p2p);
}

void bi_channels(void)
{
#ifndef MPICH_VERSION
    case_begin("channel misuse");
    MPI_Request ch, coll, ps, pr, ib, any, anytag, pn, pnact, in[2], out[2];
    long x = 0, y = 0;
    int k0 = 0;
    MPIX_Allreduce_init(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &coll);
    self_pair(&ps, &pr, 7);
    MPI_Recv_init(&y, 1, MPI_LONG, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &any);
    MPI_Recv_init(&y, 1, MPI_LONG, bi_wrank, MPI_ANY_TAG, MPI_COMM_WORLD, &anytag);
    MPI_Send_init(&x, 1, MPI_LONG, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &pn);
    MPI_Send_init(&x, 1, MPI_LONG, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &pnact);
    MPI_Start(&pnact);
    MPI_Ibarrier(MPI_COMM_SELF, &ib);
    const struct { const char *what; MPI_Request r; int cls; } b[] = {
        { "MPIX_Bind_channel MPI_REQUEST_NULL", MPI_REQUEST_NULL, MPI_ERR_REQUEST },
        { "MPIX_Bind_channel a persistent collective", coll, MPI_ERR_REQUEST },
        { "MPIX_Bind_channel a partitioned send", ps, MPI_ERR_REQUEST },
        { "MPIX_Bind_channel a partitioned receive", pr, MPI_ERR_REQUEST },
        { "MPIX_Bind_channel an active nonblocking collective", ib, MPI_ERR_REQUEST },
        { "MPIX_Bind_channel an active MPI_PROC_NULL send", pnact, MPI_ERR_REQUEST },
        { "MPIX_Bind_channel a MPI_ANY_SOURCE receive", any, MPI_ERR_RANK },
        { "MPIX_Bind_channel a MPI_ANY_TAG receive", anytag, MPI_ERR_TAG },
    };
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        ch = bi_sentinel;
        TRY(MPIX_Bind_channel(b[i].r, &ch, MPI_INFO_NULL), b[i].cls, b[i].what);
        bi_untouched(&ch, bi_sentinel, b[i].what);
    }
    ch = bi_sentinel;
    TRY(MPIX_Bind_slack_channel(pn, &ch, 0, MPI_INFO_NULL), MPI_ERR_ARG,
        "MPIX_Bind_slack_channel slackness 0 (MPI_PROC_NULL request)");
    bi_untouched(&ch, bi_sentinel, "MPIX_Bind_slack_channel slackness 0");
    TRY(MPIX_Bind_channel(pn, NULL, MPI_INFO_NULL), MPI_ERR_ARG, "MPIX_Bind_channel channel NULL");
    in[0] = pn;
    out[0] = bi_sentinel;
    TRY(MPIX_Bind_channels(in, out, -1, NULL), MPI_ERR_ARG, "MPIX_Bind_channels n -1");
    TRY(MPIX_Bind_channels(NULL, out, 1, NULL), MPI_ERR_ARG, "MPIX_Bind_channels requests NULL");
    TRY(MPIX_Bind_channels(in, NULL, 1, NULL), MPI_ERR_ARG, "MPIX_Bind_channels channels NULL");
    TRY(MPIX_Bind_slack_channels(in, out, 1, NULL, NULL), MPI_ERR_ARG, "MPIX_Bind_slack_channels slackness NULL");
    in[1] = MPI_REQUEST_NULL;
    const int slack[2] = { 1, 1 };
    TRY(MPIX_Bind_slack_channels(in + 1, out + 1, 1, slack, NULL), MPI_ERR_REQUEST,
        "MPIX_Bind_slack_channels MPI_REQUEST_NULL");
    bi_untouched(&out[0], bi_sentinel, "MPIX_Bind_channels");
    bi_untouched(&out[1], bi_sentinel, "MPIX_Bind_slack_channels");
    (void)k0;
    TRY(MPIX_Unbind_channel(NULL), MPI_ERR_ARG, "MPIX_Unbind_channel NULL");
    ch = MPI_REQUEST_NULL;
    TRY(MPIX_Unbind_channel(&ch), MPI_ERR_REQUEST, "MPIX_Unbind_channel MPI_REQUEST_NULL");
    MPI_Request keep = coll;
    TRY(MPIX_Unbind_channel(&coll), MPI_ERR_REQUEST, "MPIX_Unbind_channel a persistent collective");
    bi_check(coll == keep, "MPIX_Unbind_channel of a collective changed the handle");
    TRY(MPIX_Unbind_channels(out, -1), MPI_ERR_ARG, "MPIX_Unbind_channels n -1");
    TRY(MPIX_Unbind_channels(NULL, 1), MPI_ERR_ARG, "MPIX_Unbind_channels NULL");
    MPI_Wait(&ib, MPI_STATUS_IGNORE);
    MPI_Wait(&pnact, MPI_STATUS_IGNORE);
    /* the collective still works */
    x = 5;
    MPI_Start(&coll);
    MPI_Wait(&coll, MPI_STATUS_IGNORE);
    bi_check(y == 5, "allreduce on MPI_COMM_SELF after channel misuse: %ld", y);
    MPI_Request *fr[] = { &coll, &ps, &pr, &any, &anytag, &pn, &pnact };
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) MPI_Request_free(fr[i]);
#endif
}

/* A partitioned ring exchange and (pnbc) a channel ring exchange, checked. */
void bi_pc_verify(void)
{
    case_begin("verify partitioned and channels");
    int right = (bi_wrank + 1) % bi_wsize, left = (bi_wrank + bi_wsize - 1) % bi_wsize;
    MPI_Request q[2];
    int rc = MPI_Precv_init(prbuf, NPART, PCOUNT, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Psend_init(psbuf, NPART, PCOUNT, MPI_INT, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
    bi_check(rc == MPI_SUCCESS, "ring pair init: %s", bi_class_name(bi_class(rc)));
    if (rc != MPI_SUCCESS) return;
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < NPART * PCOUNT; i++) {
            psbuf[i] = 7 * bi_wrank + 1000 * it + i;
            prbuf[i] = -1;
        }
        rc = MPI_Startall(2, q);
        for (int p = NPART - 1; p >= 0 && rc == MPI_SUCCESS; p--) rc = MPI_Pready(p, q[1]);
        if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        bi_check(rc == MPI_SUCCESS, "ring pair iteration %d: %s", it, bi_class_name(bi_class(rc)));
        for (int i = 0; i < NPART * PCOUNT && rc == MPI_SUCCESS; i++)
            bi_check(prbuf[i] == 7 * left + 1000 * it + i, "ring pair [%d] = %d", i, prbuf[i]);
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
#ifndef MPICH_VERSION
    long s = 0, r = 0;
    MPI_Request in[2], ch[2];
    MPI_Recv_init(&r, 1, MPI_LONG, left, 11, MPI_COMM_WORLD, &in[0]);
    MPI_Send_init(&s, 1, MPI_LONG, right, 11, MPI_COMM_WORLD, &in[1]);
    rc = MPIX_Bind_channels(in, ch, 2, NULL);
    bi_check(rc == MPI_SUCCESS, "ring channel bind: %s", bi_class_name(bi_class(rc)));
    for (int it = 0; it < 3 && rc == MPI_SUCCESS; it++) {
        s = 31L * bi_wrank + it;
        r = -1;
        rc = MPI_Startall(2, ch);
        if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, ch, MPI_STATUSES_IGNORE);
        bi_check(rc == MPI_SUCCESS && r == 31L * left + it, "ring channel iteration %d: rc %d r %ld", it, rc, r);
    }
    if (rc == MPI_SUCCESS) {
        rc = MPIX_Unbind_channels(ch, 2);
        bi_check(rc == MPI_SUCCESS, "ring channel unbind: %s", bi_class_name(bi_class(rc)));
    }
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
#endif
}

/* ------------------------------------------------------------ correct collectives afterwards */
static long val(int rank, int i) { return 1000L * (rank + 1) + i; }

void bi_verify_colls(const cx_t *w, const cx_t *t, const cx_t *ic)
{
    long s[8], r[8 * MAXN];
    MPI_Request q;
    case_begin("verify collectives");
    /* persistent allreduce, started twice, and the nonblocking one */
    for (int i = 0; i < 4; i++) s[i] = val(w->rank, i);
    watchdog_note("badinput verify: %s", "persistent allreduce");
    int rc = MPIX_Allreduce_init(s, r, 4, MPI_LONG, MPI_SUM, w->comm, MPI_INFO_NULL, &q);
    bi_check(rc == MPI_SUCCESS, "MPIX_Allreduce_init: %s", bi_class_name(bi_class(rc)));
    for (int it = 0; it < 2 && rc == MPI_SUCCESS; it++) {
        memset(r, 0, sizeof r);
        rc = MPI_Start(&q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4 && rc == MPI_SUCCESS; i++) {
            long e = 0;
            for (int p = 0; p < w->size; p++) e += val(p, i);
            bi_check(r[i] == e, "persistent allreduce [%d] = %ld, expected %ld", i, r[i], e);
        }
    }
    if (rc == MPI_SUCCESS) MPI_Request_free(&q);
    memset(r, 0, sizeof r);
    watchdog_note("badinput verify: %s", "MPI_Iallreduce");
    rc = MPI_Iallreduce(s, r, 4, MPI_LONG, MPI_MAX, w->comm, &q);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    bi_check(rc == MPI_SUCCESS && r[3] == val(w->size - 1, 3), "MPI_Iallreduce MAX: rc %d, %ld", rc, r[3]);
    /* persistent bcast from the last rank */
    for (int i = 0; i < 3; i++) s[i] = (w->rank == w->size - 1) ? val(99, i) : -1;
    watchdog_note("badinput verify: %s", "persistent bcast");
    rc = MPIX_Bcast_init(s, 3, MPI_LONG, w->size - 1, w->comm, MPI_INFO_NULL, &q);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Start(&q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
    }
    bi_check(rc == MPI_SUCCESS && s[0] == val(99, 0) && s[2] == val(99, 2), "persistent bcast: rc %d", rc);
    /* nonblocking gatherv to rank 0, rank p sending p+1 elements */
    int cnt[MAXN], dis[MAXN], off = 0;
    for (int p = 0; p < w->size; p++) { cnt[p] = p + 1; dis[p] = off; off += p + 1; }
    for (int i = 0; i <= w->rank; i++) s[i] = val(w->rank, i);
    memset(r, 0, sizeof r);
    watchdog_note("badinput verify: %s", "MPI_Igatherv");
    rc = MPI_Igatherv(s, w->rank + 1, MPI_LONG, r, cnt, dis, MPI_LONG, 0, w->comm, &q);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    bi_check(rc == MPI_SUCCESS, "MPI_Igatherv: %s", bi_class_name(bi_class(rc)));
    for (int p = 0; w->rank == 0 && p < w->size && rc == MPI_SUCCESS; p++)
        for (int i = 0; i <= p; i++)
            bi_check(r[dis[p] + i] == val(p, i), "gatherv from %d [%d]: %ld", p, i, r[dis[p] + i]);
    /* persistent neighbour alltoall on the ring: left and right */
    s[0] = val(t->rank, 0);     /* to the left neighbour */
    s[1] = val(t->rank, 1);     /* to the right neighbour */
    watchdog_note("badinput verify: %s", "persistent neighbor_alltoall");
    rc = MPIX_Neighbor_alltoall_init(s, 1, MPI_LONG, r, 1, MPI_LONG, t->comm, MPI_INFO_NULL, &q);
    if (rc == MPI_SUCCESS) {
        r[0] = r[1] = 0;
        rc = MPI_Start(&q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
    }
    int left = (t->rank + t->size - 1) % t->size, right = (t->rank + 1) % t->size;
    long e0 = val(left, 1), e1 = val(right, 0);
    /* with 1 or 2 ranks left == right: which of the two messages lands in
     * which block is not defined, only that both arrive */
    int nb_ok = (r[0] == e0 && r[1] == e1) || (t->size <= 2 && r[0] == e1 && r[1] == e0);
    bi_check(rc == MPI_SUCCESS && nb_ok, "neighbor_alltoall: rc %d got %ld %ld expected %ld %ld", rc, r[0],
             r[1], e0, e1);
    /* persistent allgather on the intercommunicator: the remote group's values */
    if (ic->comm != MPI_COMM_NULL) {
        s[0] = val(bi_wrank, 7);
    watchdog_note("badinput verify: %s", "persistent inter allgather");
        rc = MPIX_Allgather_init(s, 1, MPI_LONG, r, 1, MPI_LONG, ic->comm, MPI_INFO_NULL, &q);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Start(&q);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
            MPI_Request_free(&q);
        }
        /* low group: world ranks 0..h-1, high group h..size-1 */
        int h = bi_wsize / 2, first = (bi_wrank < h) ? h : 0;
        for (int p = 0; p < ic->remote && rc == MPI_SUCCESS; p++)
            bi_check(r[p] == val(first + p, 7), "inter allgather [%d] = %ld", p, r[p]);
        bi_check(rc == MPI_SUCCESS, "inter allgather: %s", bi_class_name(bi_class(rc)));
    }
}
