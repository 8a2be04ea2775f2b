/*
 * Copyright (c) 2026 The pnbc developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pcoll_bench: latency, init cost and overlap of persistent and nonblocking
 * collectives, with blocking collectives as a baseline.
 *
 * Builds with Open MPI 4.1 (MPIX_*_init from <mpi-ext.h>, pcollreq
 * extension), with Open MPI 5.0 (MPI_*_init, though its MPI_VERSION is 3)
 * and with any MPI-4 library such as MPICH 4 (MPI_*_init).
 *
 * For every selected collective and size it measures, on a duplicate of
 * MPI_COMM_WORLD:
 *   median_us, min_us  time per MPI_Start+MPI_Wait (persistent mode), per
 *                      MPI_I<coll>+MPI_Wait, same arguments every time
 *                      (nonblocking) or per blocking call: several batches after a
 *                      warm-up; a batch's value is (batch time / iterations),
 *                      the maximum over the ranks; median and min over batches.
 *   init_us            time per *_init + MPI_Request_free pair (persistent); per
 *                      first call: MPI_I<coll>+MPI_Wait on new buffers (nonblocking).
 *   overlap_pct        not blocking: with a compute loop as long as the pure
 *                      collective put between MPI_Start (MPI_I<coll>) and MPI_Wait,
 *                      100 * (1 - (t_total - t_compute) / t_pure), clamped to
 *                      [0, 100]; t_pure, t_compute and t_total are medians of
 *                      interleaved batches.  The compute loop makes no MPI calls
 *                      unless -p asks for MPI_Test probes.
 * and checks the received data of two starts per collective and size with
 * different inputs (the first, and one after the timed loops with new data and
 * a poisoned receive buffer), so that an implementation that moves the data
 * only at its first start fails the check.
 *
 * "bytes" is the size of one rank's block: the bcast buffer; the reduce and
 * allreduce vector (bytes/8 doubles, MPI_SUM); each rank's allgather
 * contribution; each alltoall block (so buffers are np * bytes); barrier: 0.
 *
 * Output: CSV rows on rank 0's stdout,
 *     impl,coll,bytes,np,median_us,min_us,init_us,overlap_pct
 * (NA where a column does not apply). Diagnostics go to stderr; a failed data
 * check prints "VERIFY FAILED" there and makes the exit status 3.
 *
 * Usage: pcoll_bench -l LABEL [-m persistent|nonblocking|paired|blocking] [-c COLLS] [-s SIZES]
 *                    [-b BATCHES] [-T BATCH_MS] [-w WARMUP_MS] [-i INIT_MAX]
 *                    [-o OVERLAP_BATCHES] [-p PROBES] [-H]
 *   -m  paired: nonblocking, and the persistent request on the same buffers timed in
 *       batches alternating with it: a row LABEL-persistent (latency) from the same launch
 *   -c  comma list of barrier,bcast,reduce,allreduce,allgather,alltoall,gather,scatter, or all
 *   -s  comma list of sizes in bytes, K/M suffixes allowed (default 8,4K,64K,1M)
 *   -b  timed batches (default 9)       -T  target ms per batch (default 10)
 *   -w  warm-up ms (default 5)          -i  max init+free pairs per batch (default 20)
 *   -o  overlap batches (default: same as -b; 0 = skip)
 *   -p  MPI_Test calls spread over the compute loop (default 0)
 *   -H  print the CSV header line first
 */

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define PX_INIT(P) MPI_##P##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PX_INIT(P) MPIX_##P##_init
#else
#error "this MPI library has no persistent collectives (MPI-4 or Open MPI's pcollreq extension)"
#endif

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_ALLTOALL, C_GATHER, C_SCATTER,
       C_COUNT };
static const char *coll_names[C_COUNT] = {
    "barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter"
};

#define MAX_SIZES 64
#define FIRST_CALLS 100     /* nonblocking first-call measurement: distinct buffers */

typedef struct {
    /* options */
    const char *label;
    int persistent, nonblocking; /* else blocking */
    int paired;                  /* nonblocking + its persistent request (-m paired) */
    int colls[C_COUNT], ncolls;
    long sizes[MAX_SIZES];
    int nsizes;
    int batches, overlap_batches, init_max, probes, header;
    double batch_s, warmup_s;
    /* run state */
    MPI_Comm comm;
    int rank, np;
    int coll;
    long bytes;
    int count;                   /* elements: bytes for byte colls, doubles for reductions */
    unsigned char *sbuf, *rbuf;
    MPI_Request req;
    MPI_Request preq;            /* -m paired: the persistent request */
    long shift;                  /* first calls (nonblocking): bytes into the buffers */
    double units_per_s;          /* calibrated compute speed */
    int verify_failed;
} bench_t;

/* ---------------------------------------------------------------- compute */

static double work_sink = 1.0;

/* A dependent floating-point chain: cannot be vectorised or folded away. */
static void work(long units)
{
    double a = work_sink;
    for (long i = 0; i < units; i++) a = a * 0.9999999 + 1e-7;
    work_sink = a;
}

static void calibrate_work(bench_t *b)
{
    long units = 20000;
    double best = 1e30;
    work(units);
    for (int k = 0; k < 7; k++) {
        double t0 = MPI_Wtime();
        work(units);
        double dt = MPI_Wtime() - t0;
        if (dt < best) best = dt;
        if (best < 2e-4 && units < 100000000L) { units *= 2; best = 1e30; k = -1; }
    }
    b->units_per_s = units / best;
}

/* --------------------------------------------------------------- utilities */

static void die(const char *msg)
{
    fprintf(stderr, "pcoll_bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ------------------------------------------------------- buffers and data */

/* Generation g of the data: every check runs on inputs new to it. */
static unsigned char pat(int src, int dst, long i, int g)
{
    return (unsigned char)(src * 37 + dst * 101 + i * 11 + 5 + g * 53);
}

/* Inputs of generation g; the receive buffer (but the bcast root's) poisoned. */
static void fill(bench_t *b, int g)
{
    long B = b->bytes;
    switch (b->coll) {
    case C_BCAST:
        for (long i = 0; i < B; i++) b->rbuf[i] = (0 == b->rank) ? pat(0, 0, i, g) : 0xA5;
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        double *s = (double *)b->sbuf, *r = (double *)b->rbuf;
        for (int i = 0; i < b->count; i++) {
            s[i] = (double)b->rank + (double)(i % 13) + 1000.0 * g;
            r[i] = -1.0;
        }
        break;
    }
    case C_ALLGATHER: case C_GATHER:
        for (long i = 0; i < B; i++) b->sbuf[i] = pat(b->rank, 0, i, g);
        memset(b->rbuf, 0xA5, (size_t)B * b->np);
        break;
    case C_ALLTOALL: case C_SCATTER:
        for (int d = 0; d < b->np; d++)
            for (long i = 0; i < B; i++) b->sbuf[(size_t)d * B + i] = pat(b->rank, d, i, g);
        memset(b->rbuf, 0xA5, (size_t)B * b->np);
        break;
    default: break;
    }
}

static void setup_buffers(bench_t *b)
{
    size_t sbytes = 0, rbytes = 0;
    long B = b->bytes;
    switch (b->coll) {
    case C_BARRIER: b->count = 0; break;
    case C_BCAST: b->count = (int)B; rbytes = (size_t)B; break;
    case C_REDUCE:
    case C_ALLREDUCE:
        b->count = (int)((B + 7) / 8);
        if (b->count < 1) b->count = 1;
        sbytes = rbytes = (size_t)b->count * sizeof(double);
        break;
    case C_ALLGATHER: case C_GATHER:
        b->count = (int)B; sbytes = (size_t)B; rbytes = (size_t)B * b->np; break;
    case C_ALLTOALL: case C_SCATTER: b->count = (int)B; sbytes = rbytes = (size_t)B * b->np; break;
    }
    const size_t room = b->nonblocking ? 8 * (FIRST_CALLS + 1) : 1;  /* first calls */
    b->sbuf = calloc(sbytes + room, 1);
    b->rbuf = calloc(rbytes + room, 1);
    if (!b->sbuf || !b->rbuf) die("out of memory");
    fill(b, 0);
}

static void free_buffers(bench_t *b)
{
    free(b->sbuf);
    free(b->rbuf);
    b->sbuf = b->rbuf = NULL;
}

/* Check what the last operation, on the inputs of generation g, left in
 * the receive buffer (g: 0 and 1 the first start and one after the timed
 * loops; 2 and 3 the same for -m paired's persistent request). */
static void verify(bench_t *b, int g)
{
    long bad = -1, B = b->bytes;
    switch (b->coll) {
    case C_BCAST:
        for (long i = 0; i < B && bad < 0; i++) if (b->rbuf[i] != pat(0, 0, i, g)) bad = i;
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        if (C_ALLREDUCE == b->coll || 0 == b->rank) {
            const double *r = (const double *)b->rbuf;
            double base = 0.5 * b->np * (b->np - 1) + 1000.0 * g * b->np;
            for (int i = 0; i < b->count && bad < 0; i++)
                if (r[i] != base + (double)b->np * (double)(i % 13)) bad = i;
        }
        break;
    case C_ALLGATHER: case C_GATHER:
        if (C_GATHER == b->coll && 0 != b->rank) break;
        for (int s = 0; s < b->np && bad < 0; s++)
            for (long i = 0; i < B && bad < 0; i++)
                if (b->rbuf[(size_t)s * B + i] != pat(s, 0, i, g)) bad = (long)s * B + i;
        break;
    case C_ALLTOALL:
        for (int s = 0; s < b->np && bad < 0; s++)
            for (long i = 0; i < B && bad < 0; i++)
                if (b->rbuf[(size_t)s * B + i] != pat(s, b->rank, i, g)) bad = (long)s * B + i;
        break;
    case C_SCATTER:     /* block `rank` of the root's pattern */
        for (long i = 0; i < B && bad < 0; i++) if (b->rbuf[i] != pat(0, b->rank, i, g)) bad = i;
        break;
    default: break;
    }
    if (bad >= 0) {
        fprintf(stderr, "pcoll_bench: VERIFY FAILED: impl=%s%s coll=%s bytes=%ld rank=%d start %s, "
                "element %ld\n", b->label, (b->paired && b->persistent) ? "-persistent" : "",
                coll_names[b->coll], b->bytes, b->rank, (g & 1) ? "after the timed loops (new data)" : "1", bad);
        b->verify_failed = 1;
    }
}

/* ------------------------------------------------------------ operations */

/* Persistent request (init) or nonblocking call on b's buffers + b->shift. */
static void coll_op(bench_t *b, MPI_Request *req, int init)
{
    unsigned char *s = b->sbuf + b->shift, *r = b->rbuf + b->shift;
    int c = b->count, rc = MPI_ERR_OTHER;
#define OP(P, I, ...) (init ? PX_INIT(P)(__VA_ARGS__, MPI_INFO_NULL, req) : MPI_I##I(__VA_ARGS__, req))
    switch (b->coll) {
    case C_BARRIER: rc = OP(Barrier, barrier, b->comm); break;
    case C_BCAST: rc = OP(Bcast, bcast, r, c, MPI_BYTE, 0, b->comm); break;
    case C_REDUCE: rc = OP(Reduce, reduce, s, r, c, MPI_DOUBLE, MPI_SUM, 0, b->comm); break;
    case C_ALLREDUCE: rc = OP(Allreduce, allreduce, s, r, c, MPI_DOUBLE, MPI_SUM, b->comm); break;
    case C_ALLGATHER: rc = OP(Allgather, allgather, s, c, MPI_BYTE, r, c, MPI_BYTE, b->comm); break;
    case C_ALLTOALL: rc = OP(Alltoall, alltoall, s, c, MPI_BYTE, r, c, MPI_BYTE, b->comm); break;
    case C_GATHER: rc = OP(Gather, gather, s, c, MPI_BYTE, r, c, MPI_BYTE, 0, b->comm); break;
    case C_SCATTER: rc = OP(Scatter, scatter, s, c, MPI_BYTE, r, c, MPI_BYTE, 0, b->comm); break;
    }
    if (MPI_SUCCESS != rc) die(init ? "persistent collective init failed" : "nonblocking call failed");
}

static void blocking_op(bench_t *b)
{
    switch (b->coll) {
    case C_BARRIER: MPI_Barrier(b->comm); break;
    case C_BCAST: MPI_Bcast(b->rbuf, b->count, MPI_BYTE, 0, b->comm); break;
    case C_REDUCE:
        MPI_Reduce(b->sbuf, b->rbuf, b->count, MPI_DOUBLE, MPI_SUM, 0, b->comm);
        break;
    case C_ALLREDUCE:
        MPI_Allreduce(b->sbuf, b->rbuf, b->count, MPI_DOUBLE, MPI_SUM, b->comm);
        break;
    case C_ALLGATHER:
        MPI_Allgather(b->sbuf, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->comm);
        break;
    case C_ALLTOALL:
        MPI_Alltoall(b->sbuf, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->comm);
        break;
    case C_GATHER: MPI_Gather(b->sbuf, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, 0, b->comm); break;
    case C_SCATTER: MPI_Scatter(b->sbuf, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, 0, b->comm); break;
    }
}

/* Compute for `units`, spreading `probes` MPI_Test calls on req over it. */
static void compute_with_probes(bench_t *b, long units)
{
    if (b->probes <= 0) {
        work(units);
        return;
    }
    long chunk = units / (b->probes + 1);
    for (int k = 0; k < b->probes; k++) {
        int flag;
        work(chunk);
        MPI_Test(&b->req, &flag, MPI_STATUS_IGNORE);
    }
    work(units - chunk * b->probes);
}

/* Run iters operations; return this rank's seconds per operation.
 * what: 0 = collective only, 1 = compute only, 2 = collective + compute. */
static double timed_loop(bench_t *b, long iters, int what, long units)
{
    MPI_Barrier(b->comm);
    double t0 = MPI_Wtime();
    if (1 == what) {
        for (long k = 0; k < iters; k++) work(units);
    } else if (b->nonblocking) {
        for (long k = 0; k < iters; k++) {
            coll_op(b, &b->req, 0);
            if (2 == what) compute_with_probes(b, units);
            MPI_Wait(&b->req, MPI_STATUS_IGNORE);
        }
    } else if (!b->persistent) {
        for (long k = 0; k < iters; k++) blocking_op(b);
    } else if (0 == what) {
        for (long k = 0; k < iters; k++) {
            MPI_Start(&b->req);
            MPI_Wait(&b->req, MPI_STATUS_IGNORE);
        }
    } else {
        for (long k = 0; k < iters; k++) {
            MPI_Start(&b->req);
            compute_with_probes(b, units);
            MPI_Wait(&b->req, MPI_STATUS_IGNORE);
        }
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

/* Max over ranks: a collective is as slow as its slowest rank. */
static double global_max(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

/* -m paired: a batch of MPI_Start + MPI_Wait of the persistent request on
 * the nonblocking call's buffers, in the same launch as the nonblocking
 * batches (a VM's speed can change from one launch to the next); g > 0:
 * on the inputs of generation g, the result checked. */
static double persistent_batch(bench_t *b, long iters, int g)
{
    const MPI_Request nb_req = b->req;
    if (g > 0) fill(b, g);
    b->req = b->preq;
    b->persistent = 1; b->nonblocking = 0;
    const double t = global_max(timed_loop(b, iters, 0, 0));
    if (g > 0) verify(b, g);
    b->req = nb_req;
    b->persistent = 0; b->nonblocking = 1;
    return t;
}

/* --------------------------------------------------------------- measure */

static void measure(bench_t *b)
{
    double *vals = malloc(sizeof(double) * (size_t)(2 * b->batches + b->overlap_batches + 8));
    double *pvals = vals + b->batches + b->overlap_batches + 8;    /* -m paired */
    if (!vals) die("out of memory");
    setup_buffers(b);
    if (b->persistent) coll_op(b, &b->req, 1);
    timed_loop(b, 1, 0, 0);
    verify(b, 0);
    if (b->paired) {
        coll_op(b, &b->preq, 1);
        persistent_batch(b, 1, 2);
    }

    /* calibration and warm-up (iteration counts agreed via global_max) */
    timed_loop(b, 2, 0, 0);
    double t_est = global_max(timed_loop(b, 3, 0, 0));
    if (t_est < 1e-7) t_est = 1e-7;
    long nwarm = bench_clampl(b->warmup_s / t_est, 2, 1000000);
    t_est = global_max(timed_loop(b, nwarm, 0, 0));
    if (t_est < 1e-7) t_est = 1e-7;
    long iters = bench_clampl(b->batch_s / t_est, 2, 10000000);
    if (b->paired) persistent_batch(b, nwarm, 0);

    /* latency (paired: the persistent batches alternate with these, each
     * kind going first in every other pair) */
    for (int k = 0; k < b->batches; k++) {
        if (b->paired && (k & 1)) pvals[k] = persistent_batch(b, iters, 0);
        vals[k] = global_max(timed_loop(b, iters, 0, 0));
        if (b->paired && !(k & 1)) pvals[k] = persistent_batch(b, iters, 0);
    }
    double t_med = bench_median(vals, b->batches), t_min = vals[0];
    double p_med = b->paired ? bench_median(pvals, b->batches) : 0.0, p_min = b->paired ? pvals[0] : 0.0;
    fill(b, 1);
    timed_loop(b, 1, 0, 0);
    verify(b, 1);
    if (b->paired) persistent_batch(b, 1, 3);

    /* init + free cost (persistent); first calls, each on buffers not used
     * before, in setup_buffers' room (nonblocking) */
    double t_init = -1.0;
    if (b->persistent || (b->nonblocking && C_BARRIER != b->coll)) {
        MPI_Request r;
        long ninit = FIRST_CALLS / 5, used = 0;     /* nb <= 5 batches of ninit */
        if (b->persistent) {
            MPI_Barrier(b->comm);
            double t0 = MPI_Wtime();
            coll_op(b, &r, 1);
            MPI_Request_free(&r);
            double t1 = global_max(MPI_Wtime() - t0);
            ninit = bench_clampl(b->batch_s / (t1 > 1e-7 ? t1 : 1e-7), 2, b->init_max);
        }
        int nb = b->batches < 5 ? b->batches : 5;
        for (int k = 0; k < nb; k++) {
            MPI_Barrier(b->comm);
            double t0 = MPI_Wtime();
            for (long i = 0; i < ninit; i++) {
                if (b->persistent) {
                    coll_op(b, &r, 1);
                    MPI_Request_free(&r);
                } else {
                    b->shift = 8 * ++used;
                    coll_op(b, &r, 0);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                }
            }
            vals[k] = global_max((MPI_Wtime() - t0) / (double)ninit);
        }
        t_init = bench_median(vals, nb);
        b->shift = 0;
    }

    /* overlap: batches of pure collective, compute alone and collective +
     * compute are interleaved so that they see the same machine noise */
    double overlap = -1.0;
    if ((b->persistent || b->nonblocking) && b->overlap_batches > 0) {
        long units = bench_clampl(t_med * b->units_per_s, 1, 2000000000L);
        long ov_iters = bench_clampl(b->batch_s / (2.0 * t_med), 2, 10000000);
        int nb = b->overlap_batches;
        double *pure = malloc(sizeof(double) * 3 * (size_t)nb), *comp = pure + nb, *tot = comp + nb;
        if (!pure) die("out of memory");
        for (int k = 0; k < nb; k++) {
            pure[k] = global_max(timed_loop(b, ov_iters, 0, 0));
            comp[k] = global_max(timed_loop(b, ov_iters, 1, units));
            tot[k] = global_max(timed_loop(b, ov_iters, 2, units));
        }
        double t_pure = bench_median(pure, nb), t_comp = bench_median(comp, nb);
        double t_total = bench_median(tot, nb);
        overlap = 100.0 * (1.0 - (t_total - t_comp) / t_pure);
        if (overlap < 0.0) overlap = 0.0;
        if (overlap > 100.0) overlap = 100.0;
        free(pure);
    }

    if (b->persistent) MPI_Request_free(&b->req);
    if (b->paired) MPI_Request_free(&b->preq);
    free_buffers(b);
    free(vals);

    if (0 == b->rank) {
        char init_s[32] = "NA", ov_s[32] = "NA";
        if (t_init >= 0.0) snprintf(init_s, sizeof(init_s), "%.3f", 1e6 * t_init);
        if (overlap >= 0.0) snprintf(ov_s, sizeof(ov_s), "%.1f", overlap);
        printf("%s,%s,%ld,%d,%.3f,%.3f,%s,%s\n", b->label, coll_names[b->coll],
               C_BARRIER == b->coll ? 0L : b->bytes, b->np, 1e6 * t_med, 1e6 * t_min,
               init_s, ov_s);
        if (b->paired) {
            printf("%s-persistent,%s,%ld,%d,%.3f,%.3f,NA,NA\n", b->label, coll_names[b->coll],
                   C_BARRIER == b->coll ? 0L : b->bytes, b->np, 1e6 * p_med, 1e6 * p_min);
        }
        fflush(stdout);
    }
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr,
            "usage: pcoll_bench -l LABEL [-m persistent|nonblocking|paired|blocking]\n"
            "                   [-c COLLS|all] [-s SIZES]\n"
            "                   [-b BATCHES] [-T BATCH_MS] [-w WARMUP_MS] [-i INIT_MAX]\n"
            "                   [-o OVERLAP_BATCHES] [-p PROBES] [-H]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void parse_args(bench_t *b, int argc, char **argv)
{
    int overlap_set = 0;
    b->label = NULL;
    b->persistent = 1;
    b->ncolls = 0;
    b->nsizes = 0;
    b->batches = 9;
    b->batch_s = 0.010;
    b->warmup_s = 0.005;
    b->init_max = 20;
    b->probes = 0;
    b->header = 0;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        const char *v = (a + 1 < argc) ? argv[a + 1] : NULL;
        if (!strcmp(o, "-H")) { b->header = 1; continue; }
        if (NULL == v || o[0] != '-' || o[1] == '\0' || o[2] != '\0') usage();
        a++;
        switch (o[1]) {
        case 'l': b->label = v; break;
        case 'm':
            b->persistent = !strcmp(v, "persistent");
            b->paired = !strcmp(v, "paired");
            b->nonblocking = b->paired || !strcmp(v, "nonblocking");
            if (!b->persistent && !b->nonblocking && strcmp(v, "blocking")) usage();
            break;
        case 'c': {
            char *dup = strdup(v), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int found = 0;
                for (int c = 0; c < C_COUNT; c++) {
                    if (!strcmp(t, "all") || !strcmp(t, coll_names[c])) {
                        if (b->ncolls < C_COUNT) b->colls[b->ncolls++] = c;
                        found = 1;
                    }
                }
                if (!found) { fprintf(stderr, "unknown collective '%s'\n", t); usage(); }
            }
            free(dup);
            break;
        }
        case 's': {
            char *dup = strdup(v), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                long s = bench_parse_size(t);
                if (s <= 0 || s > (1L << 30)) { fprintf(stderr, "bad size '%s'\n", t); usage(); }
                if (b->nsizes < MAX_SIZES) b->sizes[b->nsizes++] = s;
            }
            free(dup);
            break;
        }
        case 'b': b->batches = atoi(v); break;
        case 'T': b->batch_s = atof(v) * 1e-3; break;
        case 'w': b->warmup_s = atof(v) * 1e-3; break;
        case 'i': b->init_max = atoi(v); break;
        case 'o': b->overlap_batches = atoi(v); overlap_set = 1; break;
        case 'p': b->probes = atoi(v); break;
        default: usage();
        }
    }
    if (NULL == b->label) usage();
    if (b->batches < 1) b->batches = 1;
    if (b->init_max < 2) b->init_max = 2;
    if (!overlap_set) b->overlap_batches = b->batches;
    if (b->overlap_batches < 0) b->overlap_batches = 0;
    if (b->batch_s <= 0.0) b->batch_s = 0.010;
    if (0 == b->ncolls) for (int c = 0; c < C_COUNT; c++) b->colls[b->ncolls++] = c;
    if (0 == b->nsizes) {
        static const long def[] = { 8, 4096, 65536, 1048576 };
        for (; b->nsizes < 4; b->nsizes++) b->sizes[b->nsizes] = def[b->nsizes];
    }
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof(b));
    MPI_Init(&argc, &argv);
    parse_args(&b, argc, argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &b.comm);
    MPI_Comm_rank(b.comm, &b.rank);
    MPI_Comm_size(b.comm, &b.np);
    calibrate_work(&b);

    if (0 == b.rank && b.header) {
        printf("impl,coll,bytes,np,median_us,min_us,init_us,overlap_pct\n");
        fflush(stdout);
    }
    for (int c = 0; c < b.ncolls; c++) {
        b.coll = b.colls[c];
        int nsz = C_BARRIER == b.coll ? 1 : b.nsizes;
        for (int s = 0; s < nsz; s++) {
            b.bytes = C_BARRIER == b.coll ? 0 : b.sizes[s];
            measure(&b);
        }
    }

    int failed = b.verify_failed;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Comm_free(&b.comm);
    MPI_Finalize();
    return failed ? 3 : 0;
}
