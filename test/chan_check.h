/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_check.h: the checks of the channel tests that expect error
 * classes (MPI_ERRORS_RETURN).  The includer defines CHAN_PROG (its name
 * in messages) and the ints `rank` and `fails`.
 */
#ifndef CHAN_CHECK_H
#define CHAN_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fails++;                                                         \
            printf("FAIL " CHAN_PROG " rank %d line %d: ", rank, __LINE__);  \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
            fflush(stdout);                                                  \
        }                                                                    \
    } while (0)

static inline int eclass(int rc)
{
    int c = rc;
    if (MPI_SUCCESS != rc) MPI_Error_class(rc, &c);
    return c;
}

#define EXPECT(call, cls)                                                              \
    do {                                                                               \
        int c_ = eclass(call);                                                         \
        CHECK(c_ == (cls), "%s: class %d, expected %s (%d)", #call, c_, #cls, (cls));  \
    } while (0)

/* MPI_Init, this rank and the size; errors returned, on WORLD and SELF. */
static inline void chan_init(int *argc, char ***argv, int *my_rank, int *nprocs)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

#endif /* CHAN_CHECK_H */
