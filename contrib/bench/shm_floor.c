/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the machine allows, measured beside the channel benchmark (no MPI):
 *
 *   box     half round trip of the simplest shared-memory ping-pong: two
 *           processes (fork) share a mapping; each waits for the other's
 *           flag, copies the message out of the box, copies its reply into
 *           the other box and raises its flag (flags and boxes on their own
 *           cache lines).  Any transport built on shared memory pays at
 *           least this; sizes up to 64 KiB.
 *   memcpy  one memcpy of the message between two buffers of one process
 *           (warm): a lower bound for any transfer that copies the data
 *           once, before the data even crosses cores.
 *
 * Output: chan_bench's CSV lines, "floor,pingpong,box|memcpy,BYTES,US".
 * Usage: shm_floor [-s SIZES] [-T MS]   (SIZES: comma list, K/M allowed)
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
#define BOX_MAX 65536

typedef struct {
    volatile uint64_t flag;
    char pad[LINE - sizeof(uint64_t)];
} flag_t;

/* The shared area: a flag and a box per direction. */
typedef struct {
    flag_t to[2];
    char box[2][BOX_MAX];
} area_t;

/* Side `me` of n round trips (side 0 starts); returns seconds. */
static double pingpong(area_t *a, int me, size_t bytes, long n, char *mine)
{
    const int other = 1 - me;
    double t0 = bench_now();
    for (long i = 1; i <= n; ++i) {
        if (0 == me) {
            memcpy(a->box[other], mine, bytes);
            __atomic_store_n(&a->to[other].flag, (uint64_t) i, __ATOMIC_RELEASE);
        }
        while (__atomic_load_n(&a->to[me].flag, __ATOMIC_ACQUIRE) != (uint64_t) i) {
        }
        memcpy(mine, a->box[me], bytes);
        if (1 == me) {
            memcpy(a->box[other], mine, bytes);
            __atomic_store_n(&a->to[other].flag, (uint64_t) i, __ATOMIC_RELEASE);
        }
    }
    return bench_now() - t0;
}

static double box_us(size_t bytes, double seconds)
{
    area_t *a = mmap(NULL, sizeof(area_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    char *mine = malloc(bytes + 1);
    if (MAP_FAILED == (void *) a || NULL == mine) {
        return -1.0;
    }
    memset(mine, 1, bytes + 1);
    /* calibrate n on a short run, then time it: both sides run n trips */
    long n = 1000;
    for (;;) {
        memset(a, 0, sizeof(flag_t) * 2);
        pid_t child = fork();
        if (0 == child) {
            pingpong(a, 1, bytes, n, mine);
            _exit(0);
        }
        double t = pingpong(a, 0, bytes, n, mine);
        waitpid(child, NULL, 0);
        if (t >= seconds || n >= (1L << 26)) {
            munmap(a, sizeof(area_t));
            free(mine);
            return t / (double) n / 2.0 * 1e6;
        }
        n = (t > 1e-4) ? (long) ((double) n * seconds / t * 1.1) : n * 16;
    }
}

static double memcpy_us(size_t bytes, double seconds)
{
    char *src = malloc(bytes + 1), *dst = malloc(bytes + 1);
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
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-s")) {
            sizes = argv[i + 1];
        } else if (!strcmp(argv[i], "-T")) {
            ms = atof(argv[i + 1]);
        } else {
            fprintf(stderr, "usage: shm_floor [-s SIZES] [-T MS]\n");
            return 2;
        }
    }
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); NULL != tok; tok = strtok(NULL, ",")) {
        const long parsed = bench_parse_size(tok);
        if (parsed < 0) {
            fprintf(stderr, "shm_floor: not a size: %s\n", tok);
            return 2;
        }
        const size_t bytes = (size_t) parsed;
        if (bytes <= BOX_MAX) {
            printf("floor,pingpong,box,%zu,%.4f\n", bytes, box_us(bytes, ms * 1e-3));
        }
        printf("floor,pingpong,memcpy,%zu,%.4f\n", bytes, memcpy_us(bytes, ms * 1e-3));
        fflush(stdout);
    }
    free(list);
    return 0;
}
