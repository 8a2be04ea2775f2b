/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The mailbox transport: small messages of retagged schedules (cached
 * nonblocking instances) between processes of one node, through a ring
 * per pair of processes (whatever the communicator), matched by the
 * call.
 *
 * Why a third transport
 * ---------------------
 * A retagged schedule's slot (common_pnbc_transport_shm.c) belongs to the
 * receiver's instance, which the sender does not know: it waits until
 * the receiver has armed the slot for the call, a one-way trip before any
 * byte moves, which for small messages costs more than ob1's eager
 * protocol (docs/nbc.md).  A mailbox belongs to the pair instead, so a
 * sender writes at once, like an eager protocol, and its receiver picks
 * the message out by the call's key -- whatever instance either side
 * runs the call with.
 *
 * Layout (one block per process and tier in the receiver's pool,
 * published under (MBOX_CID, mbox_tag(tier)), built at its first bind of
 * a receive of that tier; a ring per on-node process of the job):
 *
 *     header | table[nrings] {sender vpid, offset}
 *            | ring: tail line | want line | unit 0 | unit 1 | ...  per sender
 *     message: [full | key | len | cid | data]   from the start of a unit
 *
 * A ring is a power of two of units of 128 bytes (MBOX_UNIT).  A message
 * of up to 96 bytes takes one; a larger one whole pages (32 units), from
 * a page's start, and none runs past the ring's end: a skip header (key
 * MBOX_SKIP) passes the units in between.  So small messages queue
 * hundreds deep in the room of a few large ones, and a receiver reading
 * a large one keeps off the lines the sender writes next (packed, they
 * measured slower here; docs/nbc-rings.md).
 *
 * Protocol.  Both sides count the ring's units: the sender writes the
 * message at unit u (its header's full = u + 1, release) once the
 * receiver's `tail` (its oldest untaken unit, on the ring's own line)
 * leaves room up to the unit after it, which it clears when an older
 * message's middle lies there: where the receiver looks next never reads
 * as written before it is (the sender keeps a bit per unit: does a middle
 * lie there?).  It reads `tail` only when what it saw last does not
 * tell.  The key is (call tag, pair_seq) and the communicator's context
 * id: the call's tag agrees on every rank, pair_seq is the message's
 * place among those of the pair in the schedule.  The receiver looks at
 * the messages from its oldest untaken one on, takes the one with its key
 * and communicator and moves its tail over the ones taken (a bit per
 * unit: taken?): messages of other calls or of later rounds stay where
 * they are.  A sender without room for long says which tail it waits for
 * (`want`, a line after the tail); the receiver then copies the oldest messages
 * into private memory (a spill list, searched first), from the receive
 * that does not find its message, or -- for a receiver busy with
 * something else -- from its progress, which a sender that has waited a
 * while wakes through the header's `wanted`.  So no call waits for one
 * that is not running.
 *
 * Agreement: messages of a retagged schedule, intracommunicator, same
 * node and job (pnbc_mbox_tier(); the parameters must be equal
 * everywhere): tier 0, room for coll_pnbc_nbc_mailbox_cells of its
 * largest, takes those below coll_pnbc_nbc_shm_min_bytes; tier 1, room
 * for coll_pnbc_nbc_mailbox_large_cells, those of collectives whose
 * senders gain from running ahead (pnbc_large_msgs_t.retag_eager: bcast,
 * whose root would otherwise wait for each receiver's call, and reduce,
 * whose root would fold each message while its sender waits) up to that
 * size.  A receiver whose pool has no room for a tier's block
 * publishes the fallback (or its marker file); both sides then carry
 * these messages over pml on a tag window of their own, one per tier
 * (pnbc_mbox_fallback_tag()).
 *
 * Lifetime: the blocks and the pairs' rings live until finalize; a
 * communicator's view of them as long as the communicator
 * (pnbc_transport_comm_free(), from the coll module's destructor) or an
 * action still bound to it.
 *
 * The code: this file is the transport (bind, post, test);
 * common_pnbc_shm_mbox.c the mailbox (block, rings);
 * common_pnbc_shm_mbox_state.c which rings a communicator uses and how
 * long they live; common_pnbc_shm_mbox.h what they share.
 */

#include "common_pnbc_shm_mbox.h"

#include <stdlib.h>
#include <string.h>

typedef struct mbox_act_t {
    mbox_comm_t *mc;
    mbox_out_t *out;            /* SEND */
    mbox_in_t *in;              /* RECV (NULL: pml) */
    uint64_t key;               /* of this start's message */
    size_t bytes;
    char *flat;                 /* contiguous data, or NULL: conv */
    opal_convertor_t *conv;
    pnbc_channel_t ch;
    ompi_request_t *req;        /* the pml fallback's */
    int tier;                   /* pnbc_mbox_tier() */
    /* RECV folding its message into a reduction straight from the ring
     * (a->fold, see mbox_commit); NULL: copy it out */
    shm_fold_t *fold;
    bool done;
    int err;
    /* SEND: the schedule's SEND before this one to the same peer and tier
     * (NULL: none), and the call tag under which this one last left
     * (written into the ring or posted to pml; 0: never) */
    struct mbox_act_t *prev;
    int sent_tag;
    struct mbox_act_t *next_spare;
} mbox_act_t;

/* Spare action states.  A nonblocking call that misses binds about as
 * many as the instance it evicts unbinds, so they go round here rather
 * than through malloc and free (whose frees of them took the slow path).
 * At most MBOX_SPARE_MAX wait; fini frees them. */
#define MBOX_SPARE_MAX 256
static pnbc_lock_t spare_lock = PNBC_LOCK_INITIALIZER;
static mbox_act_t *spare;
static unsigned nspare;

static mbox_act_t *act_new(void)
{
    pnbc_lock(&spare_lock);
    mbox_act_t *t = spare;
    if (NULL != t) {
        spare = t->next_spare;
        nspare--;
    }
    pnbc_unlock(&spare_lock);
    return (NULL != t) ? t : malloc(sizeof(*t));    /* (calloc skips malloc's thread cache) */
}

static void act_delete(mbox_act_t *t)
{
    pnbc_lock(&spare_lock);
    const bool keep = nspare < MBOX_SPARE_MAX;
    if (keep) {
        t->next_spare = spare;
        spare = t;
        nspare++;
    }
    pnbc_unlock(&spare_lock);
    if (!keep) {
        free(t);
    }
}

static void mbox_fini(void)
{
    pnbc_mbox_fini();
    pnbc_lock(&spare_lock);
    while (NULL != spare) {
        mbox_act_t *t = spare;
        spare = t->next_spare;
        free(t);
    }
    nspare = 0;
    pnbc_unlock(&spare_lock);
}

/* Not on the slot fallback's mirrored tag (common_pnbc_shm_slot.c) nor
 * on the call's: a sender learns of the fallback only when it finds the
 * receiver's entry, by which time a message of another transport to the
 * same receiver in the same round may have been posted ahead of this one,
 * which the receiver posted first -- pml would match them crosswise.  On
 * a tag of their own they are matched in the order they are posted, and
 * the receiver posts its receives in schedule order, so a sender posts
 * them in schedule order too: a SEND leaves only after the one before it
 * to the same peer (t->prev) has left in this call.  (Several SENDs to a
 * peer in one round: one may find the fallback, the next may not yet.) */
static int fallback_post(pnbc_action_t *a, mbox_act_t *t)
{
    const int tag = pnbc_mbox_fallback_tag(pnbc_channel_tag(&t->ch, a), t->tier);
    return pnbc_shm_fallback_post(a, &t->ch, tag, &t->req);
}

static void recv_deliver(void *arg, const char *data, uint64_t len)
{
    mbox_act_t *t = arg;
    const shm_fold_t *f = t->fold;
    if (OPAL_UNLIKELY(len > t->bytes)) {
        t->err = MPI_ERR_TRUNCATE;
    } else if (NULL != f) {
        pnbc_shm_fold_run(f, data, 0, len / f->elsize, t->flat);   /* all of it is here */
    } else if (NULL != t->flat) {
        pnbc_copy(t->flat, data, len);
    } else if (len > 0 && pnbc_convert_part(t->conv, (void *) data, len, 0, false) != len) {
        t->err = MPI_ERR_TRUNCATE;
    }
}

/* Move what can move; t->done when the action needs nothing more. */
static inline __attribute__((always_inline)) void act_progress(pnbc_action_t *a, mbox_act_t *t)
{
    int rc = OMPI_SUCCESS;

    if (NULL != t->req) {
        if (REQUEST_COMPLETE(t->req)) {
            t->err = t->req->req_status.MPI_ERROR;
            ompi_request_free(&t->req);
            t->req = NULL;
            t->done = true;
        }
        return;
    }
    if (PNBC_ACT_RECV == a->kind) {
        if (OPAL_LIKELY(NULL != t->in)) {
            t->done = pnbc_mbox_take(t->in, t->key, t->mc->cid, recv_deliver, t);
        } else {
            rc = fallback_post(a, t);
        }
    } else {
        switch (pnbc_mbox_out_state(t->out, t->mc, ompi_comm_rank(t->ch.comm), a->peer)) {
        case MBOX_READY:
            t->done = pnbc_mbox_write(t->out, t->key, t->mc->cid, t->flat, t->conv, t->bytes,
                                      &t->err);
            if (t->done) {
                t->sent_tag = t->ch.tag;
            }
            break;
        case MBOX_PML:
            if (NULL != t->prev && t->prev->sent_tag != t->ch.tag) {
                break;              /* the one before it first (see fallback_post) */
            }
            rc = fallback_post(a, t);
            t->sent_tag = t->ch.tag;
            break;
        case MBOX_BROKEN:
            rc = MPI_ERR_INTERN;    /* the two sides disagree */
            break;
        default:
            break;                  /* the receiver has not said yet */
        }
    }
    if (OMPI_SUCCESS != rc) {
        t->err = rc;
        t->done = true;
    }
}

static bool mbox_bind(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    const size_t bytes = (NULL == a->buf.dtype) ? 0 : a->buf.count * a->buf.dtype->super.size;

    /* Both sides decide alike (see the top of this file).  The peer is
     * checked before the tier, which looks it up in the communicator's
     * group (an intercommunicator's `local` peer is not in it). */
    if (!ch->retag || ch->sizes_may_differ || !pnbc_shm_peer_ok(a, ch)) {
        return false;
    }
    const int tier = pnbc_mbox_tier(ch, a, bytes);
    if (tier < 0) {
        return false;
    }
    /* Ours from here on; a failure leaves tstate.ptr NULL and fails the
     * commit (mbox_commit). */
    mbox_act_t *t = act_new();
    if (NULL == t) {
        return true;
    }
    *t = (mbox_act_t) { .bytes = bytes, .ch = *ch, .tier = tier };
    if (!pnbc_shm_bind_data(a, bytes, &t->flat, &t->conv)) {
        act_delete(t);
        return true;
    }
    t->mc = pnbc_mbox_comm_hold(ch, a, tier, &t->out, &t->in);
    if (NULL == t->mc) {
        if (NULL != t->conv) {
            OBJ_RELEASE(t->conv);
        }
        act_delete(t);
        return true;
    }
    a->tstate.ptr = t;
    return true;
}

/* Each SEND's t->prev: the SEND before it to the same peer and over the
 * same tier (whose pml fallback shares its tag), in schedule order. */
static int link_sends(pnbc_schedule_t *s)
{
    int max_peer = -1;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        const pnbc_action_t *a = &s->actions[i];
        if (a->transport == &pnbc_transport_mbox && PNBC_ACT_SEND == a->kind &&
            a->peer > max_peer) {
            max_peer = a->peer;
        }
    }
    if (max_peer < 0) {
        return OMPI_SUCCESS;
    }
    /* by lane (tier 0/1, local or not) and peer: the last SEND seen */
    const size_t npeers = (size_t) max_peer + 1;
    mbox_act_t *small[4 * 64];  /* up to 64 peers: no allocation */
    mbox_act_t **last = (npeers <= 64) ? small : malloc(4 * npeers * sizeof(*last));
    if (NULL == last) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memset(last, 0, 4 * npeers * sizeof(*last));    /* the lanes in use, not all 64 peers' */
    for (uint32_t i = 0; i < s->nactions; ++i) {
        const pnbc_action_t *a = &s->actions[i];
        if (a->transport != &pnbc_transport_mbox || PNBC_ACT_SEND != a->kind) {
            continue;
        }
        mbox_act_t *t = a->tstate.ptr;
        const size_t lane = 2 * (size_t) t->tier + (a->local ? 1 : 0);
        t->prev = last[lane * npeers + (size_t) a->peer];
        last[lane * npeers + (size_t) a->peer] = t;
    }
    if (last != small) {
        free(last);
    }
    return OMPI_SUCCESS;
}

/* A receive through a ring (not the pml fallback, known at bind) whose
 * REDUCE commit found foldable (a->fold, find_folds()) does it while
 * taking the message from the ring: no copy out, no second pass. */
static int mbox_commit(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    (void) ch;
    int rc = pnbc_transport_bound_all(s, &pnbc_transport_mbox);     /* see mbox_bind */
    if (OMPI_SUCCESS == rc) {
        rc = link_sends(s);
    }
    for (uint32_t i = 0; OMPI_SUCCESS == rc && i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        mbox_act_t *t = a->tstate.ptr;
        if (a->transport == &pnbc_transport_mbox && PNBC_ACT_RECV == a->kind &&
            NULL != a->fold && NULL != t->in && NULL != t->flat) {
            t->fold = pnbc_shm_fold_take(a, NULL);  /* NULL: its REDUCE runs as usual */
        }
    }
    return rc;
}

/* Nothing is paired ahead of the call (no retag hook): the message's
 * key is the call's tag and its place in the schedule, so the post of
 * each start sets it. */
static int mbox_post(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    mbox_act_t *t = a->tstate.ptr;
    t->ch.tag = ch->tag;
    t->key = mbox_key(ch->tag, a->pair_seq);
    t->done = false;
    t->err = MPI_SUCCESS;
    act_progress(a, t);
    /* a message written into the ring or taken from it is done: the
     * executor need not test it */
    a->inflight = !t->done;
    return t->done ? t->err : OMPI_SUCCESS;
}

static bool mbox_test(pnbc_action_t *a, int *err)
{
    mbox_act_t *t = a->tstate.ptr;
    if (!t->done) {
        act_progress(a, t);
        if (!t->done) {
            return false;
        }
    }
    a->inflight = false;
    *err = t->err;
    return true;
}

static void mbox_unbind(pnbc_action_t *a)
{
    mbox_act_t *t = a->tstate.ptr;
    if (NULL == t) {
        return;
    }
    if (NULL != t->conv) {
        OBJ_RELEASE(t->conv);
    }
    pnbc_mbox_comm_release(t->mc);
    free(t->fold);
    act_delete(t);
    a->tstate.ptr = NULL;
}

const pnbc_transport_t pnbc_transport_mbox = {
    .name = "mbox",
    /* a SEND is done once its message is in the receiver's ring; a RECV
     * can fold it into a reduction from the ring */
    .caps = PNBC_TCAP_EAGER_SEND | PNBC_TCAP_FOLD,
    .bind = mbox_bind,
    .commit = mbox_commit,
    .post = mbox_post,
    .test = mbox_test,
    .unbind = mbox_unbind,
    .progress = pnbc_mbox_progress,
    .comm_free = pnbc_mbox_comm_free,
    .fini = mbox_fini,
};
