/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * How reductions see their operands; see coll_pnbc_reduce_view.h.
 */

#include "coll_pnbc_reduce_view.h"


pnbc_ref_t pnbc_view_user_in(const pnbc_coll_args_t *a)
{
    return pnbc_ref(a->in_place ? PNBC_BUF_RECV : PNBC_BUF_SEND, 0);
}

void pnbc_view_open(pnbc_schedule_t *s, const pnbc_coll_args_t *a, pnbc_reduce_view_t *v)
{
    ompi_datatype_t *base = NULL;
    ptrdiff_t true_lb, true_extent;

    *v = (pnbc_reduce_view_t) { .wtype = a->dtype, .wcount = a->count, .op = a->op,
                           .commutative = pnbc_op_commutative(a->op), .args = a };
    if (ompi_op_is_intrinsic(a->op) && !ompi_datatype_is_predefined(a->dtype)) {
        base = ompi_datatype_get_single_predefined_type_from_args(a->dtype);
    }
    if (NULL == base) {
        v->in = pnbc_view_user_in(a);
        v->out = pnbc_ref(PNBC_BUF_RECV, 0);
        v->in_writable = a->in_place;
        return;
    }
    v->wtype = base;
    v->wcount = a->count * (a->dtype->super.size / base->super.size);
    if (ompi_datatype_is_contiguous_memory_layout(a->dtype, a->count)) {
        ompi_datatype_get_true_extent(a->dtype, &true_lb, &true_extent);
        v->in = pnbc_ref_shift(pnbc_view_user_in(a), true_lb);
        v->out = pnbc_ref(PNBC_BUF_RECV, true_lb);
        v->in_writable = a->in_place;
        return;
    }
    /* Non-contiguous: pack the contribution once per start. */
    v->packed = true;
    v->in = pnbc_sched_tmp(s, v->wcount, v->wtype);
    v->in_writable = true;
    v->out = PNBC_REF_NONE;
    pnbc_sched_copy(s, pnbc_view_user_in(a), a->count, a->dtype, v->in, v->wcount, v->wtype);
}

/* A scratch operand that is not `busy`. */
pnbc_ref_t pnbc_view_spare(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t busy)
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
pnbc_ref_t pnbc_view_landing(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t acc,
                               bool owns_result)
{
    if (owns_result && !v->packed && !pnbc_ref_eq(acc, v->out)) {
        return v->out;
    }
    return pnbc_view_spare(s, v, acc);
}

/* Post the receive of `count` operand elements into `landing`. */
void pnbc_view_recv(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t landing, int peer)
{
    pnbc_sched_recv(s, landing, v->wcount, v->wtype, peer);
}

void pnbc_view_send(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t data, int peer)
{
    pnbc_sched_send(s, data, v->wcount, v->wtype, peer);
}

/*
 * Fold `incoming` (just received) into the accumulator.  `incoming_is_lower`
 * says whether the incoming data belongs to lower ranks than the
 * accumulator's.  Returns the accumulator's new home.
 */
pnbc_ref_t pnbc_view_combine(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t acc,
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
void pnbc_view_finish(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t acc)
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
pnbc_ref_t pnbc_view_writable_acc(pnbc_schedule_t *s, pnbc_reduce_view_t *v)
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
