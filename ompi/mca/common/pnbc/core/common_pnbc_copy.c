/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pnbc_copy_nt() (common_pnbc.h): whole 64-byte lines written with
 * streaming stores from the first line boundary of the destination on,
 * the partial lines at either end with ordinary ones; pnbc_fill(), which
 * chooses between it and pnbc_copy().  x86-64 only (SSE2, which every
 * x86-64 CPU has); elsewhere an ordinary copy.
 */

#include "common_pnbc.h"

#include <stdint.h>
#include <string.h>

static uint64_t nt_fills;

uint64_t pnbc_fill_nt_count(void)
{
    return __atomic_load_n(&nt_fills, __ATOMIC_RELAXED);
}

#if defined(__x86_64__)
#include <emmintrin.h>
#include <x86intrin.h>

void pnbc_copy_nt(void *dst, const void *src, size_t bytes)
{
    char *to = (char *) dst;
    const char *from = (const char *) src;
    size_t head = (64 - ((uintptr_t) to & 63)) & 63;
    if (head >= bytes) {
        pnbc_copy(to, from, bytes);
        return;
    }
    memcpy(to, from, head);
    to += head;
    from += head;
    bytes -= head;
    const size_t lines = bytes & ~(size_t) 63;
    for (size_t at = 0; at < lines; at += 64) {
        const __m128i a = _mm_loadu_si128((const __m128i *) (from + at));
        const __m128i b = _mm_loadu_si128((const __m128i *) (from + at + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *) (from + at + 32));
        const __m128i d = _mm_loadu_si128((const __m128i *) (from + at + 48));
        _mm_stream_si128((__m128i *) (to + at), a);
        _mm_stream_si128((__m128i *) (to + at + 16), b);
        _mm_stream_si128((__m128i *) (to + at + 32), c);
        _mm_stream_si128((__m128i *) (to + at + 48), d);
    }
    memcpy(to + lines, from + lines, bytes - lines);
    _mm_sfence();
}

/* Where a sender's ordinary stores must take each line from the cache of
 * the reader that copied the last message out, they can cost ten times
 * what non-temporal ones do; elsewhere about the same, and then the
 * reader finds the message in a cache instead of memory, which wins: so
 * non-temporal stores only while ordinary ones cost coll_pnbc_shm_nt_ratio
 * times as much (docs/design-measurements.md, "Filling boxes with
 * non-temporal stores", "Measured by the sender").  Which holds may
 * change while a job runs (a VM's CPUs move), so the sender times its
 * fills: each way's cost per KiB, the way not in use tried every
 * FILL_TRIAL fills (every other fill until each way has 2).  An
 * estimate moves a quarter of the way to each sample, a dearer one
 * counted at most twice the estimate (one preempted copy does not flip
 * the choice, a change of the machine's mode does within some fills);
 * the way not in use takes a cheaper sample at once (its samples are
 * rare, and the first ones pay for touching pages the first time). */
#define FILL_TRIAL 256

static uint32_t fill_sample(pnbc_fill_t *f, bool nt, uint64_t ticks, size_t bytes)
{
    const uint64_t s = (ticks << 10) / bytes;
    uint64_t c = f->cost[nt];
    if (f->samples[nt] < 2) {
        ++f->samples[nt];
    }
    if (0 == c || (nt != f->nt && s < c)) {
        c = s;
    } else if (s > c) {
        c += (((s > 2 * c) ? 2 * c : s) - c) / 4;
    } else {
        c -= (c - s) / 4;
    }
    return (uint32_t) ((c > UINT32_MAX) ? UINT32_MAX : (c ? c : 1));
}

/* (pnbc_fill() copied the messages below f->from) */
void pnbc_fill_measured(pnbc_fill_t *f, void *dst, const void *src, size_t bytes)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    const bool always = f->box && bytes >= (size_t) p->shm_nt_min_bytes &&
                        bytes <= (size_t) p->shm_nt_max_bytes;
    if (!always && bytes < (size_t) p->shm_nt_measured_min_bytes) {
        pnbc_copy(dst, src, bytes);     /* a box below an always range set lower */
        return;
    }
    bool nt = true;
    if (p->shm_nt_ratio > 0 && !always) {
        nt = f->nt;
        if (++f->since >= ((f->samples[!nt] < 2) ? 2 : FILL_TRIAL)) {
            f->since = 0;
            nt = !nt;
        }
        const uint64_t t0 = __rdtsc();
        (nt ? pnbc_copy_nt : pnbc_copy)(dst, src, bytes);
        f->cost[nt] = fill_sample(f, nt, __rdtsc() - t0, bytes);
        f->nt = f->samples[1] >= 2 &&
                f->cost[0] > (uint64_t) p->shm_nt_ratio * f->cost[1];
    } else {
        pnbc_copy_nt(dst, src, bytes);
    }
    if (nt) {
        __atomic_add_fetch(&nt_fills, 1, __ATOMIC_RELAXED);
    }
}

#else

void pnbc_copy_nt(void *dst, const void *src, size_t bytes)
{
    pnbc_copy(dst, src, bytes);
}

void pnbc_fill_measured(pnbc_fill_t *f, void *dst, const void *src, size_t bytes)
{
    (void) f;
    pnbc_copy(dst, src, bytes);
}

#endif
