/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Allreduce algorithms.  Operand handling (datatype views, operand order
 * for non-commutative ops, scratch buffers) is shared with the other
 * reductions: see coll_pnbc_reduce_view.h.
 *
 *   recursive_doubling  latency: log2(p) rounds of whole vectors
 *   reduce_bcast        binomial reduce + binomial bcast
 *   direct              latency on few ranks: one round, every rank
 *                       folds every contribution
 *   rabenseifner        bandwidth: recursive-halving reduce-scatter +
 *                       recursive-doubling allgather (commutative ops)
 *   ring                bandwidth, neighbours only: ring reduce-scatter
 *                       (segmented) + ring allgather (commutative ops)
 *
 * Non-powers of two.  recursive_doubling and rabenseifner work on p' =
 * the largest power of two <= p ranks.  The rem = p - p' extra ranks are
 * folded in first: among ranks < 2*rem, even rank 2i hands its whole
 * contribution to 2i+1 and waits for the result, which 2i+1 returns at
 * the end.  The p' ranks that stay are numbered by virtual rank, in rank
 * order (vrank_to_rank), so lower virtual ranks hold lower ranks' data.
 *
 * Avoiding copies.  When this rank's contribution is read-only (sbuf,
 * not in place), the first message combined with it is received straight
 * into rbuf and the contribution is folded into it there (rbuf = in (op)
 * rbuf), instead of copying sbuf to rbuf first: that needs `in` on the
 * left, i.e. a commutative op or a message from higher ranks.
 */

#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_reduce_view.h"

/* ------------------------------------------------------------------ */
/* Folding the ranks beyond a power of two                            */
/* ------------------------------------------------------------------ */

static int vrank_to_rank(int vrank, int rem)
{
    return (vrank < rem) ? 2 * vrank + 1 : vrank + rem;
}

/* An even rank < 2*rem: its whole part of the algorithm.  The result
 * arrives in the user's type, straight into rbuf. */
static void fold_out(pnbc_schedule_t *s, pnbc_reduce_view_t *v)
{
    const pnbc_coll_args_t *a = v->args;
    pnbc_view_send(s, v, v->in, a->rank + 1);
    pnbc_sched_round(s);
    pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, a->rank + 1);
}

/* An odd rank < 2*rem, once the result is in rbuf: return it to rank-1. */
static void fold_return(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_sched_round(s);
    pnbc_sched_send(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, a->rank - 1);
}

/* ------------------------------------------------------------------ */
/* Whole vectors                                                      */
/* ------------------------------------------------------------------ */

/*
 * pnbc_allreduce_recursive_doubling
 *   Accepts: any size, count, datatype, op (commutative or not).
 *   Moves:   after the fold (top of file), the p' remaining ranks
 *            exchange full vectors with virtual rank v ^ 2^k for each k
 *            and fold, lower ranks' data on the left.  Finally 2i+1
 *            returns the result to 2i.  The first incoming vector lands
 *            in rbuf and the contribution is reduced into it (no copy of
 *            sbuf) unless the op is non-commutative and the message comes
 *            from lower ranks; later ones land in a spare and are reduced
 *            into the accumulator.
 *
 *   p=6 (rem 2):  0->1 2->3 | v: 1=0 3=1 4=2 5=3 | 1<->3 4<->5 | 1<->4 3<->5
 *                 | 1->0 3->2
 *   p=2, 8 B, not in place:  recv rbuf <- peer, send sbuf -> peer |
 *                 rbuf = sbuf (op) rbuf        (one round, no copy)
 */
void pnbc_allreduce_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    const int pof2 = pnbc_pow2_floor(p), rem = p - pof2;
    const bool paired = rank < 2 * rem;     /* folded: 2i leaves, 2i+1 stays */
    pnbc_view_open(s, a, &v);
    pnbc_sched_round(s);

    if (paired && 0 == rank % 2) {
        fold_out(s, &v);
        return;
    }
    const int vrank = paired ? rank / 2 : rank - rem;
    /* The first message combined comes from lower ranks on a paired rank
     * and on odd virtual ranks: a non-commutative op then needs the
     * contribution on the right, in a writable accumulator. */
    const bool first_from_lower = paired || (vrank & 1);
    pnbc_ref_t acc = v.in;
    bool acc_writable = v.in_writable;
    if (!v.commutative && first_from_lower) {
        acc = pnbc_view_writable_acc(s, &v);
        acc_writable = true;
    }
    if (paired) {
        pnbc_ref_t landing = pnbc_view_landing(s, &v, acc, true);
        pnbc_view_recv(s, &v, landing, rank - 1);
        pnbc_sched_round(s);
        acc = pnbc_view_combine(s, &v, acc, &acc_writable, landing, true);
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        const int peer = vrank_to_rank(vrank ^ mask, rem);
        pnbc_ref_t landing = pnbc_view_landing(s, &v, acc, true);
        /* receive first: an eager message then finds its receive posted */
        pnbc_view_recv(s, &v, landing, peer);
        pnbc_view_send(s, &v, acc, peer);
        pnbc_sched_round(s);
        acc = pnbc_view_combine(s, &v, acc, &acc_writable, landing, peer < rank);
    }
    pnbc_view_finish(s, &v, acc);
    if (paired) {
        fold_return(s, a);
    }
}

/*
 * pnbc_allreduce_reduce_bcast
 *   Accepts: any size, count, datatype, op.
 *   Moves:   binomial reduce to rank 0, then binomial bcast from rank 0,
 *            both compiled into one schedule.  Fewest bytes per rank for
 *            tiny communicators; a building block for comparisons.
 */
void pnbc_allreduce_reduce_bcast(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_coll_args_t phase = *a;
    phase.root = 0;
    pnbc_reduce_binomial(s, &phase);
    pnbc_sched_round(s);
    pnbc_bcast_binomial(s, &phase);
}

/*
 * pnbc_allreduce_direct
 *   Accepts: any size, count, datatype, op (commutative or not).
 *   Moves:   one round: every rank sends its contribution to every other
 *            rank and receives theirs, then folds all p of them from the
 *            highest rank down (linear reduce's root, on every rank), so
 *            the order is canonical for any op.  One round instead of
 *            log2(p) + 2: where ranks share CPUs every round can cost a
 *            trip through the scheduler.  p-1 messages each way and p-1
 *            landing operands per rank: a small-vector algorithm.
 *
 *   p=3, rank 1:  send in -> 0, 2; recv t0 <- 0, rbuf <- 2 | rbuf = in (op)
 *                 rbuf; rbuf = t0 (op) rbuf
 */
void pnbc_allreduce_direct(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    pnbc_view_open(s, a, &v);
    pnbc_sched_round(s);
    pnbc_reduce_linear_fold(s, &v, true);
}

/* ------------------------------------------------------------------ */
/* Blocks of the vector (rabenseifner, ring)                          */
/* ------------------------------------------------------------------ */

/*
 * The vector, in the op's elements (the view's wtype), split into
 * `nblocks` blocks whose sizes differ by at most one element; if the
 * vector is shorter than nblocks, the last blocks are empty.  Every rank
 * computes the same split, so a message of an empty range is skipped by
 * its sender and its receiver alike.
 *
 * The result is assembled in `result`: rbuf (through the view's offset),
 * or the packed contribution itself when the datatype is not contiguous
 * (the view then unpacks it into rbuf at the end).  `in_apart` says that
 * the contribution is elsewhere (sbuf): a range of `result` that receives
 * its first partial sum can then take the message directly and have the
 * contribution folded into it -- the commutative op allows either order.
 */
typedef struct ar_work_t {
    pnbc_reduce_view_t v;
    ptrdiff_t unit;         /* bytes between consecutive op elements */
    int nblocks;
    pnbc_ref_t result;
    bool in_apart;
} ar_work_t;

/* A partial sum in flight: once it has arrived at `from`, fold it into
 * `into` (n op elements). */
typedef struct ar_fold_t {
    pnbc_ref_t from, into;
    size_t n;
} ar_fold_t;

static const ar_fold_t no_fold = { { PNBC_BUF_NONE, 0 }, { PNBC_BUF_NONE, 0 }, 0 };

static void ar_open(pnbc_schedule_t *s, const pnbc_coll_args_t *a, ar_work_t *w, int nblocks)
{
    pnbc_view_open(s, a, &w->v);
    w->unit = pnbc_extent(w->v.wtype);
    w->nblocks = nblocks;
    w->result = w->v.packed ? w->v.in : w->v.out;
    w->in_apart = !pnbc_ref_eq(w->result, w->v.in);
}

/* First op element of block b (b == nblocks: the vector's length). */
static size_t ar_lo(const ar_work_t *w, int b)
{
    const size_t n = w->v.wcount, nb = (size_t) w->nblocks;
    return (size_t) b * (n / nb) + ((size_t) b < n % nb ? (size_t) b : n % nb);
}

/* Op elements in blocks [first, first + count). */
static size_t ar_units(const ar_work_t *w, int first, int count)
{
    return ar_lo(w, first + count) - ar_lo(w, first);
}

static pnbc_ref_t ar_at(const ar_work_t *w, pnbc_ref_t base, size_t elem)
{
    return pnbc_ref_shift(base, (ptrdiff_t) elem * w->unit);
}

/* Elements [lo, lo + n) of an operand laid out like the vector. */
static void ar_send(pnbc_schedule_t *s, const ar_work_t *w, pnbc_ref_t base, size_t lo,
                    size_t n, int peer)
{
    if (n > 0) {
        pnbc_sched_send(s, ar_at(w, base, lo), n, w->v.wtype, peer);
    }
}

static void ar_recv(pnbc_schedule_t *s, const ar_work_t *w, pnbc_ref_t base, size_t lo,
                    size_t n, int peer)
{
    if (n > 0) {
        pnbc_sched_recv(s, ar_at(w, base, lo), n, w->v.wtype, peer);
    }
}

/*
 * Post the receive of a partial sum for elements [lo, lo + n) of the
 * result.  `first_touch`: this range of `result` holds nothing yet and
 * the contribution is apart, so the message lands in `result` and the
 * contribution is folded into it; otherwise it lands in `slot` and is
 * folded into `result`.  Returns the fold to add (ar_fold) once the
 * message is in, i.e. in a later round.
 */
static ar_fold_t ar_fold_recv(pnbc_schedule_t *s, const ar_work_t *w, size_t lo, size_t n,
                              int peer, bool first_touch, pnbc_ref_t slot)
{
    ar_fold_t f = { slot, ar_at(w, w->result, lo), n };
    if (first_touch && w->in_apart) {
        f.from = ar_at(w, w->v.in, lo);
        ar_recv(s, w, w->result, lo, n, peer);
    } else {
        ar_recv(s, w, slot, 0, n, peer);
    }
    return f;
}

static void ar_fold(pnbc_schedule_t *s, const ar_work_t *w, ar_fold_t f)
{
    pnbc_sched_reduce(s, f.from, f.into, f.n, w->v.wtype, w->v.op);
}

/* A landing area for up to n op elements (only when messages cannot
 * land in the result). */
static pnbc_ref_t ar_slot(pnbc_schedule_t *s, const ar_work_t *w, size_t n, bool needed)
{
    return needed ? pnbc_sched_tmp(s, n, w->v.wtype) : PNBC_REF_NONE;
}

/* One rank: the contribution is the result. */
static void ar_single(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_sched_copy(s, pnbc_view_user_in(a), a->count, a->dtype, pnbc_ref(PNBC_BUF_RECV, 0),
                    a->count, a->dtype);
}

/* ------------------------------------------------------------------ */
/* Rabenseifner                                                       */
/* ------------------------------------------------------------------ */

/* The partner distances (bits of the virtual rank) of the halving steps,
 * in order: farthest first, unless the communicator spans nodes, where
 * the distances whose partners always share a node come first, nearest
 * first: the half-vector exchanges then stay on the nodes and only the
 * smaller ones cross.  Every rank knows every rank's node, so all order
 * alike.  Returns the number of steps, log2(pof2). */
static int rab_dims(const pnbc_coll_args_t *a, int pof2, int rem, int *dims)
{
    int n = 0;
    unsigned near = 0;
    for (int m = 1; NULL != a->node_of && m < pof2; m <<= 1) {
        bool same = true;
        for (int v = 0; same && v < pof2; ++v) {
            same = a->node_of[vrank_to_rank(v, rem)] == a->node_of[vrank_to_rank(v ^ m, rem)];
        }
        near |= same ? (unsigned) m : 0;
    }
    for (int m = 1; m < pof2; m <<= 1) {
        if (near & (unsigned) m) {
            dims[n++] = m;
        }
    }
    for (int m = pof2 / 2; m >= 1; m >>= 1) {
        if (!(near & (unsigned) m)) {
            dims[n++] = m;
        }
    }
    return n;
}

/*
 * pnbc_allreduce_rabenseifner
 *   Accepts: any size, count (also count < p: empty blocks), datatype;
 *            commutative ops only (usable()).
 *   Moves:   after the fold (top of file) the p' ranks split the vector
 *            into p' blocks.  Reduce-scatter by recursive halving: with
 *            partner v ^ m for m = p'/2, ..., 1, a rank keeps the lower
 *            half of its current window if bit m of v is 0, else the
 *            upper, sends the other half, receives the partner's partial
 *            sums for the kept half and folds them in.  Then virtual rank
 *            v owns block v, and a recursive-doubling allgather in the
 *            reverse order of partners rebuilds the vector in place in
 *            the result.  Across nodes the distances m whose partners
 *            share a node go first (rab_dims): v then owns another block,
 *            and the halves stay on the nodes.  Every
 *            rank sends and receives 2 (p'-1)/p' of the vector; the first
 *            exchange lands straight in rbuf when not in place, so p=2
 *            costs two half-vector exchanges, one half-vector reduction
 *            and no copy.
 *
 *   p=4, blocks B0..B3:  m=2: 0<->2 (0 keeps B0-1, 2 keeps B2-3) 1<->3
 *                        m=1: 0<->1 (0 keeps B0, 1 keeps B1)     2<->3
 *        allgather:      m=1: 0<->1 (B0 / B1) 2<->3 | m=2: 0<->2 (B0-1 / B2-3) 1<->3
 *   p=2: 0: send in[B1], recv rbuf[B0] | rbuf[B0] = in[B0] (op) rbuf[B0],
 *           send rbuf[B0], recv rbuf[B1]
 */
void pnbc_allreduce_rabenseifner(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    ar_work_t w;

    if (0 == a->count) {
        return;
    }
    if (1 == p) {
        ar_single(s, a);
        return;
    }
    const int pof2 = pnbc_pow2_floor(p), rem = p - pof2;
    const bool paired = rank < 2 * rem;
    ar_open(s, a, &w, pof2);
    pnbc_sched_round(s);
    if (paired && 0 == rank % 2) {
        fold_out(s, &w.v);
        return;
    }
    /* Messages that cannot land in the result land in one slot: the
     * whole vector on a paired rank in place, else at most the first
     * half-window (windows shrink; the larger blocks come first).  Not
     * in place, only the first message lands in the result. */
    const size_t most = (paired && !w.in_apart) ? w.v.wcount : ar_units(&w, 0, pof2 / 2);
    const pnbc_ref_t slot = ar_slot(s, &w, most, !w.in_apart || paired || pof2 > 2);
    bool first_touch = true;
    int vrank = rank - rem;
    if (paired) {
        ar_fold_t f = ar_fold_recv(s, &w, 0, w.v.wcount, rank - 1, first_touch, slot);
        pnbc_sched_round(s);
        ar_fold(s, &w, f);
        first_touch = false;
        vrank = rank / 2;
    }

    int dims[32], keeps[32], gives[32];
    const int ndims = rab_dims(a, pof2, rem, dims);
    int window = 0;     /* first block of the current window */
    for (int k = 0; k < ndims; ++k) {
        const int half = pof2 >> (k + 1), peer = vrank_to_rank(vrank ^ dims[k], rem);
        const bool upper = vrank & dims[k];
        const int keep = upper ? window + half : window, give = upper ? window : window + half;
        ar_fold_t f = ar_fold_recv(s, &w, ar_lo(&w, keep), ar_units(&w, keep, half), peer,
                                   first_touch, slot);
        ar_send(s, &w, first_touch ? w.v.in : w.result, ar_lo(&w, give),
                ar_units(&w, give, half), peer);
        pnbc_sched_round(s);
        ar_fold(s, &w, f);
        first_touch = false;
        window = keep;
        keeps[k] = keep;
        gives[k] = give;
    }
    for (int k = ndims - 1; k >= 0; --k) {
        const int half = pof2 >> (k + 1), peer = vrank_to_rank(vrank ^ dims[k], rem);
        ar_recv(s, &w, w.result, ar_lo(&w, gives[k]), ar_units(&w, gives[k], half), peer);
        ar_send(s, &w, w.result, ar_lo(&w, keeps[k]), ar_units(&w, keeps[k], half), peer);
        pnbc_sched_round(s);
    }
    pnbc_view_finish(s, &w.v, w.result);
    if (paired) {
        fold_return(s, a);
    }
}

/* ------------------------------------------------------------------ */
/* Ring                                                               */
/* ------------------------------------------------------------------ */

/* Elements of the segment starting at `lo` of a block ending at `end`. */
static size_t seg_len(size_t lo, size_t end, size_t seg)
{
    return (lo >= end) ? 0 : (end - lo < seg) ? end - lo : seg;
}

/*
 * pnbc_allreduce_ring
 *   Accepts: any size, count (also count < p: empty blocks), datatype;
 *            commutative ops only (usable()).
 *   Moves:   p blocks.  Reduce-scatter: in step k = 0 .. p-2 rank r sends
 *            block r-k to r+1 and receives block r-k-1 from r-1, which it
 *            folds into its own; the block it sends next is the one it
 *            just completed, and after p-1 steps it owns block r+1.  Then
 *            a ring allgather: in step k it forwards block r+1-k and
 *            receives block r-k.  Only neighbours talk, and every rank
 *            sends and receives 2 (p-1)/p of the vector.
 *
 *            Segments: with a segment size (args.segsize > 0, in bytes)
 *            each reduce-scatter step moves its block in segments, one
 *            per round; the segment received in one round is folded in
 *            at the head of the next, after the receive of the following
 *            segment is posted (two landing slots alternate), so a
 *            landing slot is one segment, not one block.  Without a
 *            segment size, segments are whole blocks.  Received partial
 *            sums land straight in rbuf when not in place (every block
 *            but r is received exactly once).
 *
 *   p=3, r=0:  k=0: send B0 -> 1, recv B2 <- 2 | k=1: B2 += ..., send B2,
 *              recv B1 | B1 += ... (owns B1) | ag: send B1, recv B0 |
 *              send B0, recv B2
 */
void pnbc_allreduce_ring(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    const int right = (rank + 1) % p, left = (rank - 1 + p) % p;
    ar_work_t w;

    if (0 == a->count) {
        return;
    }
    if (1 == p) {
        ar_single(s, a);
        return;
    }
    ar_open(s, a, &w, p);
    const size_t biggest = ar_units(&w, 0, 1);
    const size_t elem_size = pnbc_type_size(w.v.wtype);
    size_t seg = biggest;
    if (a->segsize > 0 && elem_size > 0 && a->segsize / elem_size < seg) {
        seg = (a->segsize >= elem_size) ? a->segsize / elem_size : 1;
    }
    const size_t nseg = (biggest + seg - 1) / seg;
    /* The receive of a segment is posted before the previous one is
     * folded in, so two slots alternate when there is more than one. */
    const bool slots = !w.in_apart;
    const pnbc_ref_t slot[2] = { ar_slot(s, &w, seg, slots),
                                 ar_slot(s, &w, seg, slots && (size_t) (p - 1) * nseg > 1) };

    ar_fold_t pending = no_fold;
    unsigned t = 0;
    for (int k = 0; k < p - 1; ++k) {
        const int out = (rank - k + p) % p, in = (rank - k - 1 + p) % p;
        for (size_t j = 0; j < nseg; ++j, ++t) {
            const size_t out_lo = ar_lo(&w, out) + j * seg, in_lo = ar_lo(&w, in) + j * seg;
            const size_t out_end = ar_lo(&w, out + 1), in_end = ar_lo(&w, in + 1);
            const size_t n_out = seg_len(out_lo, out_end, seg), n_in = seg_len(in_lo, in_end, seg);
            pnbc_sched_round(s);
            ar_fold_t f = ar_fold_recv(s, &w, in_lo, n_in, left, true, slot[t % 2]);
            ar_fold(s, &w, pending);    /* last round's segment (with whole blocks: `out`) */
            ar_send(s, &w, (0 == k) ? w.v.in : w.result, out_lo, n_out, right);
            pending = f;
        }
    }
    pnbc_sched_round(s);
    ar_fold(s, &w, pending);
    for (int k = 0; k < p - 1; ++k) {
        const int out = (rank + 1 - k + p) % p, in = (rank - k + p) % p;
        ar_recv(s, &w, w.result, ar_lo(&w, in), ar_units(&w, in, 1), left);
        ar_send(s, &w, w.result, ar_lo(&w, out), ar_units(&w, out, 1), right);
        pnbc_sched_round(s);
    }
    pnbc_view_finish(s, &w.v, w.result);
}

/* Preference without rules: recursive doubling (fewest rounds, any op). */
const pnbc_algorithm_t pnbc_allreduce_algorithms[] = {
    { "recursive_doubling", pnbc_allreduce_recursive_doubling, NULL },
    { "reduce_bcast", pnbc_allreduce_reduce_bcast, NULL },
    { "direct", pnbc_allreduce_direct, NULL },
    { "rabenseifner", pnbc_allreduce_rabenseifner, pnbc_usable_commutative },
    { "ring", pnbc_allreduce_ring, pnbc_usable_commutative },
    { NULL, NULL, NULL }
};
