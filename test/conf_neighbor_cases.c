/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * conf_neighbor, the cases (see conf_neighbor.c): per collective and
 * topology the blocks of both sides, the buffers and MPI arguments, the
 * persistent and blocking calls, the local reference, the checks; one
 * case at a time and all five collectives at once.
 */
#define _GNU_SOURCE
#include "conf_neighbor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 3
#define MARGIN 64           /* bytes before/after every buffer (negative lb) */

/* ================================================================ cases */
typedef enum { NB_AG, NB_AGV, NB_A2A, NB_A2AV, NB_A2AW } ncoll_t;
static const char *ncoll_name[] = { "neighbor_allgather", "neighbor_allgatherv",
                                    "neighbor_alltoall", "neighbor_alltoallv",
                                    "neighbor_alltoallw" };

typedef struct {
    ncoll_t coll;
    int slay, rlay;     /* layouts (w: rotation seeds) */
    int units;          /* UNIT-int units per edge (uniform) / max per edge (v, w) */
    int salt;
} spec_t;

/* one side of a case: block k at byte offset off[k], cnt[k] x layout l[k] */
typedef struct {
    int n;
    long *off;
    int *cnt, *l;
    size_t bytes;       /* of the buffer, margins included */
} side_t;

typedef struct {
    spec_t sp;
    topo_t *t;
    uint64_t id;
    side_t s, r;
    unsigned char *sbuf, *rbuf, *exp, *scopy;
    /* arguments of the MPI calls */
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Aint *sdb, *rdb;
    MPI_Datatype *stypes, *rtypes;
    MPI_Request req;
} ncase_t;

static int is_allgather(ncoll_t c) { return c == NB_AG || c == NB_AGV; }
static int is_uniform(ncoll_t c) { return c == NB_AG || c == NB_A2A; }

/* ints on the edge that carries block k of rank s (the same for both ends) */
static int edge_ints(const spec_t *sp, int s, int k)
{
    if (is_uniform(sp->coll) || sp->units == 0) return UNIT * sp->units;
    if (sp->coll == NB_AGV) return UNIT * ((s * 5 + sp->salt) % (sp->units + 1));
    return UNIT * ((s * 7 + k * 3 + sp->salt) % (sp->units + 1));
}

static int send_lay(const spec_t *sp, int s, int k)
{
    return sp->coll == NB_A2AW ? (s + k + sp->slay) % NLAY : sp->slay;
}

static int recv_lay(const spec_t *sp, int r, int j)
{
    return sp->coll == NB_A2AW ? (3 * r + j + sp->rlay) % NLAY : sp->rlay;
}

static int val(uint64_t id, int it, int sender, int block, int i)
{
    uint64_t h = mix64(input_seed(id, it, sender) ^ mix64(((uint64_t)block << 32) | (uint64_t)i));
    return (int)(h >> 33);
}

static void put_block(unsigned char *buf, long off, int cnt, const lay_t *L, uint64_t id, int it,
                      int sender, int block)
{
    for (int i = 0; i < cnt * L->nint; i++) {
        int v = val(id, it, sender, block, i);
        memcpy(buf + MARGIN + off + (long)(i / L->nint) * L->extent + L->off[i % L->nint], &v,
               sizeof v);
    }
}

/* Place side blocks: uniform ones back to back (or all at 0), the others
 * in reverse order with a one-element gap, the w ones at 8-byte aligned
 * byte offsets. */
static void layout_side(side_t *sd, ncoll_t coll, int shared)
{
    long pos = 0, hi = 0;
    for (int i = 0; i < sd->n; i++) {
        int k = is_uniform(coll) ? i : sd->n - 1 - i;
        long ext = lay[sd->l[k]].extent;
        if (coll == NB_A2AW) pos = (pos + 7) & ~7L;
        sd->off[k] = shared ? 0 : pos;
        long end = sd->off[k] + (long)sd->cnt[k] * ext;
        if (end > hi) hi = end;
        pos += ((long)sd->cnt[k] + (is_uniform(coll) ? 0 : 1)) * ext;
    }
    sd->bytes = (size_t)(2 * MARGIN + hi);
}

static void side_alloc(side_t *sd, int n)
{
    sd->n = n;
    sd->off = xcalloc((size_t)n, sizeof(long));
    sd->cnt = xcalloc((size_t)n, sizeof(int));
    sd->l = xcalloc((size_t)n, sizeof(int));
}

static void ncase_setup(ncase_t *c, topo_t *t, const spec_t *sp, uint64_t id)
{
    const int me = t->rank, out = t->outdeg[me], in = t->indeg[me];
    memset(c, 0, sizeof *c);
    c->sp = *sp;
    c->t = t;
    c->id = id;
    c->req = MPI_REQUEST_NULL;

    /* send side: allgather sends its single block to everybody */
    side_alloc(&c->s, is_allgather(sp->coll) ? 1 : out);
    for (int k = 0; k < c->s.n; k++) {
        c->s.l[k] = send_lay(sp, me, k);
        c->s.cnt[k] = edge_ints(sp, me, k) / lay[c->s.l[k]].nint;
    }
    layout_side(&c->s, sp->coll, 0);
    /* receive side: slot j holds what source j sends me */
    side_alloc(&c->r, in);
    for (int j = 0; j < in; j++) {
        int s = t->src[me][j], k = t->pair[j];
        c->r.l[j] = recv_lay(sp, me, j);
        /* MPI_PROC_NULL slots get a count too: nothing may land there */
        int ints = s == MPI_PROC_NULL ? UNIT * (sp->units ? sp->units : 1) : edge_ints(sp, s, k);
        if (is_uniform(sp->coll)) ints = UNIT * sp->units;
        c->r.cnt[j] = ints / lay[c->r.l[j]].nint;
    }
    layout_side(&c->r, sp->coll, 0);

    c->sbuf = xcalloc(c->s.bytes, 1);
    c->scopy = xcalloc(c->s.bytes, 1);
    c->rbuf = xcalloc(c->r.bytes, 1);
    c->exp = xcalloc(c->r.bytes, 1);

    c->scounts = xcalloc((size_t)out, sizeof(int));
    c->sdispls = xcalloc((size_t)out, sizeof(int));
    c->sdb = xcalloc((size_t)out, sizeof(MPI_Aint));
    c->stypes = xcalloc((size_t)out, sizeof(MPI_Datatype));
    for (int k = 0; k < out && !is_allgather(sp->coll); k++) {
        const lay_t *L = &lay[c->s.l[k]];
        c->scounts[k] = c->s.cnt[k];
        c->sdispls[k] = (int)(c->s.off[k] / L->extent);
        c->sdb[k] = c->s.off[k];
        c->stypes[k] = L->type;
    }
    c->rcounts = xcalloc((size_t)in, sizeof(int));
    c->rdispls = xcalloc((size_t)in, sizeof(int));
    c->rdb = xcalloc((size_t)in, sizeof(MPI_Aint));
    c->rtypes = xcalloc((size_t)in, sizeof(MPI_Datatype));
    for (int j = 0; j < in; j++) {
        const lay_t *L = &lay[c->r.l[j]];
        c->rcounts[j] = c->r.cnt[j];
        c->rdispls[j] = (int)(c->r.off[j] / L->extent);
        c->rdb[j] = c->r.off[j];
        c->rtypes[j] = L->type;
    }
}

static void ncase_free(ncase_t *c)
{
    free(c->s.off), free(c->s.cnt), free(c->s.l);
    free(c->r.off), free(c->r.cnt), free(c->r.l);
    free(c->sbuf), free(c->scopy), free(c->rbuf), free(c->exp);
    free(c->scounts), free(c->sdispls), free(c->sdb), free(c->stypes);
    free(c->rcounts), free(c->rdispls), free(c->rdb), free(c->rtypes);
}

/* uniform counts and types of the block variants */
static int scount0(const ncase_t *c)
{
    /* from the spec, not from block 0: Open MPI checks scount x size ==
     * rcount x size for neighbor_alltoall even when the rank has no
     * neighbours; allgatherv's sends differ per rank */
    return c->sp.coll == NB_AGV ? c->s.cnt[0] : UNIT * c->sp.units / lay[c->sp.slay].nint;
}
static int rcount0(const ncase_t *c) { return UNIT * c->sp.units / lay[c->sp.rlay].nint; }

/* persistent (blocking = 0) or blocking (1) call */
static int ncase_call(ncase_t *c, int blocking)
{
    void *sb = c->sbuf + MARGIN, *rb = c->rbuf + MARGIN;
    MPI_Datatype st = lay[c->sp.slay].type, rt = lay[c->sp.rlay].type;
    MPI_Comm comm = c->t->comm;
    MPI_Request *rq = &c->req;
    switch (c->sp.coll) {
    case NB_AG:
        return blocking ? MPI_Neighbor_allgather(sb, scount0(c), st, rb, rcount0(c), rt, comm)
                        : MPIX_Neighbor_allgather_init(sb, scount0(c), st, rb, rcount0(c), rt,
                                                       comm, MPI_INFO_NULL, rq);
    case NB_AGV:
        return blocking ? MPI_Neighbor_allgatherv(sb, scount0(c), st, rb, c->rcounts, c->rdispls,
                                                  rt, comm)
                        : MPIX_Neighbor_allgatherv_init(sb, scount0(c), st, rb, c->rcounts,
                                                        c->rdispls, rt, comm, MPI_INFO_NULL, rq);
    case NB_A2A:
        return blocking ? MPI_Neighbor_alltoall(sb, scount0(c), st, rb, rcount0(c), rt, comm)
                        : MPIX_Neighbor_alltoall_init(sb, scount0(c), st, rb, rcount0(c), rt,
                                                      comm, MPI_INFO_NULL, rq);
    case NB_A2AV:
        return blocking ? MPI_Neighbor_alltoallv(sb, c->scounts, c->sdispls, st, rb, c->rcounts,
                                                 c->rdispls, rt, comm)
                        : MPIX_Neighbor_alltoallv_init(sb, c->scounts, c->sdispls, st, rb,
                                                       c->rcounts, c->rdispls, rt, comm,
                                                       MPI_INFO_NULL, rq);
    case NB_A2AW:
        return blocking ? MPI_Neighbor_alltoallw(sb, c->scounts, c->sdb, c->stypes, rb, c->rcounts,
                                                 c->rdb, c->rtypes, comm)
                        : MPIX_Neighbor_alltoallw_init(sb, c->scounts, c->sdb, c->stypes, rb,
                                                       c->rcounts, c->rdb, c->rtypes, comm,
                                                       MPI_INFO_NULL, rq);
    }
    return MPI_ERR_ARG;
}

/* new inputs, poisoned receive buffer, expected result */
static void ncase_prepare(ncase_t *c, int it)
{
    const topo_t *t = c->t;
    const int me = t->rank;
    memset(c->sbuf, POISON_SEND, c->s.bytes);
    for (int k = 0; k < c->s.n; k++)
        put_block(c->sbuf, c->s.off[k], c->s.cnt[k], &lay[c->s.l[k]], c->id, it, me, k);
    memcpy(c->scopy, c->sbuf, c->s.bytes);
    memset(c->rbuf, POISON_RECV, c->r.bytes);
    memset(c->exp, POISON_RECV, c->r.bytes);
    for (int j = 0; j < c->r.n; j++) {
        if (t->pair[j] < 0) continue;   /* MPI_PROC_NULL: stays poisoned */
        put_block(c->exp, c->r.off[j], c->r.cnt[j], &lay[c->r.l[j]], c->id, it, t->src[me][j],
                  is_allgather(c->sp.coll) ? 0 : t->pair[j]);
    }
}

/* 0 when rbuf == exp and the send buffer is intact; otherwise msg says where */
static int ncase_check(const ncase_t *c, char *msg, size_t len)
{
    size_t b = first_diff(c->sbuf, c->scopy, c->s.bytes);
    if (b < c->s.bytes) {
        snprintf(msg, len, "send buffer modified at byte %ld", (long)b - MARGIN);
        return 1;
    }
    b = first_diff(c->rbuf, c->exp, c->r.bytes);
    if (b == c->r.bytes) return 0;
    long pos = (long)b - MARGIN;
    int slot = -1;
    for (int j = 0; j < c->r.n; j++) {
        const lay_t *L = &lay[c->r.l[j]];
        if (pos >= c->r.off[j] + L->off[0] - 8 && pos < c->r.off[j] + (long)c->r.cnt[j] * L->extent)
            slot = j;
    }
    snprintf(msg, len, "receive buffer byte %ld: got 0x%02x expected 0x%02x (slot %d of %d, source %d, "
             "sender block %d, %d x %s)%s", pos, c->rbuf[b], c->exp[b], slot, c->r.n,
             slot >= 0 ? c->t->src[c->t->rank][slot] : -2, slot >= 0 ? c->t->pair[slot] : -2,
             slot >= 0 ? c->r.cnt[slot] : 0, slot >= 0 ? lay[c->r.l[slot]].name : "-",
             c->exp[b] == POISON_RECV ? " [must stay untouched]" : "");
    return 1;
}

uint64_t next_id = 1;

static void describe(const ncase_t *c, char *s, size_t n)
{
    const spec_t *sp = &c->sp;
    if (sp->coll == NB_A2AW)
        snprintf(s, n, "%s comm=%s units=%d types=rotating(%d,%d) salt=%d", ncoll_name[sp->coll],
                 c->t->name, sp->units, sp->slay, sp->rlay, sp->salt);
    else
        snprintf(s, n, "%s comm=%s units=%d %s->%s salt=%d", ncoll_name[sp->coll], c->t->name,
                 sp->units, lay[sp->slay].name, lay[sp->rlay].name, sp->salt);
}

static void run_case(topo_t *t, const spec_t *sp)
{
    ncase_t c;
    char msg[600], d[300];
    int rc;
    ncase_setup(&c, t, sp, next_id++);
    describe(&c, d, sizeof d);
    case_begin("%s np=%d", d, t->size);

    /* junk at init: an implementation must not read the data before start */
    memset(c.sbuf, JUNK_SEND, c.s.bytes);
    rc = ncase_call(&c, 0);
    check(rc == MPI_SUCCESS, -1, "init returned %s", err_class_str(rc));
    if (!all_ok(t->comm, rc == MPI_SUCCESS)) {
        if (rc == MPI_SUCCESS && c.req != MPI_REQUEST_NULL) MPI_Request_free(&c.req);
        ncase_free(&c);
        return;
    }
    for (int it = 0; it < ITERS; it++) {
        int ok;
        ncase_prepare(&c, it);
        rc = start_req(&c.req, it);
        check(rc == MPI_SUCCESS, it, "start returned %s", err_class_str(rc));
        if ((ok = rc == MPI_SUCCESS)) {
            rc = complete_req(&c.req, it);
            check(rc == MPI_SUCCESS, it, "wait/test returned %s", err_class_str(rc));
            ok = rc == MPI_SUCCESS && c.req != MPI_REQUEST_NULL;
            check(c.req != MPI_REQUEST_NULL, it, "persistent request became MPI_REQUEST_NULL");
        }
        if (ok) {
            int bad = ncase_check(&c, msg, sizeof msg);
            check(!bad, it, "%s", msg);
        }
        /* stop together: a rank that leaves the loop alone hangs the others */
        if (!all_ok(t->comm, ok)) break;
    }
    if (c.req != MPI_REQUEST_NULL) {
        rc = MPI_Request_free(&c.req);
        check(rc == MPI_SUCCESS && c.req == MPI_REQUEST_NULL, -1, "MPI_Request_free: %s",
              err_class_str(rc));
    }
    /* the local reference against the blocking collective (coll/basic) */
    ncase_prepare(&c, ITERS - 1);
    rc = ncase_call(&c, 1);
    check(rc == MPI_SUCCESS, ITERS - 1, "REFERENCE CROSS-CHECK: blocking call returned %s",
          err_class_str(rc));
    if (rc == MPI_SUCCESS) {
        int bad = ncase_check(&c, msg, sizeof msg);
        check(!bad, ITERS - 1, "REFERENCE CROSS-CHECK (test bug or basic bug): blocking MPI_%s "
              "disagrees with the local reference: %s", ncoll_name[sp->coll], msg);
    }
    ncase_free(&c);
}

/* All five collectives initialised on one communicator, run together. */
static void multi_case(topo_t *t)
{
    const spec_t specs[] = {
        { NB_AG, L_M2H, L_INT, 1, 0 },   { NB_AGV, L_INT, L_C3I, 2, 1 },
        { NB_A2A, L_NEG, L_M2V, 2, 0 },  { NB_A2AV, L_M2C, L_INT, 3, 2 },
        { NB_A2AW, 0, 3, 2, 1 },         { NB_A2A, L_INT, L_INT, 1, 0 },
    };
    enum { N = sizeof specs / sizeof specs[0] };
    ncase_t c[N];
    MPI_Request rq[N];
    char msg[600];
    int rc, ok = 1;
    case_begin("all five at once (MPI_Startall/MPI_Waitall) comm=%s np=%d", t->name, t->size);
    for (int i = 0; i < N; i++) {
        ncase_setup(&c[i], t, &specs[i], next_id++);
        rc = ncase_call(&c[i], 0);
        check(rc == MPI_SUCCESS, -1, "init %d (%s) returned %s", i, ncoll_name[specs[i].coll],
              err_class_str(rc));
        ok &= rc == MPI_SUCCESS;
        rq[i] = c[i].req;
    }
    if (all_ok(t->comm, ok)) {
        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < N; i++) ncase_prepare(&c[i], it);
            rc = MPI_Startall(N, rq);
            check(rc == MPI_SUCCESS, it, "MPI_Startall returned %s", err_class_str(rc));
            if ((ok = rc == MPI_SUCCESS)) {
                rc = MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
                check(rc == MPI_SUCCESS, it, "MPI_Waitall returned %s", err_class_str(rc));
                ok = rc == MPI_SUCCESS;
            }
            for (int i = 0; i < N && ok; i++) {
                int bad = ncase_check(&c[i], msg, sizeof msg);
                check(!bad, it, "request %d (%s): %s", i, ncoll_name[specs[i].coll], msg);
            }
            if (!all_ok(t->comm, ok)) break;
        }
    }
    for (int i = 0; i < N; i++) {
        if (rq[i] != MPI_REQUEST_NULL) MPI_Request_free(&rq[i]);
        ncase_free(&c[i]);
    }
}

void sweep(topo_t *t)
{
    static const spec_t specs[] = {
        /* uniform: same and different layouts, zero everywhere, rendezvous */
        { NB_AG, L_INT, L_INT, 1, 0 },   { NB_AG, L_M2H, L_C3I, 2, 0 },
        { NB_AG, L_NEG, L_M2V, 1, 0 },   { NB_AG, L_INT, L_INT, 0, 0 },
        { NB_AG, L_INT, L_M2C, 400, 0 },
        { NB_AGV, L_C3I, L_INT, 2, 0 },  { NB_AGV, L_M2V, L_NEG, 3, 1 },
        { NB_AGV, L_INT, L_INT, 0, 0 },
        { NB_A2A, L_INT, L_INT, 1, 0 },  { NB_A2A, L_M2C, L_M2H, 2, 0 },
        { NB_A2A, L_NEG, L_C3I, 1, 0 },  { NB_A2A, L_INT, L_INT, 0, 0 },
        { NB_A2A, L_M2V, L_INT, 300, 0 },
        { NB_A2AV, L_INT, L_M2V, 2, 0 }, { NB_A2AV, L_M2H, L_NEG, 3, 1 },
        { NB_A2AV, L_C3I, L_C3I, 0, 0 }, { NB_A2AV, L_INT, L_INT, 250, 2 },
        { NB_A2AW, 0, 0, 2, 0 },         { NB_A2AW, 1, 4, 3, 1 },
        { NB_A2AW, 2, 5, 0, 0 },         { NB_A2AW, 3, 1, 200, 2 },
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) run_case(t, &specs[i]);
    multi_case(t);
}
