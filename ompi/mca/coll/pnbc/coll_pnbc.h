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
#include "ompi/mca/common/pnbc/common_pnbc.h"

BEGIN_C_DECLS

/* ------------------------------------------------------------------ */
/* Component                                                          */
/* ------------------------------------------------------------------ */

typedef struct mca_coll_pnbc_component_t {
    mca_coll_base_component_2_0_0_t super;

    /* MCA parameters */
    int priority;
    int segsize;        /* default pipeline segment, bytes (0: algorithm's own) */
    /* the engine's parameters are registered here too, with their
     * storage in mca_common_pnbc_params (common_pnbc.h) */
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

/* One tag per request, fixed at init (window: common_pnbc.h): requests
 * started in different orders still match. */
static inline int mca_coll_pnbc_next_tag(mca_coll_pnbc_module_t *module)
{
    return PNBC_TAG_FIRST - (int) (module->ninit++ % PNBC_TAG_SPAN);
}

/* ------------------------------------------------------------------ */
/* Collective descriptions                                            */
/* ------------------------------------------------------------------ */

/* Every persistent collective; the order is the table order of
 * coll_pnbc_select.c. */
typedef enum {
    PNBC_BARRIER,
    PNBC_BCAST,
    PNBC_REDUCE,
    PNBC_ALLREDUCE,
    PNBC_GATHER,
    PNBC_GATHERV,
    PNBC_SCATTER,
    PNBC_SCATTERV,
    PNBC_ALLGATHER,
    PNBC_ALLGATHERV,
    PNBC_ALLTOALL,
    PNBC_ALLTOALLV,
    PNBC_ALLTOALLW,
    PNBC_REDUCE_SCATTER,
    PNBC_REDUCE_SCATTER_BLOCK,
    PNBC_SCAN,
    PNBC_EXSCAN,
    PNBC_NEIGHBOR_ALLGATHER,
    PNBC_NEIGHBOR_ALLGATHERV,
    PNBC_NEIGHBOR_ALLTOALL,
    PNBC_NEIGHBOR_ALLTOALLV,
    PNBC_NEIGHBOR_ALLTOALLW,
    PNBC_NCOLLS
} pnbc_coll_t;

/*
 * The arguments of any *_init call, normalised.  One block serves every
 * collective so that a single path (choose algorithm -> build schedule ->
 * make request) handles them all; each collective reads the fields its
 * MPI binding defines and ignores the rest.
 *
 * On an intercommunicator `root` keeps its MPI meaning (MPI_ROOT,
 * MPI_PROC_NULL, or a rank of the remote group) and every SEND/RECV peer
 * is a rank of the remote group.
 *
 * MPI_IN_PLACE: `in_place` is set where this rank passed MPI_IN_PLACE
 * (send buffer, or receive buffer of scatter/scatterv at the root); the
 * buffer that was MPI_IN_PLACE is then NULL here, except for reduce and
 * allreduce, whose sbuf is set to rbuf (the input lives there).
 */
typedef struct pnbc_coll_args_t {
    pnbc_coll_t coll;
    ompi_communicator_t *comm;
    int rank;           /* in the local group */
    int size;           /* of the local group */
    bool inter;         /* intercommunicator: peers are remote ranks */
    int remote_size;    /* intercommunicators only */
    bool in_place;
    int root;
    ompi_op_t *op;
    size_t segsize;     /* pipeline segment in bytes for segmented algorithms:
                           MPI_Info "pnbc_segsize", else coll_pnbc_segsize;
                           0 = the algorithm's own default */

    const void *sbuf;
    void *rbuf;

    /* bcast, reduce, allreduce, scan, exscan, reduce_scatter_block
     * (count = the per-rank block there) */
    size_t count;
    ompi_datatype_t *dtype;

    /* gather, scatter, allgather, alltoall and their neighbourhood forms */
    size_t scount, rcount;
    ompi_datatype_t *sdtype, *rdtype;

    /* v and w variants, reduce_scatter (rcounts).  Arrays belong to the
     * caller: builders copy what they need into the schedule. */
    const int *scounts, *sdispls, *rcounts, *rdispls;
    ompi_datatype_t *const *sdtypes, *const *rdtypes;     /* w variants */
    const MPI_Aint *sdispls_bytes, *rdispls_bytes;      /* neighbor_alltoallw */
    int nsend_entries, nrecv_entries;   /* lengths of the per-peer arrays */
} pnbc_coll_args_t;

#define PNBC_DECLARE_INIT(name, ...) \
    int mca_coll_pnbc_##name##_init(__VA_ARGS__, struct ompi_communicator_t *comm, \
                                    struct ompi_info_t *info, ompi_request_t **request, \
                                    mca_coll_base_module_t *module)

/* Slot entry points (coll_pnbc_entry.c): normalise, then mca_coll_pnbc_coll_init */
int mca_coll_pnbc_barrier_init(struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module);
PNBC_DECLARE_INIT(bcast, void *buf, int count, struct ompi_datatype_t *dtype, int root);
PNBC_DECLARE_INIT(reduce, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root);
PNBC_DECLARE_INIT(allreduce, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op);
PNBC_DECLARE_INIT(gather, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root);
PNBC_DECLARE_INIT(gatherv, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, const int *rcounts, const int *displs,
                  struct ompi_datatype_t *rdtype, int root);
PNBC_DECLARE_INIT(scatter, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root);
PNBC_DECLARE_INIT(scatterv, const void *sbuf, const int *scounts, const int *displs,
                  struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                  struct ompi_datatype_t *rdtype, int root);
PNBC_DECLARE_INIT(allgather, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(allgatherv, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, const int *rcounts, const int *displs,
                  struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(alltoall, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(alltoallv, const void *sbuf, const int *scounts, const int *sdispls,
                  struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                  const int *rdispls, struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(alltoallw, const void *sbuf, const int *scounts, const int *sdispls,
                  struct ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                  const int *rdispls, struct ompi_datatype_t *const *rdtypes);
PNBC_DECLARE_INIT(reduce_scatter, const void *sbuf, void *rbuf, const int *rcounts,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op);
PNBC_DECLARE_INIT(reduce_scatter_block, const void *sbuf, void *rbuf, int rcount,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op);
PNBC_DECLARE_INIT(scan, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op);
PNBC_DECLARE_INIT(exscan, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op);
PNBC_DECLARE_INIT(neighbor_allgather, const void *sbuf, int scount,
                  struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                  struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(neighbor_allgatherv, const void *sbuf, int scount,
                  struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                  const int *displs, struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(neighbor_alltoall, const void *sbuf, int scount,
                  struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                  struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(neighbor_alltoallv, const void *sbuf, const int *scounts,
                  const int *sdispls, struct ompi_datatype_t *sdtype, void *rbuf,
                  const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdtype);
PNBC_DECLARE_INIT(neighbor_alltoallw, const void *sbuf, const int *scounts,
                  const MPI_Aint *sdispls, struct ompi_datatype_t *const *sdtypes,
                  void *rbuf, const int *rcounts, const MPI_Aint *rdispls,
                  struct ompi_datatype_t *const *rdtypes);

/* The one path every entry point takes (coll_pnbc_module.c). */
int mca_coll_pnbc_coll_init(pnbc_coll_args_t *args, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module);

/* Component-wide services (coll_pnbc_component.c) */
mca_coll_base_module_t *mca_coll_pnbc_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority);

END_C_DECLS

#endif /* MCA_COLL_PNBC_H */
