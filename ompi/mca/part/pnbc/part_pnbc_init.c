/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Partitioned init (MPI-4.1 sec. 5.2.1): argument checks, then a
 * partitioned request on the engine.  Local: the only communication is
 * the handshake, sent without waiting (part_pnbc_match.c).  Called by
 * Open MPI 5's part framework (part_pnbc_component.c) and by libpnbc's
 * MPIX_Psend_init / MPIX_Precv_init on Open MPI 4.1; errors are returned
 * as MPI error classes, which the caller reports.
 */

#include "part_pnbc.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/runtime/mpiruntime.h"

#include <limits.h>

static int part_check(size_t parts, size_t count, ompi_datatype_t *dtype, int peer, int tag,
                      ompi_communicator_t *comm, ompi_request_t **request)
{
    if (NULL == request) {
        return MPI_ERR_ARG;
    }
    /* the binding's partitions is a non-negative int, count a
     * non-negative MPI_Count: larger values are negative ones converted */
    if (parts > INT_MAX) {
        return MPI_ERR_ARG;
    }
    if (count > (size_t) INT64_MAX || (parts > 0 && count > (size_t) INT64_MAX / parts)) {
        return MPI_ERR_COUNT;
    }
    if (NULL == dtype || MPI_DATATYPE_NULL == dtype || !ompi_datatype_is_valid(dtype) ||
        !ompi_datatype_is_committed(dtype)) {
        return MPI_ERR_TYPE;
    }
    if (MPI_ANY_TAG == tag || tag < 0 || tag > mca_pml.pml_max_tag) {
        return MPI_ERR_TAG;
    }
    if (MPI_ANY_SOURCE == peer || (MPI_PROC_NULL != peer && ompi_comm_peer_invalid(comm, peer))) {
        return MPI_ERR_RANK;
    }
    return MPI_SUCCESS;
}

int pnbc_part_init(bool is_send, const void *buf, size_t parts, size_t count,
                   ompi_datatype_t *dtype, int peer, int tag, ompi_communicator_t *comm,
                   ompi_info_t *info, ompi_request_t **request)
{
    (void) info;
    if (ompi_comm_invalid(comm)) {
        return MPI_ERR_COMM;
    }
    int err = part_check(parts, count, dtype, peer, tag, comm, request);
    if (MPI_SUCCESS != err) {
        return err;
    }
    pnbc_part_request_t *req = NULL;
    int rc = pnbc_part_engine_take();
    if (OMPI_SUCCESS == rc) {
        rc = pnbc_part_request_create(is_send, (void *) buf, (int) parts, count, dtype, peer, tag,
                                      comm, &req);
    }
    if (OMPI_SUCCESS != rc) {
        return ompi_errcode_get_mpi_code(rc);
    }
    *request = &req->super.super;
    return MPI_SUCCESS;
}
