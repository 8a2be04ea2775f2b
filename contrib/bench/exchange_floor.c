/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the machine allows for a two-process alltoall, measured without
 * MPI: the least work any on-node implementation does.  Two processes
 * (fork) each own a send buffer of two blocks (one for itself, one for
 * the other) and a receive buffer of two blocks, on their own heaps as an
 * application's would be (each on pages).  Per iteration, after a barrier
 * on a shared line, each process
 *
 *   cma     reads the other's block for it with one process_vm_readv
 *           (single copy, the fastest way across processes here) and
 *           copies its own block with memcpy;
 *   box     copies the other's block into a shared box (memcpy), raises
 *           its flag, copies its own block, waits for the other's flag and
 *           copies its block out of the other's box: the two copies of the
 *           bare ping-pong (shm_floor.c) in both directions at once, plus
 *           the own block -- the least work of an alltoall through boxes,
 *           where a single copy is dear;
 *   local   copies its own block only (both processes at once: what the
 *           two cores' copies cost when they run together);
 *   barrier does only the barrier (its cost is included above).
 *
 * and for a two-process allreduce (MPI_SUM of doubles; SIZE is the whole
 * vector, its first SIZE bytes of the send buffer):
 *
 *   fold    copies its vector into its box, raises its flag, waits for
 *           the other's and folds the other's box with its own vector
 *           into its receive buffer in one pass (result = own + other's):
 *           the whole-vector exchange of recursive doubling through boxes;
 *   halves  a reduce-scatter then an allgather through boxes (Rabenseifner):
 *           the half the other reduces into the box, fold the other's half
 *           with its own into its receive buffer, that reduced half into
 *           the box's second half, the other's reduced half out of it.
 *
 * Every byte of each receive buffer is written once, which is the least
 * any alltoall does; both processes copy at the same time, as they do in
 * an alltoall.  No MPI implementation on this node can go below the
 * `cma` line by more than the barrier.
 *
 * Output: "floor,alltoall|allreduce|barrier,MODE,BYTES,US" (median over
 * batches of the slower process's time per iteration).
 * Usage: exchange_floor [-s SIZES] [-T MS] [-b BATCHES] [-m MODES]
 *        (K/M allowed; MODES: comma list of cma, box, local, barrier,
 *        fold, halves; default cma,barrier)
 */

#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define LINE 128
#define MAX_BATCHES 64

enum { MODE_BARRIER, MODE_CMA, MODE_BOX, MODE_LOCAL, MODE_FOLD, MODE_HALVES, NMODES };
static const char *const mode_names[NMODES] = { "barrier", "cma", "box", "local", "fold",
                                                "halves" };

typedef struct shared_t {
    volatile uint64_t arrive[2] __attribute__((aligned(LINE)));
    char pad0[LINE - 2 * sizeof(uint64_t)];
    volatile uint64_t sbuf[2];      /* each process's send buffer address */
    volatile int64_t pid[2];
    volatile uint64_t iters;        /* chosen by process 0 per batch */
    volatile double t[2][MAX_BATCHES];
    /* box mode: each process's flag (the iteration whose block is in its
     * box), then from the next page on a box per process */
    volatile uint64_t full[2] __attribute__((aligned(LINE)));
    /* halves mode: the flag of the reduced half in the box's second half */
    volatile uint64_t reduced[2] __attribute__((aligned(LINE)));
} shared_t;

/* Sense-free barrier on two counters: each raises its own, waits for the
 * other's to reach the same generation. */
static void barrier(shared_t *sh, int me, uint64_t *gen)
{
    ++*gen;
    __atomic_store_n(&sh->arrive[me], *gen, __ATOMIC_RELEASE);
    while (__atomic_load_n(&sh->arrive[1 - me], __ATOMIC_ACQUIRE) < *gen) {
        __asm__ volatile("pause");
    }
}

/* Spin until *flag says iteration gen. */
static void wait_flag(volatile uint64_t *flag, uint64_t gen)
{
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != gen) {
        __asm__ volatile("pause");
    }
}

/* Box mode: my block for the other into my box, then my own block; the
 * other's block out of its box once its flag says this iteration's is
 * there.  The barrier that starts the next iteration tells each process
 * its box has been read. */
static void box_iteration(shared_t *sh, char *const box[2], size_t n, const char *sbuf,
                          char *rbuf, int me, uint64_t gen)
{
    memcpy(box[me], sbuf + (size_t) (1 - me) * n, n);
    __atomic_store_n(&sh->full[me], gen, __ATOMIC_RELEASE);
    memcpy(rbuf + (size_t) me * n, sbuf + (size_t) me * n, n);
    wait_flag(&sh->full[1 - me], gen);
    memcpy(rbuf + (size_t) (1 - me) * n, box[1 - me], n);
}

/* result = own + other's, one pass over the three (n bytes of doubles) */
static void fold(double *restrict out, const double *restrict own, const double *restrict other,
                 size_t n)
{
    for (size_t i = 0; i < n / sizeof(double); ++i) {
        out[i] = own[i] + other[i];
    }
}

/* Allreduce modes (n: the vector's bytes, a multiple of 16). */
static void allreduce_iteration(shared_t *sh, char *const box[2], int mode, size_t n,
                                const char *sbuf, char *rbuf, int me, uint64_t gen)
{
    if (MODE_FOLD == mode) {
        memcpy(box[me], sbuf, n);
        __atomic_store_n(&sh->full[me], gen, __ATOMIC_RELEASE);
        wait_flag(&sh->full[1 - me], gen);
        fold((double *) rbuf, (const double *) sbuf, (const double *) box[1 - me], n);
        return;
    }
    const size_t h = n / 2, mine = (size_t) me * h, theirs = (size_t) (1 - me) * h;
    memcpy(box[me], sbuf + theirs, h);
    __atomic_store_n(&sh->full[me], gen, __ATOMIC_RELEASE);
    wait_flag(&sh->full[1 - me], gen);
    fold((double *) (rbuf + mine), (const double *) (sbuf + mine), (const double *) box[1 - me],
         h);
    memcpy(box[me] + h, rbuf + mine, h);
    __atomic_store_n(&sh->reduced[me], gen, __ATOMIC_RELEASE);
    wait_flag(&sh->reduced[1 - me], gen);
    memcpy(rbuf + theirs, box[1 - me] + h, h);
}

static void one_iteration(int mode, size_t n, char *sbuf, char *rbuf, pid_t peer,
                          uint64_t peer_sbuf, int me)
{
    if (MODE_CMA != mode) {
        if (MODE_LOCAL == mode) {
            memcpy(rbuf + (size_t) me * n, sbuf + (size_t) me * n, n);
        }
        return;
    }
    /* the other's block for me sits at index `me` of its send buffer */
    struct iovec local = { rbuf + (size_t) (1 - me) * n, n };
    struct iovec remote = { (void *) (uintptr_t) (peer_sbuf + (uint64_t) me * n), n };
    if ((ssize_t) n != process_vm_readv(peer, &local, 1, &remote, 1, 0)) {
        perror("process_vm_readv");
        exit(1);
    }
    memcpy(rbuf + (size_t) me * n, sbuf + (size_t) me * n, n);
}

static void iteration(shared_t *sh, char *const box[2], int mode, size_t n, char *sbuf,
                      char *rbuf, pid_t peer, uint64_t peer_sbuf, int me, uint64_t gen)
{
    if (MODE_BOX == mode) {
        box_iteration(sh, box, n, sbuf, rbuf, me, gen);
    } else if (MODE_FOLD == mode || MODE_HALVES == mode) {
        allreduce_iteration(sh, box, mode, n, sbuf, rbuf, me, gen);
    } else {
        one_iteration(mode, n, sbuf, rbuf, peer, peer_sbuf, me);
    }
}

static void run(shared_t *sh, char *const box[2], int me, size_t n, int mode, double batch_s,
                int batches)
{
    /* on pages, as shm_floor's: not one just past the other modulo 4 KiB,
     * which makes memcpy several times slower here (memcpy_distance.c) */
    char *sbuf = NULL, *rbuf = NULL;
    if (0 != posix_memalign((void **) &sbuf, 4096, 2 * n) ||
        0 != posix_memalign((void **) &rbuf, 4096, 2 * n)) {
        fprintf(stderr, "exchange_floor: out of memory\n");
        exit(1);
    }
    memset(sbuf, 1 + me, 2 * n);
    memset(rbuf, 0, 2 * n);
    const bool reduces = MODE_FOLD == mode || MODE_HALVES == mode;
    if (reduces) {
        for (size_t i = 0; i < n / sizeof(double); ++i) {
            ((double *) sbuf)[i] = (double) (i % 1000) + (double) me;
        }
    }
    sh->sbuf[me] = (uintptr_t) sbuf;
    uint64_t gen = sh->arrive[me];
    barrier(sh, me, &gen);
    const pid_t peer = (pid_t) sh->pid[1 - me];
    const uint64_t peer_sbuf = sh->sbuf[1 - me];

    /* warm-up, the same count on both sides; process 0 sizes a batch */
    double t0 = 0;
    for (int i = 0; i < 20; ++i) {
        if (10 == i) {
            t0 = bench_now();
        }
        barrier(sh, me, &gen);
        iteration(sh, box, mode, n, sbuf, rbuf, peer, peer_sbuf, me, gen);
    }
    if (0 == me) {
        const double per = (bench_now() - t0) / 10;
        const uint64_t k = (uint64_t) (batch_s / (per > 1e-9 ? per : 1e-9));
        sh->iters = k > 10 ? k : 10;
    }
    barrier(sh, me, &gen);
    const uint64_t iters = sh->iters;
    for (int b = 0; b < batches; ++b) {
        barrier(sh, me, &gen);
        t0 = bench_now();
        for (uint64_t i = 0; i < iters; ++i) {
            barrier(sh, me, &gen);
            iteration(sh, box, mode, n, sbuf, rbuf, peer, peer_sbuf, me, gen);
        }
        sh->t[me][b] = (bench_now() - t0) / (double) iters;
    }
    barrier(sh, me, &gen);
    const bool moved = MODE_CMA == mode || MODE_BOX == mode;
    if (reduces) {
        for (size_t i = 0; i < n / sizeof(double); ++i) {
            if (((double *) rbuf)[i] != (double) (2 * (i % 1000) + 1)) {
                fprintf(stderr, "exchange_floor: wrong sum\n");
                exit(1);
            }
        }
    } else if ((moved && rbuf[(size_t) (1 - me) * n + n - 1] != 2 - me) ||
        (MODE_BARRIER != mode && rbuf[(size_t) me * n] != 1 + me)) {
        fprintf(stderr, "exchange_floor: wrong data\n");
        exit(1);
    }
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    const char *sizes = "64K,256K,1M";
    double batch_ms = 10;
    int batches = 9;
    int modes[NMODES], nmodes = 0;
    char *mode_list = strdup("cma,barrier");
    int opt;
    while (-1 != (opt = getopt(argc, argv, "s:T:b:m:"))) {
        switch (opt) {
        case 's': sizes = optarg; break;
        case 'T': batch_ms = atof(optarg); break;
        case 'b': batches = atoi(optarg); break;
        case 'm': free(mode_list); mode_list = strdup(optarg); break;
        default:
            fprintf(stderr, "usage: exchange_floor [-s SIZES] [-T MS] [-b BATCHES] "
                            "[-m cma,box,local,barrier,fold,halves]\n");
            return 2;
        }
    }
    for (char *tok = strtok(mode_list, ","); NULL != tok; tok = strtok(NULL, ",")) {
        int m = 0;
        while (m < NMODES && 0 != strcmp(tok, mode_names[m])) {
            ++m;
        }
        if (NMODES == m || nmodes == NMODES) {
            fprintf(stderr, "exchange_floor: not a mode (or too many): %s\n", tok);
            return 2;
        }
        modes[nmodes++] = m;
    }
    free(mode_list);
    if (batches < 1 || batches > MAX_BATCHES) {
        fprintf(stderr, "exchange_floor: -b from 1 to %d\n", MAX_BATCHES);
        return 2;
    }
    char *check = strdup(sizes);
    size_t box_bytes = 0;     /* the largest size */
    for (char *tok = strtok(check, ","); NULL != tok; tok = strtok(NULL, ",")) {
        const long n = bench_parse_size(tok);
        if (n <= 0) {
            fprintf(stderr, "exchange_floor: not a size: %s\n", tok);
            return 2;
        }
        box_bytes = ((size_t) n > box_bytes) ? (size_t) n : box_bytes;
    }
    free(check);
    /* the boxes start on pages, each on its own (see shm_floor.c) */
    box_bytes = (box_bytes + 4095) & ~(size_t) 4095;
    const size_t head = (sizeof(shared_t) + 4095) & ~(size_t) 4095;
    char *area = mmap(NULL, head + 2 * box_bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == area) {
        perror("mmap");
        return 1;
    }
    shared_t *sh = (shared_t *) area;
    char *const box[2] = { area + head, area + head + box_bytes };
    memset(sh, 0, sizeof(*sh));
    sh->pid[0] = getpid();
    const pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    const int me = (0 == child) ? 1 : 0;
    if (1 == me) {
        sh->pid[1] = getpid();
    }
    while (0 == sh->pid[0] || 0 == sh->pid[1]) {
        __asm__ volatile("pause");
    }

    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); NULL != tok; tok = strtok(NULL, ",")) {
        const size_t n = (size_t) bench_parse_size(tok);
        for (int k = 0; k < nmodes; ++k) {
            const int mode = modes[k];
            run(sh, box, me, n, mode, batch_ms * 1e-3, batches);
            if (0 == me) {
                double t[MAX_BATCHES];
                for (int b = 0; b < batches; ++b) {
                    t[b] = sh->t[0][b] > sh->t[1][b] ? sh->t[0][b] : sh->t[1][b];
                }
                qsort(t, (size_t) batches, sizeof(double), bench_cmp_double);
                printf("floor,%s,%s,%zu,%.3f\n",
                       MODE_BARRIER == mode                     ? "barrier"
                       : MODE_FOLD == mode || MODE_HALVES == mode ? "allreduce"
                                                                  : "alltoall",
                       mode_names[mode], n, 1e6 * t[batches / 2]);
                fflush(stdout);
            }
        }
    }
    free(list);
    if (0 == me) {
        waitpid(child, NULL, 0);
    }
    return 0;
}
