/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * random_colls.c: the operations of random_ops (see random_ops.h).
 *
 * Data: the block rank r sends to rank j in start `it` of op `id` is
 * fill_input(OP_NONE) of seed bseed(id, it, r, j) (j = -1: the same block
 * for everybody: bcast, gather, allgather); the input of a reduction of
 * rank r is fill_input(opk) of input_seed(id, it, r), so fold_reference
 * gives every reduction's result in the canonical order.  Receive buffers
 * are POISON_RECV before each start: gaps between blocks and holes of the
 * types must keep it; send buffers must come back unchanged.
 */
#include "random_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dtype_t T_INDEXED;

#define RGUARD 64               /* poisoned bytes behind every buffer */

static int make_indexed(MPI_Datatype *t)
{
    int bl[3] = { 2, 1, 1 }, disp[3] = { 0, 3, 5 };
    int rc = MPI_Type_indexed(3, bl, disp, MPI_INT, t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(t);
    return rc;
}

int rnd_types_create(void)
{
    int rc = types_create();
    if (rc == MPI_SUCCESS) rc = ops_create();
    T_INDEXED.name = "indexed";
    T_INDEXED.extent = 6 * sizeof(int);
    T_INDEXED.nprim = 4;
    size_t off[4] = { 0, 4, 12, 20 };
    for (int i = 0; i < 4; i++) {
        T_INDEXED.off[i] = off[i];
        T_INDEXED.kind[i] = PR_INT;
    }
    T_INDEXED.derived = 1;
    if (rc == MPI_SUCCESS) rc = make_indexed(&T_INDEXED.type);
    return rc;
}

void rnd_types_free(void)
{
    MPI_Type_free(&T_INDEXED.type);
    ops_free();
    types_free();
}

/* A new handle with dt's layout (for the types freed right after a call). */
static MPI_Datatype type_clone(const dtype_t *dt)
{
    dtype_t c;
    if (!dt->derived) return dt->type;
    if (!strcmp(dt->name, "indexed")) {
        abort_unless(make_indexed(&c.type) == MPI_SUCCESS, "indexed type");
        return c.type;
    }
    abort_unless(dtype_clone(&c, dt) == MPI_SUCCESS, "type clone");
    return c.type;
}

static const char *coll_names[RC_N] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan"
};
const char *rop_coll_name(int coll) { return coll_names[coll]; }
const char *rop_kind_name(int kind) { return kind == K_PERS ? "persistent" : kind == K_NBC ? "nonblocking" : "partitioned"; }

static int is_reduction(int c)
{
    return c == RC_REDUCE || c == RC_ALLREDUCE || c == RC_REDUCE_SCATTER || c == RC_REDUCE_SCATTER_BLOCK ||
           c == RC_SCAN || c == RC_EXSCAN;
}

/* data types (any collective) and (op, type) pairs (reductions) */
static dtype_t *const data_types[] = { &T_INT, &T_DOUBLE, &T_CHAR, &T_BYTE, &T_LONG, &T_FLOAT, &T_DINT,
                                       &T_CONTIG3I, &T_VECD, &T_STRUCTH, &T_MAT2H, &T_MAT2V, &T_INDEXED };
#define NDATA_TYPES ((int)(sizeof data_types / sizeof data_types[0]))
static const struct { opk_t op; dtype_t *dt; } red_combos[] = {
    { OP_SUM, &T_INT }, { OP_SUM, &T_DOUBLE }, { OP_SUM, &T_LONG }, { OP_SUM, &T_FLOAT },
    { OP_MAX, &T_INT }, { OP_MAX, &T_DOUBLE }, { OP_MIN, &T_INT }, { OP_MIN, &T_FLOAT },
    { OP_PROD, &T_INT }, { OP_PROD, &T_DOUBLE }, { OP_BAND, &T_INT }, { OP_BOR, &T_LONG },
    { OP_BXOR, &T_INT }, { OP_MINLOC, &T_DINT }, { OP_MAXLOC, &T_DINT }, { OP_U_AFFINE, &T_INT },
    { OP_U_MATMUL, &T_MAT2C }, { OP_U_MATMUL, &T_MAT2H }, { OP_U_MATMUL, &T_MAT2V }, { OP_U_DSUM, &T_VECD },
};
#define NRED ((int)(sizeof red_combos / sizeof red_combos[0]))

static int pick_count(uint64_t *g)
{
    int r = rnd_int(g, 100);
    if (r < 8) return 0;
    if (r < 55) return 1 + rnd_int(g, 8);
    if (r < 88) return 9 + rnd_int(g, 192);
    if (r < 97) return 201 + rnd_int(g, 1800);
    return 2001 + rnd_int(g, 7000);
}

static uint64_t h3(const rop_t *o, int a, int b)
{
    return mix64(o->id ^ mix64((uint64_t)(a + 1) * 1315423911ULL + (uint64_t)(b + 3) * 2654435761ULL));
}

/* seed of the block r sends to j (j = -1: to everybody) */
static uint64_t bseed(const rop_t *o, int r, int j)
{
    return input_seed(o->id ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(j + 2)), o->it, r);
}

/* per-rank count (v collectives, reduce_scatter): 0..count */
static int vcount(const rop_t *o, int r) { return (int)(h3(o, r, 1000) % (uint64_t)(o->count + 1)); }
/* per-pair count (alltoallv/w); symmetric in place */
static int pcount(const rop_t *o, int r, int j)
{
    if (o->inplace && r > j) { int t = r; r = j; j = t; }
    return (int)(h3(o, r, j) % (uint64_t)(o->count + 1));
}
static const dtype_t *ptype(const rop_t *o, int r, int j)
{
    if (o->inplace && r > j) { int t = r; r = j; j = t; }
    return data_types[h3(o, j, r + 50) % NDATA_TYPES];
}

void rop_draw(rop_t *o, uint64_t seed, long idx, MPI_Comm comm, const char *comm_name)
{
    uint64_t g = mix64(seed ^ mix64((uint64_t)idx + 1));
    memset(o, 0, sizeof *o);
    o->idx = idx;
    o->id = mix64(g + 17);
    o->comm = comm;
    o->comm_name = comm_name;
    MPI_Comm_rank(comm, &o->rank);
    MPI_Comm_size(comm, &o->size);
    int k = rnd_int(&g, 100);
    o->kind = k < 55 ? K_PERS : k < 82 ? K_NBC : K_PART;
    o->coll = rnd_int(&g, RC_N);
    o->count = pick_count(&g);
    o->root = rnd_int(&g, o->size);
    o->dtfree = rnd_int(&g, 3) == 0;
    o->inplace = rnd_int(&g, 4) == 0;
    o->life = 1 + rnd_int(&g, 6);
    o->opk = OP_NONE;
    if (o->kind == K_PART) {
        o->coll = -1;
        o->dt = data_types[rnd_int(&g, NDATA_TYPES)];
        o->ps = 1 + rnd_int(&g, 8);
        o->pr = 1 + rnd_int(&g, 8);
        int shift = o->size > 1 ? 1 + rnd_int(&g, o->size - 1) : 0;
        o->dst = (o->rank + shift) % o->size;
        o->src = (o->rank + o->size - shift) % o->size;
        o->tag = rnd_int(&g, 3);
        o->n = (size_t)o->ps * (size_t)o->pr * (size_t)(o->count % 64);
        o->inplace = 0;
        o->nreq = 2;
        return;
    }
    o->nreq = 1;
    if (is_reduction(o->coll)) {
        int c = rnd_int(&g, NRED);
        o->opk = red_combos[c].op;
        o->dt = red_combos[c].dt;
    } else {
        o->dt = data_types[rnd_int(&g, NDATA_TYPES)];
    }
    switch (o->coll) {            /* no MPI_IN_PLACE for these */
    case RC_BARRIER: case RC_BCAST: case RC_REDUCE_SCATTER:
        o->inplace = 0;
        break;
    case RC_ALLTOALLW:
        o->dtfree = 0;
        break;
    }
}

void rop_describe(const rop_t *o, char *s, size_t n)
{
    if (o->kind == K_PART) {
        snprintf(s, n, "op %ld partitioned %s %d->%d partitions, %zu elements of %s, to %d from %d, tag %d%s, start %d",
                 o->idx, o->comm_name, o->ps, o->pr, o->n, o->dt->name, o->dst, o->src, o->tag,
                 o->dtfree ? ", type freed after init" : "", o->it);
        return;
    }
    snprintf(s, n, "op %ld %s %s on %s: count %d of %s%s%s, root %d%s%s, start %d", o->idx, rop_kind_name(o->kind),
             coll_names[o->coll], o->comm_name, o->count, o->dt->name, o->opk != OP_NONE ? ", op " : "",
             o->opk != OP_NONE ? op_name(o->opk) : "", o->root, o->inplace ? ", in place" : "",
             o->dtfree ? ", type/op freed after the call" : "", o->it);
}

/* Place n blocks of len[i] units in a random order with gaps of 0..2
 * units; disp[i] in units (times `mult` when align > 1: bytes aligned to
 * align).  Returns the extent of the whole layout. */
static size_t place(uint64_t seed, int n, const size_t *len, size_t align, int *disp)
{
    int *ord = xmalloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) ord[i] = i;
    pt_shuffle(ord, n, &seed);
    size_t pos = 0;
    for (int k = 0; k < n; k++) {
        pos += (size_t)rnd_int(&seed, 3) * align;
        disp[ord[k]] = (int)pos;
        pos += (len[ord[k]] + align - 1) / align * align;
    }
    free(ord);
    return pos + (size_t)rnd_int(&seed, 2) * align;
}

void rop_alloc(rop_t *o)
{
    int P = o->size, me = o->rank;
    size_t E = o->dt->extent, cnt = (size_t)o->count;
    size_t *len = xmalloc(sizeof(size_t) * (size_t)P);
    o->cnt = xcalloc((size_t)P, sizeof(int));
    o->sc = xcalloc((size_t)P, sizeof(int));
    o->sd = xcalloc((size_t)P, sizeof(int));
    o->rc = xcalloc((size_t)P, sizeof(int));
    o->rd = xcalloc((size_t)P, sizeof(int));
    size_t total = 0;
    for (int r = 0; r < P; r++) {
        o->cnt[r] = vcount(o, r);
        total += (size_t)o->cnt[r];
    }
    switch (o->coll) {
    case -1:                    /* partitioned */
        o->sbytes = o->n * E;
        o->rbytes = o->n * E + PT_GUARD;
        o->cmpbytes = o->rbytes;
        break;
    case RC_BARRIER: break;
    case RC_BCAST: o->rbytes = cnt * E; break;
    case RC_REDUCE: case RC_ALLREDUCE: case RC_SCAN: case RC_EXSCAN:
        o->sbytes = o->rbytes = o->fullbytes = cnt * E;
        break;
    case RC_GATHER: o->sbytes = cnt * E; o->rbytes = me == o->root ? P * cnt * E : 0; break;
    case RC_SCATTER: o->sbytes = me == o->root ? P * cnt * E : 0; o->rbytes = cnt * E; break;
    case RC_ALLGATHER: o->sbytes = cnt * E; o->rbytes = P * cnt * E; break;
    case RC_ALLTOALL: o->sbytes = o->rbytes = P * cnt * E; break;
    case RC_GATHERV: case RC_ALLGATHERV:
        o->sbytes = (size_t)o->cnt[me] * E;
        if (o->coll == RC_ALLGATHERV || me == o->root) {
            for (int r = 0; r < P; r++) len[r] = (size_t)o->cnt[r];
            o->rbytes = place(h3(o, me, 7), P, len, 1, o->rd) * E;
        }
        break;
    case RC_SCATTERV:
        o->rbytes = (size_t)o->cnt[me] * E;
        if (me == o->root) {
            for (int r = 0; r < P; r++) len[r] = (size_t)o->cnt[r];
            o->sbytes = place(h3(o, me, 8), P, len, 1, o->sd) * E;
        }
        break;
    case RC_ALLTOALLV:
        for (int j = 0; j < P; j++) len[j] = (size_t)(o->sc[j] = pcount(o, me, j));
        o->sbytes = place(h3(o, me, 9), P, len, 1, o->sd) * E;
        for (int r = 0; r < P; r++) len[r] = (size_t)(o->rc[r] = pcount(o, r, me));
        o->rbytes = place(h3(o, me, 10), P, len, 1, o->rd) * E;
        break;
    case RC_ALLTOALLW:
        o->sdt = xmalloc(sizeof(dtype_t *) * (size_t)P);
        o->rdt = xmalloc(sizeof(dtype_t *) * (size_t)P);
        o->st = xmalloc(sizeof(MPI_Datatype) * (size_t)P);
        o->rt = xmalloc(sizeof(MPI_Datatype) * (size_t)P);
        for (int j = 0; j < P; j++) {
            o->sdt[j] = ptype(o, me, j);
            o->st[j] = o->sdt[j]->type;
            len[j] = (size_t)(o->sc[j] = pcount(o, me, j)) * o->sdt[j]->extent;
        }
        o->sbytes = place(h3(o, me, 11), P, len, 8, o->sd);
        for (int r = 0; r < P; r++) {
            o->rdt[r] = ptype(o, r, me);
            o->rt[r] = o->rdt[r]->type;
            len[r] = (size_t)(o->rc[r] = pcount(o, r, me)) * o->rdt[r]->extent;
        }
        o->rbytes = place(h3(o, me, 12), P, len, 8, o->rd);
        break;
    case RC_REDUCE_SCATTER:
        o->sbytes = total * E;
        o->rbytes = (size_t)o->cnt[me] * E;
        o->fullbytes = total * E;
        break;
    case RC_REDUCE_SCATTER_BLOCK:
        o->sbytes = P * cnt * E;
        o->rbytes = o->inplace ? P * cnt * E : cnt * E;
        o->fullbytes = P * cnt * E;
        break;
    }
    if (o->coll == RC_REDUCE && me != o->root) o->rbytes = 0;
    o->sbuf = xmalloc(o->sbytes + RGUARD);
    o->scopy = xmalloc(o->sbytes + RGUARD);
    o->rbuf = xmalloc(o->rbytes + RGUARD);
    o->exp = xmalloc(o->rbytes + RGUARD);
    o->full = xmalloc(o->fullbytes);
    o->tmp = xmalloc(o->fullbytes);
    free(len);
}

void rop_release(rop_t *o)
{
    void *all[] = { o->cnt, o->sc, o->sd, o->rc, o->rd, o->sdt, o->rdt, o->st, o->rt, o->sbuf, o->rbuf,
                    o->exp, o->scopy, o->tmp, o->full };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    memset(o, 0, sizeof *o);
}

/* does this rank pass MPI_IN_PLACE? */
static int my_inplace(const rop_t *o)
{
    if (!o->inplace) return 0;
    if (o->coll == RC_REDUCE || o->coll == RC_GATHER || o->coll == RC_GATHERV || o->coll == RC_SCATTER ||
        o->coll == RC_SCATTERV)
        return o->rank == o->root;
    return 1;
}

static void put(unsigned char *at, const dtype_t *dt, int n, uint64_t seed)
{
    fill_input(at, dt, n, OP_NONE, seed);
}

void rop_prepare(rop_t *o)
{
    int P = o->size, me = o->rank, ip = my_inplace(o);
    size_t E = o->dt->extent, cnt = (size_t)o->count;
    memset(o->rbuf, POISON_RECV, o->rbytes + RGUARD);
    memset(o->sbuf, o->kind == K_PART ? JUNK_SEND : POISON_SEND, o->sbytes + RGUARD);
    unsigned char *in = ip ? o->rbuf : o->sbuf;
    switch (o->coll) {
    case -1:                    /* the data is written right before each Pready */
        o->readied = 0;
        break;
    case RC_BARRIER: break;
    case RC_BCAST:
        if (me == o->root) put(o->rbuf, o->dt, o->count, bseed(o, me, -1));
        break;
    case RC_REDUCE: case RC_ALLREDUCE: case RC_SCAN: case RC_EXSCAN:
        fill_input(in, o->dt, o->count, o->opk, input_seed(o->id, o->it, me));
        break;
    case RC_REDUCE_SCATTER: case RC_REDUCE_SCATTER_BLOCK:
        fill_input(in, o->dt, (int)(o->fullbytes / E), o->opk, input_seed(o->id, o->it, me));
        break;
    case RC_GATHER: case RC_ALLGATHER:
        put(ip ? o->rbuf + me * cnt * E : o->sbuf, o->dt, o->count, bseed(o, me, -1));
        break;
    case RC_GATHERV: case RC_ALLGATHERV:
        put(ip ? o->rbuf + (size_t)o->rd[me] * E : o->sbuf, o->dt, o->cnt[me], bseed(o, me, -1));
        break;
    case RC_SCATTER:
        if (me == o->root)
            for (int j = 0; j < P; j++) put(o->sbuf + j * cnt * E, o->dt, o->count, bseed(o, me, j));
        break;
    case RC_SCATTERV:
        if (me == o->root)
            for (int j = 0; j < P; j++) put(o->sbuf + (size_t)o->sd[j] * E, o->dt, o->cnt[j], bseed(o, me, j));
        break;
    case RC_ALLTOALL:
        for (int j = 0; j < P; j++) put(in + j * cnt * E, o->dt, o->count, bseed(o, me, j));
        break;
    case RC_ALLTOALLV:
        for (int j = 0; j < P; j++)
            put(in + (size_t)(ip ? o->rd[j] : o->sd[j]) * E, o->dt, o->sc[j], bseed(o, me, j));
        break;
    case RC_ALLTOALLW:
        for (int j = 0; j < P; j++) put(in + (ip ? o->rd[j] : o->sd[j]), o->sdt[j], o->sc[j], bseed(o, me, j));
        break;
    }
    memcpy(o->scopy, o->sbuf, o->sbytes + RGUARD);
}

int rop_issue(rop_t *o, uint64_t rank_rng)
{
    MPI_Datatype t = o->dtfree ? type_clone(o->dt) : o->dt->type;
    MPI_Op op = MPI_OP_NULL;
    int user_new = 0;
    if (o->opk != OP_NONE) {
        user_new = op_is_user(o->opk) && o->dtfree;
        op = user_new ? op_create(o->opk, o->dt) : op_get(o->opk, o->dt);
    }
    int pers = o->kind == K_PERS, me = o->rank, rc = MPI_SUCCESS, *cn = o->cnt;
    void *sb = my_inplace(o) ? MPI_IN_PLACE : o->sbuf, *rb = o->rbuf;
    MPI_Comm c = o->comm;
    MPI_Request *r = &o->req[0];
    MPI_Info in = MPI_INFO_NULL;
#define CALL(PN, IN, ...) (pers ? MPIX_##PN(__VA_ARGS__, in, r) : MPI_##IN(__VA_ARGS__, r))
    switch (o->coll) {
    case -1:
        o->req[0] = o->req[1] = MPI_REQUEST_NULL;
        if (pt_rand(&rank_rng) & 1) {
            rc = MPI_Psend_init(o->sbuf, o->ps, (MPI_Count)(o->n / (size_t)o->ps), t, o->dst, o->tag, c, in, &o->req[0]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Precv_init(rb, o->pr, (MPI_Count)(o->n / (size_t)o->pr), t, o->src, o->tag, c, in, &o->req[1]);
        } else {
            rc = MPI_Precv_init(rb, o->pr, (MPI_Count)(o->n / (size_t)o->pr), t, o->src, o->tag, c, in, &o->req[1]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Psend_init(o->sbuf, o->ps, (MPI_Count)(o->n / (size_t)o->ps), t, o->dst, o->tag, c, in, &o->req[0]);
        }
        break;
    case RC_BARRIER: rc = CALL(Barrier_init, Ibarrier, c); break;
    case RC_BCAST: rc = CALL(Bcast_init, Ibcast, rb, o->count, t, o->root, c); break;
    case RC_REDUCE: rc = CALL(Reduce_init, Ireduce, sb, rb, o->count, t, op, o->root, c); break;
    case RC_ALLREDUCE: rc = CALL(Allreduce_init, Iallreduce, sb, rb, o->count, t, op, c); break;
    case RC_SCAN: rc = CALL(Scan_init, Iscan, sb, rb, o->count, t, op, c); break;
    case RC_EXSCAN: rc = CALL(Exscan_init, Iexscan, sb, rb, o->count, t, op, c); break;
    case RC_REDUCE_SCATTER: rc = CALL(Reduce_scatter_init, Ireduce_scatter, sb, rb, cn, t, op, c); break;
    case RC_REDUCE_SCATTER_BLOCK:
        rc = CALL(Reduce_scatter_block_init, Ireduce_scatter_block, sb, rb, o->count, t, op, c);
        break;
    case RC_GATHER: rc = CALL(Gather_init, Igather, sb, o->count, t, rb, o->count, t, o->root, c); break;
    case RC_GATHERV: rc = CALL(Gatherv_init, Igatherv, sb, cn[me], t, rb, cn, o->rd, t, o->root, c); break;
    case RC_SCATTER:
        rc = CALL(Scatter_init, Iscatter, o->sbuf, o->count, t, sb == MPI_IN_PLACE ? MPI_IN_PLACE : rb, o->count, t,
                  o->root, c);
        break;
    case RC_SCATTERV:
        rc = CALL(Scatterv_init, Iscatterv, o->sbuf, cn, o->sd, t, sb == MPI_IN_PLACE ? MPI_IN_PLACE : rb, cn[me], t,
                  o->root, c);
        break;
    case RC_ALLGATHER: rc = CALL(Allgather_init, Iallgather, sb, o->count, t, rb, o->count, t, c); break;
    case RC_ALLGATHERV: rc = CALL(Allgatherv_init, Iallgatherv, sb, cn[me], t, rb, cn, o->rd, t, c); break;
    case RC_ALLTOALL: rc = CALL(Alltoall_init, Ialltoall, sb, o->count, t, rb, o->count, t, c); break;
    case RC_ALLTOALLV:
        rc = CALL(Alltoallv_init, Ialltoallv, sb, o->sc, o->sd, t, rb, o->rc, o->rd, t, c);
        break;
    case RC_ALLTOALLW:
        rc = CALL(Alltoallw_init, Ialltoallw, sb, o->sc, o->sd, o->st, rb, o->rc, o->rd, o->rt, c);
        break;
    }
#undef CALL
    if (o->dtfree && o->dt->derived) MPI_Type_free(&t);
    if (user_new) MPI_Op_free(&op);
    return rc;
}

/* Expected receive buffer of start o->it into o->exp; o->cmpbytes = how
 * much of it is defined (0: nothing to check on this rank). */
static void expect(rop_t *o)
{
    int P = o->size, me = o->rank;
    size_t E = o->dt->extent, cnt = (size_t)o->count, off = 0;
    unsigned char *x = o->exp;
    memset(x, POISON_RECV, o->rbytes + RGUARD);
    o->cmpbytes = o->rbytes;
    switch (o->coll) {
    case -1: pt_expect(x, o->n * E, o->dt, o->n, input_seed(o->id, o->it, o->src)); break;
    case RC_BARRIER: break;
    case RC_BCAST: put(x, o->dt, o->count, bseed(o, o->root, -1)); break;
    case RC_REDUCE:
        if (me != o->root) break;
        /* fall through */
    case RC_ALLREDUCE:
        fold_reference(x, o->tmp, o->dt, o->count, o->opk, o->id, o->it, 0, P - 1);
        break;
    case RC_SCAN: fold_reference(x, o->tmp, o->dt, o->count, o->opk, o->id, o->it, 0, me); break;
    case RC_EXSCAN:
        if (me == 0) o->cmpbytes = 0;
        else fold_reference(x, o->tmp, o->dt, o->count, o->opk, o->id, o->it, 0, me - 1);
        break;
    case RC_REDUCE_SCATTER: case RC_REDUCE_SCATTER_BLOCK: {
        int mine = o->coll == RC_REDUCE_SCATTER ? o->cnt[me] : o->count;
        for (int r = 0; r < me; r++) off += o->coll == RC_REDUCE_SCATTER ? (size_t)o->cnt[r] : cnt;
        fold_reference(o->full, o->tmp, o->dt, (int)(o->fullbytes / E), o->opk, o->id, o->it, 0, P - 1);
        memcpy(x, o->full + off * E, (size_t)mine * E);
        o->cmpbytes = (size_t)mine * E;    /* in place: the rest is undefined */
        break;
    }
    case RC_GATHER: case RC_ALLGATHER:
        for (int r = 0; r < P && o->rbytes; r++) put(x + r * cnt * E, o->dt, o->count, bseed(o, r, -1));
        break;
    case RC_GATHERV: case RC_ALLGATHERV:
        for (int r = 0; r < P && o->rbytes; r++) put(x + (size_t)o->rd[r] * E, o->dt, o->cnt[r], bseed(o, r, -1));
        break;
    case RC_SCATTER: case RC_SCATTERV:
        if (my_inplace(o)) o->cmpbytes = 0;
        else put(x, o->dt, o->coll == RC_SCATTER ? o->count : o->cnt[me], bseed(o, o->root, me));
        break;
    case RC_ALLTOALL:
        for (int r = 0; r < P; r++) put(x + r * cnt * E, o->dt, o->count, bseed(o, r, me));
        break;
    case RC_ALLTOALLV:
        for (int r = 0; r < P; r++) put(x + (size_t)o->rd[r] * E, o->dt, o->rc[r], bseed(o, r, me));
        break;
    case RC_ALLTOALLW:
        for (int r = 0; r < P; r++) put(x + o->rd[r], o->rdt[r], o->rc[r], bseed(o, r, me));
        break;
    }
}

int rop_check(rop_t *o, char *msg, size_t n)
{
    expect(o);
    n_checks++;
    if (o->cmpbytes && memcmp(o->rbuf, o->exp, o->cmpbytes)) {
        size_t b = first_diff(o->rbuf, o->exp, o->cmpbytes);
        char detail[300] = "";
        if (o->coll != RC_ALLTOALLW)
            compare_buffers(o->rbuf + b / o->dt->extent * o->dt->extent, o->exp + b / o->dt->extent * o->dt->extent,
                            o->dt, 1, detail, sizeof detail);
        snprintf(msg, n, "receive buffer differs at byte %zu of %zu (element %zu: %s)", b, o->cmpbytes,
                 b / o->dt->extent, detail);
        return 1;
    }
    n_checks++;
    if (memcmp(o->rbuf + o->rbytes, o->exp + o->rbytes, RGUARD)) {
        snprintf(msg, n, "write behind the receive buffer (%zu bytes): guard byte %zu changed", o->rbytes,
                 first_diff(o->rbuf + o->rbytes, o->exp + o->rbytes, RGUARD));
        return 1;
    }
    n_checks++;
    if (!my_inplace(o) && memcmp(o->sbuf, o->scopy, o->sbytes + RGUARD)) {
        snprintf(msg, n, "send buffer (%zu bytes + guard) changed at byte %zu", o->sbytes,
                 first_diff(o->sbuf, o->scopy, o->sbytes + RGUARD));
        return 1;
    }
    return 0;
}

int rop_pready(rop_t *o, uint64_t *rank_rng)
{
    pt_plan_t pl;
    size_t cs = o->n / (size_t)o->ps;
    uint64_t seed = input_seed(o->id, o->it, o->rank);
    int rc = MPI_SUCCESS;
    pt_plan_make(&pl, o->ps, (pmode_t)rnd_int(rank_rng, PM_NMODES), pt_rand(rank_rng));
    for (int g = 0; g < pl.ngroups && rc == MPI_SUCCESS; g++) {
        /* a partition's data is written right before it is readied (in the
         * copy too: the send buffer must be that afterwards) */
        for (int k = pl.gstart[g]; k < pl.gstart[g + 1]; k++) {
            size_t p = (size_t)pl.order[k];
            pt_fill(o->sbuf, o->dt, p * cs, (p + 1) * cs, seed);
            pt_fill(o->scopy, o->dt, p * cs, (p + 1) * cs, seed);
        }
        rc = pt_plan_exec(&pl, g, o->req[0]);
    }
    pt_plan_free(&pl);
    o->readied = 1;
    return rc;
}
