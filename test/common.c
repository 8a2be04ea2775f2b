/* Shared helpers for the pnbc test programs; see common.h. */
#define _GNU_SOURCE
#include "common.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ================================================================ time */
double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ================================================================ memory */
void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* ================================================================ watchdog */
static char wd_prog[64] = "test";       /* also the program of case_begin's text */
static int wd_rank = -1;                /* also the world rank of the FAIL lines */
static char wd_what[600];
static int wd_secs;

static void wd_handler(int sig)
{
    char line[900];
    (void)sig;
    int n = snprintf(line, sizeof(line),
                     "WATCHDOG %s rank %d: no completion within %d s; hung in: %s\n",
                     wd_prog, wd_rank, wd_secs, wd_what);
    if (n > 0) {
        if (n > (int)sizeof(line)) n = (int)sizeof(line);
        ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
        (void)w;
    }
    _exit(124);
}

/* crash signals: say what was running, then hand over to the previous
 * handler (Open MPI's, which prints a backtrace) */
static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NCRASH ((int)(sizeof(crash_sigs) / sizeof(crash_sigs[0])))
static struct sigaction crash_old[NCRASH];

static void crash_handler(int sig)
{
    char line[900];
    int n = snprintf(line, sizeof(line), "CRASH %s rank %d: signal %d while in: %s\n", wd_prog, wd_rank,
                     sig, wd_what[0] ? wd_what : "(unknown)");
    if (n > 0) {
        if (n > (int)sizeof(line)) n = (int)sizeof(line);
        ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
        (void)w;
    }
    for (int i = 0; i < NCRASH; i++)
        if (crash_sigs[i] == sig) sigaction(sig, &crash_old[i], NULL);
    raise(sig);
}

void watchdog_init(const char *progname, int rank)
{
    struct sigaction sa;
    snprintf(wd_prog, sizeof(wd_prog), "%s", progname);
    wd_rank = rank;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = wd_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = crash_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (int i = 0; i < NCRASH; i++) sigaction(crash_sigs[i], &sa, &crash_old[i]);
}

void watchdog_arm(int seconds, const char *fmt, ...)
{
    va_list ap;
    alarm(0);
    va_start(ap, fmt);
    vsnprintf(wd_what, sizeof(wd_what), fmt, ap);
    va_end(ap);
    wd_secs = seconds;
    alarm((unsigned)seconds);
}

void watchdog_disarm(void)
{
    alarm(0);
}

void watchdog_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wd_what, sizeof(wd_what), fmt, ap);
    va_end(ap);
}

/* ================================================================ program */
void test_init(int *argc, char ***argv, const char *prog, int *wrank, int *wsize)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, wrank);
    MPI_Comm_size(MPI_COMM_WORLD, wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    watchdog_init(prog, *wrank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void abort_unless(int ok, const char *what)
{
    if (ok) return;
    printf("FAIL %s: cannot create %s\n", wd_prog, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

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
        int bl[3] = { 1, 1, 1 };
        MPI_Aint disp[3] = { 0, 8, 16 };
        MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };
        set_layout(d, "structh", 24, 3, off, k);
        rc = MPI_Type_create_struct(3, bl, disp, ty, &t0);
        if (rc == MPI_SUCCESS) rc = type_resized(t0, 0, 24, &t);
    } else if (!strcmp(name, "mat2c")) {
        size_t off[4] = { 0, 4, 8, 12 };
        prim_t k[4] = { PR_INT, PR_INT, PR_INT, PR_INT };
        set_layout(d, "mat2c", 16, 4, off, k);
        rc = MPI_Type_contiguous(4, MPI_INT, &t);
    } else if (!strcmp(name, "mat2h")) {
        size_t off[4] = { 0, 8, 12, 24 };
        prim_t k[4] = { PR_INT, PR_INT, PR_INT, PR_INT };
        int bl[4] = { 1, 1, 1, 1 };
        MPI_Aint disp[4] = { 0, 8, 12, 24 };
        MPI_Datatype ty[4] = { MPI_INT, MPI_INT, MPI_INT, MPI_INT };
        set_layout(d, "mat2h", 32, 4, off, k);
        rc = MPI_Type_create_struct(4, bl, disp, ty, &t0);
        if (rc == MPI_SUCCESS) rc = type_resized(t0, 0, 32, &t);
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
#define MAT_P 10007             /* 2 * MAT_P^2 < 2^31 */

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

/* ================================================================ requests */
const char *coll_name(coll_t c)
{
    switch (c) {
    case C_BARRIER: return "barrier";
    case C_BCAST: return "bcast";
    case C_REDUCE: return "reduce";
    case C_ALLREDUCE: return "allreduce";
    }
    return "?";
}

MPI_Op coll_op(coll_t coll, opk_t opk, const dtype_t *dt)
{
    return (coll == C_REDUCE || coll == C_ALLREDUCE) ? op_get(opk, dt) : MPI_OP_NULL;
}

void preq_setup(preq_t *p, coll_t coll, MPI_Comm comm, const dtype_t *dt, opk_t opk,
                MPI_Op op, int count, int root, int inplace, int nullrecv, uint64_t id)
{
    memset(p, 0, sizeof(*p));
    p->coll = coll;
    p->dt = *dt;
    p->opk = opk;
    p->op = op;
    p->count = count;
    p->root = root;
    p->inplace = inplace;
    p->nullrecv = nullrecv;
    p->comm = comm;
    p->id = id;
    p->req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &p->rank);
    MPI_Comm_size(comm, &p->size);
    p->bytes = (size_t)count * dt->extent;
    switch (coll) {
    case C_BARRIER:
        p->am_root = 1;
        break;
    case C_BCAST:
        p->am_root = (p->rank == root);
        p->rbuf = xmalloc(p->bytes);
        p->exp = xmalloc(p->bytes);
        p->scopy = xmalloc(p->bytes);
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        p->am_root = (coll == C_ALLREDUCE) || (p->rank == root);
        p->use_inplace = inplace && p->am_root;
        if (!p->use_inplace) {
            p->sbuf = xmalloc(p->bytes);
            p->scopy = xmalloc(p->bytes);
        }
        if (p->am_root || !nullrecv) p->rbuf = xmalloc(p->bytes);
        if (p->am_root) {
            p->exp = xmalloc(p->bytes);
            p->tmp = xmalloc(p->bytes);
        }
        break;
    }
}

int preq_init(preq_t *p, MPI_Info info)
{
    /* junk in the buffers at init time: an implementation that snapshots the
     * data at init instead of at start produces wrong results later */
    if (p->sbuf) {
        memset(p->sbuf, JUNK_SEND, p->bytes);
        fill_input(p->sbuf, &p->dt, p->count, p->opk, input_seed(p->id, 777, p->rank));
    }
    if (p->rbuf) {
        memset(p->rbuf, JUNK_RECV, p->bytes);
        fill_input(p->rbuf, &p->dt, p->count, p->opk, input_seed(p->id, 778, p->rank));
    }
    switch (p->coll) {
    case C_BARRIER:
        return MPIX_Barrier_init(p->comm, info, &p->req);
    case C_BCAST:
        return MPIX_Bcast_init(p->rbuf, p->count, p->dt.type, p->root, p->comm, info, &p->req);
    case C_REDUCE:
        return MPIX_Reduce_init(p->use_inplace ? MPI_IN_PLACE : p->sbuf, p->rbuf, p->count,
                                p->dt.type, p->op, p->root, p->comm, info, &p->req);
    case C_ALLREDUCE:
        return MPIX_Allreduce_init(p->use_inplace ? MPI_IN_PLACE : p->sbuf, p->rbuf, p->count,
                                   p->dt.type, p->op, p->comm, info, &p->req);
    }
    return MPI_ERR_ARG;
}

void preq_prepare(preq_t *p, int it)
{
    switch (p->coll) {
    case C_BARRIER:
        return;
    case C_BCAST:
        if (p->am_root) {
            fill_send(p->rbuf, p->scopy, &p->dt, p->count, OP_NONE, input_seed(p->id, it, p->rank));
        } else {
            memset(p->rbuf, POISON_RECV, p->bytes);
        }
        return;
    case C_REDUCE:
    case C_ALLREDUCE:
        if (p->use_inplace) {
            memset(p->rbuf, POISON_RECV, p->bytes);
            fill_input(p->rbuf, &p->dt, p->count, p->opk, input_seed(p->id, it, p->rank));
        } else {
            fill_send(p->sbuf, p->scopy, &p->dt, p->count, p->opk, input_seed(p->id, it, p->rank));
            if (p->rbuf) memset(p->rbuf, POISON_RECV, p->bytes);
        }
        return;
    }
}

int preq_check(preq_t *p, int it, char *msg, size_t msglen)
{
    char m[400];
    switch (p->coll) {
    case C_BARRIER:
        return 0;
    case C_BCAST:
        if (p->am_root) {
            if (compare_buffers(p->rbuf, p->scopy, &p->dt, p->count, m, sizeof m)) {
                snprintf(msg, msglen, "root buffer modified: %s", m);
                return 1;
            }
            return 0;
        }
        memset(p->exp, POISON_RECV, p->bytes);
        fill_input(p->exp, &p->dt, p->count, OP_NONE, input_seed(p->id, it, p->root));
        if (compare_buffers(p->rbuf, p->exp, &p->dt, p->count, m, sizeof m)) {
            snprintf(msg, msglen, "%s", m);
            return 1;
        }
        return 0;
    case C_REDUCE:
    case C_ALLREDUCE:
        if (!p->use_inplace &&
            compare_buffers(p->sbuf, p->scopy, &p->dt, p->count, m, sizeof m)) {
            snprintf(msg, msglen, "send buffer modified: %s", m);
            return 1;
        }
        if (!p->am_root) return 0;
        /* expected = x0 op (x1 op (... op x_{n-1})), holes = receive poison */
        fold_reference(p->exp, p->tmp, &p->dt, p->count, p->opk, p->id, it, 0, p->size - 1);
        if (compare_buffers(p->rbuf, p->exp, &p->dt, p->count, m, sizeof m)) {
            snprintf(msg, msglen, "%s", m);
            return 1;
        }
        return 0;
    }
    return 0;
}

void preq_release(preq_t *p)
{
    free(p->sbuf);
    free(p->rbuf);
    free(p->exp);
    free(p->tmp);
    free(p->scopy);
    p->sbuf = p->rbuf = p->exp = p->tmp = p->scopy = NULL;
}

/* ================================================================ running requests */
int start_req(MPI_Request *r, int it)
{
    return (it % 2 == 1) ? MPI_Startall(1, r) : MPI_Start(r);
}

int complete_req(MPI_Request *r, int it)
{
    if (it % 2 == 0) return MPI_Wait(r, MPI_STATUS_IGNORE);
    int flag = 0, rc;
    do {
        rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int start_complete_req(MPI_Request *r, int it)
{
    int rc = start_req(r, it);
    return rc != MPI_SUCCESS ? rc : complete_req(r, it);
}

int all_ok(MPI_Comm comm, int ok)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

/* ================================================================ communicators */
void ctx_split_reversed(ctx_t *c)
{
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    memset(c, 0, sizeof *c);
    MPI_Comm_split(MPI_COMM_WORLD, wrank == 0 ? 0 : 1, -wrank, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    snprintf(c->name, sizeof c->name, "split(size=%d,reversed)", c->size);
}

/* ================================================================ reporting */
long n_cases, n_checks, n_failed;
int max_print = 40;
int case_failed;
static int n_printed;
static char case_desc[512];

void parse_test_args(int argc, char **argv, int *quick)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            if (quick) *quick = 1;
        } else if (!strcmp(argv[i], "--max-print") && i + 1 < argc) {
            max_print = atoi(argv[++i]);
        }
    }
}

void vfail_line(const char *what, int it, const char *fmt, va_list ap)
{
    n_failed++;
    if (n_printed++ < max_print) {
        char msg[700];
        vsnprintf(msg, sizeof msg, fmt, ap);
        printf("FAIL %s iter=%d world_rank=%d: %s\n", what, it, wd_rank, msg);
        fflush(stdout);
    }
}

void fail_line(const char *what, int it, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_line(what, it, fmt, ap);
    va_end(ap);
}

void case_begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(case_desc, sizeof case_desc, fmt, ap);
    va_end(ap);
    case_failed = 0;
    n_cases++;
    watchdog_arm(CASE_TIMEOUT, "%s case %s", wd_prog, case_desc);
}

void case_fail(int it, const char *fmt, ...)
{
    va_list ap;
    if (case_failed) return;    /* one line per failing case and rank */
    case_failed = 1;
    if (n_printed == max_print)
        printf("FAIL ... (world rank %d: further failure lines suppressed)\n", wd_rank);
    va_start(ap, fmt);
    vfail_line(case_desc, it, fmt, ap);
    va_end(ap);
}

int case_init_ok(MPI_Comm comm, int rc, MPI_Request *req)
{
    if (all_ok(comm, rc == MPI_SUCCESS)) return 1;
    if (rc != MPI_SUCCESS) case_fail(-1, "init returned %s", err_class_str(rc));
    else case_fail(-1, "init failed on another rank");
    if (rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL) MPI_Request_free(req);
    return 0;
}

int case_start_complete(MPI_Request *r, int it)
{
    int rc = start_req(r, it);
    if (rc != MPI_SUCCESS) {
        case_fail(it, "%s returned %s", it % 2 ? "MPI_Startall" : "MPI_Start", err_class_str(rc));
        return rc;
    }
    rc = complete_req(r, it);
    if (rc != MPI_SUCCESS)
        case_fail(it, "%s returned %s", it % 2 ? "MPI_Test" : "MPI_Wait", err_class_str(rc));
    return rc;
}

int case_startall_waitall(int n, MPI_Request *rq, int it)
{
    int rc = MPI_Startall(n, rq);
    if (rc != MPI_SUCCESS) {
        case_fail(it, "MPI_Startall returned %s", err_class_str(rc));
        return rc;
    }
    rc = MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) case_fail(it, "MPI_Waitall returned %s", err_class_str(rc));
    return rc;
}

void case_free_req(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL) return;
    int rc = MPI_Request_free(r);
    if (rc != MPI_SUCCESS) case_fail(-1, "MPI_Request_free returned %s", err_class_str(rc));
    else if (*r != MPI_REQUEST_NULL) case_fail(-1, "MPI_Request_free did not set MPI_REQUEST_NULL");
}

totals_t totals_sum(void)
{
    long mine[3] = { n_cases, n_checks, n_failed }, sum[3];
    MPI_Allreduce(mine, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (totals_t){ sum[0], sum[1], sum[2] };
}

/* ================================================================ misc */
const char *err_class_str(int rc)
{
    static char buf[MPI_MAX_ERROR_STRING + 64];
    char s[MPI_MAX_ERROR_STRING];
    int cls = -1, len = 0;
    const char *name = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, s, &len);
    if (cls == MPI_SUCCESS) name = "MPI_SUCCESS";
    else if (cls == MPI_ERR_REQUEST) name = "MPI_ERR_REQUEST";
    else if (cls == MPI_ERR_ARG) name = "MPI_ERR_ARG";
    else if (cls == MPI_ERR_OP) name = "MPI_ERR_OP";
    else if (cls == MPI_ERR_TYPE) name = "MPI_ERR_TYPE";
    else if (cls == MPI_ERR_INTERN) name = "MPI_ERR_INTERN";
    else if (cls == MPI_ERR_OTHER) name = "MPI_ERR_OTHER";
    snprintf(buf, sizeof buf, "rc=%d class=%d %s (%s)", rc, cls, name, s);
    return buf;
}

long rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}
