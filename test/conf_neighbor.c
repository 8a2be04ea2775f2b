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
 *
 * Files: conf_neighbor.c (this one: layouts, the failure check, the
 * driver), conf_neighbor_topo.c (topologies, neighbour lists),
 * conf_neighbor_cases.c (the cases), conf_neighbor.h.
 */
#define _GNU_SOURCE
#include "conf_neighbor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wrank, wsize;

void check(int ok, int it, const char *fmt, ...)
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
 * (lay_t: conf_neighbor.h) */
lay_t lay[NLAY];
static MPI_Datatype neg_type = MPI_DATATYPE_NULL;

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
