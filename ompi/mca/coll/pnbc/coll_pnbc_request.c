/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Request lifecycle: creation at init, start (MPI_Start/MPI_Startall),
 * completion from progress, free.  Start and completion allocate nothing
 * and never touch the schedule's structure, only its cursor.
 */

#include "coll_pnbc_request.h"

#include "ompi/errhandler/errhandler.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Active list (component-wide, guarded by the component lock)         */
/* ------------------------------------------------------------------ */

static void active_push(mca_coll_pnbc_request_t *req)
{
    mca_coll_pnbc_component_t *c = &mca_coll_pnbc_component;
    OPAL_THREAD_LOCK(&c->lock);
    req->prev = NULL;
    req->next = c->active_head;
    if (NULL != c->active_head) {
        c->active_head->prev = req;
    }
    c->active_head = req;
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* Caller holds the component lock. */
static void active_unlink(mca_coll_pnbc_request_t *req)
{
    mca_coll_pnbc_component_t *c = &mca_coll_pnbc_component;
    if (NULL != req->prev) {
        req->prev->next = req->next;
    } else {
        c->active_head = req->next;
    }
    if (NULL != req->next) {
        req->next->prev = req->prev;
    }
    req->next = req->prev = NULL;
}

/* The schedule ran to its end: publish the result to MPI. */
static void request_complete(mca_coll_pnbc_request_t *req)
{
    req->super.req_status.MPI_ERROR = ompi_errcode_get_mpi_code(req->exec.error);
    ompi_request_complete(&req->super, true);
}

int mca_coll_pnbc_request_progress_all(void)
{
    mca_coll_pnbc_component_t *c = &mca_coll_pnbc_component;
    int completed = 0;

    if (NULL == c->active_head) {
        return 0;   /* the common case: costs one load */
    }
    OPAL_THREAD_LOCK(&c->lock);
    if (c->in_progress) {   /* a transport re-entered opal_progress */
        OPAL_THREAD_UNLOCK(&c->lock);
        return 0;
    }
    c->in_progress = true;
    mca_coll_pnbc_request_t *req = c->active_head, *next;
    for (; NULL != req; req = next) {
        next = req->next;
        if (pnbc_exec_progress(&req->exec)) {
            active_unlink(req);
            request_complete(req);
            completed++;
        }
    }
    c->in_progress = false;
    OPAL_THREAD_UNLOCK(&c->lock);
    return completed;
}

/* ------------------------------------------------------------------ */
/* ompi_request_t callbacks                                           */
/* ------------------------------------------------------------------ */

static int request_start_one(mca_coll_pnbc_request_t *req)
{
    if (OPAL_UNLIKELY(OMPI_REQUEST_ACTIVE == req->super.req_state)) {
        /* Starting an active request is erroneous (MPI-4.1 sec. 3.9). */
        return OMPI_ERRHANDLER_INVOKE(req->comm, MPI_ERR_REQUEST, "MPI_Start");
    }
    req->super.req_state = OMPI_REQUEST_ACTIVE;
    req->super.req_complete = REQUEST_PENDING;
    req->super.req_status.MPI_ERROR = MPI_SUCCESS;

    if (pnbc_exec_start(&req->exec)) {
        request_complete(req);
    } else {
        active_push(req);
    }
    return OMPI_SUCCESS;
}

/* req_start: MPI_Startall hands over runs of requests sharing this
 * function, so this receives arrays. */
static int request_start(size_t count, ompi_request_t **requests)
{
    int rc = OMPI_SUCCESS;
    for (size_t i = 0; i < count; ++i) {
        int one = request_start_one((mca_coll_pnbc_request_t *) requests[i]);
        if (OMPI_SUCCESS == rc) {
            rc = one;
        }
    }
    return rc;
}

static int request_free(ompi_request_t **request)
{
    mca_coll_pnbc_request_t *req = (mca_coll_pnbc_request_t *) *request;

    /* Freeing an active persistent collective request is erroneous
     * (MPI-4.1 sec. 6.12): report it and leave the request usable. */
    if (OMPI_REQUEST_ACTIVE == req->super.req_state) {
        return MPI_ERR_REQUEST;
    }
    OMPI_REQUEST_FINI(&req->super);
    OBJ_RELEASE(req);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int request_cancel(ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST;   /* collectives cannot be cancelled */
}

/* ------------------------------------------------------------------ */
/* Construction and retained objects                                  */
/* ------------------------------------------------------------------ */

static void request_construct(mca_coll_pnbc_request_t *req)
{
    req->super.req_type = OMPI_REQUEST_COLL;
    req->super.req_start = request_start;
    req->super.req_free = request_free;
    req->super.req_cancel = request_cancel;
    pnbc_sched_construct(&req->sched);
    req->comm = NULL;
    req->op = NULL;
    req->dtypes = NULL;
    req->ndtypes = req->dtypes_cap = 0;
    req->coll_name = req->algorithm = NULL;
    req->next = req->prev = NULL;
}

static void request_destruct(mca_coll_pnbc_request_t *req)
{
    pnbc_sched_destruct(&req->sched);
    for (uint32_t i = 0; i < req->ndtypes; ++i) {
        OBJ_RELEASE(req->dtypes[i]);
    }
    free(req->dtypes);
    if (NULL != req->op) {
        OBJ_RELEASE(req->op);
    }
    if (NULL != req->comm) {
        OBJ_RELEASE(req->comm);
    }
}

OBJ_CLASS_INSTANCE(mca_coll_pnbc_request_t, ompi_request_t,
                   request_construct, request_destruct);

mca_coll_pnbc_request_t *mca_coll_pnbc_request_new(ompi_communicator_t *comm, int tag)
{
    mca_coll_pnbc_request_t *req = OBJ_NEW(mca_coll_pnbc_request_t);
    if (NULL == req) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&req->super, true);
    req->super.req_mpi_object.comm = comm;
    req->super.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->super.req_status.MPI_TAG = MPI_ANY_TAG;
    req->super.req_status._ucount = 0;
    req->super.req_status._cancelled = 0;
    OBJ_RETAIN(comm);
    req->comm = comm;
    req->exec.sched = &req->sched;
    req->exec.comm = comm;
    req->exec.tag = tag;
    return req;
}

int mca_coll_pnbc_request_retain_dtype(mca_coll_pnbc_request_t *req, ompi_datatype_t *dtype)
{
    if (NULL == dtype || ompi_datatype_is_predefined(dtype)) {
        return OMPI_SUCCESS;    /* predefined types live as long as MPI */
    }
    for (uint32_t i = 0; i < req->ndtypes; ++i) {
        if (req->dtypes[i] == dtype) {
            return OMPI_SUCCESS;
        }
    }
    if (req->ndtypes == req->dtypes_cap) {
        uint32_t ncap = req->dtypes_cap ? 2 * req->dtypes_cap : 2;
        ompi_datatype_t **grown = realloc(req->dtypes, ncap * sizeof(*grown));
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        req->dtypes = grown;
        req->dtypes_cap = ncap;
    }
    OBJ_RETAIN(dtype);
    req->dtypes[req->ndtypes++] = dtype;
    return OMPI_SUCCESS;
}

void mca_coll_pnbc_request_retain_op(mca_coll_pnbc_request_t *req, ompi_op_t *op)
{
    if (NULL != op && NULL == req->op) {
        OBJ_RETAIN(op);
        req->op = op;
    }
}
