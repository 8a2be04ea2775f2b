/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Broadcast algorithms.  Data moves straight between the user buffers
 * with the user's datatype: no temporary, no packing by pnbc.
 */

#include "coll_pnbc_algorithms.h"

static pnbc_ref_t bcast_buffer(void)
{
    return pnbc_ref(PNBC_BUF_RECV, 0);  /* bcast's single buffer is rbuf */
}

/*
 * pnbc_bcast_binomial
 *   Accepts: any size, root, count, datatype.
 *   Moves:   ranks renumbered so the root is 0 (v = rank - root mod p).
 *            v receives from v minus its lowest set bit, then sends to
 *            v + 2^k for every 2^k below that bit, largest subtree first.
 *
 *   p=6, root 0:  round 1: 0->4 0->2 0->1 | 2->3, 4->5 once they have it
 *        v=0 -> {4, 2, 1};  v=2 -> {3};  v=4 -> {5}
 */
void pnbc_bcast_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, root = a->root;
    const int v = (a->rank - root + p) % p;
    int mask = 1;

    if (0 == a->count || 1 == p) {
        return;
    }
    while (mask < p && !(v & mask)) {
        mask <<= 1;
    }
    if (0 != v) {
        pnbc_sched_round(s);
        pnbc_sched_recv(s, bcast_buffer(), a->count, a->dtype, ((v - mask) + root) % p);
    }
    pnbc_sched_round(s);
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (v + mask < p) {
            pnbc_sched_send(s, bcast_buffer(), a->count, a->dtype, (v + mask + root) % p);
        }
    }
}

/*
 * pnbc_bcast_linear
 *   Accepts: any size, root, count, datatype.
 *   Moves:   the root sends to every other rank in one round.  Best for
 *            two or three ranks, where a tree only adds a hop.
 */
void pnbc_bcast_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    if (0 == a->count || 1 == a->size) {
        return;
    }
    pnbc_sched_round(s);
    if (a->rank != a->root) {
        pnbc_sched_recv(s, bcast_buffer(), a->count, a->dtype, a->root);
        return;
    }
    for (int i = 1; i < a->size; ++i) {
        pnbc_sched_send(s, bcast_buffer(), a->count, a->dtype, (a->root + i) % a->size);
    }
}

const pnbc_algorithm_t pnbc_bcast_algorithms[] = {
    { "binomial", pnbc_bcast_binomial, NULL },
    { "linear", pnbc_bcast_linear, NULL },
    { NULL, NULL, NULL }
};
