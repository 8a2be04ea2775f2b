/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Intercommunicator algorithms.
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
#include "coll_pnbc_reduce_view.h"

#define LEADER 0    /* the local rank that speaks for its group */

static size_t bytes_of(size_t count, ompi_datatype_t *dtype)
{
    size_t size;
    ompi_datatype_type_size(dtype, &size);
    return count * size;
}

static ptrdiff_t extent_of(ompi_datatype_t *dtype)
{
    ptrdiff_t lb, extent;
    ompi_datatype_get_extent(dtype, &lb, &extent);
    return extent;
}

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
        ref.disp = (ptrdiff_t) j * (ptrdiff_t) count * extent_of(dtype);
        break;
    case BLOCK_VECTOR:
        count = (size_t) b->counts[j];
        ref.disp = (ptrdiff_t) b->displs[j] * extent_of(dtype);
        break;
    case BLOCK_W:
        count = (size_t) b->counts[j];
        dtype = b->dtypes[j];
        ref.disp = b->displs[j];
        break;
    }
    if (0 == bytes_of(count, dtype)) {
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
/* leaders: the group meets at local rank 0                            */
/* ------------------------------------------------------------------ */

/* Binomial tree over the local group, rooted at the leader: the parent of
 * rank r > 0 is r minus its lowest set bit, its children are r + 2^k for
 * every 2^k below that bit.  Returns that bit (for the leader: the first
 * power of two >= the group size). */
static int tree_bit(const pnbc_coll_args_t *a)
{
    int bit = 1;
    while (bit < a->size && !(a->rank & bit)) {
        bit <<= 1;
    }
    return bit;
}

static void notify(pnbc_schedule_t *s, int peer)
{
    pnbc_sched_send(s, PNBC_REF_NONE, 0, MPI_BYTE, peer);
}

static void await(pnbc_schedule_t *s, int peer)
{
    pnbc_sched_recv(s, PNBC_REF_NONE, 0, MPI_BYTE, peer);
}

/* Zero-byte fan-in of the local group to the leader: a rank tells its
 * parent once all its children told it. */
static void local_fan_in(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int bit = tree_bit(a);
    pnbc_sched_local_peers(s, true);
    pnbc_sched_round(s);
    for (int m = 1; m < bit && a->rank + m < a->size; m <<= 1) {
        await(s, a->rank + m);
    }
    pnbc_sched_round(s);
    if (LEADER != a->rank) {
        notify(s, a->rank - bit);
    }
    pnbc_sched_local_peers(s, false);
}

/* Zero-byte fan-out from the leader, the reverse of local_fan_in. */
static void local_fan_out(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int bit = tree_bit(a);
    pnbc_sched_local_peers(s, true);
    pnbc_sched_round(s);
    if (LEADER != a->rank) {
        await(s, a->rank - bit);
    }
    pnbc_sched_round(s);
    for (int m = bit >> 1; m > 0; m >>= 1) {
        if (a->rank + m < a->size) {
            notify(s, a->rank + m);
        }
    }
    pnbc_sched_local_peers(s, false);
}

/* Binomial broadcast of `count` x `dtype` in rbuf from the leader over the
 * local group: the intracommunicator builder, pointed at local peers. */
static void local_bcast(pnbc_schedule_t *s, const pnbc_coll_args_t *a, size_t count,
                        ompi_datatype_t *dtype)
{
    pnbc_coll_args_t phase = *a;
    phase.root = LEADER;
    phase.count = count;
    phase.dtype = dtype;
    pnbc_sched_local_peers(s, true);
    pnbc_sched_round(s);
    pnbc_bcast_binomial(s, &phase);
    pnbc_sched_local_peers(s, false);
}

/*
 * Reduce the local group's contributions (a->count x a->dtype from sbuf)
 * to the leader along the binomial tree of tree_bit(): at step 2^k a rank
 * with bit k set sends its partial result to rank - 2^k and is done,
 * otherwise it folds in rank + 2^k's.  Subtrees are contiguous blocks of
 * ranks and the child's data goes on the right: canonical order for any
 * op.  On the leader, returns where the group's result is, as v->wcount x
 * v->wtype -- the send buffer or a temporary, never rbuf, which the caller
 * may fill meanwhile.  Elsewhere returns PNBC_REF_NONE.  The last round
 * stays open for the caller.
 */
static pnbc_ref_t group_reduce(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                               pnbc_reduce_view_t *v)
{
    pnbc_view_open(s, a, v);
    pnbc_ref_t acc = v->in;
    bool acc_writable = v->in_writable;

    pnbc_sched_local_peers(s, true);
    pnbc_sched_round(s);
    for (int mask = 1; mask < a->size; mask <<= 1) {
        if (a->rank & mask) {
            pnbc_view_send(s, v, acc, a->rank - mask);
            acc = PNBC_REF_NONE;
            break;
        }
        if (a->rank + mask < a->size) {
            pnbc_ref_t landing = pnbc_view_spare(s, v, acc);
            pnbc_view_recv(s, v, landing, a->rank + mask);
            pnbc_sched_round(s);
            acc = pnbc_view_combine(s, v, acc, &acc_writable, landing, false);
        }
    }
    pnbc_sched_local_peers(s, false);
    return acc;
}

/*
 * pnbc_inter_barrier_leaders
 *   Accepts: any group sizes.
 *   Moves:   zero-byte fan-in to each leader, the leaders exchange a
 *            zero-byte message, zero-byte fan-out.  A leader hears from
 *            the remote leader only after the whole remote group entered,
 *            and releases its group only then.
 *
 *   groups {a0 a1 a2}, {b0 b1}:  a1->a0 a2->a0, b1->b0 | a0<->b0
 *                                | a0->a2 a0->a1, b0->b1
 */
void pnbc_inter_barrier_leaders(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    local_fan_in(s, a);
    if (LEADER == a->rank) {
        pnbc_sched_round(s);
        notify(s, LEADER);
        await(s, LEADER);
    }
    local_fan_out(s, a);
}

/*
 * pnbc_inter_bcast_leader
 *   Accepts: any group sizes, root, count, datatype.
 *   Moves:   the root sends to the remote leader, which broadcasts along
 *            the binomial tree of its group (pnbc_bcast_binomial on local
 *            peers).  One inter-group message, straight into rbuf.
 *
 *   groups {a0 a1 = root}, {b0 b1 b2 b3}:  a1->b0 | b0->b2 b0->b1 | b2->b3
 */
void pnbc_inter_bcast_leader(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    if (0 == a->count || MPI_PROC_NULL == a->root) {
        return;
    }
    pnbc_sched_round(s);
    if (MPI_ROOT == a->root) {
        pnbc_sched_send(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, LEADER);
        return;
    }
    if (LEADER == a->rank) {
        pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, a->root);
    }
    local_bcast(s, a, a->count, a->dtype);
}

/*
 * pnbc_inter_reduce_leader
 *   Accepts: any group sizes, root, count, datatype, op (commutative or
 *            not).
 *   Moves:   the non-root group reduces to its leader (group_reduce),
 *            which sends the result to the root; the root receives it
 *            straight into rbuf with its own datatype (same signature).
 *
 *   groups {a0 = root}, {b0 .. b4}:  b1->b0 b3->b2 | b2->b0 | b4->b0 | b0->a0
 */
void pnbc_inter_reduce_leader(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_reduce_view_t v;

    if (0 == a->count || MPI_PROC_NULL == a->root) {
        return;
    }
    if (MPI_ROOT == a->root) {
        pnbc_sched_round(s);
        pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, LEADER);
        return;
    }
    pnbc_ref_t acc = group_reduce(s, a, &v);
    if (LEADER == a->rank) {
        pnbc_view_send(s, &v, acc, a->root);
    }
}

/*
 * pnbc_inter_allreduce_leaders
 *   Accepts: any group sizes, count, datatype, op (commutative or not).
 *   Moves:   each group reduces to its leader; the leaders swap results,
 *            each receiving the remote group's reduction straight into
 *            rbuf; each leader broadcasts it in its group.
 *
 *   groups {a0 a1}, {b0 b1 b2}:  a1->a0, b1->b0 | b2->b0 | a0<->b0
 *                                | a0->a1, b0->b2 b0->b1
 */
void pnbc_inter_allreduce_leaders(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    pnbc_ref_t acc = group_reduce(s, a, &v);
    if (LEADER == a->rank) {
        pnbc_view_send(s, &v, acc, LEADER);
        pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, LEADER);
    }
    local_bcast(s, a, a->count, a->dtype);
}

/* Elements of local rank i's block: rcounts[i] for reduce_scatter,
 * the common count for reduce_scatter_block (rcounts is NULL there). */
static size_t rs_block(const pnbc_coll_args_t *a, int i)
{
    return (NULL != a->rcounts) ? (size_t) a->rcounts[i] : a->count;
}

/* The leader hands block i of `whole` (a->dtype elements) to local rank i,
 * keeping block 0; the others receive theirs into rbuf.  Empty blocks are
 * skipped on both sides: every rank knows every block's count. */
static void local_scatter_blocks(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                 pnbc_ref_t whole)
{
    const ptrdiff_t extent = extent_of(a->dtype);

    pnbc_sched_local_peers(s, true);
    pnbc_sched_round(s);
    if (LEADER != a->rank) {
        if (rs_block(a, a->rank) > 0) {
            pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), rs_block(a, a->rank), a->dtype,
                            LEADER);
        }
    } else {
        ptrdiff_t disp = 0;
        for (int i = 0; i < a->size; ++i) {
            const size_t n = rs_block(a, i);
            if (0 == i) {
                pnbc_sched_copy(s, whole, n, a->dtype, pnbc_ref(PNBC_BUF_RECV, 0), n,
                                a->dtype);
            } else if (n > 0) {
                pnbc_sched_send(s, pnbc_ref_shift(whole, disp), n, a->dtype, i);
            }
            disp += (ptrdiff_t) n * extent;
        }
    }
    pnbc_sched_local_peers(s, false);
}

/*
 * pnbc_inter_reduce_scatter_leaders (reduce_scatter and
 * reduce_scatter_block)
 *   Accepts: any group sizes, counts, datatype, op (commutative or not).
 *   Moves:   each group reduces its whole vector (the sum of its blocks,
 *            equal in both groups by MPI's rules) to its leader; the
 *            leaders swap results; each leader scatters the remote
 *            group's reduction in its group, block i to local rank i.
 *            A single-rank group receives straight into rbuf.
 *
 *   groups {a0 a1}, {b0 b1 b2}:  a1->a0, b1->b0 | b2->b0 | a0<->b0
 *                                | a0->a1, b0->b1 b0->b2
 */
void pnbc_inter_reduce_scatter_leaders(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_coll_args_t whole_vector = *a;
    pnbc_reduce_view_t v;
    size_t total = 0;

    for (int i = 0; i < a->size; ++i) {
        total += rs_block(a, i);
    }
    if (0 == total) {
        return;
    }
    whole_vector.count = total;
    pnbc_ref_t acc = group_reduce(s, &whole_vector, &v);
    if (LEADER != a->rank) {
        local_scatter_blocks(s, a, PNBC_REF_NONE);
        return;
    }
    pnbc_ref_t remote = (1 == a->size) ? pnbc_ref(PNBC_BUF_RECV, 0)
                                       : pnbc_sched_tmp(s, total, a->dtype);
    pnbc_view_send(s, &v, acc, LEADER);
    pnbc_sched_recv(s, remote, total, a->dtype, LEADER);
    local_scatter_blocks(s, a, remote);
}

/* ------------------------------------------------------------------ */
/* Tables                                                             */
/* ------------------------------------------------------------------ */

const pnbc_algorithm_t pnbc_inter_barrier_algorithms[] = {
    { "leaders", pnbc_inter_barrier_leaders, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_bcast_algorithms[] = {
    { "leader", pnbc_inter_bcast_leader, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_reduce_algorithms[] = {
    { "leader", pnbc_inter_reduce_leader, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_allreduce_algorithms[] = {
    { "leaders", pnbc_inter_allreduce_leaders, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_gather_algorithms[] = {
    { "linear", pnbc_inter_gather_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_gatherv_algorithms[] = {
    { "linear", pnbc_inter_gatherv_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_scatter_algorithms[] = {
    { "linear", pnbc_inter_scatter_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_scatterv_algorithms[] = {
    { "linear", pnbc_inter_scatterv_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_allgather_algorithms[] = {
    { "direct", pnbc_inter_allgather_direct, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_allgatherv_algorithms[] = {
    { "direct", pnbc_inter_allgatherv_direct, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_alltoall_algorithms[] = {
    { "direct", pnbc_inter_alltoall_direct, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_alltoallv_algorithms[] = {
    { "direct", pnbc_inter_alltoallv_direct, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_alltoallw_algorithms[] = {
    { "direct", pnbc_inter_alltoallw_direct, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_reduce_scatter_algorithms[] = {
    { "leaders", pnbc_inter_reduce_scatter_leaders, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_inter_reduce_scatter_block_algorithms[] = {
    { "leaders", pnbc_inter_reduce_scatter_leaders, NULL },
    { NULL, NULL, NULL }
};
