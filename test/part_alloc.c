/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part_alloc: heap calls of partitioned communication, counted by the
 * alloc_counter preload library (LD_PRELOAD=.../alloc_counter.so, passed
 * with mpirun -x; ALLOC_COUNTER_MATCH names the objects attributed, "pnbc"
 * for libpnbc and the coll component).
 *
 *   part_alloc [cycles] [leak]          (default: both)
 *
 * cycles  ring as in part_test; for 8 B (8 -> 8 partitions of one byte),
 *         4 KiB (4 -> 2), 64 KiB (16 -> 16) and 1 MiB (8 -> 2, vector
 *         type with gaps) messages: init, 50 warm-up
 *         cycles, reset the counters, 1000 cycles of MPI_Startall +
 *         MPI_Pready / _range / _list + MPI_Parrived polling + MPI_Waitall,
 *         read the counters.  Asserted: no malloc / calloc / realloc / free
 *         from a matching object in the 1000 cycles.  The data of the last
 *         cycle is checked (the loop did real work).
 * leak    20 warm-up, then 100 measured rounds of: init a pair, the
 *         misuses of part_misuse (each must fail), one good epoch with its
 *         data checked, free.  Asserted: the misuses fail, the good calls
 *         succeed, the matching objects freed at least as many blocks as
 *         they allocated over the measured rounds, and the heap in use
 *         (mallinfo2, every object) grew by at most 32 KiB over 2000 more
 *         rounds (nothing kept per request, also after errors).
 *
 * Self-checks (fail otherwise): the counter is preloaded, sees this
 * program's own malloc/free, and an object matching is loaded.
 */
#define _GNU_SOURCE
#include "part_common.h"
#include "alloc_counter.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 50
#define ITERS 1000
#define LEAK_ROUNDS 2000        /* rounds over which the heap in use is measured */
#define LEAK_BYTES 32768        /* allowed growth: a leak of >= 16 bytes per round exceeds it */

static int wrank, wsize, dst, src, fails;
static MPI_Comm comm;
static const char *match;

/* one cycle: start both, ready all partitions (3 ways in turn), poll
 * Parrived until every receive partition is in, wait both */
static int cycle(MPI_Request *rq, int ps, int pr, int it)
{
    int rc = MPI_Startall(2, rq), list[64], flag;
    if (rc != MPI_SUCCESS) return rc;
    switch (it % 3) {
    case 0:
        for (int p = ps - 1; p >= 0 && rc == MPI_SUCCESS; p--) rc = MPI_Pready(p, rq[0]);
        break;
    case 1:
        rc = MPI_Pready_range(0, ps - 1, rq[0]);
        break;
    default:
        for (int p = 0, k = 0; p < 2 * ps; p += 2, k++) list[k] = p < ps ? p : p - ps + 1;   /* evens, odds */
        rc = MPI_Pready_list(ps, list, rq[0]);
        break;
    }
    for (int j = 0; j < pr && rc == MPI_SUCCESS; j++) {
        double t0 = now_sec();
        do {
            rc = MPI_Parrived(rq[1], j, &flag);
        } while (rc == MPI_SUCCESS && !flag && now_sec() - t0 < PT_POLL_LIMIT);
        if (rc == MPI_SUCCESS && !flag) rc = MPI_ERR_PENDING;
    }
    int rc2 = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static void case_cycles(void)
{
    struct { int ps, pr; size_t n; dtype_t *dt; } cs[] = {
        { 8, 8, 8, &T_BYTE }, { 4, 2, 1024, &T_INT }, { 16, 16, 16384, &T_INT }, { 8, 2, 32768, &T_VECD },
    };
    if (wrank == 0)
        printf("part_alloc cycles: np=%d, attribution \"%s\"; per start/Pready/Parrived/wait cycle over %d "
               "(max over ranks)\n  %-22s | %-34s | %s\n", wsize, match, ITERS, "message",
               "in matching objects: mal/cal/real/free", "elsewhere: mal/cal/real/free");
    for (int c = 0; c < (int)(sizeof cs / sizeof cs[0]); c++) {
        size_t bytes = cs[c].n * cs[c].dt->extent;
        unsigned char *sb = xmalloc(bytes), *rb = xmalloc(bytes + PT_GUARD), *exp = xmalloc(bytes + PT_GUARD);
        MPI_Request rq[2];
        unsigned long m[4], o[4];
        char msg[300];
        watchdog_arm(120, "part_alloc cycles %d -> %d, %zu B", cs[c].ps, cs[c].pr, bytes);
        int rc = MPI_Psend_init(sb, cs[c].ps, (MPI_Count)(cs[c].n / (size_t)cs[c].ps), cs[c].dt->type, dst, 60 + c,
                                comm, MPI_INFO_NULL, &rq[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Precv_init(rb, cs[c].pr, (MPI_Count)(cs[c].n / (size_t)cs[c].pr), cs[c].dt->type, src, 60 + c,
                                comm, MPI_INFO_NULL, &rq[1]);
        if (rc != MPI_SUCCESS) {
            printf("FAIL part_alloc rank %d: init returned %s\n", wrank, err_class_str(rc));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int it = 0; it < WARMUP && rc == MPI_SUCCESS; it++) rc = cycle(rq, cs[c].ps, cs[c].pr, it);
        memset(rb, POISON_RECV, bytes + PT_GUARD);
        pt_fill(sb, cs[c].dt, 0, cs[c].n, pt_seed(c, 0, wrank, 0));
        pt_expect(exp, bytes, cs[c].dt, cs[c].n, pt_seed(c, 0, src, 0));
        ac_reset();
        for (int it = 0; it < ITERS && rc == MPI_SUCCESS; it++) rc = cycle(rq, cs[c].ps, cs[c].pr, it);
        ac_get(m, o);
        if (rc != MPI_SUCCESS) {
            printf("FAIL part_alloc rank %d: %zu B cycle returned %s\n", wrank, bytes, err_class_str(rc));
            fails++;
        } else if (pt_cmp(rb, exp, 0, bytes + PT_GUARD, cs[c].dt, msg, sizeof msg)) {
            printf("FAIL part_alloc rank %d: %zu B: data of the last cycle: %s\n", wrank, bytes, msg);
            fails++;
        }
        unsigned long mine = m[0] + m[1] + m[2] + m[3], all[8], mx[8];
        if (mine) {
            printf("FAIL part_alloc rank %d: %d -> %d partitions, %zu B: %lu heap calls from \"%s\" in %d cycles "
                   "(malloc %lu calloc %lu realloc %lu free %lu)\n", wrank, cs[c].ps, cs[c].pr, bytes, mine, match,
                   ITERS, m[0], m[1], m[2], m[3]);
            fails++;
        }
        for (int k = 0; k < 4; k++) {
            all[k] = m[k];
            all[4 + k] = o[k];
        }
        MPI_Allreduce(all, mx, 8, MPI_UNSIGNED_LONG, MPI_MAX, comm);
        if (wrank == 0)
            printf("  %2d -> %2d, %8zu B %-5s | %7.3f %7.3f %7.3f %7.3f    | %7.3f %7.3f %7.3f %7.3f\n", cs[c].ps,
                   cs[c].pr, bytes, cs[c].dt->name, mx[0] / (double)ITERS, mx[1] / (double)ITERS,
                   mx[2] / (double)ITERS, mx[3] / (double)ITERS, mx[4] / (double)ITERS, mx[5] / (double)ITERS,
                   mx[6] / (double)ITERS, mx[7] / (double)ITERS);
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        free(sb);
        free(rb);
        free(exp);
    }
}

/* one round of the leak mode; returns the number of unexpected results */
static int leak_round(int it)
{
    enum { PS = 4, PR = 2, N = 64 };
    int sb[N], rb[N], bad = 0, flag, l[1];
    MPI_Request rq[2];
    for (int i = 0; i < N; i++) {
        sb[i] = (it << 8) + i + wrank * 100000;
        rb[i] = -1;
    }
    int rc = MPI_Psend_init(sb, PS, N / PS, MPI_INT, dst, 70, comm, MPI_INFO_NULL, &rq[0]);
    if (rc == MPI_SUCCESS) rc = MPI_Precv_init(rb, PR, N / PR, MPI_INT, src, 70, comm, MPI_INFO_NULL, &rq[1]);
    if (rc != MPI_SUCCESS) return 1;
    /* bad inits (the classes are part_misuse's business: only "fails") */
    MPI_Request x = MPI_REQUEST_NULL;
    bad += MPI_Psend_init(sb, -1, 4, MPI_INT, dst, 71, comm, MPI_INFO_NULL, &x) == MPI_SUCCESS;
    bad += MPI_Precv_init(rb, 2, -1, MPI_INT, src, 71, comm, MPI_INFO_NULL, &x) == MPI_SUCCESS;
    bad += MPI_Precv_init(rb, 2, 4, MPI_INT, MPI_ANY_SOURCE, 71, comm, MPI_INFO_NULL, &x) == MPI_SUCCESS;
    bad += MPI_Pready(0, rq[0]) == MPI_SUCCESS;                 /* inactive */
    if (MPI_Startall(2, rq) != MPI_SUCCESS) return bad + 1;
    bad += MPI_Pready(PS, rq[0]) == MPI_SUCCESS;
    bad += MPI_Pready_range(-1, 1, rq[0]) == MPI_SUCCESS;
    l[0] = PS;
    bad += MPI_Pready_list(1, l, rq[0]) == MPI_SUCCESS;
    bad += MPI_Parrived(rq[1], PR, &flag) == MPI_SUCCESS;
    bad += MPI_Parrived(rq[0], 0, &flag) == MPI_SUCCESS;
    bad += MPI_Pready(1, rq[0]) != MPI_SUCCESS;
#ifndef MPICH_VERSION
    /* MPICH 4.0.2 does not survive these (see part_misuse) */
    bad += MPI_Pready(1, rq[0]) == MPI_SUCCESS;
    MPI_Request k0 = rq[0], k1 = rq[1];
    bad += MPI_Request_free(&rq[0]) == MPI_SUCCESS;
    bad += MPI_Cancel(&rq[1]) == MPI_SUCCESS;
    if (rq[0] != k0 || rq[1] != k1) return bad + 100;
#endif
    l[0] = 3;
    bad += MPI_Pready_list(1, l, rq[0]) != MPI_SUCCESS;
    bad += MPI_Pready_range(0, 0, rq[0]) != MPI_SUCCESS;
    bad += MPI_Pready(2, rq[0]) != MPI_SUCCESS;
    bad += MPI_Waitall(2, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
    for (int i = 0; i < N; i++) bad += rb[i] != (it << 8) + i + src * 100000;
    bad += MPI_Request_free(&rq[0]) != MPI_SUCCESS;
    bad += MPI_Request_free(&rq[1]) != MPI_SUCCESS;
    return bad;
}

/* bytes of heap in use (malloc'ed, not freed), all objects */
static long heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

static void case_leak(void)
{
    unsigned long m[4], o[4];
    int bad = 0;
    watchdog_arm(120, "part_alloc leak");
    for (int it = 0; it < 20; it++) bad += leak_round(it);
    ac_reset();
    for (int it = 20; it < 120; it++) bad += leak_round(it);
    ac_get(m, o);
    /* heap growth over LEAK_ROUNDS more rounds, whoever allocated */
    for (int it = 120; it < 220; it++) bad += leak_round(it);
    long h0 = heap_in_use();
    for (int it = 220; it < 220 + LEAK_ROUNDS; it++) bad += leak_round(it);
    long grow = heap_in_use() - h0;
    if (grow > LEAK_BYTES) {
        printf("FAIL part_alloc leak rank %d: the heap in use grew by %ld bytes over %d init/misuse/epoch/free "
               "rounds (%.1f per round; limit %d bytes)\n", wrank, grow, LEAK_ROUNDS, grow / (double)LEAK_ROUNDS,
               LEAK_BYTES);
        fails++;
    }
    /* blocks allocated minus blocks freed by the matching objects: more
     * allocated than freed is a leak (fewer can be blocks made elsewhere,
     * e.g. by strdup, and freed here) */
    long net = (long)(m[0] + m[1]) - (long)m[3];
    if (bad) {
        printf("FAIL part_alloc leak rank %d: %d unexpected results (misuse accepted, good call failed or "
               "wrong data)\n", wrank, bad);
        fails++;
    }
    if (net > 0) {
        printf("FAIL part_alloc leak rank %d: over 100 init/misuse/epoch/free rounds \"%s\" allocated %lu blocks "
               "(malloc %lu calloc %lu, realloc %lu) and freed %lu: %ld blocks kept\n", wrank, match,
               m[0] + m[1], m[0], m[1], m[2], m[3], net);
        fails++;
    }
    long all[3] = { (long)(m[0] + m[1]), net, grow }, mx[3];
    MPI_Allreduce(all, mx, 3, MPI_LONG, MPI_MAX, comm);
    if (wrank == 0)
        printf("part_alloc leak: per round (max over ranks) %.2f allocations from \"%s\", net %ld over 100 rounds; "
               "heap growth %ld bytes over %d rounds\n", mx[0] / 100.0, match, mx[1], mx[2], LEAK_ROUNDS);
}

int main(int argc, char **argv)
{
    int do_cycles = 0, do_leak = 0;
    test_init(&argc, &argv, "part_alloc", &wrank, &wsize);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "cycles")) do_cycles = 1;
        else if (!strcmp(argv[i], "leak")) do_leak = 1;
    }
    if (!do_cycles && !do_leak) do_cycles = do_leak = 1;
    if (!ac_find()) {
        if (wrank == 0)
            printf("FAIL part_alloc: alloc_counter API not found: run with LD_PRELOAD=<path>/alloc_counter.so\n");
        MPI_Finalize();
        return 2;
    }
    match = ac_match();
    abort_unless(types_create() == MPI_SUCCESS, "the derived datatypes");
    pt_ring(&comm, &dst, &src);
    /* self-check: the interposition sees our own calls */
    unsigned long nmalloc, nfree;
    ac_probe(10, &nmalloc, &nfree);
    if (nmalloc < 10 || nfree < 10) {
        printf("FAIL part_alloc rank %d: counter saw only %lu mallocs / %lu frees of 10\n", wrank, nmalloc, nfree);
        fails++;
    }
    if (ac_loaded() == 0) {
        printf("FAIL part_alloc rank %d: no loaded object matches \"%s\" (set ALLOC_COUNTER_MATCH)\n", wrank, match);
        fails++;
    }
    if (do_cycles) case_cycles();
    if (do_leak) case_leak();
    watchdog_arm(60, "part_alloc final");
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("%s part_alloc np=%d (match \"%s\")\n", fails ? "FAIL" : "PASS", wsize, match);
    types_free();
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return fails ? 1 : 0;
}
