/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * nbc_alloc: heap calls per nonblocking call + MPI_Wait with fixed
 * arguments.  Needs the alloc_counter preload library (LD_PRELOAD, see
 * alloc_counter.c).  For MPI_Ibarrier and MPI_Ibcast / MPI_Iallreduce of
 * 8 B, 4 KiB and 64 KiB: one first call (a schedule cache builds its
 * schedule here), 50 more, reset the counters, 1000 calls + MPI_Wait.
 *
 * Asserted: no malloc/calloc/realloc/free made directly by objects whose
 * path contains $ALLOC_COUNTER_MATCH (default "pnbc") during the 1000
 * calls, and the result of every call.  Self-checks: the counter is
 * preloaded and sees this program's calls, a matching object is loaded.
 */
#define _GNU_SOURCE
#include "nbc_common.h"
#include "alloc_counter.h"

#define WARMUP 50
#define ITERS 1000

int main(int argc, char **argv)
{
    int wsize;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &nbc_wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    nbc_prog = "nbc_alloc";

    if (!ac_find()) {
        printf("FAIL nbc_alloc: alloc_counter API not found: run with LD_PRELOAD=.../alloc_counter.so\n");
        MPI_Finalize();
        return 2;
    }
    unsigned long m[4], o[4], nmalloc, nfree;
    ac_probe(4, &nmalloc, &nfree);
    if (nmalloc < 4 || nfree < 4) {
        nbc_fail("the counter saw %lu of 4 mallocs: interposition broken", nmalloc);
    }
    if (0 == ac_loaded()) {
        nbc_fail("no loaded object matches \"%s\"", ac_match());
    }

    const struct { const char *coll; size_t bytes; } cases[] = {
        { "ibarrier", 0 }, { "ibcast", 8 }, { "ibcast", 4096 }, { "ibcast", 65536 },
        { "iallreduce", 8 }, { "iallreduce", 4096 }, { "iallreduce", 65536 },
    };
    unsigned long first_total = 0;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        const int n = (int) (cases[c].bytes / sizeof(long));
        long *a = nbc_alloc((size_t) n + 1), *b = nbc_alloc((size_t) n + 1);
        unsigned long first[4], fo[4];
        for (int it = 0; it < 1 + WARMUP + ITERS; ++it) {
            MPI_Request req;
            if (0 == it || 1 + WARMUP == it) ac_reset();
            for (int i = 0; i < n; ++i) {
                a[i] = nbc_val(nbc_wrank, i, it);
                b[i] = (0 == nbc_wrank) ? nbc_val(0, i, it) : NBC_POISON;
            }
            if (!strcmp(cases[c].coll, "ibarrier")) MPI_Ibarrier(MPI_COMM_WORLD, &req);
            else if (!strcmp(cases[c].coll, "ibcast"))
                MPI_Ibcast(b, n, MPI_LONG, 0, MPI_COMM_WORLD, &req);
            else MPI_Iallreduce(a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (0 == it) {
                ac_get(first, fo);
                first_total += first[0] + first[1] + first[2];
            }
            for (int i = 0; i < n && (it % 97 == 0 || it == WARMUP + ITERS); ++i) {
                long e = 0;
                if (!strcmp(cases[c].coll, "ibcast")) e = nbc_val(0, i, it);
                else for (int q = 0; q < wsize; ++q) e += nbc_val(q, i, it);
                if (b[i] != e) {
                    nbc_fail("%s %zu B call %d: element %d is %ld, expected %ld", cases[c].coll,
                             cases[c].bytes, it, i, b[i], e);
                    break;
                }
            }
        }
        ac_get(m, o);
        const unsigned long mine = m[0] + m[1] + m[2] + m[3];
        if (mine) {
            nbc_fail("%s %zu B: %lu heap calls from \"%s\" in %d calls after the first "
                     "(malloc %lu calloc %lu realloc %lu free %lu)", cases[c].coll,
                     cases[c].bytes, mine, ac_match(), ITERS, m[0], m[1], m[2], m[3]);
        }
        if (0 == nbc_wrank) {
            printf("  %-10s %6zu B: first call %lu allocations from \"%s\", then %lu in %d calls "
                   "(elsewhere %.3f per call)\n", cases[c].coll, cases[c].bytes,
                   first[0] + first[1] + first[2], ac_match(), mine, ITERS,
                   (double) (o[0] + o[1] + o[2] + o[3]) / ITERS);
        }
        free(a);
        free(b);
    }
    const int total = nbc_total_fails();
    if (0 == nbc_wrank) {
        if (0 == first_total) {
            printf("NOTE nbc_alloc: no allocation from \"%s\" at any first call either: is it "
                   "really the component serving the nonblocking collectives?\n", ac_match());
        }
        printf("%s nbc_alloc np=%d: %d failures\n", total ? "FAIL" : "PASS", wsize, total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
