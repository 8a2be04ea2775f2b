/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's bells (pnbc_bell_t, common_pnbc.h).
 *
 * A process's pool directory ends with two counters per process of the
 * job, each on a line of its own (pool_bells_t): `data`, which process v
 * rings after filling a box of this process's pool, and `ack`, which this
 * process rings after emptying (or answering the offer in) a box that v
 * fills.  The writer of a box rings after it (release), so a reader that
 * sees a new count sees the box too; a counter no reader watches stays in
 * its writer's cache, and ringing it costs a store.
 *
 * Peer v's bell (pnbc_bell_of) gets its two counters here: `data` of v
 * in our directory (our receives from v) and `ack` of us in v's
 * directory (our sends to v).  An in-flight shm action waits on that bell
 * once it is paired with its slot; before (a sender looking for the
 * receiver's block or for its slot to be armed) it names none and is
 * polled.  One carried over pml (fallback) waits on its PML request's
 * callback (pnbc_bell_callback).
 */

#include "common_pnbc_shm_pool.h"

#include "ompi/proc/proc.h"

static uint32_t peer_vpid(const pnbc_action_t *a, const shm_action_t *t)
{
    return ompi_comm_peer_lookup(t->ch.comm, a->peer)->super.proc_name.vpid;
}

/* The bells of a's pair of processes: a send's are in the receiver's
 * pool, under our vpid; a receive's in ours, under the sender's.  NULL:
 * none (its directory has none, or not for that process). */
static pool_bells_t *pair_bells(const pnbc_action_t *a, const shm_action_t *t)
{
    pool_t *p;
    uint32_t v;
    if (PNBC_ACT_SEND == a->kind) {
        p = pnbc_shm_peer_pool(t->region->peer.vpid);
        v = OMPI_PROC_MY_NAME->vpid;
    } else {
        p = pnbc_shm_own_pool();
        v = peer_vpid(a, t);
    }
    return (NULL == p || NULL == p->bells || v >= p->nbells) ? NULL : &p->bells[v];
}

void pnbc_shm_bell_bind(const pnbc_action_t *a, shm_action_t *t)
{
    pool_bells_t *b = pair_bells(a, t);
    /* a sender rings after filling a box, a receiver after emptying one */
    t->bell = (NULL == b) ? NULL : (PNBC_ACT_SEND == a->kind) ? &b->data : &b->ack;
    if (NULL != b) {
        /* the peer's bell, which pnbc_shm_bell() hands out, is made here
         * (at init, or a sender's first start) and not when a request
         * first parks, which may be any later start */
        (void) pnbc_bell_of(t->ch.comm, a->peer);
    }
}

pnbc_bell_t *pnbc_shm_bell(pnbc_action_t *a)
{
    shm_action_t *t = a->tstate.ptr;
    const bool send = (PNBC_ACT_SEND == a->kind);

    if (OPAL_UNLIKELY(t->fallback)) {   /* see pnbc_transport_pml_watch() */
        return pnbc_transport_pml_bell(t->req);
    }
    if (NULL == t->bell || (send && (t->unpaired || NULL == t->slot))) {
        return NULL;
    }
    pnbc_bell_t *b = pnbc_bell_of(t->ch.comm, a->peer);
    const int i = send ? 1 : 0;
    if (NULL != b && NULL == b->ctr[i]) {
        /* the counter the other side rings for this pair */
        pool_bells_t *pb = pair_bells(a, t);
        if (NULL == pb) {
            return NULL;
        }
        pnbc_bell_add(b, i, send ? &pb->ack : &pb->data);
    }
    return b;
}
