/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The reduction's view of its operands, shared by every reduction
 * builder (reduce, allreduce, reduce_scatter, scan, ...).
 *
 * Operand order.  ompi_op_reduce(op, src, tgt) computes tgt = src (op) tgt,
 * so the left operand is always `src`.  For a non-commutative op every
 * combine keeps the data of lower ranks on the left, which gives the
 * canonical result r0 (op) r1 (op) ... (op) r(p-1) (MPI-4.1 sec. 6.9.1).
 * When the accumulator holds the lower ranks, the sum is formed in the
 * buffer that just received the higher ranks' data and the accumulator
 * moves there -- a pointer swap decided at init, never a copy.
 */

#ifndef MCA_COLL_PNBC_REDUCE_VIEW_H
#define MCA_COLL_PNBC_REDUCE_VIEW_H

#include "coll_pnbc_algorithms.h"

BEGIN_C_DECLS

/*
 * Predefined ops are applied by Open MPI's op framework per predefined
 * element, so a derived datatype is reduced as `wcount` elements of its
 * single predefined type: in place when its memory layout is contiguous,
 * through packed temporaries otherwise.  User-defined ops receive the
 * user's datatype untouched.
 */
typedef struct pnbc_reduce_view_t {
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
} pnbc_reduce_view_t;

pnbc_ref_t pnbc_view_user_in(const pnbc_coll_args_t *a);
void pnbc_view_open(pnbc_schedule_t *s, const pnbc_coll_args_t *a, pnbc_reduce_view_t *v);
pnbc_ref_t pnbc_view_spare(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t busy);
pnbc_ref_t pnbc_view_landing(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t acc,
                               bool owns_result);
void pnbc_view_recv(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t landing, int peer);
void pnbc_view_send(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t data, int peer);
pnbc_ref_t pnbc_view_combine(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t acc,
                               bool *acc_writable, pnbc_ref_t incoming,
                               bool incoming_is_lower);
void pnbc_view_finish(pnbc_schedule_t *s, pnbc_reduce_view_t *v, pnbc_ref_t acc);
pnbc_ref_t pnbc_view_writable_acc(pnbc_schedule_t *s, pnbc_reduce_view_t *v);

/* Linear reduce's root part, also allreduce's direct (coll_pnbc_reduce.c) */
void pnbc_reduce_linear_fold(pnbc_schedule_t *s, pnbc_reduce_view_t *v, bool share);

END_C_DECLS

#endif /* MCA_COLL_PNBC_REDUCE_VIEW_H */
