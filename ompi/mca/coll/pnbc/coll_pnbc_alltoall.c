/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * All-to-all algorithms.
 */

#include "coll_pnbc_algorithms.h"

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_alltoall_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_alltoallv_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_alltoallw_algorithms[] = {
    { NULL, NULL, NULL }
};
