/*
 * leak_test: resident memory must not grow with persistent collectives.
 *
 *   leak_test [cycles] [N] [LIMIT_MiB]
 *       N (default 300) cycles of: 512 KiB allreduce init, 2x start+wait,
 *       free; a 512 KiB allreduce init + free without start; 64 KiB bcast,
 *       64 KiB reduce and barrier init/start/wait/free.  RSS (/proc/self/statm)
 *       after 30 warm-up cycles and at the end; fails if it grew by more than
 *       LIMIT_MiB (default 8) on any rank.  Meant for np=4.
 *   leak_test longloop [N] [LIMIT_MiB]
 *       one 8-byte allreduce request started and completed N times (default
 *       200000); RSS after 10% warm-up and at the end must not grow by more than
 *       LIMIT_MiB (default 1).  Meant for np=2.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize;

static int report(const char *what, long before, long after, double limit_mib, double secs)
{
    long all[2] = { before, after };
    long *tab = malloc(sizeof(long) * 2 * (size_t)wsize);
    MPI_Gather(all, 2, MPI_LONG, tab, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    int bad = (double)(after - before) > limit_mib * 1048576.0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("leak %s np=%d (%.1f s): RSS after warm-up -> end, growth (limit %.1f MiB):\n", what, wsize, secs,
               limit_mib);
        for (int r = 0; r < wsize; r++)
            printf("  rank %d: %8.2f MiB -> %8.2f MiB  growth %+8.2f MiB%s\n", r, tab[2 * r] / 1048576.0,
                   tab[2 * r + 1] / 1048576.0, (tab[2 * r + 1] - tab[2 * r]) / 1048576.0,
                   (double)(tab[2 * r + 1] - tab[2 * r]) > limit_mib * 1048576.0 ? "  <-- TOO MUCH" : "");
        printf("%s leak-%s np=%d\n", bad ? "FAIL" : "PASS", what, wsize);
    }
    free(tab);
    return bad;
}

static int bad_result;

static void check(const char *what, const double *b, int n, double expect_scale)
{
    for (int i = 0; i < n; i += 97)
        if (b[i] != (double)(i % 1000) * expect_scale) {
            if (!bad_result) printf("FAIL leak rank %d: %s result wrong at %d: %g\n", wrank, what, i, b[i]);
            bad_result = 1;
            return;
        }
}

static void cycle(double *a, double *b, double *c, int n_big, int n_small)
{
    MPI_Request r;
    MPIX_Allreduce_init(a, b, n_big, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int k = 0; k < 2; k++) {
        memset(b, 0, sizeof(double) * (size_t)n_big);
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check("allreduce", b, n_big, wsize);
    }
    MPI_Request_free(&r);
    /* never started */
    MPIX_Allreduce_init(a, b, n_big, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Request_free(&r);

    if (wrank != 0) memset(c, 0, sizeof(double) * (size_t)n_small);
    else for (int i = 0; i < n_small; i++) c[i] = (double)(i % 1000);
    MPIX_Bcast_init(c, n_small, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
    check("bcast", c, n_small, 1);

    MPIX_Reduce_init(a, b, n_small, MPI_DOUBLE, MPI_SUM, wsize - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
    if (wrank == wsize - 1) check("reduce", b, n_small, wsize);

    MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cycles";
    int bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    watchdog_init("leak_test", wrank);
    watchdog_arm(280, "leak_test %s", mode);

    if (!strcmp(mode, "cycles")) {
        int n = argc > 2 ? atoi(argv[2]) : 300;
        double limit = argc > 3 ? atof(argv[3]) : 8.0;
        int warm = n / 10;
        const int n_big = 512 * 1024 / (int)sizeof(double), n_small = 64 * 1024 / (int)sizeof(double);
        double *a = malloc(sizeof(double) * (size_t)n_big), *b = malloc(sizeof(double) * (size_t)n_big);
        double *c = malloc(sizeof(double) * (size_t)n_small);
        for (int i = 0; i < n_big; i++) a[i] = (double)(i % 1000);
        for (int i = 0; i < warm; i++) cycle(a, b, c, n_big, n_small);
        MPI_Barrier(MPI_COMM_WORLD);
        long before = rss_bytes();
        double t0 = now_sec();
        for (int i = warm; i < n; i++) cycle(a, b, c, n_big, n_small);
        MPI_Barrier(MPI_COMM_WORLD);
        long after = rss_bytes();
        bad = report("cycles", before, after, limit, now_sec() - t0);
        free(a);
        free(b);
        free(c);
    } else if (!strcmp(mode, "longloop")) {
        long n = argc > 2 ? atol(argv[2]) : 200000;
        double limit = argc > 3 ? atof(argv[3]) : 1.0;
        double a = 1.0, b = 0;
        MPI_Request r;
        MPIX_Allreduce_init(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        long before = 0;
        double t0 = 0;
        for (long i = 0; i < n; i++) {
            if (i == n / 10) {
                before = rss_bytes();
                t0 = now_sec();
            }
            a = (double)(i % 7);
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            if (b != a * wsize && !bad_result) {
                printf("FAIL leak rank %d: longloop iteration %ld: got %g expected %g\n", wrank, i, b, a * wsize);
                bad_result = 1;
            }
        }
        long after = rss_bytes();
        MPI_Request_free(&r);
        bad = report("longloop", before, after, limit, now_sec() - t0);
    } else {
        if (wrank == 0) printf("usage: leak_test [cycles [N [LIMIT_MiB]] | longloop [N [LIMIT_MiB]]]\n");
        bad = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad_result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    watchdog_arm(60, "leak_test MPI_Finalize");
    MPI_Finalize();
    return (bad || bad_result) ? 1 : 0;
}
