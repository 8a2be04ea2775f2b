/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * box_fill: what it costs to pass messages through boxes in shared memory
 * (no MPI), against how far apart a box's reuses are and how the sender
 * fills it.  Two processes (fork) share a mapping of SLOTS boxes; the
 * sender copies message i into box i % SLOTS and raises a counter, the
 * receiver waits for it, copies the message out and raises its own.  The
 * sender runs at most AHEAD messages ahead (1: lockstep, every message
 * waits for the last one to be read; 0: SLOTS ahead).  Printed: µs per
 * message, the sender filling boxes with ordinary stores (memcpy) and
 * with non-temporal stores (as pnbc_copy_nt() does).
 *
 * With ordinary stores the sender first fetches each line for ownership;
 * a line the receiver still caches from the box's last message is taken
 * from the receiver's cache, and on some machines that costs several
 * times the copy (docs/design-measurements.md, "Filling boxes with
 * non-temporal stores").  More boxes leave more time for the receiver's
 * cache to drop them.
 *
 * Usage: box_fill [BYTES [SLOTS [AHEAD [ITERS]]]]
 *        (default 65536 bytes, 2 boxes, lockstep, 20000 messages)
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#define HEADER 24   /* a pnbc box's header: the data starts this far in */

static double usec(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static void copy_nt(char *to, const char *from, size_t n)
{
#if defined(__x86_64__)
    size_t head = (64 - ((uintptr_t) to & 63)) & 63;
    head = (head > n) ? n : head;
    memcpy(to, from, head);
    to += head;
    from += head;
    n -= head;
    const size_t lines = n & ~(size_t) 63;
    for (size_t at = 0; at < lines; at += 16) {
        _mm_stream_si128((__m128i *) (to + at), _mm_loadu_si128((const __m128i *) (from + at)));
    }
    memcpy(to + lines, from + lines, n - lines);
    _mm_sfence();
#else
    memcpy(to, from, n);
#endif
}

static double run(size_t bytes, int slots, int ahead, long iters, int nt)
{
    const size_t stride = (HEADER + bytes + 127) & ~(size_t) 127;
    char *shared = mmap(NULL, 8192 + slots * stride, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == shared) {
        perror("mmap");
        exit(1);
    }
    memset(shared, 0, 8192 + slots * stride);
    volatile uint64_t *written = (volatile uint64_t *) shared;
    volatile uint64_t *read = (volatile uint64_t *) (shared + 4096);
    char *boxes = shared + 8192;
    const uint64_t window = (ahead > 0) ? (uint64_t) ahead : (uint64_t) slots;
    char *buf = malloc(bytes + 64);
    memset(buf, 1, bytes + 64);
    pid_t child = fork();
    if (0 == child) {
        for (uint64_t i = 1; i <= (uint64_t) iters; ++i) {
            while (__atomic_load_n(written, __ATOMIC_ACQUIRE) < i) {
            }
            memcpy(buf, boxes + ((i - 1) % slots) * stride + HEADER, bytes);
            __atomic_store_n(read, i, __ATOMIC_RELEASE);
        }
        _exit(0);
    }
    double t0 = 0;
    for (uint64_t i = 1; i <= (uint64_t) iters; ++i) {
        if (i == (uint64_t) iters / 10 + 1) {
            t0 = usec();
        }
        while (__atomic_load_n(read, __ATOMIC_ACQUIRE) + window < i) {
        }
        char *box = boxes + ((i - 1) % slots) * stride + HEADER;
        if (nt) {
            copy_nt(box, buf, bytes);
        } else {
            memcpy(box, buf, bytes);
        }
        __atomic_store_n(written, i, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(read, __ATOMIC_ACQUIRE) < (uint64_t) iters) {
    }
    const double t = usec() - t0;
    waitpid(child, NULL, 0);
    munmap(shared, 8192 + slots * stride);
    free(buf);
    return t / (double) (iters - iters / 10);
}

int main(int argc, char **argv)
{
    const size_t bytes = (argc > 1) ? strtoul(argv[1], NULL, 0) : 65536;
    const int slots = (argc > 2) ? atoi(argv[2]) : 2;
    const int ahead = (argc > 3) ? atoi(argv[3]) : 1;
    const long iters = (argc > 4) ? atol(argv[4]) : 20000;
    if (0 == bytes || slots < 1 || ahead < 0 || iters < 10) {
        fprintf(stderr, "usage: box_fill [BYTES [SLOTS [AHEAD [ITERS]]]]\n");
        return 2;
    }
    const double plain = run(bytes, slots, ahead, iters, 0);
    const double nt = run(bytes, slots, ahead, iters, 1);
    printf("%zu bytes, %d boxes, %s: ordinary stores %.2f us/message, non-temporal %.2f\n", bytes,
           slots, (1 == ahead) ? "lockstep" : "sender ahead", plain, nt);
    return 0;
}
