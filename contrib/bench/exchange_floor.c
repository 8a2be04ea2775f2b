/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the machine allows for a two-process alltoall, measured without
 * MPI: the least work any on-node implementation does.  Two processes
 * (fork) each own a send buffer of two blocks (one for itself, one for
 * the other) and a receive buffer of two blocks, on their own heaps as an
 * application's would be.  Per iteration, after a barrier on a shared
 * line, each process
 *
 *   cma     reads the other's block for it with one process_vm_readv
 *           (single copy, the fastest way across processes here) and
 *           copies its own block with memcpy;
 *   barrier does only the barrier (its cost is included above).
 *
 * Every byte of each receive buffer is written once, which is the least
 * any alltoall does; both processes copy at the same time, as they do in
 * an alltoall.  No MPI implementation on this node can go below the
 * `cma` line by more than the barrier.
 *
 * Output: "floor,alltoall,cma|barrier,BYTES,US" (median over batches of
 * the slower process's time per iteration).
 * Usage: exchange_floor [-s SIZES] [-T MS] [-b BATCHES]   (K/M allowed)
 */

#define _GNU_SOURCE
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

typedef struct shared_t {
    volatile uint64_t arrive[2] __attribute__((aligned(LINE)));
    char pad0[LINE - 2 * sizeof(uint64_t)];
    volatile uint64_t sbuf[2];      /* each process's send buffer address */
    volatile int64_t pid[2];
    volatile uint64_t iters;        /* chosen by process 0 per batch */
    volatile double t[2][MAX_BATCHES];
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

static void one_iteration(int mode, size_t n, char *sbuf, char *rbuf, pid_t peer,
                          uint64_t peer_sbuf, int me)
{
    if (0 == mode) {
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

static void run(shared_t *sh, int me, size_t n, int mode, double batch_s, int batches)
{
    char *sbuf = malloc(2 * n), *rbuf = malloc(2 * n);
    memset(sbuf, 1 + me, 2 * n);
    memset(rbuf, 0, 2 * n);
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
        one_iteration(mode, n, sbuf, rbuf, peer, peer_sbuf, me);
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
            one_iteration(mode, n, sbuf, rbuf, peer, peer_sbuf, me);
        }
        sh->t[me][b] = (bench_now() - t0) / (double) iters;
    }
    barrier(sh, me, &gen);
    if (mode && rbuf[(size_t) (1 - me) * n + n - 1] != 2 - me) {
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
    int opt;
    while (-1 != (opt = getopt(argc, argv, "s:T:b:"))) {
        switch (opt) {
        case 's': sizes = optarg; break;
        case 'T': batch_ms = atof(optarg); break;
        case 'b': batches = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: exchange_floor [-s SIZES] [-T MS] [-b BATCHES]\n");
            return 2;
        }
    }
    if (batches < 1 || batches > MAX_BATCHES) {
        fprintf(stderr, "exchange_floor: -b from 1 to %d\n", MAX_BATCHES);
        return 2;
    }
    char *check = strdup(sizes);
    for (char *tok = strtok(check, ","); NULL != tok; tok = strtok(NULL, ",")) {
        if (bench_parse_size(tok) <= 0) {
            fprintf(stderr, "exchange_floor: not a size: %s\n", tok);
            return 2;
        }
    }
    free(check);
    shared_t *sh = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == sh) {
        perror("mmap");
        return 1;
    }
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
        for (int mode = 1; mode >= 0; --mode) {
            run(sh, me, n, mode, batch_ms * 1e-3, batches);
            if (0 == me) {
                double t[MAX_BATCHES];
                for (int b = 0; b < batches; ++b) {
                    t[b] = sh->t[0][b] > sh->t[1][b] ? sh->t[0][b] : sh->t[1][b];
                }
                qsort(t, (size_t) batches, sizeof(double), bench_cmp_double);
                printf("floor,alltoall,%s,%zu,%.3f\n", mode ? "cma" : "barrier", n,
                       1e6 * t[batches / 2]);
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
