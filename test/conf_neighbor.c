/*
 * conf_neighbor: results of the persistent neighbourhood collectives
 * (MPIX_Neighbor_{allgather,allgatherv,alltoall,alltoallv,alltoallw}_init)
 * on Cartesian, graph and distributed-graph communicators.
 *
 * Topologies (np = 1..5 ranks, all ranks take part):
 *   Cartesian 1-D periodic / non-periodic (MPI_PROC_NULL neighbours),
 *   2-D periodic (MPI_Dims_create; at np=4 a 2x2 torus where both
 *   directions of a dimension reach the same rank), 2-D with a periodic
 *   dimension of size 1 (the rank is its own neighbour twice), 3-D mixed,
 *   a duplicate of a Cartesian communicator, a 0-D one (one rank, no
 *   neighbours) and one that leaves the last rank out;
 *   graph (MPI_Graph_create): symmetric multigraph with a self loop,
 *   repeated edges and scrambled adjacency order;
 *   dist graph (MPI_Dist_graph_create_adjacent, unweighted and weighted;
 *   MPI_Dist_graph_create, weighted): irregular, asymmetric, repeated
 *   edges, self edges, ranks without in- or out-neighbours; an empty one.
 *
 * Reference: computed locally.  Every rank learns every rank's neighbour
 * lists (through the public topology queries + allgather) and so knows
 * which block of which sender lands in each of its receive slots:
 *   - Cartesian: slot j comes from block j^1 of the neighbour (the block
 *     sent in the negative direction arrives from the positive one; MPI-4.1
 *     Example 8.10), also when both directions reach the same rank;
 *   - graph / dist graph: the m-th occurrence of source s in my list gets
 *     the block of the m-th occurrence of me in s's destination list.
 * The local reference is cross-checked against the BLOCKING
 * MPI_Neighbor_* collective (served by coll/basic, an independent
 * component) on the last iteration's inputs.
 *
 * Each request is started ITERS times with new inputs; receive buffers
 * are poisoned before each start, and everything that no message may
 * touch (gaps between blocks, holes of derived types, slots of
 * MPI_PROC_NULL neighbours) must stay poisoned; send buffers must stay
 * unchanged.  Send and receive sides use different datatypes with the same
 * signature (all int-based: contiguous, strided, holes, negative lower
 * bound); v/w variants have per-edge counts with zeros on some edges;
 * some cases have zero counts everywhere; large cases use the rendezvous
 * protocol.  Finally all five collectives are initialised on each
 * communicator and run together with MPI_Startall / MPI_Waitall.
 *
 * Output: one "FAIL ..." line per failing case and rank; summary line
 * "conf_neighbor: N checks, M failures" on rank 0; non-zero exit on failure.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 3
#define MARGIN 64           /* bytes before/after every buffer (negative lb) */

static int wrank, wsize;

/* Every failed check counts as a failure; one FAIL line per case and rank. */
static void check(int ok, int it, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(int ok, int it, const char *fmt, ...)
{
    n_checks++;
    if (!ok) {
        char msg[600];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (case_failed) n_failed++;    /* case_fail counts only the first */
        case_fail(it, "%s", msg);
    }
}

/* ================================================================ layouts
 * Every datatype is made of ints: `nint` ints per element at byte offsets
 * off[] from the element's origin (which may lie after its lower bound). */
typedef struct {
    const char *name;
    MPI_Datatype type;
    long extent;
    int nint;
    long off[4];
} lay_t;

enum { L_INT, L_C3I, L_M2C, L_M2H, L_M2V, L_NEG, NLAY };
static lay_t lay[NLAY];
static MPI_Datatype neg_type = MPI_DATATYPE_NULL;
#define UNIT 12             /* ints per count unit: multiple of every nint */

static void lay_from(lay_t *l, const dtype_t *d)
{
    l->name = d->name;
    l->type = d->type;
    l->extent = (long)d->extent;
    l->nint = d->nprim;
    for (int f = 0; f < d->nprim; f++) l->off[f] = (long)d->off[f];
}

static int layouts_create(void)
{
    /* two ints at -8 and +4 around the origin; lb = -8, extent 20 */
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { -8, 4 };
    MPI_Datatype ty[2] = { MPI_INT, MPI_INT }, t0;
    int rc = MPI_Type_create_struct(2, bl, disp, ty, &t0);
    if (rc == MPI_SUCCESS) rc = type_resized(t0, -8, 20, &neg_type);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&neg_type);
    if (rc != MPI_SUCCESS) return rc;
    lay_from(&lay[L_INT], &T_INT);
    lay_from(&lay[L_C3I], &T_CONTIG3I);
    lay_from(&lay[L_M2C], &T_MAT2C);
    lay_from(&lay[L_M2H], &T_MAT2H);
    lay_from(&lay[L_M2V], &T_MAT2V);
    lay[L_NEG] = (lay_t){ "neg_lb", neg_type, 20, 2, { -8, 4 } };
    for (int i = 0; i < NLAY; i++) {
        int size;
        MPI_Aint lb, ext;
        MPI_Type_size(lay[i].type, &size);
        MPI_Type_get_extent(lay[i].type, &lb, &ext);
        if (size != lay[i].nint * (int)sizeof(int) || ext != lay[i].extent ||
            UNIT % lay[i].nint) {
            fprintf(stderr, "layout %s: size %d extent %ld unexpected\n", lay[i].name, size,
                    (long)ext);
            return MPI_ERR_TYPE;
        }
    }
    return MPI_SUCCESS;
}

/* ================================================================ topologies */
typedef enum { K_CART, K_GRAPH, K_DIST } kind_t;

typedef struct {
    char name[96];
    kind_t kind;
    MPI_Comm comm;
    int rank, size;
    int *indeg, *outdeg;        /* of every rank */
    int **src, **dst;           /* every rank's lists */
    int *pair;                  /* my slot j -> sender's block index, -1: PROC_NULL */
} topo_t;

/* this rank's lists through the public query functions */
static void my_lists(topo_t *t, int *in, int **src, int *out, int **dst)
{
    if (t->kind == K_CART) {
        int nd;
        MPI_Cartdim_get(t->comm, &nd);
        int *dims = xcalloc((size_t)nd, sizeof(int)), *per = xcalloc((size_t)nd, sizeof(int));
        int *co = xcalloc((size_t)nd, sizeof(int)), *c = xcalloc((size_t)nd, sizeof(int));
        MPI_Cart_get(t->comm, nd, dims, per, co);
        *in = *out = 2 * nd;
        *src = xcalloc((size_t)*in, sizeof(int));
        *dst = xcalloc((size_t)*out, sizeof(int));
        for (int d = 0; d < nd; d++)
            for (int dir = 0; dir < 2; dir++) {
                int r;
                memcpy(c, co, sizeof(int) * (size_t)nd);
                c[d] += dir ? 1 : -1;
                if (!per[d] && (c[d] < 0 || c[d] >= dims[d])) r = MPI_PROC_NULL;
                else {
                    c[d] = (c[d] + dims[d]) % dims[d];
                    MPI_Cart_rank(t->comm, c, &r);
                }
                (*src)[2 * d + dir] = (*dst)[2 * d + dir] = r;
            }
        free(dims), free(per), free(co), free(c);
    } else if (t->kind == K_GRAPH) {
        int n;
        MPI_Graph_neighbors_count(t->comm, t->rank, &n);
        *in = *out = n;
        *src = xcalloc((size_t)n, sizeof(int));
        *dst = xcalloc((size_t)n, sizeof(int));
        MPI_Graph_neighbors(t->comm, t->rank, n, *src);
        memcpy(*dst, *src, sizeof(int) * (size_t)n);
    } else {
        int w;
        MPI_Dist_graph_neighbors_count(t->comm, in, out, &w);
        *src = xcalloc((size_t)*in, sizeof(int));
        *dst = xcalloc((size_t)*out, sizeof(int));
        int *sw = xcalloc((size_t)*in, sizeof(int)), *dw = xcalloc((size_t)*out, sizeof(int));
        MPI_Dist_graph_neighbors(t->comm, *in, *src, w ? sw : MPI_UNWEIGHTED, *out, *dst,
                                 w ? dw : MPI_UNWEIGHTED);
        free(sw), free(dw);
    }
}

static void gather_list(MPI_Comm comm, int n, const int *mine, const int *deg, int size, int **all)
{
    int *displs = xcalloc((size_t)size, sizeof(int)), tot = 0;
    for (int r = 0; r < size; r++) displs[r] = tot, tot += deg[r];
    int *flat = xcalloc((size_t)tot, sizeof(int));
    MPI_Allgatherv(mine, n, MPI_INT, flat, deg, displs, MPI_INT, comm);
    for (int r = 0; r < size; r++) {
        all[r] = xcalloc((size_t)deg[r], sizeof(int));
        memcpy(all[r], flat + displs[r], sizeof(int) * (size_t)deg[r]);
    }
    free(flat);
    free(displs);
}

/* Which block of its sender lands in each of my receive slots. */
static int compute_pairing(topo_t *t)
{
    int me = t->rank, bad = 0;
    t->pair = xcalloc((size_t)t->indeg[me], sizeof(int));
    for (int j = 0; j < t->indeg[me]; j++) {
        int s = t->src[me][j], k = -1;
        if (s == MPI_PROC_NULL) {
            t->pair[j] = -1;
            continue;
        }
        if (t->kind == K_CART) {
            k = j ^ 1;
            if (t->dst[s][k] != me) k = -1;
        } else {
            int m = 0;
            for (int i = 0; i < j; i++) m += (t->src[me][i] == s);
            for (int i = 0; i < t->outdeg[s] && k < 0; i++)
                if (t->dst[s][i] == me && m-- == 0) k = i;
        }
        if (k < 0) bad = 1;
        t->pair[j] = k;
    }
    return bad;
}

static int topo_finish(topo_t *t)
{
    int in, out, *src, *dst;
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(t->comm, &t->rank);
    MPI_Comm_size(t->comm, &t->size);
    my_lists(t, &in, &src, &out, &dst);
    t->indeg = xcalloc((size_t)t->size, sizeof(int));
    t->outdeg = xcalloc((size_t)t->size, sizeof(int));
    MPI_Allgather(&in, 1, MPI_INT, t->indeg, 1, MPI_INT, t->comm);
    MPI_Allgather(&out, 1, MPI_INT, t->outdeg, 1, MPI_INT, t->comm);
    t->src = xcalloc((size_t)t->size, sizeof(int *));
    t->dst = xcalloc((size_t)t->size, sizeof(int *));
    gather_list(t->comm, in, src, t->indeg, t->size, t->src);
    gather_list(t->comm, out, dst, t->outdeg, t->size, t->dst);
    free(src);
    free(dst);
    int bad = compute_pairing(t);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, t->comm);
    return bad;
}

static void topo_free(topo_t *t)
{
    for (int r = 0; r < t->size; r++) free(t->src[r]), free(t->dst[r]);
    free(t->src), free(t->dst), free(t->indeg), free(t->outdeg), free(t->pair);
    MPI_Comm_free(&t->comm);
}

static int make_cart(topo_t *t, int nd, int *dims, const int *periods, int reorder)
{
    char *p = t->name;
    p += sprintf(p, "cart%dd(", nd);
    for (int d = 0; d < nd; d++)
        p += sprintf(p, "%s%d%s", d ? "x" : "", dims[d], periods[d] ? "p" : "");
    sprintf(p, ")");
    t->kind = K_CART;
    return MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, reorder, &t->comm);
}

/* Undirected multigraph: ring (doubled at n=2, self loop at n=1), a chord
 * 0 -- n/2, a self loop at n-1; lists rotated and reversed per node. */
static int make_graph(topo_t *t, int n)
{
    int ea[64], eb[64], ne = 0;
    for (int i = 0; i < n; i++) ea[ne] = i, eb[ne++] = (i + 1) % n;
    ea[ne] = 0, eb[ne++] = n / 2;
    ea[ne] = n - 1, eb[ne++] = n - 1;
    int **adj = xcalloc((size_t)n, sizeof(int *)), *deg = xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) adj[i] = xcalloc(64, sizeof(int));
    for (int e = 0; e < ne; e++) {
        adj[ea[e]][deg[ea[e]]++] = eb[e];
        if (ea[e] != eb[e]) adj[eb[e]][deg[eb[e]]++] = ea[e];
    }
    int *index = xcalloc((size_t)n, sizeof(int)), *edges = xcalloc(128, sizeof(int)), m = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < deg[i]; j++) {
            int jj = (j + i) % deg[i];
            edges[m++] = adj[i][(i & 1) ? deg[i] - 1 - jj : jj];
        }
        index[i] = m;
    }
    snprintf(t->name, sizeof t->name, "graph(ring+chord+selfloop)");
    t->kind = K_GRAPH;
    int rc = MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t->comm);
    for (int i = 0; i < n; i++) free(adj[i]);
    free(adj), free(deg), free(index), free(edges);
    return rc;
}

/* Directed multigraph: i -> i+1 unless i%3==2, i -> i+2 for even i,
 * 0 -> n-1 twice, n/2 -> n/2.  Irregular and asymmetric, repeated and
 * self edges; at n>=3 rank 2 has no ring edge out. */
static int dg_edges(int n, int *es, int *ed)
{
    int ne = 0;
    for (int i = 0; i < n; i++) {
        if (i % 3 != 2) es[ne] = i, ed[ne++] = (i + 1) % n;
        if (i % 2 == 0) es[ne] = i, ed[ne++] = (i + 2) % n;
    }
    es[ne] = 0, ed[ne++] = n - 1;
    es[ne] = 0, ed[ne++] = n - 1;
    es[ne] = n / 2, ed[ne++] = n / 2;
    return ne;
}

static int make_dist_adjacent(topo_t *t, int n, int weighted)
{
    int es[64], ed[64], ne = dg_edges(n, es, ed), me = wrank;
    int src[64], sw[64], dst[64], dw[64], in = 0, out = 0;
    for (int e = 0; e < ne; e++) {
        if (ed[e] == me) sw[in] = e + 1, src[in++] = es[e];
        if (es[e] == me) dw[out] = 100 + e, dst[out++] = ed[e];
    }
    /* scramble: rotate the in-list, reverse the out-list on odd ranks */
    int rs[64], rsw[64], rd[64], rdw[64];
    for (int i = 0; i < in; i++)
        rs[i] = src[(i + me + weighted) % in], rsw[i] = sw[(i + me + weighted) % in];
    for (int i = 0; i < out; i++) {
        int k = ((me + weighted) & 1) ? out - 1 - i : i;
        rd[i] = dst[k], rdw[i] = dw[k];
    }
    snprintf(t->name, sizeof t->name, "dist_adjacent(%s)", weighted ? "weighted" : "unweighted");
    t->kind = K_DIST;
    return MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, rs, weighted ? rsw : MPI_UNWEIGHTED,
                                          out, rd, weighted ? rdw : MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &t->comm);
}

/* Same edges, but rank r describes edges e with e % n == (r + 1) % n,
 * i.e. mostly edges of OTHER ranks; the library builds the lists. */
static int make_dist_general(topo_t *t, int n)
{
    int es[64], ed[64], ne = dg_edges(n, es, ed), me = wrank;
    int srcs[64], degs[64], dsts[64], w[64], m = 0;
    for (int e = 0; e < ne; e++)
        if (e % n == (me + 1) % n) srcs[m] = es[e], degs[m] = 1, dsts[m] = ed[e], w[m++] = e;
    snprintf(t->name, sizeof t->name, "dist_graph_create(weighted)");
    t->kind = K_DIST;
    return MPI_Dist_graph_create(MPI_COMM_WORLD, m, srcs, degs, dsts, w, MPI_INFO_NULL, 0,
                                 &t->comm);
}

static int make_dist_empty(topo_t *t)
{
    int dummy[1] = { 0 }, w[1] = { 1 };
    snprintf(t->name, sizeof t->name, "dist_adjacent(empty)");
    t->kind = K_DIST;
    return MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, dummy, w, 0, dummy, w,
                                          MPI_INFO_NULL, 0, &t->comm);
}

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

static uint64_t next_id = 1;

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

static void sweep(topo_t *t)
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

/* ================================================================ main */
typedef int (*maker_t)(topo_t *t);
static int n_ranks;
static int mk_cart1p(topo_t *t) { int d[1] = { n_ranks }, p[1] = { 1 }; return make_cart(t, 1, d, p, 0); }
static int mk_cart1n(topo_t *t) { int d[1] = { n_ranks }, p[1] = { 0 }; return make_cart(t, 1, d, p, 0); }
static int mk_cart2p(topo_t *t)
{
    int d[2] = { 0, 0 }, p[2] = { 1, 1 };
    MPI_Dims_create(n_ranks, 2, d);
    return make_cart(t, 2, d, p, 1);
}
static int mk_cart2s(topo_t *t) { int d[2] = { 1, n_ranks }, p[2] = { 1, 0 }; return make_cart(t, 2, d, p, 0); }
static int mk_cart3(topo_t *t)
{
    int d[3] = { 0, 0, 0 }, p[3] = { 1, 0, 1 };
    MPI_Dims_create(n_ranks, 3, d);
    return make_cart(t, 3, d, p, 0);
}
static int mk_cartdup(topo_t *t)
{
    topo_t base;
    int d[2] = { n_ranks, 1 }, p[2] = { 0, 1 };
    int rc = make_cart(&base, 2, d, p, 0);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(base.comm, &t->comm);
    if (rc == MPI_SUCCESS) MPI_Comm_free(&base.comm);
    snprintf(t->name, sizeof t->name, "dup(%.80s)", base.name);
    t->kind = K_CART;
    return rc;
}
/* zero dimensions: a one-rank communicator without neighbours (others: NULL) */
static int mk_cart0(topo_t *t) { int d[1] = { 0 }, p[1] = { 0 }; return make_cart(t, 0, d, p, 0); }
/* fewer ranks than MPI_COMM_WORLD: the last rank is left out */
static int mk_cartsub(topo_t *t)
{
    int d[1] = { n_ranks > 1 ? n_ranks - 1 : 1 }, p[1] = { 1 };
    return make_cart(t, 1, d, p, 0);
}
static int mk_graph(topo_t *t) { return make_graph(t, n_ranks); }
static int mk_dadj(topo_t *t) { return make_dist_adjacent(t, n_ranks, 0); }
static int mk_dadjw(topo_t *t) { return make_dist_adjacent(t, n_ranks, 1); }
static int mk_dgen(topo_t *t) { return make_dist_general(t, n_ranks); }
static int mk_dempty(topo_t *t) { return make_dist_empty(t); }

int main(int argc, char **argv)
{
    maker_t makers[] = { mk_cart1p, mk_cart1n, mk_cart2p, mk_cart2s, mk_cart3, mk_cartdup,
                         mk_cart0, mk_cartsub, mk_graph, mk_dadj, mk_dadjw, mk_dgen, mk_dempty };
    test_init(&argc, &argv, "conf_neighbor", &wrank, &wsize);
    n_ranks = wsize;
    parse_test_args(argc, argv, NULL);
    abort_unless(types_create() == MPI_SUCCESS && layouts_create() == MPI_SUCCESS, "test datatypes");
    double t0 = now_sec();
    for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
        topo_t t;
        memset(&t, 0, sizeof t);
        case_begin("creating topology %zu", m);
        t.comm = MPI_COMM_NULL;
        int rc = makers[m](&t);
        check(rc == MPI_SUCCESS, -1, "creating %s: %s", t.name, err_class_str(rc));
        if (!all_ok(MPI_COMM_WORLD, rc == MPI_SUCCESS)) continue;
        if (t.comm != MPI_COMM_NULL) {  /* else: not a member of this topology */
            int bad = topo_finish(&t);
            check(!bad, -1, "%s: TEST BUG: neighbour lists do not pair up", t.name);
            if (!bad) sweep(&t);
            topo_free(&t);
        }
        /* non-members ran fewer cases: agree on the input ids again */
        MPI_Allreduce(MPI_IN_PLACE, &next_id, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    }
    watchdog_arm(CASE_TIMEOUT, "conf_neighbor final reduction");
    totals_t sum = totals_sum();
    if (wrank == 0) {
        printf("conf_neighbor np=%d: %.1fs\n", wsize, now_sec() - t0);
        printf("conf_neighbor: %ld checks, %ld failures\n", sum.checks, sum.failed);
    }
    MPI_Type_free(&neg_type);
    types_free();
    watchdog_disarm();
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
