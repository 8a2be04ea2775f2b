/*
 * conf_inter: the persistent collectives on INTERcommunicators (barrier,
 * bcast, gather(v), scatter(v), allgather(v), alltoall(v,w), reduce,
 * allreduce, reduce_scatter, reduce_scatter_block) against independent
 * references.
 *
 * Communicators: MPI_COMM_WORLD split into two groups, joined with
 * MPI_Intercomm_create, in two ways: low half / high half (np=2,3,4,5 ->
 * group sizes (1,1) (1,2) (2,2) (2,3)) and even / odd world ranks with the
 * local order reversed ((1,1) (2,1) (2,2) (3,2)).  Rooted collectives run
 * with the root in either group, at its group's first and last rank.
 *
 * References: every input is a deterministic function of (case, start,
 * sending group, sending rank, destination), so every rank computes what it
 * must receive locally; reductions are folded locally over the REMOTE
 * group's inputs in canonical rank order (non-commutative user op
 * included).  Every start is additionally checked against the BLOCKING
 * intercommunicator collective with the same arguments (served by
 * coll/basic or coll/inter, never by a persistent-collective component).
 * Barrier: no rank may leave before every rank of the remote group entered
 * (CLOCK_MONOTONIC is common to the processes of a node).
 *
 * Each request is started ITERS times with new inputs; receive buffers are
 * poisoned before each start and must hold exactly the expected bytes
 * afterwards (holes of derived datatypes, gaps between blocks and buffers
 * that are not significant at a rank stay poisoned); send buffers must not
 * change.  Covers zero counts on some and on all ranks, non-contiguous
 * datatypes, send and receive types with different layouts but the same
 * signature, per-peer datatypes (alltoallw), and several requests
 * outstanding at once (MPI_Startall).
 *
 * Output: one "FAIL ..." line per failure; rank 0 ends with
 * "conf_inter: N checks, M failures".  Exit status non-zero on failure.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITERS 3
#define PRIME AFF_P     /* user ops work modulo this (the affine maps' prime) */

static int wrank, wsize;

/* ================================================================ utilities */

/* Seed of the data group g's rank i sends to destination `key` (-1: the
 * same data to everyone) at start `it` of case `id`. */
static uint64_t data_seed(uint64_t id, int it, int g, int i, int key)
{
    return mix64(mix64(mix64(id * 1000003ULL + (uint64_t) it) ^ (uint64_t) (g * 7919 + i))
                 ^ (uint64_t) (key + 2));
}

/* ================================================================ datatypes */

/* A test datatype: `nf` ints per element at byte offsets off[], element
 * extent `ext`.  Bytes not covered by a field are holes. */
typedef struct ty {
    const char *name;
    MPI_Datatype t;
    int ext, nf, off[2];
} ty_t;

static ty_t TY_INT = { "int", MPI_DATATYPE_NULL, 4, 1, { 0, 0 } };
static ty_t TY_2INT = { "2int", MPI_DATATYPE_NULL, 8, 2, { 0, 4 } };   /* predefined pair */
static ty_t TY_PAIR = { "pair", MPI_DATATYPE_NULL, 8, 2, { 0, 4 } };   /* contiguous(2) */
static ty_t TY_VPAIR = { "vpair", MPI_DATATYPE_NULL, 16, 2, { 0, 8 } }; /* vector, holes */
static ty_t TY_LB = { "lbpair", MPI_DATATYPE_NULL, 12, 2, { 4, 8 } };  /* true_lb 4 */
static ty_t *const all_types[] = { &TY_INT, &TY_2INT, &TY_PAIR, &TY_VPAIR, &TY_LB };

static void ty_create_all(void)
{
    MPI_Datatype t0;
    TY_INT.t = MPI_INT;
    TY_2INT.t = MPI_2INT;
    MPI_Type_contiguous(2, MPI_INT, &TY_PAIR.t);
    MPI_Type_vector(2, 1, 2, MPI_INT, &t0);
    type_resized(t0, 0, 16, &TY_VPAIR.t);
    MPI_Type_create_hindexed_block(1, 2, (MPI_Aint[]) { 4 }, MPI_INT, &t0);
    type_resized(t0, 0, 12, &TY_LB.t);
    MPI_Type_commit(&TY_PAIR.t);
    MPI_Type_commit(&TY_VPAIR.t);
    MPI_Type_commit(&TY_LB.t);
}

static void ty_free_all(void)
{
    MPI_Type_free(&TY_PAIR.t);
    MPI_Type_free(&TY_VPAIR.t);
    MPI_Type_free(&TY_LB.t);
}

static const ty_t *ty_of(MPI_Datatype t)
{
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i) {
        if (all_types[i]->t == t) {
            return all_types[i];
        }
    }
    return NULL;
}

/* Write `cnt` elements of `ty` at buf from the int stream v (type-map order). */
static void put_stream(char *buf, const ty_t *ty, int cnt, const int *v)
{
    for (int e = 0; e < cnt; ++e) {
        for (int f = 0; f < ty->nf; ++f) {
            memcpy(buf + (size_t) e * ty->ext + ty->off[f], &v[e * ty->nf + f], sizeof(int));
        }
    }
}

static void get_stream(const char *buf, const ty_t *ty, int cnt, int *v)
{
    for (int e = 0; e < cnt; ++e) {
        for (int f = 0; f < ty->nf; ++f) {
            memcpy(&v[e * ty->nf + f], buf + (size_t) e * ty->ext + ty->off[f], sizeof(int));
        }
    }
}

/* ================================================================ operations */

typedef enum { OPK_NONE, OPK_SUM, OPK_MAXLOC, OPK_AFFINE, OPK_USUM } redop_t;
static const char *const opk_names[] = { "none", "sum", "maxloc", "affine", "usum" };
static MPI_Op op_affine, op_usum;

/* One element (record of nf ints): inout = in (op) inout. */
static void rec_op(redop_t k, const int *in, int *io)
{
    switch (k) {
    case OPK_SUM:
        io[0] += in[0];
        break;
    case OPK_MAXLOC:
        if (in[0] > io[0] || (in[0] == io[0] && in[1] < io[1])) {
            io[0] = in[0];
            io[1] = in[1];
        }
        break;
    case OPK_AFFINE: {
        /* x -> a x + b; (in o io)(t) = in(io(t)): a = a_in a_io, b = a_in b_io + b_in */
        long a, b;
        affine_compose(in[0], in[1], io[0], io[1], &a, &b);
        io[0] = (int) a;
        io[1] = (int) b;
        break;
    }
    case OPK_USUM:
        io[0] = (io[0] + in[0]) % PRIME;
        io[1] = (io[1] + in[1]) % PRIME;
        break;
    case OPK_NONE:
        break;
    }
}

/* The MPI callback of both user ops: the layout comes from the datatype,
 * which must be one of the test's pair types. */
static void user_fn(redop_t k, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const ty_t *ty = ty_of(*dt);
    if (NULL == ty || 2 != ty->nf) {
        fprintf(stderr, "conf_inter: user op called with an unknown datatype\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
        return;
    }
    for (int e = 0; e < *len; ++e) {
        int x[2], y[2];
        get_stream((char *) in + (size_t) e * ty->ext, ty, 1, x);
        get_stream((char *) inout + (size_t) e * ty->ext, ty, 1, y);
        rec_op(k, x, y);
        put_stream((char *) inout + (size_t) e * ty->ext, ty, 1, y);
    }
}

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_fn(OPK_AFFINE, in, inout, len, dt);
}

static void usum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_fn(OPK_USUM, in, inout, len, dt);
}

static MPI_Op op_handle(redop_t k)
{
    switch (k) {
    case OPK_SUM: return MPI_SUM;
    case OPK_MAXLOC: return MPI_MAXLOC;
    case OPK_AFFINE: return op_affine;
    case OPK_USUM: return op_usum;
    default: return MPI_OP_NULL;
    }
}

/* n ints of data from `seed`, in the value range the op wants. */
static void gen_ints(int *v, int n, uint64_t seed, redop_t k)
{
    for (int i = 0; i < n; ++i) {
        uint64_t r = mix64(seed + (uint64_t) i);
        switch (k) {
        case OPK_SUM: v[i] = (int) (r % 1000); break;
        case OPK_MAXLOC: v[i] = (int) (r % (i % 2 ? 100 : 5)); break;   /* value, index */
        case OPK_AFFINE: v[i] = (i % 2) ? (int) (r % PRIME) : 1 + (int) (r % (PRIME - 1)); break;
        case OPK_USUM: v[i] = (int) (r % PRIME); break;
        default: v[i] = (int) (r & 0x7fffffff); break;
        }
    }
}

/* ================================================================ intercommunicators */

typedef struct ictx {
    const char *name;
    MPI_Comm inter;
    int gid, lrank, lsize, rsize;
    int gsize[2];   /* by group id */
} ictx_t;

static int split_color(int how, int w)
{
    return how ? w % 2 : (w >= wsize / 2);
}

static void ictx_create(ictx_t *ic, int how)
{
    MPI_Comm local;
    int color = split_color(how, wrank), remote_leader = -1;

    /* how = 1: reversed local order, so local rank 0 is the highest world rank */
    MPI_Comm_split(MPI_COMM_WORLD, color, how ? wsize - wrank : wrank, &local);
    for (int w = 0; w < wsize; ++w) {
        int wl = how ? wsize - 1 - w : w;   /* the remote group's local rank 0 */
        if (split_color(how, wl) != color) {
            remote_leader = wl;
            break;
        }
    }
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 77 + how, &ic->inter);
    MPI_Comm_free(&local);
    ic->name = how ? "even/odd-reversed" : "low/high";
    ic->gid = color;
    MPI_Comm_rank(ic->inter, &ic->lrank);
    MPI_Comm_size(ic->inter, &ic->lsize);
    MPI_Comm_remote_size(ic->inter, &ic->rsize);
    ic->gsize[color] = ic->lsize;
    ic->gsize[1 - color] = ic->rsize;
}

/* ================================================================ test cases */

typedef enum {
    K_BCAST, K_GATHER, K_GATHERV, K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV,
    K_ALLTOALL, K_ALLTOALLV, K_ALLTOALLW, K_REDUCE, K_ALLREDUCE, K_RS, K_RSB
} kind_t;

static const char *const kind_names[] = {
    "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter",
    "reduce_scatter_block"
};

/* A block of a buffer: cnt elements of ty at byte disp, carrying the data
 * group g's rank i produced for destination key (see data_seed). */
typedef struct blk {
    const ty_t *ty;
    int cnt;
    size_t disp;
    int g, i, key;
} blk_t;

#define MAXB 8      /* blocks per buffer: one per remote rank at most */

typedef struct tcase {
    kind_t kind;
    char desc[256];
    uint64_t id;
    const ictx_t *ic;

    /* MPI arguments */
    char *sbuf, *rbuf;
    size_t sbytes, rbytes;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    int scounts[MAXB], sdispls[MAXB], rcounts[MAXB], rdispls[MAXB];
    MPI_Datatype stypes[MAXB], rtypes[MAXB];
    MPI_Op op;
    int root;

    /* data movement: what each block carries */
    int nsb, nrb;
    blk_t sb[MAXB], rb[MAXB];
    /* reductions */
    redop_t opk;
    const ty_t *rty;
    int count;          /* elements each rank contributes */
    int res_first, res_cnt;     /* my slice of the remote group's reduction */

    char *sref, *exp, *ref;     /* send copy, expected rbuf, blocking result */
    int blocking_ref;           /* run and compare the blocking collective */
    MPI_Request req;
} tcase_t;

static uint64_t next_id = 1;

/* Bytes needed for the blocks, plus slack (stays poisoned). */
static size_t blocks_bytes(const blk_t *b, int n)
{
    size_t end = 0;
    for (int k = 0; k < n; ++k) {
        size_t e = b[k].disp + (size_t) b[k].cnt * b[k].ty->ext;
        if (e > end) {
            end = e;
        }
    }
    return end + 16;
}

/* Place n blocks in reverse order with a one-element gap (plus `extra`
 * bytes: byte displacements need not be multiples of the extent) between
 * them: displacements that are neither sorted nor dense. */
static void place_scattered(blk_t *b, int n, size_t extra)
{
    size_t pos = 0;
    for (int k = n - 1; k >= 0; --k) {
        b[k].disp = pos;
        pos += (size_t) (b[k].cnt + 1) * b[k].ty->ext + extra;
    }
}

static void place_strided(blk_t *b, int n)
{
    for (int k = 0; k < n; ++k) {
        b[k].disp = (size_t) k * b[k].cnt * b[k].ty->ext;
    }
}

static tcase_t *tc_new(kind_t kind, const ictx_t *ic)
{
    tcase_t *t = xcalloc(1, sizeof *t);
    t->kind = kind;
    t->ic = ic;
    t->id = next_id++;
    t->root = MPI_PROC_NULL;
    t->stype = t->rtype = MPI_DATATYPE_NULL;
    t->op = MPI_OP_NULL;
    t->req = MPI_REQUEST_NULL;
    t->blocking_ref = 1;
    return t;
}

static void tc_alloc(tcase_t *t)
{
    t->sbytes = t->nsb ? blocks_bytes(t->sb, t->nsb) : 16;
    if (K_BCAST == t->kind && t->nsb) {     /* the root's one buffer holds its data */
        t->rbytes = blocks_bytes(t->sb, t->nsb);
    } else if (t->nrb) {
        t->rbytes = blocks_bytes(t->rb, t->nrb);
    } else if (t->rty) {
        t->rbytes = (size_t) t->res_cnt * t->rty->ext + 16;
    } else {
        t->rbytes = 16;
    }
    if (t->kind >= K_REDUCE) {
        t->sbytes = (size_t) t->count * t->rty->ext + 16;
    }
    t->sbuf = xcalloc(t->sbytes, 1);
    t->rbuf = xcalloc(t->rbytes, 1);
    t->sref = xcalloc(t->sbytes, 1);
    t->exp = xcalloc(t->rbytes, 1);
    t->ref = xcalloc(t->rbytes, 1);
    memset(t->sbuf, POISON_SEND, t->sbytes);
    memset(t->rbuf, POISON_RECV, t->rbytes);
}

static void tc_free(tcase_t *t)
{
    free(t->sbuf);
    free(t->rbuf);
    free(t->sref);
    free(t->exp);
    free(t->ref);
    free(t);
}

/* The collective with t's arguments: persistent init (recv buffer rbuf) or
 * the blocking call. */
#define CALL(init, blocking, ...) \
    (persistent ? init(__VA_ARGS__, t->ic->inter, MPI_INFO_NULL, &t->req) \
                : blocking(__VA_ARGS__, t->ic->inter))

static int tc_call(tcase_t *t, char *rbuf, int persistent)
{
    char *s = t->sbuf;
    switch (t->kind) {
    case K_BCAST:
        return CALL(MPIX_Bcast_init, MPI_Bcast, rbuf, t->rcount, t->rtype, t->root);
    case K_GATHER:
        return CALL(MPIX_Gather_init, MPI_Gather, s, t->scount, t->stype, rbuf, t->rcount,
                    t->rtype, t->root);
    case K_GATHERV:
        return CALL(MPIX_Gatherv_init, MPI_Gatherv, s, t->scount, t->stype, rbuf,
                    t->rcounts, t->rdispls, t->rtype, t->root);
    case K_SCATTER:
        /* The blocking reference is MPI_Scatterv with equal counts: coll/basic's
         * MPI_Scatter on intercommunicators crashes in Open MPI 4.1.4 (it
         * waits on a request pointer it advanced past the array). */
        if (!persistent) {
            return MPI_Scatterv(s, t->scounts, t->sdispls, t->stype, rbuf, t->rcount,
                                t->rtype, t->root, t->ic->inter);
        }
        return CALL(MPIX_Scatter_init, MPI_Scatter, s, t->scount, t->stype, rbuf, t->rcount,
                    t->rtype, t->root);
    case K_SCATTERV:
        return CALL(MPIX_Scatterv_init, MPI_Scatterv, s, t->scounts, t->sdispls, t->stype,
                    rbuf, t->rcount, t->rtype, t->root);
    case K_ALLGATHER:
        return CALL(MPIX_Allgather_init, MPI_Allgather, s, t->scount, t->stype, rbuf,
                    t->rcount, t->rtype);
    case K_ALLGATHERV:
        return CALL(MPIX_Allgatherv_init, MPI_Allgatherv, s, t->scount, t->stype, rbuf,
                    t->rcounts, t->rdispls, t->rtype);
    case K_ALLTOALL:
        return CALL(MPIX_Alltoall_init, MPI_Alltoall, s, t->scount, t->stype, rbuf,
                    t->rcount, t->rtype);
    case K_ALLTOALLV:
        return CALL(MPIX_Alltoallv_init, MPI_Alltoallv, s, t->scounts, t->sdispls, t->stype,
                    rbuf, t->rcounts, t->rdispls, t->rtype);
    case K_ALLTOALLW:
        return CALL(MPIX_Alltoallw_init, MPI_Alltoallw, s, t->scounts, t->sdispls,
                    t->stypes, rbuf, t->rcounts, t->rdispls, t->rtypes);
    case K_REDUCE:
        return CALL(MPIX_Reduce_init, MPI_Reduce, s, rbuf, t->count, t->rty->t, t->op,
                    t->root);
    case K_ALLREDUCE:
        return CALL(MPIX_Allreduce_init, MPI_Allreduce, s, rbuf, t->count, t->rty->t, t->op);
    case K_RS:
        return CALL(MPIX_Reduce_scatter_init, MPI_Reduce_scatter, s, rbuf, t->rcounts,
                    t->rty->t, t->op);
    case K_RSB:
        return CALL(MPIX_Reduce_scatter_block_init, MPI_Reduce_scatter_block, s, rbuf,
                    t->rcount, t->rty->t, t->op);
    }
    return MPI_ERR_OTHER;
}

/* ---------------------------------------------------------------- failures */

static void check_bytes(const tcase_t *t, int it, const char *what, const char *got,
                        const char *exp, size_t n)
{
    n_checks++;
    const size_t k = first_diff(got, exp, n);
    if (k < n) {
        fail_line(t->desc, it, "%s: first difference at byte %zu of %zu: got 0x%02x expected 0x%02x",
                  what, k, n, (unsigned char) got[k], (unsigned char) exp[k]);
    }
}

/* ---------------------------------------------------------------- inputs / expected */

/* The int stream a block carries at start `it`. */
static void blk_stream(const tcase_t *t, const blk_t *b, int it, int *v)
{
    gen_ints(v, b->cnt * b->ty->nf, data_seed(t->id, it, b->g, b->i, b->key), OPK_NONE);
}

static void fill_blocks(const tcase_t *t, char *buf, const blk_t *b, int n, int it)
{
    for (int k = 0; k < n; ++k) {
        int *v = xcalloc((size_t) (b[k].cnt * b[k].ty->nf), sizeof(int));
        blk_stream(t, &b[k], it, v);
        put_stream(buf + b[k].disp, b[k].ty, b[k].cnt, v);
        free(v);
    }
}

/* Contribution of group g's rank i to a reduction: count records. */
static void red_input(const tcase_t *t, int it, int g, int i, int *v)
{
    gen_ints(v, t->count * t->rty->nf, data_seed(t->id, it, g, i, -1), t->opk);
}

/* New inputs in sbuf, poisoned (or root-filled) rbuf, expected bytes. */
static void tc_prepare(tcase_t *t, int it)
{
    const ictx_t *ic = t->ic;

    memset(t->rbuf, POISON_RECV, t->rbytes);
    memset(t->exp, POISON_RECV, t->rbytes);
    if (t->kind < K_REDUCE) {
        fill_blocks(t, t->sbuf, t->sb, t->nsb, it);
        fill_blocks(t, t->exp, t->rb, t->nrb, it);
        if (K_BCAST == t->kind) {       /* bcast's one buffer: the root's data is in it */
            fill_blocks(t, t->rbuf, t->sb, t->nsb, it);
            fill_blocks(t, t->exp, t->sb, t->nsb, it);
        }
        return;
    }
    const int nf = t->rty->nf, n = t->count * nf;
    int *v = xcalloc((size_t) n, sizeof(int)), *acc = xcalloc((size_t) n, sizeof(int));
    red_input(t, it, ic->gid, ic->lrank, v);
    put_stream(t->sbuf, t->rty, t->count, v);
    if (t->res_cnt > 0) {
        /* fold the remote group's inputs in rank order: acc = x0 op x1 op ... */
        const int rg = 1 - ic->gid;
        red_input(t, it, rg, 0, acc);
        for (int j = 1; j < ic->rsize; ++j) {
            red_input(t, it, rg, j, v);
            for (int e = 0; e < t->count; ++e) {
                rec_op(t->opk, &acc[e * nf], &v[e * nf]);   /* v = acc op v */
            }
            memcpy(acc, v, sizeof(int) * (size_t) n);
        }
        put_stream(t->exp, t->rty, t->res_cnt, acc + (size_t) t->res_first * nf);
    }
    free(v);
    free(acc);
}

static void tc_check(tcase_t *t, int it)
{
    check_bytes(t, it, "persistent result", t->rbuf, t->exp, t->rbytes);
    if (t->blocking_ref) {
        check_bytes(t, it, "blocking reference (test or Open MPI bug)", t->ref, t->exp,
                    t->rbytes);
    }
    check_bytes(t, it, "send buffer modified", t->sbuf, t->sref, t->sbytes);
}

static void tc_before_start(tcase_t *t, int it)
{
    tc_prepare(t, it);
    memcpy(t->sref, t->sbuf, t->sbytes);
    memcpy(t->ref, t->rbuf, t->rbytes);
}

static void tc_init(tcase_t *t)
{
    int rc = tc_call(t, t->rbuf, 1);
    if (MPI_SUCCESS != rc) {
        fail_line(t->desc, -1, "init returned %d", rc);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
}

/* Run one case: init, ITERS x (new inputs, start, wait, blocking
 * reference, check), free. */
static void run_case(tcase_t *t)
{
    watchdog_arm(CASE_TIMEOUT, "%s", t->desc);
    tc_init(t);
    for (int it = 0; it < ITERS; ++it) {
        tc_before_start(t, it);
        MPI_Start(&t->req);
        MPI_Wait(&t->req, MPI_STATUS_IGNORE);
        if (t->blocking_ref) {
            tc_call(t, t->ref, 0);
        }
        tc_check(t, it);
    }
    MPI_Request_free(&t->req);
    watchdog_disarm();
    tc_free(t);
}

/* Several requests outstanding at once. */
static void run_together(tcase_t **ts, int n)
{
    MPI_Request reqs[16];
    watchdog_arm(CASE_TIMEOUT, "startall of %d requests, first %s", n, ts[0]->desc);
    for (int k = 0; k < n; ++k) {
        tc_init(ts[k]);
    }
    for (int it = 0; it < ITERS; ++it) {
        for (int k = 0; k < n; ++k) {
            tc_before_start(ts[k], it);
            reqs[k] = ts[k]->req;
        }
        MPI_Startall(n, reqs);
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < n; ++k) {
            if (ts[k]->blocking_ref) {
                tc_call(ts[k], ts[k]->ref, 0);
            }
            tc_check(ts[k], it);
        }
    }
    for (int k = 0; k < n; ++k) {
        MPI_Request_free(&ts[k]->req);
        tc_free(ts[k]);
    }
    watchdog_disarm();
}

/* ================================================================ case builders */

/* Send/receive type pairs with equal signatures per int: (s, r). */
static ty_t *const type_pairs[][2] = {
    { &TY_INT, &TY_INT }, { &TY_PAIR, &TY_VPAIR }, { &TY_VPAIR, &TY_LB }, { &TY_LB, &TY_INT },
};
#define NPAIRS 4

/* Ints per block (always even, so every type divides it). */
static int v_ints(int salt, int g, int i, int j)
{
    return 2 * ((i + 2 * j + g + salt) % 3);
}

/* MPI root argument for a rooted case with the root at group rg, rank rr. */
static int root_arg(const ictx_t *ic, int rg, int rr)
{
    if (ic->gid != rg) {
        return rr;
    }
    return ic->lrank == rr ? MPI_ROOT : MPI_PROC_NULL;
}

static blk_t blk(const ty_t *ty, int ints, int g, int i, int key)
{
    blk_t b = { ty, ints / ty->nf, 0, g, i, key };
    return b;
}

/*
 * Rooted data movement (bcast, gather(v), scatter(v)).  The root is rank rr
 * of group rg; k is the ints per block (-1: varying, for the v forms);
 * tp selects the type pair (types differ between the two sides).
 */
static tcase_t *rooted(kind_t kind, const ictx_t *ic, int rg, int rr, int k, int tp)
{
    tcase_t *t = tc_new(kind, ic);
    const ty_t *sty = type_pairs[tp % NPAIRS][0], *rty = type_pairs[tp % NPAIRS][1];
    const int og = 1 - rg, am_root = (ic->gid == rg && ic->lrank == rr);
    const int other = (ic->gid == og), vec = (K_GATHERV == kind || K_SCATTERV == kind);
    const int salt = (int) (t->id % 3);

    t->root = root_arg(ic, rg, rr);
    t->stype = sty->t;
    t->rtype = rty->t;
    /* No blocking reference where Open MPI 4.1.4 has none to offer: coll/inter's
     * MPI_Scatterv takes the root's counts (sendtype units) as counts of the
     * receive type, and MPI_Scatter is served through MPI_Scatterv here (see
     * tc_call).  Decided from the case alone, so all ranks skip the call. */
    if ((K_SCATTER == kind || K_SCATTERV == kind) && sty->nf != rty->nf) {
        t->blocking_ref = 0;
    }
    snprintf(t->desc, sizeof t->desc, "%s %s (%d,%d) root=g%d:%d ints=%d types=%s->%s",
             kind_names[kind], ic->name, ic->gsize[0], ic->gsize[1], rg, rr, k, sty->name,
             rty->name);
    switch (kind) {
    case K_BCAST:   /* root's data (key -1) to everyone of the other group */
        if (am_root) {
            t->sb[t->nsb++] = blk(sty, k, rg, rr, -1);
            t->rtype = sty->t;
            t->rcount = t->sb[0].cnt;
        } else if (other) {
            t->rb[t->nrb++] = blk(rty, k, rg, rr, -1);
            t->rcount = t->rb[0].cnt;
        }
        break;
    case K_GATHER:
    case K_GATHERV:     /* other group's rank j sends its block (key -1) to the root */
        if (am_root) {
            for (int j = 0; j < ic->rsize; ++j) {
                t->rb[t->nrb++] = blk(rty, vec ? v_ints(salt, og, j, 0) : k, og, j, -1);
                t->rcounts[j] = t->rb[j].cnt;
            }
            vec ? place_scattered(t->rb, t->nrb, 0) : place_strided(t->rb, t->nrb);
            for (int j = 0; j < ic->rsize; ++j) {
                t->rdispls[j] = (int) (t->rb[j].disp / (size_t) rty->ext);
            }
            t->rcount = t->rcounts[0];
        } else if (other) {
            t->sb[t->nsb++] = blk(sty, vec ? v_ints(salt, og, ic->lrank, 0) : k, og,
                                  ic->lrank, -1);
            t->scount = t->sb[0].cnt;
        }
        break;
    case K_SCATTER:
    case K_SCATTERV:    /* the root sends block j (key j) to remote rank j */
        if (am_root) {
            for (int j = 0; j < ic->rsize; ++j) {
                t->sb[t->nsb++] = blk(sty, vec ? v_ints(salt, og, j, 0) : k, rg, rr, j);
                t->scounts[j] = t->sb[j].cnt;
            }
            vec ? place_scattered(t->sb, t->nsb, 0) : place_strided(t->sb, t->nsb);
            for (int j = 0; j < ic->rsize; ++j) {
                t->sdispls[j] = (int) (t->sb[j].disp / (size_t) sty->ext);
            }
            t->scount = t->scounts[0];
        } else if (other) {
            t->rb[t->nrb++] = blk(rty, vec ? v_ints(salt, og, ic->lrank, 0) : k, rg, rr,
                                  ic->lrank);
            t->rcount = t->rb[0].cnt;
        }
        break;
    default:
        break;
    }
    tc_alloc(t);
    return t;
}

/*
 * Non-rooted data movement (allgather(v), alltoall(v,w)).  Group g sends
 * k_g ints per block (k_0 = k, k_1 = k + 2 unless k == 0: the two
 * directions differ); the v/w forms vary the ints per pair.
 */
static tcase_t *all_to(kind_t kind, const ictx_t *ic, int k, int tp)
{
    tcase_t *t = tc_new(kind, ic);
    const int me = ic->lrank, g = ic->gid, rg = 1 - g, salt = (int) (t->id % 3);
    const ty_t *sty = type_pairs[(tp + g) % NPAIRS][0];
    const ty_t *rty = type_pairs[(tp + rg) % NPAIRS][1];
    const int k_send = (k && g) ? k + 2 : k, k_recv = (k && rg) ? k + 2 : k;
    const int gather = (K_ALLGATHER == kind || K_ALLGATHERV == kind);
    const int vec = (K_ALLGATHERV == kind || K_ALLTOALLV == kind || K_ALLTOALLW == kind);

    t->stype = sty->t;
    t->rtype = rty->t;
    snprintf(t->desc, sizeof t->desc, "%s %s (%d,%d) ints=%d tp=%d", kind_names[kind],
             ic->name, ic->gsize[0], ic->gsize[1], k, tp);
    if (gather) {   /* my block (key -1) to everyone; block j from remote j */
        t->sb[t->nsb++] = blk(sty, vec ? v_ints(salt, g, me, 0) : k_send, g, me, -1);
        t->scount = t->sb[0].cnt;
    }
    for (int j = 0; j < ic->rsize; ++j) {
        const ty_t *s = sty, *r = rty;
        if (K_ALLTOALLW == kind) {      /* per-peer types */
            s = type_pairs[(tp + j + g) % NPAIRS][0];
            r = type_pairs[(tp + j + rg + 1) % NPAIRS][1];
        }
        if (!gather) {                  /* block j (key j) to remote rank j */
            t->sb[t->nsb++] = blk(s, vec ? v_ints(salt, g, me, j) : k_send, g, me, j);
        }
        t->rb[t->nrb++] = blk(r, vec ? v_ints(salt, rg, j, gather ? 0 : me) : k_recv, rg, j,
                              gather ? -1 : me);
        t->stypes[j] = s->t;
        t->rtypes[j] = r->t;
    }
    if (vec) {
        const size_t extra = (K_ALLTOALLW == kind) ? 4 : 0;
        place_scattered(t->rb, t->nrb, extra);
        if (!gather) {
            place_scattered(t->sb, t->nsb, extra);
        }
    } else {
        place_strided(t->rb, t->nrb);
        if (!gather) {
            place_strided(t->sb, t->nsb);
        }
    }
    for (int j = 0; j < ic->rsize; ++j) {
        t->rcounts[j] = t->rb[j].cnt;
        t->rdispls[j] = (K_ALLTOALLW == kind) ? (int) t->rb[j].disp
                                              : (int) (t->rb[j].disp / (size_t) rty->ext);
        if (!gather) {
            t->scounts[j] = t->sb[j].cnt;
            t->sdispls[j] = (K_ALLTOALLW == kind) ? (int) t->sb[j].disp
                                                  : (int) (t->sb[j].disp / (size_t) sty->ext);
        }
    }
    t->rcount = t->rcounts[0];
    if (!gather) {
        t->scount = t->scounts[0];
    }
    tc_alloc(t);
    return t;
}

static int gcd(int a, int b)
{
    return b ? gcd(b, a % b) : a;
}

/* Split `total` over n ranks, some of them getting nothing. */
static void split_counts(int total, int n, int salt, int *out)
{
    int left = total;
    for (int i = 0; i < n; ++i) {
        int c = (i + salt) % 3;
        out[i] = (i == n - 1) ? left : (c < left ? c : left);
        left -= out[i];
    }
}

/*
 * Reductions.  count: elements each rank contributes (reduce, allreduce)
 * or the total vector length (reduce_scatter; for reduce_scatter_block a
 * multiple of lcm(group sizes) is taken).
 */
static tcase_t *reduction(kind_t kind, const ictx_t *ic, redop_t opk, const ty_t *ty, int count,
                          int rg, int rr)
{
    tcase_t *t = tc_new(kind, ic);
    t->opk = opk;
    t->op = op_handle(opk);
    t->rty = ty;
    t->count = count;
    t->res_first = 0;
    t->res_cnt = count;
    /* Non-commutative ops have no blocking reference: coll/basic's
     * intercommunicator reductions in Open MPI 4.1.4 fold the remote ranks
     * in reverse order (rbuf = x_i op rbuf, i = 1, 2, ...); the local
     * canonical-order reference alone judges them. */
    t->blocking_ref = (OPK_AFFINE != opk);
    switch (kind) {
    case K_REDUCE:
        t->root = root_arg(ic, rg, rr);
        if (MPI_ROOT != t->root) {
            t->res_cnt = 0;
        }
        snprintf(t->desc, sizeof t->desc, "reduce %s (%d,%d) root=g%d:%d op=%s type=%s count=%d",
                 ic->name, ic->gsize[0], ic->gsize[1], rg, rr, opk_names[opk], ty->name, count);
        break;
    case K_ALLREDUCE:
        snprintf(t->desc, sizeof t->desc, "allreduce %s (%d,%d) op=%s type=%s count=%d",
                 ic->name, ic->gsize[0], ic->gsize[1], opk_names[opk], ty->name, count);
        break;
    case K_RS:
    case K_RSB: {
        const int a = ic->gsize[0], b = ic->gsize[1];
        if (K_RSB == kind) {
            t->count = count * (a / gcd(a, b) * b);
            t->rcount = t->count / ic->lsize;
            for (int i = 0; i < ic->lsize; ++i) {
                t->rcounts[i] = t->rcount;
            }
        } else {
            split_counts(count, ic->lsize, (int) (t->id % 3) + ic->gid, t->rcounts);
        }
        for (int i = 0; i < ic->lrank; ++i) {
            t->res_first += t->rcounts[i];
        }
        t->res_cnt = t->rcounts[ic->lrank];
        snprintf(t->desc, sizeof t->desc, "%s %s (%d,%d) op=%s type=%s total=%d",
                 kind_names[kind], ic->name, a, b, opk_names[opk], ty->name, t->count);
        break;
    }
    default:
        break;
    }
    tc_alloc(t);
    return t;
}

/* ================================================================ barrier */

static void test_barrier(const ictx_t *ic)
{
    tcase_t t = { .ic = ic };
    MPI_Request req;
    double *enter = xcalloc((size_t) wsize, sizeof(double));
    int *gids = xcalloc((size_t) wsize, sizeof(int));

    snprintf(t.desc, sizeof t.desc, "barrier %s (%d,%d)", ic->name, ic->gsize[0], ic->gsize[1]);
    watchdog_arm(CASE_TIMEOUT, "%s", t.desc);
    MPIX_Barrier_init(ic->inter, MPI_INFO_NULL, &req);
    MPI_Allgather(&ic->gid, 1, MPI_INT, gids, 1, MPI_INT, MPI_COMM_WORLD);
    for (int it = 0; it < ITERS; ++it) {
        const int late = (int) (mix64((uint64_t) it + 99) % (uint64_t) wsize);
        if (wrank == late) {
            usleep(30000);
        }
        double t_enter = now_sec();
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double t_exit = now_sec();
        MPI_Allgather(&t_enter, 1, MPI_DOUBLE, enter, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        n_checks++;
        for (int w = 0; w < wsize; ++w) {
            if (gids[w] != ic->gid && enter[w] > t_exit) {
                fail_line(t.desc, it, "left at %.6f before world rank %d (remote group) entered at %.6f",
                          t_exit, w, enter[w]);
                break;
            }
        }
    }
    MPI_Request_free(&req);
    watchdog_disarm();
    free(enter);
    free(gids);
}

/* ================================================================ driver */

static void test_intercomm(const ictx_t *ic)
{
    const int ks[] = { 0, 2, 6 };
    int tp = 0;

    test_barrier(ic);

    /* rooted data movement: root in each group, at its first and last rank */
    for (int rg = 0; rg < 2; ++rg) {
        for (int rr = 0; rr < ic->gsize[rg]; rr += (ic->gsize[rg] > 1 ? ic->gsize[rg] - 1 : 1)) {
            const kind_t kinds[] = { K_BCAST, K_GATHER, K_SCATTER };
            for (size_t c = 0; c < 3; ++c) {
                for (size_t i = 0; i < 3; ++i) {
                    run_case(rooted(kinds[c], ic, rg, rr, ks[i], tp++));
                }
            }
            run_case(rooted(K_GATHERV, ic, rg, rr, -1, tp++));
            run_case(rooted(K_GATHERV, ic, rg, rr, -1, tp++));
            run_case(rooted(K_SCATTERV, ic, rg, rr, -1, tp++));
            run_case(rooted(K_SCATTERV, ic, rg, rr, -1, tp++));
        }
    }

    /* all-to-all data movement */
    for (size_t i = 0; i < 3; ++i) {
        run_case(all_to(K_ALLGATHER, ic, ks[i], tp++));
        run_case(all_to(K_ALLTOALL, ic, ks[i], tp++));
    }
    for (int rep = 0; rep < NPAIRS; ++rep) {
        run_case(all_to(K_ALLGATHERV, ic, -1, tp++));
        run_case(all_to(K_ALLTOALLV, ic, -1, tp++));
        run_case(all_to(K_ALLTOALLW, ic, -1, tp++));
    }

    /* reductions: predefined ops on predefined types, user ops (one
     * non-commutative) on derived types of every layout */
    const struct { redop_t op; const ty_t *ty; int count; } reds[] = {
        { OPK_SUM, &TY_INT, 5 },     { OPK_SUM, &TY_INT, 0 },    { OPK_MAXLOC, &TY_2INT, 3 },
        { OPK_AFFINE, &TY_PAIR, 3 }, { OPK_AFFINE, &TY_VPAIR, 2 }, { OPK_AFFINE, &TY_LB, 4 },
        { OPK_USUM, &TY_VPAIR, 3 },  { OPK_USUM, &TY_LB, 1 },
    };
    const int nreds = (int) (sizeof reds / sizeof reds[0]);
    for (int r = 0; r < nreds; ++r) {
        for (int rg = 0; rg < 2; ++rg) {
            const int rr = (r % 2) ? ic->gsize[rg] - 1 : 0;
            run_case(reduction(K_REDUCE, ic, reds[r].op, reds[r].ty, reds[r].count, rg, rr));
        }
        run_case(reduction(K_ALLREDUCE, ic, reds[r].op, reds[r].ty, reds[r].count, 0, 0));
        run_case(reduction(K_RS, ic, reds[r].op, reds[r].ty, reds[r].count + 2, 0, 0));
        run_case(reduction(K_RS, ic, reds[r].op, reds[r].ty, reds[r].count ? 1 : 0, 0, 0));
        run_case(reduction(K_RSB, ic, reds[r].op, reds[r].ty, reds[r].count ? 1 : 0, 0, 0));
    }

    /* several requests outstanding at once, started together */
    tcase_t *ts[] = {
        reduction(K_ALLREDUCE, ic, OPK_AFFINE, &TY_VPAIR, 3, 0, 0),
        all_to(K_ALLTOALLV, ic, -1, tp++),
        rooted(K_BCAST, ic, 1, 0, 6, tp++),
        rooted(K_GATHERV, ic, 0, ic->gsize[0] - 1, -1, tp++),
        reduction(K_RS, ic, OPK_AFFINE, &TY_LB, 5, 0, 0),
        reduction(K_REDUCE, ic, OPK_SUM, &TY_INT, 4, 1, ic->gsize[1] - 1),
        all_to(K_ALLGATHER, ic, 2, tp++),
    };
    run_together(ts, (int) (sizeof ts / sizeof ts[0]));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "conf_inter", &wrank, &wsize);

    if (wsize < 2 || 2 * MAXB < wsize) {
        if (0 == wrank) {
            printf("conf_inter: 0 checks, 0 failures (needs 2..%d processes; skipped)\n",
                   2 * MAXB);
        }
        MPI_Finalize();
        return 0;
    }
    ty_create_all();
    MPI_Op_create(affine_fn, 0, &op_affine);
    MPI_Op_create(usum_fn, 1, &op_usum);

    for (int how = 0; how < 2; ++how) {
        ictx_t ic;
        if (1 == how && 2 == wsize) {
            break;      /* the same (1,1) intercommunicator again */
        }
        ictx_create(&ic, how);
        MPI_Comm_set_errhandler(ic.inter, MPI_ERRORS_RETURN);
        test_intercomm(&ic);
        MPI_Comm_free(&ic.inter);
    }

    MPI_Op_free(&op_affine);
    MPI_Op_free(&op_usum);
    ty_free_all();
    totals_t sum = totals_sum();
    if (0 == wrank) {
        printf("conf_inter: %ld checks, %ld failures\n", sum.checks, sum.failed);
    }
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
