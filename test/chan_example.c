/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_example: builds the example contrib/examples/kslack_ring.c (a
 * producer/consumer circular buffer on a K-slack channel, which checks its
 * own data and exits non-zero on a mismatch) as a test program.
 */
#include "../contrib/examples/kslack_ring.c"
