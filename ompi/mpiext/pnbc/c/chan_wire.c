/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Channel handshakes and ids.
 *
 * A bind or unbind is blocking over the pair of processes: each side
 * sends its peer one pnbc_chan_hs_t on PNBC_CHAN_TAG_HANDSHAKE and waits
 * for the peer's.  Several exchanges of one call (MPIX_Bind_channels,
 * MPIX_Unbind_channels) are all sent first, then received, so binds in
 * opposite orders on the two sides cannot deadlock.  Handshakes are
 * received in arrival order, at most one receive outstanding per
 * (communicator, peer), into a process-wide list of received messages;
 * each exchange takes the first message of that list from its (comm,
 * peer) that fits it (same tag and opposite direction for a bind, same
 * channel id for an unbind).  Messages that fit none of the call's
 * exchanges (the peer is already in a later call) stay in the list for
 * the call that wants them, so a receive is never left posted after a
 * call returns.
 */

#include "chan.h"

#include "ompi/mca/pml/pml.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Received handshakes not yet taken                                  */
/* ------------------------------------------------------------------ */

typedef struct kept_t {
    ompi_communicator_t *comm;
    int peer;
    pnbc_chan_hs_t hs;
} kept_t;

static pnbc_lock_t wire_lock = PNBC_LOCK_INITIALIZER;
static kept_t *kept;
static size_t nkept, kept_cap;

static int keep(ompi_communicator_t *comm, int peer, const pnbc_chan_hs_t *hs)
{
    if (nkept == kept_cap) {
        size_t ncap = kept_cap ? 2 * kept_cap : 16;
        kept_t *grown = realloc(kept, ncap * sizeof(*grown));
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        kept = grown;
        kept_cap = ncap;
    }
    kept[nkept].comm = comm;
    kept[nkept].peer = peer;
    kept[nkept].hs = *hs;
    nkept++;
    return OMPI_SUCCESS;
}

static bool fits(const pnbc_chan_xchg_t *x, const pnbc_chan_hs_t *in)
{
    if (in->kind != x->out.kind || in->is_recv == x->out.is_recv) {
        return false;
    }
    return (PNBC_CHAN_HS_BIND == in->kind) ? in->tag == x->out.tag : in->id == x->out.id;
}

/* Give x the first kept message that fits it. */
static bool take_kept(pnbc_chan_xchg_t *x)
{
    for (size_t k = 0; k < nkept; ++k) {
        if (kept[k].comm == x->comm && kept[k].peer == x->peer && fits(x, &kept[k].hs)) {
            x->in = kept[k].hs;
            memmove(&kept[k], &kept[k + 1], (nkept - k - 1) * sizeof(*kept));
            nkept--;
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* The exchange                                                       */
/* ------------------------------------------------------------------ */

static bool same_pair(const pnbc_chan_xchg_t *a, const pnbc_chan_xchg_t *b)
{
    return a->comm == b->comm && a->peer == b->peer;
}

/* Is a receive outstanding for x's pair? */
static bool pair_receiving(const pnbc_chan_xchg_t *x, int n, const pnbc_chan_xchg_t *of)
{
    for (int i = 0; i < n; ++i) {
        if (!x[i].skip && NULL != x[i].rreq && same_pair(&x[i], of)) {
            return true;
        }
    }
    return false;
}

int pnbc_chan_exchange(pnbc_chan_xchg_t *x, int n)
{
    int rc = OMPI_SUCCESS, left = 0;

    for (int i = 0; i < n; ++i) {
        x[i].got = false;
        x[i].sreq = x[i].rreq = NULL;
        if (x[i].skip) {
            continue;
        }
        left++;
        int r = MCA_PML_CALL(isend(&x[i].out, sizeof(x[i].out), MPI_BYTE, x[i].peer,
                                   PNBC_CHAN_TAG_HANDSHAKE, MCA_PML_BASE_SEND_STANDARD,
                                   x[i].comm, &x[i].sreq));
        if (OMPI_SUCCESS != r) {
            x[i].sreq = NULL;
            rc = r;
        }
    }
    if (OMPI_SUCCESS != rc) {
        left = 0;       /* the peers cannot complete: report, do not wait */
    }
    while (left > 0 && OMPI_SUCCESS == rc) {
        bool moved = false;
        pnbc_lock(&wire_lock);
        for (int i = 0; i < n; ++i) {
            if (!x[i].skip && !x[i].got && take_kept(&x[i])) {
                x[i].got = true;
                left--;
                moved = true;
            }
        }
        pnbc_unlock(&wire_lock);
        for (int i = 0; i < n && OMPI_SUCCESS == rc; ++i) {
            if (x[i].skip || x[i].got || pair_receiving(x, n, &x[i])) {
                continue;
            }
            rc = MCA_PML_CALL(irecv(&x[i].rbuf, sizeof(x[i].rbuf), MPI_BYTE, x[i].peer,
                                    PNBC_CHAN_TAG_HANDSHAKE, x[i].comm, &x[i].rreq));
            if (OMPI_SUCCESS != rc) {
                x[i].rreq = NULL;
            }
        }
        for (int i = 0; i < n && OMPI_SUCCESS == rc; ++i) {
            if (x[i].skip || NULL == x[i].rreq || !REQUEST_COMPLETE(x[i].rreq)) {
                continue;
            }
            int err = x[i].rreq->req_status.MPI_ERROR;
            ompi_request_free(&x[i].rreq);
            x[i].rreq = NULL;
            if (MPI_SUCCESS != err) {
                rc = OMPI_ERROR;
                break;
            }
            pnbc_lock(&wire_lock);
            rc = keep(x[i].comm, x[i].peer, &x[i].rbuf);
            pnbc_unlock(&wire_lock);
            moved = true;
        }
        if (!moved && left > 0) {
            opal_progress();
        }
    }
    /* Only after an error can a receive be left: cancel it. */
    for (int i = 0; i < n; ++i) {
        if (NULL != x[i].rreq) {
            ompi_request_cancel(x[i].rreq);
            ompi_request_wait(&x[i].rreq, MPI_STATUS_IGNORE);
        }
        if (NULL != x[i].sreq) {
            ompi_request_wait(&x[i].sreq, MPI_STATUS_IGNORE);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Channel ids (the receiver's: its data tag and shm file name)       */
/* ------------------------------------------------------------------ */

/* Ids are handed out fresh until all PNBC_CHAN_IDS were used, and only
 * then reused: a sender maps the receiver's file by name, lazily, so a
 * name that stays unique means it can never meet a file (or a fallback
 * marker, which the shm transport leaves until finalize) of an earlier
 * channel. */

static pnbc_lock_t id_lock = PNBC_LOCK_INITIALIZER;
static int *free_ids;
static int nfree, free_cap, next_id;

int pnbc_chan_id_alloc(void)
{
    int id = -1;
    pnbc_lock(&id_lock);
    if (next_id < PNBC_CHAN_IDS) {
        id = next_id++;             /* fresh ids first: see below */
    } else if (nfree > 0) {
        id = free_ids[--nfree];
    }
    pnbc_unlock(&id_lock);
    return id;
}

void pnbc_chan_id_release(int id)
{
    if (id < 0) {
        return;
    }
    pnbc_lock(&id_lock);
    if (nfree == free_cap) {
        int ncap = free_cap ? 2 * free_cap : 64;
        int *grown = realloc(free_ids, (size_t) ncap * sizeof(*grown));
        if (NULL == grown) {
            pnbc_unlock(&id_lock);
            return;     /* the id is lost, nothing else */
        }
        free_ids = grown;
        free_cap = ncap;
    }
    free_ids[nfree++] = id;
    pnbc_unlock(&id_lock);
}
