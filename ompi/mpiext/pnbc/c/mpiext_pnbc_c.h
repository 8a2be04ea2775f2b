/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pnbc's MPI extension: MPI-4.1 partitioned point-to-point communication
 * (chapter 5) for Open MPI 4.1, which has none, under the MPIX_ prefix
 * Open MPI 4.1 uses for its other MPI-4 functions.  C bindings as in
 * MPI-4.1 (`int partitions, MPI_Count count`).  Link with -lpnbc
 * (pkg-config --cflags --libs pnbc), or build with mpicc-pnbc, which also
 * maps the MPI-4 names (pnbc_mpi4.h).
 *
 * The requests are ordinary persistent requests: start them with
 * MPI_Start / MPI_Startall (mixed with any other persistent requests),
 * complete them with any MPI_Wait* / MPI_Test*, free them with
 * MPI_Request_free.
 */

#ifndef MPIEXT_PNBC_C_H
#define MPIEXT_PNBC_C_H

#include <mpi.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

int MPIX_Psend_init(const void *buf, int partitions, MPI_Count count,
                    MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request);
int MPIX_Precv_init(void *buf, int partitions, MPI_Count count,
                    MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request);
int MPIX_Pready(int partition, MPI_Request request);
int MPIX_Pready_range(int partition_low, int partition_high, MPI_Request request);
int MPIX_Pready_list(int length, const int array_of_partitions[], MPI_Request request);
int MPIX_Parrived(MPI_Request request, int partition, int *flag);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* MPIEXT_PNBC_C_H */
