/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * memcpy_distance: the machine's memcpy by how far past its source the
 * destination lies (modulo 4 KiB), whole and in 2 KiB pieces -- why
 * pnbc_copy() (ompi/mca/common/pnbc/common_pnbc.h) copies some blocks in
 * pieces.  No MPI.  cc -O2 -o memcpy_distance memcpy_distance.c && ./memcpy_distance
 * Prints, per size, microseconds per copy at distances 0, 16, 40 and
 * 4096 + 16 bytes (the destination 16 MiB and that much further on).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static void copy(char *d, const char *s, size_t n, size_t piece)
{
    for (size_t at = 0; at < n; at += piece) {
        memcpy(d + at, s + at, (n - at < piece) ? n - at : piece);
    }
}

int main(void)
{
    static const size_t sizes[] = { 4096, 16384, 65536, 262144, 1 << 20 };
    static const long dists[] = { 0, 16, 40, 4096 + 16 };
    char *b = NULL;
    if (0 != posix_memalign((void **) &b, 4096, (size_t) 1 << 26)) {
        return 1;
    }
    memset(b, 1, (size_t) 1 << 26);
    printf("size, distance: whole / in 2 KiB pieces (us per copy)\n");
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); ++z) {
        printf("%8zu:", sizes[z]);
        for (size_t k = 0; k < sizeof(dists) / sizeof(dists[0]); ++k) {
            for (int pieces = 0; pieces < 2; ++pieces) {
                char *s = b + 8192 + 48, *t = s + (16 << 20) + dists[k];
                const int n = (sizes[z] >= (1 << 20)) ? 50 : 1000;
                const double t0 = bench_now();
                for (int i = 0; i < n; ++i) {
                    copy(t, s, sizes[z], pieces ? 2048 : sizes[z]);
                    __asm__ volatile("" : : "r"(t) : "memory");
                }
                if (!pieces) {
                    printf("  d=%ld: ", dists[k]);
                }
                printf("%s%.2f", pieces ? " / " : "", (bench_now() - t0) / n * 1e6);
            }
        }
        printf("\n");
    }
    free(b);
    return 0;
}
