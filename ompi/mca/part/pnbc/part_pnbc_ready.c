/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Pready (MPI-4.1 sec. 5.2.2) and Parrived (sec. 5.2.3), shaped like
 * Open MPI 5's part module: partitions min..max of one request.  A ready
 * partition opens the gates of the units it covers; a unit whose last
 * partition is ready is posted at once (early-bird), from the calling
 * thread.  Parrived reads the completion of the unit that holds the
 * partition.  Errors are returned as MPI error classes (the caller
 * reports them).
 */

#include "part_pnbc.h"

#include "opal/runtime/opal_progress.h"

static pnbc_part_request_t *as_part(ompi_request_t *request, bool is_send)
{
    if (!pnbc_request_is_pnbc(request)) {
        return NULL;
    }
    pnbc_request_t *base = (pnbc_request_t *) request;
    const pnbc_req_kind_t want = is_send ? PNBC_REQ_PSEND : PNBC_REQ_PRECV;
    return (want == base->kind) ? (pnbc_part_request_t *) base : NULL;
}

/* Engine lock held: partition i of an active send request is ready. */
static int ready_one(pnbc_part_request_t *req, size_t i)
{
    if (i >= (size_t) req->nparts || req->ready[i] == req->epoch) {
        return MPI_ERR_ARG;     /* out of range, or ready twice this epoch */
    }
    req->ready[i] = req->epoch;
    uint32_t first, last;
    if (!req->running || !pnbc_part_units_of_send(req, (int) i, &first, &last)) {
        return MPI_SUCCESS;     /* the run opens its gates when it begins */
    }
    for (uint32_t u = first; u <= last; ++u) {
        int rc = pnbc_exec_open_gate(&req->super.exec, &req->super.sched.actions[u]);
        if (OMPI_SUCCESS != rc) {
            return ompi_errcode_get_mpi_code(rc);
        }
    }
    return MPI_SUCCESS;
}

/* Partitions low..high, or list[low..high]. */
static int ready_many(ompi_request_t *request, size_t low, size_t high, const int *list)
{
    pnbc_part_request_t *req = as_part(request, true);
    if (NULL == req || !pnbc_request_is_active(&req->super)) {
        return MPI_ERR_REQUEST;
    }
    if (high < low) {
        return MPI_ERR_ARG;
    }
    /* Check all first: a call with a bad partition changes nothing. */
    for (size_t k = low; k <= high; ++k) {
        const long long i = (NULL != list) ? list[k] : (long long) k;
        if (i < 0 || i >= req->nparts) {
            return MPI_ERR_ARG;
        }
    }
    int err = MPI_SUCCESS;
    pnbc_engine_lock();
    for (size_t k = low; k <= high && MPI_SUCCESS == err; ++k) {
        err = ready_one(req, (NULL != list) ? (size_t) list[k] : k);
    }
    pnbc_engine_unlock();
    return err;
}

int pnbc_part_pready(size_t min_part, size_t max_part, ompi_request_t *request)
{
    return ready_many(request, min_part, max_part, NULL);
}

int pnbc_part_pready_list(size_t length, const int *list, ompi_request_t *request)
{
    if (length > 0 && NULL == list) {
        return MPI_ERR_ARG;
    }
    if (0 == length) {
        pnbc_part_request_t *req = as_part(request, true);
        return (NULL != req && pnbc_request_is_active(&req->super)) ? MPI_SUCCESS
                                                                    : MPI_ERR_REQUEST;
    }
    return ready_many(request, 0, length - 1, list);
}

/* Engine lock held. */
static bool arrived(pnbc_part_request_t *req, size_t j)
{
    if (REQUEST_COMPLETE(&req->super.super)) {
        return true;
    }
    if (!req->running || 0 == req->nunits) {
        return false;
    }
    return req->super.sched.actions[pnbc_part_unit_of_recv(req, (int) j)].done;
}

static bool all_arrived(pnbc_part_request_t *req, size_t min_part, size_t max_part)
{
    bool got = true;
    pnbc_engine_lock();
    for (size_t j = min_part; j <= max_part && got; ++j) {
        got = arrived(req, j);
    }
    pnbc_engine_unlock();
    return got;
}

/* MPI-4.1 sec. 5.2.3: MPI_PARRIVED may be called with a null or inactive
 * request; flag is then true.  A request freed with MPI_Request_free is
 * MPI_REQUEST_NULL to the caller. */
int pnbc_part_parrived(size_t min_part, size_t max_part, int *flag, ompi_request_t *request)
{
    if (NULL == flag) {
        return MPI_ERR_ARG;
    }
    if (NULL == request || MPI_REQUEST_NULL == request) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    pnbc_part_request_t *req = as_part(request, false);
    if (NULL == req) {
        return MPI_ERR_REQUEST;
    }
    if (!pnbc_request_is_active(&req->super)) {
        *flag = 1;      /* inactive: nothing is pending */
        return MPI_SUCCESS;
    }
    if (max_part < min_part || max_part >= (size_t) req->nparts) {
        return MPI_ERR_ARG;
    }
    bool got = all_arrived(req, min_part, max_part);
    if (!got) {
        opal_progress();
        got = all_arrived(req, min_part, max_part);
    }
    *flag = got ? 1 : 0;
    return MPI_SUCCESS;
}

const char *pnbc_part_state(ompi_request_t *request)
{
    if (!pnbc_request_is_pnbc(request)) {
        return "not a partitioned request";
    }
    pnbc_request_t *base = (pnbc_request_t *) request;
    if (PNBC_REQ_PSEND != base->kind && PNBC_REQ_PRECV != base->kind) {
        return "not a partitioned request";
    }
    return pnbc_request_is_active(base) ? "active (started, not yet completed)" : "inactive";
}
