/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Allgather and allgatherv algorithms.
 *
 * Rank i's contribution ends up as block i of every rank's rbuf: at
 * i * rcount * extent(rdtype) for allgather, at rdispls[i] * extent with
 * rcounts[i] elements for allgatherv.  The block accessors below hide
 * the difference, so the algorithms that do not need equal blocks (ring,
 * linear) serve both collectives with one builder.
 *
 * Every rank places its own block in rbuf (a typed copy from sbuf, which
 * may use a different datatype with the same signature) unless it passed
 * MPI_IN_PLACE, in which case the block is already there.  The first
 * round sends the own block straight from sbuf (send_own_block) and
 * makes that copy after posting its messages, so the copy overlaps the
 * transfers instead of delaying them.  All other traffic uses rdtype,
 * which every rank knows for every block; a block of zero bytes
 * (rcounts[i] * type size, known to all) is neither sent nor received
 * anywhere.
 */

#include "coll_pnbc_algorithms.h"

static ptrdiff_t rextent(const pnbc_coll_args_t *a)
{
    return pnbc_extent(a->rdtype);
}

/* Block i of rbuf: element count and reference. */
static size_t block_count(const pnbc_coll_args_t *a, int i)
{
    return (NULL != a->rcounts) ? (size_t) a->rcounts[i] : a->rcount;
}

static pnbc_ref_t block_ref(const pnbc_coll_args_t *a, int i)
{
    ptrdiff_t elements = (NULL != a->rdispls) ? a->rdispls[i]
                                              : (ptrdiff_t) i * (ptrdiff_t) a->rcount;
    return pnbc_ref(PNBC_BUF_RECV, elements * rextent(a));
}

static bool block_empty(const pnbc_coll_args_t *a, int i)
{
    return 0 == block_count(a, i) * pnbc_type_size(a->rdtype);
}

/* Own block sbuf -> rbuf, converting the send type to the receive type. */
static void place_own_block(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    if (!a->in_place) {
        pnbc_sched_copy(s, pnbc_ref(PNBC_BUF_SEND, 0), a->scount, a->sdtype,
                        block_ref(a, a->rank), block_count(a, a->rank), a->rdtype);
    }
}

/* The own block to `peer`, from where it is before place_own_block():
 * sbuf in the send type (same signature as the block in rdtype), or rbuf
 * in place.  Callers skip empty own blocks. */
static void send_own_block(pnbc_schedule_t *s, const pnbc_coll_args_t *a, int peer)
{
    if (a->in_place) {
        pnbc_sched_send(s, block_ref(a, a->rank), block_count(a, a->rank), a->rdtype, peer);
    } else {
        pnbc_sched_send(s, pnbc_ref(PNBC_BUF_SEND, 0), a->scount, a->sdtype, peer);
    }
}

/* Blocks [first, first + n) of an allgather rbuf (or of a temporary laid
 * out like it) as one message. */
static void send_blocks(pnbc_schedule_t *s, const pnbc_coll_args_t *a, pnbc_ref_t base,
                        int first, int n, int peer)
{
    pnbc_sched_send(s, pnbc_ref_shift(base, (ptrdiff_t) first * (ptrdiff_t) a->rcount * rextent(a)),
                    (size_t) n * a->rcount, a->rdtype, peer);
}

static void recv_blocks(pnbc_schedule_t *s, const pnbc_coll_args_t *a, pnbc_ref_t base,
                        int first, int n, int peer)
{
    pnbc_sched_recv(s, pnbc_ref_shift(base, (ptrdiff_t) first * (ptrdiff_t) a->rcount * rextent(a)),
                    (size_t) n * a->rcount, a->rdtype, peer);
}

static void copy_blocks(pnbc_schedule_t *s, const pnbc_coll_args_t *a, pnbc_ref_t from,
                        int from_block, pnbc_ref_t to, int to_block, int n)
{
    const ptrdiff_t block = (ptrdiff_t) a->rcount * rextent(a);
    const size_t count = (size_t) n * a->rcount;
    pnbc_sched_copy(s, pnbc_ref_shift(from, from_block * block), count, a->rdtype,
                    pnbc_ref_shift(to, to_block * block), count, a->rdtype);
}

/*
 * pnbc_allgather_recursive_doubling
 *   Accepts: power-of-two communicator sizes; any count, datatypes,
 *            MPI_IN_PLACE.
 *   Moves:   in step k rank r exchanges with r ^ 2^k everything it has:
 *            the 2^k blocks of its aligned group, straight from rbuf into
 *            rbuf (the partner's group is the neighbouring aligned range,
 *            so each message is one contiguous run of blocks).  log2(p)
 *            steps, no temporary.
 *
 *   p=4:  step 1: 0<->1 (block 0 / 1)   2<->3 (block 2 / 3)
 *         step 2: 0<->2 (blocks 0-1 / 2-3)   1<->3 (same)
 */
void pnbc_allgather_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    const pnbc_ref_t rbuf = pnbc_ref(PNBC_BUF_RECV, 0);

    if (block_empty(a, 0)) {
        return;
    }
    pnbc_sched_round(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        const int peer = rank ^ mask;
        recv_blocks(s, a, rbuf, peer & ~(mask - 1), mask, peer);
        if (1 == mask) {
            send_own_block(s, a, peer);
            place_own_block(s, a);
        } else {
            send_blocks(s, a, rbuf, rank & ~(mask - 1), mask, peer);
        }
        pnbc_sched_round(s);
    }
    if (1 == p) {
        place_own_block(s, a);
    }
}

static bool allgather_recursive_doubling_usable(const pnbc_coll_args_t *a)
{
    return pnbc_is_pow2(a->size);
}

/*
 * pnbc_allgather_bruck
 *   Accepts: any size, count, datatypes, MPI_IN_PLACE.
 *   Moves:   a temporary holds the blocks in rotated order, block j =
 *            rank (r + j) mod p, starting with the own block.  In step k
 *            (distance d = 2^k) rank r sends its first min(d, p-d) blocks
 *            to r - d and appends as many from r + d.  ceil(log2 p) steps
 *            for any p; a final two-piece copy undoes the rotation.
 *
 *   p=5, rank 0:  tmp = [0] | step d=1: send [0] to 4, recv [1] from 1
 *                 | d=2: send [0,1] to 3, recv [2,3] from 2
 *                 | d=4: send [0] to 1, recv [4] from 4 | tmp -> rbuf
 */
void pnbc_allgather_bruck(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;

    if (block_empty(a, 0)) {
        return;
    }
    pnbc_ref_t tmp = pnbc_sched_tmp(s, (size_t) p * a->rcount, a->rdtype);
    pnbc_sched_round(s);
    if (a->in_place) {
        copy_blocks(s, a, pnbc_ref(PNBC_BUF_RECV, 0), rank, tmp, 0, 1);
    } else {
        pnbc_sched_copy(s, pnbc_ref(PNBC_BUF_SEND, 0), a->scount, a->sdtype, tmp, a->rcount,
                        a->rdtype);
    }
    for (int d = 1; d < p; d <<= 1) {
        const int n = (d < p - d) ? d : p - d;
        send_blocks(s, a, tmp, 0, n, (rank - d + p) % p);
        recv_blocks(s, a, tmp, d, n, (rank + d) % p);
        pnbc_sched_round(s);
    }
    /* tmp block j belongs to rank (rank + j) mod p */
    copy_blocks(s, a, tmp, 0, pnbc_ref(PNBC_BUF_RECV, 0), rank, p - rank);
    copy_blocks(s, a, tmp, p - rank, pnbc_ref(PNBC_BUF_RECV, 0), 0, rank);
}

/*
 * pnbc_allgather_ring (also allgatherv's "ring")
 *   Accepts: any size, counts (zero for any block), datatypes,
 *            displacements, MPI_IN_PLACE.
 *   Moves:   p-1 steps; in step k rank r forwards block (r - k) mod p to
 *            r + 1 and receives block (r - k - 1) mod p from r - 1,
 *            straight from rbuf into rbuf.  Every link carries each block
 *            once: bandwidth-optimal, no temporary.  An empty block is
 *            skipped by its sender and its receiver alike.
 *
 *   p=4, step 0: 0->1 (b0) 1->2 (b1) 2->3 (b2) 3->0 (b3)
 *        step 1: 0->1 (b3) 1->2 (b0) ...   step 2: 0->1 (b2) ...
 */
void pnbc_allgather_ring(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    const int right = (rank + 1) % p, left = (rank - 1 + p) % p;

    pnbc_sched_round(s);
    for (int k = 0; k < p - 1; ++k) {
        const int out = (rank - k + p) % p, in = (rank - k - 1 + p) % p;
        if (!block_empty(a, in)) {
            pnbc_sched_recv(s, block_ref(a, in), block_count(a, in), a->rdtype, left);
        }
        if (!block_empty(a, out)) {
            if (0 == k) {
                send_own_block(s, a, right);
            } else {
                pnbc_sched_send(s, block_ref(a, out), block_count(a, out), a->rdtype, right);
            }
        }
        if (0 == k) {
            place_own_block(s, a);
        }
        pnbc_sched_round(s);
    }
    if (1 == p) {
        place_own_block(s, a);
    }
}

/*
 * pnbc_allgather_neighbor_exchange
 *   Accepts: even communicator sizes (usable()); any count, datatypes,
 *            MPI_IN_PLACE.
 *   Moves:   ranks 2i and 2i+1 form pair i, which owns blocks 2i and
 *            2i+1 (adjacent in rbuf: one message carries both).  Step 0:
 *            a rank swaps its own block with its pair partner.  Steps
 *            1 .. p/2-1: it talks to its neighbours alternately -- an
 *            even rank to r-1, r+1, r-1, ..., an odd rank to r+1, r-1,
 *            ... -- and forwards the pair of blocks it received in the
 *            previous step (after step 0: its own pair).  An even rank
 *            thus gathers pairs i-1, i+1, i-2, i+2, ..., an odd rank
 *            pairs i+1, i-1, i+2, ..., straight from rbuf into rbuf.
 *            p/2 steps of at most two blocks each: ring's bandwidth in
 *            half of ring's rounds, and no temporary.
 *
 *   p=6 (pairs P0=b0b1 P1=b2b3 P2=b4b5), rank 2 (pair 1):
 *        step 0: 2<->3 (b2 / b3) | step 1: 2<->1 (P1 / P0)
 *        | step 2: 2<->3 (P0 / P2)
 */
static int pair_offset(int step, bool even)
{
    /* -1, +1, -2, +2, ... for an even rank, the mirror for an odd one */
    const int k = (step + 1) / 2;
    const int d = (step % 2) ? -k : k;
    return even ? d : -d;
}

void pnbc_allgather_neighbor_exchange(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank, npairs = p / 2;
    const pnbc_ref_t rbuf = pnbc_ref(PNBC_BUF_RECV, 0);
    const bool even = (0 == rank % 2);
    const int partner = even ? rank + 1 : rank - 1;
    const int pair = rank / 2;

    if (block_empty(a, 0)) {
        return;
    }
    pnbc_sched_round(s);
    recv_blocks(s, a, rbuf, partner, 1, partner);
    send_own_block(s, a, partner);
    place_own_block(s, a);
    int forward = pair;     /* the pair this rank passes on next */
    for (int step = 1; step < npairs; ++step) {
        /* step 1 goes to the other side than the partner, then alternate */
        const int peer = ((step % 2) == even) ? (rank - 1 + p) % p : (rank + 1) % p;
        const int incoming = (pair + pair_offset(step, even) + npairs) % npairs;
        pnbc_sched_round(s);
        recv_blocks(s, a, rbuf, 2 * incoming, 2, peer);
        send_blocks(s, a, rbuf, 2 * forward, 2, peer);
        forward = incoming;
    }
}

static bool allgather_neighbor_exchange_usable(const pnbc_coll_args_t *a)
{
    return 0 == a->size % 2;
}

/*
 * pnbc_allgather_linear (allgatherv's "linear")
 *   Accepts: any size, counts (zero for any block), datatypes,
 *            displacements, MPI_IN_PLACE.
 *   Moves:   one round: every rank sends its block to every other rank
 *            and receives every other block straight into rbuf (p-1
 *            messages each way per rank, one latency).  Peers are taken
 *            in ring order from r + 1 to spread the load.
 */
void pnbc_allgather_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    const bool own_empty = block_empty(a, rank);

    pnbc_sched_round(s);
    for (int i = 1; i < p; ++i) {
        const int from = (rank - i + p) % p;
        if (!block_empty(a, from)) {
            pnbc_sched_recv(s, block_ref(a, from), block_count(a, from), a->rdtype, from);
        }
    }
    for (int i = 1; i < p && !own_empty; ++i) {
        send_own_block(s, a, (rank + i) % p);
    }
    place_own_block(s, a);
}

/* Preference: recursive doubling where it applies (log2 p steps, no
 * temporary), else Bruck (ceil(log2 p) steps); ring and neighbour
 * exchange on request or by rule (they win for large blocks, where their
 * p-1 or p/2 steps cost nothing next to the data); linear (every block
 * straight from its owner, one round) by rule for large blocks on a few
 * ranks, where forwarding a block through others only adds copies. */
const pnbc_algorithm_t pnbc_allgather_algorithms[] = {
    { "recursive_doubling", pnbc_allgather_recursive_doubling,
      allgather_recursive_doubling_usable },
    { "bruck", pnbc_allgather_bruck, NULL },
    { "ring", pnbc_allgather_ring, NULL },
    { "neighbor_exchange", pnbc_allgather_neighbor_exchange,
      allgather_neighbor_exchange_usable },
    { "linear", pnbc_allgather_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_allgatherv_algorithms[] = {
    { "ring", pnbc_allgather_ring, NULL },
    { "linear", pnbc_allgather_linear, NULL },
    { NULL, NULL, NULL }
};
