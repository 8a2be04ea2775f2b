/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Barrier algorithms.  All messages are zero bytes.
 */

#include "coll_pnbc_algorithms.h"

/* Zero-byte notification to / from a peer. */
/*
 * pnbc_barrier_dissemination
 *   Accepts: any communicator size.
 *   Moves:   ceil(log2 p) rounds; in round k rank r notifies r + 2^k and
 *            waits for r - 2^k (mod p).  After round k every rank has
 *            heard, transitively, from the 2^(k+1) ranks before it.
 *
 *   p=5, round 0: 0->1 1->2 2->3 3->4 4->0
 *        round 1: 0->2 1->3 2->4 3->0 4->1
 *        round 2: 0->4 1->0 2->1 3->2 4->3
 */
void pnbc_barrier_dissemination(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, r = a->rank;
    for (int dist = 1; dist < p; dist <<= 1) {
        pnbc_sched_round(s);
        pnbc_notify(s, (r + dist) % p);
        pnbc_await(s, (r - dist + p) % p);
    }
}

/*
 * pnbc_barrier_recursive_doubling
 *   Accepts: any communicator size.
 *   Moves:   with p' the largest power of two <= p, ranks >= p' first
 *            notify rank - p'; the p' low ranks exchange pairwise with
 *            rank ^ 2^k for k = 0 .. log2 p' - 1; finally the low ranks
 *            release their extra partner.
 *
 *   p=6: 4->0 5->1 | 0<->1 2<->3 | 0<->2 1<->3 | 0->4 1->5
 */
void pnbc_barrier_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, r = a->rank;
    const int pof2 = pnbc_pow2_floor(p);
    if (r >= pof2) {
        pnbc_sched_round(s);
        pnbc_notify(s, r - pof2);
        pnbc_sched_round(s);
        pnbc_await(s, r - pof2);
        return;
    }
    if (r + pof2 < p) {
        pnbc_sched_round(s);
        pnbc_await(s, r + pof2);
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        pnbc_sched_round(s);
        pnbc_notify(s, r ^ mask);
        pnbc_await(s, r ^ mask);
    }
    if (r + pof2 < p) {
        pnbc_sched_round(s);
        pnbc_notify(s, r + pof2);
    }
}

const pnbc_algorithm_t pnbc_barrier_algorithms[] = {
    { "dissemination", pnbc_barrier_dissemination, NULL },
    { "recursive_doubling", pnbc_barrier_recursive_doubling, NULL },
    { NULL, NULL, NULL }
};
