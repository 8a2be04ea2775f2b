/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Gather and scatter algorithms.
 */

#include "coll_pnbc_algorithms.h"

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_gather_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_gatherv_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_scatter_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_scatterv_algorithms[] = {
    { NULL, NULL, NULL }
};
