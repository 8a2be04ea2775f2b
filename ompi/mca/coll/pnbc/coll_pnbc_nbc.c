/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Nonblocking collectives (MPI_I<coll>): the 22 slots, and the call
 *
 *     normalise arguments (the persistent entry point's code)
 *       -> cache lookup
 *            hit:  an idle committed instance with these arguments
 *            miss: check the arguments
 *       -> tag of this call
 *       -> (miss) choose algorithm -> build -> commit -> insert
 *       -> start the instance under the call's tag
 *
 * A hit does no allocation, no checks, no selection and no datatype or
 * op work.
 *
 * Matching.  Each call takes the next tag of its communicator's call
 * counter (coll_pnbc.h): calls on a communicator are ordered alike on
 * every rank, so the k-th call has the same tag everywhere, whichever
 * instance each rank runs it with -- one rank may hit while another
 * misses.  Instances therefore bind nothing to the tag they were built
 * with: their schedules are retagged (pnbc_schedule_t.retag), so at each
 * start the pml transport posts under the call's tag and the shm
 * transport pairs the two sides afresh -- the receiver announces its
 * instance's block under the call's tag for that call only, and the
 * sender looks it up again (common_pnbc_transport_shm.c).
 */

#include "coll_pnbc_nbc.h"
#include "coll_pnbc_algorithms.h"

#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Instances                                                          */
/* ------------------------------------------------------------------ */

/* An instance whose call is over: back to the cache (or destroyed when
 * it was not kept). */
static inline void nbc_idle(pnbc_nbc_request_t *e)
{
    if (e->cached) {
        pnbc_nbc_set_busy(e, false);
    } else {
        OBJ_RELEASE(e);
    }
}

/* Free of a completed call's request: the instance goes idle, then the
 * communicator is let go -- last, as it may take the cache with it. */
static void nbc_recycle(pnbc_request_t *req)
{
    pnbc_nbc_request_t *e = (pnbc_nbc_request_t *) req;
    ompi_communicator_t *comm = e->held;

    e->held = NULL;
    nbc_idle(e);
    OBJ_RELEASE(comm);
}

static const pnbc_request_ops_t nbc_ops = {
    .recycle = nbc_recycle,
};

static void nbc_request_construct(pnbc_nbc_request_t *e)
{
    e->module = NULL;
    e->held = NULL;
    e->hash = 0;
    e->keymem = NULL;
    e->bytes = 0;
    e->busy = false;
    e->cached = false;
    e->probation = false;
    memset(e->next, 0, sizeof(e->next));
    memset(e->prev, 0, sizeof(e->prev));
    e->h_next = e->h_prev = NULL;
}

static void nbc_request_destruct(pnbc_nbc_request_t *e)
{
    free(e->keymem);
}

OBJ_CLASS_INSTANCE(pnbc_nbc_request_t, pnbc_request_t, nbc_request_construct,
                   nbc_request_destruct);

/* A miss: a new busy instance committed for these arguments. */
static int nbc_build(mca_coll_pnbc_module_t *m, pnbc_coll_args_t *args,
                     const pnbc_key_parts_t *parts, uint64_t hash, int tag,
                     pnbc_nbc_request_t **out)
{
    const pnbc_algorithm_t *alg = mca_coll_pnbc_select(args, NULL);
    pnbc_nbc_request_t *e = OBJ_NEW(pnbc_nbc_request_t);
    if (NULL == e) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    pnbc_request_setup(&e->super, PNBC_REQ_NBC, &nbc_ops, args->comm, tag);
    e->module = m;
    e->super.sched.retag = true;       /* see above */
    int rc = mca_coll_pnbc_build(&e->super, args, alg);
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_pnbc_key_store(e, args, parts, hash);
    }
    if (OMPI_SUCCESS != rc) {
        OBJ_RELEASE(e);
        return rc;
    }
    pnbc_nbc_set_busy(e, true);
    if (mca_common_pnbc_params.verbose >= 2) {
        opal_output(0, "coll:pnbc: i%s miss: algorithm=%s comm_size=%d rank=%d rounds=%u "
                    "actions=%u bytes=%zu", e->super.name, e->super.algorithm, args->size,
                    args->rank, e->super.sched.nrounds, e->super.sched.nactions, e->bytes);
    }
    *out = e;
    return OMPI_SUCCESS;
}

/* Start instance e (busy) for this call under the call's tag.  A call
 * that ran to its end within the start (a bcast root or a gather leaf
 * whose messages went eagerly, a receiver whose messages were already
 * there) hands out Open MPI's completed request instead of e's: MPI_Wait
 * then has nothing to complete or free, and e is idle again at once. */
static int nbc_run(pnbc_nbc_request_t *e, ompi_communicator_t *comm, int tag,
                   ompi_request_t **request)
{
    bool in_call = false;
    const int rc = pnbc_request_start_nbc(&e->super, tag, &in_call);
    if (OMPI_SUCCESS != rc) {
        e->super.super.req_complete = REQUEST_COMPLETED;
        nbc_idle(e);
        return rc;
    }
    if (in_call) {              /* the start left it complete */
        nbc_idle(e);
        *request = &ompi_request_empty;
        return OMPI_SUCCESS;
    }
    /* held until its free: the request is the user's from here on */
    OBJ_RETAIN(comm);
    e->held = comm;
    *request = &e->super.super;
    return OMPI_SUCCESS;
}

int mca_coll_pnbc_nbc_call(pnbc_coll_args_t *args, ompi_request_t **request,
                           mca_coll_pnbc_module_t *module)
{
    pnbc_key_parts_t parts;
    uint64_t hash;

    mca_coll_pnbc_key_parts(args, &parts);
    pnbc_nbc_request_t *e = mca_coll_pnbc_cache_lookup(module, args, &parts, &hash);
    /* A hit needs no checks: its key holds every argument of a call that
     * passed them, and the instance retains its datatypes and op, so none
     * of them can have been freed and replaced.  A call that fails them
     * returns before it takes a tag, as when every call was checked
     * first. */
    const int err = (NULL == e) ? mca_coll_pnbc_check_args(args, request) : MPI_SUCCESS;
    if (MPI_SUCCESS != err) {
        return err;
    }
    const int tag = mca_coll_pnbc_next_nbc_tag(module);
    if (NULL == e) {
        int rc = nbc_build(module, args, &parts, hash, tag, &e);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        mca_coll_pnbc_cache_insert(module, e);
    }
    module->cache.last = e->cached ? e : NULL;     /* nbc_run may destroy one not kept */
    return nbc_run(e, args->comm, tag, request);
}

/* ------------------------------------------------------------------ */
/* The memo: a repeated call found by its MPI arguments as passed      */
/* ------------------------------------------------------------------ */

/* A loop repeating one call finds the instance of its last call by
 * comparing the MPI arguments as the slot received them, before any
 * normalisation, key or hash: the normalised key is a function of those
 * arguments (and of the communicator and the MCA parameters, fixed), so
 * equal arguments mean the same key.  Handles compare safely for the
 * reason the cache's keys do (the instance retains its datatypes and
 * op).  Only collectives without per-peer arrays are memoised: an array
 * is part of the key by content, which a pointer does not tell. */
static inline __attribute__((always_inline)) bool
nbc_memo_start(mca_coll_pnbc_module_t *m, pnbc_coll_t coll, const uintptr_t *raw, unsigned nraw,
               ompi_communicator_t *comm, ompi_request_t **request, int *rc)
{
    pnbc_nbc_request_t *e = m->cache.memo[coll];
    /* (nraw is a constant of each slot: the compare is a few words) */
    if (NULL == e || NULL == request || e->nraw != nraw || pnbc_nbc_busy(e) ||
        0 != memcmp(e->raw, raw, nraw * sizeof(*raw))) {
        return false;
    }
    mca_coll_pnbc_cache_take(m, e);
    *rc = nbc_run(e, comm, mca_coll_pnbc_next_nbc_tag(m), request);
    return true;
}

/* After a call through the cache: remember its instance (if kept). */
static void nbc_memo_note(mca_coll_pnbc_module_t *m, pnbc_coll_t coll, const uintptr_t *raw,
                          unsigned nraw)
{
    pnbc_nbc_request_t *e = m->cache.last;
    if (NULL != e) {
        memcpy(e->raw, raw, nraw * sizeof(*raw));
        e->nraw = nraw;
        m->cache.memo[coll] = e;
    }
}

/* ------------------------------------------------------------------ */
/* The slots: the persistent entry points with PNBC_NONBLOCKING        */
/* ------------------------------------------------------------------ */

#define NBC_TAIL comm, PNBC_NONBLOCKING, request, module
#define NBC_PARAMS struct ompi_communicator_t *comm, ompi_request_t **request, \
                   mca_coll_base_module_t *module

/* The body of a memoised slot: the memo, else the entry point `init`
 * (then noted).  The arguments after it are the slot's MPI arguments,
 * each through R(). */
#define R(x) ((uintptr_t) (x))
#define NBC_MEMOISED(ID, init, ...)                                                     \
    do {                                                                                \
        const uintptr_t raw_[] = { PNBC_##ID, __VA_ARGS__ };                           \
        const unsigned nraw_ = sizeof(raw_) / sizeof(raw_[0]);                          \
        mca_coll_pnbc_module_t *m_ = (mca_coll_pnbc_module_t *) module;                 \
        int rc_;                                                                        \
        if (nbc_memo_start(m_, PNBC_##ID, raw_, nraw_, comm, request, &rc_)) {          \
            return rc_;                                                                 \
        }                                                                               \
        m_->cache.last = NULL;                                                          \
        rc_ = (init);                                                                   \
        if (MPI_SUCCESS == rc_) {                                                       \
            nbc_memo_note(m_, PNBC_##ID, raw_, nraw_);                                  \
        }                                                                               \
        return rc_;                                                                     \
    } while (0)

int mca_coll_pnbc_ibarrier(NBC_PARAMS)
{
    NBC_MEMOISED(BARRIER, mca_coll_pnbc_barrier_init(NBC_TAIL));
}

int mca_coll_pnbc_ibcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                         NBC_PARAMS)
{
    NBC_MEMOISED(BCAST, mca_coll_pnbc_bcast_init(buf, count, dtype, root, NBC_TAIL), R(buf),
                 R(count), R(dtype), R(root));
}

int mca_coll_pnbc_ireduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                          struct ompi_op_t *op, int root, NBC_PARAMS)
{
    NBC_MEMOISED(REDUCE, mca_coll_pnbc_reduce_init(sbuf, rbuf, count, dtype, op, root, NBC_TAIL),
                 R(sbuf), R(rbuf), R(count), R(dtype), R(op), R(root));
}

int mca_coll_pnbc_iallreduce(const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op, NBC_PARAMS)
{
    NBC_MEMOISED(ALLREDUCE, mca_coll_pnbc_allreduce_init(sbuf, rbuf, count, dtype, op, NBC_TAIL),
                 R(sbuf), R(rbuf), R(count), R(dtype), R(op));
}

int mca_coll_pnbc_igather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                          NBC_PARAMS)
{
    NBC_MEMOISED(GATHER,
                 mca_coll_pnbc_gather_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, root,
                                           NBC_TAIL),
                 R(sbuf), R(scount), R(sdtype), R(rbuf), R(rcount), R(rdtype), R(root));
}

int mca_coll_pnbc_igatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, const int *rcounts, const int *displs,
                           struct ompi_datatype_t *rdtype, int root, NBC_PARAMS)
{
    return mca_coll_pnbc_gatherv_init(sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype,
                                      root, NBC_TAIL);
}

int mca_coll_pnbc_iscatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                           NBC_PARAMS)
{
    NBC_MEMOISED(SCATTER,
                 mca_coll_pnbc_scatter_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, root,
                                            NBC_TAIL),
                 R(sbuf), R(scount), R(sdtype), R(rbuf), R(rcount), R(rdtype), R(root));
}

int mca_coll_pnbc_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                            struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                            struct ompi_datatype_t *rdtype, int root, NBC_PARAMS)
{
    return mca_coll_pnbc_scatterv_init(sbuf, scounts, displs, sdtype, rbuf, rcount, rdtype,
                                       root, NBC_TAIL);
}

int mca_coll_pnbc_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                             NBC_PARAMS)
{
    NBC_MEMOISED(ALLGATHER,
                 mca_coll_pnbc_allgather_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, NBC_TAIL),
                 R(sbuf), R(scount), R(sdtype), R(rbuf), R(rcount), R(rdtype));
}

int mca_coll_pnbc_iallgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, const int *rcounts, const int *displs,
                              struct ompi_datatype_t *rdtype, NBC_PARAMS)
{
    return mca_coll_pnbc_allgatherv_init(sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype,
                                         NBC_TAIL);
}

int mca_coll_pnbc_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                            NBC_PARAMS)
{
    NBC_MEMOISED(ALLTOALL,
                 mca_coll_pnbc_alltoall_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, NBC_TAIL),
                 R(sbuf), R(scount), R(sdtype), R(rbuf), R(rcount), R(rdtype));
}

int mca_coll_pnbc_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                             struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                             const int *rdispls, struct ompi_datatype_t *rdtype, NBC_PARAMS)
{
    return mca_coll_pnbc_alltoallv_init(sbuf, scounts, sdispls, sdtype, rbuf, rcounts,
                                        rdispls, rdtype, NBC_TAIL);
}

int mca_coll_pnbc_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                             struct ompi_datatype_t *const *sdtypes, void *rbuf,
                             const int *rcounts, const int *rdispls,
                             struct ompi_datatype_t *const *rdtypes, NBC_PARAMS)
{
    return mca_coll_pnbc_alltoallw_init(sbuf, scounts, sdispls, sdtypes, rbuf, rcounts,
                                        rdispls, rdtypes, NBC_TAIL);
}

int mca_coll_pnbc_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                  struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                  NBC_PARAMS)
{
    return mca_coll_pnbc_reduce_scatter_init(sbuf, rbuf, rcounts, dtype, op, NBC_TAIL);
}

int mca_coll_pnbc_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                        struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                        NBC_PARAMS)
{
    NBC_MEMOISED(REDUCE_SCATTER_BLOCK,
                 mca_coll_pnbc_reduce_scatter_block_init(sbuf, rbuf, rcount, dtype, op, NBC_TAIL),
                 R(sbuf), R(rbuf), R(rcount), R(dtype), R(op));
}

int mca_coll_pnbc_iscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, NBC_PARAMS)
{
    NBC_MEMOISED(SCAN, mca_coll_pnbc_scan_init(sbuf, rbuf, count, dtype, op, NBC_TAIL), R(sbuf),
                 R(rbuf), R(count), R(dtype), R(op));
}

int mca_coll_pnbc_iexscan(const void *sbuf, void *rbuf, int count,
                          struct ompi_datatype_t *dtype, struct ompi_op_t *op, NBC_PARAMS)
{
    NBC_MEMOISED(EXSCAN, mca_coll_pnbc_exscan_init(sbuf, rbuf, count, dtype, op, NBC_TAIL), R(sbuf),
                 R(rbuf), R(count), R(dtype), R(op));
}

int mca_coll_pnbc_ineighbor_allgather(const void *sbuf, int scount,
                                      struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                      struct ompi_datatype_t *rdtype, NBC_PARAMS)
{
    NBC_MEMOISED(NEIGHBOR_ALLGATHER,
                 mca_coll_pnbc_neighbor_allgather_init(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                                       NBC_TAIL),
                 R(sbuf), R(scount), R(sdtype), R(rbuf), R(rcount), R(rdtype));
}

int mca_coll_pnbc_ineighbor_allgatherv(const void *sbuf, int scount,
                                       struct ompi_datatype_t *sdtype, void *rbuf,
                                       const int *rcounts, const int *displs,
                                       struct ompi_datatype_t *rdtype, NBC_PARAMS)
{
    return mca_coll_pnbc_neighbor_allgatherv_init(sbuf, scount, sdtype, rbuf, rcounts, displs,
                                                  rdtype, NBC_TAIL);
}

int mca_coll_pnbc_ineighbor_alltoall(const void *sbuf, int scount,
                                     struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                     struct ompi_datatype_t *rdtype, NBC_PARAMS)
{
    NBC_MEMOISED(NEIGHBOR_ALLTOALL,
                 mca_coll_pnbc_neighbor_alltoall_init(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                                      NBC_TAIL),
                 R(sbuf), R(scount), R(sdtype), R(rbuf), R(rcount), R(rdtype));
}

int mca_coll_pnbc_ineighbor_alltoallv(const void *sbuf, const int *scounts,
                                      const int *sdispls, struct ompi_datatype_t *sdtype,
                                      void *rbuf, const int *rcounts, const int *rdispls,
                                      struct ompi_datatype_t *rdtype, NBC_PARAMS)
{
    return mca_coll_pnbc_neighbor_alltoallv_init(sbuf, scounts, sdispls, sdtype, rbuf,
                                                 rcounts, rdispls, rdtype, NBC_TAIL);
}

int mca_coll_pnbc_ineighbor_alltoallw(const void *sbuf, const int *scounts,
                                      const MPI_Aint *sdispls,
                                      struct ompi_datatype_t *const *sdtypes, void *rbuf,
                                      const int *rcounts, const MPI_Aint *rdispls,
                                      struct ompi_datatype_t *const *rdtypes, NBC_PARAMS)
{
    return mca_coll_pnbc_neighbor_alltoallw_init(sbuf, scounts, sdispls, sdtypes, rbuf,
                                                 rcounts, rdispls, rdtypes, NBC_TAIL);
}
