/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Reduce-scatter algorithms: MPI_Reduce_scatter and
 * MPI_Reduce_scatter_block.
 *
 * Both reduce one vector made of p blocks and leave block r at the start
 * of rank r's rbuf; they differ only in how the block sizes are given
 * (rcounts[] or one count for all).  Every builder therefore works on a
 * block table (rs_blocks_t) made from either form: one builder serves
 * both collectives and appears in both tables.
 *
 * In place, the whole input vector lives in rbuf and the result block
 * goes to the START of rbuf, wherever that block sat in the input.  The
 * rest of rbuf is left undefined (MPI says nothing about it):
 * reduce_then_scatter uses it as its accumulator.
 *
 * Operands are handled by the reduction view (coll_pnbc_reduce_view.h):
 * derived datatypes with predefined ops are reduced as their predefined
 * element, packed once per start when not contiguous.  The algorithms
 * below address sub-ranges of the vector in the view's units.
 */

#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_reduce_view.h"

#include <stdlib.h>

/* Block r of the vector: count[r] user elements from element displ[r]. */
typedef struct rs_blocks_t {
    size_t *count;      /* [p] */
    size_t *displ;      /* [p + 1]; displ[p] is the vector's length */
} rs_blocks_t;

/* The vector as the op sees it, for addressing ranges of blocks. */
typedef struct rs_work_t {
    pnbc_reduce_view_t v;
    const rs_blocks_t *b;
    size_t per_elem;    /* op elements (v.wtype) per user element */
    ptrdiff_t unit;     /* bytes per op element */
} rs_work_t;

typedef void (*rs_body_fn_t)(pnbc_schedule_t *s, const pnbc_coll_args_t *whole,
                             const rs_blocks_t *b);

static bool rs_blocks_make(pnbc_schedule_t *s, const pnbc_coll_args_t *a, rs_blocks_t *b)
{
    const int p = a->size;
    b->count = malloc((2 * (size_t) p + 1) * sizeof(size_t));
    if (NULL == b->count) {
        s->error = OMPI_ERR_OUT_OF_RESOURCE;
        return false;
    }
    b->displ = b->count + p;
    b->displ[0] = 0;
    for (int r = 0; r < p; ++r) {
        b->count[r] = (PNBC_REDUCE_SCATTER == a->coll) ? (size_t) a->rcounts[r] : a->count;
        b->displ[r + 1] = b->displ[r] + b->count[r];
    }
    return true;
}

/*
 * The part every algorithm shares: the block table, `whole` (the
 * arguments with count = the whole vector, as the reduction view and
 * reduce expect them) and the trivial cases -- nothing to reduce, or one
 * rank, whose result is its own input block.
 */
static void rs_build(pnbc_schedule_t *s, const pnbc_coll_args_t *a, rs_body_fn_t body)
{
    rs_blocks_t b;
    if (!rs_blocks_make(s, a, &b)) {
        return;
    }
    pnbc_coll_args_t whole = *a;
    whole.count = b.displ[a->size];
    if (1 == a->size) {
        pnbc_sched_copy(s, pnbc_view_user_in(a), whole.count, a->dtype,
                        pnbc_ref(PNBC_BUF_RECV, 0), whole.count, a->dtype);
    } else if (whole.count > 0) {
        body(s, &whole, &b);
    }
    free(b.count);
}

static void rs_work_open(pnbc_schedule_t *s, const pnbc_coll_args_t *whole,
                         const rs_blocks_t *b, rs_work_t *w)
{
    pnbc_view_open(s, whole, &w->v);
    w->b = b;
    w->per_elem = w->v.wcount / whole->count;
    w->unit = pnbc_extent(w->v.wtype);
}

/* Op elements in blocks [first, first + n). */
static size_t rs_units(const rs_work_t *w, int first, int n)
{
    return (w->b->displ[first + n] - w->b->displ[first]) * w->per_elem;
}

/* Where block `first` is in a buffer whose data begins with block `base`. */
static pnbc_ref_t rs_at(const rs_work_t *w, pnbc_ref_t buf, int base, int first)
{
    return pnbc_ref_shift(buf, (ptrdiff_t) rs_units(w, base, first - base) * w->unit);
}

static void rs_send(pnbc_schedule_t *s, const rs_work_t *w, pnbc_ref_t from, size_t n,
                    int peer)
{
    if (n > 0) {    /* the peer computes the same size and skips too */
        pnbc_sched_send(s, from, n, w->v.wtype, peer);
    }
}

static void rs_recv(pnbc_schedule_t *s, const rs_work_t *w, pnbc_ref_t into, size_t n,
                    int peer)
{
    if (n > 0) {
        pnbc_sched_recv(s, into, n, w->v.wtype, peer);
    }
}

/* The final step of the pairwise algorithms: this rank's block, held at
 * `result` in op elements, goes to the start of rbuf in the user's type. */
static void rs_deliver(pnbc_schedule_t *s, const rs_work_t *w, pnbc_ref_t result)
{
    const pnbc_coll_args_t *a = w->v.args;
    pnbc_sched_copy(s, result, rs_units(w, a->rank, 1), w->v.wtype,
                    pnbc_ref(PNBC_BUF_RECV, 0), w->b->count[a->rank], a->dtype);
}

/* ------------------------------------------------------------------ */
/* reduce, then scatter                                               */
/* ------------------------------------------------------------------ */

/*
 * pnbc_reduce_scatter_reduce_then_scatter
 *   Accepts: any size, block sizes, datatype and op (commutative or not).
 *   Moves:   the whole vector is reduced to rank 0 by pnbc_reduce_binomial
 *            (which keeps canonical rank order for non-commutative ops),
 *            then rank 0 sends block r to rank r, all in one round.
 *            Without MPI_IN_PLACE rank 0's rbuf holds one block only, so
 *            the reduce's result is redirected into a temporary there;
 *            in place it lands in rank 0's rbuf, where block 0 already
 *            starts at the right place.  Blocks of size 0 are not sent.
 *
 *   p=4:  reduce 1->0 3->2 | 2->0  then scatter 0->1 0->2 0->3
 */
static void rs_reduce_then_scatter(pnbc_schedule_t *s, const pnbc_coll_args_t *whole,
                                   const rs_blocks_t *b)
{
    const int p = whole->size;
    pnbc_coll_args_t reduce = *whole;
    pnbc_ref_t result = pnbc_ref(PNBC_BUF_RECV, 0);
    const uint32_t first = pnbc_sched_mark(s);

    reduce.root = 0;
    pnbc_reduce_binomial(s, &reduce);
    pnbc_sched_round(s);
    if (0 != whole->rank) {     /* the reduce wrote nothing into this rbuf */
        if (b->count[whole->rank] > 0) {
            pnbc_sched_recv(s, result, b->count[whole->rank], whole->dtype, 0);
        }
        return;
    }
    if (!whole->in_place) {
        result = pnbc_sched_tmp(s, whole->count, whole->dtype);
        pnbc_sched_rebase(s, first, PNBC_BUF_RECV, result);
    }
    const ptrdiff_t extent = pnbc_extent(whole->dtype);
    for (int r = 1; r < p; ++r) {
        if (b->count[r] > 0) {
            pnbc_sched_send(s, pnbc_ref_shift(result, (ptrdiff_t) b->displ[r] * extent),
                            b->count[r], whole->dtype, r);
        }
    }
    pnbc_sched_copy(s, result, b->count[0], whole->dtype, pnbc_ref(PNBC_BUF_RECV, 0),
                    b->count[0], whole->dtype);
}

void pnbc_reduce_scatter_reduce_then_scatter(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    rs_build(s, a, rs_reduce_then_scatter);
}

/* ------------------------------------------------------------------ */
/* recursive halving                                                  */
/* ------------------------------------------------------------------ */

/*
 * pnbc_reduce_scatter_recursive_halving
 *   Accepts: commutative ops, p a power of two; any block sizes/datatype.
 *   Moves:   log2 p steps, mask = p/2 .. 1.  Each rank is responsible
 *            for an aligned range of 2*mask blocks (all p at first); it
 *            sends the half of the range that does not hold its own block
 *            to rank ^ mask, receives that peer's partial sums of the half
 *            it keeps, and folds its own partial sums of that half into
 *            them.  The sums then live in a buffer holding exactly the
 *            kept half, so the two work buffers ping-pong and the input
 *            is never copied (the first step reads it in place).
 *
 *   p=4, blocks b0..b3:  step mask 2: 0<->2 (0 keeps b0 b1, 2 keeps b2 b3),
 *                        1<->3 | step mask 1: 0<->1, 2<->3 | rank r has br
 */
static void rs_recursive_halving(pnbc_schedule_t *s, const pnbc_coll_args_t *whole,
                                 const rs_blocks_t *b)
{
    const int rank = whole->rank;
    rs_work_t w;
    pnbc_ref_t buf[2];
    int nbuf = 0;

    rs_work_open(s, whole, b, &w);
    pnbc_ref_t cur = w.v.in;        /* my partial sums of blocks [lo, lo + 2*mask) */
    int lo = 0;
    for (int mask = whole->size / 2; mask > 0; mask >>= 1) {
        const int keep = (rank & mask) ? lo + mask : lo;
        const int give = (rank & mask) ? lo : lo + mask;
        const size_t nkeep = rs_units(&w, keep, mask);
        if (nbuf < 2) {     /* ranges only shrink: the first sizes suffice */
            buf[nbuf++] = pnbc_sched_tmp(s, nkeep, w.v.wtype);
        }
        pnbc_ref_t landing = pnbc_ref_eq(cur, buf[0]) ? buf[1] : buf[0];

        pnbc_sched_round(s);
        rs_send(s, &w, rs_at(&w, cur, lo, give), rs_units(&w, give, mask), rank ^ mask);
        rs_recv(s, &w, landing, nkeep, rank ^ mask);
        pnbc_sched_round(s);
        pnbc_sched_reduce(s, rs_at(&w, cur, lo, keep), landing, nkeep, w.v.wtype, w.v.op);
        cur = landing;
        lo = keep;
    }
    rs_deliver(s, &w, cur);
}

void pnbc_reduce_scatter_recursive_halving(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    rs_build(s, a, rs_recursive_halving);
}

static bool rs_recursive_halving_usable(const pnbc_coll_args_t *a)
{
    return pnbc_op_commutative(a->op) && pnbc_is_pow2(a->size);
}

/* ------------------------------------------------------------------ */
/* ring                                                               */
/* ------------------------------------------------------------------ */

/*
 * pnbc_reduce_scatter_ring
 *   Accepts: commutative ops; any size, block sizes and datatype.
 *   Moves:   p-1 steps around the ring.  Block j starts at rank j+1 (its
 *            input), travels r -> r+1, and every rank it passes adds its
 *            own input block j; after p-1 hops it arrives, complete, at
 *            rank j.  At step k rank r sends block r-k-1 and receives
 *            block r-k-2 (mod p).  Each rank moves (p-1)/p of the vector;
 *            two block-sized buffers alternate as landing zones.
 *
 *   p=3:  step 0: 0->1 b2, 1->2 b0, 2->0 b1 | step 1: 0->1 b1, 1->2 b2,
 *         2->0 b0 | rank r has br
 */
static void rs_ring(pnbc_schedule_t *s, const pnbc_coll_args_t *whole, const rs_blocks_t *b)
{
    const int p = whole->size, rank = whole->rank;
    const int right = (rank + 1) % p, left = (rank - 1 + p) % p;
    rs_work_t w;
    size_t largest = 0;

    rs_work_open(s, whole, b, &w);
    for (int j = 0; j < p; ++j) {
        largest = (rs_units(&w, j, 1) > largest) ? rs_units(&w, j, 1) : largest;
    }
    const pnbc_ref_t buf[2] = { pnbc_sched_tmp(s, largest, w.v.wtype),
                                pnbc_sched_tmp(s, largest, w.v.wtype) };
    pnbc_ref_t partial = PNBC_REF_NONE;     /* the block received last step */
    int held = -1;                          /* ... and its index */

    for (int k = 0; k < p - 1; ++k) {
        const int out = (rank - k - 1 + 2 * p) % p, in = (rank - k - 2 + 2 * p) % p;
        const pnbc_ref_t landing = buf[k % 2];
        pnbc_sched_round(s);
        if (held >= 0) {
            pnbc_sched_reduce(s, rs_at(&w, w.v.in, 0, held), partial, rs_units(&w, held, 1),
                              w.v.wtype, w.v.op);
        }
        rs_send(s, &w, held >= 0 ? partial : rs_at(&w, w.v.in, 0, out), rs_units(&w, out, 1),
                right);
        rs_recv(s, &w, landing, rs_units(&w, in, 1), left);
        partial = landing;
        held = in;
    }
    pnbc_sched_round(s);
    pnbc_sched_reduce(s, rs_at(&w, w.v.in, 0, rank), partial, rs_units(&w, rank, 1),
                      w.v.wtype, w.v.op);
    rs_deliver(s, &w, partial);
}

void pnbc_reduce_scatter_ring(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    rs_build(s, a, rs_ring);
}

/* The same builders serve both collectives: they read the block sizes
 * from whichever form the call gave (rs_blocks_make). */
#define RS_ALGORITHMS \
    { "recursive_halving", pnbc_reduce_scatter_recursive_halving, rs_recursive_halving_usable }, \
    { "ring", pnbc_reduce_scatter_ring, pnbc_usable_commutative }, \
    { "reduce_then_scatter", pnbc_reduce_scatter_reduce_then_scatter, NULL }, \
    { NULL, NULL, NULL }

const pnbc_algorithm_t pnbc_reduce_scatter_algorithms[] = { RS_ALGORITHMS };
const pnbc_algorithm_t pnbc_reduce_scatter_block_algorithms[] = { RS_ALGORITHMS };
