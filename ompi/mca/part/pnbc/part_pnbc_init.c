/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * MPIX_Psend_init / MPIX_Precv_init (MPI-4.1 sec. 5.2.1): argument
 * checks, then a partitioned request on the engine.  Local: the only
 * communication is the handshake, sent without waiting (part_match.c).
 */

#include "part.h"
#include "mpiext_pnbc_c.h"

#include "ompi/errhandler/errhandler.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/runtime/mpiruntime.h"


/* ------------------------------------------------------------------ */
/* The engine, taken at the first partitioned init                    */
/* ------------------------------------------------------------------ */

static pnbc_lock_t take_lock = PNBC_LOCK_INITIALIZER;
static bool taken;

/* Deleting MPI_COMM_SELF's attributes is the first thing MPI_Finalize
 * does (MPI-4.1 sec. 11.2.4): release the engine there. */
static int release_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void) comm;
    (void) keyval;
    (void) value;
    (void) extra;
    pnbc_lock(&take_lock);
    if (taken) {
        mca_common_pnbc_fini();
        mca_common_pnbc_deregister();
        taken = false;
    }
    pnbc_unlock(&take_lock);
    return MPI_SUCCESS;
}

int pnbc_part_engine_take(void)
{
    int rc = OMPI_SUCCESS;
    pnbc_lock(&take_lock);
    if (!taken) {
        int keyval;
        (void) mca_common_pnbc_register();
        rc = mca_common_pnbc_init();
        if (OMPI_SUCCESS == rc &&
            MPI_SUCCESS == MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_at_finalize,
                                                  &keyval, NULL) &&
            MPI_SUCCESS == MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL)) {
            /* the attribute keeps the key alive until MPI_Finalize deletes
             * it (MPI-4.1 sec. 7.7.2); freed here, it is not leaked */
            MPI_Comm_free_keyval(&keyval);
            taken = true;
        } else {
            if (OMPI_SUCCESS == rc) {
                mca_common_pnbc_fini();
                rc = OMPI_ERROR;
            }
            mca_common_pnbc_deregister();
        }
    }
    pnbc_unlock(&take_lock);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The two init calls                                                 */
/* ------------------------------------------------------------------ */

static int part_check(const char *name, int partitions, MPI_Count count,
                      MPI_Datatype dtype, int peer, int tag, MPI_Comm comm,
                      MPI_Request *request)
{
    if (ompi_mpi_state < OMPI_MPI_STATE_INIT_COMPLETED ||
        ompi_mpi_state >= OMPI_MPI_STATE_FINALIZE_STARTED) {
        return MPI_ERR_OTHER;   /* no error handler can be called */
    }
    if (ompi_comm_invalid(comm)) {
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_COMM, name);
    }
    int err = MPI_SUCCESS;
    if (NULL == request) {
        err = MPI_ERR_ARG;
    } else if (partitions < 1) {
        err = MPI_ERR_ARG;
    } else if (count < 0 || (uint64_t) count > (uint64_t) INT64_MAX / (uint64_t) partitions) {
        err = MPI_ERR_COUNT;
    } else if (NULL == dtype || MPI_DATATYPE_NULL == dtype || !ompi_datatype_is_valid(dtype) ||
               !ompi_datatype_is_committed(dtype)) {
        err = MPI_ERR_TYPE;
    } else if (MPI_ANY_TAG == tag || tag < 0 || tag > mca_pml.pml_max_tag) {
        err = MPI_ERR_TAG;
    } else if (MPI_ANY_SOURCE == peer ||
               (MPI_PROC_NULL != peer && ompi_comm_peer_invalid(comm, peer))) {
        err = MPI_ERR_RANK;
    }
    return (MPI_SUCCESS == err) ? MPI_SUCCESS : OMPI_ERRHANDLER_INVOKE(comm, err, name);
}

static int part_init(const char *name, bool is_send, void *buf, int partitions,
                     MPI_Count count, MPI_Datatype dtype, int peer, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    int err = part_check(name, partitions, count, dtype, peer, tag, comm, request);
    if (MPI_SUCCESS != err) {
        return err;
    }
    pnbc_part_request_t *req = NULL;
    int rc = pnbc_part_engine_take();
    if (OMPI_SUCCESS == rc) {
        rc = pnbc_part_request_create(is_send, buf, partitions, (size_t) count, dtype, peer,
                                      tag, comm, &req);
    }
    if (OMPI_SUCCESS != rc) {
        return OMPI_ERRHANDLER_INVOKE(comm, ompi_errcode_get_mpi_code(rc), name);
    }
    *request = &req->super.super;
    return MPI_SUCCESS;
}

int MPIX_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void) info;
    return part_init("MPI_Psend_init", true, (void *) buf, partitions, count, datatype, dest,
                     tag, comm, request);
}

int MPIX_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void) info;
    return part_init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag,
                     comm, request);
}
