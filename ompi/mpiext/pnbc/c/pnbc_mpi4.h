/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI-4 names on Open MPI 4.1.  mpicc-pnbc force-includes this header,
 * so MPI-4 source compiles unchanged: the 22 MPI_<Coll>_init map to Open
 * MPI 4.1's MPIX_<Coll>_init (<mpi-ext.h>, pcollreq), the partitioned
 * functions to pnbc's (mpiext_pnbc_c.h).  Under an MPI that has the
 * MPI-4 names itself (MPI_VERSION >= 4: MPICH 4; Open MPI 5, whose
 * MPI_VERSION is still 3) it only includes <mpi.h> and pnbc's own
 * extension header.
 */

#ifndef PNBC_MPI4_H
#define PNBC_MPI4_H

#include <mpi.h>

#if MPI_VERSION < 4 && !(defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)

#include <mpi-ext.h>
#include "mpiext_pnbc_c.h"

/* One list of the persistent collectives: X(Name) per MPI-4 function. */
#define PNBC_MPI4_COLLECTIVES(X) \
    X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Gather) X(Gatherv) \
    X(Scatter) X(Scatterv) X(Allgather) X(Allgatherv) X(Alltoall) \
    X(Alltoallv) X(Alltoallw) X(Reduce_scatter) X(Reduce_scatter_block) \
    X(Scan) X(Exscan) X(Neighbor_allgather) X(Neighbor_allgatherv) \
    X(Neighbor_alltoall) X(Neighbor_alltoallv) X(Neighbor_alltoallw)

/* The preprocessor cannot #define from an X-macro, so the mapping is
 * spelled out; test/mpi4_names checks it against the list above. */
#define MPI_Barrier_init               MPIX_Barrier_init
#define MPI_Bcast_init                 MPIX_Bcast_init
#define MPI_Reduce_init                MPIX_Reduce_init
#define MPI_Allreduce_init             MPIX_Allreduce_init
#define MPI_Gather_init                MPIX_Gather_init
#define MPI_Gatherv_init               MPIX_Gatherv_init
#define MPI_Scatter_init               MPIX_Scatter_init
#define MPI_Scatterv_init              MPIX_Scatterv_init
#define MPI_Allgather_init             MPIX_Allgather_init
#define MPI_Allgatherv_init            MPIX_Allgatherv_init
#define MPI_Alltoall_init              MPIX_Alltoall_init
#define MPI_Alltoallv_init             MPIX_Alltoallv_init
#define MPI_Alltoallw_init             MPIX_Alltoallw_init
#define MPI_Reduce_scatter_init        MPIX_Reduce_scatter_init
#define MPI_Reduce_scatter_block_init  MPIX_Reduce_scatter_block_init
#define MPI_Scan_init                  MPIX_Scan_init
#define MPI_Exscan_init                MPIX_Exscan_init
#define MPI_Neighbor_allgather_init    MPIX_Neighbor_allgather_init
#define MPI_Neighbor_allgatherv_init   MPIX_Neighbor_allgatherv_init
#define MPI_Neighbor_alltoall_init     MPIX_Neighbor_alltoall_init
#define MPI_Neighbor_alltoallv_init    MPIX_Neighbor_alltoallv_init
#define MPI_Neighbor_alltoallw_init    MPIX_Neighbor_alltoallw_init

#define MPI_Psend_init      MPIX_Psend_init
#define MPI_Precv_init      MPIX_Precv_init
#define MPI_Pready          MPIX_Pready
#define MPI_Pready_range    MPIX_Pready_range
#define MPI_Pready_list     MPIX_Pready_list
#define MPI_Parrived        MPIX_Parrived

#else /* the MPI-4 names are the library's: only pnbc's channels to add */

#include "mpiext_pnbc_c.h"

#endif /* MPI_VERSION < 4, not Open MPI 5 */

#endif /* PNBC_MPI4_H */
