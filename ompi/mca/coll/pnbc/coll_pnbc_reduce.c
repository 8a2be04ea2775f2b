/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Reduce and allreduce algorithms.
 *
 * Operand order.  ompi_op_reduce(op, src, tgt) computes tgt = src (op) tgt,
 * so the left operand is always `src`.  For a non-commutative op every
 * combine below keeps the data of lower ranks on the left, which gives
 * the canonical result r0 (op) r1 (op) ... (op) r(p-1) (MPI-4.1 sec. 6.9.1).
 * When the accumulator holds the lower ranks, the sum is formed in the
 * buffer that just received the higher ranks' data and the accumulator
 * moves there -- a pointer swap decided at init, never a copy.
 */

#include "coll_pnbc_algorithms.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* The reduction's view of the data                                   */
/* ------------------------------------------------------------------ */

/*
 * Predefined ops are applied by Open MPI's op framework per predefined
 * element, so a derived datatype is reduced as `wcount` elements of its
 * single predefined type: in place when its memory layout is contiguous,
 * through packed temporaries otherwise.  User-defined ops receive the
 * user's datatype untouched.
 */
typedef struct reduce_view_t {
    ompi_datatype_t *wtype;     /* element type the op sees */
    size_t wcount;
    ompi_op_t *op;
    bool commutative;
    bool packed;                /* contribution/result go through temporaries */
    pnbc_ref_t in;              /* this rank's contribution */
    bool in_writable;           /* may `in` be overwritten? */
    pnbc_ref_t out;             /* the result in the user's rbuf (!packed) */
    pnbc_ref_t spare[2];        /* scratch operands, reserved on demand */
    bool spare_used[2];
    const pnbc_coll_args_t *args;
} reduce_view_t;

static pnbc_ref_t user_in_ref(const pnbc_coll_args_t *a)
{
    return pnbc_ref(a->in_place ? PNBC_BUF_RECV : PNBC_BUF_SEND, 0);
}

static void view_open(pnbc_schedule_t *s, const pnbc_coll_args_t *a, reduce_view_t *v)
{
    ompi_datatype_t *base = NULL;
    ptrdiff_t true_lb, true_extent;

    *v = (reduce_view_t) { .wtype = a->dtype, .wcount = a->count, .op = a->op,
                           .commutative = ompi_op_is_commute(a->op), .args = a };
    if (ompi_op_is_intrinsic(a->op) && !ompi_datatype_is_predefined(a->dtype)) {
        base = ompi_datatype_get_single_predefined_type_from_args(a->dtype);
    }
    if (NULL == base) {
        v->in = user_in_ref(a);
        v->out = pnbc_ref(PNBC_BUF_RECV, 0);
        v->in_writable = a->in_place;
        return;
    }
    v->wtype = base;
    v->wcount = a->count * (a->dtype->super.size / base->super.size);
    if (ompi_datatype_is_contiguous_memory_layout(a->dtype, a->count)) {
        ompi_datatype_get_true_extent(a->dtype, &true_lb, &true_extent);
        v->in = pnbc_ref_shift(user_in_ref(a), true_lb);
        v->out = pnbc_ref(PNBC_BUF_RECV, true_lb);
        v->in_writable = a->in_place;
        return;
    }
    /* Non-contiguous: pack the contribution once per start. */
    v->packed = true;
    v->in = pnbc_sched_tmp(s, v->wcount, v->wtype);
    v->in_writable = true;
    v->out = PNBC_REF_NONE;
    pnbc_sched_copy(s, user_in_ref(a), a->count, a->dtype, v->in, v->wcount, v->wtype);
}

/* A scratch operand that is not `busy`. */
static pnbc_ref_t view_spare(pnbc_schedule_t *s, reduce_view_t *v, pnbc_ref_t busy)
{
    for (int i = 0; i < 2; ++i) {
        if (!v->spare_used[i]) {
            v->spare[i] = pnbc_sched_tmp(s, v->wcount, v->wtype);
            v->spare_used[i] = true;
        }
        if (!pnbc_ref_eq(v->spare[i], busy)) {
            return v->spare[i];
        }
    }
    return v->spare[0];     /* unreachable: two spares differ */
}

/* Where to land a message that will become the accumulator: the user's
 * result buffer when this rank owns one and it is free, else a spare. */
static pnbc_ref_t view_landing(pnbc_schedule_t *s, reduce_view_t *v, pnbc_ref_t acc,
                               bool owns_result)
{
    if (owns_result && !v->packed && !pnbc_ref_eq(acc, v->out)) {
        return v->out;
    }
    return view_spare(s, v, acc);
}

/* Post the receive of `count` operand elements into `landing`. */
static void view_recv(pnbc_schedule_t *s, reduce_view_t *v, pnbc_ref_t landing, int peer)
{
    pnbc_sched_recv(s, landing, v->wcount, v->wtype, peer);
}

static void view_send(pnbc_schedule_t *s, reduce_view_t *v, pnbc_ref_t data, int peer)
{
    pnbc_sched_send(s, data, v->wcount, v->wtype, peer);
}

/*
 * Fold `incoming` (just received) into the accumulator.  `incoming_is_lower`
 * says whether the incoming data belongs to lower ranks than the
 * accumulator's.  Returns the accumulator's new home.
 */
static pnbc_ref_t view_combine(pnbc_schedule_t *s, reduce_view_t *v, pnbc_ref_t acc,
                               bool *acc_writable, pnbc_ref_t incoming,
                               bool incoming_is_lower)
{
    if (*acc_writable && (incoming_is_lower || v->commutative)) {
        pnbc_sched_reduce(s, incoming, acc, v->wcount, v->wtype, v->op);
        return acc;
    }
    /* acc is read-only or must stay on the left: the sum goes where the
     * incoming data is.  (incoming_is_lower with read-only acc cannot keep
     * the order this way; builders never ask for it.) */
    pnbc_sched_reduce(s, acc, incoming, v->wcount, v->wtype, v->op);
    *acc_writable = true;
    return incoming;
}

/* Put the final result (in `acc`) into the user's receive buffer. */
static void view_finish(pnbc_schedule_t *s, reduce_view_t *v, pnbc_ref_t acc)
{
    const pnbc_coll_args_t *a = v->args;
    if (v->packed) {
        pnbc_sched_copy(s, acc, v->wcount, v->wtype, pnbc_ref(PNBC_BUF_RECV, 0),
                        a->count, a->dtype);
    } else {
        pnbc_sched_copy(s, acc, v->wcount, v->wtype, v->out, v->wcount, v->wtype);
    }
}

/* A writable accumulator holding this rank's contribution. */
static pnbc_ref_t view_writable_acc(pnbc_schedule_t *s, reduce_view_t *v)
{
    if (v->in_writable) {
        return v->in;
    }
    pnbc_sched_copy(s, v->in, v->wcount, v->wtype, v->out, v->wcount, v->wtype);
    return v->out;
}

/* ------------------------------------------------------------------ */
/* reduce                                                             */
/* ------------------------------------------------------------------ */

/* The real root of a non-commutative reduce gets the result from the
 * tree's root (rank 0) once its own part of the tree is sent. */
static void reduce_receive_result(pnbc_schedule_t *s, reduce_view_t *v, int from)
{
    pnbc_ref_t landing = v->packed ? view_spare(s, v, v->in) : v->out;
    pnbc_sched_round(s);
    view_recv(s, v, landing, from);
    pnbc_sched_round(s);
    view_finish(s, v, landing);
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
    reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    view_open(s, a, &v);
    const int tree_root = v.commutative ? a->root : 0;
    const int vr = (rank - tree_root + p) % p;
    const bool owns_result = (rank == a->root);
    pnbc_ref_t acc = v.in;
    bool acc_writable = v.in_writable;

    pnbc_sched_round(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            view_send(s, &v, acc, (vr - mask + tree_root) % p);
            break;              /* this rank's part of the tree is done */
        }
        if (vr + mask < p) {
            pnbc_ref_t landing = (acc_writable && v.commutative)
                                     ? view_spare(s, &v, acc)
                                     : view_landing(s, &v, acc, owns_result && vr == 0);
            view_recv(s, &v, landing, (vr + mask + tree_root) % p);
            pnbc_sched_round(s);
            acc = view_combine(s, &v, acc, &acc_writable, landing, false);
        }
    }
    if (0 == vr && tree_root == a->root) {
        view_finish(s, &v, acc);
    } else if (0 == vr) {
        view_send(s, &v, acc, a->root);     /* rank 0 -> the real root */
    } else if (owns_result) {
        reduce_receive_result(s, &v, tree_root);
    }
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
    const int p = a->size, rank = a->rank, root = a->root;
    reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    view_open(s, a, &v);
    pnbc_sched_round(s);
    if (rank != root) {
        view_send(s, &v, v.in, root);
        return;
    }
    /* Rank p-1's data seeds the accumulator in a writable home. */
    pnbc_ref_t acc;
    if (root == p - 1) {
        acc = view_writable_acc(s, &v);
    } else {
        acc = v.packed ? pnbc_sched_tmp(s, v.wcount, v.wtype) : v.out;
        if (pnbc_ref_eq(acc, v.in)) {   /* in place: keep own data apart */
            v.in = pnbc_sched_tmp(s, v.wcount, v.wtype);
            pnbc_sched_copy(s, v.out, v.wcount, v.wtype, v.in, v.wcount, v.wtype);
        }
        view_recv(s, &v, acc, p - 1);
    }
    pnbc_ref_t *from = (p > 1) ? calloc((size_t) p, sizeof(*from)) : NULL;
    if (p > 1 && NULL == from) {
        s->error = OMPI_ERR_OUT_OF_RESOURCE;
        return;
    }
    for (int i = 0; i < p - 1; ++i) {
        from[i] = (i == root) ? v.in : pnbc_sched_tmp(s, v.wcount, v.wtype);
        if (i != root) {
            view_recv(s, &v, from[i], i);
        }
    }
    pnbc_sched_round(s);
    for (int i = p - 2; i >= 0; --i) {
        pnbc_sched_reduce(s, from[i], acc, v.wcount, v.wtype, v.op);
    }
    free(from);
    view_finish(s, &v, acc);
}

/* ------------------------------------------------------------------ */
/* allreduce                                                          */
/* ------------------------------------------------------------------ */

/*
 * pnbc_allreduce_recursive_doubling
 *   Accepts: any size, count, datatype, op (commutative or not).
 *   Moves:   p' = largest power of two <= p, rem = p - p'.  Fix-up: among
 *            ranks < 2*rem, even rank 2i hands its data to 2i+1 and waits
 *            for the result.  The p' remaining ranks (virtual ranks in
 *            rank order) exchange full vectors with v ^ 2^k for each k and
 *            fold, lower ranks' data on the left.  Finally 2i+1 returns
 *            the result to 2i.
 *
 *   p=6 (rem 2):  0->1 2->3 | v: 1=0 3=1 4=2 5=3 | 1<->3 4<->5 | 1<->4 3<->5
 *                 | 1->0 3->2
 */
void pnbc_allreduce_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    reduce_view_t v;
    int pof2 = 1, vrank;

    if (0 == a->count) {
        return;
    }
    while (pof2 * 2 <= p) {
        pof2 *= 2;
    }
    const int rem = p - pof2;
    view_open(s, a, &v);
    pnbc_sched_round(s);

    if (rank < 2 * rem && 0 == rank % 2) {
        view_send(s, &v, v.in, rank + 1);
        pnbc_sched_round(s);
        pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, rank + 1);
        return;
    }
    pnbc_ref_t acc = view_writable_acc(s, &v);
    bool acc_writable = true;
    if (rank < 2 * rem) {
        pnbc_ref_t landing = view_spare(s, &v, acc);
        view_recv(s, &v, landing, rank - 1);
        pnbc_sched_round(s);
        acc = view_combine(s, &v, acc, &acc_writable, landing, true);
        vrank = rank / 2;
    } else {
        vrank = rank - rem;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        const int vpeer = vrank ^ mask;
        const int peer = (vpeer < rem) ? 2 * vpeer + 1 : vpeer + rem;
        pnbc_ref_t landing = view_landing(s, &v, acc, true);
        view_send(s, &v, acc, peer);
        view_recv(s, &v, landing, peer);
        pnbc_sched_round(s);
        acc = view_combine(s, &v, acc, &acc_writable, landing, peer < rank);
    }
    view_finish(s, &v, acc);
    if (rank < 2 * rem) {
        pnbc_sched_round(s);
        pnbc_sched_send(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, rank - 1);
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
