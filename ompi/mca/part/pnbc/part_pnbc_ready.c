/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * MPIX_Pready, MPIX_Pready_range, MPIX_Pready_list (MPI-4.1 sec. 5.2.2)
 * and MPIX_Parrived (sec. 5.2.3).  A ready partition opens the gates of
 * the units it covers; a unit whose last partition is ready is posted at
 * once (early-bird), from the calling thread.  Parrived reads the
 * completion of the unit that holds the partition.
 */

#include "part.h"
#include "mpiext_pnbc_c.h"

#include "ompi/errhandler/errhandler.h"
#include "opal/runtime/opal_progress.h"

static pnbc_part_request_t *as_part(MPI_Request request, bool is_send)
{
    if (!pnbc_request_is_pnbc(request)) {
        return NULL;
    }
    pnbc_request_t *base = (pnbc_request_t *) request;
    const pnbc_req_kind_t want = is_send ? PNBC_REQ_PSEND : PNBC_REQ_PRECV;
    return (want == base->kind) ? (pnbc_part_request_t *) base : NULL;
}

/* The error handler of the request's communicator: a pnbc request's
 * (a nonblocking collective does not retain comm: its executor's), else
 * MPI_COMM_WORLD's. */
static int request_error(MPI_Request request, int err, const char *name)
{
    ompi_communicator_t *comm = &ompi_mpi_comm_world.comm;
    if (pnbc_request_is_pnbc(request)) {
        const pnbc_request_t *base = (const pnbc_request_t *) request;
        if (NULL != base->comm) {
            comm = base->comm;
        } else if (NULL != base->exec.comm) {
            comm = base->exec.comm;
        }
    }
    return OMPI_ERRHANDLER_INVOKE(comm, err, name);
}

/* Engine lock held: partition i of an active send request is ready. */
static int ready_one(pnbc_part_request_t *req, int i)
{
    if (i < 0 || i >= req->nparts || req->ready[i] == req->epoch) {
        return MPI_ERR_ARG;     /* out of range, or ready twice this epoch */
    }
    req->ready[i] = req->epoch;
    uint32_t first, last;
    if (!req->running || !pnbc_part_units_of_send(req, i, &first, &last)) {
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

/* The three Pready forms: partitions low..high, or list[0..n). */
static int ready_many(const char *name, MPI_Request request, int low, int high,
                      const int *list)
{
    pnbc_part_request_t *req = as_part(request, true);
    if (NULL == req) {
        return request_error(request, MPI_ERR_REQUEST, name);
    }
    if (!pnbc_request_is_active(&req->super)) {
        return request_error(request, MPI_ERR_REQUEST, name);
    }
    if (high < low) {
        return request_error(request, MPI_ERR_ARG, name);
    }
    /* Check all first: a call with a bad partition changes nothing. */
    for (int k = low; k <= high; ++k) {
        const int i = (NULL != list) ? list[k] : k;
        if (i < 0 || i >= req->nparts) {
            return request_error(request, MPI_ERR_ARG, name);
        }
    }
    int err = MPI_SUCCESS;
    pnbc_engine_lock();
    for (int k = low; k <= high && MPI_SUCCESS == err; ++k) {
        err = ready_one(req, (NULL != list) ? list[k] : k);
    }
    pnbc_engine_unlock();
    return (MPI_SUCCESS == err) ? MPI_SUCCESS : request_error(request, err, name);
}

int MPIX_Pready(int partition, MPI_Request request)
{
    return ready_many("MPI_Pready", request, partition, partition, NULL);
}

int MPIX_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    return ready_many("MPI_Pready_range", request, partition_low, partition_high, NULL);
}

int MPIX_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    if (length < 0 || (length > 0 && NULL == array_of_partitions)) {
        return request_error(request, MPI_ERR_ARG, "MPI_Pready_list");
    }
    if (0 == length) {
        pnbc_part_request_t *req = as_part(request, true);
        return (NULL != req && pnbc_request_is_active(&req->super))
                   ? MPI_SUCCESS
                   : request_error(request, MPI_ERR_REQUEST, "MPI_Pready_list");
    }
    return ready_many("MPI_Pready_list", request, 0, length - 1, array_of_partitions);
}

/* Engine lock held. */
static bool arrived(pnbc_part_request_t *req, int j)
{
    if (REQUEST_COMPLETE(&req->super.super)) {
        return true;
    }
    if (!req->running || 0 == req->nunits) {
        return false;
    }
    return req->super.sched.actions[pnbc_part_unit_of_recv(req, j)].done;
}

int MPIX_Parrived(MPI_Request request, int partition, int *flag)
{
    static const char name[] = "MPI_Parrived";
    pnbc_part_request_t *req = as_part(request, false);

    if (NULL == req) {
        return request_error(request, MPI_ERR_REQUEST, name);
    }
    if (NULL == flag || partition < 0 || partition >= req->nparts) {
        return request_error(request, MPI_ERR_ARG, name);
    }
    if (!pnbc_request_is_active(&req->super)) {
        *flag = 1;      /* inactive: nothing is pending */
        return MPI_SUCCESS;
    }
    pnbc_engine_lock();
    bool got = arrived(req, partition);
    pnbc_engine_unlock();
    if (!got) {
        opal_progress();
        pnbc_engine_lock();
        got = arrived(req, partition);
        pnbc_engine_unlock();
    }
    *flag = got ? 1 : 0;
    return MPI_SUCCESS;
}
