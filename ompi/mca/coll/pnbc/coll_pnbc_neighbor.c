/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Neighbourhood collective algorithms (MPI-4.1 sec. 8.6).
 *
 * Every rank talks only to the neighbours its topology lists: it receives
 * one block from each source and sends one block to each destination.
 * The five collectives differ only in where those blocks live in the
 * user's buffers, so each one describes its two sides (send and receive)
 * as a pnbc_nbr_side_t and hands them to the one builder, which walks the
 * neighbour lists of the communicator's topology.
 *
 * Matching.  All messages of a request share one tag, so when the same
 * rank appears more than once in a neighbour list, the messages between
 * that pair are matched purely by posting order:
 *
 *  - graph and dist-graph topologies: the i-th send from A to B meets
 *    the i-th receive on B from A (the equivalent code of MPI-4.1 sec.
 *    8.6), so both sides post in list order;
 *  - Cartesian topologies: the block a rank sends in the negative
 *    direction of dimension d is the one its neighbour receives from the
 *    positive direction (slot 2d+1), and vice versa (MPI-4.1 Example 8.10,
 *    MPI-4.0 errata from mpi-forum/mpi-issues#153).  The two directions
 *    of a dimension reach the same rank when the dimension is periodic
 *    with 1 or 2 processes; sends go out as (2d, 2d+1), so receives are
 *    posted as (2d+1, 2d).  Elsewhere the two peers differ and the order
 *    does not matter.
 *
 * MPI_PROC_NULL neighbours (non-periodic Cartesian borders) keep their
 * slot in the buffers but move no data: nothing is posted for them.
 */

#include "coll_pnbc_algorithms.h"

#include "ompi/mca/topo/topo.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Neighbour lists                                                    */
/* ------------------------------------------------------------------ */

/* This rank's neighbourhood, whatever the kind of topology. */
typedef struct pnbc_neighbors_t {
    int indegree, outdegree;
    int *sources;           /* [indegree], MPI_PROC_NULL allowed */
    int *destinations;      /* [outdegree], MPI_PROC_NULL allowed */
    bool cartesian;         /* receives are posted pairwise swapped */
} pnbc_neighbors_t;

/* The rank `dir` (+1 or -1) steps away along dimension d, or
 * MPI_PROC_NULL off a non-periodic edge.  Ranks are row-major in the
 * coordinates, so a step of the coordinate moves the rank by `stride`. */
static int cart_step(const mca_topo_base_comm_cart_t *cart, int d, int dir, int rank,
                     int stride)
{
    const int n = cart->dims[d], c = cart->coords[d];
    int to = c + dir;

    if (to < 0 || to >= n) {
        if (!cart->periods[d]) {
            return MPI_PROC_NULL;
        }
        to = (to + n) % n;
    }
    return rank + (to - c) * stride;
}

/* Per dimension, the negative then the positive neighbour. */
static void cart_list(const mca_topo_base_comm_cart_t *cart, int rank, int *list)
{
    int stride = 1;
    for (int d = cart->ndims - 1; d >= 0; --d) {
        list[2 * d] = cart_step(cart, d, -1, rank, stride);
        list[2 * d + 1] = cart_step(cart, d, +1, rank, stride);
        stride *= cart->dims[d];
    }
}

static int neighbors_alloc(pnbc_neighbors_t *nb, int indegree, int outdegree)
{
    nb->indegree = indegree;
    nb->outdegree = outdegree;
    /* one block for both lists; +1 keeps malloc(0) out of the picture */
    nb->sources = malloc(sizeof(int) * ((size_t) indegree + (size_t) outdegree + 1));
    nb->destinations = NULL == nb->sources ? NULL : nb->sources + indegree;
    return NULL == nb->sources ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

static void copy_list(int *to, const int *from, int n)
{
    for (int i = 0; i < n; ++i) {
        to[i] = from[i];
    }
}

/* Fill *nb from comm's topology; pnbc_neighbors_free() releases it. */
static int pnbc_neighbors_get(ompi_communicator_t *comm, pnbc_neighbors_t *nb)
{
    const mca_topo_base_module_t *topo = comm->c_topo;
    const int rank = ompi_comm_rank(comm);
    int rc = OMPI_ERR_BAD_PARAM;

    nb->cartesian = false;
    nb->sources = nb->destinations = NULL;
    if (NULL == topo) {
        return rc;
    }
    if (OMPI_COMM_IS_CART(comm)) {
        const mca_topo_base_comm_cart_t *cart = topo->mtc.cart;
        rc = neighbors_alloc(nb, 2 * cart->ndims, 2 * cart->ndims);
        if (OMPI_SUCCESS == rc) {
            cart_list(cart, rank, nb->sources);
            copy_list(nb->destinations, nb->sources, nb->indegree);
            nb->cartesian = true;
        }
    } else if (OMPI_COMM_IS_GRAPH(comm)) {
        /* index[r] is the end of rank r's adjacency in edges[] */
        const mca_topo_base_comm_graph_t *graph = topo->mtc.graph;
        const int first = 0 == rank ? 0 : graph->index[rank - 1];
        const int degree = graph->index[rank] - first;
        rc = neighbors_alloc(nb, degree, degree);
        if (OMPI_SUCCESS == rc) {
            copy_list(nb->sources, graph->edges + first, degree);
            copy_list(nb->destinations, graph->edges + first, degree);
        }
    } else if (OMPI_COMM_IS_DIST_GRAPH(comm)) {
        const mca_topo_base_comm_dist_graph_t *dg = topo->mtc.dist_graph;
        rc = neighbors_alloc(nb, dg->indegree, dg->outdegree);
        if (OMPI_SUCCESS == rc) {
            copy_list(nb->sources, dg->in, dg->indegree);
            copy_list(nb->destinations, dg->out, dg->outdegree);
        }
    }
    return rc;
}

static void pnbc_neighbors_free(pnbc_neighbors_t *nb)
{
    free(nb->sources);
    nb->sources = nb->destinations = NULL;
}

/* The receive slot posted i-th (see "Matching" at the top). */
static int recv_slot(const pnbc_neighbors_t *nb, int i)
{
    return nb->cartesian ? i ^ 1 : i;
}

/* ------------------------------------------------------------------ */
/* Where a neighbour's block lives                                    */
/* ------------------------------------------------------------------ */

/* One side of a neighbourhood collective, in one of three shapes:
 *   uniform: `count` x `dtype` per neighbour, `stride` bytes apart
 *            (stride 0: one block shared by all, allgather's send side);
 *   vector:  counts[k] x `dtype` at displs[k] extents of dtype;
 *   w:       counts[k] x dtypes[k] at bdispls[k] bytes. */
typedef struct pnbc_nbr_side_t {
    pnbc_buf_t buf;
    size_t count;
    ptrdiff_t stride;
    ompi_datatype_t *dtype;
    ptrdiff_t extent;                   /* of dtype (vector) */
    const int *counts;                  /* vector, w */
    const int *displs;                  /* vector */
    const MPI_Aint *bdispls;            /* w */
    ompi_datatype_t *const *dtypes;     /* w */
} pnbc_nbr_side_t;

typedef struct pnbc_nbr_block_t {
    pnbc_ref_t ref;
    size_t count;
    ompi_datatype_t *dtype;
} pnbc_nbr_block_t;

static pnbc_nbr_side_t uniform_side(pnbc_buf_t buf, size_t count, ompi_datatype_t *dtype,
                                    bool block_per_neighbor)
{
    pnbc_nbr_side_t side = { .buf = buf, .count = count, .dtype = dtype };
    side.stride = block_per_neighbor ? (ptrdiff_t) count * pnbc_extent(dtype) : 0;
    return side;
}

static pnbc_nbr_side_t vector_side(pnbc_buf_t buf, const int *counts, const int *displs,
                                   ompi_datatype_t *dtype)
{
    pnbc_nbr_side_t side = { .buf = buf, .counts = counts, .displs = displs,
                             .dtype = dtype, .extent = pnbc_extent(dtype) };
    return side;
}

static pnbc_nbr_side_t w_side(pnbc_buf_t buf, const int *counts, const MPI_Aint *bdispls,
                              ompi_datatype_t *const *dtypes)
{
    pnbc_nbr_side_t side = { .buf = buf, .counts = counts, .bdispls = bdispls,
                             .dtypes = dtypes };
    return side;
}

static pnbc_nbr_block_t side_block(const pnbc_nbr_side_t *side, int k)
{
    pnbc_nbr_block_t b;
    if (NULL != side->dtypes) {
        b.ref = pnbc_ref(side->buf, (ptrdiff_t) side->bdispls[k]);
        b.count = (size_t) side->counts[k];
        b.dtype = side->dtypes[k];
    } else if (NULL != side->counts) {
        b.ref = pnbc_ref(side->buf, (ptrdiff_t) side->displs[k] * side->extent);
        b.count = (size_t) side->counts[k];
        b.dtype = side->dtype;
    } else {
        b.ref = pnbc_ref(side->buf, (ptrdiff_t) k * side->stride);
        b.count = side->count;
        b.dtype = side->dtype;
    }
    return b;
}

/* Messages without data are skipped.  Both ends agree: the type
 * signatures of a send and its receive match, so their byte sizes do. */
static bool carries_data(const pnbc_nbr_block_t *b)
{
    return b->count > 0 && pnbc_type_size(b->dtype) > 0;
}

static void post_block(pnbc_schedule_t *s, bool is_send, const pnbc_nbr_block_t *b, int peer)
{
    if (MPI_PROC_NULL == peer || !carries_data(b)) {
        return;
    }
    if (is_send) {
        pnbc_sched_send(s, b->ref, b->count, b->dtype, peer);
    } else {
        pnbc_sched_recv(s, b->ref, b->count, b->dtype, peer);
    }
}

/* ------------------------------------------------------------------ */
/* The algorithm                                                      */
/* ------------------------------------------------------------------ */

/*
 * linear (shared by all five collectives)
 *   Accepts: any topology (Cartesian, graph, dist graph), any counts and
 *            datatypes, repeated neighbours, MPI_PROC_NULL neighbours.
 *   Moves:   one round, straight between the user buffers: a receive from
 *            every source (into its slot, see "Matching"), then a send to
 *            every destination, in list order.
 *
 *   1-D periodic ring of 3, rank 1 (sources = destinations = {0, 2}):
 *        recv slot1 <- 2, recv slot0 <- 0 | send block0 -> 0, block1 -> 2
 */
static void neighbor_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                            const pnbc_nbr_side_t *send, const pnbc_nbr_side_t *recv)
{
    pnbc_neighbors_t nb;
    int rc = pnbc_neighbors_get(a->comm, &nb);

    if (OMPI_SUCCESS != rc) {
        if (OMPI_SUCCESS == s->error) {
            s->error = rc;
        }
        return;
    }
    pnbc_sched_round(s);
    /* receives first, so that arriving data finds them posted */
    for (int i = 0; i < nb.indegree; ++i) {
        const int k = recv_slot(&nb, i);
        pnbc_nbr_block_t b = side_block(recv, k);
        post_block(s, false, &b, nb.sources[k]);
    }
    for (int k = 0; k < nb.outdegree; ++k) {
        pnbc_nbr_block_t b = side_block(send, k);
        post_block(s, true, &b, nb.destinations[k]);
    }
    pnbc_neighbors_free(&nb);
}

/* The same block to every destination; block k from source k. */
static void pnbc_neighbor_allgather_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_nbr_side_t send = uniform_side(PNBC_BUF_SEND, a->scount, a->sdtype, false);
    pnbc_nbr_side_t recv = uniform_side(PNBC_BUF_RECV, a->rcount, a->rdtype, true);
    neighbor_linear(s, a, &send, &recv);
}

/* The same block to every destination; rcounts[k] at rdispls[k] from source k. */
static void pnbc_neighbor_allgatherv_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_nbr_side_t send = uniform_side(PNBC_BUF_SEND, a->scount, a->sdtype, false);
    pnbc_nbr_side_t recv = vector_side(PNBC_BUF_RECV, a->rcounts, a->rdispls, a->rdtype);
    neighbor_linear(s, a, &send, &recv);
}

/* Block k to destination k; block k from source k. */
static void pnbc_neighbor_alltoall_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_nbr_side_t send = uniform_side(PNBC_BUF_SEND, a->scount, a->sdtype, true);
    pnbc_nbr_side_t recv = uniform_side(PNBC_BUF_RECV, a->rcount, a->rdtype, true);
    neighbor_linear(s, a, &send, &recv);
}

/* Per-neighbour counts and displacements (in extents) on both sides. */
static void pnbc_neighbor_alltoallv_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_nbr_side_t send = vector_side(PNBC_BUF_SEND, a->scounts, a->sdispls, a->sdtype);
    pnbc_nbr_side_t recv = vector_side(PNBC_BUF_RECV, a->rcounts, a->rdispls, a->rdtype);
    neighbor_linear(s, a, &send, &recv);
}

/* Per-neighbour counts, byte displacements and datatypes on both sides. */
static void pnbc_neighbor_alltoallw_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_nbr_side_t send = w_side(PNBC_BUF_SEND, a->scounts, a->sdispls_bytes, a->sdtypes);
    pnbc_nbr_side_t recv = w_side(PNBC_BUF_RECV, a->rcounts, a->rdispls_bytes, a->rdtypes);
    neighbor_linear(s, a, &send, &recv);
}

const pnbc_algorithm_t pnbc_neighbor_allgather_algorithms[] = {
    { "linear", pnbc_neighbor_allgather_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_neighbor_allgatherv_algorithms[] = {
    { "linear", pnbc_neighbor_allgatherv_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_neighbor_alltoall_algorithms[] = {
    { "linear", pnbc_neighbor_alltoall_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_neighbor_alltoallv_algorithms[] = {
    { "linear", pnbc_neighbor_alltoallv_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_neighbor_alltoallw_algorithms[] = {
    { "linear", pnbc_neighbor_alltoallw_linear, NULL },
    { NULL, NULL, NULL }
};
