/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Intercommunicator algorithms.
 */

#include "coll_pnbc_algorithms.h"

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_barrier_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_bcast_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_reduce_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_allreduce_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_gather_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_gatherv_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_scatter_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_scatterv_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_allgather_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_allgatherv_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_alltoall_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_alltoallv_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_alltoallw_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_reduce_scatter_algorithms[] = {
    { NULL, NULL, NULL }
};

/* Not served by pnbc yet: the empty table leaves the slot to others. */
const pnbc_algorithm_t pnbc_inter_reduce_scatter_block_algorithms[] = {
    { NULL, NULL, NULL }
};
