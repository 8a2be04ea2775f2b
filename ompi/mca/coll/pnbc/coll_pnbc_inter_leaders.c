/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Intercommunicator algorithms through the group leaders: barrier,
 * bcast, reduce, allreduce, reduce_scatter, reduce_scatter_block.  The
 * shapes and MPI's intercommunicator semantics are described in
 * coll_pnbc_inter.c.
 */

#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_reduce_view.h"

#define LEADER 0    /* the local rank that speaks for its group */

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

/* Zero-byte fan-in of the local group to the leader: a rank tells its
 * parent once all its children told it. */
static void local_fan_in(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int bit = tree_bit(a);
    pnbc_sched_local_peers(s, true);
    pnbc_sched_round(s);
    for (int m = 1; m < bit && a->rank + m < a->size; m <<= 1) {
        pnbc_await(s, a->rank + m);
    }
    pnbc_sched_round(s);
    if (LEADER != a->rank) {
        pnbc_notify(s, a->rank - bit);
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
        pnbc_await(s, a->rank - bit);
    }
    pnbc_sched_round(s);
    for (int m = bit >> 1; m > 0; m >>= 1) {
        if (a->rank + m < a->size) {
            pnbc_notify(s, a->rank + m);
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
        pnbc_notify(s, LEADER);
        pnbc_await(s, LEADER);
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
    const ptrdiff_t extent = pnbc_extent(a->dtype);

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

PNBC_ONE_ALGORITHM(pnbc_inter_barrier_algorithms, "leaders", pnbc_inter_barrier_leaders);
PNBC_ONE_ALGORITHM(pnbc_inter_bcast_algorithms, "leader", pnbc_inter_bcast_leader);
PNBC_ONE_ALGORITHM(pnbc_inter_reduce_algorithms, "leader", pnbc_inter_reduce_leader);
PNBC_ONE_ALGORITHM(pnbc_inter_allreduce_algorithms, "leaders", pnbc_inter_allreduce_leaders);
PNBC_ONE_ALGORITHM(pnbc_inter_reduce_scatter_algorithms, "leaders",
                   pnbc_inter_reduce_scatter_leaders);
PNBC_ONE_ALGORITHM(pnbc_inter_reduce_scatter_block_algorithms, "leaders",
                   pnbc_inter_reduce_scatter_leaders);
