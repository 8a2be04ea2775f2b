/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part_conform: two points of MPI-4.1's partitioned communication that
 * follow from the standard's text (chapter 5), on the ring of the part_*
 * tests (world rank r sends to r+1, receives from r-1):
 *
 * inactive  MPI_Parrived "may be called with a null or inactive request;
 *           flag is then true" (sec. 5.2.3): a receive initialized and
 *           never started, and one completed (by MPI_Wait and by
 *           MPI_Test), with an index inside and one far outside its
 *           partitions; MPI_REQUEST_NULL (also the handle MPI_Request_free
 *           leaves) where pnbc receives the call (Open MPI 4.1's
 *           MPIX_Parrived; Open MPI 5's own MPI_Parrived refuses a null
 *           request before any component sees it, so that check is not
 *           made there).  Between these, an active epoch whose receiver
 *           polls MPI_Parrived, every byte checked; and MPI_Request_free /
 *           MPI_Cancel of an active request: MPI_ERR_REQUEST, whose text
 *           (MPI_Error_string) says the request is active, the request
 *           completing normally afterwards.
 * zero      partitions is "a non-negative integer" (sec. 5.2.1): 0 is
 *           legal, with any count: pairs (send partitions x count ->
 *           receive partitions x count) 0x4 -> 0x4, 0x0 -> 2x0, 0x4 ->
 *           4x4 (the receiver gets nothing: count 0, its buffer
 *           untouched), each started 3 times, 4x4 -> 0x4 (the receiver
 *           reports MPI_ERR_TRUNCATE, writes nothing), then an ordinary 3x8 pair on the same
 *           tag (init order matching undisturbed); on an active 0-partition
 *           request MPI_Pready(0) and MPI_Parrived(0) are MPI_ERR_ARG and
 *           MPI_Pready_list of length 0 succeeds.  Receivers alternate
 *           between one that only waits (MPI_Wait) and one that polls
 *           (MPI_Test; MPI_Parrived for the ordinary pair).
 */

#include "part_common.h"

#include <stdio.h>
#include <string.h>

static MPI_Comm comm;
static int dst, src, wrank;

#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define NULL_REACHES_PNBC 0
#else
#define NULL_REACHES_PNBC 1
#endif

/* MPI_Parrived(req, partition) must succeed with flag true. */
static void expect_arrived(MPI_Request req, int partition, const char *what, int it)
{
    int flag = 0;
    const int rc = MPI_Parrived(req, partition, &flag);
    if (pt_expect_class(rc, MPI_SUCCESS, what, it) && !flag) {
        case_fail(it, "%s: flag false, the standard says true", what);
    }
}

/* rc: class MPI_ERR_REQUEST, and a text that names the active state. */
static void expect_active_refused(int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (!pt_expect_class(rc, MPI_ERR_REQUEST, what, -1)) return;
    MPI_Error_string(rc, text, &len);
    n_checks++;
    if (NULL == strstr(text, "active")) {
        case_fail(-1, "%s: the error's text \"%s\" does not say the request is active", what,
                  text);
    }
}

/* Int i of epoch `it` sent by world rank `from`. */
static int val(int from, int it, int i)
{
    return (from + 1) * 100000 + it * 1000 + i;
}

/* An epoch of a 4 x 16 int pair; the receiver polls MPI_Parrived on each
 * partition before it waits, and checks every int, and the guard. */
static void active_epoch(MPI_Request sreq, MPI_Request rreq, int *sbuf, int *rbuf, int it)
{
    enum { P = 4, C = 16 };
    for (int i = 0; i < P * C + 4; ++i) rbuf[i] = -7;
    pt_expect_class(MPI_Start(&rreq), MPI_SUCCESS, "Start(recv)", it);
    pt_expect_class(MPI_Start(&sreq), MPI_SUCCESS, "Start(send)", it);
    for (int p = P - 1; p >= 0; --p) {
        for (int i = 0; i < C; ++i) sbuf[p * C + i] = val(wrank, it, p * C + i);
        pt_expect_class(MPI_Pready(p, sreq), MPI_SUCCESS, "Pready", it);
    }
    int ws, from;
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    from = (wrank + ws - 1) % ws;
    const double t0 = MPI_Wtime();
    for (int p = 0; p < P; ++p) {
        int flag = 0;
        while (!flag && MPI_Wtime() - t0 < PT_POLL_LIMIT) {
            if (!pt_expect_class(MPI_Parrived(rreq, p, &flag), MPI_SUCCESS, "Parrived", it)) break;
        }
        if (!flag) {
            case_fail(it, "partition %d never arrived", p);
            break;
        }
        for (int i = 0; i < C; ++i) {   /* arrived: its data is there now */
            if (rbuf[p * C + i] != val(from, it, p * C + i)) {
                case_fail(it, "partition %d int %d: %d, expected %d right after Parrived", p, i,
                          rbuf[p * C + i], val(from, it, p * C + i));
                break;
            }
        }
    }
    MPI_Status st;
    pt_expect_class(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS, "Wait(send)", it);
    pt_expect_class(MPI_Wait(&rreq, &st), MPI_SUCCESS, "Wait(recv)", it);
    pt_check_status(&st, src, 31, MPI_INT, P * C, it);
    for (int i = 0; i < P * C; ++i) {
        if (rbuf[i] != val(from, it, i)) {
            case_fail(it, "int %d: %d, expected %d", i, rbuf[i], val(from, it, i));
            break;
        }
    }
    for (int i = P * C; i < P * C + 4; ++i) {
        if (rbuf[i] != -7) case_fail(it, "guard int %d overwritten", i);
    }
}

static void case_inactive(void)
{
    case_begin("part_conform inactive np");
    int sbuf[68], rbuf[68];
    MPI_Request sreq, rreq;
    if (!pt_expect_class(MPI_Psend_init(sbuf, 4, 16, MPI_INT, dst, 31, comm, MPI_INFO_NULL, &sreq),
                         MPI_SUCCESS, "Psend_init", -1) ||
        !pt_expect_class(MPI_Precv_init(rbuf, 4, 16, MPI_INT, src, 31, comm, MPI_INFO_NULL, &rreq),
                         MPI_SUCCESS, "Precv_init", -1)) {
        return;
    }
    expect_arrived(rreq, 0, "Parrived(0) never started", -1);
    expect_arrived(rreq, 1000, "Parrived(1000) never started", -1);
    for (int it = 0; it < 3; ++it) {
        active_epoch(sreq, rreq, sbuf, rbuf, it);
        expect_arrived(rreq, 3, "Parrived(3) completed", it);
        expect_arrived(rreq, -1, "Parrived(-1) completed", it);
    }
    /* completed by MPI_Test this time */
    for (int i = 0; i < 64; ++i) sbuf[i] = i;
    MPI_Start(&rreq);
    MPI_Start(&sreq);
    MPI_Pready_range(0, 3, sreq);
    int done = 0;
    const double t0 = MPI_Wtime();
    while (!done && MPI_Wtime() - t0 < PT_POLL_LIMIT) MPI_Test(&rreq, &done, MPI_STATUS_IGNORE);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    if (!done) case_fail(3, "receive never completed");
    expect_arrived(rreq, 2, "Parrived(2) after MPI_Test", 3);
    /* freeing or cancelling an active request: MPI_ERR_REQUEST, and the
     * error's text says the request is active; the requests go on */
    MPI_Start(&rreq);
    MPI_Start(&sreq);
    expect_active_refused(MPI_Request_free(&sreq), "MPI_Request_free(active send)");
    expect_active_refused(MPI_Cancel(&rreq), "MPI_Cancel(active receive)");
    for (int i = 0; i < 64; ++i) sbuf[i] = 3 * i;
    pt_expect_class(MPI_Pready_range(0, 3, sreq), MPI_SUCCESS, "Pready_range after", 4);
    pt_expect_class(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS, "Wait(send) after", 4);
    pt_expect_class(MPI_Wait(&rreq, MPI_STATUS_IGNORE), MPI_SUCCESS, "Wait(recv) after", 4);
    for (int i = 0; i < 64; ++i) {
        if (rbuf[i] != 3 * i) {
            case_fail(4, "after the refused free: int %d is %d, expected %d", i, rbuf[i], 3 * i);
            break;
        }
    }
    pt_expect_class(MPI_Request_free(&sreq), MPI_SUCCESS, "free(send)", -1);
    pt_expect_class(MPI_Request_free(&rreq), MPI_SUCCESS, "free(recv)", -1);
    if (NULL_REACHES_PNBC) {
        expect_arrived(rreq, 0, "Parrived on the freed (null) handle", -1);
        expect_arrived(MPI_REQUEST_NULL, 5, "Parrived(MPI_REQUEST_NULL)",
                    -1);
    }
}

/* One epoch of a zero-partition pair: (sp x sc) -> (rp x rc) ints. */
static void zero_pair(int sp, int sc, int rp, int rc_, int it, int poll)
{
    int sbuf[32], rbuf[36];
    MPI_Request sreq, rreq;
    char what[96];
    snprintf(what, sizeof(what), "%dx%d -> %dx%d", sp, sc, rp, rc_);
    if (!pt_expect_class(MPI_Psend_init(sbuf, sp, sc, MPI_INT, dst, 33, comm, MPI_INFO_NULL, &sreq),
                         MPI_SUCCESS, what, it) ||
        !pt_expect_class(MPI_Precv_init(rbuf, rp, rc_, MPI_INT, src, 33, comm, MPI_INFO_NULL, &rreq),
                         MPI_SUCCESS, what, it)) {
        return;
    }
    int ws;
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    const int from = (wrank + ws - 1) % ws;
    const int sent = sp * sc, room = rp * rc_;
    /* a truncated receive is reported once: Open MPI frees a request that
     * completes with an error while it reports it (its handle becomes
     * MPI_REQUEST_NULL), so that pair runs one epoch */
    const int epochs = (sent > room) ? 1 : 3;
    for (int e = 0; e < epochs; ++e) {
        for (int i = 0; i < 36; ++i) rbuf[i] = -9;
        MPI_Start(&rreq);
        MPI_Start(&sreq);
        if (0 == sp) {
            int flag = 0;
            pt_expect_class(MPI_Pready(0, sreq), MPI_ERR_ARG, "Pready(0) of 0 partitions", it);
            pt_expect_class(MPI_Pready_list(0, NULL, sreq), MPI_SUCCESS, "Pready_list(0)", it);
            if (0 == rp) {
                pt_expect_class(MPI_Parrived(rreq, 0, &flag), MPI_ERR_ARG,
                                "Parrived(0) of 0 partitions", it);
            }
        } else {
            for (int i = 0; i < sent; ++i) sbuf[i] = val(wrank, it * 3 + e, i);
            pt_expect_class(MPI_Pready_range(0, sp - 1, sreq), MPI_SUCCESS, "Pready_range", it);
        }
        MPI_Status st;
        int rcv;
        if (poll) {
            int done = 0;
            const double t0 = MPI_Wtime();
            rcv = MPI_SUCCESS;
            while (!done && MPI_Wtime() - t0 < PT_POLL_LIMIT && MPI_SUCCESS == rcv) {
                rcv = MPI_Test(&rreq, &done, &st);
            }
            if (!done && MPI_SUCCESS == rcv) case_fail(it, "%s: receive never completed", what);
        } else {
            rcv = MPI_Wait(&rreq, &st);
        }
        pt_expect_class(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS, what, it);
        if (sent > room) {      /* the receiver has no room for the data */
            if (MPI_ERR_TRUNCATE != pt_class(rcv) && MPI_ERR_TRUNCATE != st.MPI_ERROR) {
                case_fail(it, "%s: receive returned %s, expected MPI_ERR_TRUNCATE", what,
                          pt_class_name(pt_class(rcv)));
            }
        } else {
            pt_expect_class(rcv, MPI_SUCCESS, what, it);
            pt_check_status(&st, src, 33, MPI_INT, sent, it);
        }
        const int got = sent < room ? sent : room;
        for (int i = 0; i < 36; ++i) {
            const int want = (i < got) ? val(from, it * 3 + e, i) : -9;
            if (rbuf[i] != want) {
                case_fail(it, "%s epoch %d: int %d is %d, expected %d", what, e, i, rbuf[i], want);
                break;
            }
        }
    }
    if (MPI_REQUEST_NULL != sreq) MPI_Request_free(&sreq);
    if (MPI_REQUEST_NULL != rreq) MPI_Request_free(&rreq);
}

static void case_zero(void)
{
    case_begin("part_conform zero");
    const int pairs[][4] = { { 0, 4, 0, 4 }, { 0, 0, 2, 0 }, { 0, 4, 4, 4 }, { 4, 4, 0, 4 } };
    for (int it = 0; it < 4; ++it) {
        zero_pair(pairs[it][0], pairs[it][1], pairs[it][2], pairs[it][3], it, it % 2);
    }
    /* an ordinary pair on the same tag after them: matched with its peer's */
    int sbuf[68], rbuf[68];
    MPI_Request sreq, rreq;
    if (pt_expect_class(MPI_Psend_init(sbuf, 4, 16, MPI_INT, dst, 31, comm, MPI_INFO_NULL, &sreq),
                        MPI_SUCCESS, "Psend_init after", 9) &&
        pt_expect_class(MPI_Precv_init(rbuf, 4, 16, MPI_INT, src, 31, comm, MPI_INFO_NULL, &rreq),
                        MPI_SUCCESS, "Precv_init after", 9)) {
        active_epoch(sreq, rreq, sbuf, rbuf, 9);
        MPI_Request_free(&sreq);
        MPI_Request_free(&rreq);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    /* Open MPI 5 reports partitioned errors to MPI_COMM_WORLD's handler */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pt_ring(&comm, &dst, &src);
    case_inactive();
    case_zero();
    MPI_Comm_free(&comm);
    const int rc = pt_report("part_conform");
    MPI_Finalize();
    return rc;
}
