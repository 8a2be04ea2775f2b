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
 * pnbc fills only the persistent slots it implements; everything else
 * stays with the other components.  Intercommunicators get nothing yet.
 */

#include "coll_pnbc.h"
#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_request.h"

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

static int pnbc_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    (void) module;
    (void) comm;
    return OMPI_SUCCESS;
}

static void pnbc_module_construct(mca_coll_pnbc_module_t *module)
{
    module->ninit = 0;
}

OBJ_CLASS_INSTANCE(mca_coll_pnbc_module_t, mca_coll_base_module_t,
                   pnbc_module_construct, NULL);

mca_coll_base_module_t *mca_coll_pnbc_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority)
{
    if (OMPI_COMM_IS_INTER(comm)) {
        return NULL;
    }
    mca_coll_pnbc_module_t *module = OBJ_NEW(mca_coll_pnbc_module_t);
    if (NULL == module) {
        return NULL;
    }
    *priority = mca_coll_pnbc_component.priority;
    module->super.coll_module_enable = pnbc_module_enable;
    module->super.coll_barrier_init = mca_coll_pnbc_barrier_init;
    module->super.coll_bcast_init = mca_coll_pnbc_bcast_init;
    module->super.coll_reduce_init = mca_coll_pnbc_reduce_init;
    module->super.coll_allreduce_init = mca_coll_pnbc_allreduce_init;
    return &module->super;
}

/* ------------------------------------------------------------------ */
/* The common *_init path                                             */
/* ------------------------------------------------------------------ */

static void ensure_progress_registered(void)
{
    mca_coll_pnbc_component_t *c = &mca_coll_pnbc_component;
    OPAL_THREAD_LOCK(&c->lock);
    if (!c->progress_registered) {
        c->progress_registered = (OPAL_SUCCESS == opal_progress_register(mca_coll_pnbc_progress));
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

static int retain_objects(mca_coll_pnbc_request_t *req, const pnbc_coll_args_t *args)
{
    mca_coll_pnbc_request_retain_op(req, args->op);
    return mca_coll_pnbc_request_retain_dtype(req, args->dtype);
}

int mca_coll_pnbc_coll_init(pnbc_coll_args_t *args, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_pnbc_module_t *pmod = (mca_coll_pnbc_module_t *) module;
    (void) info;    /* per-request hints: not interpreted yet */

    args->rank = ompi_comm_rank(args->comm);
    args->size = ompi_comm_size(args->comm);
    const pnbc_algorithm_t *alg = mca_coll_pnbc_select(args);

    mca_coll_pnbc_request_t *req =
        mca_coll_pnbc_request_new(args->comm, mca_coll_pnbc_next_tag(pmod));
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->coll_name = mca_coll_pnbc_coll_name(args->coll);
    req->algorithm = alg->name;

    alg->build(&req->sched, args);
    int rc = pnbc_sched_commit(&req->sched, args->sbuf, args->rbuf);
    if (OMPI_SUCCESS == rc) {
        rc = retain_objects(req, args);
    }
    if (OMPI_SUCCESS != rc) {
        req->super.req_state = OMPI_REQUEST_INVALID;
        OBJ_RELEASE(req);
        return rc;
    }
    ensure_progress_registered();

    if (mca_coll_pnbc_component.verbose >= 1) {
        opal_output(0, "coll:pnbc: %s_init algorithm=%s comm_size=%d rank=%d "
                    "rounds=%u actions=%u tmp_bytes=%zu",
                    req->coll_name, req->algorithm, args->size, args->rank,
                    req->sched.nrounds, req->sched.nactions, req->sched.tmp_size);
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Slot entry points: normalise the arguments, nothing else           */
/* ------------------------------------------------------------------ */

int mca_coll_pnbc_barrier_init(struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module)
{
    pnbc_coll_args_t a = { .coll = PNBC_BARRIER, .comm = comm, .dtype = MPI_BYTE };
    return mca_coll_pnbc_coll_init(&a, info, request, module);
}

int mca_coll_pnbc_bcast_init(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    pnbc_coll_args_t a = { .coll = PNBC_BCAST, .comm = comm, .sbuf = buf, .rbuf = buf,
                           .count = (size_t) count, .dtype = dtype, .root = root };
    return mca_coll_pnbc_coll_init(&a, info, request, module);
}

int mca_coll_pnbc_reduce_init(const void *sbuf, void *rbuf, int count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module)
{
    bool in_place = (MPI_IN_PLACE == sbuf) && ompi_comm_rank(comm) == root;
    pnbc_coll_args_t a = { .coll = PNBC_REDUCE, .comm = comm,
                           .sbuf = in_place ? rbuf : sbuf, .rbuf = rbuf,
                           .count = (size_t) count, .dtype = dtype, .op = op,
                           .root = root, .in_place = in_place };
    return mca_coll_pnbc_coll_init(&a, info, request, module);
}

int mca_coll_pnbc_allreduce_init(const void *sbuf, void *rbuf, int count,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                 ompi_request_t **request, mca_coll_base_module_t *module)
{
    bool in_place = (MPI_IN_PLACE == sbuf);
    pnbc_coll_args_t a = { .coll = PNBC_ALLREDUCE, .comm = comm,
                           .sbuf = in_place ? rbuf : sbuf, .rbuf = rbuf,
                           .count = (size_t) count, .dtype = dtype, .op = op,
                           .in_place = in_place };
    return mca_coll_pnbc_coll_init(&a, info, request, module);
}
