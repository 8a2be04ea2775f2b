/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * A receiver's index of the messages in one sender's ring.  A receive
 * finds its message by searching the ring from the oldest untaken one;
 * with calls outstanding by the hundred, the messages of receives posted
 * earlier but not polled since lie ahead of it, and every post and poll
 * passed over all of them again.  Once a search has passed over
 * MBOX_INDEX_MIN messages, the ring gets an index: each search notes the
 * messages it passes (key, communicator -> unit) and remembers how far
 * it looked (`scanned`), so a later receive finds its message in the
 * index or in the part not yet looked at, and every message is looked
 * at once.  A message moved aside (ring_spill_oldest()) is noted there
 * instead; an entry of the ring is checked against it when used.  Large
 * messages fill a ring before any search passes MBOX_INDEX_MIN of them:
 * the index is also made when the first message is moved aside.
 *
 * Open addressing, linear probing, deletion by shifting back; room for
 * twice as many entries as the ring holds messages at first.  When the
 * table fills, entries of the ring that the tail has passed go, and if
 * it is still three quarters full it doubles (messages moved aside may
 * outnumber those a ring holds).  A ring entry
 * that finds no room leaves `scanned` before its message, so the next
 * search looks there again; a message moved aside that finds none is
 * searched for in the spill list.
 */

#include "common_pnbc_shm_mbox.h"

#include <stdlib.h>

struct mbox_idx_t {
    uint64_t key;
    uint64_t v;                 /* the message's first unit, or its spill */
    uint32_t cid;
    uint32_t at;                /* MBOX_AT_*: NONE = a free slot */
};

/* Keys of one communicator's calls differ in their low bits (pair_seq:
 * consecutive numbers); every bit of the slot depends on all of the
 * key's (a product's middle bits alone sent consecutive keys to every
 * fourth slot of a table of 2048, and linear probing made runs of them) */
static uint64_t slot_of(const mbox_in_t *n, uint64_t key, uint32_t cid)
{
    uint64_t x = key ^ ((uint64_t) cid << 40);
    x = (x ^ (x >> 31)) * UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 29)) * UINT64_C(0xBF58476D1CE4E5B9);
    return (x ^ (x >> 32)) & n->idx_mask;
}

bool pnbc_mbox_index_want(mbox_in_t *n, unsigned passed)
{
    if (NULL != n->idx || passed < MBOX_INDEX_MIN) {
        return NULL != n->idx;
    }
    /* a message takes a unit at least: room for twice the ring's
     * messages, or for 2048 on a larger ring (the table grows: grow()) */
    uint64_t msgs = n->ring.mask + 1, cap = 64;
    msgs = (msgs < 1024) ? msgs : 1024;
    while (cap < 2 * msgs) {
        cap <<= 1;
    }
    n->idx = calloc(cap, sizeof(*n->idx));
    if (NULL == n->idx) {
        return false;
    }
    n->idx_mask = cap - 1;
    n->nidx = 0;
    n->scanned = n->ring.next;
    return true;
}

/* Remove the entry at slot i, moving later ones of its run back. */
static void drop_at(mbox_in_t *n, uint64_t i)
{
    struct mbox_idx_t *t = n->idx;
    uint64_t hole = i;
    t[hole].at = MBOX_AT_NONE;
    n->nidx--;
    for (uint64_t j = (hole + 1) & n->idx_mask; t[j].at; j = (j + 1) & n->idx_mask) {
        const uint64_t home = slot_of(n, t[j].key, t[j].cid);
        /* j may move to the hole unless its home lies in (hole, j] */
        const bool stays = (hole <= j) ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            t[hole] = t[j];
            t[j].at = MBOX_AT_NONE;
            hole = j;
        }
    }
}

static void purge(mbox_in_t *n)
{
    for (uint64_t i = 0; i <= n->idx_mask;) {
        if (MBOX_AT_UNIT == n->idx[i].at && n->idx[i].v < n->ring.next) {
            drop_at(n, i);      /* an entry may have moved into i: look again */
        } else {
            ++i;
        }
    }
}

static void put(mbox_in_t *n, const struct mbox_idx_t *e)
{
    uint64_t i = slot_of(n, e->key, e->cid);
    while (n->idx[i].at) {
        i = (i + 1) & n->idx_mask;
    }
    n->idx[i] = *e;
    n->nidx++;
}

static bool grow(mbox_in_t *n)
{
    struct mbox_idx_t *old = n->idx;
    const uint64_t cap = n->idx_mask + 1;
    struct mbox_idx_t *t = calloc(2 * cap, sizeof(*t));
    if (NULL == t) {
        return false;
    }
    n->idx = t;
    n->idx_mask = 2 * cap - 1;
    n->nidx = 0;
    for (uint64_t i = 0; i < cap; ++i) {
        if (old[i].at) {
            put(n, &old[i]);
        }
    }
    free(old);
    return true;
}

bool pnbc_mbox_index_note(mbox_in_t *n, uint64_t key, uint32_t cid, int at, uint64_t v)
{
    if (4 * (n->nidx + 1) > 3 * (n->idx_mask + 1)) {
        purge(n);
        if (4 * (n->nidx + 1) > 3 * (n->idx_mask + 1) && !grow(n)) {
            return false;
        }
    }
    uint64_t i = slot_of(n, key, cid);
    while (n->idx[i].at) {
        if (n->idx[i].key == key && n->idx[i].cid == cid) {
            n->idx[i].at = (uint32_t) at;
            n->idx[i].v = v;
            return true;
        }
        i = (i + 1) & n->idx_mask;
    }
    n->idx[i] = (struct mbox_idx_t) { .key = key, .v = v, .cid = cid, .at = (uint32_t) at };
    n->nidx++;
    return true;
}

int pnbc_mbox_index_take(mbox_in_t *n, uint64_t key, uint32_t cid, uint64_t *v)
{
    n->idx_takes++;
    n->idx_probes++;
    for (uint64_t i = slot_of(n, key, cid); n->idx[i].at;
         i = (i + 1) & n->idx_mask, n->idx_probes++) {
        if (n->idx[i].key == key && n->idx[i].cid == cid) {
            const int at = (int) n->idx[i].at;
            *v = n->idx[i].v;
            drop_at(n, i);
            return at;
        }
    }
    return MBOX_AT_NONE;
}
