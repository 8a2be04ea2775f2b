/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Broadcast algorithms.  Data moves straight between the user buffers
 * with the user's datatype: no temporary, no packing by pnbc.  Every
 * algorithm renumbers the ranks so that the root is 0:
 * v = rank - root (mod p).
 */

#include "coll_pnbc_algorithms.h"

/* Radix of the k-nomial tree: a node sends to up to radix-1 children per
 * level, so the tree has log_radix(p) levels (fewer hops than binomial,
 * more sends per node). */
#define PNBC_BCAST_KNOMIAL_RADIX 4

/* Default segment of the segmented algorithms when the request names
 * none (coll_pnbc_segsize / MPI_Info pnbc_segsize).  Over shared memory
 * every segment costs a rendezvous; of 8 KiB .. 512 KiB, 256 KiB was
 * best for 1-4 MiB messages at 4 ranks. */
#define PNBC_BCAST_SEGSIZE (256 * 1024)

static pnbc_ref_t bcast_buffer(void)
{
    return pnbc_ref(PNBC_BUF_RECV, 0);  /* bcast's single buffer is rbuf */
}

static int bcast_vrank(const pnbc_coll_args_t *a)
{
    return (a->rank - a->root + a->size) % a->size;
}

static int bcast_real(const pnbc_coll_args_t *a, int v)
{
    return (v + a->root) % a->size;
}

/*
 * The k-nomial tree behind binomial (radix 2) and knomial: write v in
 * base `radix`; v's parent clears v's lowest non-zero digit, and v's
 * children add j * radix^l (j = 1..radix-1) for every level l below that
 * digit, largest subtrees first.  One round to receive the whole
 * message, one to send it to every child.
 */
static void bcast_knomial_tree(pnbc_schedule_t *s, const pnbc_coll_args_t *a, int radix)
{
    const int p = a->size, v = bcast_vrank(a);
    long level = 1;     /* weight of v's lowest non-zero digit (>= p for the root) */

    if (0 == a->count || 1 == p) {
        return;
    }
    while (level < p && 0 == (v / level) % radix) {
        level *= radix;
    }
    if (0 != v) {
        const int parent = v - (int) ((v / level) % radix * level);
        pnbc_sched_round(s);
        pnbc_sched_recv(s, bcast_buffer(), a->count, a->dtype, bcast_real(a, parent));
    }
    pnbc_sched_round(s);
    for (level /= radix; level > 0; level /= radix) {
        for (long child = v + level; child < p && child < v + radix * level; child += level) {
            pnbc_sched_send(s, bcast_buffer(), a->count, a->dtype, bcast_real(a, (int) child));
        }
    }
}

/*
 * pnbc_bcast_binomial
 *   Accepts: any size, root, count, datatype.
 *   Moves:   v receives from v minus its lowest set bit, then sends to
 *            v + 2^k for every 2^k below that bit, largest subtree first
 *            (the k-nomial tree above with radix 2).
 *
 *   p=6, root 0:  round 1: 0->4 0->2 0->1 | 2->3, 4->5 once they have it
 *        v=0 -> {4, 2, 1};  v=2 -> {3};  v=4 -> {5}
 */
void pnbc_bcast_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    bcast_knomial_tree(s, a, 2);
}

/*
 * pnbc_bcast_knomial
 *   Accepts: any size, root, count, datatype.
 *   Moves:   the k-nomial tree with radix PNBC_BCAST_KNOMIAL_RADIX (4):
 *            depth log4(p) instead of log2(p), at the price of up to
 *            three sends per level from each inner node.  For small
 *            messages, where a hop costs more than a send; with p <= 4
 *            it is linear.
 *
 *   p=6, radix 4:  v=0 -> {4, 1, 2, 3};  v=4 -> {5}
 *                  (two levels; binomial needs three)
 */
void pnbc_bcast_knomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    bcast_knomial_tree(s, a, PNBC_BCAST_KNOMIAL_RADIX);
}

/*
 * pnbc_bcast_linear
 *   Accepts: any size, root, count, datatype.
 *   Moves:   the root sends to every other rank in one round.  Best for
 *            two or three ranks, where a tree only adds a hop.
 */
void pnbc_bcast_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    if (0 == a->count || 1 == a->size) {
        return;
    }
    pnbc_sched_round(s);
    if (a->rank != a->root) {
        pnbc_sched_recv(s, bcast_buffer(), a->count, a->dtype, a->root);
        return;
    }
    for (int i = 1; i < a->size; ++i) {
        pnbc_sched_send(s, bcast_buffer(), a->count, a->dtype, (a->root + i) % a->size);
    }
}

/*
 * The builders that cut the message (pipeline, binary_pipeline,
 * scatter_allgather) cut its byte image: MPI lets the root and the others
 * describe the buffer by different (count, datatype) pairs of one type
 * signature -- a vector at the root, contiguous doubles elsewhere --
 * whose elements do not line up, while the signature's bytes are the
 * same everywhere.  A rank whose datatype lays the count out contiguously
 * cuts its buffer in place (from the true lower bound); another packs it
 * into a temporary first (root) or unpacks it after (the others).  `cut`
 * builds on args whose count and datatype are the image's bytes.
 */
static void bcast_on_image(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                           void (*cut)(pnbc_schedule_t *s, const pnbc_coll_args_t *a))
{
    pnbc_coll_args_t b = *a;
    ptrdiff_t true_lb, true_extent;

    b.count = a->count * a->dtype->super.size;
    b.dtype = MPI_BYTE;
    if (0 == b.count || 1 == a->size) {
        return;
    }
    uint32_t mark = pnbc_sched_mark(s);
    if (ompi_datatype_is_contiguous_memory_layout(a->dtype, a->count)) {
        ompi_datatype_get_true_extent(a->dtype, &true_lb, &true_extent);
        cut(s, &b);
        pnbc_sched_rebase(s, mark, PNBC_BUF_RECV, pnbc_ref(PNBC_BUF_RECV, true_lb));
        return;
    }
    const pnbc_ref_t image = pnbc_sched_tmp(s, b.count, MPI_BYTE);
    const bool root = (a->rank == a->root);
    if (root) {
        pnbc_sched_round(s);
        pnbc_sched_copy(s, bcast_buffer(), a->count, a->dtype, image, b.count, MPI_BYTE);
        mark = pnbc_sched_mark(s);
    }
    cut(s, &b);
    pnbc_sched_rebase(s, mark, PNBC_BUF_RECV, image);
    if (!root) {
        pnbc_sched_round(s);
        pnbc_sched_copy(s, image, b.count, MPI_BYTE, bcast_buffer(), a->count, a->dtype);
    }
}

/*
 * Segmented broadcast down any tree (virtual ranks; parent < 0 at the
 * root).  Step t: an inner rank receives segment t from its parent while
 * it forwards segment t-1 to its children, so a segment moves one level
 * per step and the message takes nseg + depth - 1 steps instead of
 * nseg * depth.  The root sends segment t in step t.  A leaf forwards
 * nothing, so it posts every receive at once in its only round.
 * Each pair of ranks sees its segments in order 0, 1, ... on both sides.
 */
static void bcast_segmented_tree(pnbc_schedule_t *s, const pnbc_coll_args_t *a, int parent,
                                 const int *children, int nchildren)
{
    const pnbc_segments_t g = pnbc_segments(a->count, a->dtype, a->segsize, PNBC_BCAST_SEGSIZE);
    const bool root = parent < 0;

    if (0 == nchildren) {
        pnbc_sched_round(s);
        for (size_t k = 0; k < g.nseg; ++k) {
            pnbc_sched_recv(s, pnbc_seg_ref(&g, bcast_buffer(), k), pnbc_seg_count(&g, k),
                            a->dtype, bcast_real(a, parent));
        }
        return;
    }
    for (size_t t = 0; t <= g.nseg; ++t) {
        pnbc_sched_round(s);
        if (!root && t < g.nseg) {
            pnbc_sched_recv(s, pnbc_seg_ref(&g, bcast_buffer(), t), pnbc_seg_count(&g, t),
                            a->dtype, bcast_real(a, parent));
        }
        const size_t ready = root ? t : t - 1;  /* segment held since the last step */
        if ((root || t > 0) && ready < g.nseg) {
            for (int c = 0; c < nchildren; ++c) {
                pnbc_sched_send(s, pnbc_seg_ref(&g, bcast_buffer(), ready),
                                pnbc_seg_count(&g, ready), a->dtype, bcast_real(a, children[c]));
            }
        }
    }
}

/*
 * pnbc_bcast_pipeline
 *   Accepts: any size, root, count, datatype.
 *   Moves:   a chain v -> v+1 in segments of segsize bytes of the
 *            message's image (default PNBC_BCAST_SEGSIZE): in step t
 *            rank v receives segment t from v-1 and forwards t-1 to v+1.
 *            Every rank sends each byte once, so for large messages the
 *            time tends to one message time, whatever p.
 *
 *   p=4, 3 segments:  step 0: 0->1 s0
 *                     step 1: 0->1 s1, 1->2 s0
 *                     step 2: 0->1 s2, 1->2 s1, 2->3 s0
 *                     step 3: 1->2 s2, 2->3 s1  |  step 4: 2->3 s2
 */
static void bcast_pipeline_cut(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, v = bcast_vrank(a);
    const int next = v + 1;

    if (0 == a->count || 1 == p) {
        return;
    }
    bcast_segmented_tree(s, a, v - 1, &next, next < p ? 1 : 0);
}

/*
 * pnbc_bcast_binary_pipeline
 *   Accepts: any size, root, count, datatype.
 *   Moves:   a binary tree (children of v: 2v+1, 2v+2) in segments, as
 *            pnbc_bcast_pipeline: inner ranks forward segment t-1 to both
 *            children while receiving segment t.  Depth log2(p) instead
 *            of p-1, at twice the sending per inner rank.
 *
 *   p=6:  0 -> {1, 2};  1 -> {3, 4};  2 -> {5}
 *         step t: 0->1,2 s(t) | 1->3,4 s(t-1), 2->5 s(t-1)
 */
static void bcast_binary_pipeline_cut(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, v = bcast_vrank(a);
    int children[2], n = 0;

    if (0 == a->count || 1 == p) {
        return;
    }
    for (int c = 2 * v + 1; c <= 2 * v + 2 && c < p; ++c) {
        children[n++] = c;
    }
    bcast_segmented_tree(s, a, (v > 0) ? (v - 1) / 2 : -1, children, n);
}

/* Element range of blocks [first, last) of the scatter-allgather
 * partition, as a message between v and peer (skipped when empty: both
 * sides compute the same range). */
static void sag_blocks(pnbc_schedule_t *s, const pnbc_coll_args_t *a, bool send, int first,
                       int last, int peer)
{
    const size_t from = pnbc_block_first(a->count, a->size, first);
    const size_t n = pnbc_block_first(a->count, a->size, last) - from;

    if (0 == n) {
        return;
    }
    pnbc_ref_t ref = pnbc_ref_shift(bcast_buffer(), (ptrdiff_t) from * pnbc_extent(a->dtype));
    if (send) {
        pnbc_sched_send(s, ref, n, a->dtype, bcast_real(a, peer));
    } else {
        pnbc_sched_recv(s, ref, n, a->dtype, bcast_real(a, peer));
    }
}

/* Blocks held by virtual rank w after the binomial scatter: its subtree
 * [w, w + lowest set bit of w), everything at the root. */
static bool sag_holds(int w, int block)
{
    return 0 == w || (block >= w && block < w + (w & -w));
}

/*
 * pnbc_bcast_scatter_allgather
 *   Accepts: any size, root, count, datatype.
 *   Moves:   the message's image is cut into p blocks of bytes
 *            (balanced; some empty when it has fewer than p bytes); block
 *            w belongs to virtual rank w.  Binomial scatter: v receives
 *            the blocks of its subtree [v, v + lowbit(v)) from its parent
 *            in one message and passes each child its subtree's blocks.
 *            Ring allgather: in step j v sends block v-j to v+1 and
 *            receives block v-j-1 from v-1, except blocks the receiver
 *            got in the scatter (so the root receives nothing).
 *            Everything lands where it belongs in the image (the user's
 *            buffer unless packed); each rank receives about the
 *            message's size in total, so for large messages it beats
 *            every tree.
 *
 *   p=4 (blocks b0..b3):  scatter:  0->2 b2-b3, 0->1 b1 | 2->3 b3
 *        ring j=0:  0->1 b0   1->2 b1   2->3 b2
 *             j=1:  0->1 b3   1->2 b0   2->3 b1
 *             j=2:  0->1 b2             2->3 b0   (2 has b3; 3->0 never)
 */
static void bcast_scatter_allgather_cut(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, v = bcast_vrank(a);
    int span = v & -v;      /* size of v's subtree (before clipping to p) */

    if (0 == a->count || 1 == p) {
        return;
    }
    if (0 != v) {
        pnbc_sched_round(s);
        sag_blocks(s, a, false, v, (v + span < p) ? v + span : p, v - span);
    } else {
        span = 1;           /* the root's subtree is everything */
        while (span < p) {
            span <<= 1;
        }
    }
    pnbc_sched_round(s);
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        if (v + mask < p) {
            sag_blocks(s, a, true, v + mask, (v + 2 * mask < p) ? v + 2 * mask : p, v + mask);
        }
    }
    /* Ring step 0 shares the round of the scatter sends: it needs only
     * v's own block, which v has by now. */
    const int next = (v + 1) % p, prev = (v - 1 + p) % p;
    for (int j = 0; j < p - 1; ++j) {
        const int out = (v - j + p) % p, in = (v - j - 1 + p) % p;
        if (j > 0) {
            pnbc_sched_round(s);
        }
        if (!sag_holds(next, out)) {
            sag_blocks(s, a, true, out, out + 1, next);
        }
        if (!sag_holds(v, in)) {
            sag_blocks(s, a, false, in, in + 1, prev);
        }
    }
}

void pnbc_bcast_pipeline(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    bcast_on_image(s, a, bcast_pipeline_cut);
}

void pnbc_bcast_binary_pipeline(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    bcast_on_image(s, a, bcast_binary_pipeline_cut);
}

void pnbc_bcast_scatter_allgather(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    bcast_on_image(s, a, bcast_scatter_allgather_cut);
}

const pnbc_algorithm_t pnbc_bcast_algorithms[] = {
    { "binomial", pnbc_bcast_binomial, NULL },
    { "linear", pnbc_bcast_linear, NULL },
    { "knomial", pnbc_bcast_knomial, NULL },
    { "pipeline", pnbc_bcast_pipeline, NULL },
    { "binary_pipeline", pnbc_bcast_binary_pipeline, NULL },
    { "scatter_allgather", pnbc_bcast_scatter_allgather, NULL },
    { NULL, NULL, NULL }
};
