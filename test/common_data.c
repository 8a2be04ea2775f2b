/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers for the pnbc test programs (see common.h), part 3: the
 * data of a test case: deterministic inputs (gen_field, fill_input,
 * fill_send), the reference of a reduction in canonical order
 * (fold_reference) and the comparison of a result with its reference
 * (first_diff, compare_buffers).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <string.h>

/* ================================================================ data */
static const double dprod_vals[5] = { 0.5, -1.0, 1.0, 2.0, 1.5 };
static const int iprod_vals[5] = { -2, -1, 1, 2, 3 };

void gen_field(unsigned char *p, prim_t kind, opk_t op, uint64_t h)
{
    int iv = 0;
    long lv = 0;
    double dv = 0;
    float fv = 0;
    switch (op) {
    case OP_NONE:
        iv = (int)(uint32_t)h;
        lv = (long)h;
        dv = (double)(int32_t)(h >> 16) / 4.0;
        fv = (float)(int16_t)(h >> 8) / 2.0f;
        break;
    case OP_SUM:
    case OP_U_DSUM:
        iv = (int)(h % 2001) - 1000;
        lv = ((long)(h % 2001) - 1000) * (1L << 33) + (long)((h >> 40) % 5);
        dv = (double)((int)(h % 2001) - 1000) + ((h >> 33) & 1 ? 0.5 : 0.0);
        fv = (float)((int)(h % 2001) - 1000);
        break;
    case OP_MAX:
    case OP_MIN:
        iv = (int)(uint32_t)h;
        lv = (long)h;
        dv = (double)(int32_t)(h >> 16) / 8.0;
        fv = (float)(int16_t)(h >> 8);
        break;
    case OP_PROD:
        iv = iprod_vals[h % 5];
        lv = 1 + (long)((h >> 8) % 100);
        dv = dprod_vals[h % 5];
        fv = (float)dprod_vals[(h >> 4) % 5];
        break;
    case OP_BAND:               /* mostly ones so the AND is not all zero */
        iv = (int)(uint32_t)(h | (h >> 32) | (h >> 16));
        lv = (long)(h | (h << 17) | (h >> 13));
        break;
    case OP_BOR:                /* mostly zeros so the OR is not all ones */
        iv = (int)(uint32_t)(h & (h >> 32) & (h >> 16));
        lv = (long)(h & (h << 17) & (h >> 13));
        break;
    case OP_BXOR:
        iv = (int)(uint32_t)h;
        lv = (long)h;
        break;
    case OP_MINLOC:
    case OP_MAXLOC:             /* few distinct values: ties exercise the index rule */
        dv = (double)(1 + h % 3);
        iv = (int)((h >> 8) % 50);
        break;
    case OP_U_AFFINE:
        iv = (int)(((1 + (h % (AFF_P - 1))) << 16) | ((h >> 32) % AFF_P));
        break;
    case OP_U_MATMUL:
        iv = (int)(h % MAT_P);
        break;
    }
    switch (kind) {
    case PR_INT: memcpy(p, &iv, sizeof(int)); break;
    case PR_LONG: memcpy(p, &lv, sizeof(long)); break;
    case PR_DOUBLE: memcpy(p, &dv, sizeof(double)); break;
    case PR_FLOAT: memcpy(p, &fv, sizeof(float)); break;
    case PR_CHAR:
    case PR_BYTE: *p = (unsigned char)(h >> 24); break;
    }
}

void fill_input(void *buf, const dtype_t *dt, int count, opk_t op, uint64_t seed)
{
    unsigned char *p = buf;
    for (int i = 0; i < count; i++, p += dt->extent)
        for (int f = 0; f < dt->nprim; f++)
            gen_field(p + dt->off[f], dt->kind[f], op, mix64(seed + (uint64_t)i * 8 + (uint64_t)f));
}

void fill_send(void *buf, void *copy, const dtype_t *dt, int count, opk_t op, uint64_t seed)
{
    size_t bytes = (size_t)count * dt->extent;
    memset(buf, POISON_SEND, bytes);
    fill_input(buf, dt, count, op, seed);
    memcpy(copy, buf, bytes);
}

size_t first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    size_t i = 0;
    while (i < n && x[i] == y[i]) i++;
    return i;
}

void fold_reference(void *exp, void *tmp, const dtype_t *dt, int count, opk_t op, uint64_t id,
                    int it, int lo, int hi)
{
    memset(exp, POISON_RECV, (size_t)count * dt->extent);
    fill_input(exp, dt, count, op, input_seed(id, it, hi));
    for (int r = hi - 1; r >= lo; r--) {
        fill_input(tmp, dt, count, op, input_seed(id, it, r));
        reduce_local(tmp, exp, dt, count, op);
    }
}

static void fmt_field(char *s, size_t n, const unsigned char *p, prim_t kind)
{
    int iv;
    long lv;
    double dv;
    float fv;
    switch (kind) {
    case PR_INT: memcpy(&iv, p, sizeof iv); snprintf(s, n, "%d(0x%08x)", iv, (unsigned)iv); break;
    case PR_LONG: memcpy(&lv, p, sizeof lv); snprintf(s, n, "%ld", lv); break;
    case PR_DOUBLE: memcpy(&dv, p, sizeof dv); snprintf(s, n, "%.17g", dv); break;
    case PR_FLOAT: memcpy(&fv, p, sizeof fv); snprintf(s, n, "%.9g", (double)fv); break;
    case PR_CHAR:
    case PR_BYTE: snprintf(s, n, "0x%02x", *p); break;
    }
}

int compare_buffers(const void *got, const void *exp, const dtype_t *dt, int count,
                    char *msg, size_t msglen)
{
    size_t total = (size_t)count * dt->extent;
    const unsigned char *g = got, *e = exp;
    if (total == 0 || memcmp(g, e, total) == 0) return 0;
    size_t b = first_diff(g, e, total);
    size_t idx = b / dt->extent, boff = b % dt->extent;
    size_t nbad = 0;
    for (size_t i = idx; i < (size_t)count; i++)
        if (memcmp(g + i * dt->extent, e + i * dt->extent, dt->extent)) nbad++;
    for (int f = 0; f < dt->nprim; f++) {
        size_t ps = prim_size(dt->kind[f]);
        if (boff >= dt->off[f] && boff < dt->off[f] + ps) {
            char gs[64], es[64];
            fmt_field(gs, sizeof gs, g + idx * dt->extent + dt->off[f], dt->kind[f]);
            fmt_field(es, sizeof es, e + idx * dt->extent + dt->off[f], dt->kind[f]);
            snprintf(msg, msglen, "first bad index=%zu field=%d got=%s expected=%s (%zu of %d elements differ)",
                     idx, f, gs, es, nbad, count);
            return 1;
        }
    }
    snprintf(msg, msglen,
             "first bad index=%zu: HOLE byte +%zu modified: got=0x%02x expected=0x%02x (%zu of %d elements differ)",
             idx, boff, g[b], e[b], nbad, count);
    return 1;
}
