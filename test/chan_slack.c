/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_slack: K-slack channels started under Open MPI 5.0's rule for
 * MPI_Start and MPI_Startall -- an active request is refused (Open MPI
 * 4.1.5+ and 5.0 with the default mpi_param_check; 5.0's MPI_Startall
 * always) -- through MPIX_Start_slack and MPIX_Startall_slack.
 *
 *   chan_slack            this program's MPI_Start / MPI_Startall (which
 *                         the library's calls reach too: linked with
 *                         -export-dynamic) apply that rule on any series:
 *                         a request started and not yet completed by this
 *                         program is refused with MPI_ERR_REQUEST and not
 *                         passed on; others go to PMPI_Start(all)
 *   CHAN_SLACK_NATIVE=1   no such rule here: Open MPI's own (5.0: refused;
 *                         4.1.4 and below: accepted)
 *
 * Pairs (2i, 2i+1), each side sending to and receiving from the other.
 *   - the old way: a second MPI_Start of an active K = 2 channel is
 *     refused under the rule (so this program, written as before, fails
 *     on 5.0), MPIX_Start_slack then takes it; the data of both slots
 *     arrives;
 *   - K = 3: rounds of m = 1..3 MPIX_Start_slack per side, completed by
 *     MPI_Wait, MPI_Test or MPI_Waitall in turn; every slot and the
 *     receive status checked;
 *   - K = 2 with an ob1 pair: MPIX_Startall_slack over inactive channels
 *     and ob1 requests, then over active channels mixed with inactive
 *     ob1 requests; a call that would give a channel K + 1 starts is
 *     refused whole (an inactive receive in it stays unstarted);
 *   - bad input: NULL, a negative count -> MPI_ERR_REQUEST, MPI_ERR_ARG.
 * Every value received is checked against the sender's formula.
 */
#include "pnbc_mpi4.h"
#define CHAN_PROG "chan_slack"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, fails, native;

#include "chan_check.h"

/* ------------------------------------------------ the 5.0 rule, emulated */

enum { MAXACT = 32 };
static MPI_Request active[MAXACT];     /* started, not yet completed */
static int nactive;

static int is_active(MPI_Request r)
{
    for (int i = 0; i < nactive; ++i)
        if (active[i] == r) return 1;
    return 0;
}

static void mark(MPI_Request r)
{
    if (!is_active(r) && nactive < MAXACT) active[nactive++] = r;
}

/* A completion call completed r: inactive again. */
static void done(MPI_Request r)
{
    for (int i = 0; i < nactive; ++i)
        if (active[i] == r) {
            active[i] = active[--nactive];
            return;
        }
}

int MPI_Start(MPI_Request *request)
{
    if (!native && NULL != request && is_active(*request)) return MPI_ERR_REQUEST;
    int rc = PMPI_Start(request);
    if (MPI_SUCCESS == rc) mark(*request);
    return rc;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    for (int i = 0; !native && i < count; ++i)
        if (is_active(requests[i])) return MPI_ERR_REQUEST;
    int rc = PMPI_Startall(count, requests);
    for (int i = 0; MPI_SUCCESS == rc && i < count; ++i) mark(requests[i]);
    return rc;
}

static int wait1(MPI_Request *r, MPI_Status *st)
{
    int rc = MPI_Wait(r, st);
    done(*r);
    return rc;
}

static int waitall(int n, MPI_Request r[])
{
    int rc = MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; ++i) done(r[i]);
    return rc;
}

/* Does this Open MPI refuse an active request in MPI_Start (4.1.5+)? */
static int library_refuses(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, a = 0, b = 0, c = 0;
    MPI_Get_library_version(v, &len);
    const char *p = strstr(v, "Open MPI v");
    if (NULL == p || sscanf(p, "Open MPI v%d.%d.%d", &a, &b, &c) < 2) return 1;
    return a > 4 || (4 == a && (b > 1 || (1 == b && c >= 5)));
}

/* ------------------------------------------------------------- the data */

static int val(long start, int i, int sender)
{
    return (int) ((start * 1009 + i * 7 + sender * 100003) % 2000000011);
}

static void fill(int *slot, int count, long start, int sender)
{
    for (int i = 0; i < count; ++i) slot[i] = val(start, i, sender);
}

static int check(const int *slot, int count, long start, int sender)
{
    for (int i = 0; i < count; ++i)
        if (slot[i] != val(start, i, sender)) return i + 1;
    return 0;
}

static void bind_pair(int peer, int count, int K, int tag, int *sbuf, int *rbuf,
                      MPI_Request in[2], MPI_Request ch[2])
{
    int ks[2] = { K, K };
    MPI_Send_init(sbuf, count, MPI_INT, peer, tag, MPI_COMM_WORLD, &in[0]);
    MPI_Recv_init(rbuf, count, MPI_INT, peer, tag, MPI_COMM_WORLD, &in[1]);
    EXPECT(MPIX_Bind_slack_channels(in, ch, 2, ks, NULL), MPI_SUCCESS);
}

static void unbind_pair(MPI_Request in[2], MPI_Request ch[2])
{
    EXPECT(MPIX_Unbind_channels(ch, 2), MPI_SUCCESS);
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
}

/* ------------------------------------------------------------ the cases */

enum { C = 16 };

static void case_old_way(int peer)
{
    int sbuf[2 * C], rbuf[2 * C];
    MPI_Request in[2], ch[2];
    bind_pair(peer, C, 2, 21, sbuf, rbuf, in, ch);
    memset(rbuf, 0, sizeof(rbuf));
    fill(sbuf, C, 0, rank);
    fill(sbuf + C, C, 1, rank);
    const int refused = !native || library_refuses();
    for (int s = 1; s >= 0; --s) {          /* the receive first */
        EXPECT(MPI_Start(&ch[s]), MPI_SUCCESS);
        int rc = eclass(MPI_Start(&ch[s]));  /* the old way */
        CHECK(rc == (refused ? MPI_ERR_REQUEST : MPI_SUCCESS), "second MPI_Start: class %d", rc);
        if (MPI_SUCCESS != rc) EXPECT(MPIX_Start_slack(&ch[s]), MPI_SUCCESS);
    }
    EXPECT(waitall(2, ch), MPI_SUCCESS);
    for (int k = 0; k < 2; ++k) {
        int bad = check(rbuf + k * C, C, k, peer);
        CHECK(0 == bad, "old way slot %d element %d", k, bad - 1);
    }
    unbind_pair(in, ch);
}

static void case_rounds(int peer)
{
    enum { K = 3, ROUNDS = 30 };
    int sbuf[K * C], rbuf[K * C];
    MPI_Request in[2], ch[2];
    bind_pair(peer, C, K, 22, sbuf, rbuf, in, ch);
    long n = 0;
    for (int r = 0; r < ROUNDS; ++r) {
        const int m = 1 + r % K;
        memset(rbuf, 0, sizeof(rbuf));
        for (int j = 0; j < m; ++j) EXPECT(MPIX_Start_slack(&ch[1]), MPI_SUCCESS);
        for (int j = 0; j < m; ++j) {
            fill(sbuf + ((n + j) % K) * C, C, n + j, rank);
            EXPECT(MPIX_Start_slack(&ch[0]), MPI_SUCCESS);
        }
        if (m == K) {                       /* K + 1: refused, nothing changes */
            EXPECT(MPIX_Start_slack(&ch[1]), MPI_ERR_REQUEST);
            EXPECT(MPIX_Start_slack(&ch[0]), MPI_ERR_REQUEST);
        }
        MPI_Status st;
        memset(&st, 0, sizeof(st));
        if (0 == r % 3) {
            EXPECT(wait1(&ch[1], &st), MPI_SUCCESS);
            EXPECT(wait1(&ch[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else if (1 == r % 3) {
            int flag = 0;
            while (!flag) EXPECT(MPI_Test(&ch[1], &flag, &st), MPI_SUCCESS);
            done(ch[1]);
            EXPECT(wait1(&ch[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            MPI_Status sts[2];
            EXPECT(MPI_Waitall(2, ch, sts), MPI_SUCCESS);
            done(ch[0]);
            done(ch[1]);
            st = sts[1];
        }
        for (int j = 0; j < m; ++j) {
            int bad = check(rbuf + ((n + j) % K) * C, C, n + j, peer);
            CHECK(0 == bad, "round %d start %ld element %d", r, n + j, bad - 1);
        }
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 22 && got == C, "status %d %d %d", st.MPI_SOURCE,
              st.MPI_TAG, got);
        n += m;
    }
    unbind_pair(in, ch);
}

static void case_startall(int peer)
{
    enum { K = 2, ROUNDS = 20 };
    int sbuf[K * C], rbuf[K * C], os[C], orv[C], never[C];
    MPI_Request in[2], ch[2], o[2], idle;
    bind_pair(peer, C, K, 23, sbuf, rbuf, in, ch);
    MPI_Send_init(os, C, MPI_INT, peer, 24, MPI_COMM_WORLD, &o[0]);
    MPI_Recv_init(orv, C, MPI_INT, peer, 24, MPI_COMM_WORLD, &o[1]);
    MPI_Recv_init(never, C, MPI_INT, peer, 25, MPI_COMM_WORLD, &idle);     /* never sent */
    long n = 0;
    for (int r = 0; r < ROUNDS; ++r) {
        memset(rbuf, 0, sizeof(rbuf));
        memset(orv, 0, sizeof(orv));
        fill(os, C, 1000 + r, rank);
        fill(sbuf + (n % K) * C, C, n, rank);
        fill(sbuf + ((n + 1) % K) * C, C, n + 1, rank);
        if (0 == r % 2) {
            /* all inactive, then the channels' second starts */
            MPI_Request a[4] = { ch[1], o[1], o[0], ch[0] };
            EXPECT(MPIX_Startall_slack(4, a), MPI_SUCCESS);
            EXPECT(MPIX_Startall_slack(2, ch), MPI_SUCCESS);
        } else {
            /* the channels first, then active channels among inactive ob1 */
            EXPECT(MPIX_Startall_slack(2, ch), MPI_SUCCESS);
            MPI_Request a[4] = { o[1], ch[1], o[0], ch[0] };
            EXPECT(MPIX_Startall_slack(4, a), MPI_SUCCESS);
        }
        /* a third start of a K = 2 channel: refused whole */
        MPI_Request b[2] = { idle, ch[1] };
        EXPECT(MPIX_Startall_slack(2, b), MPI_ERR_REQUEST);
        int flag = 0;
        MPI_Request_get_status(idle, &flag, MPI_STATUS_IGNORE);
        CHECK(flag && !is_active(idle), "round %d: a refused call started a request", r);
        MPI_Request all[4] = { ch[0], ch[1], o[0], o[1] };
        EXPECT(waitall(4, all), MPI_SUCCESS);
        for (int j = 0; j < K; ++j) {
            int bad = check(rbuf + ((n + j) % K) * C, C, n + j, peer);
            CHECK(0 == bad, "startall round %d start %ld element %d", r, n + j, bad - 1);
        }
        int bad = check(orv, C, 1000 + r, peer);
        CHECK(0 == bad, "startall round %d ob1 element %d", r, bad - 1);
        n += K;
    }
    MPI_Request_free(&idle);
    MPI_Request_free(&o[0]);
    MPI_Request_free(&o[1]);
    unbind_pair(in, ch);
}

static void case_bad(void)
{
    MPI_Request r[1] = { MPI_REQUEST_NULL };
    EXPECT(MPIX_Start_slack(NULL), MPI_ERR_REQUEST);
    EXPECT(MPIX_Startall_slack(-1, r), MPI_ERR_ARG);
    EXPECT(MPIX_Startall_slack(1, NULL), MPI_ERR_REQUEST);
    EXPECT(MPIX_Startall_slack(0, NULL), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    chan_init(&argc, &argv, &rank, &size);
    native = NULL != getenv("CHAN_SLACK_NATIVE") && atoi(getenv("CHAN_SLACK_NATIVE"));
    case_bad();
    const int peer = rank ^ 1;
    if (peer < size) {
        case_old_way(peer);
        case_rounds(peer);
        case_startall(peer);
    }
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank)
        printf("%s chan_slack np=%d (%s)\n", fails ? "FAIL" : "PASS", size,
               native ? "this Open MPI's MPI_Start" : "MPI_Start refusing active requests");
    MPI_Finalize();
    return fails ? 1 : 0;
}
