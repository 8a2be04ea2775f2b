/*
 * alloc_test: heap allocations per start+wait of persistent collectives.
 *
 * Needs the alloc_counter preload library (LD_PRELOAD=.../alloc_counter.so,
 * passed to the MPI processes with mpirun -x).  For barrier and for bcast,
 * reduce, allreduce of 8 B, 4 KiB and 1 MiB: init, 50 warm-up start+wait,
 * reset the counters, 1000 start+wait, read the counters.
 *
 * Asserted: no malloc/calloc/realloc/free made directly by the component
 * under test (objects whose path contains $ALLOC_COUNTER_MATCH, default
 * mca_coll_pnbc) during the 1000 start+wait.  Reported only: calls from
 * everywhere else.
 *
 * Self-checks (fail otherwise): the counter is preloaded, it sees this
 * program's own malloc/free calls, and an object matching the attribution
 * substring is loaded in the process.
 */
#define _GNU_SOURCE
#include "common.h"
#include "alloc_counter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 50
#define ITERS 1000

static int wrank, wsize;

int main(int argc, char **argv)
{
    int fails = 0;
    unsigned long init_allocs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    watchdog_init("alloc_test", wrank);

    if (!ac_find()) {
        if (wrank == 0) printf("FAIL alloc: alloc_counter API not found: run with LD_PRELOAD=<path>/alloc_counter.so\n");
        MPI_Finalize();
        return 2;
    }
    const char *match = ac_match();

    /* self-check: the interposition sees our own calls */
    unsigned long nmalloc, nfree;
    ac_probe(10, &nmalloc, &nfree);
    if (nmalloc < 10 || nfree < 10) {
        printf("FAIL alloc rank %d: counter saw only %lu mallocs / %lu frees of 10: interposition broken\n",
               wrank, nmalloc, nfree);
        fails++;
    }
    int nloaded = ac_loaded();
    if (nloaded == 0) {
        printf("FAIL alloc rank %d: no loaded object matches \"%s\": the component under test is not loaded "
               "(check the component path / --mca coll, or set ALLOC_COUNTER_MATCH)\n", wrank, match);
        fails++;
    }

    struct { coll_t coll; size_t bytes; } cases[] = {
        { C_BARRIER, 0 },
        { C_BCAST, 8 }, { C_BCAST, 4096 }, { C_BCAST, 1 << 20 },
        { C_REDUCE, 8 }, { C_REDUCE, 4096 }, { C_REDUCE, 1 << 20 },
        { C_ALLREDUCE, 8 }, { C_ALLREDUCE, 4096 }, { C_ALLREDUCE, 1 << 20 },
    };
    if (wrank == 0)
        printf("alloc: np=%d, attribution substring \"%s\"; per start+wait over %d iterations (max over ranks)\n"
               "  %-10s %8s | %-34s | %s\n", wsize, match, ITERS, "coll", "size",
               "in matching object: mal/cal/real/free", "elsewhere: mal/cal/real/free   (init: matching allocs)");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        coll_t coll = cases[c].coll;
        int count = (int)(cases[c].bytes / sizeof(double));
        double *a = malloc(cases[c].bytes + 8), *b = malloc(cases[c].bytes + 8);
        for (int i = 0; i < count; i++) a[i] = (double)(i % 100);
        MPI_Request req = MPI_REQUEST_NULL;
        unsigned long m0[4], o0[4], m[4], o[4];
        int rc = MPI_SUCCESS;
        watchdog_arm(120, "alloc_test %s %zu B", coll_name(coll), cases[c].bytes);
        ac_reset();
        switch (coll) {
        case C_BARRIER: rc = MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req); break;
        case C_BCAST: rc = MPIX_Bcast_init(a, count, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req); break;
        case C_REDUCE:
            rc = MPIX_Reduce_init(a, b, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
            break;
        case C_ALLREDUCE:
            rc = MPIX_Allreduce_init(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
            break;
        }
        ac_get(m0, o0);
        if (rc != MPI_SUCCESS) {
            printf("FAIL alloc rank %d: %s init failed\n", wrank, coll_name(coll));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int i = 0; i < WARMUP; i++) {
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        ac_reset();
        double t0 = now_sec();
        for (int i = 0; i < ITERS; i++) {
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        ac_get(m, o);
        double us = (now_sec() - t0) * 1e6 / ITERS;
        /* correctness of the last round, so the loop measured real work */
        if (coll == C_ALLREDUCE || (coll == C_REDUCE && wrank == 0))
            for (int i = 0; i < count; i++)
                if (b[i] != (double)(i % 100) * wsize) {
                    printf("FAIL alloc rank %d: %s result wrong at %d: %g\n", wrank, coll_name(coll), i, b[i]);
                    fails++;
                    break;
                }
        MPI_Request_free(&req);
        unsigned long all[9], mx[9];
        for (int k = 0; k < 4; k++) {
            all[k] = m[k];
            all[4 + k] = o[k];
        }
        all[8] = m0[0] + m0[1] + m0[2];
        MPI_Allreduce(all, mx, 9, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
        init_allocs += mx[8];
        unsigned long mine = m[0] + m[1] + m[2] + m[3];
        if (mine) {
            printf("FAIL alloc rank %d: %s %zu B: %lu heap calls from %s in %d start+wait "
                   "(malloc %lu calloc %lu realloc %lu free %lu)\n", wrank, coll_name(coll), cases[c].bytes, mine,
                   match, ITERS, m[0], m[1], m[2], m[3]);
            fails++;
        }
        if (wrank == 0)
            printf("  %-10s %8zu | %7.3f %7.3f %7.3f %7.3f    | %7.3f %7.3f %7.3f %7.3f   (init: %lu) %.1f us\n",
                   coll_name(coll), cases[c].bytes, mx[0] / (double)ITERS, mx[1] / (double)ITERS,
                   mx[2] / (double)ITERS, mx[3] / (double)ITERS, mx[4] / (double)ITERS, mx[5] / (double)ITERS,
                   mx[6] / (double)ITERS, mx[7] / (double)ITERS, mx[8], us);
        free(a);
        free(b);
    }
    watchdog_arm(60, "alloc_test final");
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        /* a hint only: nothing in the matching object allocated even during
         * init -> it may not be the component serving the requests */
        if (nloaded > 0 && init_allocs == 0)
            printf("NOTE alloc: no allocation from \"%s\" during any *_init either: is it really the "
                   "component serving persistent collectives (--mca coll, priorities)?\n", match);
        printf("%s alloc np=%d (match \"%s\")\n", fails ? "FAIL" : "PASS", wsize, match);
    }
    MPI_Finalize();
    return fails ? 1 : 0;
}
