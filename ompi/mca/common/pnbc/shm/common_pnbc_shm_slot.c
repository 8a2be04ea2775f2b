/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's slot protocol (see
 * common_pnbc_transport_shm.c): post and test, a sender finding its slot
 * in the receiver's block, boxes, streaming a message through them, and
 * the pml fallback when the receiver has no room for the request.
 */

#include "common_pnbc_shm.h"

#include "ompi/mca/pml/pml.h"

#include <string.h>

/* Sender: find our slot in the table of the receiver's block. */
static bool send_find_slot(const pnbc_action_t *a, shm_action_t *t)
{
    const shm_region_t *r = t->region;
    const shm_header_t *h = r->base;
    const shm_entry_t *table = (const shm_entry_t *) (h + 1);
    const int me = ompi_comm_rank(t->ch.comm);

    for (uint32_t k = 0; k < h->nslots; ++k) {
        const shm_entry_t *e = &table[k];
        if (e->sender == me && e->pair_seq == a->pair_seq &&
            e->depth > 0 && 0 == (e->depth & (e->depth - 1)) && e->depth <= r->size &&
            e->frag <= r->size && (e->frag > 0 || 0 == e->capacity) &&
            e->offset + shm_slot_size(e->frag, e->depth) <= r->size) {
            slot_attach(t, (char *) r->base + e->offset, e->frag, e->depth);
            /* boxes of an exchange through boxes: non-temporal stores
             * as measured, not always */
            pnbc_fill_init(&t->fill, !pnbc_shm_exchange_boxes(&t->ch));
            t->capacity = e->capacity;
            t->offer_asked = (0 != e->offer);
            t->offer_declined = (0 != e->declined);
            /* an invitation to write into the receiver's buffer: taken
             * for a message in one piece of the size it expects, between
             * processes of one PID namespace */
            t->invite_addr = e->invite_addr;
            t->invite_pid = e->invite_pid;
            const bool writable = 0 != e->invite_addr && NULL != t->flat &&
                                  t->bytes == e->capacity && 0 != e->invite_ns &&
                                  pnbc_shm_pid_namespace() == e->invite_ns &&
                                  mca_common_pnbc_params.shm_single_copy;
            t->invited = writable && 0 == e->help;
            t->help = writable && 0 != e->help;     /* shared copy of offers */
            t->gen = h->gen;
            t->hdr = h;
            pnbc_shm_bell_bind(a, t);
            return true;
        }
    }
    return false;
}

/*
 * Fallback: the receiver found no room for the request in its pool
 * (pnbc_shm_recv_block_build), so the messages of the pair that were to use
 * shm go over pml instead.  Not on the request's tag: a sender learns of
 * the fallback only at its first post, when it finds the fallback, and by
 * then it may have posted this round's pml-bound messages to the same
 * peer ahead of the waiting shm-bound ones, which the receiver posted
 * first -- pml would match them crosswise.  So they travel on the
 * request's mirrored tag (pnbc_local_tag), which on an intracommunicator
 * nothing else uses (it carries intercommunicator local-group traffic, on
 * the internal c_local_comm only), and among themselves keep schedule
 * order: the sender switches all its actions to that peer at once,
 * posting the waiting ones in order (region_fall_back).
 */
int pnbc_shm_fallback_post(pnbc_action_t *a, const pnbc_channel_t *ch, int tag,
                           ompi_request_t **req)
{
    ompi_communicator_t *comm = ch->comm;
    const int rc = (PNBC_ACT_SEND == a->kind)
        ? MCA_PML_CALL(isend(a->buf.addr, a->buf.count, a->buf.dtype, a->peer, tag,
                             MCA_PML_BASE_SEND_STANDARD, comm, req))
        : MCA_PML_CALL(irecv(a->buf.addr, a->buf.count, a->buf.dtype, a->peer, tag, comm, req));
    if (OMPI_SUCCESS == rc) {
        pnbc_transport_pml_watch(*req, ch->waker);
    }
    return rc;
}

static int fallback_post(pnbc_action_t *a, shm_action_t *t)
{
    return pnbc_shm_fallback_post(a, &t->ch, pnbc_local_tag(pnbc_channel_tag(&t->ch, a)),
                                  &t->req);
}

/* Sender: the receiver carries this request's shm messages over pml. */
static void region_fall_back(shm_region_t *r)
{
    for (uint32_t i = 0; i < r->nacts; ++i) {
        pnbc_action_t *a = r->acts[i];
        shm_action_t *t = a->tstate.ptr;
        t->fallback = true;
        if (a->inflight && !t->done) {      /* posted, waiting for the block */
            int rc = fallback_post(a, t);
            if (OMPI_SUCCESS != rc) {
                t->err = rc;
                t->done = true;
            }
        }
    }
}

/* Sender, first post: find the receiver's block in its pool, and our
 * slot in it.  False while the block is not published (or once the
 * action has failed or fallen back). */
static bool send_attach(pnbc_action_t *a, shm_action_t *t)
{
    shm_region_t *r = t->region;
    if (NULL == r->base) {
        switch (pnbc_shm_pool_find(r, &r->peer)) {
        case PNBC_SHM_POOL_BLOCK:
            break;
        case PNBC_SHM_POOL_NONE:
            region_fall_back(r);            /* this action included */
            return false;
        case PNBC_SHM_POOL_MARKER:
            if (pnbc_shm_marker_exists(r)) {
                region_fall_back(r);
            }
            return false;
        default:
            return false;                   /* the receiver is not there yet */
        }
    }
    if (!send_find_slot(a, t)) {
        t->err = MPI_ERR_INTERN;            /* the two sides disagree */
        t->done = true;
        return false;
    }
    /* Single copy for large messages in one piece, where the collective
     * takes it or the receiver asks for it (its pool is under pressure). */
    t->offer = mca_common_pnbc_params.shm_single_copy && NULL != t->flat &&
               t->bytes == t->capacity && !t->offer_declined &&
               (t->offer_asked ? t->bytes > t->frag
                               : t->ch.large.single_copy && t->bytes > shm_box_max(&t->ch));
    pnbc_shm_express_ready(t, true);
    return true;
}

/* Sender of a retagged schedule: is our slot armed for this start?  The
 * block's incarnation is read after the slot: one freed and reused since
 * we found it has another. */
static bool slot_armed(const shm_action_t *t)
{
    const uint64_t key = shm_armed_key(pnbc_comm_key(t->ch.comm), t->ch.tag);
    return __atomic_load_n(&t->slot->armed, __ATOMIC_ACQUIRE) == key &&
           __atomic_load_n(&t->hdr->gen, __ATOMIC_ACQUIRE) == t->gen;
}

/* Sender of a retagged schedule, first post of a start: the slot found
 * at the last start, if the receiver armed the same one again (it runs
 * the same cached instance), else a lookup in the receiver's directory;
 * fragments are numbered on from the slot's base. */
static bool send_pair(pnbc_action_t *a, shm_action_t *t)
{
    if (NULL == t->slot || !slot_armed(t)) {
        /* Usually the receiver has not reached the call yet: its
         * directory is looked at only every 16th time, so as not to pull
         * the lines it is about to write to this core at every poll
         * (unless another send of this start found the block already). */
        if (NULL != t->slot && NULL == t->region->base && 0 != (++t->polls & 15)) {
            return false;
        }
        if (!send_attach(a, t)) {
            return false;
        }
        if (!slot_armed(t)) {
            t->err = MPI_ERR_INTERN;        /* the two sides disagree */
            t->done = true;
            return false;
        }
    }
    t->q = t->seen = t->slot->base;         /* every earlier one was read */
    t->unpaired = false;
    return true;
}

/* Sender: copy fragments into free boxes (copy in, copy out); true once
 * the last one is written.  A convertor packs whole elements only, so a
 * fragment of non-contiguous data may fall short of the box: the last
 * fragment is flagged rather than counted. */
static bool send_stream(shm_action_t *t)
{
    uint64_t last = 0;
    while (!last && send_box_free(t, t->q + 1)) {
        const uint64_t q = t->q + 1;
        shm_box_t *box = box_of(t, q);
        uint64_t len = t->bytes - t->moved;
        len = (len > t->frag) ? t->frag : len;
        if (OPAL_UNLIKELY(t->bytes > t->capacity)) {
            len = SHM_TRUNCATED;            /* tell the receiver too */
            t->err = MPI_ERR_TRUNCATE;
        } else if (NULL != t->flat) {
            pnbc_fill(&t->fill, box->data, t->flat + t->moved, len);
        } else if (len > 0) {
            len = pnbc_convert_part(t->conv, box->data, len, t->moved, true);
        }
        if (SHM_TRUNCATED != len) {
            t->moved += len;
        }
        last = (SHM_TRUNCATED == len || t->moved == t->bytes || 0 == len);
        if (OPAL_UNLIKELY(0 == len && t->moved < t->bytes)) {
            t->err = MPI_ERR_INTERN;        /* the convertor made no progress */
        }
        box->len = len;
        box->last = last;
        __atomic_store_n(&box->full, q, __ATOMIC_RELEASE);
        shm_ring(t);
        t->q = q;
    }
    return last;
}

/* Sender: move this post's message as far as the receiver lets us;
 * t->done once it needs nothing more from our buffer. */
static void send_progress(pnbc_action_t *a, shm_action_t *t)
{
    if (OPAL_UNLIKELY(t->unpaired) ? !send_pair(a, t)
                                   : OPAL_UNLIKELY(NULL == t->slot) && !send_attach(a, t)) {
        return;
    }
    if (t->invited) {
        /* wait until the receiver has posted this start (a retagged
         * slot is armed for this call once paired), then write */
        if (!t->ch.retag && __atomic_load_n(&t->slot->invited, __ATOMIC_ACQUIRE) != t->posts) {
            return;
        }
        if (pnbc_shm_send_write(t)) {
            t->done = true;
            return;
        }
        if (t->invited) {
            return;                         /* the box is not free yet */
        }
    }
    if (t->offered) {
        if (!pnbc_shm_send_offer_answered(t)) {
            return;
        }
        if (t->offer) {
            t->done = true;                 /* read in one copy */
            return;
        }
    } else if (t->offer) {
        (void) pnbc_shm_send_offer(t, a->last);     /* or its box is still busy */
        return;
    }
    t->done = send_stream(t);
}

void pnbc_shm_recv_progress(shm_action_t *t)
{
    for (;;) {
        const uint64_t q = t->q + 1;
        shm_box_t *box = box_of(t, q);
        if (__atomic_load_n(&box->full, __ATOMIC_ACQUIRE) != q) {
            return;
        }
        const uint64_t len = box->len;
        if (SHM_WRITTEN == len && 0 == t->moved) {
            /* the sender wrote the message into our buffer */
            t->moved = t->bytes;
            __atomic_store_n(&t->slot->consumed, q, __ATOMIC_RELEASE);
            shm_ring(t);
            t->q = q;
            t->done = true;
            return;
        }
        if (SHM_OFFER == len && 0 == t->moved) {
            switch (pnbc_shm_recv_take_offer(t, box, q)) {
            case SHM_TAKE_DONE:
                t->done = true;
                return;
            case SHM_TAKE_PENDING:
                return;
            default:
                continue;
            }
        }
        const bool last = box->last;
        if (OPAL_UNLIKELY(len > t->frag || t->moved + len > t->bytes)) {
            t->err = MPI_ERR_TRUNCATE;      /* also SHM_TRUNCATED */
        } else if (NULL != t->fold) {
            pnbc_shm_recv_fold(t, box->data, len);
        } else if (NULL != t->flat) {
            pnbc_copy(t->flat + t->moved, box->data, len);
            t->moved += len;
        } else if (len > 0) {
            if (pnbc_convert_part(t->conv, box->data, len, t->moved, false) != len) {
                t->err = MPI_ERR_TRUNCATE;
            }
            t->moved += len;
        }
        __atomic_store_n(&t->slot->consumed, q, __ATOMIC_RELEASE);
        shm_ring(t);
        t->q = q;
        if (last) {
            /* A box of a line: the next start's message comes to the next
             * box, so ask for that line now, and the load of its header
             * (the line coming from the sender's core) is not where that
             * start waits.  Not for larger boxes: their sender may be
             * writing the next one, and taking the header's line from it
             * slowed 4 KiB calls (docs/nbc-rings.md, "The sender's next line"). */
            if (t->box_size <= SHM_LINE) {
                __builtin_prefetch((const void *) box_of(t, q + 1), 0, 3);
            }
            t->done = true;
            return;
        }
    }
}

int pnbc_shm_post(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    shm_action_t *t = a->tstate.ptr;

    (void) ch;  /* the same as t->ch */
    t->moved = 0;
    t->err = MPI_SUCCESS;
    t->done = false;
    t->help_wait = false;
    t->posts++;
    a->inflight = true;
    if (OPAL_UNLIKELY(t->fallback)) {
        int rc = fallback_post(a, t);
        a->inflight = (OMPI_SUCCESS == rc);
        return rc;
    }
    if (PNBC_ACT_SEND == a->kind) {
        send_progress(a, t);
    } else {
        if (t->invited || t->help) {
            /* our buffer is the message's from now on: invite the sender */
            __atomic_store_n(&t->slot->invited, t->posts, __ATOMIC_RELEASE);
            shm_ring(t);
        }
        pnbc_shm_recv_progress(t);
    }
    return OMPI_SUCCESS;
}

bool pnbc_shm_test(pnbc_action_t *a, int *err)
{
    shm_action_t *t = a->tstate.ptr;

    if (!t->done) {
        if (OPAL_UNLIKELY(t->fallback)) {
            if (!REQUEST_COMPLETE(t->req)) {
                return false;
            }
            t->err = t->req->req_status.MPI_ERROR;
            ompi_request_free(&t->req);
            t->req = NULL;
            t->done = true;
        } else {
            if (PNBC_ACT_SEND == a->kind) {
                send_progress(a, t);
            } else {
                pnbc_shm_recv_progress(t);
            }
            if (!t->done) {
                return false;
            }
        }
    }
    a->inflight = false;
    *err = t->err;
    /* a retagged schedule's block is announced for one start: once its
     * receives are done, every sender has found it */
    if (t->ch.retag && PNBC_ACT_RECV == a->kind && NULL != t->region &&
        0 == --t->region->left) {
        pnbc_shm_region_withdraw(t->region);
    }
    return true;
}
