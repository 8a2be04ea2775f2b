/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * conf_alltoall, one request of a case (see conf_alltoall.c): the type
 * families and the layouts each side picks, the blocks and their
 * placement, the buffers and MPI arguments, the persistent and blocking
 * calls, the inputs and expectation of each start, the checks, and
 * run_case (one case, optionally with its datatypes freed after init).
 */
#define _GNU_SOURCE
#include "conf_alltoall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ families */
static const dtype_t *fam_types(fam_t f, int i, int *n)
{
    static const dtype_t *ints[4], *dbls[2], *strs[1];
    ints[0] = &T_MAT2C; ints[1] = &T_MAT2V; ints[2] = &T_MAT2H; ints[3] = &T_INT;
    dbls[0] = &T_VECD; dbls[1] = &T_DOUBLE;
    strs[0] = &T_STRUCTH;
    switch (f) {
    case F_INT: *n = 4; return ints[i % 4];
    case F_DBL: *n = 2; return dbls[i % 2];
    default: *n = 1; return strs[0];
    }
}

/* primitives per "unit" of a family (the largest type's element) */
static int fam_unit(fam_t f)
{
    return f == F_INT ? 4 : f == F_DBL ? 2 : 3;
}

/* ------------------------------------------------------------------ cases */
const char *coll_str[] = { "alltoall", "alltoallv", "alltoallw" };

static int zero_rank(int size)
{
    return size > 1 ? 1 : 0;
}

static int units(const case_t *c, int size, int s, int d)
{
    int z = zero_rank(size);
    switch (c->units) {
    case U_CONST: return c->param;
    case U_VARIED: return (s * 7 + d * 3 + c->param) % 4;
    case U_SYMM: return (s + d + c->param) % 3;
    case U_ZERO_RANK: return (s == z || d == z) ? 0 : 1 + (s + d + c->param) % 3;
    case U_ZERO_SEND: return (s == z) ? 0 : 1 + (s * 2 + d + c->param) % 3;
    }
    return 0;
}

static fam_t pair_fam(const case_t *c, int s, int d)
{
    return c->fam == F_MIX ? (fam_t)((s + d) % 3) : c->fam;
}

/* the layout `rank` uses for its block to/from `peer` on one side */
static const dtype_t *pick(const case_t *c, int send_side, int rank, int peer, fam_t f)
{
    int n, base = send_side ? c->s_base : c->r_base;
    int rmul = send_side ? c->s_rmul : c->r_rmul, pmul = send_side ? c->s_pmul : c->r_pmul;
    if (c->coll != A2AW) pmul = 0;
    fam_types(f, 0, &n);
    return fam_types(f, base + rmul * rank + pmul * peer, &n);
}

/* ------------------------------------------------------------------ one request */
static uint64_t next_id = 1;

static int prims_of(const case_t *c, int size, int s, int d)
{
    return units(c, size, s, d) * fam_unit(pair_fam(c, s, d));
}

/* Place the blocks of one side: alltoall by MPI's rule; v/w in reversed
 * peer order with a gap after every block. */
static size_t layout_side(const case_t *c, int size, int rank, int send_side, blk_t *b)
{
    size_t end = 1, cur = 0;
    for (int i = 0; i < size; i++) {
        int s = send_side ? rank : i, d = send_side ? i : rank;
        fam_t f = pair_fam(c, s, d);
        b[i].dt = pick(c, send_side, rank, i, f);
        b[i].count = prims_of(c, size, s, d) / b[i].dt->nprim;
    }
    for (int k = 0; k < size; k++) {
        int i = (c->coll == A2A) ? k : size - 1 - k;
        size_t ext = b[i].dt->extent;
        if (c->coll == A2A) {
            b[i].disp = (size_t)i * (size_t)b[i].count * ext;
        } else if (c->coll == A2AV) {
            b[i].disp = cur;            /* a multiple of the extent */
            cur += ((size_t)b[i].count + 1) * ext;
        } else {
            b[i].disp = cur;
            cur += (size_t)b[i].count * ext + 8;
            cur = (cur + 7) & ~(size_t)7;
        }
        size_t e = b[i].disp + (size_t)b[i].count * ext;
        if (e > end) end = e;
    }
    return end;
}

static void mpi_args(const blk_t *b, int size, int **counts, int **displs, MPI_Datatype **types)
{
    *counts = xcalloc(size, sizeof(int));
    *displs = xcalloc(size, sizeof(int));
    *types = xcalloc(size, sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        (*counts)[i] = b[i].count;
        (*displs)[i] = (int)b[i].disp;
        (*types)[i] = b[i].dt->type;
    }
}

void a2a_setup(a2a_t *x, const case_t *c, MPI_Comm comm, const char *comm_name)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    x->comm = comm;
    x->id = next_id++;
    x->req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->size);
    snprintf(x->desc, sizeof x->desc, "%s case=%s comm=%s np=%d in-place=%d", coll_str[c->coll],
             c->name, comm_name, x->size, c->inplace);
    x->sblk = xcalloc(x->size, sizeof(blk_t));
    x->rblk = xcalloc(x->size, sizeof(blk_t));
    x->rbytes = layout_side(c, x->size, x->rank, 0, x->rblk);
    mpi_args(x->rblk, x->size, &x->rcounts, &x->rdispls, &x->rtypes);
    if (!c->inplace) {
        x->sbytes = layout_side(c, x->size, x->rank, 1, x->sblk);
        mpi_args(x->sblk, x->size, &x->scounts, &x->sdispls, &x->stypes);
        x->sbuf = xcalloc(x->sbytes, 1);
        x->scopy = xcalloc(x->sbytes, 1);
    }
    if (c->coll == A2AV) {      /* element displacements */
        for (int i = 0; i < x->size; i++) {
            x->rdispls[i] = (int)(x->rblk[i].disp / x->rblk[i].dt->extent);
            if (!c->inplace) x->sdispls[i] = (int)(x->sblk[i].disp / x->sblk[i].dt->extent);
        }
    }
    x->rbuf = xcalloc(x->rbytes, 1);
    x->exp = xcalloc(x->rbytes, 1);
    x->ref = xcalloc(x->rbytes, 1);
    x->init_rbuf = xcalloc(x->rbytes, 1);
}

void a2a_release(a2a_t *x)
{
    if (x->req != MPI_REQUEST_NULL) {
        int rc = MPI_Request_free(&x->req);
        check(rc == MPI_SUCCESS, x->desc, -1, "MPI_Request_free: %s", err_class_str(rc));
    }
    free(x->sblk); free(x->rblk);
    free(x->scounts); free(x->sdispls); free(x->stypes);
    free(x->rcounts); free(x->rdispls); free(x->rtypes);
    free(x->sbuf); free(x->scopy); free(x->rbuf); free(x->exp); free(x->ref); free(x->init_rbuf);
}

static const void *sendbuf_arg(const a2a_t *x)
{
    return x->c->inplace ? MPI_IN_PLACE : (const void *)x->sbuf;
}

static int a2a_init(a2a_t *x)
{
    /* junk at init: data must be read when the request runs */
    if (x->sbuf) memset(x->sbuf, JUNK_SEND, x->sbytes);
    memset(x->rbuf, JUNK_RECV, x->rbytes);
    const void *sb = sendbuf_arg(x);
    switch (x->c->coll) {
    case A2A:
        return MPIX_Alltoall_init(sb, x->c->inplace ? 0 : x->scounts[0],
                                  x->c->inplace ? MPI_DATATYPE_NULL : x->stypes[0], x->rbuf,
                                  x->rcounts[0], x->rtypes[0], x->comm, MPI_INFO_NULL, &x->req);
    case A2AV:
        return MPIX_Alltoallv_init(sb, x->scounts, x->sdispls,
                                   x->c->inplace ? MPI_DATATYPE_NULL : x->stypes[0], x->rbuf,
                                   x->rcounts, x->rdispls, x->rtypes[0], x->comm,
                                   MPI_INFO_NULL, &x->req);
    case A2AW:
        return MPIX_Alltoallw_init(sb, x->scounts, x->sdispls, x->stypes, x->rbuf, x->rcounts,
                                   x->rdispls, x->rtypes, x->comm, MPI_INFO_NULL, &x->req);
    }
    return MPI_ERR_ARG;
}

static int a2a_blocking(a2a_t *x, void *rbuf)
{
    const void *sb = sendbuf_arg(x);
    switch (x->c->coll) {
    case A2A:
        return MPI_Alltoall(sb, x->c->inplace ? 0 : x->scounts[0],
                            x->c->inplace ? MPI_DATATYPE_NULL : x->stypes[0], rbuf,
                            x->rcounts[0], x->rtypes[0], x->comm);
    case A2AV:
        return MPI_Alltoallv(sb, x->scounts, x->sdispls,
                             x->c->inplace ? MPI_DATATYPE_NULL : x->stypes[0], rbuf,
                             x->rcounts, x->rdispls, x->rtypes[0], x->comm);
    case A2AW:
        return MPI_Alltoallw(sb, x->scounts, x->sdispls, x->stypes, rbuf, x->rcounts,
                             x->rdispls, x->rtypes, x->comm);
    }
    return MPI_ERR_ARG;
}

/* Write the primitive values of block s -> d into `b` (holes untouched). */
static void write_block(unsigned char *base, const blk_t *b, uint64_t id, int it, int s, int d)
{
    const dtype_t *dt = b->dt;
    uint64_t seed = mix64(input_seed(id, it, s) ^ ((uint64_t)(d + 1) * 0xd6e8feb86659fd93ULL));
    for (int e = 0; e < b->count; e++) {
        for (int f = 0; f < dt->nprim; f++) {
            uint64_t v = mix64(seed + (uint64_t)(e * dt->nprim + f));
            unsigned char *p = base + b->disp + (size_t)e * dt->extent + dt->off[f];
            int iv = (int)(v & 0x3fffffff);
            double dv = (double)(v & 0xffffff) + 0.25;
            char cv = (char)(v & 0x7f);
            switch (dt->kind[f]) {
            case PR_INT: memcpy(p, &iv, sizeof iv); break;
            case PR_DOUBLE: memcpy(p, &dv, sizeof dv); break;
            default: memcpy(p, &cv, 1); break;
            }
        }
    }
}

/* New inputs for iteration `it`; poisoned receive side; expectation. */
void a2a_prepare(a2a_t *x, int it)
{
    memset(x->rbuf, POISON_RECV, x->rbytes);
    memset(x->exp, POISON_RECV, x->rbytes);
    for (int q = 0; q < x->size; q++) {
        if (x->c->inplace) write_block(x->rbuf, &x->rblk[q], x->id, it, x->rank, q);
        write_block(x->exp, &x->rblk[q], x->id, it, q, x->rank);
    }
    memcpy(x->init_rbuf, x->rbuf, x->rbytes);
    if (!x->c->inplace) {
        memset(x->sbuf, POISON_SEND, x->sbytes);
        for (int q = 0; q < x->size; q++) write_block(x->sbuf, &x->sblk[q], x->id, it, x->rank, q);
        memcpy(x->scopy, x->sbuf, x->sbytes);
    }
}

static void describe_diff(const a2a_t *x, const unsigned char *got, const unsigned char *want,
                          char *msg, size_t len)
{
    size_t b = first_diff(got, want, x->rbytes);
    int blk = -1;
    for (int q = 0; q < x->size; q++) {
        size_t lo = x->rblk[q].disp, hi = lo + (size_t)x->rblk[q].count * x->rblk[q].dt->extent;
        if (b >= lo && b < hi) blk = q;
    }
    snprintf(msg, len, "first difference at byte %zu of %zu (block from peer %d): got 0x%02x "
             "expected 0x%02x", b, x->rbytes, blk, got[b], want[b]);
}

/* Check iteration `it`: persistent result vs expectation, send buffer
 * unchanged, and the blocking collective vs expectation. */
void a2a_check(a2a_t *x, int it)
{
    char msg[300];
    int ok = memcmp(x->rbuf, x->exp, x->rbytes) == 0;
    if (!ok) describe_diff(x, x->rbuf, x->exp, msg, sizeof msg);
    check(ok, x->desc, it, "persistent result: %s", msg);
    if (!x->c->inplace) {
        check(memcmp(x->sbuf, x->scopy, x->sbytes) == 0, x->desc, it, "send buffer modified");
    }
    memcpy(x->ref, x->init_rbuf, x->rbytes);
    int rc = a2a_blocking(x, x->ref);
    check(rc == MPI_SUCCESS, x->desc, it, "blocking reference returned %s", err_class_str(rc));
    ok = memcmp(x->ref, x->exp, x->rbytes) == 0;
    if (!ok) describe_diff(x, x->ref, x->exp, msg, sizeof msg);
    check(ok, x->desc, it, "BLOCKING reference disagrees with the local expectation: %s", msg);
}

int a2a_init_checked(a2a_t *x)
{
    int rc = a2a_init(x);
    check(rc == MPI_SUCCESS, x->desc, -1, "init returned %s", err_class_str(rc));
    if (!all_ok(x->comm, rc == MPI_SUCCESS)) return 0;
    check(x->req != MPI_REQUEST_NULL, x->desc, -1, "init returned MPI_REQUEST_NULL");
    return x->req != MPI_REQUEST_NULL;
}

/* Replace the derived types of one side by new handles with the same
 * layouts (to be freed right after init). */
static MPI_Datatype *clone_types(MPI_Datatype *types, const blk_t *b, int n)
{
    MPI_Datatype *orig = types;
    if (types == NULL) return NULL;
    orig = xcalloc(n, sizeof(MPI_Datatype));
    memcpy(orig, types, n * sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++) {
        dtype_t d;
        if (!b[i].dt->derived) continue;
        if (dtype_clone(&d, b[i].dt) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        types[i] = d.type;
    }
    return orig;
}

/* Free the clones and put the original handles back. */
static void unclone_types(MPI_Datatype *types, MPI_Datatype *orig, int n)
{
    if (types == NULL) return;
    for (int i = 0; i < n; i++)
        if (types[i] != orig[i]) MPI_Type_free(&types[i]);
    memcpy(types, orig, n * sizeof(MPI_Datatype));
    free(orig);
}

/* freed_types: the request is initialised with datatype handles that are
 * freed right after init (MPI lets the user do that). */
void run_case(const case_t *c, MPI_Comm comm, const char *comm_name, int freed_types)
{
    a2a_t x;
    a2a_setup(&x, c, comm, comm_name);
    if (freed_types)
        strncat(x.desc, " types-freed-after-init", sizeof x.desc - strlen(x.desc) - 1);
    if (!selected(x.desc)) {
        a2a_release(&x);
        return;
    }
    watchdog_arm(CASE_TIMEOUT, "%s", x.desc);
    MPI_Datatype *sorig = NULL, *rorig = NULL;
    if (freed_types) {
        sorig = clone_types(x.stypes, x.sblk, x.size);
        rorig = clone_types(x.rtypes, x.rblk, x.size);
    }
    int inited = a2a_init_checked(&x);
    if (freed_types) {
        unclone_types(x.stypes, sorig, x.size);
        unclone_types(x.rtypes, rorig, x.size);
    }
    if (inited) {
        for (int it = 0; it < ITERS; it++) {
            a2a_prepare(&x, it);
            int rc = start_complete_req(&x.req, it);
            check(rc == MPI_SUCCESS, x.desc, it, "start/complete returned %s", err_class_str(rc));
            if (rc != MPI_SUCCESS) break;
            a2a_check(&x, it);
        }
    }
    a2a_release(&x);
    watchdog_disarm();
}
