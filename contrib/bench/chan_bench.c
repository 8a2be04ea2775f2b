/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_bench: persistent point-to-point channels (pnbc) against ob1's
 * persistent requests, MPI_Isend/MPI_Irecv, and (built with
 * -DCHAN_BENCH_NO_PNBC against MPICH) MPICH's persistent requests.  np=2.
 *
 *   chan_bench -l LABEL -m MODE -t TEST [-s SIZES] [-b BATCHES] [-T MS]
 *
 * TEST pingpong: half round trip (us) per size: each of B batches runs as
 *      many ping-pongs as fit in about MS milliseconds (calibrated after a
 *      warm-up), and the median over batches is printed.
 *      MODE chan    a channel each way (MPIX_Bind_channel of MPI_Send_init /
 *                   MPI_Recv_init), MPI_Start + MPI_Wait
 *           persist MPI_Send_init / MPI_Recv_init, MPI_Start + MPI_Wait
 *           isend   MPI_Irecv + MPI_Isend + MPI_Wait
 * TEST stream: streaming bandwidth (MB/s, 1e6 bytes) from rank 0 to 1 with
 *      8 messages in flight: MODE kslack: a K = 8 slack channel over 8
 *      slots, 8 MPIX_Start_slack then one MPI_Wait; MODE window: 8 MPI_Isend
 *      (MPI_Irecv at the receiver) from/to 8 slots then MPI_Waitall.  The
 *      receiver starts its 8 receives first, then waits.  A batch ends with
 *      a zero-byte ack from the receiver.
 * Every message is checked at the end of a batch (the first and last
 * int of each received slot carry the iteration number).
 * Output, one CSV line per size:  LABEL,TEST,MODE,BYTES,VALUE
 */
#include <mpi.h>
#ifndef CHAN_BENCH_NO_PNBC
#include "mpiext_pnbc_c.h"
#else
/* (MPICH: no channels; the kslack mode is never run there) */
#define MPIX_Start_slack(req) MPI_Start(req)
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define SLOTS 8
static int rank;

typedef struct {
    MPI_Request s, r;       /* persistent (persist, chan) */
    char *sbuf, *rbuf;
    size_t bytes;
    const char *mode;
    int peer;
} pp_t;

static void mark(char *buf, size_t bytes, int it)
{
    if (bytes >= sizeof(int)) {
        memcpy(buf, &it, sizeof(int));
        memcpy(buf + bytes - sizeof(int), &it, sizeof(int));
    }
}

static int marked(const char *buf, size_t bytes, int it)
{
    int a, b;
    if (bytes < sizeof(int)) return 1;
    memcpy(&a, buf, sizeof(int));
    memcpy(&b, buf + bytes - sizeof(int), sizeof(int));
    return a == it && b == it;
}

/* n ping-pongs; returns the number of wrong messages. */
static int pingpong(pp_t *p, int n, int it0)
{
    int bad = 0;
    const int count = (int) p->bytes;
    for (int i = 0; i < n; ++i) {
        const int it = it0 + i;
        if (0 == rank) {
            mark(p->sbuf, p->bytes, it);
            if (!strcmp(p->mode, "isend")) {
                MPI_Request rq[2];
                MPI_Irecv(p->rbuf, count, MPI_BYTE, p->peer, 1, MPI_COMM_WORLD, &rq[0]);
                MPI_Isend(p->sbuf, count, MPI_BYTE, p->peer, 1, MPI_COMM_WORLD, &rq[1]);
                MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            } else {
                MPI_Start(&p->r);
                MPI_Start(&p->s);
                MPI_Wait(&p->s, MPI_STATUS_IGNORE);
                MPI_Wait(&p->r, MPI_STATUS_IGNORE);
            }
        } else {
            if (!strcmp(p->mode, "isend")) {
                MPI_Request rq;
                MPI_Irecv(p->rbuf, count, MPI_BYTE, p->peer, 1, MPI_COMM_WORLD, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
                mark(p->sbuf, p->bytes, it);
                MPI_Isend(p->sbuf, count, MPI_BYTE, p->peer, 1, MPI_COMM_WORLD, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Start(&p->r);
                MPI_Wait(&p->r, MPI_STATUS_IGNORE);
                mark(p->sbuf, p->bytes, it);
                MPI_Start(&p->s);
                MPI_Wait(&p->s, MPI_STATUS_IGNORE);
            }
        }
        bad += !marked(p->rbuf, p->bytes, it);
    }
    return bad;
}

typedef struct {
    MPI_Request ch;         /* kslack */
    char *buf;              /* SLOTS slots */
    size_t bytes;
    const char *mode;
} st_t;

/* n rounds of SLOTS messages rank 0 -> 1, then an ack. */
static int stream(st_t *p, int n, int it0)
{
    int bad = 0;
    const int count = (int) p->bytes;
    for (int i = 0; i < n; ++i) {
        const int it = it0 + i;
        if (!strcmp(p->mode, "kslack")) {
            if (0 == rank) {
                for (int k = 0; k < SLOTS; ++k) {
                    mark(p->buf + k * p->bytes, p->bytes, it);
                    MPIX_Start_slack(&p->ch);
                }
            } else {
                for (int k = 0; k < SLOTS; ++k) MPIX_Start_slack(&p->ch);
            }
            MPI_Wait(&p->ch, MPI_STATUS_IGNORE);
        } else {
            MPI_Request rq[SLOTS];
            for (int k = 0; k < SLOTS; ++k) {
                if (0 == rank) {
                    mark(p->buf + k * p->bytes, p->bytes, it);
                    MPI_Isend(p->buf + k * p->bytes, count, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &rq[k]);
                } else {
                    MPI_Irecv(p->buf + k * p->bytes, count, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[k]);
                }
            }
            MPI_Waitall(SLOTS, rq, MPI_STATUSES_IGNORE);
        }
        if (1 == rank) {
            for (int k = 0; k < SLOTS; ++k) bad += !marked(p->buf + k * p->bytes, p->bytes, it);
        }
    }
    if (0 == rank) MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    return bad;
}

int main(int argc, char **argv)
{
    const char *label = "?", *mode = "persist", *test = "pingpong";
    char sizes[256] = "8,64,512,4K,32K,256K,1M";
    int batches = 9, ms = 10, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-l")) label = argv[i + 1];
        else if (!strcmp(argv[i], "-m")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "-t")) test = argv[i + 1];
        else if (!strcmp(argv[i], "-s")) snprintf(sizes, sizeof(sizes), "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "-b")) batches = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-T")) ms = atoi(argv[i + 1]);
    }
    if (2 != size) {
        if (0 == rank) fprintf(stderr, "chan_bench: np must be 2\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int is_stream = !strcmp(test, "stream");
    int it0 = 0;
    for (char *tok = strtok(sizes, ","); NULL != tok; tok = strtok(NULL, ",")) {
        const long parsed = bench_parse_size(tok);
        if (parsed < 0) {
            if (0 == rank) fprintf(stderr, "chan_bench: not a size: %s\n", tok);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        const size_t bytes = (size_t) parsed;
        pp_t pp = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, NULL, NULL, bytes, mode, 1 - rank };
        st_t st = { MPI_REQUEST_NULL, NULL, bytes, mode };
        MPI_Request in_s = MPI_REQUEST_NULL, in_r = MPI_REQUEST_NULL;
        if (is_stream) {
            st.buf = calloc(SLOTS, bytes ? bytes : 1);
#ifndef CHAN_BENCH_NO_PNBC
            if (!strcmp(mode, "kslack")) {
                if (0 == rank) MPI_Send_init(st.buf, (int) bytes, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &in_s);
                else MPI_Recv_init(st.buf, (int) bytes, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &in_s);
                if (MPI_SUCCESS != MPIX_Bind_slack_channel(in_s, &st.ch, SLOTS, MPI_INFO_NULL)) MPI_Abort(MPI_COMM_WORLD, 1);
            }
#endif
        } else {
            pp.sbuf = calloc(1, bytes ? bytes : 1);
            pp.rbuf = calloc(1, bytes ? bytes : 1);
            if (strcmp(mode, "isend")) {
                MPI_Send_init(pp.sbuf, (int) bytes, MPI_BYTE, pp.peer, 5, MPI_COMM_WORLD, &in_s);
                MPI_Recv_init(pp.rbuf, (int) bytes, MPI_BYTE, pp.peer, 5, MPI_COMM_WORLD, &in_r);
                pp.s = in_s;
                pp.r = in_r;
#ifndef CHAN_BENCH_NO_PNBC
                if (!strcmp(mode, "chan")) {
                    MPI_Request in[2] = { in_s, in_r }, ch[2];
                    if (MPI_SUCCESS != MPIX_Bind_channels(in, ch, 2, NULL)) MPI_Abort(MPI_COMM_WORLD, 1);
                    pp.s = ch[0];
                    pp.r = ch[1];
                }
#endif
            }
        }
        /* warm-up and calibration: iterations per batch from a timed run */
        int n = 8;
        double t;
        for (;;) {
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            bad += is_stream ? stream(&st, n, it0) : pingpong(&pp, n, it0);
            it0 += n;
            t = MPI_Wtime() - t;
            MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (t * 1000.0 >= ms / 4.0 || n >= (1 << 22)) break;
            n *= 2;
        }
        n = (int) (n * (ms / 1000.0) / (t > 0 ? t : 1e-9)) + 1;
        MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
        double *v = calloc((size_t) batches, sizeof(double));
        for (int b = 0; b < batches; ++b) {
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            bad += is_stream ? stream(&st, n, it0) : pingpong(&pp, n, it0);
            it0 += n;
            t = MPI_Wtime() - t;
            v[b] = is_stream ? (double) n * SLOTS * bytes / t / 1e6 : t / n / 2 * 1e6;
        }
        qsort(v, (size_t) batches, sizeof(double), bench_cmp_double);
        if (0 == rank) printf("%s,%s,%s,%zu,%.4f\n", label, test, mode, bytes, v[batches / 2]);
        fflush(stdout);
        free(v);
#ifndef CHAN_BENCH_NO_PNBC
        if (!strcmp(mode, "chan")) {
            MPI_Request ch[2] = { pp.s, pp.r };
            MPIX_Unbind_channels(ch, 2);
        }
        if (!strcmp(mode, "kslack")) MPIX_Unbind_channel(&st.ch);
#endif
        if (MPI_REQUEST_NULL != in_s) MPI_Request_free(&in_s);
        if (MPI_REQUEST_NULL != in_r) MPI_Request_free(&in_r);
        free(pp.sbuf);
        free(pp.rbuf);
        free(st.buf);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (bad && 0 == rank) fprintf(stderr, "chan_bench: %d wrong messages\n", bad);
    MPI_Finalize();
    return bad ? 1 : 0;
}
