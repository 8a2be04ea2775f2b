/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Intercommunicator algorithms: the direct ones (this file) and those
 * through the group leaders (coll_pnbc_inter_leaders.c).
 *
 * On an intercommunicator every SEND/RECV peer is a rank of the remote
 * group.  Phases that run inside one group switch the builder to local
 * peers (pnbc_sched_local_peers); those messages travel on the
 * communicator's local-group duplicate, so the intracommunicator pieces
 * (pnbc_bcast_binomial, the reduce view) serve them unchanged.
 *
 * Two shapes cover the fifteen collectives:
 *
 *   direct   every rank exchanges its blocks straight with the remote
 *            ranks concerned, in one round, between the user buffers:
 *            gather, scatter, allgather, alltoall and their v/w forms.
 *            No temporaries.  The v forms could not do otherwise: only
 *            the remote group knows a rank's counts, and nothing may be
 *            communicated at init.
 *   leaders  local rank 0 (the leader) speaks for its group: the group's
 *            work meets at the leader along a binomial tree, the two
 *            leaders exchange one message, and the leader spreads the
 *            outcome in its group: barrier, bcast, reduce, allreduce,
 *            reduce_scatter, reduce_scatter_block.  Reductions are
 *            computed in the group that owns the data, in canonical rank
 *            order, so non-commutative ops are served too.
 *
 * MPI semantics (MPI-4.1 sec. 6.2.2): `root` is MPI_ROOT at the root,
 * MPI_PROC_NULL at the other ranks of the root's group (they take no part)
 * and the root's rank at the ranks of the other group.  MPI_IN_PLACE is
 * not allowed on intercommunicators.  Each group receives the REMOTE
 * group's data (allgather, alltoall) or its reduction (allreduce,
 * reduce_scatter).
 */

#include "coll_pnbc_algorithms.h"

/* ------------------------------------------------------------------ */
/* direct: blocks exchanged straight with remote ranks                */
/* ------------------------------------------------------------------ */

/*
 * Where the block exchanged with remote rank j lives in a user buffer, in
 * the layouts MPI's bindings use:
 *   ONE      the same block whatever j (a send buffer of gather/allgather,
 *            a receive buffer of scatter)
 *   STRIDED  block j at j * count extents (gather, scatter, allgather,
 *            alltoall at the side holding one block per remote rank)
 *   VECTOR   counts[j] elements at displs[j] extents (v variants)
 *   W        counts[j] elements of dtypes[j] at displs[j] bytes (alltoallw)
 */
typedef enum { BLOCK_ONE, BLOCK_STRIDED, BLOCK_VECTOR, BLOCK_W } block_layout_t;

typedef struct blocks_t {
    block_layout_t layout;
    pnbc_buf_t buf;
    size_t count;                       /* ONE, STRIDED */
    ompi_datatype_t *dtype;             /* all but W */
    const int *counts, *displs;         /* VECTOR, W */
    ompi_datatype_t *const *dtypes;     /* W */
} blocks_t;

static blocks_t send_one(const pnbc_coll_args_t *a)
{
    return (blocks_t) { .layout = BLOCK_ONE, .buf = PNBC_BUF_SEND, .count = a->scount,
                        .dtype = a->sdtype };
}

static blocks_t recv_one(const pnbc_coll_args_t *a)
{
    return (blocks_t) { .layout = BLOCK_ONE, .buf = PNBC_BUF_RECV, .count = a->rcount,
                        .dtype = a->rdtype };
}

static blocks_t send_strided(const pnbc_coll_args_t *a)
{
    blocks_t b = send_one(a);
    b.layout = BLOCK_STRIDED;
    return b;
}

static blocks_t recv_strided(const pnbc_coll_args_t *a)
{
    blocks_t b = recv_one(a);
    b.layout = BLOCK_STRIDED;
    return b;
}

static blocks_t send_vector(const pnbc_coll_args_t *a)
{
    return (blocks_t) { .layout = BLOCK_VECTOR, .buf = PNBC_BUF_SEND, .dtype = a->sdtype,
                        .counts = a->scounts, .displs = a->sdispls };
}

static blocks_t recv_vector(const pnbc_coll_args_t *a)
{
    return (blocks_t) { .layout = BLOCK_VECTOR, .buf = PNBC_BUF_RECV, .dtype = a->rdtype,
                        .counts = a->rcounts, .displs = a->rdispls };
}

static blocks_t send_w(const pnbc_coll_args_t *a)
{
    return (blocks_t) { .layout = BLOCK_W, .buf = PNBC_BUF_SEND, .counts = a->scounts,
                        .displs = a->sdispls, .dtypes = a->sdtypes };
}

static blocks_t recv_w(const pnbc_coll_args_t *a)
{
    return (blocks_t) { .layout = BLOCK_W, .buf = PNBC_BUF_RECV, .counts = a->rcounts,
                        .displs = a->rdispls, .dtypes = a->rdtypes };
}

/* SEND (send = true) or RECV the block for remote rank j.  An empty block
 * is skipped: its peer sees the same byte count (MPI's type-signature
 * rule) and skips too. */
static void post_block(pnbc_schedule_t *s, bool send, const blocks_t *b, int j)
{
    pnbc_ref_t ref = pnbc_ref(b->buf, 0);
    size_t count = b->count;
    ompi_datatype_t *dtype = b->dtype;

    switch (b->layout) {
    case BLOCK_ONE:
        break;
    case BLOCK_STRIDED:
        ref.disp = (ptrdiff_t) j * (ptrdiff_t) count * pnbc_extent(dtype);
        break;
    case BLOCK_VECTOR:
        count = (size_t) b->counts[j];
        ref.disp = (ptrdiff_t) b->displs[j] * pnbc_extent(dtype);
        break;
    case BLOCK_W:
        count = (size_t) b->counts[j];
        dtype = b->dtypes[j];
        ref.disp = b->displs[j];
        break;
    }
    if (0 == count * pnbc_type_size(dtype)) {
        return;
    }
    if (send) {
        pnbc_sched_send(s, ref, count, dtype, j);
    } else {
        pnbc_sched_recv(s, ref, count, dtype, j);
    }
}

/* One round: `out` (may be NULL) to every remote rank, `in` (may be NULL)
 * from every remote rank.  Rank r starts with remote rank r (mod remote
 * size) so that the remote ranks are not all hit in the same order. */
static void exchange_with_remote(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                 const blocks_t *out, const blocks_t *in)
{
    pnbc_sched_round(s);
    for (int i = 0; i < a->remote_size; ++i) {
        const int j = (a->rank + i) % a->remote_size;
        if (NULL != in) {
            post_block(s, false, in, j);
        }
        if (NULL != out) {
            post_block(s, true, out, j);
        }
    }
}

/* Rooted: the root exchanges `at_root` with every remote rank; each rank
 * of the other group exchanges `at_rank` with the root. */
static void rooted_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a, bool root_sends,
                          const blocks_t *at_root, const blocks_t *at_rank)
{
    if (MPI_ROOT == a->root) {
        exchange_with_remote(s, a, root_sends ? at_root : NULL, root_sends ? NULL : at_root);
    } else if (MPI_PROC_NULL != a->root) {
        pnbc_sched_round(s);
        post_block(s, !root_sends, at_rank, a->root);
    }
}

/*
 * pnbc_inter_gather_linear, pnbc_inter_gatherv_linear
 *   Accepts: any group sizes, root, counts, datatypes.
 *   Moves:   every rank of the non-root group sends its block to the root,
 *            which receives block j straight into rbuf (at j * rcount
 *            extents, or displs[j]); one round.
 *
 *   groups {a0 a1 = root}, {b0 b1 b2}:  b0->a1 b1->a1 b2->a1
 */
void pnbc_inter_gather_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t at_root = recv_strided(a), at_rank = send_one(a);
    rooted_direct(s, a, false, &at_root, &at_rank);
}

void pnbc_inter_gatherv_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t at_root = recv_vector(a), at_rank = send_one(a);
    rooted_direct(s, a, false, &at_root, &at_rank);
}

/*
 * pnbc_inter_scatter_linear, pnbc_inter_scatterv_linear
 *   Accepts: any group sizes, root, counts, datatypes.
 *   Moves:   the root sends block j of sbuf to remote rank j, which
 *            receives it straight into rbuf; one round.
 *
 *   groups {a0 = root, a1}, {b0 b1 b2}:  a0->b0 a0->b1 a0->b2
 */
void pnbc_inter_scatter_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t at_root = send_strided(a), at_rank = recv_one(a);
    rooted_direct(s, a, true, &at_root, &at_rank);
}

void pnbc_inter_scatterv_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t at_root = send_vector(a), at_rank = recv_one(a);
    rooted_direct(s, a, true, &at_root, &at_rank);
}

/*
 * pnbc_inter_allgather_direct, pnbc_inter_allgatherv_direct
 *   Accepts: any group sizes, counts, datatypes.
 *   Moves:   every rank sends its block to every remote rank and receives
 *            remote rank j's block into rbuf (j * rcount extents, or
 *            displs[j]); one round, no temporaries.
 *
 *   groups {a0 a1}, {b0 b1 b2}:  a_i <-> b_j for all i, j
 */
void pnbc_inter_allgather_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t out = send_one(a), in = recv_strided(a);
    exchange_with_remote(s, a, &out, &in);
}

void pnbc_inter_allgatherv_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t out = send_one(a), in = recv_vector(a);
    exchange_with_remote(s, a, &out, &in);
}

/*
 * pnbc_inter_alltoall_direct, pnbc_inter_alltoallv_direct,
 * pnbc_inter_alltoallw_direct
 *   Accepts: any group sizes, counts, displacements, datatypes.
 *   Moves:   block j of sbuf goes to remote rank j, remote rank j's block
 *            lands as block j of rbuf; one round, no temporaries.
 */
void pnbc_inter_alltoall_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t out = send_strided(a), in = recv_strided(a);
    exchange_with_remote(s, a, &out, &in);
}

void pnbc_inter_alltoallv_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t out = send_vector(a), in = recv_vector(a);
    exchange_with_remote(s, a, &out, &in);
}

void pnbc_inter_alltoallw_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const blocks_t out = send_w(a), in = recv_w(a);
    exchange_with_remote(s, a, &out, &in);
}


/* ------------------------------------------------------------------ */
/* Tables                                                             */
/* ------------------------------------------------------------------ */

PNBC_ONE_ALGORITHM(pnbc_inter_gather_algorithms, "linear", pnbc_inter_gather_linear);
PNBC_ONE_ALGORITHM(pnbc_inter_gatherv_algorithms, "linear", pnbc_inter_gatherv_linear);
PNBC_ONE_ALGORITHM(pnbc_inter_scatter_algorithms, "linear", pnbc_inter_scatter_linear);
PNBC_ONE_ALGORITHM(pnbc_inter_scatterv_algorithms, "linear", pnbc_inter_scatterv_linear);
PNBC_ONE_ALGORITHM(pnbc_inter_allgather_algorithms, "direct", pnbc_inter_allgather_direct);
PNBC_ONE_ALGORITHM(pnbc_inter_allgatherv_algorithms, "direct", pnbc_inter_allgatherv_direct);
PNBC_ONE_ALGORITHM(pnbc_inter_alltoall_algorithms, "direct", pnbc_inter_alltoall_direct);
PNBC_ONE_ALGORITHM(pnbc_inter_alltoallv_algorithms, "direct", pnbc_inter_alltoallv_direct);
PNBC_ONE_ALGORITHM(pnbc_inter_alltoallw_algorithms, "direct", pnbc_inter_alltoallw_direct);
