/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pnbc's MPI extension: persistent channels, and on Open MPI 4.1, which
 * has no partitioned communication, MPI-4.1's (chapter 5) under the MPIX_
 * prefix Open MPI 4.1 uses for its other MPI-4 functions, with the C
 * bindings of MPI-4.1 (`int partitions, MPI_Count count`).  Open MPI 5
 * has MPI_Psend_init ... itself, served by pnbc's part component: the
 * MPIX_P* functions exist only with Open MPI 4.1.  Link with -lpnbc
 * (pkg-config --cflags --libs pnbc), or build with mpicc-pnbc, which also
 * maps the MPI-4 names on Open MPI 4.1 (pnbc_mpi4.h).
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

#if !defined(OMPI_MAJOR_VERSION) || OMPI_MAJOR_VERSION < 5
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
#endif

/* Persistent point-to-point channels and K-slack channels (the MPI
 * persistence working group's proposals): bind an inactive persistent
 * point-to-point request (MPI_Send_init, ..., MPI_Recv_init) to its
 * peer's into a channel, a new persistent request with ready semantics;
 * a K-slack channel takes up to K starts (MPIX_Start_slack) before a
 * completion call, slot n at base + (n mod K) * address_base_increment * extent.
 * Bind and unbind are blocking over the pair of processes.  `infos` may
 * be NULL. */
int MPIX_Bind_channel(MPI_Request request_in, MPI_Request *channel, MPI_Info info);
int MPIX_Bind_channels(MPI_Request requests_in[], MPI_Request channels[], int n,
                       MPI_Info infos[]);
int MPIX_Bind_slack_channel(MPI_Request request_in, MPI_Request *channel, int slackness,
                            MPI_Info info);
int MPIX_Bind_slack_channels(MPI_Request requests_in[], MPI_Request channels[], int n,
                             const int slackness[], MPI_Info infos[]);
int MPIX_Unbind_channel(MPI_Request *channel);
int MPIX_Unbind_channels(MPI_Request channels[], int n);
/* Start like MPI_Start / MPI_Startall, and also start an ACTIVE K-slack
 * channel that has fewer than K starts since its last completion call.
 * Open MPI 4.1.5+ and 5.0 refuse an active request in MPI_Start (with
 * the default parameter checking) and in MPI_Startall: use these for the
 * second and later starts of a K-slack channel (on any series; any
 * persistent request may be passed). */
int MPIX_Start_slack(MPI_Request *request);
int MPIX_Startall_slack(int count, MPI_Request requests[]);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* MPIEXT_PNBC_C_H */
