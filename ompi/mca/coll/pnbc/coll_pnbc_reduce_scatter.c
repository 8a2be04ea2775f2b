/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Reduce-scatter algorithms.
 */

#include "coll_pnbc_algorithms.h"

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_reduce_scatter_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_reduce_scatter_block_algorithms[] = {
    { NULL, NULL, NULL }
};
