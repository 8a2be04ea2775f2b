/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Reduce algorithms.
 *
 * Operand handling (datatype views, operand order for non-commutative
 * ops, scratch buffers) is shared with the other reductions: see
 * coll_pnbc_reduce_view.h.
 */

#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_reduce_view.h"

#include <stdlib.h>

/* Default segment of the pipelined reduce when the request names none
 * (coll_pnbc_segsize / MPI_Info pnbc_segsize).  Over shared memory every
 * segment costs a rendezvous; of 4 KiB .. 512 KiB, 256 KiB was best for
 * 1-4 MiB vectors at 2-4 ranks. */
#define PNBC_REDUCE_SEGSIZE (256 * 1024)

/* Bytes from one op element to the next. */
static ptrdiff_t view_unit(const pnbc_reduce_view_t *v)
{
    return pnbc_extent(v->wtype);
}

/* The real root of a non-commutative reduce gets the result from the
 * tree's root (rank 0) once its own part of the tree is sent. */
static void reduce_receive_result(pnbc_schedule_t *s, pnbc_reduce_view_t *v, int from)
{
    pnbc_ref_t landing = v->packed ? pnbc_view_spare(s, v, v->in) : v->out;
    pnbc_sched_round(s);
    pnbc_view_recv(s, v, landing, from);
    pnbc_sched_round(s);
    pnbc_view_finish(s, v, landing);
}

/*
 * pnbc_reduce_binomial
 *   Accepts: any size, root, count, datatype, op (commutative or not).
 *   Moves:   binomial tree; v = rank - tree_root (mod p).  At step 2^k a
 *            rank with bit k set sends its partial result to v - 2^k and
 *            leaves; otherwise it receives v + 2^k's partial result and
 *            folds it in (the child always holds higher ranks).  For a
 *            commutative op the tree is rooted at the root; for a
 *            non-commutative op it is rooted at rank 0, so that every
 *            subtree is a contiguous block of ranks, and rank 0 hands the
 *            result to the root at the end.
 *
 *   p=5, root 0:  step 1: 1->0 3->2 | step 2: 2->0 | step 4: 4->0
 */
void pnbc_reduce_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    pnbc_view_open(s, a, &v);
    const int tree_root = v.commutative ? a->root : 0;
    const int vr = (rank - tree_root + p) % p;
    const bool owns_result = (rank == a->root);
    pnbc_ref_t acc = v.in;
    bool acc_writable = v.in_writable;

    pnbc_sched_round(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            pnbc_view_send(s, &v, acc, (vr - mask + tree_root) % p);
            break;              /* this rank's part of the tree is done */
        }
        if (vr + mask < p) {
            pnbc_ref_t landing = (acc_writable && v.commutative)
                                     ? pnbc_view_spare(s, &v, acc)
                                     : pnbc_view_landing(s, &v, acc, owns_result && vr == 0);
            pnbc_view_recv(s, &v, landing, (vr + mask + tree_root) % p);
            pnbc_sched_round(s);
            acc = pnbc_view_combine(s, &v, acc, &acc_writable, landing, false);
        }
    }
    if (0 == vr && tree_root == a->root) {
        pnbc_view_finish(s, &v, acc);
    } else if (0 == vr) {
        pnbc_view_send(s, &v, acc, a->root);     /* rank 0 -> the real root */
    } else if (owns_result) {
        reduce_receive_result(s, &v, tree_root);
    }
}

/*
 * The linear root's part, on a rank that folds every contribution
 * (reduce's root, every rank of allreduce's direct): receive the other
 * p-1 contributions in one round and fold them from the highest rank
 * down, so the order is canonical for any op.  `share`: in that round
 * also send this rank's own contribution to every other rank (read from
 * where it stays intact while the others arrive).
 */
void pnbc_reduce_linear_fold(pnbc_schedule_t *s, pnbc_reduce_view_t *v, bool share)
{
    const int p = v->args->size, rank = v->args->rank;

    /* Rank p-1's data seeds the accumulator in a writable home. */
    pnbc_ref_t acc;
    if (rank == p - 1) {
        acc = pnbc_view_writable_acc(s, v);
    } else {
        acc = v->packed ? pnbc_sched_tmp(s, v->wcount, v->wtype) : v->out;
        if (pnbc_ref_eq(acc, v->in)) {  /* in place: keep own data apart */
            v->in = pnbc_sched_tmp(s, v->wcount, v->wtype);
            pnbc_sched_copy(s, v->out, v->wcount, v->wtype, v->in, v->wcount, v->wtype);
        }
        pnbc_view_recv(s, v, acc, p - 1);
    }
    pnbc_ref_t *from = (p > 1) ? calloc((size_t) p, sizeof(*from)) : NULL;
    if (p > 1 && NULL == from) {
        s->error = OMPI_ERR_OUT_OF_RESOURCE;
        return;
    }
    for (int i = 0; i < p - 1; ++i) {
        from[i] = (i == rank) ? v->in : pnbc_sched_tmp(s, v->wcount, v->wtype);
        if (i != rank) {
            pnbc_view_recv(s, v, from[i], i);
        }
    }
    for (int i = 0; share && i < p; ++i) {
        if (i != rank) {
            pnbc_view_send(s, v, v->in, i);
        }
    }
    pnbc_sched_round(s);
    for (int i = p - 2; i >= 0; --i) {
        pnbc_sched_reduce(s, from[i], acc, v->wcount, v->wtype, v->op);
    }
    free(from);
    pnbc_view_finish(s, v, acc);
}

/*
 * pnbc_reduce_linear
 *   Accepts: any size, root, count, datatype, op.
 *   Moves:   every rank sends its contribution to the root in one round;
 *            the root folds them from the highest rank down, so the order
 *            is canonical for any op.  Memory at the root: p-1 operands.
 */
void pnbc_reduce_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    pnbc_view_open(s, a, &v);
    pnbc_sched_round(s);
    if (a->rank != a->root) {
        pnbc_view_send(s, &v, v.in, a->root);
        return;
    }
    pnbc_reduce_linear_fold(s, &v, false);
}

/* ------------------------------------------------------------------ */
/* pipeline                                                           */
/* ------------------------------------------------------------------ */

/* One rank's place in the reduce chain (ranks, not virtual ranks). */
typedef struct rp_link_t {
    int prev;           /* sends us partial results; -1 at the head */
    int next;           /* gets ours; -1 at the end of the chain */
    bool result;        /* our output is the final result (we are the root) */
    int final_from;     /* non-commutative root other than 0: rank 0, which
                           sends it the result segments; else -1 */
    size_t final_lag;   /* step of result segment k at that root: k + lag */
} rp_link_t;

/* Where this rank keeps the segments of a reduce pipeline. */
typedef struct rp_bufs_t {
    pnbc_segments_t g;
    pnbc_ref_t landing[2];  /* double buffer for incoming segments */
    pnbc_ref_t home;        /* result rank: the whole result vector */
    bool direct;            /* result rank: segments land in home */
} rp_bufs_t;

static pnbc_ref_t rp_landing(pnbc_schedule_t *s, pnbc_reduce_view_t *v, rp_bufs_t *b,
                             size_t k)
{
    if (b->direct) {
        return pnbc_seg_ref(&b->g, b->home, k);
    }
    if (PNBC_BUF_NONE == b->landing[k % 2].buf) {
        b->landing[k % 2] = pnbc_sched_tmp(s, b->g.per_seg, v->wtype);
    }
    return b->landing[k % 2];
}

/*
 * Fold this rank's segment k into the incoming partial result, which
 * holds higher chain positions (right operand).  Returns where the
 * combined segment is.  In-place result rank: its own data is in home,
 * so the sum goes there; a non-commutative op must keep its own data on
 * the left, which costs a copy back.
 */
static pnbc_ref_t rp_combine(pnbc_schedule_t *s, pnbc_reduce_view_t *v, rp_bufs_t *b,
                             const rp_link_t *l, size_t k)
{
    const size_t n = pnbc_seg_count(&b->g, k);
    const pnbc_ref_t own = pnbc_seg_ref(&b->g, v->in, k);
    const pnbc_ref_t incoming = rp_landing(s, v, b, k);

    if (!l->result || b->direct) {
        pnbc_sched_reduce(s, own, incoming, n, v->wtype, v->op);
        return incoming;
    }
    if (v->commutative) {
        pnbc_sched_reduce(s, incoming, own, n, v->wtype, v->op);
    } else {
        pnbc_sched_reduce(s, own, incoming, n, v->wtype, v->op);
        pnbc_sched_copy(s, incoming, n, v->wtype, own, n, v->wtype);
    }
    return own;
}

static rp_link_t rp_link(const pnbc_coll_args_t *a, const pnbc_reduce_view_t *v)
{
    const int p = a->size, rank = a->rank, root = a->root;
    const int tree_root = v->commutative ? root : 0;
    const int vr = (rank - tree_root + p) % p;
    rp_link_t l = { -1, -1, false, -1, 0 };

    if (vr < p - 1) {
        l.prev = (rank + 1) % p;
    }
    if (vr > 0) {
        l.next = (rank - 1 + p) % p;
    } else if (tree_root != root) {
        l.next = root;
    }
    l.result = (0 == vr && tree_root == root);
    if (rank == root && tree_root != root) {
        /* The chain reaches rank 0 `root` steps after passing the root;
         * one more for the hand-off: by then rank 0 has the segment. */
        l.final_from = tree_root;
        l.final_lag = (size_t) root + 1;
    }
    return l;
}

/*
 * pnbc_reduce_pipeline
 *   Accepts: any size, root, count, datatype, op (commutative or not).
 *   Moves:   a chain in segments of segsize bytes (default
 *            PNBC_REDUCE_SEGSIZE; whole op elements).  Commutative op:
 *            chain root+p-1 -> ... -> root+1 -> root.  Non-commutative:
 *            chain p-1 -> ... -> 0 in rank order, so every rank folds
 *            its own data on the left of the higher ranks' partial sum
 *            (canonical order), and rank 0 forwards the result segments
 *            to the root.  In step t a rank receives segment t, adds its
 *            own segment t-1 into the partial sum received in step t-1
 *            and forwards it: two segment buffers per rank, and the root
 *            receives and reduces straight into rbuf.
 *
 *   p=4, root 0, segments s0..s2 (sk^r: segment k summed over ranks r..3),
 *   in time:  0: 3->2 s0
 *             1: 3->2 s1   2->1 s0^2
 *             2: 3->2 s2   2->1 s1^2   1->0 s0^1
 *             3:           2->1 s2^2   1->0 s1^1   0: rbuf s0 = own s0 + s0^1
 *             4:                       1->0 s2^1   0: rbuf s1 = ...
 *             5:                                   0: rbuf s2 = ...
 */
void pnbc_reduce_pipeline(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    pnbc_view_open(s, a, &v);
    if (1 == a->size) {
        pnbc_view_finish(s, &v, v.in);
        return;
    }
    const rp_link_t l = rp_link(a, &v);
    rp_bufs_t b = { .g = pnbc_segments(v.wcount, v.wtype, a->segsize, PNBC_REDUCE_SEGSIZE),
                    .landing = { PNBC_REF_NONE, PNBC_REF_NONE } };
    if (l.result) {
        b.home = v.packed ? pnbc_sched_tmp(s, v.wcount, v.wtype) : v.out;
        b.direct = !pnbc_ref_eq(b.home, v.in);      /* in place: own data is in home */
    }
    const pnbc_ref_t final_home = v.packed ? v.in : v.out;
    size_t steps = b.g.nseg + 1;
    if (l.final_from >= 0 && b.g.nseg + l.final_lag > steps) {
        steps = b.g.nseg + l.final_lag;
    }
    for (size_t t = 0; t < steps; ++t) {
        pnbc_ref_t ready = PNBC_REF_NONE;       /* segment t-1 (head: t), summed */
        const size_t k = (l.prev < 0) ? t : t - 1;
        pnbc_sched_round(s);
        if (l.prev >= 0 && t < b.g.nseg) {
            pnbc_sched_recv(s, rp_landing(s, &v, &b, t), pnbc_seg_count(&b.g, t), v.wtype,
                            l.prev);
        }
        if (l.prev < 0 && t < b.g.nseg) {
            ready = pnbc_seg_ref(&b.g, v.in, t);
        } else if (l.prev >= 0 && t >= 1 && k < b.g.nseg) {
            ready = rp_combine(s, &v, &b, &l, k);
        }
        if (l.next >= 0 && PNBC_BUF_NONE != ready.buf) {
            pnbc_sched_send(s, ready, pnbc_seg_count(&b.g, k), v.wtype, l.next);
        }
        /* After this step's combine: the result may land on our own data. */
        if (l.final_from >= 0 && t >= l.final_lag && t - l.final_lag < b.g.nseg) {
            const size_t f = t - l.final_lag;
            pnbc_sched_recv(s, pnbc_seg_ref(&b.g, final_home, f), pnbc_seg_count(&b.g, f),
                            v.wtype, l.final_from);
        }
    }
    if (l.result || l.final_from >= 0) {
        pnbc_sched_round(s);
        pnbc_view_finish(s, &v, l.result ? b.home : final_home);
    }
}

/* ------------------------------------------------------------------ */
/* reduce_scatter_gather                                              */
/* ------------------------------------------------------------------ */

/* A rank's state in the reduce-scatter-gather schedule. */
typedef struct rsg_t {
    pnbc_reduce_view_t v;
    ptrdiff_t unit;         /* bytes per op element */
    int p, pof2, rem;
    pnbc_ref_t home;        /* full-length vector: the partial sums this rank
                               is responsible for (root: the result) */
    bool home_summed;       /* home holds own data (in place, packed) or a sum */
    pnbc_ref_t landing;     /* partner data when home is already summed */
    /* fold of the last received range, done at the head of the next round */
    bool pending;
    pnbc_ref_t pend_src;
    size_t pend_first, pend_n;
} rsg_t;

/* Elements [first, first + n) of buffer `base`. */
static pnbc_ref_t rsg_at(const rsg_t *w, pnbc_ref_t base, size_t first)
{
    return pnbc_ref_shift(base, (ptrdiff_t) first * w->unit);
}

/* First element of block i of the pof2 blocks. */
static size_t rsg_block(const rsg_t *w, int i)
{
    return pnbc_block_first(w->v.wcount, w->pof2, i);
}

/* Rank of the survivor with new rank nr (virtual ranks: root = 0; of the
 * first 2*rem virtual ranks only the even ones survive the fold). */
static int rsg_real(const pnbc_coll_args_t *a, const rsg_t *w, int nr)
{
    const int vr = (nr < w->rem) ? 2 * nr : nr + w->rem;
    return (vr + a->root) % w->p;
}

/* Receive a partner's partial sums of elements [first, first + n); they
 * are folded into home at the head of the next round (rsg_fold).  Before
 * home holds anything they land in home itself, and own data is added. */
static void rsg_recv(pnbc_schedule_t *s, rsg_t *w, size_t first, size_t n, int peer)
{
    if (0 == n) {
        return;
    }
    w->pending = true;
    w->pend_first = first;
    w->pend_n = n;
    if (!w->home_summed) {
        pnbc_sched_recv(s, rsg_at(w, w->home, first), n, w->v.wtype, peer);
        w->pend_src = rsg_at(w, w->v.in, first);
        return;
    }
    /* The first landing is the largest (ranges only shrink afterwards). */
    if (PNBC_BUF_NONE == w->landing.buf) {
        w->landing = pnbc_sched_tmp(s, n, w->v.wtype);
    }
    pnbc_sched_recv(s, w->landing, n, w->v.wtype, peer);
    w->pend_src = w->landing;
}

static void rsg_fold(pnbc_schedule_t *s, rsg_t *w)
{
    if (w->pending) {
        pnbc_sched_reduce(s, w->pend_src, rsg_at(w, w->home, w->pend_first), w->pend_n,
                          w->v.wtype, w->v.op);
        w->pending = false;
        w->home_summed = true;
    }
}

/* Elements [first, first + n) of this rank's partial sums to a peer. */
static void rsg_send(pnbc_schedule_t *s, rsg_t *w, size_t first, size_t n, int peer)
{
    if (n > 0) {
        pnbc_sched_send(s, rsg_at(w, w->home_summed ? w->home : w->v.in, first), n,
                        w->v.wtype, peer);
    }
}

/*
 * pnbc_reduce_reduce_scatter_gather
 *   Accepts: any size, root, count, datatype; commutative ops only.
 *   Moves:   (Rabenseifner) virtual ranks vr = rank - root; p' = largest
 *            power of two <= p, rem = p - p'.  Fold: among vr < 2*rem,
 *            odd vr sends its vector to vr-1 and is done (the root, vr 0,
 *            always stays).  The p' survivors (new ranks nr) cut the
 *            vector into p' balanced blocks and reduce-scatter by
 *            recursive halving: with nr ^ 2^k for k = log2(p')-1 .. 0,
 *            each sends the half of its current block range it gives up
 *            and folds in the partner's copy of the half it keeps, until
 *            nr holds the sum of block nr.  Binomial gather to nr 0: the
 *            blocks of nr's subtree [nr, nr + lowbit(nr)) travel as one
 *            message, straight into their place.  Each rank sends and
 *            reduces about 2 * count elements in total (binomial:
 *            count * log2 p), and the root sums into rbuf.
 *
 *   p=4, root 0 (blocks b0..b3):  halving  0<->2 (0 keeps b0-1, 2 keeps b2-3)
 *                                          1<->3
 *                                 halving  0<->1 (b0 / b1)  2<->3 (b2 / b3)
 *                                 gather   1->0 b1, 3->2 b3 | 2->0 b2-3
 */
void pnbc_reduce_reduce_scatter_gather(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size;
    const int vr = (a->rank - a->root + p) % p;
    rsg_t w = { .p = p, .pof2 = pnbc_pow2_floor(p), .landing = PNBC_REF_NONE };

    if (0 == a->count) {
        return;
    }
    pnbc_view_open(s, a, &w.v);
    if (1 == p) {
        pnbc_view_finish(s, &w.v, w.v.in);
        return;
    }
    w.unit = view_unit(&w.v);
    w.rem = p - w.pof2;

    pnbc_sched_round(s);
    if (vr < 2 * w.rem && 1 == vr % 2) {
        pnbc_sched_send(s, w.v.in, w.v.wcount, w.v.wtype, (a->rank - 1 + p) % p);
        return;
    }
    /* The root sums into rbuf; a writable contribution (in place, packed)
     * is its own accumulator; anyone else sums into a temporary. */
    if (0 == vr && !w.v.packed) {
        w.home = w.v.out;
    } else {
        w.home = w.v.in_writable ? w.v.in : pnbc_sched_tmp(s, w.v.wcount, w.v.wtype);
    }
    w.home_summed = pnbc_ref_eq(w.home, w.v.in);
    if (vr < 2 * w.rem) {
        rsg_recv(s, &w, 0, w.v.wcount, (a->rank + 1) % p);
        pnbc_sched_round(s);
    }
    const int nr = (vr < 2 * w.rem) ? vr / 2 : vr - w.rem;

    int lo = 0, hi = w.pof2;    /* block range this rank is still reducing */
    for (int mask = w.pof2 >> 1; mask > 0; mask >>= 1) {
        const int mid = lo + (hi - lo) / 2;
        const int peer = rsg_real(a, &w, nr ^ mask);
        const int give_lo = (nr & mask) ? lo : mid, give_hi = (nr & mask) ? mid : hi;
        rsg_fold(s, &w);
        if (nr & mask) {
            lo = mid;
        } else {
            hi = mid;
        }
        rsg_send(s, &w, rsg_block(&w, give_lo), rsg_block(&w, give_hi) - rsg_block(&w, give_lo),
                 peer);
        rsg_recv(s, &w, rsg_block(&w, lo), rsg_block(&w, hi) - rsg_block(&w, lo), peer);
        pnbc_sched_round(s);
    }
    rsg_fold(s, &w);

    for (int mask = 1; mask < w.pof2; mask <<= 1) {
        const int end = (nr + 2 * mask < w.pof2) ? nr + 2 * mask : w.pof2;
        if (nr & mask) {
            const size_t first = rsg_block(&w, nr);
            rsg_send(s, &w, first, rsg_block(&w, nr + mask) - first, rsg_real(a, &w, nr - mask));
            return;
        }
        const size_t first = rsg_block(&w, nr + mask);
        if (rsg_block(&w, end) > first) {
            pnbc_sched_recv(s, rsg_at(&w, w.home, first), rsg_block(&w, end) - first,
                            w.v.wtype, rsg_real(a, &w, nr + mask));
        }
        pnbc_sched_round(s);
    }
    pnbc_view_finish(s, &w.v, w.home);
}

const pnbc_algorithm_t pnbc_reduce_algorithms[] = {
    { "binomial", pnbc_reduce_binomial, NULL },
    { "linear", pnbc_reduce_linear, NULL },
    { "pipeline", pnbc_reduce_pipeline, NULL },
    { "reduce_scatter_gather", pnbc_reduce_reduce_scatter_gather, pnbc_usable_commutative },
    { NULL, NULL, NULL }
};
