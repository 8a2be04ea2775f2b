/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The pnbc request: an ompi_request_t of type OMPI_REQUEST_COLL with
 * req_persistent set, owning its schedule, its temporary area and its
 * references to the user's datatypes and op.  MPI_Start/MPI_Startall
 * reach it through req_start; Wait/Test see an ordinary request.
 *
 *   init --> INACTIVE --start--> ACTIVE --(schedule done)--> complete
 *               ^                                               |
 *               +----------- Wait/Test (by ompi_request) -------+
 */

#ifndef MCA_COLL_PNBC_REQUEST_H
#define MCA_COLL_PNBC_REQUEST_H

#include "coll_pnbc.h"
#include "coll_pnbc_schedule.h"
#include "ompi/request/request.h"

BEGIN_C_DECLS

typedef struct mca_coll_pnbc_request_t {
    ompi_request_t super;

    pnbc_schedule_t sched;
    pnbc_exec_t exec;

    /* Objects retained at init and released at free: the user may free
     * their handles while the request lives (MPI-4.1 sec. 2.5.1). */
    ompi_communicator_t *comm;
    ompi_op_t *op;
    ompi_datatype_t **dtypes;
    uint32_t ndtypes, dtypes_cap;

    const char *coll_name;
    const char *algorithm;

    /* Link in the component's active list while started. */
    struct mca_coll_pnbc_request_t *next, *prev;
} mca_coll_pnbc_request_t;

OBJ_CLASS_DECLARATION(mca_coll_pnbc_request_t);

/* A new, inactive request on comm using `tag`. */
mca_coll_pnbc_request_t *mca_coll_pnbc_request_new(ompi_communicator_t *comm, int tag);

/* Keep a reference to a user datatype / op until the request is freed. */
int mca_coll_pnbc_request_retain_dtype(mca_coll_pnbc_request_t *req, ompi_datatype_t *dtype);
void mca_coll_pnbc_request_retain_op(mca_coll_pnbc_request_t *req, ompi_op_t *op);

/* Poll every active request (the opal_progress callback). */
int mca_coll_pnbc_request_progress_all(void);

END_C_DECLS

#endif /* MCA_COLL_PNBC_REQUEST_H */
