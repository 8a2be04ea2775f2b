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
 * Algorithm tables, one per collective, each ended by a NULL name and
 * listed in order of preference.  An empty table means pnbc does not
 * serve that collective (its slot stays with other components).
 */
#define PNBC_ALGORITHM_TABLE(coll) extern const pnbc_algorithm_t pnbc_##coll##_algorithms[]
PNBC_ALGORITHM_TABLE(barrier);              /* coll_pnbc_barrier.c */
PNBC_ALGORITHM_TABLE(bcast);                /* coll_pnbc_bcast.c */
PNBC_ALGORITHM_TABLE(reduce);               /* coll_pnbc_reduce.c */
PNBC_ALGORITHM_TABLE(allreduce);            /* coll_pnbc_allreduce.c */
PNBC_ALGORITHM_TABLE(gather);               /* coll_pnbc_gather.c */
PNBC_ALGORITHM_TABLE(gatherv);
PNBC_ALGORITHM_TABLE(scatter);
PNBC_ALGORITHM_TABLE(scatterv);
PNBC_ALGORITHM_TABLE(allgather);            /* coll_pnbc_allgather.c */
PNBC_ALGORITHM_TABLE(allgatherv);
PNBC_ALGORITHM_TABLE(alltoall);             /* coll_pnbc_alltoall.c */
PNBC_ALGORITHM_TABLE(alltoallv);
PNBC_ALGORITHM_TABLE(alltoallw);
PNBC_ALGORITHM_TABLE(reduce_scatter);       /* coll_pnbc_reduce_scatter.c */
PNBC_ALGORITHM_TABLE(reduce_scatter_block);
PNBC_ALGORITHM_TABLE(scan);                 /* coll_pnbc_scan.c */
PNBC_ALGORITHM_TABLE(exscan);
PNBC_ALGORITHM_TABLE(neighbor_allgather);   /* coll_pnbc_neighbor.c */
PNBC_ALGORITHM_TABLE(neighbor_allgatherv);
PNBC_ALGORITHM_TABLE(neighbor_alltoall);
PNBC_ALGORITHM_TABLE(neighbor_alltoallv);
PNBC_ALGORITHM_TABLE(neighbor_alltoallw);

/* Intercommunicator variants (coll_pnbc_inter.c); same conventions. */
#define PNBC_INTER_ALGORITHM_TABLE(coll) \
    extern const pnbc_algorithm_t pnbc_inter_##coll##_algorithms[]
PNBC_INTER_ALGORITHM_TABLE(barrier);
PNBC_INTER_ALGORITHM_TABLE(bcast);
PNBC_INTER_ALGORITHM_TABLE(reduce);
PNBC_INTER_ALGORITHM_TABLE(allreduce);
PNBC_INTER_ALGORITHM_TABLE(gather);
PNBC_INTER_ALGORITHM_TABLE(gatherv);
PNBC_INTER_ALGORITHM_TABLE(scatter);
PNBC_INTER_ALGORITHM_TABLE(scatterv);
PNBC_INTER_ALGORITHM_TABLE(allgather);
PNBC_INTER_ALGORITHM_TABLE(allgatherv);
PNBC_INTER_ALGORITHM_TABLE(alltoall);
PNBC_INTER_ALGORITHM_TABLE(alltoallv);
PNBC_INTER_ALGORITHM_TABLE(alltoallw);
PNBC_INTER_ALGORITHM_TABLE(reduce_scatter);
PNBC_INTER_ALGORITHM_TABLE(reduce_scatter_block);

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
    ptrdiff_t lb, extent;
    const size_t bytes = (segsize > 0) ? segsize : default_segsize;
    const size_t type_size = dtype->super.size;
    size_t per = (type_size > 0) ? bytes / type_size : total;

    ompi_datatype_get_extent(dtype, &lb, &extent);
    per = (per < 1) ? 1 : (per > total ? total : per);
    pnbc_segments_t g = { total, per, (total > 0) ? (total + per - 1) / per : 0, extent };
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
