/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The module: which slots pnbc fills on a communicator, and the single
 * path every *_init slot takes:
 *
 *     normalise arguments -> choose algorithm -> build schedule
 *         -> commit (temporaries, addresses, transports) -> request
 *
 * pnbc fills the persistent and the nonblocking slots of the collectives
 * it implements (per kind of communicator); the blocking ones stay with
 * the other components (tuned/han).
 */

#include "coll_pnbc.h"
#include "coll_pnbc_algorithms.h"
#include "common_pnbc_request.h"

#include "ompi/info/info.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

static int pnbc_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    (void) module;
    (void) comm;
    return OMPI_SUCCESS;
}

static void pnbc_module_construct(mca_coll_pnbc_module_t *module)
{
    module->ninit = 0;
    module->ncalls = 0;
    memset(&module->cache, 0, sizeof(module->cache));
}

/* At communicator free: the nonblocking schedule cache goes with it
 * (no call is running then: each holds the communicator). */
static void pnbc_module_destruct(mca_coll_pnbc_module_t *module)
{
    mca_coll_pnbc_cache_fini(module);
}

OBJ_CLASS_INSTANCE(mca_coll_pnbc_module_t, mca_coll_base_module_t,
                   pnbc_module_construct, pnbc_module_destruct);

/* Claim a persistent and the nonblocking slot only when the collective
 * has an algorithm for this kind of communicator. */
static void fill_slots(mca_coll_base_module_t *m, bool inter)
{
#define PNBC_FILL_SLOT(ID, name, groups, large) \
    m->coll_##name##_init = mca_coll_pnbc_implemented(PNBC_##ID, inter) \
                                ? mca_coll_pnbc_##name##_init : NULL; \
    m->coll_i##name = mca_coll_pnbc_implemented(PNBC_##ID, inter) \
                          ? mca_coll_pnbc_i##name : NULL;
    PNBC_COLLECTIVES(PNBC_FILL_SLOT)
#undef PNBC_FILL_SLOT
}

mca_coll_base_module_t *mca_coll_pnbc_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority)
{
    mca_coll_pnbc_module_t *module = OBJ_NEW(mca_coll_pnbc_module_t);
    if (NULL == module) {
        return NULL;
    }
    *priority = mca_coll_pnbc_component.priority;
    module->super.coll_module_enable = pnbc_module_enable;
    fill_slots(&module->super, OMPI_COMM_IS_INTER(comm));
    return &module->super;
}

/* ------------------------------------------------------------------ */
/* The common *_init path                                             */
/* ------------------------------------------------------------------ */

/* Keep every user datatype and op the schedule refers to. */
static int retain_objects(pnbc_request_t *req, const pnbc_coll_args_t *args)
{
    int rc = OMPI_SUCCESS;
    ompi_datatype_t *singles[] = { args->dtype, args->sdtype, args->rdtype };

    pnbc_request_retain_op(req, args->op);
    for (size_t i = 0; i < sizeof(singles) / sizeof(singles[0]) && OMPI_SUCCESS == rc; ++i) {
        rc = pnbc_request_retain_dtype(req, singles[i]);
    }
    for (int i = 0; NULL != args->sdtypes && i < args->nsend_entries && OMPI_SUCCESS == rc; ++i) {
        rc = pnbc_request_retain_dtype(req, args->sdtypes[i]);
    }
    for (int i = 0; NULL != args->rdtypes && i < args->nrecv_entries && OMPI_SUCCESS == rc; ++i) {
        rc = pnbc_request_retain_dtype(req, args->rdtypes[i]);
    }
    return rc;
}

/* The pipeline segment for this request: hint, else MCA parameter. */
static size_t request_segsize(struct ompi_info_t *info)
{
    char value[32];
    int flag = 0;
    if (NULL != info && MPI_INFO_NULL != info &&
        OMPI_SUCCESS == ompi_info_get(info, "pnbc_segsize", sizeof(value) - 1, value, &flag) &&
        flag && atol(value) > 0) {
        return (size_t) atol(value);
    }
    return (size_t) (mca_coll_pnbc_component.segsize > 0 ? mca_coll_pnbc_component.segsize : 0);
}

char mca_coll_pnbc_nonblocking_marker;

int mca_coll_pnbc_build(pnbc_request_t *req, pnbc_coll_args_t *args,
                        const pnbc_algorithm_t *alg)
{
    req->name = mca_coll_pnbc_coll_name(args->coll);
    req->algorithm = alg->name;
    alg->build(&req->sched, args);
    req->sched.large = mca_coll_pnbc_large_msgs(args->coll);
    int rc = pnbc_sched_commit(&req->sched, args->sbuf, args->rbuf, args->comm, req->exec.tag);
    if (OMPI_SUCCESS == rc) {
        rc = retain_objects(req, args);
    }
    return rc;
}

int mca_coll_pnbc_coll_init(pnbc_coll_args_t *args, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_pnbc_module_t *pmod = (mca_coll_pnbc_module_t *) module;

    args->rank = ompi_comm_rank(args->comm);
    args->size = ompi_comm_size(args->comm);
    args->inter = OMPI_COMM_IS_INTER(args->comm);
    args->remote_size = args->inter ? ompi_comm_remote_size(args->comm) : 0;
    if (PNBC_NONBLOCKING == info) {
        args->segsize = request_segsize(NULL);
        return mca_coll_pnbc_nbc_call(args, request, pmod);
    }
    args->segsize = request_segsize(info);
    const pnbc_algorithm_t *alg = mca_coll_pnbc_select(args, info);

    pnbc_request_t *req =
        pnbc_request_new(args->comm, mca_coll_pnbc_next_tag(pmod));
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int rc = mca_coll_pnbc_build(req, args, alg);
    if (OMPI_SUCCESS != rc) {
        req->super.req_state = OMPI_REQUEST_INVALID;
        OBJ_RELEASE(req);
        return rc;
    }
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: %s_init algorithm=%s comm_size=%d rank=%d "
                    "rounds=%u actions=%u tmp_bytes=%zu",
                    req->name, req->algorithm, args->size, args->rank,
                    req->sched.nrounds, req->sched.nactions, req->sched.tmp_size);
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}
