/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * opal_thread_yield() of Open MPI 5.0's pthreads threads component.
 */
#ifndef PNBC_COMPAT_THREADS_PTHREADS_THREADS_H
#define PNBC_COMPAT_THREADS_PTHREADS_THREADS_H

#include <pthread.h>

#include "opal/mca/threads/pthreads/threads_pthreads.h"
#include "opal/mca/threads/threads.h"

#define OPAL_THREAD_YIELD_WHEN_IDLE_DEFAULT false

static inline void opal_thread_yield(void)
{
    (*opal_threads_pthreads_yield_fn)();
}

#endif
