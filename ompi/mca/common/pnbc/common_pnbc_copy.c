/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pnbc_copy_nt() (common_pnbc.h; used by shm_action_t.nt): whole
 * 64-byte lines written with streaming stores from the first line
 * boundary of the destination on, the partial lines at either end with
 * ordinary ones.  x86-64 only (SSE2, which every x86-64 CPU has);
 * elsewhere an ordinary copy.
 */

#include "common_pnbc.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

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

#else

void pnbc_copy_nt(void *dst, const void *src, size_t bytes)
{
    pnbc_copy(dst, src, bytes);
}

#endif
