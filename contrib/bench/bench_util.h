/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Helpers the benchmark programs share (each is built from its own .c
 * file by a script; this header comes along from the same folder).
 */
#ifndef PNBC_BENCH_UTIL_H
#define PNBC_BENCH_UTIL_H

#include <ctype.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* "4096", "64K", "1M" (k/m too, spaces before the suffix allowed) in
 * bytes; -1 if it is not a size. */
static inline long bench_parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) {
        return -1;
    }
    while (isspace((unsigned char) *end)) {
        end++;
    }
    if ('k' == *end || 'K' == *end) {
        v *= 1024.0;
        end++;
    } else if ('m' == *end || 'M' == *end) {
        v *= 1024.0 * 1024.0;
        end++;
    }
    return ('\0' == *end) ? (long) v : -1;
}

/* qsort order of doubles, smallest first. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* v as a long, within [lo, hi]. */
static inline long bench_clampl(double v, long lo, long hi)
{
    return v < lo ? lo : v > hi ? hi : (long) v;
}

/* Sorts v[0..n) and returns its median (n >= 1); v[0] is then the least. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(double), bench_cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* PNBC_BENCH_UTIL_H */
