/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The mailbox's states (the protocol is described at the top of
 * common_pnbc_transport_mbox.c, the rings in common_pnbc_shm_mbox.c):
 *
 *   - per process and tier (mbox_job_t): one block in its pool with a
 *     ring per on-node process of the job, built at the first bind of a
 *     receive of the tier, and its view of each peer's block; they serve
 *     every communicator and live until finalize.  A communicator's first
 *     call then maps, builds and touches nothing (on a VM a first touch
 *     costs ~12 us a page, and a ring spans sixteen; docs/nbc.md, "One
 *     ring per pair of processes");
 *   - per communicator and tier (mbox_comm_t): its context id (the
 *     messages' match) and references, made at its first bind; each bound
 *     action holds one (and its ring's state), comm_free drops the
 *     communicator's.
 *
 * Rings are used under the engine lock (posts and tests run under it);
 * these states under pnbc_mbox_lock.
 */

#include "common_pnbc_shm_mbox.h"

#include "ompi/proc/proc.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

pnbc_lock_t pnbc_mbox_lock = PNBC_LOCK_INITIALIZER;
mbox_comm_t *pnbc_mbox_comms;
mbox_job_t pnbc_mbox_jobs[2];

/* The process's state of a tier: its arrays made at the first bind of
 * all.  Caller holds pnbc_mbox_lock. */
static mbox_job_t *job_get(int tier)
{
    mbox_job_t *j = &pnbc_mbox_jobs[tier];
    if (NULL == j->in) {
        const int n = ompi_comm_size(&ompi_mpi_comm_world.comm);
        mbox_in_t **in = calloc((size_t) n, sizeof(*in));
        mbox_out_t **out = calloc((size_t) n, sizeof(*out));
        if (NULL == in || NULL == out) {
            free(in);
            free(out);
            return NULL;
        }
        j->in = in;
        j->out = out;
        j->nprocs = n;
    }
    return j;
}

/* The state of ch's communicator for a tier, made at its first bind.
 * Caller holds pnbc_mbox_lock. */
static mbox_comm_t *comm_get(const pnbc_channel_t *ch, int tier)
{
    const uint32_t cid = pnbc_comm_key(ch->comm);
    for (mbox_comm_t *mc = pnbc_mbox_comms; NULL != mc; mc = mc->next) {
        if (mc->cid == cid && mc->tier == tier && mc->live) {
            return mc;
        }
    }
    mbox_comm_t *mc = calloc(1, sizeof(*mc));
    if (NULL == mc) {
        return NULL;
    }
    mc->cid = cid;
    mc->tier = tier;
    mc->refs = 1;
    mc->live = true;
    mc->next = pnbc_mbox_comms;
    pnbc_mbox_comms = mc;
    return mc;
}

static void comm_put(mbox_comm_t *mc)
{
    if (0 != --mc->refs) {
        return;
    }
    for (mbox_comm_t **p = &pnbc_mbox_comms; NULL != *p; p = &(*p)->next) {
        if (*p == mc) {
            *p = mc->next;
            break;
        }
    }
    free(mc);
}

void pnbc_mbox_comm_free(uint32_t cid)
{
    pnbc_lock(&pnbc_mbox_lock);
    for (mbox_comm_t *mc = pnbc_mbox_comms, *next; NULL != mc; mc = next) {
        next = mc->next;
        if (mc->cid == cid && mc->live) {   /* each tier's */
            /* the cid may soon name another communicator (an action still
             * bound -- a call never completed before MPI_Finalize -- keeps
             * the rest) */
            mc->live = false;
            comm_put(mc);
        }
    }
    pnbc_unlock(&pnbc_mbox_lock);
}

/* The process's ring state for the action's peer (vpid v), made at the
 * first need.  Caller holds pnbc_mbox_lock; false: no memory. */
static bool ring_get(mbox_job_t *j, int tier, const pnbc_channel_t *ch, const pnbc_action_t *a,
                     mbox_out_t **out, mbox_in_t **in)
{
    const opal_process_name_t name = ompi_comm_peer_lookup(ch->comm, a->peer)->super.proc_name;
    const uint32_t v = name.vpid;
    if (v >= (uint32_t) j->nprocs) {
        return false;
    }
    if (PNBC_ACT_SEND == a->kind) {
        if (NULL == j->out[v]) {
            mbox_out_t *o = calloc(1, sizeof(*o));
            if (NULL == o || NULL == (o->region = pnbc_mbox_job_region(tier, false))) {
                free(o);
                return false;
            }
            o->region->peer = name;
            j->out[v] = o;
        }
        *out = j->out[v];
        return true;
    }
    if (MBOX_UNKNOWN == j->own_state) {
        pnbc_mbox_own_build(j, tier);
    }
    *in = (MBOX_READY == j->own_state) ? j->in[v] : NULL;
    return true;
}

mbox_comm_t *pnbc_mbox_comm_hold(const pnbc_channel_t *ch, const pnbc_action_t *a, int tier,
                                 mbox_out_t **out, mbox_in_t **in)
{
    pnbc_lock(&pnbc_mbox_lock);
    mbox_comm_t *mc = comm_get(ch, tier);
    mbox_job_t *j = (NULL == mc) ? NULL : job_get(tier);
    if (NULL != mc && (NULL == j || !ring_get(j, tier, ch, a, out, in))) {
        mc = NULL;              /* (the communicator keeps its state) */
    }
    if (NULL != mc) {
        mc->refs++;
    }
    pnbc_unlock(&pnbc_mbox_lock);
    return mc;
}

void pnbc_mbox_comm_release(mbox_comm_t *mc)
{
    pnbc_lock(&pnbc_mbox_lock);
    comm_put(mc);
    pnbc_unlock(&pnbc_mbox_lock);
}

/* Finalize (after the shm transport's: the pool and its files are gone,
 * so our blocks go with them, not back into it). */
void pnbc_mbox_fini(void)
{
    pnbc_lock(&pnbc_mbox_lock);
    for (int tier = 0; tier < 2; ++tier) {
        mbox_job_t *j = &pnbc_mbox_jobs[tier];
        uint64_t spilled = 0, walked = 0, takes = 0, probes = 0;
        for (int v = 0; v < j->nprocs; ++v) {
            mbox_in_t *n = j->in[v];
            if (NULL != n) {
                spilled += n->spilled;
                walked += n->spill_walked;
                takes += n->idx_takes;
                probes += n->idx_probes;
                for (mbox_spill_t *sp = n->spill, *next; NULL != sp; sp = next) {
                    next = sp->next;
                    free(sp);
                }
                free(n->ring.bits);
                free(n->idx);
                free(n);
            }
            if (NULL != j->out[v]) {
                pnbc_shm_region_release(j->out[v]->region);
                free(j->out[v]->ring.bits);
                free(j->out[v]);
            }
        }
        if (mca_common_pnbc_params.verbose >= 2 && MBOX_READY == j->own_state) {
            opal_output(0, "coll:pnbc: shm mailbox: tier %d: %llu messages moved aside "
                        "(a sender found its ring full), %llu passed over unindexed; "
                        "index: %llu lookups, %llu slots read", tier,
                        (unsigned long long) spilled, (unsigned long long) walked,
                        (unsigned long long) takes, (unsigned long long) probes);
        }
        if (NULL != j->own) {
            j->own->owner = false;
            pnbc_shm_region_release(j->own);
        }
        free(j->in);
        free(j->out);
        memset(j, 0, sizeof(*j));
    }
    pnbc_unlock(&pnbc_mbox_lock);
}

