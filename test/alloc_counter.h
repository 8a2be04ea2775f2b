/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * alloc_counter.h: the API of the alloc_counter preload library
 * (alloc_counter.c, LD_PRELOAD) as its users see it (header only: the
 * *_alloc test programs).  The library is looked up at run time, so a
 * program started without it can say so instead of failing to link.
 *
 *   ac_reset()        zero the counters
 *   ac_get(m, o)      the counters: malloc, calloc, realloc, free calls made
 *                     directly by objects matching ALLOC_COUNTER_MATCH (m)
 *                     and by all others (o)
 *   ac_match()        the match substring
 *   ac_loaded()       how many loaded objects match it
 */
#ifndef PNBC_TEST_ALLOC_COUNTER_H
#define PNBC_TEST_ALLOC_COUNTER_H

#include <dlfcn.h>
#include <stdlib.h>

static void (*ac_reset)(void);
static void (*ac_get)(unsigned long match[4], unsigned long other[4]);
static const char *(*ac_match)(void);
static int (*ac_loaded)(void);

/* Look the API up (needs _GNU_SOURCE for RTLD_DEFAULT); 0 when
 * alloc_counter.so is not preloaded. */
static inline int ac_find(void)
{
    ac_reset = (void (*)(void))dlsym(RTLD_DEFAULT, "alloc_counter_reset");
    ac_get = (void (*)(unsigned long *, unsigned long *))dlsym(RTLD_DEFAULT, "alloc_counter_get");
    ac_match = (const char *(*)(void))dlsym(RTLD_DEFAULT, "alloc_counter_match");
    ac_loaded = (int (*)(void))dlsym(RTLD_DEFAULT, "alloc_counter_match_loaded");
    return ac_reset && ac_get && ac_match && ac_loaded;
}

/* Self-check of the interposition: n (at most 16) mallocs and frees of this
 * program's own, counted from a reset; *mallocs / *frees: what the counter
 * saw of them (all objects). */
static inline void ac_probe(int n, unsigned long *mallocs, unsigned long *frees)
{
    unsigned long m[4], o[4];
    void *volatile p[16];
    if (n > 16) n = 16;
    ac_reset();
    for (int i = 0; i < n; i++) p[i] = malloc(100 + (size_t)i);
    for (int i = 0; i < n; i++) free(p[i]);
    ac_get(m, o);
    *mallocs = o[0] + m[0];
    *frees = o[3] + m[3];
}

#endif /* PNBC_TEST_ALLOC_COUNTER_H */
