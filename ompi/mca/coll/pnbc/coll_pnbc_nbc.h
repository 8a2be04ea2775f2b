/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Nonblocking collectives: the cached instance (a pnbc request of kind
 * PNBC_REQ_NBC plus its cache key) and the cache's interface, shared by
 * coll_pnbc_nbc.c (the calls) and coll_pnbc_cache.c (the cache).
 */

#ifndef MCA_COLL_PNBC_NBC_H
#define MCA_COLL_PNBC_NBC_H

#include "coll_pnbc.h"
#include "common_pnbc_request.h"

BEGIN_C_DECLS

/* The per-peer arrays a key holds by content: counts and displacements
 * (int), datatypes (w variants), byte displacements (neighbor_alltoallw). */
enum {
    PNBC_KEY_SCOUNTS, PNBC_KEY_SDISPLS, PNBC_KEY_RCOUNTS, PNBC_KEY_RDISPLS,
    PNBC_KEY_SDTYPES, PNBC_KEY_RDTYPES, PNBC_KEY_SDISPLS_BYTES, PNBC_KEY_RDISPLS_BYTES,
    PNBC_KEY_NPARTS
};

typedef struct pnbc_key_part_t {
    const void *p;
    size_t bytes;
} pnbc_key_part_t;

/* A call's significant per-peer arrays: part[i] is set only where bit i
 * of mask is (most calls have none, and pay nothing for the others). */
typedef struct pnbc_key_parts_t {
    unsigned mask;
    pnbc_key_part_t part[PNBC_KEY_NPARTS];
} pnbc_key_parts_t;

/* The most MPI arguments a memoised slot has (gather, scatter, ...). */
#define PNBC_RAW_MAX 8

typedef struct pnbc_nbc_request_t {
    pnbc_request_t super;
    mca_coll_pnbc_module_t *module;
    /* The communicator, held from the call to the free of the request
     * (MPI_Comm_free may come in between); NULL while idle. */
    ompi_communicator_t *held;

    /* Key: every argument of the call (scalars here, per-peer arrays by
     * content in keymem), and its hash. */
    uint64_t hash;
    pnbc_coll_args_t key;
    pnbc_key_parts_t parts;
    void *keymem;
    size_t bytes;       /* accounted against coll_pnbc_cache_bytes */

    /* The MPI arguments of a call it ran, as passed (collectives without
     * per-peer arrays): the slot's memo (coll_pnbc_nbc.c) */
    uintptr_t raw[PNBC_RAW_MAX];
    unsigned nraw;

    bool busy;          /* handed to the user (call .. free); atomic */
    bool cached;        /* in the cache (else destroyed at its free) */
    bool probation;     /* cached, and not hit since its miss */
    struct pnbc_nbc_request_t *next[PNBC_NLISTS], *prev[PNBC_NLISTS];  /* PNBC_LIST_* */
    struct pnbc_nbc_request_t *h_next, *h_prev;       /* hash chain */
} pnbc_nbc_request_t;

OBJ_CLASS_DECLARATION(pnbc_nbc_request_t);

/* The significant per-peer arrays of a call. */
void mca_coll_pnbc_key_parts(const pnbc_coll_args_t *a, pnbc_key_parts_t *parts);
/* Copy a call's key into a new instance.  Returns an OMPI error code. */
int mca_coll_pnbc_key_store(pnbc_nbc_request_t *e, const pnbc_coll_args_t *a,
                            const pnbc_key_parts_t *parts, uint64_t hash);

/* An idle cached instance for these arguments, now busy, or NULL; sets
 * *hash to the arguments' hash (for the instance a miss builds). */
pnbc_nbc_request_t *mca_coll_pnbc_cache_lookup(mca_coll_pnbc_module_t *m,
                                               const pnbc_coll_args_t *a,
                                               const pnbc_key_parts_t *parts,
                                               uint64_t *hash);
/* Keep a new (busy) instance if the bounds allow, evicting idle ones
 * least recently used first; else it is destroyed at its free. */
void mca_coll_pnbc_cache_insert(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e);
/* Make a cached idle instance the most recently used (not the head). */
void mca_coll_pnbc_cache_to_front(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e);
/* A hit on an instance in probation: it is kept like any other now. */
void mca_coll_pnbc_cache_promote(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e);

static inline bool pnbc_nbc_busy(pnbc_nbc_request_t *e)
{
    return __atomic_load_n(&e->busy, __ATOMIC_ACQUIRE);
}

static inline void pnbc_nbc_set_busy(pnbc_nbc_request_t *e, bool busy)
{
    __atomic_store_n(&e->busy, busy, __ATOMIC_RELEASE);
}

/* Make a cached idle instance busy and the most recently used (a hit). */
static inline void mca_coll_pnbc_cache_take(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e)
{
    pnbc_nbc_set_busy(e, true);
    if (m->cache.head[PNBC_LIST_LRU] != e) {
        mca_coll_pnbc_cache_to_front(m, e);
    }
    if (e->probation) {
        mca_coll_pnbc_cache_promote(m, e);
    }
    m->cache.hits++;
}

END_C_DECLS

#endif /* MCA_COLL_PNBC_NBC_H */
