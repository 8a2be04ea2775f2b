/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part_bench: MPI-4 partitioned point-to-point communication between two
 * ranks, against one MPI_Isend/MPI_Irecv of the whole buffer.
 *
 * Written with the MPI-4 names: builds unchanged with an MPI-4 library
 * (MPICH 4: mpicc.mpich -I<pnbc>/ompi/mpiext/pnbc/c) and with Open MPI 4.1
 * plus pnbc (mpicc-pnbc, or mpicc -I<pnbc>/ompi/mpiext/pnbc/c -lpnbc), where
 * pnbc_mpi4.h maps them onto pnbc's MPIX_ functions.  -DPART_BENCH_NO_PNBC
 * builds only the isend mode with any MPI (no partitioned calls, no libpnbc).
 *
 * Tests (-t), all on a duplicate of MPI_COMM_WORLD, rank 0 <-> rank 1:
 *   pingpong     half round trip.  part mode: persistent requests created
 *                once per cell (total size x partitions) and started many
 *                times; rank 0: MPI_Start(send), MPI_Pready of every
 *                partition in order, MPI_Wait, MPI_Start(recv), MPI_Wait;
 *                rank 1 the mirror image.  isend mode: MPI_Isend/MPI_Wait and
 *                MPI_Irecv/MPI_Wait of the whole buffer (one row per size,
 *                nparts = 1).  Warm-up, then -b batches sized to -T ms; a
 *                batch's value is batch time / iterations / 2 (max over the
 *                ranks); median and min over batches.  Cells whose partition
 *                would be smaller than one byte, or whose total is not a
 *                multiple of the partition count, are skipped.
 *   earlybird    rank 0 sends nparts x psize bytes to rank 1 and spends -W us
 *                of busy work (spinning on the clock, no MPI calls) before
 *                each partition; part mode readies each partition right after
 *                its work (MPI_Pready), isend mode sends the whole buffer
 *                after the last work.  Rank 1 busy-polls MPI_Test.  Measured:
 *                rank 1's completion time minus the time rank 0 readied the
 *                last partition (taken just before its last MPI_Pready /
 *                the MPI_Isend), both CLOCK_MONOTONIC, which the processes of
 *                one machine share; rank 0 sends its timestamp afterwards in
 *                an ordinary message.  Median and min over -r repetitions.
 *   eb_parrived  part mode only: as earlybird, but rank 1 polls MPI_Parrived
 *                on each partition in order and stops the clock when the last
 *                one has arrived (then MPI_Wait).
 * Every cell checks the received data of its first iteration and of one
 * iteration after the timed ones with new contents and a poisoned receive
 * buffer.  A wrong byte prints "VERIFY FAILED" on stderr, gives the row
 * ok = 0 and makes the exit status 3.
 *
 * Output: CSV rows on rank 0's stdout,
 *     impl,test,nparts,bytes,np,median_us,min_us,ok
 * (bytes = the total of all partitions).
 *
 * Usage: part_bench -l LABEL [-m part|isend] [-t TESTS] [-s SIZES] [-n PARTS]
 *                   [-e EBCONFIGS] [-b BATCHES] [-T BATCH_MS] [-w WARMUP_MS]
 *                   [-r EB_REPS] [-W WORK_US] [-H]
 *   -t  comma list of pingpong,earlybird,eb_parrived (default pingpong,earlybird)
 *   -s  totals, K/M suffixes (default 8,64,4K,64K,1M,4M)
 *   -n  partition counts (default 1,8,64)
 *   -e  early-bird configurations NxSIZE (default 8x8K,64x1K)
 *   -b  batches (default 9)   -T  ms per batch (default 10)   -w  warm-up ms (5)
 *   -r  early-bird repetitions (default 200)   -W  work per partition, us (20)
 *   -H  print the CSV header first
 */

#ifdef PART_BENCH_NO_PNBC
#include <mpi.h>
#else
#include "pnbc_mpi4.h"
#endif

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define MAXL 32

typedef struct {
    const char *label;
    int part;                       /* 1: partitioned, 0: whole-buffer isend */
    int t_pp, t_eb, t_ebpa;
    long sizes[MAXL];
    int nsizes;
    int parts[MAXL];
    int nparts;
    int eb_n[MAXL];
    long eb_psize[MAXL];
    int neb;
    int batches, eb_reps, header;
    double batch_s, warm_s;
    long work_ns;
    MPI_Comm comm;
    int rank, np, peer, tag;
    int failed;
} opt_t;

typedef struct {
    const char *test;
    int nparts;
    long psize, bytes;
    unsigned char *sbuf, *rbuf;
    MPI_Request sreq, rreq;
    int tag;
} cell_t;

/* --------------------------------------------------------------- helpers */

static void die(const char *msg)
{
    fprintf(stderr, "part_bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void check(int rc, const char *what)
{
    if (MPI_SUCCESS != rc) {
        char s[MPI_MAX_ERROR_STRING + 64];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        fprintf(stderr, "part_bench: %s failed: %s\n", what, s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Busy work: spin on the clock, no MPI calls. */
static void spin_ns(long ns)
{
    long long t0 = now_ns();
    while (now_ns() - t0 < ns) { }
}

static void stats(double *v, int n, double *med, double *mn)
{
    *med = bench_median(v, n);
    *mn = v[0];
}

/* Split a comma list; calls fn(opt, item) for each. */
static void each_item(opt_t *o, const char *list, void (*fn)(opt_t *, const char *))
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) die("out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) fn(o, t);
    free(copy);
}

static void add_size(opt_t *o, const char *t)
{
    long v = bench_parse_size(t);
    if (v <= 0 || v > (1L << 30) || o->nsizes == MAXL) die("bad -s list");
    o->sizes[o->nsizes++] = v;
}

static void add_parts(opt_t *o, const char *t)
{
    long v = bench_parse_size(t);
    if (v <= 0 || v > 65536 || o->nparts == MAXL) die("bad -n list");
    o->parts[o->nparts++] = (int)v;
}

static void add_eb(opt_t *o, const char *t)
{
    char *x = strchr(t, 'x');
    long n = x ? strtol(t, NULL, 10) : -1, ps = x ? bench_parse_size(x + 1) : -1;
    if (n <= 0 || n > 65536 || ps <= 0 || n * ps > (1L << 30) || o->neb == MAXL)
        die("bad -e list (NxSIZE,...)");
    o->eb_n[o->neb] = (int)n;
    o->eb_psize[o->neb++] = ps;
}

static void add_test(opt_t *o, const char *t)
{
    if (!strcmp(t, "pingpong")) o->t_pp = 1;
    else if (!strcmp(t, "earlybird")) o->t_eb = 1;
    else if (!strcmp(t, "eb_parrived")) o->t_ebpa = 1;
    else die("bad -t list (pingpong,earlybird,eb_parrived)");
}

/* ------------------------------------------------------------------ data */

/* Byte i of what rank `sender` sends in generation g: position dependent,
 * so a misplaced partition does not pass. */
static unsigned char pat(int sender, long i, int g)
{
    uint32_t x = (uint32_t)i * 2654435761u + (uint32_t)g * 40503u + (uint32_t)sender * 977u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (unsigned char)x;
}

static void fill(opt_t *o, cell_t *c, int g)
{
    for (long i = 0; i < c->bytes; i++) c->sbuf[i] = pat(o->rank, i, g);
    memset(c->rbuf, 0xA5, (size_t)c->bytes);
}

/* 1 if rbuf holds what the peer sent in generation g. */
static int verify(opt_t *o, cell_t *c, int g, const char *when)
{
    for (long i = 0; i < c->bytes; i++) {
        if (c->rbuf[i] != pat(o->peer, i, g)) {
            fprintf(stderr, "part_bench: VERIFY FAILED: impl=%s test=%s nparts=%d bytes=%ld "
                    "rank=%d %s, byte %ld (partition %ld): got 0x%02x, expected 0x%02x\n",
                    o->label, c->test, c->nparts, c->bytes, o->rank, when, i,
                    i / (c->psize > 0 ? c->psize : 1), c->rbuf[i], pat(o->peer, i, g));
            return 0;
        }
    }
    return 1;
}

static void cell_alloc(cell_t *c)
{
    size_t n = c->bytes > 0 ? (size_t)c->bytes : 1;
    c->sbuf = malloc(n);
    c->rbuf = malloc(n);
    if (!c->sbuf || !c->rbuf) die("out of memory");
    memset(c->sbuf, 0, n);
    memset(c->rbuf, 0, n);
    c->sreq = c->rreq = MPI_REQUEST_NULL;
}

static void cell_free(cell_t *c)
{
    if (MPI_REQUEST_NULL != c->sreq) check(MPI_Request_free(&c->sreq), "MPI_Request_free");
    if (MPI_REQUEST_NULL != c->rreq) check(MPI_Request_free(&c->rreq), "MPI_Request_free");
    free(c->sbuf);
    free(c->rbuf);
}

/* Create the cell's persistent partitioned requests (part mode). */
static void cell_init_part(opt_t *o, cell_t *c, int want_send, int want_recv)
{
#ifdef PART_BENCH_NO_PNBC
    (void)o; (void)c; (void)want_send; (void)want_recv;
    die("built with -DPART_BENCH_NO_PNBC: no partitioned mode");
#else
    if (want_send)
        check(MPI_Psend_init(c->sbuf, c->nparts, (MPI_Count)c->psize, MPI_BYTE, o->peer, c->tag,
                             o->comm, MPI_INFO_NULL, &c->sreq), "MPI_Psend_init");
    if (want_recv)
        check(MPI_Precv_init(c->rbuf, c->nparts, (MPI_Count)c->psize, MPI_BYTE, o->peer, c->tag,
                             o->comm, MPI_INFO_NULL, &c->rreq), "MPI_Precv_init");
#endif
}

/* ------------------------------------------------------------- ping-pong */

static void part_send(cell_t *c)
{
#ifndef PART_BENCH_NO_PNBC
    check(MPI_Start(&c->sreq), "MPI_Start(send)");
    for (int p = 0; p < c->nparts; p++) check(MPI_Pready(p, c->sreq), "MPI_Pready");
    check(MPI_Wait(&c->sreq, MPI_STATUS_IGNORE), "MPI_Wait(send)");
#else
    (void)c;
#endif
}

static void part_recv(cell_t *c)
{
    check(MPI_Start(&c->rreq), "MPI_Start(recv)");
    check(MPI_Wait(&c->rreq, MPI_STATUS_IGNORE), "MPI_Wait(recv)");
}

static void whole_send(opt_t *o, cell_t *c)
{
    MPI_Request r;
    check(MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, o->peer, c->tag, o->comm, &r), "MPI_Isend");
    check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait(isend)");
}

static void whole_recv(opt_t *o, cell_t *c)
{
    MPI_Request r;
    check(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, o->peer, c->tag, o->comm, &r), "MPI_Irecv");
    check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait(irecv)");
}

static void pp_iter(opt_t *o, cell_t *c)
{
    if (o->part) {
        if (0 == o->rank) { part_send(c); part_recv(c); }
        else { part_recv(c); part_send(c); }
    } else {
        if (0 == o->rank) { whole_send(o, c); whole_recv(o, c); }
        else { whole_recv(o, c); whole_send(o, c); }
    }
}

/* Seconds for n iterations, the maximum over the ranks. */
static double pp_time(opt_t *o, cell_t *c, long n)
{
    double t, tmax;
    MPI_Barrier(o->comm);
    t = MPI_Wtime();
    for (long i = 0; i < n; i++) pp_iter(o, c);
    t = MPI_Wtime() - t;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, o->comm);
    return tmax;
}

/* One iteration on the contents of generation g; 1 if both ranks got them. */
static int pp_checked(opt_t *o, cell_t *c, int g, const char *when)
{
    int ok, all;
    fill(o, c, g);
    MPI_Barrier(o->comm);
    pp_iter(o, c);
    ok = verify(o, c, g, when);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, o->comm);
    return all;
}

static void emit(opt_t *o, const char *test, int nparts, long bytes, double med, double mn, int ok)
{
    if (0 == o->rank) {
        printf("%s,%s,%d,%ld,%d,%.4f,%.4f,%d\n", o->label, test, nparts, bytes, o->np, med, mn, ok);
        fflush(stdout);
    }
    if (!ok) o->failed = 1;
}

static void pingpong_cell(opt_t *o, long bytes, int nparts)
{
    cell_t c = { "pingpong", nparts, bytes / nparts, bytes, NULL, NULL, 0, 0, ++o->tag };
    double *v = malloc(sizeof(double) * (size_t)o->batches), med, mn, t;
    long n;
    int ok;
    if (!v) die("out of memory");
    cell_alloc(&c);
    if (o->part) cell_init_part(o, &c, 1, 1);

    ok = pp_checked(o, &c, 1, "first iteration");
    t = pp_time(o, &c, 1);
    n = bench_clampl(o->warm_s / (t > 1e-9 ? t : 1e-9), 1, 200000);
    t = pp_time(o, &c, n) / (double)n;
    n = bench_clampl(o->batch_s / (t > 1e-9 ? t : 1e-9), 1, 2000000);
    for (int b = 0; b < o->batches; b++) v[b] = pp_time(o, &c, n) / (double)n / 2.0 * 1e6;
    ok = pp_checked(o, &c, 2, "iteration after the timed ones (new data)") && ok;

    stats(v, o->batches, &med, &mn);
    emit(o, "pingpong", nparts, bytes, med, mn, ok);
    cell_free(&c);
    free(v);
}

/* ------------------------------------------------------------ early-bird */

/* One early-bird transfer rank 0 -> rank 1; returns (on rank 1) the
 * microseconds from rank 0's last ready partition to rank 1's completion. */
static double eb_rep(opt_t *o, cell_t *c, int parrived)
{
    MPI_Request wr = MPI_REQUEST_NULL;
    long long t_last = 0, t_done;
    int flag = 0;

    if (1 == o->rank) {
        if (o->part) check(MPI_Start(&c->rreq), "MPI_Start(recv)");
        else check(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, c->tag, o->comm, &wr),
                   "MPI_Irecv");
    } else if (o->part) {
        check(MPI_Start(&c->sreq), "MPI_Start(send)");
    }
    MPI_Barrier(o->comm);

    if (0 == o->rank) {
        for (int p = 0; p < c->nparts; p++) {
            spin_ns(o->work_ns);
            if (p == c->nparts - 1) t_last = now_ns();
#ifndef PART_BENCH_NO_PNBC
            if (o->part) check(MPI_Pready(p, c->sreq), "MPI_Pready");
#endif
        }
        if (o->part) {
            check(MPI_Wait(&c->sreq, MPI_STATUS_IGNORE), "MPI_Wait(send)");
        } else {
            check(MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 1, c->tag, o->comm, &wr),
                  "MPI_Isend");
            check(MPI_Wait(&wr, MPI_STATUS_IGNORE), "MPI_Wait(isend)");
        }
        MPI_Send(&t_last, 1, MPI_LONG_LONG, 1, c->tag + 16384, o->comm);
        return 0.0;
    }

    if (parrived) {
#ifndef PART_BENCH_NO_PNBC
        for (int p = 0; p < c->nparts; p++) {
            do check(MPI_Parrived(c->rreq, p, &flag), "MPI_Parrived"); while (!flag);
        }
#endif
        t_done = now_ns();
        check(MPI_Wait(&c->rreq, MPI_STATUS_IGNORE), "MPI_Wait(recv)");
    } else {
        MPI_Request *r = o->part ? &c->rreq : &wr;
        do check(MPI_Test(r, &flag, MPI_STATUS_IGNORE), "MPI_Test"); while (!flag);
        t_done = now_ns();
    }
    MPI_Recv(&t_last, 1, MPI_LONG_LONG, 0, c->tag + 16384, o->comm, MPI_STATUS_IGNORE);
    return (double)(t_done - t_last) * 1e-3;
}

/* A checked early-bird transfer (rank 1 checks); 1 if the data arrived. */
static int eb_checked(opt_t *o, cell_t *c, int parrived, int g, const char *when)
{
    int ok = 1, all;
    fill(o, c, g);
    eb_rep(o, c, parrived);
    if (1 == o->rank) ok = verify(o, c, g, when);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, o->comm);
    return all;
}

static void earlybird_cell(opt_t *o, int nparts, long psize, int parrived)
{
    const char *test = parrived ? "eb_parrived" : "earlybird";
    cell_t c = { test, nparts, psize, (long)nparts * psize, NULL, NULL, 0, 0, ++o->tag };
    int reps = o->eb_reps, warm = reps / 10 + 2, ok;
    double *v = malloc(sizeof(double) * (size_t)reps), res[2] = { 0.0, 0.0 };
    if (!v) die("out of memory");
    cell_alloc(&c);
    if (o->part) cell_init_part(o, &c, 0 == o->rank, 1 == o->rank);

    ok = eb_checked(o, &c, parrived, 1, "first transfer");
    for (int i = 0; i < warm; i++) eb_rep(o, &c, parrived);
    for (int i = 0; i < reps; i++) v[i] = eb_rep(o, &c, parrived);
    ok = eb_checked(o, &c, parrived, 2, "transfer after the timed ones (new data)") && ok;

    /* rank 1 measured; rank 0 prints */
    if (1 == o->rank) {
        stats(v, reps, &res[0], &res[1]);
        MPI_Send(res, 2, MPI_DOUBLE, 0, c.tag, o->comm);
    } else {
        MPI_Recv(res, 2, MPI_DOUBLE, 1, c.tag, o->comm, MPI_STATUS_IGNORE);
    }
    emit(o, test, nparts, c.bytes, res[0], res[1], ok);
    cell_free(&c);
    free(v);
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr, "usage: part_bench -l LABEL [-m part|isend] [-t TESTS] [-s SIZES] [-n PARTS]\n"
                    "       [-e NxSIZE,...] [-b BATCHES] [-T BATCH_MS] [-w WARMUP_MS]\n"
                    "       [-r EB_REPS] [-W WORK_US] [-H]   (see the source's header)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void parse_args(opt_t *o, int argc, char **argv)
{
    const char *tests = "pingpong,earlybird", *sizes = "8,64,4K,64K,1M,4M", *parts = "1,8,64";
    const char *ebs = "8x8K,64x1K";
    o->label = NULL;
    o->part = 1;
    o->batches = 9;
    o->batch_s = 0.010;
    o->warm_s = 0.005;
    o->eb_reps = 200;
    o->work_ns = 20000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (!strcmp(a, "-H")) { o->header = 1; continue; }
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || !v) usage();
        switch (a[1]) {
        case 'l': o->label = v; break;
        case 'm':
            if (!strcmp(v, "part")) o->part = 1;
            else if (!strcmp(v, "isend")) o->part = 0;
            else usage();
            break;
        case 't': tests = v; break;
        case 's': sizes = v; break;
        case 'n': parts = v; break;
        case 'e': ebs = v; break;
        case 'b': o->batches = atoi(v); break;
        case 'T': o->batch_s = atof(v) * 1e-3; break;
        case 'w': o->warm_s = atof(v) * 1e-3; break;
        case 'r': o->eb_reps = atoi(v); break;
        case 'W': o->work_ns = (long)(atof(v) * 1e3); break;
        default: usage();
        }
        i++;
    }
    if (!o->label || o->batches < 1 || o->eb_reps < 1 || o->batch_s <= 0 || o->work_ns < 0)
        usage();
#ifdef PART_BENCH_NO_PNBC
    if (o->part) die("built with -DPART_BENCH_NO_PNBC: only -m isend is available");
#endif
    each_item(o, tests, add_test);
    each_item(o, sizes, add_size);
    each_item(o, parts, add_parts);
    each_item(o, ebs, add_eb);
}

int main(int argc, char **argv)
{
    opt_t o;
    memset(&o, 0, sizeof(o));
    MPI_Init(&argc, &argv);
    parse_args(&o, argc, argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &o.comm);
    MPI_Comm_rank(o.comm, &o.rank);
    MPI_Comm_size(o.comm, &o.np);
    if (o.np != 2) die("run with exactly 2 ranks");
    o.peer = 1 - o.rank;
    if (0 == o.rank && o.header) printf("impl,test,nparts,bytes,np,median_us,min_us,ok\n");

    if (o.t_pp) {
        for (int s = 0; s < o.nsizes; s++) {
            if (!o.part) { pingpong_cell(&o, o.sizes[s], 1); continue; }
            for (int p = 0; p < o.nparts; p++) {
                if (o.sizes[s] < o.parts[p] || o.sizes[s] % o.parts[p]) {
                    if (0 == o.rank)
                        fprintf(stderr, "part_bench: skipping pingpong %ld B in %d partitions "
                                "(not a whole number of bytes per partition)\n",
                                o.sizes[s], o.parts[p]);
                    continue;
                }
                pingpong_cell(&o, o.sizes[s], o.parts[p]);
            }
        }
    }
    for (int e = 0; e < o.neb; e++) {
        if (o.t_eb) earlybird_cell(&o, o.eb_n[e], o.eb_psize[e], 0);
        if (o.t_ebpa && o.part) earlybird_cell(&o, o.eb_n[e], o.eb_psize[e], 1);
    }

    MPI_Comm_free(&o.comm);
    MPI_Finalize();
    return o.failed ? 3 : 0;
}
