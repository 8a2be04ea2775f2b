/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * <mpi.h> as mpicc-pnbc and "pkg-config --cflags pnbc" show it: this
 * directory comes first on their include path, so a program that includes
 * <mpi.h> gets Open MPI's (the next one on the path) and then the MPI-4
 * names of pnbc_mpi4.h; a program that does not include it (autoconf's
 * function checks, say) is compiled untouched.
 */

#ifndef PNBC_MPI4_WRAPPED_MPI_H
#define PNBC_MPI4_WRAPPED_MPI_H

#include_next <mpi.h>
#include "../pnbc_mpi4.h"

#endif /* PNBC_MPI4_WRAPPED_MPI_H */
