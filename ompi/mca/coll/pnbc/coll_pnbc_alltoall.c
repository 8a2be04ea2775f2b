/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * All-to-all algorithms: alltoall, alltoallv and alltoallw.
 *
 * The three collectives differ only in where the block for (or from)
 * peer i lives and how it is typed:
 *
 *   alltoall    block i at  i * count * extent(type), `count` of `type`
 *   alltoallv   block i at  displs[i] * extent(type), counts[i] of `type`
 *   alltoallw   block i at  displs[i] bytes,          counts[i] of types[i]
 *
 * send_side()/recv_side() hide that difference, so the pairwise, linear
 * and windowed linear builders serve all three collectives; Bruck needs
 * equal blocks and serves alltoall only.
 *
 * MPI_IN_PLACE.  The data to send is in rbuf and is replaced by the data
 * received; the send-side arguments are the receive-side ones (MPI-4.1
 * sec. 6.8).  An outgoing block must therefore leave rbuf before the
 * incoming block for the same position lands: every builder packs it
 * into a temporary first (one per peer, or one reused per exchange).
 * Packed temporaries use MPI_PACKED: a block of any datatype packs to
 * exactly its `bytes`, and is sent as such, matching the peer's typed
 * receive of the same signature.
 *
 * Zero-byte blocks.  A message is skipped when it carries no bytes.  The
 * sender decides from counts[i] * size(type) of its send side, the
 * receiver from its receive side; MPI requires the two signatures to
 * match, so both sides always agree and a rank with nothing to exchange
 * still runs a schedule consistent with its peers.
 */

#include "coll_pnbc_algorithms.h"

/* The block for/from one peer on one side of the exchange. */
typedef struct a2a_block_t {
    pnbc_ref_t ref;
    size_t count;
    ompi_datatype_t *dtype;
    size_t bytes;       /* count * type size: what the message carries */
} a2a_block_t;

static a2a_block_t block(pnbc_buf_t buf, ptrdiff_t disp, size_t count, ompi_datatype_t *dtype)
{
    a2a_block_t b = { pnbc_ref(buf, disp), count, dtype, count * pnbc_type_size(dtype) };
    return b;
}

/* Where peer's block sits in `buf`, described by one side's arguments. */
static a2a_block_t side_block(const pnbc_coll_args_t *a, pnbc_buf_t buf, size_t count,
                              const int *counts, const int *displs, ompi_datatype_t *dtype,
                              ompi_datatype_t *const *dtypes, int peer)
{
    switch (a->coll) {
    case PNBC_ALLTOALLV:
        return block(buf, (ptrdiff_t) displs[peer] * pnbc_extent(dtype),
                     (size_t) counts[peer], dtype);
    case PNBC_ALLTOALLW:
        return block(buf, (ptrdiff_t) displs[peer], (size_t) counts[peer], dtypes[peer]);
    default:    /* alltoall */
        return block(buf, (ptrdiff_t) peer * (ptrdiff_t) count * pnbc_extent(dtype), count,
                     dtype);
    }
}

/* Peer's block in the receive buffer. */
static a2a_block_t recv_side(const pnbc_coll_args_t *a, int peer)
{
    return side_block(a, PNBC_BUF_RECV, a->rcount, a->rcounts, a->rdispls, a->rdtype,
                      a->rdtypes, peer);
}

/* The data for peer.  In place it is peer's block of rbuf, described by
 * the receive arguments; builders must move it out before that block is
 * overwritten. */
static a2a_block_t send_side(const pnbc_coll_args_t *a, int peer)
{
    if (a->in_place) {
        return recv_side(a, peer);
    }
    return side_block(a, PNBC_BUF_SEND, a->scount, a->scounts, a->sdispls, a->sdtype,
                      a->sdtypes, peer);
}

static void send_block(pnbc_schedule_t *s, const a2a_block_t *b, int peer)
{
    if (b->bytes > 0) {
        pnbc_sched_send(s, b->ref, b->count, b->dtype, peer);
    }
}

static void recv_block(pnbc_schedule_t *s, const a2a_block_t *b, int peer)
{
    if (b->bytes > 0) {
        pnbc_sched_recv(s, b->ref, b->count, b->dtype, peer);
    }
}

/* Packed bytes <-> a typed block. */
static void pack_block(pnbc_schedule_t *s, const a2a_block_t *b, pnbc_ref_t packed)
{
    if (b->bytes > 0) {
        pnbc_sched_copy(s, b->ref, b->count, b->dtype, packed, b->bytes, MPI_PACKED);
    }
}

static void unpack_block(pnbc_schedule_t *s, pnbc_ref_t packed, const a2a_block_t *b)
{
    if (b->bytes > 0) {
        pnbc_sched_copy(s, packed, b->bytes, MPI_PACKED, b->ref, b->count, b->dtype);
    }
}

static void send_packed(pnbc_schedule_t *s, pnbc_ref_t packed, size_t bytes, int peer)
{
    if (bytes > 0) {
        pnbc_sched_send(s, packed, bytes, MPI_PACKED, peer);
    }
}

static pnbc_ref_t packed_tmp(pnbc_schedule_t *s, size_t bytes)
{
    return pnbc_sched_tmp(s, bytes, MPI_PACKED);
}

/* A rank's own block: sbuf -> rbuf locally; in place it is already there.
 * Builders add it after posting their first messages so that the copy
 * overlaps with the transfers. */
static void copy_own_block(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    if (a->in_place) {
        return;
    }
    a2a_block_t from = send_side(a, a->rank), to = recv_side(a, a->rank);
    if (from.bytes > 0) {
        pnbc_sched_copy(s, from.ref, from.count, from.dtype, to.ref, to.count, to.dtype);
    }
}

static int mod(int x, int p)
{
    return ((x % p) + p) % p;
}

/* ------------------------------------------------------------------ */
/* Pairwise exchange                                                  */
/* ------------------------------------------------------------------ */

/*
 * In place, the pairwise exchange pairs ranks symmetrically: in round k
 * rank r exchanges with q = k - r (mod p), whose partner in that round
 * is r again, and sits out the one round where q == r.  Both directions
 * of a pair then use the same block of rbuf: it is packed into a single
 * temporary slot (reused every round: the previous round's send has
 * completed), sent from there, and the incoming block lands in its place.
 *
 *   p=4, r=1:  k=0: 1<->3  k=1: 1<->0  k=2: (self)  k=3: 1<->2
 */
static void pairwise_in_place(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, r = a->rank;
    size_t slot_bytes = 0;

    for (int q = 0; q < p; ++q) {
        a2a_block_t b = recv_side(a, q);
        if (q != r && b.bytes > slot_bytes) {
            slot_bytes = b.bytes;
        }
    }
    if (0 == slot_bytes) {
        return;
    }
    const pnbc_ref_t slot = packed_tmp(s, slot_bytes);
    for (int k = 0; k < p; ++k) {
        const int q = mod(k - r, p);
        a2a_block_t b = recv_side(a, q);
        if (q == r || 0 == b.bytes) {
            continue;
        }
        pnbc_sched_round(s);
        pack_block(s, &b, slot);
        send_packed(s, slot, b.bytes, q);
        recv_block(s, &b, q);
    }
}

/*
 * pnbc_alltoall_pairwise  (alltoall, alltoallv, alltoallw)
 *   Accepts: any size, counts, datatypes (per peer for alltoallw),
 *            MPI_IN_PLACE.
 *   Moves:   p-1 rounds; in round k rank r sends its block for r+k to
 *            r+k and receives r-k's block from r-k, straight between the
 *            user buffers.  One message in and one out per round: the
 *            schedule for large blocks or many ranks.  Own block: local
 *            copy in round 1.  In place: symmetric pairs, see
 *            pairwise_in_place() (p rounds, one of them idle).
 *
 *   p=4, r=1:  k=1: 1->2, 0->1   k=2: 1->3, 3->1   k=3: 1->0, 2->1
 */
void pnbc_alltoall_pairwise(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, r = a->rank;

    if (a->in_place) {
        pairwise_in_place(s, a);
        return;
    }
    for (int k = 1; k < p; ++k) {
        const int to = (r + k) % p, from = mod(r - k, p);
        a2a_block_t out = send_side(a, to), in = recv_side(a, from);
        pnbc_sched_round(s);
        send_block(s, &out, to);
        recv_block(s, &in, from);
        if (1 == k) {
            copy_own_block(s, a);
        }
    }
    if (1 == p) {
        copy_own_block(s, a);
    }
}

/* ------------------------------------------------------------------ */
/* Linear                                                             */
/* ------------------------------------------------------------------ */

/*
 * The linear exchanges: peers are taken at distance k = 1 .. p-1 (send
 * to r+k, receive from r-k), `window` distances per round, so a round
 * has at most 2 * window messages in flight per rank.  Rank r sends to
 * r+k in the round of distance k, and r+k receives from r in the round
 * of the same distance: every pair's messages are in the same round on
 * both sides.  In place, every outgoing block is first packed into its
 * own temporary (one area, blocks in distance order), before any receive
 * is posted into rbuf.  Own block: local copy after the first posts.
 */
static void linear_windows(pnbc_schedule_t *s, const pnbc_coll_args_t *a, int window)
{
    const int p = a->size, r = a->rank;
    pnbc_ref_t staged = PNBC_REF_NONE;
    size_t off = 0;

    pnbc_sched_round(s);
    if (a->in_place) {
        size_t total = 0;
        for (int k = 1; k < p; ++k) {
            total += send_side(a, (r + k) % p).bytes;
        }
        staged = packed_tmp(s, total);
        for (int k = 1; k < p; ++k) {
            a2a_block_t out = send_side(a, (r + k) % p);
            pack_block(s, &out, pnbc_ref_shift(staged, (ptrdiff_t) off));
            off += out.bytes;
        }
        off = 0;
    }
    /* One pass at least: with p == 1 it only copies the own block. */
    int first = 1;
    do {
        const int last = (first + window - 1 < p - 1) ? first + window - 1 : p - 1;
        if (first > 1) {
            pnbc_sched_round(s);
        }
        for (int k = first; k <= last; ++k) {
            const int from = mod(r - k, p);
            a2a_block_t in = recv_side(a, from);
            recv_block(s, &in, from);
        }
        for (int k = first; k <= last; ++k) {
            const int to = (r + k) % p;
            a2a_block_t out = send_side(a, to);
            if (a->in_place) {
                send_packed(s, pnbc_ref_shift(staged, (ptrdiff_t) off), out.bytes, to);
                off += out.bytes;
            } else {
                send_block(s, &out, to);
            }
        }
        if (1 == first) {
            copy_own_block(s, a);
        }
        first = last + 1;
    } while (first < p);
}

/*
 * pnbc_alltoall_linear  (alltoall, alltoallv, alltoallw)
 *   Accepts: any size, counts, datatypes, MPI_IN_PLACE.
 *   Moves:   one round: receives from r-1, r-2, ... and sends to r+1,
 *            r+2, ... are all posted at once; the network sorts out the
 *            order.  Fewest rounds, 2(p-1) messages in flight per rank:
 *            the schedule for small communicators.  In place, see
 *            linear_windows().
 *
 *   p=3, r=0:  recv 2, recv 1 | send 1, send 2 | copy own block
 */
void pnbc_alltoall_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    linear_windows(s, a, (a->size > 1) ? a->size - 1 : 1);
}

/*
 * pnbc_alltoall_windowed_linear  (alltoall, alltoallv, alltoallw)
 *   Accepts: any size, counts, datatypes, MPI_IN_PLACE.
 *   Moves:   like linear, but in rounds of PNBC_ALLTOALL_WINDOW peer
 *            distances: at most 2 * W messages in flight per rank, so a
 *            large communicator does not flood the receivers with
 *            unexpected messages, while each round still overlaps W
 *            transfers (pairwise overlaps one).  ceil((p-1)/W) rounds.
 *
 *   p=6, W=2, r=0:  recv 5,4 send 1,2 | recv 3,2 send 3,4 | recv 1 send 5
 */
#ifndef PNBC_ALLTOALL_WINDOW     /* compile-time override: tests use 2 to get */
#define PNBC_ALLTOALL_WINDOW 8    /* several rounds at small p */
#endif

void pnbc_alltoall_windowed_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    linear_windows(s, a, PNBC_ALLTOALL_WINDOW);
}

/* ------------------------------------------------------------------ */
/* Bruck                                                              */
/* ------------------------------------------------------------------ */

/*
 * Bruck keeps the p-1 foreign blocks packed in slots 1 .. p-1 of one
 * temporary (slot i = the block that travels distance i).  The slots
 * whose index has bit k set form runs [k, 2k), [3k, 4k), ...: move them
 * as whole runs between the slots and a contiguous message buffer.
 * Returns the number of blocks moved.
 */
static int bruck_move(pnbc_schedule_t *s, int p, int k, pnbc_ref_t slots, size_t bb,
                      pnbc_ref_t msg, bool to_msg)
{
    int n = 0;
    for (int first = k; first < p; first += 2 * k) {
        const int len = (first + k <= p) ? k : p - first;
        pnbc_ref_t slot = pnbc_ref_shift(slots, (ptrdiff_t) ((size_t) (first - 1) * bb));
        pnbc_ref_t part = pnbc_ref_shift(msg, (ptrdiff_t) ((size_t) n * bb));
        const size_t bytes = (size_t) len * bb;
        if (to_msg) {
            pnbc_sched_copy(s, slot, bytes, MPI_PACKED, part, bytes, MPI_PACKED);
        } else {
            pnbc_sched_copy(s, part, bytes, MPI_PACKED, slot, bytes, MPI_PACKED);
        }
        n += len;
    }
    return n;
}

/* Slots i = 1 .. p-1 <- send blocks r+1 .. p-1, 0 .. r-1: two runs of
 * consecutive blocks of the user's send side, packed in one copy each. */
static void bruck_rotate_in(pnbc_schedule_t *s, const pnbc_coll_args_t *a, pnbc_ref_t slots)
{
    const int p = a->size, r = a->rank;
    const int first[2] = { r + 1, 0 };
    const int nblocks[2] = { p - 1 - r, r };
    size_t off = 0;

    for (int run = 0; run < 2; ++run) {
        if (0 == nblocks[run]) {
            continue;
        }
        a2a_block_t b = send_side(a, first[run]);
        b.count *= (size_t) nblocks[run];
        b.bytes *= (size_t) nblocks[run];
        pack_block(s, &b, pnbc_ref_shift(slots, (ptrdiff_t) off));
        off += b.bytes;
    }
}

/*
 * pnbc_alltoall_bruck  (alltoall only)
 *   Accepts: any size, count, datatypes, MPI_IN_PLACE.
 *   Moves:   ceil(log2 p) rounds instead of p-1, at the price of packing
 *            and of sending each block up to log2 p times: the schedule
 *            for small blocks.  Rank r packs its block for r+i into slot
 *            i (i = 1 .. p-1).  In step k = 1, 2, 4, ... it sends all
 *            slots with bit k set, in one message, to r+k and receives
 *            the same slots from r-k; after the last step slot i holds
 *            the block from r-i, which is unpacked into rbuf.  In place
 *            is free: all of rbuf is packed before anything lands in it.
 *
 *   p=5, r=0: slots = blocks for 1 2 3 4
 *        k=1: slots 1,3     -> 1,  <- from 4
 *        k=2: slots 2,3     -> 2,  <- from 3
 *        k=4: slot  4       -> 4,  <- from 1
 *        slot i now holds the block from 0-i: unpack into rbuf[-i mod 5]
 */
void pnbc_alltoall_bruck(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, r = a->rank;
    const size_t bb = recv_side(a, r).bytes;   /* every block's size */

    if (0 == bb) {
        return;
    }
    if (1 == p) {
        copy_own_block(s, a);
        return;
    }
    /* Step 1 moves the odd slots, floor(p/2) of them: no step moves more
     * (every 2k consecutive indices hold k with bit k set). */
    const size_t most = (size_t) (p / 2) * bb;
    const pnbc_ref_t slots = packed_tmp(s, (size_t) (p - 1) * bb);
    const pnbc_ref_t out = packed_tmp(s, most), in = packed_tmp(s, most);
    int prev = 0;   /* the step whose blocks sit in `in` */

    pnbc_sched_round(s);
    bruck_rotate_in(s, a, slots);
    for (int k = 1; k < p; k <<= 1) {
        if (prev > 0) {
            pnbc_sched_round(s);
            bruck_move(s, p, prev, slots, bb, in, false);
        }
        const int n = bruck_move(s, p, k, slots, bb, out, true);
        send_packed(s, out, (size_t) n * bb, (r + k) % p);
        pnbc_sched_recv(s, in, (size_t) n * bb, MPI_PACKED, mod(r - k, p));
        if (1 == k) {
            copy_own_block(s, a);
        }
        prev = k;
    }
    pnbc_sched_round(s);
    bruck_move(s, p, prev, slots, bb, in, false);
    for (int i = 1; i < p; ++i) {
        a2a_block_t to = recv_side(a, mod(r - i, p));
        unpack_block(s, pnbc_ref_shift(slots, (ptrdiff_t) ((size_t) (i - 1) * bb)), &to);
    }
}

/* Tables.  The automatic choice (by communicator size and block size) is
 * in coll_pnbc_select.c's rules. */
const pnbc_algorithm_t pnbc_alltoall_algorithms[] = {
    { "pairwise", pnbc_alltoall_pairwise, NULL },
    { "bruck", pnbc_alltoall_bruck, NULL },
    { "linear", pnbc_alltoall_linear, NULL },
    { "windowed_linear", pnbc_alltoall_windowed_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_alltoallv_algorithms[] = {
    { "pairwise", pnbc_alltoall_pairwise, NULL },
    { "linear", pnbc_alltoall_linear, NULL },
    { "windowed_linear", pnbc_alltoall_windowed_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_alltoallw_algorithms[] = {
    { "pairwise", pnbc_alltoall_pairwise, NULL },
    { "linear", pnbc_alltoall_linear, NULL },
    { "windowed_linear", pnbc_alltoall_windowed_linear, NULL },
    { NULL, NULL, NULL }
};
