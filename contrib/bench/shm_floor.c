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
 * Each value is the median over BATCHES (-b, default 1, at most 64) batches
 * of about MS (-T, default 200) milliseconds; a ping-pong's batches run in
 * one launch of the two processes, after a calibration of its length.
 *
 * Output: chan_bench's CSV lines, "floor,pingpong,box|flag|memcpy,BYTES,US".
 * Usage: shm_floor [-s SIZES] [-b BATCHES] [-T MS] [-f]
 *        (SIZES: comma list, K/M allowed)
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
#define BATCH_MAX 64
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

/* Side `me` of `batches` batches of n round trips each (side 0 starts;
 * bytes 0: the flag alone), from the moment both sides are ready; each
 * batch's seconds go to bt[]. */
static void pingpong(area_t *a, size_t stride, int me, size_t bytes, long n, int batches,
                     char *mine, double *bt)
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
    uint64_t i = 0;
    for (int b = 0; b < batches; ++b) {
        const double t0 = bench_now();
        for (long k = 0; k < n; ++k) {
            ++i;
            if (0 == me) {
                memcpy(out, mine, bytes);
                __atomic_store_n(&a->to[other].flag, i, __ATOMIC_RELEASE);
            }
            while (__atomic_load_n(&a->to[me].flag, __ATOMIC_ACQUIRE) != i) {
            }
            memcpy(mine, in, bytes);
            if (1 == me) {
                memcpy(out, mine, bytes);
                __atomic_store_n(&a->to[other].flag, i, __ATOMIC_RELEASE);
            }
        }
        bt[b] = bench_now() - t0;
    }
}

/* One launch of the two sides; side 0's batch times in bt; 0 on success. */
static int launch(area_t *a, size_t stride, size_t bytes, long n, int batches, char *mine,
                  double *bt)
{
    memset(a, 0, sizeof(area_t));
    pid_t child = fork();
    if (child < 0) {
        return -1;
    }
    if (0 == child) {
        pingpong(a, stride, 1, bytes, n, batches, mine, bt);
        _exit(0);
    }
    pingpong(a, stride, 0, bytes, n, batches, mine, bt);
    waitpid(child, NULL, 0);
    return 0;
}

/* Half round trip in µs of `bytes` through boxes (flag_only: 8 bytes in
 * the flag word, no box): the median over `batches` batches of about
 * `seconds` each; -1 on failure. */
static double pingpong_us(size_t bytes, int flag_only, double seconds, int batches)
{
    const size_t copied = flag_only ? 0 : bytes;
    const size_t stride = (copied + PAGE - 1) / PAGE * PAGE;
    const size_t len = PAGE + 2 * stride;
    area_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE,
                     -1, 0);
    char *mine = aligned_alloc(PAGE, stride + PAGE);
    double bt[BATCH_MAX], us = -1.0;
    if (MAP_FAILED == (void *) a || NULL == mine) {
        return -1.0;
    }
    memset(box_of(a, stride, 0), 0, 2 * stride);
    /* calibrate on single batches of 4 times more trips each (from few for
     * large messages), by the fastest: a run in which the other side lost
     * its core must not shorten the batches */
    long n = copied <= 4096 ? 1000 : 4 + (long) (4194304 / copied);
    double per_trip = 1.0;
    int ok = 0;
    while (!ok && 0 == launch(a, stride, copied, n, 1, mine, bt)) {
        per_trip = (bt[0] / (double) n < per_trip) ? bt[0] / (double) n : per_trip;
        ok = bt[0] >= seconds / 4 || n >= (1L << 24);
        n *= 4;
    }
    n = bench_clampl(seconds / per_trip, 1, 1L << 26);
    if (ok && 0 == launch(a, stride, copied, n, batches, mine, bt)) {
        us = bench_median(bt, batches) / (double) n / 2.0 * 1e6;
    }
    munmap(a, len);
    free(mine);
    return us;
}

/* One memcpy of `bytes` in µs: the median over `batches` batches of about
 * `seconds` each; -1 on failure. */
static double memcpy_us(size_t bytes, double seconds, int batches)
{
    const size_t room = (bytes + PAGE) / PAGE * PAGE;
    char *src = aligned_alloc(PAGE, room), *dst = aligned_alloc(PAGE, room);
    double bt[BATCH_MAX];
    if (NULL == src || NULL == dst) {
        return -1.0;
    }
    memset(src, 2, bytes + 1);
    memset(dst, 3, bytes + 1);
    for (int b = 0; b < batches; ++b) {
        long n = 0;
        double t0 = bench_now(), t;
        do {
            for (int k = 0; k < 64; ++k, ++n) {
                memcpy(dst, src, bytes);
                __asm__ volatile("" : : "r"(dst) : "memory");
            }
            t = bench_now() - t0;
        } while (t < seconds);
        bt[b] = t / (double) n;
    }
    free(src);
    free(dst);
    return bench_median(bt, batches) * 1e6;
}

int main(int argc, char **argv)
{
    const char *sizes = "8,64,512,4K,32K,256K,1M";
    double ms = 200.0;
    int flag = 0, batches = 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-f")) {
            flag = 1;
        } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            sizes = argv[++i];
        } else if (!strcmp(argv[i], "-T") && i + 1 < argc) {
            ms = atof(argv[++i]);
        } else if (!strcmp(argv[i], "-b") && i + 1 < argc) {
            batches = (int) bench_clampl(atof(argv[++i]), 1, BATCH_MAX);
        } else {
            fprintf(stderr, "usage: shm_floor [-s SIZES] [-b BATCHES] [-T MS] [-f]\n");
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
        printf("floor,pingpong,box,%zu,%.4f\n", bytes, pingpong_us(bytes, 0, ms * 1e-3, batches));
        printf("floor,pingpong,memcpy,%zu,%.4f\n", bytes, memcpy_us(bytes, ms * 1e-3, batches));
        fflush(stdout);
    }
    if (flag) {
        printf("floor,pingpong,flag,8,%.4f\n", pingpong_us(8, 1, ms * 1e-3, batches));
    }
    free(list);
    return 0;
}
