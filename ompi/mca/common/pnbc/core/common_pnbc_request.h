/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The request core: every pnbc request -- persistent collective,
 * partitioned send or receive, channel, nonblocking collective -- is an
 * ompi_request_t owning a schedule, its execution cursor and references
 * to the user's datatypes and op.  All persistent kinds share one
 * req_start, so MPI_Startall reaches pnbc once per run of pnbc requests
 * whatever their kinds, one progress loop and one free.
 *
 * Nonblocking collectives (PNBC_REQ_NBC) are not persistent: their
 * owner (coll/pnbc's schedule cache) starts an instance with
 * pnbc_request_start_nbc() under the call's tag, MPI_Wait/MPI_Test free
 * it once complete, and the free hands it back to its owner (the
 * `recycle` hook) instead of destroying it.  Such an instance does not
 * hold its communicator (its owner lives as long as the communicator).
 *
 *   init --> INACTIVE --start--> ACTIVE --(schedule done)--> complete
 *               ^                                               |
 *               +----------- Wait/Test (by ompi_request) -------+
 *
 * A kind that needs more than "run the schedule" (partitioned: a
 * handshake before the first run) gives hooks (pnbc_request_ops_t).
 */

#ifndef MCA_COMMON_PNBC_REQUEST_H
#define MCA_COMMON_PNBC_REQUEST_H

#include "common_pnbc.h"
#include "common_pnbc_schedule.h"
#include "ompi/request/request.h"
#include "ompi/mca/coll/base/coll_base_util.h"

BEGIN_C_DECLS

typedef enum {
    PNBC_REQ_COLL,      /* persistent collective (coll/pnbc) */
    PNBC_REQ_PSEND,     /* partitioned send (libpnbc) */
    PNBC_REQ_PRECV,     /* partitioned receive (libpnbc) */
    PNBC_REQ_CHANNEL,   /* persistent point-to-point channel (libpnbc) */
    PNBC_REQ_NBC        /* nonblocking collective (coll/pnbc), not persistent */
} pnbc_req_kind_t;

struct pnbc_request_t;

typedef struct pnbc_request_ops_t {
    /* At start, with the engine lock held, after the request became
     * ACTIVE: set up this epoch.  Return true when the request is
     * already complete, false to have progress() called until it is.
     * NULL: run the schedule (pnbc_exec_start). */
    bool (*start)(struct pnbc_request_t *req);
    /* From progress, engine lock held: true when complete.
     * NULL: pnbc_exec_progress. */
    bool (*progress)(struct pnbc_request_t *req);
    /* Just before completion is published: fill in the status. */
    void (*complete)(struct pnbc_request_t *req);
    /* At free of an inactive request, before it is destroyed (without
     * the engine lock: the hook takes it if it needs it). */
    void (*free)(struct pnbc_request_t *req);
    /* MPI_Start of an ACTIVE request (K-slack channels: up to K starts
     * before a completion call), engine lock held: return an MPI error
     * class to refuse it (nothing changes), MPI_SUCCESS when accepted.
     * NULL: starting an active request is MPI_ERR_REQUEST. */
    int (*start_active)(struct pnbc_request_t *req);
    /* Free of a complete non-persistent request (PNBC_REQ_NBC), without
     * the engine lock: the request is handed back to its owner, which
     * may start it again (pnbc_request_start_nbc) or release it.
     * NULL: the request is destroyed. */
    void (*recycle)(struct pnbc_request_t *req);
} pnbc_request_ops_t;

typedef struct pnbc_request_t {
    ompi_request_t super;
    /* Open MPI 4.1's MPI layer takes the request a nonblocking collective
     * slot returns for an ompi_coll_base_nbc_request_t: when the call
     * uses a derived datatype or a user op, MPI_I<coll> stores its own
     * completion callback and references to them in the words after the
     * ompi_request_t (ompi_coll_base_retain_op/_datatypes) and releases
     * them at completion.  This is their room; pnbc never reads it. */
    char ompi_nbc_room[sizeof(ompi_coll_base_nbc_request_t) - sizeof(ompi_request_t)];
    pnbc_req_kind_t kind;
    const pnbc_request_ops_t *ops;      /* NULL: all defaults */
    void (*on_complete)(struct pnbc_request_t *req);   /* ops->complete, or NULL */

    pnbc_schedule_t sched;
    pnbc_exec_t exec;

    /* Objects retained at init and released at free: the user may free
     * their handles while the request lives (MPI-4.1 sec. 2.5.1).  comm
     * is NULL for PNBC_REQ_NBC (not retained; exec.comm is set). */
    ompi_communicator_t *comm;
    ompi_op_t *op;
    ompi_datatype_t **dtypes;
    uint32_t ndtypes, dtypes_cap;

    const char *name;           /* "allreduce", "psend", ... */
    const char *algorithm;

    /* Link in the engine's active list while started, or in the parked
     * list of bell parked_on; the bell its current round waits on (none:
     * NULL), found in round bell_round of this start; the waker its
     * transports' callbacks ring (common_pnbc_progress.c). */
    struct pnbc_request_t *next, *prev;
    pnbc_bell_t *bell, *parked_on;
    uint32_t bell_round;
    pnbc_waker_t waker;
} pnbc_request_t;

OMPI_DECLSPEC OBJ_CLASS_DECLARATION(pnbc_request_t);

/* Set up a request constructed by OBJ_NEW (of pnbc_request_t or of a
 * class derived from it): inactive, on comm, using `tag`.  PNBC_REQ_NBC:
 * not persistent, comm not retained. */
OMPI_DECLSPEC void pnbc_request_setup(pnbc_request_t *req, pnbc_req_kind_t kind,
                                      const pnbc_request_ops_t *ops,
                                      ompi_communicator_t *comm, int tag);
/* A new, inactive collective request on comm using `tag`. */
OMPI_DECLSPEC pnbc_request_t *pnbc_request_new(ompi_communicator_t *comm, int tag);

/* Start a set-up or recycled PNBC_REQ_NBC request under `tag` (the
 * call's own tag: a cached instance serves calls with different tags).
 * Allocates nothing.  Returns an OMPI error code.  *in_call: the whole
 * schedule ran within the start, without error; the request is then
 * left inactive and not completed (its owner hands the caller a
 * completed request instead and may start it again at once). */
OMPI_DECLSPEC int pnbc_request_start_nbc(pnbc_request_t *req, int tag, bool *in_call);

/* Whether an MPI request is one of pnbc's (of any kind). */
OMPI_DECLSPEC bool pnbc_request_is_pnbc(const ompi_request_t *request);

/* Keep a reference to a user datatype / op until the request is freed. */
OMPI_DECLSPEC int pnbc_request_retain_dtype(pnbc_request_t *req, ompi_datatype_t *dtype);
OMPI_DECLSPEC void pnbc_request_retain_op(pnbc_request_t *req, ompi_op_t *op);

/* An ACTIVE request whose completion was published but that has more
 * work in flight (a K-slack channel started again before its completion
 * call): pending again and back on the active list.  Engine lock held. */
OMPI_DECLSPEC void pnbc_request_rearm(pnbc_request_t *req);

/* Poll every active request (the opal_progress callback). */
OMPI_DECLSPEC int pnbc_request_progress_all(void);

/* Within the request core (common_pnbc_request.c and _progress.c), engine
 * lock held but for pnbc_progress_forget: a started request that is not
 * done is handed to progress; one that is, published; a request about to
 * be destroyed leaves the wake list (without the engine lock). */
void pnbc_progress_activate(pnbc_request_t *req);
void pnbc_request_complete(pnbc_request_t *req);
void pnbc_progress_forget(pnbc_request_t *req);

static inline bool pnbc_request_is_active(const pnbc_request_t *req)
{
    return OMPI_REQUEST_ACTIVE == req->super.req_state;
}

/* Does the request run its schedule on the executor's express path?  Its
 * schedule was committed express and no start hook of a client runs it
 * (a client with one may gate its SENDs). */
static inline bool pnbc_request_express(const pnbc_request_t *req)
{
    return req->sched.express && (NULL == req->ops || NULL == req->ops->start);
}

END_C_DECLS

#endif /* MCA_COMMON_PNBC_REQUEST_H */
