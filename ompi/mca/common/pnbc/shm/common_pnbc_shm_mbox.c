/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The mailbox (see common_pnbc_transport_mbox.c for the protocol): the
 * receiver's block and its rings, writing a message (sender), finding
 * one by its key and moving the oldest aside when a sender is stuck
 * (receiver).  Which rings a communicator uses, and how long they live:
 * common_pnbc_shm_mbox_state.c.
 */

#include "common_pnbc_shm_mbox.h"

#include "ompi/proc/proc.h"
#include "opal/util/output.h"
#include "opal/util/sys_limits.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(offsetof(mbox_header_t, not_a_gen) == offsetof(shm_header_t, gen),
               "a mailbox block must read 0 where a request's block keeps its incarnation");

static inline mbox_msg_t *msg_at(const mbox_ring_t *g, uint64_t u)
{
    return (mbox_msg_t *) (g->units + (u & g->mask) * MBOX_UNIT);
}

static size_t round_line(size_t bytes)
{
    return (bytes + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
}

/* Tier 0: messages below coll_pnbc_nbc_shm_min_bytes; tier 1: up to
 * coll_pnbc_nbc_mailbox_large_bytes.  A ring has room for about as many
 * of the tier's largest messages as its cells parameter says (a power of
 * two of units, the largest at most that room, and room for two of the
 * largest and a page at least: one may have to start past the ring's
 * end); smaller messages take less room, a unit for one of up to 96
 * bytes, and fewer pages. */
static void ring_shape(int tier, uint32_t *nunits, size_t *payload, size_t *ring_size)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    const int cells = (0 == tier) ? p->nbc_mailbox_cells : p->nbc_mailbox_large_cells;
    const int min = p->shm_retag_min_bytes;

    /* (our own floor as our senders read it) */
    *payload = (0 != tier) ? pnbc_mbox_large_payload(pnbc_shm_recv_floor(OMPI_PROC_MY_NAME->vpid))
               : (min > 1) ? (size_t) min - 1 : 0;
    const uint64_t max_units = mbox_units(*payload);
    const uint64_t room = (uint64_t) cells * max_units;
    const uint64_t least = 2 * max_units + MBOX_PAGE_UNITS + 1;
    uint32_t n = 1;
    while (n < least || (n < MBOX_UNITS_MAX && 2 * (uint64_t) n <= room)) {
        n <<= 1;
    }
    *nunits = n;
    *ring_size = MBOX_RING_HEAD + (size_t) n * MBOX_UNIT;
}

/* Map every page of a ring at its first use: a ring's first lap would
 * otherwise take pages the process has not touched, one every few calls.
 * On a VM a first touch costs ~10-20 us (docs/many/first-start.md); one
 * MADV_POPULATE_WRITE for the ring's pages costs a third of touching
 * them (docs/nbc-rings.md).  Without it (Linux < 5.14: EINVAL) each page is
 * touched: the sender writing, each word unchanged (an atomic add of 0),
 * the receiver reading. */
static void ring_touch(const mbox_ring_t *g, bool write)
{
    const size_t bytes = (size_t) (g->mask + 1) * MBOX_UNIT;
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = (uintptr_t) opal_getpagesize();
    const uintptr_t lo = (uintptr_t) g->units & ~(page - 1);
    const uintptr_t hi = ((uintptr_t) g->units + bytes + page - 1) & ~(page - 1);
    if (0 == madvise((void *) lo, hi - lo, MADV_POPULATE_WRITE)) {
        return;
    }
#endif
    for (size_t off = 0; off < bytes; off += MBOX_PAGE_UNITS * MBOX_UNIT) {
        volatile uint64_t *word = (volatile uint64_t *) (g->units + off);
        if (write) {
            (void) __atomic_fetch_add(word, 0, __ATOMIC_RELAXED);
        } else {
            (void) __atomic_load_n(word, __ATOMIC_RELAXED);
        }
    }
}

static inline bool bit_get(const mbox_ring_t *g, uint64_t u)
{
    const uint64_t i = u & g->mask;
    return 0 != (g->bits[i / 64] & (UINT64_C(1) << (i % 64)));
}

static inline void bit_set(mbox_ring_t *g, uint64_t u, bool on)
{
    const uint64_t i = u & g->mask, bit = UINT64_C(1) << (i % 64);
    g->bits[i / 64] = on ? (g->bits[i / 64] | bit) : (g->bits[i / 64] & ~bit);
}

/* Set the bits of units u .. u + n - 1 (not across the ring's end). */
static void bits_fill(mbox_ring_t *g, uint64_t u, uint64_t n)
{
    uint64_t i = u & g->mask;
    while (n > 0) {
        const uint64_t off = i % 64, take = (64 - off < n) ? 64 - off : n;
        g->bits[i / 64] |= ((take == 64) ? ~UINT64_C(0) : ((UINT64_C(1) << take) - 1)) << off;
        i += take;
        n -= take;
    }
}

static void ring_attach(mbox_ring_t *g, char *ring, uint32_t nunits, size_t payload)
{
    g->tail = (volatile uint64_t *) ring;
    g->want = (volatile uint64_t *) (ring + SHM_LINE);
    g->units = ring + MBOX_RING_HEAD;
    g->mask = nunits - 1;
    g->payload = payload;
    g->next = 0;
    g->seen = 0;
}

/* ------------------------------------------------------------------ */
/* The receiver's block                                               */
/* ------------------------------------------------------------------ */

static void own_fall_back(mbox_job_t *j, int tier, shm_region_t *r, const char *why)
{
    j->own_state = MBOX_PML;
    if (NULL != r && OMPI_SUCCESS != pnbc_shm_region_announce_fallback(r)) {
        why = "neither the directory nor a marker file can be written";
    }
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: shm mailbox: nonblocking messages for %s cells "
                    "to this process go through pml (%s)", (0 == tier) ? "small" : "large", why);
    }
}

/* A tier's key in the directories: (MBOX_CID, mbox_tag(tier)). */
shm_region_t *pnbc_mbox_job_region(int tier, bool owner)
{
    const pnbc_channel_t ch = { .comm = &ompi_mpi_comm_world.comm, .tag = mbox_tag(tier) };
    shm_region_t *r = pnbc_shm_region_new(&ch, owner);
    if (NULL != r) {
        r->cid = MBOX_CID;
    }
    return r;
}

/* Place our block for the job's on-node senders (world rank = vpid) and
 * publish it (or the fallback); the in-states point into it. */
void pnbc_mbox_own_build(mbox_job_t *j, int tier)
{
    ompi_communicator_t *comm = &ompi_mpi_comm_world.comm;
    const int me = ompi_comm_rank(comm);
    uint32_t nrings = 0, nunits;
    size_t payload, ring_size;

    for (int p = 0; p < j->nprocs; ++p) {
        nrings += (p != me && pnbc_shm_peer_local(comm, p));
    }
    ring_shape(tier, &nunits, &payload, &ring_size);
    const size_t table_end = round_line(sizeof(mbox_header_t) + nrings * sizeof(mbox_entry_t));
    const size_t size = table_end + nrings * ring_size;
    shm_region_t *r = pnbc_mbox_job_region(tier, true);

    j->own = r;
    if (NULL == r) {
        own_fall_back(j, tier, NULL, "out of memory");
        return;
    }
    switch (pnbc_shm_pool_reserve(r, size)) {
    case PNBC_SHM_POOL_BLOCK:
        break;
    case PNBC_SHM_POOL_FULL:
        own_fall_back(j, tier, r, "the shm pool is full");
        return;
    default:                    /* no pool: senders see that */
        own_fall_back(j, tier, NULL, "no shm pool");
        return;
    }
    /* a block from a new segment is zero and its pages untouched until a
     * message uses them; a reused one: its counters start at zero */
    if (r->reused) {
        memset(r->base, 0, table_end);
    }
    mbox_header_t *h = r->base;
    mbox_entry_t *table = (mbox_entry_t *) (h + 1);
    uint32_t k = 0;
    for (int p = 0; p < j->nprocs; ++p) {
        if (p == me || !pnbc_shm_peer_local(comm, p)) {
            continue;
        }
        mbox_in_t *n = calloc(1, sizeof(*n));
        uint64_t *bits = calloc((nunits + 63) / 64, sizeof(*bits));
        if (NULL == n || NULL == bits) {
            free(n);
            free(bits);
            pnbc_shm_pool_release(r);
            r->base = NULL;
            own_fall_back(j, tier, r, "out of memory");
            return;
        }
        table[k].sender = p;
        table[k].offset = table_end + k * ring_size;
        ring_attach(&n->ring, (char *) r->base + table[k].offset, nunits, payload);
        n->ring.bits = bits;
        if (r->reused) {
            /* a sender takes a new ring's units for zeros (see write) */
            memset((char *) r->base + table[k].offset, 0, ring_size);
        } else {
            ring_touch(&n->ring, false);
        }
        j->in[p] = n;
        k++;
    }
    h->nrings = nrings;
    h->nunits = nunits;
    h->unit = MBOX_UNIT;
    h->payload = payload;
    h->magic = MBOX_MAGIC;
    if (!pnbc_shm_pool_publish(r, false)) {     /* orders the writes above */
        pnbc_shm_pool_release(r);
        r->base = NULL;
        own_fall_back(j, tier, r, "the pool's directory is full");
        return;
    }
    j->own_state = MBOX_READY;
    if (mca_common_pnbc_params.verbose >= 2) {
        opal_output(0, "coll:pnbc: shm mailbox: tier %d rank %d: %u rings of %u units "
                    "(messages of up to %zu bytes)", tier, me, nrings, nunits, payload);
    }
}

/* ------------------------------------------------------------------ */
/* Sender                                                             */
/* ------------------------------------------------------------------ */

/* Our ring in the receiver's block (me: our vpid); false if the block
 * disagrees. */
static bool out_attach(mbox_out_t *o, int me)
{
    const shm_region_t *r = o->region;
    mbox_header_t *h = r->base;
    const mbox_entry_t *table = (const mbox_entry_t *) (h + 1);

    if (h->magic != MBOX_MAGIC || MBOX_UNIT != h->unit || 0 == h->nunits ||
        0 != (h->nunits & (h->nunits - 1)) ||
        2 * mbox_units(h->payload) + MBOX_PAGE_UNITS >= h->nunits ||
        sizeof(*h) + h->nrings * sizeof(*table) > r->size) {
        return false;
    }
    const size_t ring_size = MBOX_RING_HEAD + (size_t) h->nunits * MBOX_UNIT;
    for (uint32_t k = 0; k < h->nrings; ++k) {
        if (table[k].sender == me && table[k].offset + ring_size <= r->size) {
            o->ring.bits = calloc((h->nunits + 63) / 64, sizeof(*o->ring.bits));
            if (NULL == o->ring.bits) {
                return false;
            }
            ring_attach(&o->ring, (char *) r->base + table[k].offset, h->nunits, h->payload);
            ring_touch(&o->ring, true);
            o->hdr = h;
            pnbc_fill_init(&o->fill, false);
            return true;
        }
    }
    return false;
}

int pnbc_mbox_out_state(mbox_out_t *o, const mbox_comm_t *mc, int me, int peer)
{
    if (OPAL_LIKELY(MBOX_UNKNOWN != o->state)) {
        return o->state;
    }
    switch (pnbc_shm_pool_find(o->region, &o->region->peer)) {
    case PNBC_SHM_POOL_BLOCK:
        o->state = out_attach(o, (int) OMPI_PROC_MY_NAME->vpid) ? MBOX_READY : MBOX_BROKEN;
        if (MBOX_BROKEN == o->state) {
            opal_output(0, "coll:pnbc: shm mailbox: cid %u: rank %d's block has no ring for "
                        "rank %d: are the coll_pnbc_nbc_* parameters equal everywhere?",
                        (unsigned) mc->cid, peer, me);
        }
        break;
    case PNBC_SHM_POOL_NONE:
        o->state = MBOX_PML;
        break;
    case PNBC_SHM_POOL_MARKER:
        if (pnbc_shm_marker_exists(o->region)) {
            o->state = MBOX_PML;
        }
        break;
    default:
        break;                  /* the receiver has not built it yet */
    }
    return o->state;
}

bool pnbc_mbox_write(mbox_out_t *o, uint64_t key, uint32_t cid, const char *flat,
                     opal_convertor_t *conv, size_t bytes, int *err)
{
    mbox_ring_t *g = &o->ring;
    const uint64_t u = g->next;

    if (OPAL_UNLIKELY(bytes > g->payload)) {
        *err = MPI_ERR_INTERN;  /* the parameters differ between us */
        return true;
    }
    /* A message of more than a unit takes whole pages from a page's
     * start (mbox_units(): packed, rooted 4 KiB calls measured slower,
     * docs/nbc-rings.md), and none wraps: a skip header passes the units
     * in between. */
    const uint64_t k = mbox_units(bytes);
    uint64_t skip = 0;
    if (k > 1) {
        const uint64_t pos = u & g->mask;
        skip = (MBOX_PAGE_UNITS - pos % MBOX_PAGE_UNITS) % MBOX_PAGE_UNITS;
        if (pos + skip + k > g->mask + 1) {
            skip = g->mask + 1 - pos;
        }
    }
    const uint64_t at = u + skip, end = at + k;
    /* units u .. end (where the receiver looks next) must be free: the
     * receiver's tail past end - nunits (read only when what we saw last
     * does not tell) */
    if (end > g->seen + g->mask) {
        g->seen = __atomic_load_n(g->tail, __ATOMIC_ACQUIRE);
        if (end > g->seen + g->mask) {
            /* The receiver usually just lags: only after a while say
             * what room we wait for (what every message tried needs), on
             * the ring's want line, and wake its progress (the header's) */
            if (0 == (++o->stuck & 63)) {
                if (end - g->mask > o->want) {
                    o->want = end - g->mask;
                    __atomic_store_n(g->want, o->want, __ATOMIC_RELAXED);
                }
                if (0 == o->hdr->wanted) {
                    __atomic_store_n(&o->hdr->wanted, 1, __ATOMIC_RELAXED);
                }
            }
            return false;
        }
    }
    o->stuck = 0;
    mbox_msg_t *c = msg_at(g, at);
    c->key = key;
    c->cid = cid;
    c->len = bytes;
    if (NULL != flat) {
        pnbc_fill(&o->fill, c->data, flat, bytes);
    } else if (bytes > 0 && pnbc_convert_part(conv, c->data, bytes, 0, true) != bytes) {
        *err = MPI_ERR_TRUNCATE;
    }
    /* Where the receiver looks next must not read as written: a header
     * of an older lap (or zeros) cannot, the middle of an older message
     * can, so that is cleared; the bits say which units hold a middle. */
    bit_set(g, at, false);
    if (k > 1) {
        bits_fill(g, at + 1, k - 1);
    }
    if (bit_get(g, end)) {
        msg_at(g, end)->full = 0;
        bit_set(g, end, false);
    }
    __atomic_store_n(&c->full, at + 1, __ATOMIC_RELEASE);
    if (0 != skip) {
        mbox_msg_t *s = msg_at(g, u);
        s->key = MBOX_SKIP;
        s->len = skip;
        bit_set(g, u, false);
        __atomic_store_n(&s->full, u + 1, __ATOMIC_RELEASE);
    }
    g->next = end;
    if (end <= g->seen + g->mask) {
        shm_prefetch_write(msg_at(g, end));     /* see shm_prefetch_write() */
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Receiver                                                           */
/* ------------------------------------------------------------------ */

/* Move the tail to t and over the messages taken from there on (a skip
 * header there is passed by the next search, or by a spill). */
static void ring_advance(mbox_ring_t *g, uint64_t t)
{
    while (bit_get(g, t)) {
        bit_set(g, t, false);
        t += mbox_units(msg_at(g, t)->len);
    }
    if (t != g->next) {
        g->next = t;
        __atomic_store_n(g->tail, t, __ATOMIC_RELEASE);
    }
}

/* Does the sender wait for room the tail has not given yet? */
static inline bool sender_waits(const mbox_ring_t *g)
{
    return __atomic_load_n(g->want, __ATOMIC_RELAXED) > g->next;
}

/* The units from a written header to the next one. */
static inline uint64_t msg_span(const mbox_msg_t *c)
{
    return (MBOX_SKIP == c->key) ? c->len : mbox_units(c->len);
}

/* Copy the oldest message aside (the spill list keeps arrival order). */
static void ring_spill_oldest(mbox_in_t *n)
{
    mbox_ring_t *g = &n->ring;
    const mbox_msg_t *c = msg_at(g, g->next);
    if (__atomic_load_n(&c->full, __ATOMIC_ACQUIRE) != g->next + 1) {
        return;
    }
    if (MBOX_SKIP != c->key) {
        if (NULL == n->idx) {   /* found again through the index, not by walking */
            (void) pnbc_mbox_index_want(n, MBOX_INDEX_MIN);
        }
        mbox_spill_t *s = malloc(sizeof(*s) + c->len);
        if (NULL == s) {
            return;             /* try again at the next poll */
        }
        s->key = c->key;
        s->cid = c->cid;
        s->len = c->len;
        memcpy(s->data, c->data, c->len);
        s->next = NULL;
        s->prev = n->spill_last;
        *((NULL != s->prev) ? &s->prev->next : &n->spill) = s;
        n->spill_last = s;
        s->indexed = NULL != n->idx && pnbc_mbox_index_note(n, s->key, (uint32_t) s->cid,
                                                             MBOX_AT_SPILL, (uintptr_t) s);
        n->spill_unindexed += s->indexed ? 0 : 1;
        n->spilled++;
    }
    ring_advance(g, g->next + msg_span(c));
}

/* Deliver a message moved aside and forget it (`noted`: its index entry,
 * if it has one, is still there). */
static void spill_take(mbox_in_t *n, mbox_spill_t *s, bool noted,
                       void (*deliver)(void *arg, const char *data, uint64_t len), void *arg)
{
    *((NULL != s->prev) ? &s->prev->next : &n->spill) = s->next;
    *((NULL != s->next) ? &s->next->prev : &n->spill_last) = s->prev;
    if (!s->indexed) {
        n->spill_unindexed--;
    } else if (noted) {
        uint64_t v;
        (void) pnbc_mbox_index_take(n, s->key, (uint32_t) s->cid, &v);
    }
    deliver(arg, s->data, s->len);
    free(s);
}

/* Deliver the untaken message at unit u and take it. */
static void take_at(mbox_ring_t *g, uint64_t u, const mbox_msg_t *c,
                    void (*deliver)(void *arg, const char *data, uint64_t len), void *arg)
{
    deliver(arg, c->data, c->len);
    if (u == g->next) {
        ring_advance(g, u + mbox_units(c->len));
    } else {
        bit_set(g, u, true);
    }
}

bool pnbc_mbox_take(mbox_in_t *n, uint64_t key, uint32_t cid,
                    void (*deliver)(void *arg, const char *data, uint64_t len), void *arg)
{
    mbox_ring_t *g = &n->ring;
    /* The common case first: nothing moved aside, no index, and ours the
     * oldest message (a key is never MBOX_SKIP) */
    const mbox_msg_t *c = msg_at(g, g->next);
    if (OPAL_LIKELY(0 == n->spill_unindexed && NULL == n->idx) &&
        __atomic_load_n(&c->full, __ATOMIC_ACQUIRE) == g->next + 1 && c->key == key &&
        c->cid == cid) {
        take_at(g, g->next, c, deliver, arg);
        return true;
    }
    /* moved aside without an entry in the index (or before it): search */
    for (mbox_spill_t *s = (n->spill_unindexed > 0) ? n->spill : NULL; NULL != s; s = s->next) {
        if (s->key == key && s->cid == cid) {
            spill_take(n, s, true, deliver, arg);
            return true;
        }
        n->spill_walked++;
    }
    for (c = msg_at(g, g->next);
         __atomic_load_n(&c->full, __ATOMIC_ACQUIRE) == g->next + 1 && MBOX_SKIP == c->key;
         c = msg_at(g, g->next)) {
        ring_advance(g, g->next + c->len);  /* the oldest: the tail passes it */
    }
    uint64_t u = g->next;
    if (NULL != n->idx) {
        uint64_t at;
        const int where = pnbc_mbox_index_take(n, key, cid, &at);
        if (MBOX_AT_SPILL == where) {
            spill_take(n, (mbox_spill_t *) (uintptr_t) at, false, deliver, arg);
            return true;
        }
        if (MBOX_AT_UNIT == where && at >= g->next) {
            const mbox_msg_t *c = msg_at(g, at);
            if (__atomic_load_n(&c->full, __ATOMIC_ACQUIRE) == at + 1 && c->key == key &&
                c->cid == cid && !bit_get(g, at)) {
                take_at(g, at, c, deliver, arg);
                return true;
            }
        }
        u = (n->scanned > u) ? n->scanned : u;
    }
    uint64_t unindexed = UINT64_MAX;    /* the first message the index had no room for */
    unsigned passed = 0;
    while (u - g->next <= g->mask) {
        const mbox_msg_t *c = msg_at(g, u);
        if (__atomic_load_n(&c->full, __ATOMIC_ACQUIRE) != u + 1) {
            break;              /* written in order: nothing after it */
        }
        if (MBOX_SKIP != c->key && !bit_get(g, u)) {
            if (c->key == key && c->cid == cid) {
                if (NULL != n->idx) {   /* looked at up to here (ours is taken) */
                    n->scanned = (unindexed < u) ? unindexed : u + msg_span(c);
                }
                take_at(g, u, c, deliver, arg);
                return true;
            }
            passed++;
            if (NULL != n->idx && UINT64_MAX == unindexed &&
                !pnbc_mbox_index_note(n, c->key, (uint32_t) c->cid, MBOX_AT_UNIT, u)) {
                unindexed = u;
            }
        }
        u += msg_span(c);
    }
    if (NULL != n->idx) {
        n->scanned = (unindexed < u) ? unindexed : u;
    } else {
        (void) pnbc_mbox_index_want(n, passed);  /* from the next search on */
    }
    /* A waiting sender gets room if the oldest message is one the search
     * passed (or the index holds): not ours.  One written after the
     * search looked may be ours (a preempted search, a sender that filled
     * the ring meanwhile): the next search finds it. */
    if (u != g->next && sender_waits(g)) {
        ring_spill_oldest(n);
    }
    return false;
}

void pnbc_mbox_progress(void)
{
    /* a stuck sender is rare and can wait: look every 64th pass, so that
     * progress costs an increment otherwise (of a plain counter: the
     * caller, pnbc_transport_progress(), holds the engine lock) */
    static unsigned passes;
    if (0 != (++passes & 63) || NULL == __atomic_load_n(&pnbc_mbox_comms, __ATOMIC_RELAXED) ||
        !pnbc_trylock(&pnbc_mbox_lock)) {
        return;
    }
    for (int tier = 0; tier < 2; ++tier) {
        const mbox_job_t *j = &pnbc_mbox_jobs[tier];
        mbox_header_t *h = (MBOX_READY == j->own_state && NULL != j->own) ? j->own->base : NULL;
        if (NULL == h || 0 == __atomic_load_n(&h->wanted, __ATOMIC_ACQUIRE)) {
            continue;
        }
        /* a sender waits; its receiver may be taking its messages (then
         * the ring moves on) or busy with calls that need none of them:
         * a ring that has not moved since the last pass is stuck */
        __atomic_store_n(&h->wanted, 0, __ATOMIC_RELAXED);
        for (int v = 0; v < j->nprocs; ++v) {
            mbox_in_t *n = j->in[v];
            if (NULL == n || !sender_waits(&n->ring)) {
                continue;
            }
            if (n->stall == n->ring.next + 1) {
                ring_spill_oldest(n);
            } else {
                n->stall = n->ring.next + 1;
                __atomic_store_n(&h->wanted, 1, __ATOMIC_RELAXED);  /* look again */
            }
        }
    }
    pnbc_unlock(&pnbc_mbox_lock);
}
