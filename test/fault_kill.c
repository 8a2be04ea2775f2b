/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * fault_kill: a lost process.  Every rank runs a start/wait loop of
 * persistent collectives (allreduce and bcast of 8 B and 64 KiB: the shm
 * transport between the ranks of the node) and a partitioned send/receive
 * around a ring (libpnbc); each round's results are checked.  In round
 * --kill-round, rank --victim starts all its requests, readies half of its
 * send partitions and then kills itself with SIGKILL, in the middle of the
 * round (its peers are blocked in MPI_Waitall on requests it will never
 * complete).  cases.d/fault.sh checks what happens next: mpirun must end
 * with a non-zero status and report the failure, within a bound after the
 * kill, and leave none of this job's /dev/shm/pnbc.* directories behind.
 *
 *   fault_kill --out PREFIX [--victim R] [--kill-round K] [--rounds N]
 *
 * Files written (for the script):
 *   PREFIX.dirs  (rank 0, before the kill) the part ".<uid>.<jobid hex>." of
 *                the names of this job's pnbc shm directories
 *                "pnbc.<node>.<uid>.<jobid hex>.<vpid>.<key>" and,
 *                one a line, the directories of that job that exist then
 *                (after a barrier that follows the first rounds: every rank
 *                has received through shm by then)
 *   PREFIX.kill  (victim) its CLOCK_REALTIME time (seconds) right before
 *                raise(SIGKILL)
 * Without a kill (--kill-round beyond --rounds) the program ends normally:
 * "PASS fault_kill" (used by the script as a control run).
 */
#include "part_common.h"
#include "shm_dirs.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NCOLL 4                 /* allreduce 8 B, allreduce 64 KiB, bcast 8 B, bcast 64 KiB */
#define BIG (64 * 1024 / (int)sizeof(long))
#define NPART 8
#define PCOUNT 512              /* longs per partition */

static int wrank, wsize;

static long val(int round, int rank, int k, int which)
{
    return (long)(input_seed((uint64_t)which, round, rank) % 100000) + k;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0: the prefix of this job's directories and those that exist. */
static int write_dirs(const char *out)
{
    char prefix[100], path[600];
    /* pnbc.<node>.<uid>.<jobid hex>.<vpid>.<key>: match ".<uid>.<jobid hex>."
     * after "pnbc." (the node name is the runtime's) */
    if (!shm_own_token(0, prefix, sizeof prefix)) {
        printf("FAIL fault_kill: this process has no pnbc shm directory open\n");
        return 0;
    }
    snprintf(path, sizeof path, "%s.dirs", out);
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("FAIL fault_kill: cannot write %s\n", path);
        return 0;
    }
    fprintf(f, "%s\n", prefix);
    int n = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "pnbc.", 5) == 0 && strstr(e->d_name + 4, prefix) != NULL) {
            fprintf(f, "%s\n", e->d_name);
            n++;
        }
    }
    if (d) closedir(d);
    fclose(f);
    printf("fault_kill: %d shm directories of this job (names pnbc.*%s*)\n", n, prefix);
    return 1;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int victim = -1, kill_round = 200, rounds = 100000;
    test_init(&argc, &argv, "fault_kill", &wrank, &wsize);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--victim") && i + 1 < argc) victim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kill-round") && i + 1 < argc) kill_round = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    }
    if (victim < 0) victim = wsize - 1;
    if (!out || wsize < 2 || victim >= wsize) {
        if (wrank == 0) printf("FAIL fault_kill: usage: --out PREFIX [--victim R<np] (np >= 2)\n");
        MPI_Finalize();
        return 1;
    }
    int counts[NCOLL] = { 1, BIG, 1, BIG };
    long *sb[NCOLL], *rb[NCOLL];
    MPI_Request rq[NCOLL + 2];
    for (int c = 0; c < NCOLL; c++) {
        sb[c] = xcalloc((size_t)counts[c], sizeof(long));
        rb[c] = xcalloc((size_t)counts[c], sizeof(long));
    }
    abort_unless(MPIX_Allreduce_init(sb[0], rb[0], 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]) == 0,
                 "allreduce 8 B");
    abort_unless(MPIX_Allreduce_init(sb[1], rb[1], BIG, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]) == 0,
                 "allreduce 64 KiB");
    abort_unless(MPIX_Bcast_init(rb[2], 1, MPI_LONG, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]) == 0, "bcast 8 B");
    abort_unless(MPIX_Bcast_init(rb[3], BIG, MPI_LONG, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]) == 0,
                 "bcast 64 KiB");
    long *ps = xcalloc(NPART * PCOUNT, sizeof(long)), *pr = xcalloc(NPART * PCOUNT, sizeof(long));
    int dst = (wrank + 1) % wsize, src = (wrank + wsize - 1) % wsize;
    abort_unless(MPI_Psend_init(ps, NPART, PCOUNT, MPI_LONG, dst, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[4]) == 0,
                 "psend");
    abort_unless(MPI_Precv_init(pr, NPART, PCOUNT, MPI_LONG, src, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[5]) == 0,
                 "precv");

    long nbad = 0;
    for (int r = 0; r < rounds; r++) {
        watchdog_arm(60, "round %d (victim %d dies in round %d)", r, victim, kill_round);
        for (int k = 0; k < counts[0]; k++) sb[0][k] = val(r, wrank, k, 0);
        for (int k = 0; k < counts[1]; k++) sb[1][k] = val(r, wrank, k, 1);
        for (int k = 0; k < 1; k++) rb[2][k] = wrank == 0 ? val(r, 0, k, 2) : -1;
        for (int k = 0; k < BIG; k++) rb[3][k] = wrank == 1 ? val(r, 1, k, 3) : -1;
        for (int k = 0; k < NPART * PCOUNT; k++) pr[k] = -1;
        if (MPI_Startall(NCOLL + 2, rq) != MPI_SUCCESS) {
            printf("FAIL fault_kill rank %d: MPI_Startall in round %d\n", wrank, r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int p = 0; p < NPART; p++) {
            if (r == kill_round && wrank == victim && p == NPART / 2) {
                char path[600];
                snprintf(path, sizeof path, "%s.kill", out);
                FILE *f = fopen(path, "w");
                if (f) {
                    fprintf(f, "%.6f\n", wall_now());
                    fclose(f);
                }
                raise(SIGKILL);
            }
            for (int k = 0; k < PCOUNT; k++) ps[p * PCOUNT + k] = val(r, wrank, p * PCOUNT + k, 4);
            MPI_Pready(p, rq[4]);
        }
        if (MPI_Waitall(NCOLL + 2, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            printf("FAIL fault_kill rank %d: MPI_Waitall in round %d\n", wrank, r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* check against the locally computed references */
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < counts[c]; k++) {
                long e = 0;
                for (int q = 0; q < wsize; q++) e += val(r, q, k, c);
                if (rb[c][k] != e && nbad++ < 5)
                    printf("FAIL fault_kill rank %d round %d allreduce %d elem %d: %ld != %ld\n", wrank, r,
                           c, k, rb[c][k], e);
            }
        if (rb[2][0] != val(r, 0, 0, 2) && nbad++ < 5)
            printf("FAIL fault_kill rank %d round %d bcast 8 B\n", wrank, r);
        for (int k = 0; k < BIG; k++)
            if (rb[3][k] != val(r, 1, k, 3) && nbad++ < 5)
                printf("FAIL fault_kill rank %d round %d bcast 64 KiB elem %d\n", wrank, r, k);
        for (int k = 0; k < NPART * PCOUNT; k++)
            if (pr[k] != val(r, src, k, 4) && nbad++ < 5)
                printf("FAIL fault_kill rank %d round %d partitioned elem %d\n", wrank, r, k);
        if (r == 2) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (wrank == 0 && !write_dirs(out)) nbad++;
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    watchdog_disarm();
    for (int i = 0; i < NCOLL + 2; i++) MPI_Request_free(&rq[i]);
    long tot = 0;
    MPI_Allreduce(&nbad, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("%s fault_kill: %d rounds, no kill\n", tot ? "FAIL" : "PASS", rounds);
    MPI_Finalize();
    return tot ? 1 : 0;
}
