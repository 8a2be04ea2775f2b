/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Open MPI 5.0's linux timer component, as libopen-pal exports it: the
 * cycle and microsecond clocks are function pointers chosen at run time.
 */
#ifndef PNBC_COMPAT_TIMER_LINUX_H
#define PNBC_COMPAT_TIMER_LINUX_H

#include "opal_config.h"
#include "opal/sys/timer.h"

OPAL_DECLSPEC extern opal_timer_t (*opal_timer_base_get_cycles)(void);
OPAL_DECLSPEC extern opal_timer_t (*opal_timer_base_get_usec)(void);
OPAL_DECLSPEC extern opal_timer_t opal_timer_base_get_freq(void);

#define OPAL_TIMER_CYCLE_NATIVE    OPAL_HAVE_SYS_TIMER_GET_CYCLES
#define OPAL_TIMER_CYCLE_SUPPORTED OPAL_HAVE_SYS_TIMER_GET_CYCLES
#define OPAL_TIMER_USEC_NATIVE     OPAL_HAVE_SYS_TIMER_GET_CYCLES
#define OPAL_TIMER_USEC_SUPPORTED  OPAL_HAVE_SYS_TIMER_GET_CYCLES

#endif
