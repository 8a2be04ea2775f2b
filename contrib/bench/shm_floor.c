/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the machine allows, measured beside the channel and the collective
 * benchmarks (no MPI):
 *
 *   box     half round trip of the simplest shared-memory ping-pong: two
 *           processes (fork) share a mapping; each waits for the other's
 *           flag, copies the message out of the box, copies its reply into
 *           the other box and raises its flag (flags and boxes on their own
 *           cache lines).  Any transport built on shared memory pays at
 *           least this.  The mapping is made for each size (boxes of up to
 *           1 GiB); both processes have touched their buffers and met on a
 *           start flag before the clock starts.  Boxes and buffers begin on
 *           pages: no copy has its destination just past its source modulo
 *           4 KiB, which makes memcpy several times slower on some CPUs
 *           (memcpy_distance.c).
 *   flag    (-f) the bare flag exchange: the same ping-pong with no box,
 *           8 bytes carried in the flag word itself (one cache line each
 *           way): what any exchange of 8 bytes or a barrier of two
 *           processes pays at least.
 *   memcpy  one memcpy of the message between two page-aligned buffers of
 *           one process (warm): a lower bound for any transfer that copies the data
 *           once, before the data even crosses cores.
 *
 * Output: chan_bench's CSV lines, "floor,pingpong,box|flag|memcpy,BYTES,US".
 * Usage: shm_floor [-s SIZES] [-T MS] [-f]   (SIZES: comma list, K/M allowed)
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define LINE 128
#define PAGE 4096
#define BOX_MAX (1L << 30)

typedef struct {
    volatile uint64_t flag;
    char pad[LINE - sizeof(uint64_t)];
} flag_t;

/* The shared area: a flag per direction and a start flag; then (box mode),
 * from the next page on, a box per direction, each `stride` bytes. */
typedef struct {
    flag_t to[2];
    flag_t ready;
} area_t;

static char *box_of(area_t *a, size_t stride, int side)
{
    return (char *) a + PAGE + (size_t) side * stride;
}

/* Side `me` of n round trips (side 0 starts; bytes 0: the flag alone);
 * returns seconds, from the moment both sides are ready. */
static double pingpong(area_t *a, size_t stride, int me, size_t bytes, long n, char *mine)
{
    const int other = 1 - me;
    char *const out = box_of(a, stride, other), *const in = box_of(a, stride, me);
    memset(mine, me + 1, bytes + 1);
    if (1 == me) {
        __atomic_store_n(&a->ready.flag, 1, __ATOMIC_RELEASE);
    } else {
        while (0 == __atomic_load_n(&a->ready.flag, __ATOMIC_ACQUIRE)) {
        }
    }
    double t0 = bench_now();
    for (long i = 1; i <= n; ++i) {
        if (0 == me) {
            memcpy(out, mine, bytes);
            __atomic_store_n(&a->to[other].flag, (uint64_t) i, __ATOMIC_RELEASE);
        }
        while (__atomic_load_n(&a->to[me].flag, __ATOMIC_ACQUIRE) != (uint64_t) i) {
        }
        memcpy(mine, in, bytes);
        if (1 == me) {
            memcpy(out, mine, bytes);
            __atomic_store_n(&a->to[other].flag, (uint64_t) i, __ATOMIC_RELEASE);
        }
    }
    return bench_now() - t0;
}

/* Half round trip in µs of `bytes` through boxes (flag_only: 8 bytes in
 * the flag word, no box), timed for about `seconds`; -1 on failure. */
static double pingpong_us(size_t bytes, int flag_only, double seconds)
{
    const size_t copied = flag_only ? 0 : bytes;
    const size_t stride = (copied + PAGE - 1) / PAGE * PAGE;
    const size_t len = PAGE + 2 * stride;
    area_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE,
                     -1, 0);
    char *mine = aligned_alloc(PAGE, stride + PAGE);
    if (MAP_FAILED == (void *) a || NULL == mine) {
        return -1.0;
    }
    memset(box_of(a, stride, 0), 0, 2 * stride);
    /* calibrate n on short runs, then time it: both sides run n trips */
    long n = copied <= 4096 ? 1000 : 4 + (long) (4194304 / copied);
    double us = -1.0;
    for (;;) {
        memset(a, 0, sizeof(area_t));
        pid_t child = fork();
        if (child < 0) {
            break;
        }
        if (0 == child) {
            pingpong(a, stride, 1, copied, n, mine);
            _exit(0);
        }
        double t = pingpong(a, stride, 0, copied, n, mine);
        waitpid(child, NULL, 0);
        if (t >= seconds || n >= (1L << 26)) {
            us = t / (double) n / 2.0 * 1e6;
            break;
        }
        n = (t > 1e-4) ? (long) ((double) n * seconds / t * 1.1) + 1 : n * 16;
    }
    munmap(a, len);
    free(mine);
    return us;
}

static double memcpy_us(size_t bytes, double seconds)
{
    const size_t room = (bytes + PAGE) / PAGE * PAGE;
    char *src = aligned_alloc(PAGE, room), *dst = aligned_alloc(PAGE, room);
    if (NULL == src || NULL == dst) {
        return -1.0;
    }
    memset(src, 2, bytes + 1);
    memset(dst, 3, bytes + 1);
    long n = 0;
    double t0 = bench_now(), t;
    do {
        for (int k = 0; k < 64; ++k, ++n) {
            memcpy(dst, src, bytes);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        t = bench_now() - t0;
    } while (t < seconds);
    free(src);
    free(dst);
    return t / (double) n * 1e6;
}

int main(int argc, char **argv)
{
    const char *sizes = "8,64,512,4K,32K,256K,1M";
    double ms = 200.0;
    int flag = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-f")) {
            flag = 1;
        } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            sizes = argv[++i];
        } else if (!strcmp(argv[i], "-T") && i + 1 < argc) {
            ms = atof(argv[++i]);
        } else {
            fprintf(stderr, "usage: shm_floor [-s SIZES] [-T MS] [-f]\n");
            return 2;
        }
    }
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); NULL != tok; tok = strtok(NULL, ",")) {
        const long parsed = bench_parse_size(tok);
        if (parsed < 0 || parsed > BOX_MAX) {
            fprintf(stderr, "shm_floor: not a size up to 1 GiB: %s\n", tok);
            return 2;
        }
        const size_t bytes = (size_t) parsed;
        printf("floor,pingpong,box,%zu,%.4f\n", bytes, pingpong_us(bytes, 0, ms * 1e-3));
        printf("floor,pingpong,memcpy,%zu,%.4f\n", bytes, memcpy_us(bytes, ms * 1e-3));
        fflush(stdout);
    }
    if (flag) {
        printf("floor,pingpong,flag,8,%.4f\n", pingpong_us(8, 1, ms * 1e-3));
    }
    free(list);
    return 0;
}
