/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Request lifecycle: creation at init, start (MPI_Start/MPI_Startall, or
 * the nonblocking call for PNBC_REQ_NBC), completion from progress, free
 * (or recycling by its owner).  Start and completion allocate nothing
 * and never touch the schedule's structure, only its cursor.
 */

#include "common_pnbc_request.h"
#include "common_pnbc_transport.h"

#include "ompi/errhandler/errhandler.h"

#include <stdlib.h>
#include <string.h>

/* The request's work is done: publish the result to MPI.  `signal`:
 * someone may be waiting on it (a wait sync); not within its start, when
 * no completion call can hold it yet. */
static __attribute__((noinline)) int request_error_class(int error)
{
    return ompi_errcode_get_mpi_code(error);
}

static inline __attribute__((always_inline)) void request_publish(pnbc_request_t *req,
                                                                  bool signal)
{
    /* (the lookup of an OMPI error code, a loop, only on error) */
    req->super.req_status.MPI_ERROR = OPAL_LIKELY(OMPI_SUCCESS == req->exec.error)
                                          ? MPI_SUCCESS
                                          : request_error_class(req->exec.error);
    if (NULL != req->on_complete) {
        req->on_complete(req);
    }
    ompi_request_complete(&req->super, signal);
}

void pnbc_request_complete(pnbc_request_t *req)
{
    request_publish(req, true);
}

void pnbc_request_rearm(pnbc_request_t *req)
{
    req->super.req_complete = REQUEST_PENDING;
    req->bell = NULL;
    pnbc_progress_activate(req);
}


/* ------------------------------------------------------------------ */
/* ompi_request_t callbacks                                           */
/* ------------------------------------------------------------------ */

/* Activate an inactive request and run its start; true if it finished
 * within it.  Caller holds the engine lock.  A request without a start
 * hook runs its schedule: express where commit found it can (nothing
 * gates its SENDs then). */
static inline bool request_run_start(pnbc_request_t *req)
{
    /* (its status's MPI_ERROR is set at completion, its bell when it is
     * handed to progress) */
    req->super.req_state = OMPI_REQUEST_ACTIVE;
    req->super.req_complete = REQUEST_PENDING;
    if (pnbc_request_express(req)) {
        return pnbc_exec_express_start(&req->exec);
    }
    return (NULL == req->ops || NULL == req->ops->start) ? pnbc_exec_start(&req->exec)
                                                         : req->ops->start(req);
}

/* After request_run_start(): completed if it finished, else polled from
 * now on.  Caller holds the engine lock. */
static inline __attribute__((always_inline)) void request_started(pnbc_request_t *req, bool done)
{
    if (done) {
        request_publish(req, false);
    } else {
        req->bell = NULL;
        pnbc_progress_activate(req);
    }
}

/* Starting an active request is erroneous (MPI-4.1 sec. 3.9), unless its
 * kind takes several starts in flight. */
static int request_start_active(pnbc_request_t *req)
{
    int err = MPI_ERR_REQUEST;
    if (NULL != req->ops && NULL != req->ops->start_active) {
        pnbc_engine_lock();
        err = req->ops->start_active(req);
        pnbc_engine_unlock();
    }
    return (MPI_SUCCESS == err) ? OMPI_SUCCESS
                                : OMPI_ERRHANDLER_INVOKE(req->exec.comm, err, "MPI_Start");
}

/* req_start: MPI_Startall hands over runs of requests sharing this
 * function -- pnbc requests of any kind -- so this receives arrays, and
 * starts them in one pass under one acquisition of the engine lock.
 * (Active requests -- only MPI_Start passes them -- go one by one: their
 * error handler must run outside the lock.) */
static __attribute__((noinline)) int request_start_all(size_t count, ompi_request_t **requests)
{
    int rc = OMPI_SUCCESS;
    size_t i = 0;
    while (i < count) {
        pnbc_engine_lock();
        for (; i < count && OMPI_REQUEST_ACTIVE != requests[i]->req_state; ++i) {
            pnbc_request_t *req = (pnbc_request_t *) requests[i];
            request_started(req, request_run_start(req));
        }
        pnbc_engine_unlock();
        if (i < count) {
            int one = request_start_active((pnbc_request_t *) requests[i++]);
            if (OMPI_SUCCESS == rc) {
                rc = one;
            }
        }
    }
    return rc;
}

/* MPI_Start's case, one inactive request, apart: it keeps fewer
 * registers than the loop. */
static int request_start(size_t count, ompi_request_t **requests)
{
    if (OPAL_LIKELY(1 == count) && OMPI_REQUEST_ACTIVE != requests[0]->req_state) {
        pnbc_request_t *req = (pnbc_request_t *) requests[0];
        pnbc_engine_lock();
        request_started(req, request_run_start(req));
        pnbc_engine_unlock();
        return OMPI_SUCCESS;
    }
    return request_start_all(count, requests);
}

/* A request as the MPI layer first sees it: what it may keep in the
 * request (ompi_nbc_room, a completion callback) NULL until it stores
 * it, the status of a collective.  Done when the request is set up and,
 * for PNBC_REQ_NBC, at each free of one the user held, so a start whose
 * call ended within it (never handed out) leaves nothing to clear. */
static void request_clear_mpi_fields(pnbc_request_t *req)
{
    memset(req->ompi_nbc_room, 0, sizeof(req->ompi_nbc_room));
    req->super.req_complete_cb = NULL;
    req->super.req_complete_cb_data = NULL;
    req->super.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->super.req_status.MPI_TAG = MPI_ANY_TAG;
    req->super.req_status._ucount = 0;
    req->super.req_status._cancelled = 0;
}

int pnbc_request_start_nbc(pnbc_request_t *req, int tag, bool *in_call)
{
    req->exec.tag = tag;
    /* inactive (a freed request is OMPI_REQUEST_INVALID), so never
     * refused as an active start */
    pnbc_engine_lock();
    const bool done = request_run_start(req);
    *in_call = done && OMPI_SUCCESS == req->exec.error;
    if (*in_call) {
        req->super.req_state = OMPI_REQUEST_INACTIVE;
        req->super.req_complete = REQUEST_COMPLETED;
    } else {
        request_started(req, done);
    }
    pnbc_engine_unlock();
    return OMPI_SUCCESS;
}

/* Free of a non-persistent request (MPI_Wait/MPI_Test once complete, or
 * MPI_Request_free): refused while it runs, as libnbc does. */
static int request_free_nbc(ompi_request_t **request)
{
    pnbc_request_t *req = (pnbc_request_t *) *request;

    if (!REQUEST_COMPLETE(&req->super)) {
        return MPI_ERR_REQUEST;
    }
    OMPI_REQUEST_FINI(&req->super);
    *request = MPI_REQUEST_NULL;
    request_clear_mpi_fields(req);
    if (NULL != req->ops && NULL != req->ops->recycle) {
        req->ops->recycle(req);
    } else {
        OBJ_RELEASE(req);
    }
    return OMPI_SUCCESS;
}

/* MPI_ERR_REQUEST as a code of its own whose text says why (added once
 * with MPI_Add_error_code): what an error handler prints, and
 * MPI_Error_string, then names the request's state; the class stays
 * MPI_ERR_REQUEST (MPI_ERR_REQUEST itself if no code could be added). */
static int active_request_error(void)
{
    static pnbc_lock_t lock = PNBC_LOCK_INITIALIZER;
    static int code = MPI_ERR_REQUEST;
    static bool tried;
    pnbc_lock(&lock);
    if (!tried) {
        int c;
        tried = true;
        if (MPI_SUCCESS == MPI_Add_error_code(MPI_ERR_REQUEST, &c) &&
            MPI_SUCCESS == MPI_Add_error_string(c, "MPI_ERR_REQUEST: the request is active "
                                                   "(started and not yet completed by a "
                                                   "completion call): it cannot be freed or "
                                                   "cancelled")) {
            code = c;
        }
    }
    pnbc_unlock(&lock);
    return code;
}

static int request_free(ompi_request_t **request)
{
    pnbc_request_t *req = (pnbc_request_t *) *request;

    if (PNBC_REQ_NBC == req->kind) {
        return request_free_nbc(request);
    }

    /* Freeing an active persistent collective or partitioned request is
     * erroneous (MPI-4.1 sec. 6.12, 4.2): report it and leave the request
     * usable. */
    if (OMPI_REQUEST_ACTIVE == req->super.req_state) {
        return active_request_error();
    }
    if (NULL != req->ops && NULL != req->ops->free) {
        req->ops->free(req);
    }
    OMPI_REQUEST_FINI(&req->super);
    OBJ_RELEASE(req);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int request_cancel(ompi_request_t *request, int complete)
{
    (void) complete;
    /* Collectives cannot be cancelled; MPI-4.1 sec. 4.2 does not allow
     * cancelling an active partitioned request either. */
    return (OMPI_REQUEST_ACTIVE == request->req_state) ? active_request_error()
                                                        : MPI_ERR_REQUEST;
}

/* ------------------------------------------------------------------ */
/* Construction and retained objects                                  */
/* ------------------------------------------------------------------ */

static void request_construct(pnbc_request_t *req)
{
    req->super.req_type = OMPI_REQUEST_COLL;
    req->super.req_start = request_start;
    req->super.req_free = request_free;
    req->super.req_cancel = request_cancel;
    memset(req->ompi_nbc_room, 0, sizeof(req->ompi_nbc_room));
    req->kind = PNBC_REQ_COLL;
    req->ops = NULL;
    req->on_complete = NULL;
    pnbc_sched_construct(&req->sched);
    req->comm = NULL;
    req->op = NULL;
    req->dtypes = NULL;
    req->ndtypes = req->dtypes_cap = 0;
    req->name = req->algorithm = NULL;
    req->next = req->prev = NULL;
    req->bell = req->parked_on = NULL;
    req->bell_round = 0;
    req->waker.next = NULL;
    req->waker.queued = false;
}

static void request_destruct(pnbc_request_t *req)
{
    pnbc_progress_forget(req);
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

OBJ_CLASS_INSTANCE(pnbc_request_t, ompi_request_t, request_construct, request_destruct);

void pnbc_request_setup(pnbc_request_t *req, pnbc_req_kind_t kind,
                        const pnbc_request_ops_t *ops, ompi_communicator_t *comm, int tag)
{
    (void) mca_common_pnbc_progress_needed();
    const bool persistent = (PNBC_REQ_NBC != kind);
    OMPI_REQUEST_INIT(&req->super, persistent);
    /* Channels are PML requests to Open MPI: their errors go to their
     * communicator's error handler (a COLL request's go to
     * MPI_COMM_WORLD's, ompi_errhandler_request_invoke), as ob1's own
     * persistent requests' do; partitioned ones are PART requests where
     * Open MPI has that type (5.0), else PML.  MPI_Start/Startall treat
     * them all alike. */
    req->super.req_type =
        (PNBC_REQ_COLL == kind || PNBC_REQ_NBC == kind)     ? OMPI_REQUEST_COLL
        : (PNBC_REQ_PSEND == kind || PNBC_REQ_PRECV == kind) ? PNBC_REQUEST_PART
                                                             : OMPI_REQUEST_PML;
    req->kind = kind;
    req->ops = ops;
    req->on_complete = (NULL != ops) ? ops->complete : NULL;
    req->super.req_mpi_object.comm = comm;
    request_clear_mpi_fields(req);
    /* A nonblocking collective's instance lives in its communicator's
     * cache: holding the communicator would keep it alive forever. */
    if (persistent) {
        OBJ_RETAIN(comm);
        req->comm = comm;
    }
    req->exec.sched = &req->sched;
    req->sched.waker = &req->waker;
    req->exec.comm = comm;
    req->exec.tag = tag;
}

bool pnbc_request_is_pnbc(const ompi_request_t *request)
{
    return NULL != request && request_start == request->req_start;
}

pnbc_request_t *pnbc_request_new(ompi_communicator_t *comm, int tag)
{
    pnbc_request_t *req = OBJ_NEW(pnbc_request_t);
    if (NULL != req) {
        pnbc_request_setup(req, PNBC_REQ_COLL, NULL, comm, tag);
    }
    return req;
}

int pnbc_request_retain_dtype(pnbc_request_t *req, ompi_datatype_t *dtype)
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

void pnbc_request_retain_op(pnbc_request_t *req, ompi_op_t *op)
{
    if (NULL != op && NULL == req->op) {
        OBJ_RETAIN(op);
        req->op = op;
    }
}
