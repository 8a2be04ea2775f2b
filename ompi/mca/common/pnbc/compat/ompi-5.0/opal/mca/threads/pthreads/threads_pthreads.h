/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Open MPI 5.0's pthreads threads component, as libopen-pal exports it:
 * the yield hook chosen at run time.  (Not installed by Debian's
 * libopenmpi-dev; see ../../../../README.)
 */
#ifndef PNBC_COMPAT_THREADS_PTHREADS_H
#define PNBC_COMPAT_THREADS_PTHREADS_H

#include "opal/mca/threads/thread.h"

typedef void(opal_threads_pthreads_yield_fn_t)(void);
OPAL_DECLSPEC extern opal_threads_pthreads_yield_fn_t *opal_threads_pthreads_yield_fn;

#endif
