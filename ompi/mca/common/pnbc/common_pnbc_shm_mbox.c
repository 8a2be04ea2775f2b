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

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(mbox_header_t, not_a_gen) == offsetof(shm_header_t, gen),
               "a mailbox block must read 0 where a request's block keeps its incarnation");

static inline mbox_cell_t *cell_at(const mbox_ring_t *g, uint64_t w)
{
    return (mbox_cell_t *) (g->cells + (w & g->mask) * g->cell_size);
}

static size_t round_line(size_t bytes)
{
    return (bytes + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
}

/* Tier 0: cells for the messages below coll_pnbc_nbc_shm_min_bytes;
 * tier 1: a few cells of coll_pnbc_nbc_mailbox_large_bytes. */
static void ring_shape(int tier, uint32_t *ncells, size_t *payload, size_t *cell_size,
                       size_t *ring_size)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    uint32_t n = 1;
    const int want = (0 == tier) ? p->nbc_mailbox_cells : p->nbc_mailbox_large_cells;
    while (n < (uint32_t) want && n < MBOX_CELLS_MAX) {
        n <<= 1;
    }
    const int min = p->shm_retag_min_bytes;
    *ncells = n;
    /* (our own floor as our senders read it) */
    *payload = (0 != tier) ? pnbc_mbox_large_payload(pnbc_shm_recv_floor(OMPI_PROC_MY_NAME->vpid))
               : (min > 1) ? (size_t) min - 1 : 0;
    *cell_size = round_line(sizeof(mbox_cell_t) + *payload);
    *ring_size = SHM_LINE + n * *cell_size;
}

/* Touch the first line of every cell of a ring, at its first use: a
 * ring's first ncells calls would otherwise each take a page the process
 * has not touched (a cell's payload spans pages; on a VM a first touch
 * costs ~10 us, docs/many/first-start.md).  The sender writes cells, so
 * it touches them writing, each unchanged (an atomic add of 0; the
 * receiver may be reading `full`); the receiver reads. */
static void ring_touch(const mbox_ring_t *g, bool write)
{
    for (uint64_t w = 0; w <= g->mask; ++w) {
        mbox_cell_t *c = cell_at(g, w);
        if (write) {
            (void) __atomic_fetch_add(&c->full, 0, __ATOMIC_RELAXED);
        } else {
            (void) __atomic_load_n(&c->full, __ATOMIC_RELAXED);
        }
    }
}

static void ring_attach(mbox_ring_t *g, char *ring, uint32_t ncells, size_t cell_size,
                        size_t payload)
{
    g->tail = (volatile uint64_t *) ring;
    g->cells = ring + SHM_LINE;
    g->mask = ncells - 1;
    g->cell_size = cell_size;
    g->payload = payload;
    g->next = 0;
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
    uint32_t nrings = 0, ncells;
    size_t payload, cell_size, ring_size;

    for (int p = 0; p < j->nprocs; ++p) {
        nrings += (p != me && pnbc_shm_peer_local(comm, p));
    }
    ring_shape(tier, &ncells, &payload, &cell_size, &ring_size);
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
        uint64_t *done = calloc(ncells, sizeof(*done));
        if (NULL == n || NULL == done) {
            free(n);
            free(done);
            pnbc_shm_pool_release(r);
            r->base = NULL;
            own_fall_back(j, tier, r, "out of memory");
            return;
        }
        table[k].sender = p;
        table[k].offset = table_end + k * ring_size;
        ring_attach(&n->ring, (char *) r->base + table[k].offset, ncells, cell_size, payload);
        n->ring.done = done;
        if (r->reused) {
            *n->ring.tail = 0;
            for (uint64_t w = 0; w < ncells; ++w) {
                cell_at(&n->ring, w)->full = 0;
            }
        } else {
            ring_touch(&n->ring, false);
        }
        j->in[p] = n;
        k++;
    }
    h->nrings = nrings;
    h->ncells = ncells;
    h->cell_size = cell_size;
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
        opal_output(0, "coll:pnbc: shm mailbox: tier %d rank %d: %u rings of %u cells of "
                    "%zu bytes", tier, me, nrings, ncells, payload);
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

    if (h->magic != MBOX_MAGIC || 0 == h->ncells || 0 != (h->ncells & (h->ncells - 1)) ||
        sizeof(*h) + h->nrings * sizeof(*table) > r->size) {
        return false;
    }
    const size_t ring_size = SHM_LINE + h->ncells * h->cell_size;
    for (uint32_t k = 0; k < h->nrings; ++k) {
        if (table[k].sender == me && table[k].offset + ring_size <= r->size) {
            ring_attach(&o->ring, (char *) r->base + table[k].offset, h->ncells,
                        h->cell_size, h->payload);
            ring_touch(&o->ring, true);
            o->hdr = h;
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
    const uint64_t w = g->next;

    /* cell w last held w - ncells: taken once the receiver's tail passed
     * it (read only when what we saw last does not tell) */
    if (w > g->seen + g->mask) {
        g->seen = __atomic_load_n(g->tail, __ATOMIC_ACQUIRE);
        if (w > g->seen + g->mask) {
            /* the receiver usually just lags: wake its progress only
             * after a while (it writes the header's line) */
            if (0 == (++o->stuck & 63) && 0 == o->hdr->wanted) {
                __atomic_store_n(&o->hdr->wanted, 1, __ATOMIC_RELAXED);
            }
            return false;
        }
    }
    o->stuck = 0;
    if (OPAL_UNLIKELY(bytes > g->payload)) {
        *err = MPI_ERR_INTERN;  /* the parameters differ between us */
        return true;
    }
    mbox_cell_t *c = cell_at(g, w);
    c->key = key;
    c->cid = cid;
    c->len = bytes;
    if (NULL != flat) {
        pnbc_copy(c->data, flat, bytes);
    } else if (bytes > 0 && pnbc_convert_part(conv, c->data, bytes, 0, true) != bytes) {
        *err = MPI_ERR_TRUNCATE;
    }
    __atomic_store_n(&c->full, w + 1, __ATOMIC_RELEASE);
    g->next = w + 1;
    return true;
}

/* ------------------------------------------------------------------ */
/* Receiver                                                           */
/* ------------------------------------------------------------------ */

/* Mark cell w taken; move the tail over the cells taken. */
static void ring_take(mbox_ring_t *g, uint64_t w)
{
    g->done[w & g->mask] = w + 1;
    if (w != g->next) {
        return;
    }
    while (g->done[g->next & g->mask] == g->next + 1) {
        g->next++;
    }
    __atomic_store_n(g->tail, g->next, __ATOMIC_RELEASE);
}

/* Every cell written and none taken since the oldest: the sender is
 * stuck.  Copy the oldest aside (the spill list keeps arrival order). */
static bool ring_full(const mbox_ring_t *g)
{
    const mbox_cell_t *last = cell_at(g, g->next + g->mask);
    return __atomic_load_n(&last->full, __ATOMIC_ACQUIRE) == g->next + g->mask + 1;
}

static void ring_spill_oldest(mbox_in_t *n)
{
    mbox_ring_t *g = &n->ring;
    const mbox_cell_t *c = cell_at(g, g->next);
    mbox_spill_t *s = malloc(sizeof(*s) + c->len);
    if (NULL == s) {
        return;                 /* try again at the next poll */
    }
    s->next = NULL;
    s->key = c->key;
    s->cid = c->cid;
    s->len = c->len;
    memcpy(s->data, c->data, c->len);
    mbox_spill_t **end = &n->spill;
    while (NULL != *end) {
        end = &(*end)->next;
    }
    *end = s;
    n->spilled++;
    ring_take(g, g->next);
}

bool pnbc_mbox_take(mbox_in_t *n, uint64_t key, uint32_t cid,
                    void (*deliver)(void *arg, const char *data, uint64_t len), void *arg)
{
    for (mbox_spill_t **p = &n->spill; NULL != *p; p = &(*p)->next) {
        if ((*p)->key == key && (*p)->cid == cid) {
            mbox_spill_t *s = *p;
            deliver(arg, s->data, s->len);
            *p = s->next;
            free(s);
            return true;
        }
    }
    mbox_ring_t *g = &n->ring;
    for (uint64_t w = g->next; w <= g->next + g->mask; ++w) {
        const mbox_cell_t *c = cell_at(g, w);
        if (__atomic_load_n(&c->full, __ATOMIC_ACQUIRE) != w + 1) {
            return false;       /* written in order: nothing after it */
        }
        if (c->key == key && c->cid == cid && g->done[w & g->mask] != w + 1) {
            deliver(arg, c->data, c->len);
            ring_take(g, w);
            return true;
        }
    }
    ring_spill_oldest(n);       /* full, and ours is not among them */
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
            if (NULL == n || !ring_full(&n->ring)) {
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
