/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's express path (pnbc_transport_t.express):
 * a message of one box, in one piece at both ends, that the slot
 * protocol (common_pnbc_transport_shm.c) moves with nothing but a copy
 * and a flag.  A post is then the whole protocol for fragment q:
 *
 *     sender:   box q % depth free (the receiver's counter, read only
 *               when the last value seen does not tell), data, len and
 *               last into it, full = q, ring the pair's bell
 *     receiver: full == q (one load), data out of it (or folded into
 *               the reduction that consumes it), consumed = q, ring
 *
 * and a test is the same again: no per-post state is reset, no channel
 * is read.  Which actions qualify is decided at commit (pnbc_shm_express:
 * contiguous data of at most a box and SHM_PRESSED_MIN bytes, whose slot
 * slot_shape() makes one box per message, never offered nor invited, and
 * not retagged); a sender knows its slot only once it has found the
 * receiver's block (send_attach), so until then -- and for good if the
 * receiver fell back to pml or the slot turns out otherwise -- its posts
 * take the general path (pnbc_shm_post / pnbc_shm_test).  `t->done` false
 * marks a post on the general path: an express post leaves it true.
 */

#include "common_pnbc_shm.h"

/* Is a copy of `bytes` one of two words (pnbc_copy's first case)? */
static inline bool express_words(size_t bytes)
{
    return bytes - 8 <= 8;
}

/* pnbc_copy() of a t->xwords message: the compiler is told it is two
 * words, so nothing else of it is inlined (nor a register saved for it). */
static inline void copy_words(void *dst, const void *src, size_t bytes)
{
    if (!express_words(bytes)) {
        __builtin_unreachable();
    }
    pnbc_copy(dst, src, bytes);
}

void pnbc_shm_express_ready(shm_action_t *t, bool send)
{
    t->express = t->xcand && NULL != t->slot && !t->fallback && !t->invited && !t->help &&
                 t->bytes <= t->frag && (!send || (!t->offer && t->bytes <= t->capacity));
    /* a sender copies as pnbc_fill() would: inline below its threshold */
    t->xwords = express_words(t->bytes) && (send ? t->bytes < t->fill.from : NULL == t->fold);
}

/* Commit: may a take the express path (see above)?  A receiver's slot is
 * laid out by now; a sender's is checked when found (send_attach). */
bool pnbc_shm_express(pnbc_action_t *a)
{
    shm_action_t *t = a->tstate.ptr;

    t->xcand = NULL == t->conv && !t->ch.retag && t->bytes <= shm_box_max(&t->ch) &&
               t->bytes <= SHM_PRESSED_MIN;
    t->done = true;         /* no general post under way */
    if (PNBC_ACT_RECV == a->kind) {
        pnbc_shm_express_ready(t, false);
    }
    return t->xcand;
}

/* The message of a general post, or of an express one that took it
 * there: done within its post, or in flight. */
static __attribute__((noinline)) bool general_post(pnbc_action_t *a, shm_action_t *t, int *err)
{
    const int rc = pnbc_shm_post(a, &t->ch);
    if (!a->inflight) {
        *err = rc;          /* the fallback could not be posted */
        return true;
    }
    return t->done && pnbc_shm_test(a, err);
}

/* The fast paths below call nothing but through these (noinline, in
 * tail position): a post of a small message then saves no register. */

/* Sender: fragment q's box filled; publish it. */
static inline bool send_publish(shm_action_t *t, shm_box_t *box, uint64_t q)
{
    box->len = t->bytes;
    box->last = 1;
    __atomic_store_n(&box->full, q, __ATOMIC_RELEASE);
    shm_ring(t);
    t->q = q;
    return true;
}

static __attribute__((noinline)) bool send_fill(shm_action_t *t, shm_box_t *box, uint64_t q)
{
    pnbc_fill(&t->fill, box->data, t->flat, t->bytes);
    return send_publish(t, box, q);
}

/* Receiver: fragment q's box emptied; count it consumed. */
static inline bool recv_consumed(shm_action_t *t, uint64_t q, int *err)
{
    __atomic_store_n(&t->slot->consumed, q, __ATOMIC_RELEASE);
    shm_ring(t);
    t->q = q;
    if (t->box_size <= SHM_LINE) {      /* as pnbc_shm_recv_progress does */
        __builtin_prefetch((const void *) box_of(t, q + 1), 0, 3);
    }
    *err = MPI_SUCCESS;
    return true;
}

static __attribute__((noinline)) bool recv_take(shm_action_t *t, const shm_box_t *box,
                                                uint64_t q, int *err)
{
    if (NULL != t->fold) {
        pnbc_shm_fold_run(t->fold, box->data, 0, t->fold->count, t->flat);
    } else if (0 != t->bytes) {
        pnbc_copy(t->flat, box->data, t->bytes);
    }
    return recv_consumed(t, q, err);
}

/* A message of another length (a sender's that is shorter, or
 * truncated): the general receive tells them apart. */
static __attribute__((noinline)) bool recv_odd(pnbc_action_t *a, shm_action_t *t, int *err)
{
    t->moved = 0;
    t->err = MPI_SUCCESS;
    t->done = false;
    pnbc_shm_recv_progress(t);
    if (!t->done) {
        a->inflight = true;
        return false;       /* more fragments: the general path goes on */
    }
    *err = t->err;
    return true;
}

/* Sender: fragment q into its box if it is free (else a is in flight). */
static inline bool express_send(pnbc_action_t *a, shm_action_t *t)
{
    const uint64_t q = t->q + 1;
    if (!send_box_free(t, q)) {
        a->inflight = true;
        return false;
    }
    shm_box_t *box = box_of(t, q);
    if (t->xwords) {
        copy_words(box->data, t->flat, t->bytes);
    } else if (0 != t->bytes) {
        return send_fill(t, box, q);
    }
    return send_publish(t, box, q);
}

/* Receiver: fragment q out of its box if it is there (else a is in
 * flight). */
static inline bool express_recv(pnbc_action_t *a, shm_action_t *t, int *err)
{
    const uint64_t q = t->q + 1;
    const shm_box_t *box = box_of(t, q);
    if (__atomic_load_n(&box->full, __ATOMIC_ACQUIRE) != q) {
        a->inflight = true;
        return false;
    }
    if (OPAL_UNLIKELY(box->len != t->bytes)) {
        return recv_odd(a, t, err);
    }
    if (t->xwords) {
        copy_words(t->flat, box->data, t->bytes);
    } else if (NULL != t->fold || 0 != t->bytes) {
        return recv_take(t, box, q, err);
    }
    return recv_consumed(t, q, err);
}

/* The message moved: true; else a->inflight is true.  Every call in
 * tail position: nothing to save around it. */
static inline bool express_move(pnbc_action_t *a, shm_action_t *t, int *err)
{
    if (PNBC_ACT_SEND == a->kind) {
        *err = MPI_SUCCESS;
        return express_send(a, t);
    }
    return express_recv(a, t, err);
}

bool pnbc_shm_xpost(pnbc_action_t *a, int *err)
{
    shm_action_t *t = a->tstate.ptr;

    if (OPAL_UNLIKELY(!t->express)) {
        return general_post(a, t, err);
    }
    return express_move(a, t, err);     /* (a->inflight is false between posts) */
}

bool pnbc_shm_xtest(pnbc_action_t *a, int *err)
{
    shm_action_t *t = a->tstate.ptr;

    if (OPAL_UNLIKELY(!t->done)) {
        return pnbc_shm_test(a, err);   /* a post on the general path */
    }
    if (!express_move(a, t, err)) {
        return false;
    }
    a->inflight = false;
    return true;
}
