/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_misuse: every misuse of channels is answered with its MPI error
 * class (MPI_ERRORS_RETURN), without a crash or a hang, and leaves things
 * usable.  Pairs (2i, 2i+1); a rank without a partner only does the local
 * cases.  Checked, in order:
 *   - binding something that is not an inactive persistent point-to-point
 *     request: MPI_REQUEST_NULL, a persistent collective -> MPI_ERR_REQUEST
 *     (local: no handshake);
 *   - wildcard receives: MPI_ANY_SOURCE -> MPI_ERR_RANK, MPI_ANY_TAG ->
 *     MPI_ERR_TAG (refused, local);
 *   - binding an ACTIVE request (the receiver's is started): both sides
 *     MPI_ERR_REQUEST; the ob1 pair then completes normally;
 *   - slackness 0 on one side: both MPI_ERR_ARG; slackness 2 vs 3: both
 *     MPI_ERR_ARG; different message sizes: both MPI_ERR_TRUNCATE;
 *   - a bad address_base_increment value: both MPI_ERR_INFO_VALUE;
 *   - on a good K = 3 channel: a 4th start -> MPI_ERR_REQUEST and the 3
 *     transfers complete with correct data; MPI_Request_free of the
 *     channel (active or not) -> MPI_ERR_REQUEST; unbinding an
 *     ACTIVE channel -> MPI_ERR_REQUEST on both sides, and it still works;
 *     unbinding a non-channel (an ob1 request, MPI_REQUEST_NULL) ->
 *     MPI_ERR_REQUEST; then the unbind succeeds;
 *   - MPI_PROC_NULL requests bind into channels that complete at once
 *     (status source MPI_PROC_NULL), K-slack too.
 */
#include "pnbc_mpi4.h"
#define CHAN_PROG "chan_misuse"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, fails;
static MPI_Comm pair;     /* this rank and its partner */

#include "chan_check.h"

static void local_cases(void)
{
    MPI_Request ch = MPI_REQUEST_NULL, coll;
    int a = 1, b = 0, buf[4];
    EXPECT(MPIX_Bind_channel(MPI_REQUEST_NULL, &ch, MPI_INFO_NULL), MPI_ERR_REQUEST);
    CHECK(MPI_REQUEST_NULL == ch, "channel set on failure");
    EXPECT(MPI_Allreduce_init(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &coll), MPI_SUCCESS);
    EXPECT(MPIX_Bind_channel(coll, &ch, MPI_INFO_NULL), MPI_ERR_REQUEST);
    EXPECT(MPIX_Unbind_channel(&coll), MPI_ERR_REQUEST);
    MPI_Request_free(&coll);

    MPI_Request r;
    EXPECT(MPI_Recv_init(buf, 4, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    EXPECT(MPIX_Bind_channel(r, &ch, MPI_INFO_NULL), MPI_ERR_RANK);
    MPI_Request_free(&r);
    EXPECT(MPI_Recv_init(buf, 4, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    EXPECT(MPIX_Bind_slack_channel(r, &ch, 2, MPI_INFO_NULL), MPI_ERR_TAG);
    MPI_Request_free(&r);
    ch = MPI_REQUEST_NULL;
    EXPECT(MPIX_Unbind_channel(&ch), MPI_ERR_REQUEST);

    /* MPI_PROC_NULL: channels that complete at once */
    MPI_Request pn[2], pc[2];
    MPI_Status st;
    EXPECT(MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &pn[0]), MPI_SUCCESS);
    EXPECT(MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &pn[1]), MPI_SUCCESS);
    int ks[2] = { 1, 2 };
    EXPECT(MPIX_Bind_slack_channels(pn, pc, 2, ks, NULL), MPI_SUCCESS);
    for (int it = 0; it < 3; ++it) {
        EXPECT(MPI_Start(&pc[0]), MPI_SUCCESS);
        EXPECT(MPIX_Start_slack(&pc[1]), MPI_SUCCESS);
        EXPECT(MPIX_Start_slack(&pc[1]), MPI_SUCCESS);
        EXPECT(MPIX_Start_slack(&pc[1]), MPI_ERR_REQUEST);      /* 3 > K = 2 */
        EXPECT(MPI_Wait(&pc[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
        EXPECT(MPI_Wait(&pc[1], &st), MPI_SUCCESS);
        CHECK(MPI_PROC_NULL == st.MPI_SOURCE, "PROC_NULL status source %d", st.MPI_SOURCE);
    }
    EXPECT(MPIX_Unbind_channels(pc, 2), MPI_SUCCESS);
    MPI_Request_free(&pn[0]);
    MPI_Request_free(&pn[1]);
}

/* A bind of one request on each side of the pair, expected to fail with
 * `cls` on both; the requests are freed (inactive) afterwards. */
static void pair_fail(int peer, int low, int scount, int rcount, int sk, int rk, MPI_Info sinfo,
                      int cls, const char *what)
{
    int buf[64] = { 0 };
    MPI_Request r, ch = MPI_REQUEST_NULL;
    if (low) MPI_Send_init(buf, scount, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
    else MPI_Recv_init(buf, rcount, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
    int c = eclass(MPIX_Bind_slack_channel(r, &ch, low ? sk : rk, low ? sinfo : MPI_INFO_NULL));
    CHECK(c == cls, "%s: class %d, expected %d", what, c, cls);
    CHECK(MPI_REQUEST_NULL == ch, "%s: a channel was created", what);
    MPI_Request_free(&r);
}

static void pair_cases(int peer, int low)
{
    int sbuf[3][8], rbuf[3][8], one[8] = { 0 }, got[8];
    MPI_Request r, ch, other;

    /* binding an active request: the receiver starts its request first */
    if (low) {
        MPI_Send_init(one, 8, MPI_INT, peer, 4, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 8; ++i) one[i] = 100 + i;
    } else {
        MPI_Recv_init(got, 8, MPI_INT, peer, 4, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
    }
    ch = MPI_REQUEST_NULL;
    EXPECT(MPIX_Bind_channel(r, &ch, MPI_INFO_NULL), MPI_ERR_REQUEST);
    CHECK(MPI_REQUEST_NULL == ch, "active bind created a channel");
    if (low) MPI_Start(&r);
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (!low) CHECK(107 == got[7], "ob1 pair after the refused bind: %d", got[7]);
    MPI_Request_free(&r);

    pair_fail(peer, low, 8, 8, 0, 1, MPI_INFO_NULL, MPI_ERR_ARG, "slackness 0");
    pair_fail(peer, low, 8, 8, 2, 3, MPI_INFO_NULL, MPI_ERR_ARG, "slackness 2 vs 3");
    pair_fail(peer, low, 8, 6, 1, 1, MPI_INFO_NULL, MPI_ERR_TRUNCATE, "sizes 8 vs 6");
    pair_fail(peer, low, 6, 8, 1, 1, MPI_INFO_NULL, MPI_ERR_TRUNCATE, "sizes 6 vs 8");
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "address_base_increment", "eight");
    pair_fail(peer, low, 8, 8, 2, 2, bad, MPI_ERR_INFO_VALUE, "bad increment");
    MPI_Info_free(&bad);

    /* a good K = 3 channel: slots sbuf[k] / rbuf[k] (default increment) */
    if (low) MPI_Send_init(sbuf[0], 8, MPI_INT, peer, 6, MPI_COMM_WORLD, &r);
    else MPI_Recv_init(rbuf[0], 8, MPI_INT, peer, 6, MPI_COMM_WORLD, &r);
    EXPECT(MPIX_Bind_slack_channel(r, &ch, 3, MPI_INFO_NULL), MPI_SUCCESS);
    for (int round = 0; round < 4; ++round) {
        memset(rbuf, 0, sizeof(rbuf));
        for (int k = 0; k < 3; ++k)
            for (int i = 0; i < 8; ++i) sbuf[k][i] = round * 1000 + k * 10 + i;
        for (int k = 0; k < 3; ++k) EXPECT(MPIX_Start_slack(&ch), MPI_SUCCESS);
        EXPECT(MPIX_Start_slack(&ch), MPI_ERR_REQUEST); /* the 4th */
        MPI_Request two[2] = { ch, ch };
        EXPECT(MPIX_Startall_slack(2, two), MPI_ERR_REQUEST);  /* refused whole */
        if (1 == round) {
            EXPECT(MPI_Request_free(&ch), MPI_ERR_REQUEST);   /* active */
            /* both sides try to unbind while active: both refused */
            EXPECT(MPIX_Unbind_channel(&ch), MPI_ERR_REQUEST);
            CHECK(MPI_REQUEST_NULL != ch, "active unbind dropped the handle");
        }
        EXPECT(MPI_Wait(&ch, MPI_STATUS_IGNORE), MPI_SUCCESS);
        if (!low)
            for (int k = 0; k < 3; ++k)
                for (int i = 0; i < 8; ++i)
                    CHECK(rbuf[k][i] == round * 1000 + k * 10 + i, "round %d slot %d [%d] = %d", round, k, i,
                          rbuf[k][i]);
        MPI_Barrier(pair);      /* the receiver checked before the next round's fill */
    }
    EXPECT(MPI_Request_free(&ch), MPI_ERR_REQUEST);     /* inactive channel: refused too */
    MPI_Send_init(one, 8, MPI_INT, peer, 7, MPI_COMM_WORLD, &other);
    EXPECT(MPIX_Unbind_channel(&other), MPI_ERR_REQUEST);       /* not a channel */
    MPI_Request both[2] = { ch, other };
    EXPECT(MPIX_Unbind_channels(both, 2), MPI_ERR_REQUEST);     /* ch unbound, other refused */
    CHECK(MPI_REQUEST_NULL == both[0] && other == both[1], "unbind of a mixed array");
    MPI_Request_free(&other);
    MPI_Request_free(&r);
}

int main(int argc, char **argv)
{
    chan_init(&argc, &argv, &rank, &size);
    local_cases();
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    if ((rank ^ 1) < size) pair_cases(rank ^ 1, rank < (rank ^ 1));
    MPI_Comm_free(&pair);
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) printf("%s chan_misuse np=%d\n", fails ? "FAIL" : "PASS", size);
    MPI_Finalize();
    return fails ? 1 : 0;
}
