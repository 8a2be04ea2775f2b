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
 * pnbc_reduce_linear
 *   Accepts: any size, root, count, datatype, op.
 *   Moves:   every rank sends its contribution to the root in one round;
 *            the root folds them from the highest rank down, so the order
 *            is canonical for any op.  Memory at the root: p-1 operands.
 */
void pnbc_reduce_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank, root = a->root;
    pnbc_reduce_view_t v;

    if (0 == a->count) {
        return;
    }
    pnbc_view_open(s, a, &v);
    pnbc_sched_round(s);
    if (rank != root) {
        pnbc_view_send(s, &v, v.in, root);
        return;
    }
    /* Rank p-1's data seeds the accumulator in a writable home. */
    pnbc_ref_t acc;
    if (root == p - 1) {
        acc = pnbc_view_writable_acc(s, &v);
    } else {
        acc = v.packed ? pnbc_sched_tmp(s, v.wcount, v.wtype) : v.out;
        if (pnbc_ref_eq(acc, v.in)) {   /* in place: keep own data apart */
            v.in = pnbc_sched_tmp(s, v.wcount, v.wtype);
            pnbc_sched_copy(s, v.out, v.wcount, v.wtype, v.in, v.wcount, v.wtype);
        }
        pnbc_view_recv(s, &v, acc, p - 1);
    }
    pnbc_ref_t *from = (p > 1) ? calloc((size_t) p, sizeof(*from)) : NULL;
    if (p > 1 && NULL == from) {
        s->error = OMPI_ERR_OUT_OF_RESOURCE;
        return;
    }
    for (int i = 0; i < p - 1; ++i) {
        from[i] = (i == root) ? v.in : pnbc_sched_tmp(s, v.wcount, v.wtype);
        if (i != root) {
            pnbc_view_recv(s, &v, from[i], i);
        }
    }
    pnbc_sched_round(s);
    for (int i = p - 2; i >= 0; --i) {
        pnbc_sched_reduce(s, from[i], acc, v.wcount, v.wtype, v.op);
    }
    free(from);
    pnbc_view_finish(s, &v, acc);
}

const pnbc_algorithm_t pnbc_reduce_algorithms[] = {
    { "binomial", pnbc_reduce_binomial, NULL },
    { "linear", pnbc_reduce_linear, NULL },
    { NULL, NULL, NULL }
};
