/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Inclusive and exclusive scan algorithms.
 */

#include "coll_pnbc_algorithms.h"

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_scan_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_exscan_algorithms[] = {
    { NULL, NULL, NULL }
};
