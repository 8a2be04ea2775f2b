/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * MPIX_Psend_init, MPIX_Precv_init, MPIX_Pready, MPIX_Pready_range,
 * MPIX_Pready_list, MPIX_Parrived: MPI-4.1 partitioned communication for
 * Open MPI 4.1, which has none (pnbc_mpi4.h gives them their MPI-4
 * names).  Each converts its arguments, calls the implementation in
 * ompi/mca/part/pnbc (part_pnbc.h) and reports an error class through the
 * error handler of the request's communicator (init: the communicator
 * argument's).  On Open MPI 5 the part component serves Open MPI's own
 * MPI_Psend_init ... instead, and this file is not built.
 */

#include "part_pnbc.h"
#include "mpiext_pnbc_c.h"

#include "ompi/errhandler/errhandler.h"
#include "ompi/runtime/mpiruntime.h"

#include <stdio.h>

/* The implementation's host hook (part_pnbc.h). */
int pnbc_part_engine_take(void)
{
    return mca_common_pnbc_hold_until_finalize();
}

/* The communicator whose error handler a request's errors go to: the
 * request's own, else MPI_COMM_WORLD's. */
static ompi_communicator_t *request_comm(MPI_Request request)
{
    if (pnbc_request_is_pnbc(request)) {
        const pnbc_request_t *base = (const pnbc_request_t *) request;
        if (NULL != base->comm) {
            return base->comm;
        }
        if (NULL != base->exec.comm) {
            return base->exec.comm;
        }
    }
    return &ompi_mpi_comm_world.comm;
}

/* Report err of call `name` on `request`: a request-state error names the
 * state it found. */
static int request_error(MPI_Request request, int err, const char *name)
{
    if (MPI_SUCCESS == err) {
        return MPI_SUCCESS;
    }
    char what[160];
    const char *msg = name;
    if (MPI_ERR_REQUEST == err) {
        snprintf(what, sizeof(what), "%s (the request is %s)", name, pnbc_part_state(request));
        msg = what;
    }
    return OMPI_ERRHANDLER_INVOKE(request_comm(request), err, msg);
}

static int init_error(MPI_Comm comm, int err, const char *name)
{
    if (MPI_SUCCESS == err) {
        return MPI_SUCCESS;
    }
    if (ompi_comm_invalid(comm)) {
        return OMPI_ERRHANDLER_INVOKE(&ompi_mpi_comm_world.comm, err, name);
    }
    return OMPI_ERRHANDLER_INVOKE(comm, err, name);
}

static bool mpi_usable(void)
{
    return ompi_mpi_state >= OMPI_MPI_STATE_INIT_COMPLETED &&
           ompi_mpi_state < OMPI_MPI_STATE_FINALIZE_STARTED;
}

/* int partitions and MPI_Count count as the implementation's size_t: a
 * negative value becomes one it refuses (> INT_MAX, > INT64_MAX). */
static size_t as_size(long long v)
{
    return (size_t) v;
}

int MPIX_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (!mpi_usable()) {
        return MPI_ERR_OTHER;   /* no error handler can be called */
    }
    return init_error(comm,
                      pnbc_part_init(true, buf, as_size(partitions), as_size(count), datatype,
                                     dest, tag, comm, info, request),
                      "MPI_Psend_init");
}

int MPIX_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (!mpi_usable()) {
        return MPI_ERR_OTHER;
    }
    return init_error(comm,
                      pnbc_part_init(false, buf, as_size(partitions), as_size(count), datatype,
                                     source, tag, comm, info, request),
                      "MPI_Precv_init");
}

/* A negative partition becomes an index past every request's last. */
int MPIX_Pready(int partition, MPI_Request request)
{
    return request_error(request,
                         pnbc_part_pready(as_size(partition), as_size(partition), request),
                         "MPI_Pready");
}

int MPIX_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    /* A negative low is no range (1..0 reports MPI_ERR_ARG, after the
     * request's own MPI_ERR_REQUEST if it is not an active send). */
    const int err = (partition_low < 0)
                        ? pnbc_part_pready(1, 0, request)
                        : pnbc_part_pready((size_t) partition_low, as_size(partition_high),
                                           request);
    return request_error(request, err, "MPI_Pready_range");
}

int MPIX_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    const int err = (length < 0) ? MPI_ERR_ARG
                                 : pnbc_part_pready_list((size_t) length, array_of_partitions,
                                                         request);
    return request_error(request, err, "MPI_Pready_list");
}

int MPIX_Parrived(MPI_Request request, int partition, int *flag)
{
    return request_error(request,
                         pnbc_part_parrived(as_size(partition), as_size(partition), flag,
                                            request),
                         "MPI_Parrived");
}
