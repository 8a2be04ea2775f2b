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
#include "common_pnbc_schedule.h"

BEGIN_C_DECLS

typedef void (*pnbc_build_fn_t)(pnbc_schedule_t *s, const pnbc_coll_args_t *a);

typedef struct pnbc_algorithm_t {
    const char *name;
    pnbc_build_fn_t build;
    /* NULL, or false when the algorithm cannot serve these arguments
     * (e.g. needs a commutative op); selection then falls through. */
    bool (*usable)(const pnbc_coll_args_t *a);
} pnbc_algorithm_t;

/* Pick the algorithm for a call (hint, MCA override, decision rules,
 * table order: see coll_pnbc_select.c).  Never NULL for a collective
 * pnbc implements. */
const pnbc_algorithm_t *mca_coll_pnbc_select(const pnbc_coll_args_t *a, struct ompi_info_t *info);
void mca_coll_pnbc_select_close(void);
/* Does pnbc serve this collective on intra- (inter = false) or
 * intercommunicators? */
bool mca_coll_pnbc_implemented(pnbc_coll_t coll, bool inter);
const char *mca_coll_pnbc_coll_name(pnbc_coll_t coll);
/* How this collective's large on-node messages travel (coll_pnbc_select.c). */
pnbc_large_msgs_t mca_coll_pnbc_large_msgs(pnbc_coll_t coll);
void mca_coll_pnbc_select_register(void);

/*
 * Algorithm tables, one per collective of PNBC_COLLECTIVES (coll_pnbc.h),
 * each ended by a NULL name and listed in order of preference:
 * pnbc_<name>_algorithms (coll_pnbc_<family>.c) and, for the collectives
 * served on intercommunicators, pnbc_inter_<name>_algorithms
 * (coll_pnbc_inter*.c), on the same conventions.  An empty table means
 * pnbc does not serve that collective (its slot stays with other
 * components).
 */
#define PNBC_ALGORITHM_TABLES_INTRA(name) \
    extern const pnbc_algorithm_t pnbc_##name##_algorithms[];
#define PNBC_ALGORITHM_TABLES_INTER(name) \
    PNBC_ALGORITHM_TABLES_INTRA(name) \
    extern const pnbc_algorithm_t pnbc_inter_##name##_algorithms[];
#define PNBC_ALGORITHM_TABLES(ID, name, groups, large, pace) PNBC_ALGORITHM_TABLES_##groups(name)
PNBC_COLLECTIVES(PNBC_ALGORITHM_TABLES)
#undef PNBC_ALGORITHM_TABLES

/* A table of one algorithm that serves every call. */
#define PNBC_ONE_ALGORITHM(table, name, build) \
    const pnbc_algorithm_t table[] = { { name, build, NULL }, { NULL, NULL, NULL } }

/* Helpers the builders share, beside common_pnbc.h's pnbc_pow2_floor,
 * pnbc_extent, pnbc_type_size and pnbc_op_commutative. */
static inline bool pnbc_is_pow2(int n)
{
    return n > 0 && 0 == (n & (n - 1));
}

/* Zero-byte messages that only synchronise (barriers, fan-in/out). */
static inline void pnbc_notify(pnbc_schedule_t *s, int peer)
{
    pnbc_sched_send(s, PNBC_REF_NONE, 0, MPI_BYTE, peer);
}

static inline void pnbc_await(pnbc_schedule_t *s, int peer)
{
    pnbc_sched_recv(s, PNBC_REF_NONE, 0, MPI_BYTE, peer);
}

/* usable() of the algorithms that need a commutative op (coll_pnbc_select.c) */
bool pnbc_usable_commutative(const pnbc_coll_args_t *a);

/*
 * Segmented (pipelined) algorithms cut a vector of `total` elements into
 * segments of whole elements of about `segsize` bytes (the request's
 * pnbc_coll_args_t.segsize, or the algorithm's default when that is 0).
 * Segment k starts at element k * per_seg; the last may be shorter.
 */
typedef struct pnbc_segments_t {
    size_t total;       /* elements */
    size_t per_seg;     /* elements per full segment */
    size_t nseg;        /* 0 when total is 0 */
    ptrdiff_t extent;   /* bytes from one element to the next */
} pnbc_segments_t;

static inline pnbc_segments_t pnbc_segments(size_t total, ompi_datatype_t *dtype,
                                            size_t segsize, size_t default_segsize)
{
    const size_t bytes = (segsize > 0) ? segsize : default_segsize;
    const size_t type_size = dtype->super.size;
    size_t per = (type_size > 0) ? bytes / type_size : total;

    per = (per < 1) ? 1 : (per > total ? total : per);
    pnbc_segments_t g = { total, per, (total > 0) ? (total + per - 1) / per : 0,
                          pnbc_extent(dtype) };
    return g;
}

static inline size_t pnbc_seg_count(const pnbc_segments_t *g, size_t k)
{
    const size_t first = k * g->per_seg;
    return (g->total - first < g->per_seg) ? g->total - first : g->per_seg;
}

static inline pnbc_ref_t pnbc_seg_ref(const pnbc_segments_t *g, pnbc_ref_t base, size_t k)
{
    return pnbc_ref_shift(base, (ptrdiff_t) (k * g->per_seg) * g->extent);
}

/* Balanced partition of `total` elements into `nblocks` blocks (sizes
 * differ by at most one; trailing blocks are empty when total < nblocks):
 * the first element of block i, i = 0..nblocks (i = nblocks: total). */
static inline size_t pnbc_block_first(size_t total, int nblocks, int i)
{
    const size_t q = total / (size_t) nblocks, r = total % (size_t) nblocks;
    return (size_t) i * q + ((size_t) i < r ? (size_t) i : r);
}

/* Builders other files compose with */
void pnbc_bcast_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a);
void pnbc_reduce_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a);

END_C_DECLS

#endif /* MCA_COLL_PNBC_ALGORITHMS_H */
