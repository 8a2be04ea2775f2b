/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * readv_cost: what a single copy through process_vm_readv costs against a
 * memcpy of the same bytes, on this machine (no MPI; the process reads its
 * own memory, which takes the same system call path as reading a peer's).
 * Why the shm pool offers only messages above 64 KiB for single copy when
 * it is under pressure (docs/many/pressure-shapes.md).
 *
 * Usage: readv_cost [ITERATIONS]      (default 20000)
 * Prints one line per size, 4 KiB - 1 MiB: µs per process_vm_readv, µs
 * per memcpy.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
    const int iters = (argc > 1) ? atoi(argv[1]) : 20000;
    for (size_t size = 4096; size <= (size_t) 1 << 20; size *= 2) {
        char *from = malloc(size), *to = malloc(size);
        if (NULL == from || NULL == to) {
            return 1;
        }
        memset(from, 1, size);
        memset(to, 2, size);
        const int n = (size > 65536) ? iters / 16 : iters;
        double t0 = bench_now();
        for (int i = 0; i < n; ++i) {
            struct iovec mine = { to, size }, theirs = { from, size };
            if (process_vm_readv(getpid(), &mine, 1, &theirs, 1, 0) != (ssize_t) size) {
                perror("process_vm_readv");
                return 1;
            }
        }
        double t1 = bench_now();
        for (int i = 0; i < n; ++i) {
            memcpy(to, from, size);
            __asm__ volatile("" : : "r"(to) : "memory");
        }
        double t2 = bench_now();
        printf("%7zu bytes: process_vm_readv %.2f us, memcpy %.2f us\n", size,
               (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6);
        free(from);
        free(to);
    }
    return 0;
}
