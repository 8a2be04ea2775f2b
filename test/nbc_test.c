/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * nbc_test: every nonblocking collective (the 17 of an intracommunicator,
 * and with 3 or more ranks the 5 neighbourhood ones on a periodic ring)
 * against results computed locally (nbc_common.h), for MPI_LONG and a
 * strided type with holes, with and without MPI_IN_PLACE, in two modes:
 *
 *   repeat  the same arguments 100 times (new data each time): a caching
 *           implementation serves these from its cache
 *   vary    buffers, counts and root change between calls: misses
 *   large   NBC_LARGE and NBC_LARGE / 7 elements per block, each twice (a
 *           miss, then a hit), in both buffer sets: messages past the shm
 *           box size, single copy and streaming, paired afresh per call
 *
 * Every byte of the receive buffer is checked: results where MPI defines
 * them, untouched elsewhere (holes, gaps between v-blocks, beyond).
 * Usage: nbc_test [iterations of repeat mode, default 100 [collective]]
 */
#include "nbc_common.h"

/* MPI_SUM for MPI_LONG; for the strided layout (predefined ops take
 * predefined types only) a user op adding the data longs, not the holes */
static MPI_Op strided_sum;

static void strided_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; ++i) {
        ((long *) inout)[2 * i] += ((const long *) in)[2 * i];
    }
}

typedef struct ctx_t {
    MPI_Comm comm;
    int r, p;
    const nbc_layout_t *L;
    int count, seed, inplace, root;
    long *s, *rb, *exp;     /* send, receive and expected buffers */
    size_t cap;             /* elements of each */
    const char *coll;
} ctx_t;

#define NBC_LARGE 20000

#define S(c, i) ((c)->s[(size_t) (i) * (c)->L->stride])
#define R(c, i) ((c)->rb[(size_t) (i) * (c)->L->stride])
#define E(c, i) ((c)->exp[(size_t) (i) * (c)->L->stride])

static long sum_over(int from, int to, long i, int seed)
{
    long v = 0;
    for (int q = from; q < to; ++q) {
        v += nbc_val(q, i, seed);
    }
    return v;
}

/* vcount(q) elements per v-block, each block followed by a one-element gap */
static int vcount(const ctx_t *c, int q)
{
    return c->count + q % 3;
}

static int vdispl(const ctx_t *c, int q)
{
    int d = 0;
    for (int j = 0; j < q; ++j) {
        d += vcount(c, j) + 1;
    }
    return d;
}

/* alltoallv counts between r and q (symmetric, as MPI_IN_PLACE needs) */
static int pcount(const ctx_t *c, int r, int q)
{
    return c->count + (r + q) % 3;
}

static int pdispl(const ctx_t *c, int r, int q)
{
    int d = 0;
    for (int j = 0; j < q; ++j) {
        d += pcount(c, r, j) + 1;
    }
    return d;
}

static void *sb(ctx_t *c)
{
    return c->inplace ? MPI_IN_PLACE : (void *) c->s;
}

/* Run one call of c->coll; returns the MPI error code. */
static int run(ctx_t *c)
{
    const int r = c->r, p = c->p, n = c->count, sd = c->seed, rt = c->root;
    MPI_Datatype T = c->L->type;
    MPI_Op SUM = (2 == c->L->stride) ? strided_sum : MPI_SUM;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS, *sc = NULL, *sdp = NULL, *rcn = NULL, *rdp = NULL;
    MPI_Datatype *types = NULL;
    const char *k = c->coll;

    sc = calloc(p, sizeof(int));
    sdp = calloc(p, sizeof(int));
    rcn = calloc(p, sizeof(int));
    rdp = calloc(p, sizeof(int));
    types = calloc(p, sizeof(MPI_Datatype));
    for (int q = 0; q < p; ++q) {
        types[q] = T;
    }
    if (!strcmp(k, "barrier")) {
        rc = MPI_Ibarrier(c->comm, &req);
    } else if (!strcmp(k, "bcast")) {
        for (int i = 0; i < n; ++i) {
            if (r == rt) R(c, i) = nbc_val(rt, i, sd);
            E(c, i) = nbc_val(rt, i, sd);
        }
        rc = MPI_Ibcast(c->rb, n, T, rt, c->comm, &req);
    } else if (!strcmp(k, "reduce") || !strcmp(k, "allreduce") || !strcmp(k, "scan") ||
               !strcmp(k, "exscan")) {
        const int all = !strcmp(k, "allreduce"), root_only = !strcmp(k, "reduce");
        const int in_place = c->inplace && (!root_only || r == rt);
        for (int i = 0; i < n; ++i) {
            if (in_place) R(c, i) = nbc_val(r, i, sd);
            else S(c, i) = nbc_val(r, i, sd);
            if (root_only) E(c, i) = (r == rt) ? sum_over(0, p, i, sd) : NBC_ANY;
            else if (all) E(c, i) = sum_over(0, p, i, sd);
            else if (!strcmp(k, "scan")) E(c, i) = sum_over(0, r + 1, i, sd);
            else E(c, i) = (r == 0) ? NBC_ANY : sum_over(0, r, i, sd);
        }
        const void *s = in_place ? MPI_IN_PLACE : c->s;
        if (root_only) rc = MPI_Ireduce(s, c->rb, n, T, SUM, rt, c->comm, &req);
        else if (all) rc = MPI_Iallreduce(s, c->rb, n, T, SUM, c->comm, &req);
        else if (!strcmp(k, "scan")) rc = MPI_Iscan(s, c->rb, n, T, SUM, c->comm, &req);
        else rc = MPI_Iexscan(s, c->rb, n, T, SUM, c->comm, &req);
    } else if (!strcmp(k, "gather") || !strcmp(k, "gatherv")) {
        const int v = !strcmp(k, "gatherv"), in_place = c->inplace && r == rt;
        const int mine = v ? vcount(c, r) : n;
        for (int q = 0; q < p; ++q) {
            rcn[q] = v ? vcount(c, q) : n;
            rdp[q] = v ? vdispl(c, q) : q * n;
            for (int i = 0; i < rcn[q] && r == rt; ++i) E(c, rdp[q] + i) = nbc_val(q, i, sd);
        }
        for (int i = 0; i < mine; ++i) {
            if (in_place) R(c, rdp[r] + i) = nbc_val(r, i, sd);
            else S(c, i) = nbc_val(r, i, sd);
        }
        const void *s = in_place ? MPI_IN_PLACE : c->s;
        if (v) rc = MPI_Igatherv(s, mine, T, c->rb, rcn, rdp, T, rt, c->comm, &req);
        else rc = MPI_Igather(s, n, T, c->rb, n, T, rt, c->comm, &req);
    } else if (!strcmp(k, "scatter") || !strcmp(k, "scatterv")) {
        const int v = !strcmp(k, "scatterv"), in_place = c->inplace && r == rt;
        for (int q = 0; q < p; ++q) {
            sc[q] = v ? vcount(c, q) : n;
            sdp[q] = v ? vdispl(c, q) : q * n;
            for (int i = 0; i < sc[q] && r == rt; ++i) S(c, sdp[q] + i) = nbc_val(q, i, sd);
        }
        for (int i = 0; i < sc[r] && !in_place; ++i) E(c, i) = nbc_val(r, i, sd);
        void *d = in_place ? MPI_IN_PLACE : c->rb;
        if (v) rc = MPI_Iscatterv(c->s, sc, sdp, T, d, sc[r], T, rt, c->comm, &req);
        else rc = MPI_Iscatter(c->s, n, T, d, n, T, rt, c->comm, &req);
    } else if (!strcmp(k, "allgather") || !strcmp(k, "allgatherv")) {
        const int v = !strcmp(k, "allgatherv");
        for (int q = 0; q < p; ++q) {
            rcn[q] = v ? vcount(c, q) : n;
            rdp[q] = v ? vdispl(c, q) : q * n;
            for (int i = 0; i < rcn[q]; ++i) E(c, rdp[q] + i) = nbc_val(q, i, sd);
        }
        for (int i = 0; i < rcn[r]; ++i) {
            if (c->inplace) R(c, rdp[r] + i) = nbc_val(r, i, sd);
            else S(c, i) = nbc_val(r, i, sd);
        }
        if (v) rc = MPI_Iallgatherv(sb(c), rcn[r], T, c->rb, rcn, rdp, T, c->comm, &req);
        else rc = MPI_Iallgather(sb(c), n, T, c->rb, n, T, c->comm, &req);
    } else if (!strcmp(k, "alltoall") || !strcmp(k, "alltoallv") || !strcmp(k, "alltoallw")) {
        const int v = strcmp(k, "alltoall") != 0, w = !strcmp(k, "alltoallw");
        const int ext = (int) (c->L->stride * sizeof(long));
        for (int q = 0; q < p; ++q) {
            sc[q] = v ? pcount(c, r, q) : n;
            sdp[q] = v ? pdispl(c, r, q) : q * n;
            rcn[q] = sc[q];
            rdp[q] = sdp[q];
            for (int i = 0; i < sc[q]; ++i) {
                if (c->inplace) R(c, sdp[q] + i) = nbc_val(r, q * 1000 + i, sd);
                else S(c, sdp[q] + i) = nbc_val(r, q * 1000 + i, sd);
                E(c, rdp[q] + i) = nbc_val(q, r * 1000 + i, sd);
            }
        }
        if (w) {
            for (int q = 0; q < p; ++q) {
                sdp[q] *= ext;
                rdp[q] *= ext;
            }
            rc = MPI_Ialltoallw(sb(c), sc, sdp, types, c->rb, rcn, rdp, types, c->comm, &req);
        } else if (v) {
            rc = MPI_Ialltoallv(sb(c), sc, sdp, T, c->rb, rcn, rdp, T, c->comm, &req);
        } else {
            rc = MPI_Ialltoall(sb(c), n, T, c->rb, n, T, c->comm, &req);
        }
    } else if (!strcmp(k, "reduce_scatter") || !strcmp(k, "reduce_scatter_block")) {
        const int blk = !strcmp(k, "reduce_scatter_block");
        int total = 0, off = 0;
        for (int q = 0; q < p; ++q) {
            rcn[q] = blk ? n : c->count + q % 2;
            off += (q < r) ? rcn[q] : 0;
            total += rcn[q];
        }
        for (int j = 0; j < total; ++j) {
            if (c->inplace) R(c, j) = nbc_val(r, j, sd);
            else S(c, j) = nbc_val(r, j, sd);
        }
        for (int i = 0; i < rcn[r]; ++i) E(c, i) = sum_over(0, p, off + i, sd);
        for (int j = rcn[r]; j < total && c->inplace; ++j) E(c, j) = NBC_ANY;
        if (blk) rc = MPI_Ireduce_scatter_block(sb(c), c->rb, n, T, SUM, c->comm, &req);
        else rc = MPI_Ireduce_scatter(sb(c), c->rb, rcn, T, SUM, c->comm, &req);
    } else {
        /* neighbourhood collectives on the periodic ring: neighbour 0 is
         * r-1, neighbour 1 is r+1, for sources and destinations */
        const int nb[2] = { (r + p - 1) % p, (r + 1) % p };
        const int ext = (int) (c->L->stride * sizeof(long));
        MPI_Aint bsd[2], brd[2];
        if (!strncmp(k, "neighbor_allgather", 18)) {
            const int v = !strcmp(k, "neighbor_allgatherv");
            for (int i = 0; i < (v ? vcount(c, r) : n); ++i) S(c, i) = nbc_val(r, i, sd);
            for (int j = 0; j < 2; ++j) {
                rcn[j] = v ? vcount(c, nb[j]) : n;
                rdp[j] = v ? j * (c->count + 4) : j * n;
                for (int i = 0; i < rcn[j]; ++i) E(c, rdp[j] + i) = nbc_val(nb[j], i, sd);
            }
            if (v) rc = MPI_Ineighbor_allgatherv(c->s, vcount(c, r), T, c->rb, rcn, rdp, T,
                                                 c->comm, &req);
            else rc = MPI_Ineighbor_allgather(c->s, n, T, c->rb, n, T, c->comm, &req);
        } else {
            /* to neighbour j: block j, elements nbc_val(r, j*1000 + i);
             * from neighbour 0 (r-1) its block 1, from neighbour 1 its block 0 */
            const int plain = !strcmp(k, "neighbor_alltoall");
            for (int j = 0; j < 2; ++j) {
                sc[j] = rcn[j] = n;
                sdp[j] = rdp[j] = plain ? j * n : j * (n + 1);
                bsd[j] = (MPI_Aint) sdp[j] * ext;
                brd[j] = (MPI_Aint) rdp[j] * ext;
                for (int i = 0; i < n; ++i) {
                    S(c, sdp[j] + i) = nbc_val(r, j * 1000 + i, sd);
                    E(c, rdp[j] + i) = nbc_val(nb[j], (1 - j) * 1000 + i, sd);
                }
            }
            if (plain)
                rc = MPI_Ineighbor_alltoall(c->s, n, T, c->rb, n, T, c->comm, &req);
            else if (!strcmp(k, "neighbor_alltoallv"))
                rc = MPI_Ineighbor_alltoallv(c->s, sc, sdp, T, c->rb, rcn, rdp, T, c->comm, &req);
            else
                rc = MPI_Ineighbor_alltoallw(c->s, sc, bsd, types, c->rb, rcn, brd, types,
                                             c->comm, &req);
        }
    }
    if (MPI_SUCCESS == rc) {
        rc = nbc_complete(&req, c->seed);
    }
    free(sc);
    free(sdp);
    free(rcn);
    free(rdp);
    free(types);
    return rc;
}

static const char *intra_colls[] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan", NULL
};
static const char *neighbor_colls[] = {
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
    "neighbor_alltoallw", NULL
};

static int has_in_place(const char *k)
{
    return strcmp(k, "barrier") && strcmp(k, "bcast") && strncmp(k, "neighbor", 8);
}

/* One collective, one layout, in place or not: repeat mode then vary mode. */
static void test_coll(MPI_Comm comm, const char *coll, const nbc_layout_t *L, int inplace,
                      int iters)
{
    ctx_t c = { .comm = comm, .L = L, .coll = coll, .inplace = inplace };
    MPI_Comm_rank(comm, &c.r);
    MPI_Comm_size(comm, &c.p);
    c.cap = (size_t) (c.p + 2) * NBC_LARGE + 64;
    const size_t nl = c.cap * (size_t) L->stride;
    long *sets[2][2] = { { nbc_alloc(nl), nbc_alloc(nl) }, { nbc_alloc(nl), nbc_alloc(nl) } };
    c.exp = nbc_alloc(nl);

    static const char *const modes[3] = { "repeat", "vary", "large" };
    for (int mode = 0; mode < 3; ++mode) {
        const int n_calls = (0 == mode) ? iters : (1 == mode) ? 12 : 8;
        for (int it = 0; it < n_calls; ++it) {
            /* large: each count twice (a miss, then a hit), both sets */
            const int set = (1 == mode) ? it % 2 : (2 == mode) ? it / 4 : 0;
            c.s = sets[set][0];
            c.rb = sets[set][1];
            c.count = (0 == mode) ? 3 : (1 == mode) ? 1 + it % 4
                                                    : (it % 4 < 2) ? NBC_LARGE : NBC_LARGE / 7;
            c.root = (1 == mode) ? it % c.p : c.p - 1;
            c.seed = it + 1;
            nbc_poison(c.s, nl);
            nbc_poison(c.rb, nl);
            nbc_poison(c.exp, nl);
            int rc = run(&c);
            char what[160];
            snprintf(what, sizeof(what), "%s %s%s %s call %d count %d root %d", coll, L->name,
                     inplace ? " in-place" : "", modes[mode], it, c.count, c.root);
            /* a failed check does not leave the loop: every rank goes on
             * making the same calls, so a wrong result is reported at the
             * end instead of turning into a hang */
            if (MPI_SUCCESS != rc) {
                nbc_fail("%s: error %d", what, rc);
            } else {
                (void) nbc_compare(c.rb, c.exp, nl, what);
            }
        }
    }
    for (int i = 0; i < 2; ++i) {
        free(sets[i][0]);
        free(sets[i][1]);
    }
    free(c.exp);
}

int main(int argc, char **argv)
{
    int iters = (argc > 1) ? atoi(argv[1]) : 100;
    const char *only = (argc > 2) ? argv[2] : NULL;
    nbc_layout_t lay[2];

    nbc_prog = "nbc_test";
    const int wsize = nbc_start(&argc, &argv);
    nbc_layouts(lay);
    MPI_Op_create(strided_sum_fn, 1, &strided_sum);

    MPI_Comm dup, ring = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    for (int l = 0; l < 2; ++l) {
        for (int ip = 0; ip < 2; ++ip) {
            for (const char **k = intra_colls; NULL != *k; ++k) {
                if ((!ip || has_in_place(*k)) && (NULL == only || !strcmp(only, *k))) {
                    test_coll(dup, *k, &lay[l], ip, iters);
                }
            }
        }
    }
    if (wsize >= 3) {
        const int dims[1] = { wsize }, periods[1] = { 1 };
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
        for (int l = 0; l < 2; ++l) {
            for (const char **k = neighbor_colls; NULL != *k; ++k) {
                if (NULL == only || !strcmp(only, *k))
                test_coll(ring, *k, &lay[l], 0, iters);
            }
        }
        MPI_Comm_free(&ring);
    }
    MPI_Comm_free(&dup);
    MPI_Type_free(&lay[1].type);
    MPI_Op_free(&strided_sum);
    return nbc_finish(NULL, wsize);
}
