/*
 * conf_gather: results of the persistent gather family -- MPIX_Gather_init,
 * MPIX_Gatherv_init, MPIX_Scatter_init, MPIX_Scatterv_init,
 * MPIX_Allgather_init, MPIX_Allgatherv_init -- against locally computed
 * expectations, which are cross-checked against the BLOCKING collective
 * (served by tuned/basic, never by a persistent-collective component).
 *
 * Data model.  Every contribution is "the block of rank i": its primitive
 * fields, numbered g = 0, 1, 2, ... in type-signature order, get values
 * that depend only on (case, iteration, i, g).  A block therefore has the
 * same values whatever datatype carries it, so send and receive types may
 * have different layouts with the same signature (4 x MPI_INT vs a 2x2
 * int matrix with holes, 2 x MPI_DOUBLE vs a strided vector, a type with
 * a negative lower bound, ...) and every rank can compute what every
 * buffer must hold, holes and gaps included.
 *
 * Each request is started ITERS times with new inputs; receive buffers
 * (with guard zones on both sides) are poisoned before each start, and
 * everything that is not a received field must still be poison after it.
 * Send buffers must come back unchanged.  Covered: MPI_IN_PLACE wherever
 * MPI allows it, zero counts on some or all ranks, non-contiguous derived
 * types, mixed send/receive layouts, every root (0, 1, p-1 on the split
 * communicator), insignificant arguments passed as NULL/0/MPI_DATATYPE_NULL
 * or as junk, MPI_COMM_WORLD plus a reversed-order split communicator,
 * and many requests outstanding at once (MPI_Startall/MPI_Waitall).
 *
 * Output: one "FAIL ..." line per failing case and rank; rank 0 ends with
 * "conf_gather: N checks, M failures".  Exit status non-zero on failure.
 *
 * Usage: conf_gather [--quick] [--max-print N]
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 3
#define GUARD 64                /* poisoned bytes before and after every buffer */

static int wrank, wsize;
static uint64_t next_id = 1;

/* ------------------------------------------------------------------ layouts */
/* One element of a datatype: fields at byte offsets from its lower bound. */
typedef struct {
    const char *name;
    MPI_Datatype type;
    MPI_Aint lb, extent;
    int nprim;
    size_t off[MAXPRIM];
    prim_t kind[MAXPRIM];
} lay_t;

static lay_t L_INT, L_DOUBLE, L_CHAR, L_VECD, L_STRUCTH, L_MAT2H, L_MAT2V, L_LBNEG;

static void lay_from(lay_t *l, const dtype_t *d)
{
    l->name = d->name;
    l->type = d->type;
    l->lb = 0;
    l->extent = (MPI_Aint)d->extent;
    l->nprim = d->nprim;
    memcpy(l->off, d->off, sizeof l->off);
    memcpy(l->kind, d->kind, sizeof l->kind);
}

/* {hole, int, hole} with lb = -8, extent 16: the int sits at the origin. */
static int lay_lbneg(lay_t *l)
{
    MPI_Datatype t;
    int rc = MPI_Type_create_resized(MPI_INT, -8, 16, &t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    *l = (lay_t){ "int@lb-8", t, -8, 16, 1, { 8 }, { PR_INT } };
    return rc;
}

static int layouts_create(void)
{
    lay_from(&L_INT, &T_INT);
    lay_from(&L_DOUBLE, &T_DOUBLE);
    lay_from(&L_CHAR, &T_CHAR);
    lay_from(&L_VECD, &T_VECD);
    lay_from(&L_STRUCTH, &T_STRUCTH);
    lay_from(&L_MAT2H, &T_MAT2H);
    lay_from(&L_MAT2V, &T_MAT2V);
    return lay_lbneg(&L_LBNEG);
}

/* Send and receive datatypes of one case: `smul` send elements carry the
 * same signature as `rmul` receive elements (one "unit"). */
typedef struct {
    const char *name;
    const lay_t *s, *r;
    int smul, rmul;
} pair_t;

static pair_t pairs[] = {
    { "int", &L_INT, &L_INT, 1, 1 },
    { "char", &L_CHAR, &L_CHAR, 1, 1 },
    { "vecd", &L_VECD, &L_VECD, 1, 1 },
    { "structh", &L_STRUCTH, &L_STRUCTH, 1, 1 },
    { "4int->mat2h", &L_INT, &L_MAT2H, 4, 1 },
    { "mat2h->mat2v", &L_MAT2H, &L_MAT2V, 1, 1 },
    { "2double->vecd", &L_DOUBLE, &L_VECD, 2, 1 },
    { "lbneg->int", &L_LBNEG, &L_INT, 1, 1 },
};
#define NPAIRS ((int)(sizeof pairs / sizeof pairs[0]))

/* ------------------------------------------------------------------ data */
/* A buffer of `nelems` elements of a layout, with guard zones. */
typedef struct {
    unsigned char *mem;         /* guard | elements | guard */
    size_t bytes;               /* all of it */
    const lay_t *lay;
    void *ptr;                  /* what MPI gets: element 0 at ptr + lb */
} region_t;

static void region_alloc(region_t *r, const lay_t *l, long nelems)
{
    size_t body = (size_t)(nelems > 0 ? nelems : 1) * (size_t)l->extent;
    r->bytes = 2 * GUARD + body;
    r->mem = malloc(r->bytes);
    if (!r->mem) {
        fprintf(stderr, "conf_gather: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    r->lay = l;
    r->ptr = r->mem + GUARD - l->lb;
}

static void region_free(region_t *r)
{
    free(r->mem);
    r->mem = NULL;
}

/* The block of rank `who`: `count` elements starting at element `first`. */
static void fill_block(unsigned char *mem, const lay_t *l, long first, long count, uint64_t key)
{
    unsigned char *base = mem + GUARD + first * l->extent;
    for (long e = 0; e < count; e++)
        for (int k = 0; k < l->nprim; k++) {
            uint64_t g = (uint64_t)(e * l->nprim + k);
            gen_field(base + e * l->extent + l->off[k], l->kind[k], OP_NONE,
                      mix64(key ^ (g * 0x9e3779b1ULL)));
        }
}

static int compare_region(const unsigned char *got, const unsigned char *exp, const region_t *r,
                          const char *what, char *msg, size_t len)
{
    size_t i = first_diff(got, exp, r->bytes);
    if (i == r->bytes) return 0;
    long off = (long)i - GUARD;
    snprintf(msg, len, "%s: byte %ld (element %ld, +%ld) is 0x%02x, expected 0x%02x%s", what, off,
             off >= 0 ? off / (long)r->lay->extent : -1, off >= 0 ? off % (long)r->lay->extent : off,
             got[i], exp[i], (off < 0 || i >= r->bytes - GUARD) ? " (guard zone)" : "");
    return 1;
}

/* ------------------------------------------------------------------ cases */
typedef enum { GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV, NKINDS } kind_t;
static const char *kind_name[NKINDS] = { "gather", "gatherv", "scatter", "scatterv", "allgather",
                                         "allgatherv" };

static int is_v(kind_t k) { return k == GATHERV || k == SCATTERV || k == ALLGATHERV; }
static int is_all(kind_t k) { return k == ALLGATHER || k == ALLGATHERV; }
static int is_scatter(kind_t k) { return k == SCATTER || k == SCATTERV; }

/*
 * One case.  "own" is this rank's block buffer (send buffer of gather and
 * allgather, receive buffer of scatter); "arr" is the array of p blocks
 * (root's receive buffer of gather, root's send buffer of scatter, every
 * rank's receive buffer of allgather).
 */
typedef struct {
    kind_t kind;
    const pair_t *pair;
    const ctx_t *c;
    int root, inplace, argmode;
    uint64_t id;
    int *units;                 /* per rank, in signature units */
    int *counts, *displs;       /* arr side, in arr elements */
    int *junk;                  /* per-rank array for ARGS_JUNK */
    int own_count;
    int has_arr, in_place_here;
    const lay_t *own_lay, *arr_lay;
    region_t own, arr;
    unsigned char *own_exp, *arr_exp;
    MPI_Request req;
} gcase_t;

static int am_root(const gcase_t *g) { return is_all(g->kind) || g->c->rank == g->root; }

static uint64_t block_key(const gcase_t *g, int it, int who)
{
    return input_seed(g->id, it, who);
}

static void case_setup(gcase_t *g, kind_t kind, const pair_t *pair, const ctx_t *c, int n,
                       int zpat, int root, int inplace, int argmode)
{
    int p = c->size;
    memset(g, 0, sizeof *g);
    g->kind = kind;
    g->pair = pair;
    g->c = c;
    g->root = is_all(kind) ? 0 : root;
    g->inplace = inplace;
    g->argmode = argmode;
    g->id = next_id++;
    g->req = MPI_REQUEST_NULL;
    g->units = calloc((size_t)p, sizeof(int));
    g->counts = calloc((size_t)p, sizeof(int));
    g->displs = calloc((size_t)p, sizeof(int));
    g->junk = calloc((size_t)p, sizeof(int));
    for (int i = 0; i < p; i++) g->junk[i] = 7 + i;
    /* zpat 0: n units everywhere (n = 0: all zero); 1: varying, some ranks zero */
    for (int i = 0; i < p; i++)
        g->units[i] = (zpat == 0) ? n : (((i + root) % 3 == 1) ? 0 : n + i);

    int scatter = is_scatter(kind);
    g->own_lay = scatter ? pair->r : pair->s;
    g->arr_lay = scatter ? pair->s : pair->r;
    int own_mul = scatter ? pair->rmul : pair->smul, arr_mul = scatter ? pair->smul : pair->rmul;
    g->own_count = g->units[c->rank] * own_mul;
    long arr_elems = 0;
    if (is_v(kind)) {
        /* reversed rank order with a one-element gap before each block */
        long pos = 1;
        for (int i = p - 1; i >= 0; i--) {
            g->counts[i] = g->units[i] * arr_mul;
            g->displs[i] = (int)pos;
            pos += g->counts[i] + 1;
        }
        arr_elems = pos;
    } else {
        for (int i = 0; i < p; i++) {
            g->counts[i] = g->units[i] * arr_mul;
            g->displs[i] = i * g->counts[i];
        }
        arr_elems = (long)p * g->counts[0];
    }
    g->has_arr = am_root(g);
    g->in_place_here = inplace && am_root(g);
    region_alloc(&g->own, g->own_lay, g->own_count);
    g->own_exp = malloc(g->own.bytes);
    if (g->has_arr) {
        region_alloc(&g->arr, g->arr_lay, arr_elems);
        g->arr_exp = malloc(g->arr.bytes);
    }
}

static void case_release(gcase_t *g)
{
    if (g->req != MPI_REQUEST_NULL) MPI_Request_free(&g->req);
    region_free(&g->own);
    if (g->has_arr) region_free(&g->arr);
    free(g->own_exp);
    free(g->arr_exp);
    free(g->units);
    free(g->counts);
    free(g->displs);
    free(g->junk);
}

/* New inputs for iteration `it`, poisoned outputs, and the expectations. */
static void case_prepare(gcase_t *g, int it)
{
    int p = g->c->size, me = g->c->rank;
    int scatter = is_scatter(g->kind);

    /* own block: input of gather/allgather, output of scatter */
    memset(g->own.mem, scatter ? POISON_RECV : POISON_SEND, g->own.bytes);
    memset(g->own_exp, scatter ? POISON_RECV : POISON_SEND, g->own.bytes);
    if (!scatter || !g->in_place_here)
        fill_block(g->own_exp, g->own_lay, 0, g->own_count, block_key(g, it, me));
    if (!scatter) memcpy(g->own.mem, g->own_exp, g->own.bytes);
    if (!g->has_arr) return;

    /* the array: output of gather/allgather (input in place), input of scatter */
    memset(g->arr.mem, scatter ? POISON_SEND : POISON_RECV, g->arr.bytes);
    memset(g->arr_exp, scatter ? POISON_SEND : POISON_RECV, g->arr.bytes);
    for (int i = 0; i < p; i++)
        fill_block(g->arr_exp, g->arr_lay, g->displs[i], g->counts[i], block_key(g, it, i));
    if (scatter)
        memcpy(g->arr.mem, g->arr_exp, g->arr.bytes);
    else if (g->in_place_here)
        fill_block(g->arr.mem, g->arr_lay, g->displs[me], g->counts[me], block_key(g, it, me));
}

static int case_check(gcase_t *g, char *msg, size_t len)
{
    if (compare_region(g->own.mem, g->own_exp, &g->own,
                       is_scatter(g->kind) ? "recvbuf" : "sendbuf changed", msg, len))
        return 1;
    if (g->has_arr &&
        compare_region(g->arr.mem, g->arr_exp, &g->arr,
                       is_scatter(g->kind) ? "sendbuf changed" : "recvbuf", msg, len))
        return 1;
    return 0;
}

/*
 * Arguments of the MPI call on this rank.  Arguments MPI declares
 * insignificant here (the root's array arguments on other ranks, the own
 * block's at an MPI_IN_PLACE root) are, by argmode: the real ones, NULL /
 * 0 / MPI_DATATYPE_NULL, or junk (a large count of another type, and a
 * pointer that must not be touched).  An implementation must not let them
 * steer anything: e.g. an algorithm choice by message size made from a
 * non-root's receive count would differ from the root's.
 */
typedef enum { ARGS_REAL, ARGS_NULL, ARGS_JUNK, NARGMODES } argmode_t;
static const char *argmode_name[NARGMODES] = { "real", "null", "junk" };

typedef struct {
    void *sbuf, *rbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    const int *counts, *displs;
} call_t;

static call_t case_args(const gcase_t *g, argmode_t mode)
{
    call_t a;
    const int me = g->c->rank;
    const int scatter = is_scatter(g->kind), root = am_root(g);
    const int bcount = g->counts[0];    /* per-block count of the non-v forms */
    const MPI_Datatype own_t = g->own_lay->type, arr_t = g->arr_lay->type;
#define INSIG(real, null, junk) (mode == ARGS_REAL ? (real) : mode == ARGS_NULL ? (null) : (junk))
    /* the root's array arguments */
    void *arr_buf = root ? g->arr.ptr : INSIG(g->own.ptr, NULL, g->own.ptr);
    int arr_count = root ? bcount : INSIG(bcount, 0, 65536 + me);
    MPI_Datatype arr_type = root ? arr_t : INSIG(arr_t, MPI_DATATYPE_NULL, MPI_CHAR);
    /* the own block's count and type */
    int own_count = !g->in_place_here ? g->own_count : INSIG(g->own_count, 0, 3);
    MPI_Datatype own_type = !g->in_place_here ? own_t : INSIG(own_t, MPI_DATATYPE_NULL, MPI_CHAR);
    void *own_buf = g->in_place_here ? MPI_IN_PLACE : g->own.ptr;

    a.counts = root ? g->counts : INSIG(g->counts, NULL, g->junk);
    a.displs = root ? g->displs : INSIG(g->displs, NULL, g->junk);
#undef INSIG
    if (!scatter) {
        a.sbuf = own_buf, a.scount = own_count, a.stype = own_type;
        a.rbuf = arr_buf, a.rcount = arr_count, a.rtype = arr_type;
    } else {
        a.sbuf = arr_buf, a.scount = arr_count, a.stype = arr_type;
        a.rbuf = own_buf, a.rcount = own_count, a.rtype = own_type;
    }
    return a;
}

static int case_init(gcase_t *g)
{
    call_t a = case_args(g, (argmode_t)g->argmode);
    MPI_Comm comm = g->c->comm;
    MPI_Info info = MPI_INFO_NULL;
    switch (g->kind) {
    case GATHER:
        return MPIX_Gather_init(a.sbuf, a.scount, a.stype, a.rbuf, a.rcount, a.rtype, g->root, comm,
                                info, &g->req);
    case GATHERV:
        return MPIX_Gatherv_init(a.sbuf, a.scount, a.stype, a.rbuf, a.counts, a.displs, a.rtype,
                                 g->root, comm, info, &g->req);
    case SCATTER:
        return MPIX_Scatter_init(a.sbuf, a.scount, a.stype, a.rbuf, a.rcount, a.rtype, g->root,
                                 comm, info, &g->req);
    case SCATTERV:
        return MPIX_Scatterv_init(a.sbuf, a.counts, a.displs, a.stype, a.rbuf, a.rcount, a.rtype,
                                  g->root, comm, info, &g->req);
    case ALLGATHER:
        return MPIX_Allgather_init(a.sbuf, a.scount, a.stype, a.rbuf, a.rcount, a.rtype, comm, info,
                                   &g->req);
    case ALLGATHERV:
        return MPIX_Allgatherv_init(a.sbuf, a.scount, a.stype, a.rbuf, a.counts, a.displs, a.rtype,
                                    comm, info, &g->req);
    default:
        return MPI_ERR_INTERN;
    }
}

/* The same operation through the blocking collective (tuned/basic). */
static int case_blocking(gcase_t *g)
{
    call_t a = case_args(g, ARGS_REAL);
    MPI_Comm comm = g->c->comm;
    switch (g->kind) {
    case GATHER:
        return MPI_Gather(a.sbuf, a.scount, a.stype, a.rbuf, a.rcount, a.rtype, g->root, comm);
    case GATHERV:
        return MPI_Gatherv(a.sbuf, a.scount, a.stype, a.rbuf, a.counts, a.displs, a.rtype, g->root,
                           comm);
    case SCATTER:
        return MPI_Scatter(a.sbuf, a.scount, a.stype, a.rbuf, a.rcount, a.rtype, g->root, comm);
    case SCATTERV:
        return MPI_Scatterv(a.sbuf, a.counts, a.displs, a.stype, a.rbuf, a.rcount, a.rtype, g->root,
                            comm);
    case ALLGATHER:
        return MPI_Allgather(a.sbuf, a.scount, a.stype, a.rbuf, a.rcount, a.rtype, comm);
    case ALLGATHERV:
        return MPI_Allgatherv(a.sbuf, a.scount, a.stype, a.rbuf, a.counts, a.displs, a.rtype, comm);
    default:
        return MPI_ERR_INTERN;
    }
}

/* ------------------------------------------------------------------ reporting */
static void check(gcase_t *g, int it, const char *prefix)
{
    char msg[500];
    n_checks++;
    if (case_check(g, msg, sizeof msg)) case_fail(it, "%s%s", prefix, msg);
}

/* ------------------------------------------------------------------ one case */
static void run_case(const ctx_t *c, kind_t kind, const pair_t *pair, int n, int zpat, int root,
                     int inplace)
{
    gcase_t g;
    int rc, argmode = (int)((next_id + (uint64_t)root) % NARGMODES);

    case_setup(&g, kind, pair, c, n, zpat, root, inplace, argmode);
    case_begin("coll=%s comm=%s np=%d types=%s n=%d counts=%s root=%d in-place=%d "
               "insignificant-args=%s",
               kind_name[kind], c->name, c->size, pair->name, n,
               zpat == 0 ? "equal" : "varying+zeros",
               is_all(kind) ? -1 : root, inplace, argmode_name[argmode]);
    case_prepare(&g, 0);
    rc = case_init(&g);
    if (!case_init_ok(c->comm, rc, &g.req)) {
        case_release(&g);
        return;
    }
    for (int it = 0; it < ITERS; it++) {
        case_prepare(&g, it);
        rc = start_req(&g.req, it);
        if (rc != MPI_SUCCESS) {
            case_fail(it, "start returned %s", err_class_str(rc));
            break;
        }
        rc = complete_req(&g.req, it);
        if (rc != MPI_SUCCESS) {
            case_fail(it, "completion returned %s", err_class_str(rc));
            break;
        }
        if (g.req == MPI_REQUEST_NULL) {
            case_fail(it, "persistent request became MPI_REQUEST_NULL");
            break;
        }
        check(&g, it, "");
    }
    /* The expectation model must agree with the blocking collective. */
    case_prepare(&g, ITERS);
    rc = case_blocking(&g);
    if (rc != MPI_SUCCESS) case_fail(ITERS, "REFERENCE blocking call returned %s", err_class_str(rc));
    else check(&g, ITERS, "REFERENCE (test or tuned bug) blocking call disagrees with the model: ");
    case_release(&g);
}

/* ------------------------------------------------------------------ many outstanding */
static void multi_case(const ctx_t *c)
{
    enum { N = 8 };
    gcase_t g[N];
    MPI_Request rq[N];
    int p = c->size, ok = 1, rc;
    kind_t kinds[N] = { GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV, GATHER, ALLGATHER };

    case_begin("many-outstanding (%d requests, Startall/Waitall) comm=%s np=%d", N, c->name, p);
    for (int i = 0; i < N; i++) {
        case_setup(&g[i], kinds[i], &pairs[i % NPAIRS], c, 3 + i, i == 1 ? 1 : 0, (i * 3) % p,
                   i >= 6, 0);
        case_prepare(&g[i], 0);
        rc = case_init(&g[i]);
        if (rc != MPI_SUCCESS) {
            case_fail(-1, "init of request %d (%s) returned %s", i, kind_name[kinds[i]], err_class_str(rc));
            ok = 0;
        }
        rq[i] = g[i].req;
    }
    if (all_ok(c->comm, ok)) {
        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < N; i++) case_prepare(&g[i], it);
            rc = MPI_Startall(N, rq);
            if (rc == MPI_SUCCESS) rc = MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
            if (rc != MPI_SUCCESS) {
                case_fail(it, "MPI_Startall/MPI_Waitall returned %s", err_class_str(rc));
                break;
            }
            for (int i = 0; i < N; i++) {
                char prefix[80];
                snprintf(prefix, sizeof prefix, "request %d (%s): ", i, kind_name[kinds[i]]);
                check(&g[i], it, prefix);
            }
        }
    }
    for (int i = 0; i < N; i++) {
        g[i].req = rq[i];
        case_release(&g[i]);
    }
}

/* ------------------------------------------------------------------ sweep */
static void sweep(const ctx_t *c)
{
    static const int counts_full[] = { 0, 1, 5, 1000 };
    static const int counts_reduced[] = { 0, 3 };
    const int *counts = c->full ? counts_full : counts_reduced;
    int ncounts = c->full ? 4 : 2, p = c->size;
    int roots[3] = { 0, p - 1, 1 % p }, nroots = 0;

    /* Full sweep: every root (a binomial tree's subtrees wrap past rank
     * p-1 only for some roots).  Reduced: distinct ones of 0, p-1, 1. */
    for (int i = 0; i < 3; i++) {
        int dup = 0;
        for (int j = 0; j < nroots; j++) dup |= roots[j] == roots[i];
        if (!dup) roots[nroots++] = roots[i];
    }
    if (c->full) nroots = p;
    for (int k = 0; k < NKINDS; k++)
        for (int pi = 0; pi < NPAIRS; pi++) {
            if (!c->full && pi % 3 != 0 && pi != 4) continue;
            for (int ci = 0; ci < ncounts; ci++)
                for (int zpat = 0; zpat < (is_v((kind_t)k) ? 2 : 1); zpat++) {
                    if (zpat == 1 && counts[ci] == 0) continue;  /* n = 0 is all-zero already */
                    for (int ri = 0; ri < (is_all((kind_t)k) ? 1 : nroots); ri++)
                        for (int inplace = 0; inplace < 2; inplace++)
                            run_case(c, (kind_t)k, &pairs[pi], counts[ci], zpat,
                                     c->full ? ri : roots[ri], inplace);
                }
        }
    /* blocks of >= 32 KiB: the other side of the automatic choice, and
     * (allgather) single copy from sbuf/rbuf into contiguous and holed
     * layouts, or streamed from holed ones */
    for (int k = 0; k < NKINDS; k++) {
        run_case(c, (kind_t)k, &pairs[0], c->full ? 9000 : 8200, 0, p - 1, k % 2);
        run_case(c, (kind_t)k, &pairs[4], 2100, 0, 0, 0);
        run_case(c, (kind_t)k, &pairs[5], 2300, 0, p - 1, 0);
    }
}

int main(int argc, char **argv)
{
    int quick = 0;
    test_init(&argc, &argv, "conf_gather", &wrank, &wsize);
    parse_test_args(argc, argv, &quick);
    abort_unless(types_create() == MPI_SUCCESS && layouts_create() == MPI_SUCCESS, "test datatypes");

    ctx_t world = { MPI_COMM_WORLD, "world", wrank, wsize, !quick };
    ctx_t split;
    ctx_split_reversed(&split);

    double t0 = now_sec();
    sweep(&world);
    multi_case(&world);
    if (!quick) {
        sweep(&split);
        multi_case(&split);
    }
    watchdog_arm(CASE_TIMEOUT, "conf_gather final reduction of the results");

    totals_t sum = totals_sum();
    if (wrank == 0) {
        printf("conf_gather np=%d: %.1f s\n", wsize, now_sec() - t0);
        printf("conf_gather: %ld checks, %ld failures\n", sum.checks, sum.failed);
    }
    MPI_Comm_free(&split.comm);
    MPI_Type_free(&L_LBNEG.type);
    types_free();
    watchdog_disarm();
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
