/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * yield_floor: the least an exchange of N processes costs when they
 * outnumber the cores (no MPI).  N processes (fork) share a mapping with
 * one counter per process, each on its own cache line.  Iteration i:
 * every process stores i into its counter and then waits until every
 * counter has reached i, calling sched_yield() between looks, as an MPI
 * process does under `mpi_yield_when_idle 1`.  Nothing is copied: an
 * allgather, allreduce or alltoall of 8 bytes needs at least this much
 * (every process hears from every other), whatever the library, so
 * with more processes than cores its time per call cannot fall below the
 * time per iteration here (docs/nbc-targets.md).
 *
 * Usage: yield_floor [N [ITERS [ROUNDS]]]   (default 4 200000 3)
 * Prints µs per iteration, one line per round (each round a new fork).
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile uint64_t *counter(char *base, int p)
{
    return (volatile uint64_t *) (base + (size_t) p * LINE);
}

static void run(char *base, int me, int n, long iters)
{
    for (long i = 1; i <= iters; ++i) {
        __atomic_store_n(counter(base, me), (uint64_t) i, __ATOMIC_RELEASE);
        for (int p = 0; p < n; ++p) {
            while (__atomic_load_n(counter(base, p), __ATOMIC_ACQUIRE) < (uint64_t) i) {
                sched_yield();
            }
        }
    }
}

int main(int argc, char **argv)
{
    const int n = (argc > 1) ? atoi(argv[1]) : 4;
    const long iters = (argc > 2) ? atol(argv[2]) : 200000;
    const int rounds = (argc > 3) ? atoi(argv[3]) : 3;
    if (n < 2 || iters < 1 || rounds < 1) {
        fprintf(stderr, "usage: yield_floor [N [ITERS [ROUNDS]]]\n");
        return 1;
    }
    for (int r = 0; r < rounds; ++r) {
        char *base = mmap(NULL, (size_t) (n + 1) * LINE, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (MAP_FAILED == base) {
            perror("mmap");
            return 1;
        }
        volatile uint64_t *go = counter(base, n);
        for (int p = 1; p < n; ++p) {
            if (0 == fork()) {
                while (0 == __atomic_load_n(go, __ATOMIC_ACQUIRE)) {
                    sched_yield();
                }
                run(base, p, n, iters);
                _exit(0);
            }
        }
        const double t0 = now();
        __atomic_store_n(go, 1, __ATOMIC_RELEASE);
        run(base, 0, n, iters);
        const double t = now() - t0;
        while (wait(NULL) > 0) {
        }
        printf("yield_floor: %d processes, %ld iterations: %.2f us per iteration\n", n, iters,
               t / iters * 1e6);
        munmap(base, (size_t) (n + 1) * LINE);
    }
    return 0;
}
