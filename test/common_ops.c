/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers for the pnbc test programs (see common.h), part 2: the
 * test datatypes (layouts and their MPI types), the reduction operations
 * (predefined and user ops) and the local reduction reduce_local that the
 * references are folded with.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <string.h>

/* ================================================================ datatypes */
dtype_t T_INT = { "int", MPI_DATATYPE_NULL, sizeof(int), 1, { 0 }, { PR_INT }, 0 };
dtype_t T_DOUBLE = { "double", MPI_DATATYPE_NULL, sizeof(double), 1, { 0 }, { PR_DOUBLE }, 0 };
dtype_t T_CHAR = { "char", MPI_DATATYPE_NULL, 1, 1, { 0 }, { PR_CHAR }, 0 };
dtype_t T_BYTE = { "byte", MPI_DATATYPE_NULL, 1, 1, { 0 }, { PR_BYTE }, 0 };
dtype_t T_LONG = { "long", MPI_DATATYPE_NULL, sizeof(long), 1, { 0 }, { PR_LONG }, 0 };
dtype_t T_FLOAT = { "float", MPI_DATATYPE_NULL, sizeof(float), 1, { 0 }, { PR_FLOAT }, 0 };
dtype_t T_DINT;
dtype_t T_CONTIG3I, T_VECD, T_STRUCTH, T_MAT2C, T_MAT2H, T_MAT2V;

struct double_int { double v; int k; };

size_t prim_size(prim_t k)
{
    switch (k) {
    case PR_INT: return sizeof(int);
    case PR_DOUBLE: return sizeof(double);
    case PR_CHAR: return 1;
    case PR_BYTE: return 1;
    case PR_LONG: return sizeof(long);
    case PR_FLOAT: return sizeof(float);
    }
    return 0;
}

static void set_layout(dtype_t *d, const char *name, size_t extent, int n,
                       const size_t *off, const prim_t *kind)
{
    d->name = name;
    d->extent = extent;
    d->nprim = n;
    for (int i = 0; i < n; i++) {
        d->off[i] = off[i];
        d->kind[i] = kind[i];
    }
    d->derived = 1;
}

int type_resized(MPI_Datatype in, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out)
{
    int rc = MPI_Type_create_resized(in, lb, extent, out);
    MPI_Type_free(&in);
    return rc;
}

/* A struct of one ty[i] at byte off[i] each (i < n), resized to `extent`. */
static int struct_resized(int n, const size_t *off, const MPI_Datatype *ty, MPI_Aint extent, MPI_Datatype *out)
{
    int bl[MAXPRIM];
    MPI_Aint disp[MAXPRIM];
    MPI_Datatype t0;
    for (int i = 0; i < n; i++) {
        bl[i] = 1;
        disp[i] = (MPI_Aint)off[i];
    }
    int rc = MPI_Type_create_struct(n, bl, disp, ty, &t0);
    if (rc == MPI_SUCCESS) rc = type_resized(t0, 0, extent, out);
    return rc;
}

/* Build a new MPI datatype for the named derived layout. */
static int make_type(const char *name, dtype_t *d)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, t0;
    int rc;
    if (!strcmp(name, "contig3i")) {
        size_t off[3] = { 0, 4, 8 };
        prim_t k[3] = { PR_INT, PR_INT, PR_INT };
        set_layout(d, "contig3i", 12, 3, off, k);
        rc = MPI_Type_contiguous(3, MPI_INT, &t);
    } else if (!strcmp(name, "vecd")) {
        size_t off[2] = { 0, 16 };
        prim_t k[2] = { PR_DOUBLE, PR_DOUBLE };
        set_layout(d, "vecd", 32, 2, off, k);
        rc = MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &t0);
        if (rc == MPI_SUCCESS) rc = type_resized(t0, 0, 32, &t);
    } else if (!strcmp(name, "structh")) {
        size_t off[3] = { 0, 8, 16 };
        prim_t k[3] = { PR_INT, PR_DOUBLE, PR_CHAR };
        MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };
        set_layout(d, "structh", 24, 3, off, k);
        rc = struct_resized(3, off, ty, 24, &t);
    } else if (!strcmp(name, "mat2c")) {
        size_t off[4] = { 0, 4, 8, 12 };
        prim_t k[4] = { PR_INT, PR_INT, PR_INT, PR_INT };
        set_layout(d, "mat2c", 16, 4, off, k);
        rc = MPI_Type_contiguous(4, MPI_INT, &t);
    } else if (!strcmp(name, "mat2h")) {
        size_t off[4] = { 0, 8, 12, 24 };
        prim_t k[4] = { PR_INT, PR_INT, PR_INT, PR_INT };
        MPI_Datatype ty[4] = { MPI_INT, MPI_INT, MPI_INT, MPI_INT };
        set_layout(d, "mat2h", 32, 4, off, k);
        rc = struct_resized(4, off, ty, 32, &t);
    } else if (!strcmp(name, "mat2v")) {
        size_t off[4] = { 0, 8, 16, 24 };
        prim_t k[4] = { PR_INT, PR_INT, PR_INT, PR_INT };
        set_layout(d, "mat2v", 32, 4, off, k);
        rc = MPI_Type_vector(4, 1, 2, MPI_INT, &t0);
        if (rc == MPI_SUCCESS) rc = type_resized(t0, 0, 32, &t);
    } else {
        fprintf(stderr, "make_type: unknown layout %s\n", name);
        return MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    d->type = t;
    if (rc == MPI_SUCCESS) {
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        if (lb != 0 || (size_t)ext != d->extent) {
            fprintf(stderr, "make_type %s: lb=%ld extent=%ld, expected 0/%zu\n", name,
                    (long)lb, (long)ext, d->extent);
            return MPI_ERR_TYPE;
        }
    }
    return rc;
}

int dtype_clone(dtype_t *out, const dtype_t *proto)
{
    return make_type(proto->name, out);
}

int types_create(void)
{
    int rc = MPI_SUCCESS;
    MPI_Aint lb, ext;
    T_INT.type = MPI_INT;
    T_DOUBLE.type = MPI_DOUBLE;
    T_CHAR.type = MPI_CHAR;
    T_BYTE.type = MPI_BYTE;
    T_LONG.type = MPI_LONG;
    T_FLOAT.type = MPI_FLOAT;
    {
        size_t off[2] = { offsetof(struct double_int, v), offsetof(struct double_int, k) };
        prim_t k[2] = { PR_DOUBLE, PR_INT };
        set_layout(&T_DINT, "double_int", sizeof(struct double_int), 2, off, k);
        T_DINT.derived = 0;
        T_DINT.type = MPI_DOUBLE_INT;
        MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
        if (lb != 0 || (size_t)ext != sizeof(struct double_int)) {
            fprintf(stderr, "MPI_DOUBLE_INT extent %ld != %zu\n", (long)ext,
                    sizeof(struct double_int));
            return MPI_ERR_TYPE;
        }
    }
    if (rc == MPI_SUCCESS) rc = make_type("contig3i", &T_CONTIG3I);
    if (rc == MPI_SUCCESS) rc = make_type("vecd", &T_VECD);
    if (rc == MPI_SUCCESS) rc = make_type("structh", &T_STRUCTH);
    if (rc == MPI_SUCCESS) rc = make_type("mat2c", &T_MAT2C);
    if (rc == MPI_SUCCESS) rc = make_type("mat2h", &T_MAT2H);
    if (rc == MPI_SUCCESS) rc = make_type("mat2v", &T_MAT2V);
    return rc;
}

void types_free(void)
{
    dtype_t *all[] = { &T_CONTIG3I, &T_VECD, &T_STRUCTH, &T_MAT2C, &T_MAT2H, &T_MAT2V };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i]->type != MPI_DATATYPE_NULL) MPI_Type_free(&all[i]->type);
}

/* ================================================================ operations */
void affine_compose(long af, long bf, long ag, long bg, long *a, long *b)
{
    *a = (af * ag) % AFF_P;
    *b = (af * bg + bf) % AFF_P;
}

/* the same on maps packed into one int as (a << 16 | b) */
static inline int aff_compose(int f, int g)     /* x -> f(g(x)) */
{
    long a, b;
    affine_compose((f >> 16) & 0x7fff, f & 0xffff, (g >> 16) & 0x7fff, g & 0xffff, &a, &b);
    return (int)((a << 16) | b);
}

static void affine_apply(const void *in, void *inout, int len)
{
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < len; i++) b[i] = aff_compose(a[i], b[i]);
}

static void matmul_apply(const dtype_t *L, const void *in, void *inout, int len)
{
    const unsigned char *pa = in;
    unsigned char *pb = inout;
    for (int i = 0; i < len; i++, pa += L->extent, pb += L->extent) {
        int a[4], b[4];
        for (int f = 0; f < 4; f++) {
            memcpy(&a[f], pa + L->off[f], sizeof(int));
            memcpy(&b[f], pb + L->off[f], sizeof(int));
        }
        /* [a0 a1; a2 a3] * [b0 b1; b2 b3] */
        int r[4];
        r[0] = (int)(((long)a[0] * b[0] + (long)a[1] * b[2]) % MAT_P);
        r[1] = (int)(((long)a[0] * b[1] + (long)a[1] * b[3]) % MAT_P);
        r[2] = (int)(((long)a[2] * b[0] + (long)a[3] * b[2]) % MAT_P);
        r[3] = (int)(((long)a[2] * b[1] + (long)a[3] * b[3]) % MAT_P);
        for (int f = 0; f < 4; f++) memcpy(pb + L->off[f], &r[f], sizeof(int));
    }
}

static void dsum_apply(const dtype_t *L, const void *in, void *inout, int len)
{
    const unsigned char *pa = in;
    unsigned char *pb = inout;
    for (int i = 0; i < len; i++, pa += L->extent, pb += L->extent)
        for (int f = 0; f < L->nprim; f++) {
            double x, y;
            memcpy(&x, pa + L->off[f], sizeof(double));
            memcpy(&y, pb + L->off[f], sizeof(double));
            y += x;
            memcpy(pb + L->off[f], &y, sizeof(double));
        }
}

/* MPI callbacks: bound to a layout, never look at the datatype handle (it
 * may have been freed by the application after *_init). */
static void cb_affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    affine_apply(in, inout, *len);
}
/* callback `name`: apply(&layout, ...) */
#define LAYOUT_CB(name, apply, layout)                                     \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)    \
    {                                                                      \
        (void)dt;                                                          \
        apply(&layout, in, inout, *len);                                   \
    }
LAYOUT_CB(cb_matmul_c, matmul_apply, T_MAT2C)
LAYOUT_CB(cb_matmul_h, matmul_apply, T_MAT2H)
LAYOUT_CB(cb_matmul_v, matmul_apply, T_MAT2V)
LAYOUT_CB(cb_dsum_vecd, dsum_apply, T_VECD)
#undef LAYOUT_CB

const char *op_name(opk_t k)
{
    switch (k) {
    case OP_NONE: return "none";
    case OP_SUM: return "sum";
    case OP_MAX: return "max";
    case OP_MIN: return "min";
    case OP_PROD: return "prod";
    case OP_BAND: return "band";
    case OP_BOR: return "bor";
    case OP_BXOR: return "bxor";
    case OP_MINLOC: return "minloc";
    case OP_MAXLOC: return "maxloc";
    case OP_U_AFFINE: return "user-affine(noncommutative)";
    case OP_U_MATMUL: return "user-matmul(noncommutative)";
    case OP_U_DSUM: return "user-dsum(commutative)";
    }
    return "?";
}

int op_is_user(opk_t k)
{
    return k == OP_U_AFFINE || k == OP_U_MATMUL || k == OP_U_DSUM;
}

MPI_Op op_create(opk_t k, const dtype_t *dt)
{
    MPI_Op op = MPI_OP_NULL;
    switch (k) {
    case OP_SUM: return MPI_SUM;
    case OP_MAX: return MPI_MAX;
    case OP_MIN: return MPI_MIN;
    case OP_PROD: return MPI_PROD;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_MINLOC: return MPI_MINLOC;
    case OP_MAXLOC: return MPI_MAXLOC;
    case OP_U_AFFINE:
        MPI_Op_create(cb_affine, 0, &op);
        return op;
    case OP_U_MATMUL:
        if (!strcmp(dt->name, "mat2c")) MPI_Op_create(cb_matmul_c, 0, &op);
        else if (!strcmp(dt->name, "mat2h")) MPI_Op_create(cb_matmul_h, 0, &op);
        else if (!strcmp(dt->name, "mat2v")) MPI_Op_create(cb_matmul_v, 0, &op);
        return op;
    case OP_U_DSUM:
        MPI_Op_create(cb_dsum_vecd, 1, &op);
        return op;
    case OP_NONE:
        break;
    }
    return op;
}

static MPI_Op g_affine = MPI_OP_NULL, g_mm_c = MPI_OP_NULL, g_mm_h = MPI_OP_NULL,
    g_mm_v = MPI_OP_NULL, g_dsum = MPI_OP_NULL;

int ops_create(void)
{
    g_affine = op_create(OP_U_AFFINE, &T_INT);
    g_mm_c = op_create(OP_U_MATMUL, &T_MAT2C);
    g_mm_h = op_create(OP_U_MATMUL, &T_MAT2H);
    g_mm_v = op_create(OP_U_MATMUL, &T_MAT2V);
    g_dsum = op_create(OP_U_DSUM, &T_VECD);
    return (g_affine == MPI_OP_NULL || g_mm_c == MPI_OP_NULL || g_mm_h == MPI_OP_NULL ||
            g_mm_v == MPI_OP_NULL || g_dsum == MPI_OP_NULL) ? MPI_ERR_OP : MPI_SUCCESS;
}

void ops_free(void)
{
    MPI_Op *all[] = { &g_affine, &g_mm_c, &g_mm_h, &g_mm_v, &g_dsum };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (*all[i] != MPI_OP_NULL) MPI_Op_free(all[i]);
}

MPI_Op op_get(opk_t k, const dtype_t *dt)
{
    switch (k) {
    case OP_U_AFFINE: return g_affine;
    case OP_U_DSUM: return g_dsum;
    case OP_U_MATMUL:
        if (!strcmp(dt->name, "mat2c")) return g_mm_c;
        if (!strcmp(dt->name, "mat2h")) return g_mm_h;
        if (!strcmp(dt->name, "mat2v")) return g_mm_v;
        return MPI_OP_NULL;
    default:
        return op_create(k, dt);
    }
}

/* ================================================================ local reduction */
/* b = a op b for one predefined op on one field */
static void pre_field(const unsigned char *pa, unsigned char *pb, prim_t kind, opk_t op)
{
#define PRE_NUM(T)                                                         \
    do {                                                                   \
        T a, b;                                                            \
        memcpy(&a, pa, sizeof(T));                                         \
        memcpy(&b, pb, sizeof(T));                                         \
        switch (op) {                                                      \
        case OP_SUM: b = a + b; break;                                     \
        case OP_PROD: b = a * b; break;                                    \
        case OP_MAX: b = a > b ? a : b; break;                             \
        case OP_MIN: b = a < b ? a : b; break;                             \
        default: break;                                                    \
        }                                                                  \
        memcpy(pb, &b, sizeof(T));                                         \
    } while (0)
#define PRE_INT(T, UT)                                                     \
    do {                                                                   \
        T a, b;                                                            \
        memcpy(&a, pa, sizeof(T));                                         \
        memcpy(&b, pb, sizeof(T));                                         \
        switch (op) {                                                      \
        case OP_SUM: b = (T)((UT)a + (UT)b); break;                        \
        case OP_PROD: b = (T)((UT)a * (UT)b); break;                       \
        case OP_MAX: b = a > b ? a : b; break;                             \
        case OP_MIN: b = a < b ? a : b; break;                             \
        case OP_BAND: b = a & b; break;                                    \
        case OP_BOR: b = a | b; break;                                     \
        case OP_BXOR: b = a ^ b; break;                                    \
        default: break;                                                    \
        }                                                                  \
        memcpy(pb, &b, sizeof(T));                                         \
    } while (0)
    switch (kind) {
    case PR_INT: PRE_INT(int, unsigned int); break;
    case PR_LONG: PRE_INT(long, unsigned long); break;
    case PR_DOUBLE: PRE_NUM(double); break;
    case PR_FLOAT: PRE_NUM(float); break;
    case PR_CHAR:
    case PR_BYTE: PRE_INT(signed char, unsigned char); break;
    }
#undef PRE_NUM
#undef PRE_INT
}

void reduce_local(const void *in, void *inout, const dtype_t *dt, int count, opk_t op)
{
    const unsigned char *pa = in;
    unsigned char *pb = inout;
    switch (op) {
    case OP_NONE:
        return;
    case OP_U_AFFINE:
        affine_apply(in, inout, count);
        return;
    case OP_U_MATMUL:
        matmul_apply(dt, in, inout, count);
        return;
    case OP_U_DSUM:
        dsum_apply(dt, in, inout, count);
        return;
    case OP_MINLOC:
    case OP_MAXLOC:
        for (int i = 0; i < count; i++, pa += dt->extent, pb += dt->extent) {
            struct double_int a, b;
            memcpy(&a.v, pa + dt->off[0], sizeof(double));
            memcpy(&a.k, pa + dt->off[1], sizeof(int));
            memcpy(&b.v, pb + dt->off[0], sizeof(double));
            memcpy(&b.k, pb + dt->off[1], sizeof(int));
            int take_a = (op == OP_MINLOC) ? (a.v < b.v) : (a.v > b.v);
            if (a.v == b.v) b.k = a.k < b.k ? a.k : b.k;
            else if (take_a) b = a;
            memcpy(pb + dt->off[0], &b.v, sizeof(double));
            memcpy(pb + dt->off[1], &b.k, sizeof(int));
        }
        return;
    default:
        for (int i = 0; i < count; i++, pa += dt->extent, pb += dt->extent)
            for (int f = 0; f < dt->nprim; f++)
                pre_field(pa + dt->off[f], pb + dt->off[f], dt->kind[f], op);
        return;
    }
}
