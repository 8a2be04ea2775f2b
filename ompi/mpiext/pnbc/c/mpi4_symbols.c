/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Functions named MPI_<Coll>_init and MPI_Psend_init ... MPI_Parrived in
 * libpnbc, for Open MPI 4.1 (which has the persistent collectives as
 * MPIX_<Coll>_init and no partitioned communication): what is compiled
 * without pnbc_mpi4.h and linked with -lpnbc finds the MPI-4 names as real
 * symbols -- autoconf's AC_CHECK_FUNC, whose test program declares
 * "char MPI_Allreduce_init ();" and links a call to it, and objects built
 * against Open MPI's own mpi.h.  Each calls the MPIX_ function of the same
 * name.  Not built against Open MPI 5, whose libmpi has these names.
 */

#include <mpi.h>
#include <mpi-ext.h>
#include "mpiext_pnbc_c.h"

/* X(return type, name after MPI_/MPIX_, parameters, arguments) */
#define PNBC_MPI4_FUNCTIONS(X)                                                                   \
    X(int, Barrier_init, (MPI_Comm c, MPI_Info i, MPI_Request *r), (c, i, r))                    \
    X(int, Bcast_init, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Info i,       \
                        MPI_Request *r), (b, n, t, root, c, i, r))                                \
    X(int, Reduce_init, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, int root,     \
                         MPI_Comm c, MPI_Info i, MPI_Request *r), (s, b, n, t, o, root, c, i, r)) \
    X(int, Allreduce_init, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o,            \
                            MPI_Comm c, MPI_Info i, MPI_Request *r), (s, b, n, t, o, c, i, r))    \
    X(int, Reduce_scatter_init, (const void *s, void *b, const int cs[], MPI_Datatype t,        \
                                 MPI_Op o, MPI_Comm c, MPI_Info i, MPI_Request *r),             \
      (s, b, cs, t, o, c, i, r))                                                                  \
    X(int, Reduce_scatter_block_init, (const void *s, void *b, int n, MPI_Datatype t,           \
                                       MPI_Op o, MPI_Comm c, MPI_Info i, MPI_Request *r),       \
      (s, b, n, t, o, c, i, r))                                                                   \
    X(int, Scan_init, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c,     \
                       MPI_Info i, MPI_Request *r), (s, b, n, t, o, c, i, r))                     \
    X(int, Exscan_init, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c,   \
                         MPI_Info i, MPI_Request *r), (s, b, n, t, o, c, i, r))                   \
    X(int, Gather_init, (const void *s, int sn, MPI_Datatype st, void *b, int rn,               \
                         MPI_Datatype rt, int root, MPI_Comm c, MPI_Info i, MPI_Request *r),    \
      (s, sn, st, b, rn, rt, root, c, i, r))                                                      \
    X(int, Gatherv_init, (const void *s, int sn, MPI_Datatype st, void *b, const int rn[],      \
                          const int d[], MPI_Datatype rt, int root, MPI_Comm c, MPI_Info i,     \
                          MPI_Request *r), (s, sn, st, b, rn, d, rt, root, c, i, r))              \
    X(int, Scatter_init, (const void *s, int sn, MPI_Datatype st, void *b, int rn,              \
                          MPI_Datatype rt, int root, MPI_Comm c, MPI_Info i, MPI_Request *r),   \
      (s, sn, st, b, rn, rt, root, c, i, r))                                                      \
    X(int, Scatterv_init, (const void *s, const int sn[], const int d[], MPI_Datatype st,       \
                           void *b, int rn, MPI_Datatype rt, int root, MPI_Comm c, MPI_Info i,  \
                           MPI_Request *r), (s, sn, d, st, b, rn, rt, root, c, i, r))             \
    X(int, Allgather_init, (const void *s, int sn, MPI_Datatype st, void *b, int rn,            \
                            MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request *r),           \
      (s, sn, st, b, rn, rt, c, i, r))                                                            \
    X(int, Allgatherv_init, (const void *s, int sn, MPI_Datatype st, void *b, const int rn[],   \
                             const int d[], MPI_Datatype rt, MPI_Comm c, MPI_Info i,            \
                             MPI_Request *r), (s, sn, st, b, rn, d, rt, c, i, r))                 \
    X(int, Alltoall_init, (const void *s, int sn, MPI_Datatype st, void *b, int rn,             \
                           MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request *r),            \
      (s, sn, st, b, rn, rt, c, i, r))                                                            \
    X(int, Alltoallv_init, (const void *s, const int sn[], const int sd[], MPI_Datatype st,     \
                            void *b, const int rn[], const int rd[], MPI_Datatype rt,           \
                            MPI_Comm c, MPI_Info i, MPI_Request *r),                            \
      (s, sn, sd, st, b, rn, rd, rt, c, i, r))                                                    \
    X(int, Alltoallw_init, (const void *s, const int sn[], const int sd[],                      \
                            const MPI_Datatype st[], void *b, const int rn[], const int rd[],   \
                            const MPI_Datatype rt[], MPI_Comm c, MPI_Info i, MPI_Request *r),   \
      (s, sn, sd, st, b, rn, rd, rt, c, i, r))                                                    \
    X(int, Neighbor_allgather_init, (const void *s, int sn, MPI_Datatype st, void *b, int rn,   \
                                     MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request *r),  \
      (s, sn, st, b, rn, rt, c, i, r))                                                            \
    X(int, Neighbor_allgatherv_init, (const void *s, int sn, MPI_Datatype st, void *b,          \
                                      const int rn[], const int d[], MPI_Datatype rt,           \
                                      MPI_Comm c, MPI_Info i, MPI_Request *r),                  \
      (s, sn, st, b, rn, d, rt, c, i, r))                                                         \
    X(int, Neighbor_alltoall_init, (const void *s, int sn, MPI_Datatype st, void *b, int rn,    \
                                    MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request *r),   \
      (s, sn, st, b, rn, rt, c, i, r))                                                            \
    X(int, Neighbor_alltoallv_init, (const void *s, const int sn[], const int sd[],             \
                                     MPI_Datatype st, void *b, const int rn[], const int rd[],  \
                                     MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request *r),  \
      (s, sn, sd, st, b, rn, rd, rt, c, i, r))                                                    \
    X(int, Neighbor_alltoallw_init, (const void *s, const int sn[], const MPI_Aint sd[],        \
                                     const MPI_Datatype st[], void *b, const int rn[],          \
                                     const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm c,  \
                                     MPI_Info i, MPI_Request *r),                               \
      (s, sn, sd, st, b, rn, rd, rt, c, i, r))                                                    \
    X(int, Psend_init, (const void *b, int p, MPI_Count n, MPI_Datatype t, int d, int g,        \
                        MPI_Comm c, MPI_Info i, MPI_Request *r), (b, p, n, t, d, g, c, i, r))     \
    X(int, Precv_init, (void *b, int p, MPI_Count n, MPI_Datatype t, int s, int g, MPI_Comm c,  \
                        MPI_Info i, MPI_Request *r), (b, p, n, t, s, g, c, i, r))                 \
    X(int, Pready, (int p, MPI_Request r), (p, r))                                                \
    X(int, Pready_range, (int lo, int hi, MPI_Request r), (lo, hi, r))                            \
    X(int, Pready_list, (int n, const int ps[], MPI_Request r), (n, ps, r))                       \
    X(int, Parrived, (MPI_Request r, int p, int *f), (r, p, f))

/* declared here: Open MPI 4.1's mpi.h has none of them */
#define PNBC_DECLARE_ONE(ret, name, params, args) OMPI_DECLSPEC ret MPI_##name params;
PNBC_MPI4_FUNCTIONS(PNBC_DECLARE_ONE)

#define PNBC_DEFINE_ONE(ret, name, params, args) \
    ret MPI_##name params                        \
    {                                            \
        return MPIX_##name args;                 \
    }
PNBC_MPI4_FUNCTIONS(PNBC_DEFINE_ONE)
