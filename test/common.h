/*
 * Shared helpers for the pnbc test programs (common.c; datatypes and
 * operations in common_ops.c; inputs, references, comparison in
 * common_data.c).
 *
 * Everything here uses the public MPI API only (plus the MPIX_*_init
 * persistent collectives from <mpi-ext.h>), so the tests run against any
 * component that serves persistent collectives (pnbc, libnbc, ...).
 *
 * Data model: a test datatype is described by a "layout": the byte offsets
 * and kinds of the primitive fields inside one element, and the element
 * extent.  Bytes of an element not covered by a field are holes.  Inputs are
 * deterministic functions of (case id, iteration, rank, element, field), so
 * every rank can compute every other rank's contribution and therefore the
 * expected result of a reduction locally, in the canonical MPI order
 * x0 op (x1 op (... op x_{n-1})).
 */
#ifndef PNBC_TEST_COMMON_H
#define PNBC_TEST_COMMON_H

#include <mpi.h>
#include "pcoll_names.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define POISON_RECV 0xA5        /* receive buffers before every start */
#define POISON_SEND 0x5A        /* send buffers around the inputs */
#define JUNK_SEND 0x33          /* send buffers at *_init: data is read at start, not at init */
#define JUNK_RECV 0x44          /* receive buffers at *_init */
#define CASE_TIMEOUT 60         /* seconds the watchdog gives one test case */

/* ---------------------------------------------------------------- hashing */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* seed of the input of rank `rank` at iteration `it` of case `id` */
static inline uint64_t input_seed(uint64_t id, int it, int rank)
{
    return mix64(mix64(id * 1000003ULL + (uint64_t)it) ^ ((uint64_t)rank * 0x632be59bd9b4e019ULL));
}

/* ---------------------------------------------------------------- time */
double now_sec(void);           /* CLOCK_MONOTONIC, shared by all processes of a node */

/* ---------------------------------------------------------------- program */
/* MPI_Init, then: world rank and size into *wrank / *wsize, line-buffered
 * stdout, watchdog_init(prog, rank), MPI_ERRORS_RETURN on MPI_COMM_WORLD. */
void test_init(int *argc, char ***argv, const char *prog, int *wrank, int *wsize);
/* Unless ok: "FAIL <prog>: cannot create <what>" and MPI_Abort(2). */
void abort_unless(int ok, const char *what);

/* ---------------------------------------------------------------- memory */
void *xmalloc(size_t n);                /* malloc(n ? n : 1); abort() when out of memory */
void *xcalloc(size_t n, size_t size);   /* zeroed, at least 1 byte; MPI_Abort(2) when out of memory */

/* ---------------------------------------------------------------- watchdog
 * SIGALRM based last resort against hangs inside MPI: prints what was going
 * on and _exit()s, which makes mpirun tear the job down.  Crash signals
 * (SEGV, BUS, FPE, ILL, ABRT) print the same text, then chain to the
 * previous handler.  Call after MPI_Init.  The program name and world rank
 * given here also appear in the FAIL lines of the reporting below.          */
void watchdog_init(const char *progname, int rank);
void watchdog_arm(int seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void watchdog_disarm(void);
/* Only update the "what is running" text (also printed on a crash signal). */
void watchdog_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---------------------------------------------------------------- datatypes */
typedef enum { PR_INT, PR_DOUBLE, PR_CHAR, PR_BYTE, PR_LONG, PR_FLOAT } prim_t;
#define MAXPRIM 4

typedef struct dtype {
    const char *name;
    MPI_Datatype type;
    size_t extent;
    int nprim;
    size_t off[MAXPRIM];
    prim_t kind[MAXPRIM];
    int derived;                /* created with MPI_Type_* (must be freed) */
} dtype_t;

extern dtype_t T_INT, T_DOUBLE, T_CHAR, T_BYTE, T_LONG, T_FLOAT, T_DINT;
extern dtype_t T_CONTIG3I;  /* MPI_Type_contiguous(3, MPI_INT)                        */
extern dtype_t T_VECD;      /* vector(2,1,2,MPI_DOUBLE) resized to 32 B: 2 gaps/elem  */
extern dtype_t T_STRUCTH;   /* struct {int @0; double @8; char @16}, extent 24: holes */
extern dtype_t T_MAT2C;     /* 2x2 int matrix, contiguous(4, MPI_INT)                  */
extern dtype_t T_MAT2H;     /* 2x2 int matrix as struct with holes, extent 32          */
extern dtype_t T_MAT2V;     /* 2x2 int matrix as vector(4,1,2,MPI_INT) resized to 32 B */

/* Creates/commits the derived types above and checks the predefined extents. */
int types_create(void);
void types_free(void);
/* Make a NEW, independent MPI datatype with the layout of `proto` (a derived
 * one).  The caller owns out->type. */
int dtype_clone(dtype_t *out, const dtype_t *proto);
size_t prim_size(prim_t k);
/* MPI_Type_create_resized(in, lb, extent, out), then frees `in` (not committed). */
int type_resized(MPI_Datatype in, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out);

/* ---------------------------------------------------------------- operations */
typedef enum {
    OP_NONE,                    /* no reduction (bcast data)                      */
    OP_SUM, OP_MAX, OP_MIN, OP_PROD, OP_BAND, OP_BOR, OP_BXOR,
    OP_MINLOC, OP_MAXLOC,       /* on T_DINT                                      */
    OP_U_AFFINE,                /* user, non-commutative, on MPI_INT: packed affine
                                   maps x -> a*x+b mod 32749, op = composition    */
    OP_U_MATMUL,                /* user, non-commutative: 2x2 matmul mod 10007     */
    OP_U_DSUM                   /* user, commutative: sum of the double fields     */
} opk_t;

const char *op_name(opk_t k);
int op_is_user(opk_t k);
/* Predefined op handle, or a NEW user op (caller frees) for user kinds.  For
 * OP_U_MATMUL the callback is bound to the layout `dt` (T_MAT2C/H/V). */
MPI_Op op_create(opk_t k, const dtype_t *dt);
/* Global user ops created by ops_create(): valid for the shared types. */
int ops_create(void);
void ops_free(void);
MPI_Op op_get(opk_t k, const dtype_t *dt);
/* An operation and a datatype it is tested on. */
typedef struct { opk_t op; dtype_t *dt; } combo_t;

/* The non-commutative affine maps x -> a*x + b mod AFF_P of the user ops:
 * (*a, *b) = f o g for f = (af, bf), g = (ag, bg), i.e. x -> f(g(x)). */
#define AFF_P 32749             /* prime < 2^15: (a << 16 | b) fits in an int */
/* The modulus of the 2x2 matrix products of OP_U_MATMUL. */
#define MAT_P 10007             /* 2 * MAT_P^2 < 2^31 */
void affine_compose(long af, long bf, long ag, long bg, long *a, long *b);

/* ---------------------------------------------------------------- data */
/* The value of one field of kind `kind` for hash h, in the range op wants. */
void gen_field(unsigned char *p, prim_t kind, opk_t op, uint64_t h);
/* Write the input fields of `count` elements (holes untouched). */
void fill_input(void *buf, const dtype_t *dt, int count, opk_t op, uint64_t seed);
/* A send buffer for a start: POISON_SEND, then the inputs, then a copy of it
 * all into `copy` (the send buffer must come back unchanged). */
void fill_send(void *buf, void *copy, const dtype_t *dt, int count, opk_t op, uint64_t seed);
/* Reference of a reduction over the inputs of ranks lo..hi at iteration `it`
 * of case `id`: exp = x_lo op (x_lo+1 op (... op x_hi)), holes POISON_RECV;
 * tmp is scratch space of the same size. */
void fold_reference(void *exp, void *tmp, const dtype_t *dt, int count, opk_t op, uint64_t id,
                    int it, int lo, int hi);
/* Offset of the first byte in which a and b differ; n when they are equal. */
size_t first_diff(const void *a, const void *b, size_t n);
/* inout[i] = in[i] op inout[i] on the fields (the MPI user-function convention) */
void reduce_local(const void *in, void *inout, const dtype_t *dt, int count, opk_t op);
/* Describe the first difference between got and expected (whole elements,
 * holes included) into msg; returns 0 when equal. */
int compare_buffers(const void *got, const void *exp, const dtype_t *dt, int count,
                    char *msg, size_t msglen);

/* ---------------------------------------------------------------- requests */
typedef enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE } coll_t;
const char *coll_name(coll_t c);
/* The MPI_Op of a request: op_get(opk, dt) for the reductions, else MPI_OP_NULL. */
MPI_Op coll_op(coll_t coll, opk_t opk, const dtype_t *dt);

typedef struct preq {
    coll_t coll;
    dtype_t dt;                 /* copy of the layout (handle may be freed later) */
    opk_t opk;
    MPI_Op op;
    int count, root, inplace, nullrecv;
    MPI_Comm comm;
    int rank, size;
    int am_root, use_inplace;
    unsigned char *sbuf, *rbuf, *exp, *tmp, *scopy;
    size_t bytes;
    MPI_Request req;
    uint64_t id;
} preq_t;

/* Allocate buffers.  inplace: MPI_IN_PLACE at the root (reduce) / everywhere
 * (allreduce).  nullrecv: reduce non-roots pass recvbuf = NULL. */
void preq_setup(preq_t *p, coll_t coll, MPI_Comm comm, const dtype_t *dt, opk_t opk,
                MPI_Op op, int count, int root, int inplace, int nullrecv, uint64_t id);
/* Calls MPIX_<coll>_init; buffers hold junk at that time. */
int preq_init(preq_t *p, MPI_Info info);
/* New inputs for iteration `it`, poisoned receive buffers. */
void preq_prepare(preq_t *p, int it);
/* Check the result of iteration `it`; 0 = ok, otherwise msg describes it. */
int preq_check(preq_t *p, int it, char *msg, size_t msglen);
void preq_release(preq_t *p);

/* ---------------------------------------------------------------- running requests */
int start_req(MPI_Request *r, int it);          /* MPI_Start at even `it`, MPI_Startall(1) at odd */
int complete_req(MPI_Request *r, int it);       /* MPI_Wait at even `it`, an MPI_Test loop at odd */
int start_complete_req(MPI_Request *r, int it); /* start_req, then complete_req: the first error */
int all_ok(MPI_Comm comm, int ok);              /* 1 when ok is true on every rank of comm */

/* ---------------------------------------------------------------- communicators */
/* A communicator a sweep of cases runs on. */
typedef struct {
    MPI_Comm comm;
    char name[40];
    int rank, size;
    int full;                   /* full sweep or reduced */
} ctx_t;
/* c = the split of MPI_COMM_WORLD with rank 0 alone and the other ranks
 * together in reversed order (reduced sweep, MPI_ERRORS_RETURN). */
void ctx_split_reversed(ctx_t *c);

/* ---------------------------------------------------------------- reporting
 * Counters of this process and its failure lines
 * "FAIL <what> iter=<it> world_rank=<rank>: <message>", printed for the
 * first max_print failures only.                                            */
extern long n_cases, n_checks, n_failed;
extern int max_print;           /* default 40 */
/* Options shared by the drivers: --quick (sets *quick; ignored when quick is
 * NULL) and --max-print N. */
void parse_test_args(int argc, char **argv, int *quick);
/* Count a failure and print its line. */
void fail_line(const char *what, int it, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void vfail_line(const char *what, int it, const char *fmt, va_list ap);
/* Test cases: case_begin names the case, counts it in n_cases and arms the
 * watchdog for CASE_TIMEOUT s; case_fail counts and prints only the first
 * failure of a case (case_failed says whether there was one), and says so
 * once when later lines are suppressed. */
extern int case_failed;
void case_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void case_fail(int it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Steps of a case that report their failures through case_fail.
 * case_init_ok: rc is what *_init returned on this rank; 1 when init
 * succeeded on every rank of comm (collective), else 0 after reporting
 * (and freeing *req when it was made). */
int case_init_ok(MPI_Comm comm, int rc, MPI_Request *req);
int case_start_complete(MPI_Request *r, int it);            /* start_req + complete_req: first error */
int case_startall_waitall(int n, MPI_Request *rq, int it);  /* MPI_Startall + MPI_Waitall: first error */
void case_free_req(MPI_Request *r);     /* MPI_Request_free unless NULL: must succeed and set NULL */
/* The iterations of a case's persistent request *req (after case_init_ok):
 * *req must not be MPI_REQUEST_NULL; for it = 0 .. iters-1, while it is
 * not: prepare(obj, it), start and complete (case_start_complete: stops at
 * an error), then check(obj, it, msg, len), non-zero = case_fail(it, msg). */
typedef void (*case_prepare_fn)(void *obj, int it);
typedef int (*case_check_fn)(void *obj, int it, char *msg, size_t len);
void case_iterate(MPI_Request *req, int iters, void *obj, case_prepare_fn prepare, case_check_fn check);
/* The cross-check of a local reference with the blocking collective
 * MPI_<coll> in iteration it: rc is what the call returned; when it is
 * MPI_SUCCESS, `differs` says whether the result disagreed with the
 * reference (msg: how). */
void case_cross_check(int it, int rc, int differs, const char *coll, const char *msg);
/* The counters summed over MPI_COMM_WORLD (collective). */
typedef struct { long cases, checks, failed; } totals_t;
totals_t totals_sum(void);

/* ---------------------------------------------------------------- misc */
const char *err_class_str(int rc);  /* "MPI_ERR_REQUEST (class 19): text" */
long rss_bytes(void);                 /* resident set size from /proc/self/statm */

#endif
