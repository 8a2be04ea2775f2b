/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Allreduce algorithms.  Operand handling (datatype views, operand order
 * for non-commutative ops, scratch buffers) is shared with the other
 * reductions: see coll_pnbc_reduce_view.h.
 */

#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_reduce_view.h"

/*
 * pnbc_allreduce_recursive_doubling
 *   Accepts: any size, count, datatype, op (commutative or not).
 *   Moves:   p' = largest power of two <= p, rem = p - p'.  Fix-up: among
 *            ranks < 2*rem, even rank 2i hands its data to 2i+1 and waits
 *            for the result.  The p' remaining ranks (virtual ranks in
 *            rank order) exchange full vectors with v ^ 2^k for each k and
 *            fold, lower ranks' data on the left.  Finally 2i+1 returns
 *            the result to 2i.
 *
 *   p=6 (rem 2):  0->1 2->3 | v: 1=0 3=1 4=2 5=3 | 1<->3 4<->5 | 1<->4 3<->5
 *                 | 1->0 3->2
 */
void pnbc_allreduce_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, rank = a->rank;
    pnbc_reduce_view_t v;
    int pof2 = 1, vrank;

    if (0 == a->count) {
        return;
    }
    while (pof2 * 2 <= p) {
        pof2 *= 2;
    }
    const int rem = p - pof2;
    pnbc_view_open(s, a, &v);
    pnbc_sched_round(s);

    if (rank < 2 * rem && 0 == rank % 2) {
        pnbc_view_send(s, &v, v.in, rank + 1);
        pnbc_sched_round(s);
        pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, rank + 1);
        return;
    }
    pnbc_ref_t acc = pnbc_view_writable_acc(s, &v);
    bool acc_writable = true;
    if (rank < 2 * rem) {
        pnbc_ref_t landing = pnbc_view_spare(s, &v, acc);
        pnbc_view_recv(s, &v, landing, rank - 1);
        pnbc_sched_round(s);
        acc = pnbc_view_combine(s, &v, acc, &acc_writable, landing, true);
        vrank = rank / 2;
    } else {
        vrank = rank - rem;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        const int vpeer = vrank ^ mask;
        const int peer = (vpeer < rem) ? 2 * vpeer + 1 : vpeer + rem;
        pnbc_ref_t landing = pnbc_view_landing(s, &v, acc, true);
        pnbc_view_send(s, &v, acc, peer);
        pnbc_view_recv(s, &v, landing, peer);
        pnbc_sched_round(s);
        acc = pnbc_view_combine(s, &v, acc, &acc_writable, landing, peer < rank);
    }
    pnbc_view_finish(s, &v, acc);
    if (rank < 2 * rem) {
        pnbc_sched_round(s);
        pnbc_sched_send(s, pnbc_ref(PNBC_BUF_RECV, 0), a->count, a->dtype, rank - 1);
    }
}

/*
 * pnbc_allreduce_reduce_bcast
 *   Accepts: any size, count, datatype, op.
 *   Moves:   binomial reduce to rank 0, then binomial bcast from rank 0,
 *            both compiled into one schedule.  Fewest bytes per rank for
 *            tiny communicators; a building block for comparisons.
 */
void pnbc_allreduce_reduce_bcast(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    pnbc_coll_args_t phase = *a;
    phase.root = 0;
    pnbc_reduce_binomial(s, &phase);
    pnbc_sched_round(s);
    pnbc_bcast_binomial(s, &phase);
}

const pnbc_algorithm_t pnbc_allreduce_algorithms[] = {
    { "recursive_doubling", pnbc_allreduce_recursive_doubling, NULL },
    { "reduce_bcast", pnbc_allreduce_reduce_bcast, NULL },
    { NULL, NULL, NULL }
};
