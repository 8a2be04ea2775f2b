/*
 * Copyright (c) 2026 The pnbc developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Why this file exists: Open MPI's installed ompi/op/op.h includes
 * "ompi/mpi/fortran/base/fint_2_int.h", but the Open MPI packages do not
 * install that header.  pnbc puts its compat/ directory first on the
 * include path so that this small replacement is found instead.
 *
 * op.h only needs OMPI_INT_2_FINT, to convert the count and datatype index
 * it passes to reduction functions written in Fortran.  MPI_Fint is the C
 * type of a default Fortran INTEGER (ompi_config.h maps it to
 * ompi_fortran_integer_t), so a plain conversion is all that is needed;
 * the values involved (counts, datatype indices) are C ints.
 */

#ifndef PNBC_COMPAT_FINT_2_INT_H
#define PNBC_COMPAT_FINT_2_INT_H

#include "ompi_config.h"

#ifndef OMPI_INT_2_FINT
#define OMPI_INT_2_FINT(a) ((MPI_Fint) (a))
#endif

#ifndef OMPI_FINT_2_INT
#define OMPI_FINT_2_INT(a) ((int) (a))
#endif

#endif /* PNBC_COMPAT_FINT_2_INT_H */
