/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * coll/pnbc: persistent nonblocking collectives for Open MPI.
 *
 * Every *_init call compiles the chosen algorithm into a typed schedule
 * (coll_pnbc_schedule.h) that lives in the request; MPI_Start runs it
 * through a generic executor (coll_pnbc_exec.c).  Nothing is planned,
 * allocated or looked up at start time.
 *
 * This header holds what the component, the module and the collective
 * entry points share: the component and module types, the MCA
 * parameters, and the argument block every *_init slot fills in.
 */

#ifndef MCA_COLL_PNBC_H
#define MCA_COLL_PNBC_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"

BEGIN_C_DECLS

/* ------------------------------------------------------------------ */
/* Component                                                          */
/* ------------------------------------------------------------------ */

struct mca_coll_pnbc_request_t;

typedef struct mca_coll_pnbc_component_t {
    mca_coll_base_component_2_0_0_t super;

    /* MCA parameters */
    int priority;
    int verbose;

    /* Requests that are started and not yet complete (intrusive list
     * through mca_coll_pnbc_request_t.next/prev).  The progress
     * callback walks only this list, so it costs one load when no
     * pnbc request is active. */
    struct mca_coll_pnbc_request_t *active_head;
    opal_mutex_t lock;
    bool progress_registered;
    bool in_progress;   /* guards against re-entrant progress */
} mca_coll_pnbc_component_t;

OMPI_MODULE_DECLSPEC extern mca_coll_pnbc_component_t mca_coll_pnbc_component;

/* ------------------------------------------------------------------ */
/* Module: one per communicator                                       */
/* ------------------------------------------------------------------ */

typedef struct mca_coll_pnbc_module_t {
    mca_coll_base_module_t super;
    /* Number of persistent collectives initialised on this communicator.
     * *_init calls are collective and ordered identically on every rank
     * (MPI-4.1 sec. 6.13), so this counter -- and the tag derived from
     * it -- agrees everywhere without any communication. */
    uint32_t ninit;
} mca_coll_pnbc_module_t;

OBJ_CLASS_DECLARATION(mca_coll_pnbc_module_t);

/*
 * Tags.  pnbc's traffic must never match the user's (tags >= 0), tuned's
 * and basic's blocking collectives (-10..-26), libnbc's nonblocking ones
 * (-27 .. -INT_MAX/2) or the neighbourhood/ucc tags below them.  The only
 * remaining space is the window Open MPI reserves for coll/hcoll, which
 * is not built into this Open MPI (and uses the top of its window only);
 * pnbc takes a 2^28-wide window deep inside it.  One tag per request,
 * fixed at init: requests started in different orders still match.
 */
#define PNBC_TAG_FIRST  (-1300000000)
#define PNBC_TAG_SPAN   (1u << 27)

static inline int mca_coll_pnbc_next_tag(mca_coll_pnbc_module_t *module)
{
    return PNBC_TAG_FIRST - (int) (module->ninit++ % PNBC_TAG_SPAN);
}

/* ------------------------------------------------------------------ */
/* Collective descriptions                                            */
/* ------------------------------------------------------------------ */

typedef enum {
    PNBC_BARRIER,
    PNBC_BCAST,
    PNBC_REDUCE,
    PNBC_ALLREDUCE,
    PNBC_NCOLLS
} pnbc_coll_t;

/*
 * The arguments of any *_init call, normalised.  One block serves every
 * collective so that a single path (choose algorithm -> build schedule ->
 * make request) handles them all; each collective reads the fields it
 * defines and ignores the rest.
 */
typedef struct pnbc_coll_args_t {
    pnbc_coll_t coll;
    ompi_communicator_t *comm;
    int rank;
    int size;

    const void *sbuf;           /* MPI_IN_PLACE already resolved: see in_place */
    void *rbuf;
    size_t count;               /* bcast/reduce/allreduce element count */
    ompi_datatype_t *dtype;
    ompi_op_t *op;
    int root;
    bool in_place;
} pnbc_coll_args_t;

/* Entry points (coll_pnbc_module.c) */
int mca_coll_pnbc_barrier_init(struct ompi_communicator_t *comm,
                               struct ompi_info_t *info, ompi_request_t **request,
                               mca_coll_base_module_t *module);
int mca_coll_pnbc_bcast_init(void *buf, int count, struct ompi_datatype_t *dtype,
                             int root, struct ompi_communicator_t *comm,
                             struct ompi_info_t *info, ompi_request_t **request,
                             mca_coll_base_module_t *module);
int mca_coll_pnbc_reduce_init(const void *sbuf, void *rbuf, int count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                              int root, struct ompi_communicator_t *comm,
                              struct ompi_info_t *info, ompi_request_t **request,
                              mca_coll_base_module_t *module);
int mca_coll_pnbc_allreduce_init(const void *sbuf, void *rbuf, int count,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm,
                                 struct ompi_info_t *info, ompi_request_t **request,
                                 mca_coll_base_module_t *module);

/* The one path every entry point takes (coll_pnbc_module.c). */
int mca_coll_pnbc_coll_init(pnbc_coll_args_t *args, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module);

/* Component-wide services (coll_pnbc_component.c) */
int mca_coll_pnbc_progress(void);
mca_coll_base_module_t *mca_coll_pnbc_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority);

END_C_DECLS

#endif /* MCA_COLL_PNBC_H */
