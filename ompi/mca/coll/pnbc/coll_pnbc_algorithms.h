/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Algorithms and their selection.
 *
 * An algorithm is a builder: a function from the normalised *_init
 * arguments (rank, size, counts, datatypes, root, op) to schedule rounds.
 * Each collective owns a table of algorithms (coll_pnbc_select.c); the
 * choice is made once at init, identically on every rank, from data
 * every rank agrees on.  Builders are named
 * pnbc_<coll>_<algorithm> and live one file per collective family.
 */

#ifndef MCA_COLL_PNBC_ALGORITHMS_H
#define MCA_COLL_PNBC_ALGORITHMS_H

#include "coll_pnbc.h"
#include "coll_pnbc_schedule.h"

BEGIN_C_DECLS

typedef void (*pnbc_build_fn_t)(pnbc_schedule_t *s, const pnbc_coll_args_t *a);

typedef struct pnbc_algorithm_t {
    const char *name;
    pnbc_build_fn_t build;
    /* NULL, or false when the algorithm cannot serve these arguments
     * (e.g. needs a commutative op); selection then falls through. */
    bool (*usable)(const pnbc_coll_args_t *a);
} pnbc_algorithm_t;

/* Pick the algorithm for a call (honours the per-collective MCA override
 * when usable).  Never NULL for a collective pnbc implements. */
const pnbc_algorithm_t *mca_coll_pnbc_select(const pnbc_coll_args_t *a);
const char *mca_coll_pnbc_coll_name(pnbc_coll_t coll);
void mca_coll_pnbc_select_register(void);

/* barrier (coll_pnbc_barrier.c) */
void pnbc_barrier_dissemination(pnbc_schedule_t *s, const pnbc_coll_args_t *a);
void pnbc_barrier_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a);

/* bcast (coll_pnbc_bcast.c) */
void pnbc_bcast_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a);
void pnbc_bcast_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a);

/* reduce, allreduce (coll_pnbc_reduce.c) */
void pnbc_reduce_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a);
void pnbc_reduce_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a);
void pnbc_allreduce_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a);
void pnbc_allreduce_reduce_bcast(pnbc_schedule_t *s, const pnbc_coll_args_t *a);

END_C_DECLS

#endif /* MCA_COLL_PNBC_ALGORITHMS_H */
