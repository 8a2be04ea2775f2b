/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's pool (see common_pnbc_transport_shm.c):
 * each receiving process keeps ONE pool for all its requests, so creating
 * a request costs no file, no mapping and no file descriptor.
 *
 *   <dir>/pool.dir    the directory: a header, then an open-addressing
 *                     hash table (linear probing) of entries
 *                     (cid, tag) -> (segment, offset, size) or FALLBACK
 *   <dir>/pool.<k>    segment k, coll_pnbc_shm_pool_step_bytes (or one
 *                     block, if larger), created when the earlier ones
 *                     are full; a request's block (its slot table and
 *                     slots) lies in one segment
 *
 * The owner alone writes the directory (under pnbc_shm_pool_lock); senders
 * read it without a lock: every entry carries a sequence number, odd
 * while the owner rewrites it, and a reader keeps what it read only if
 * the number was even and unchanged around its reads.  Removal shifts
 * the entries that follow back (no tombstones, so a table churned by
 * millions of init/free never fills with them); a reader racing with a
 * shift may miss a live key once, and simply looks again at its next
 * test, as it does while the receiver has not reached its *_init.
 *
 * The pool is bounded: a communicator takes at most
 * coll_pnbc_shm_pool_comm_bytes of a process's pool, and the job's pools
 * on a node together at most coll_pnbc_shm_pool_node_bytes (split evenly
 * between the job's processes there).  A request whose block does not fit
 * is published as FALLBACK and both sides carry its shm messages over
 * pml.  Senders map the segments of a peer's pool once, when a block
 * first points into them, and keep them until finalize: mappings grow
 * with the pool's size, never with the number of requests.
 *
 * Failures.  If the directory itself cannot be created (e.g. no space
 * left in /dev/shm), an EMPTY pool.dir says "no pool here" and every
 * sender to this process falls back; if the directory is full, the
 * request's fallback marker file (recv_fall_back() in
 * common_pnbc_shm_file.c) says it for that request, and the directory's
 * header tells senders to look for markers.
 */

#include "common_pnbc_shm_pool.h"

#include "ompi/proc/proc.h"
#include "opal/util/output.h"
#include "opal/util/sys_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

pnbc_lock_t pnbc_shm_pool_lock = PNBC_LOCK_INITIALIZER;
static pool_t *own_pool;
static bool own_pool_tried;

/* ------------------------------------------------------------------ */
/* Size classes                                                       */
/* ------------------------------------------------------------------ */

/* Size classes: 128-byte steps up to 8 KiB, then four per power of two. */
static unsigned size_class(size_t bytes, size_t *rounded)
{
    if (bytes <= 8192) {
        const size_t c = (bytes + SHM_LINE - 1) / SHM_LINE;
        *rounded = c * SHM_LINE;
        return (unsigned) c - 1;
    }
    const unsigned e = 63 - (unsigned) __builtin_clzll((unsigned long long) (bytes - 1));
    const size_t step = (size_t) 1 << (e - 2);
    const size_t r = (bytes + step - 1) & ~(step - 1);
    *rounded = r;
    const unsigned c = 64 + (e - 13) * 4 + (unsigned) (r / step - 5);
    return (c < POOL_NCLASSES) ? c : POOL_NCLASSES - 1;
}

/* The bytes of a block of class c (the inverse of size_class()). */
static size_t class_bytes(unsigned c)
{
    if (c < 64) {
        return (size_t) (c + 1) * SHM_LINE;
    }
    const unsigned e = 13 + (c - 64) / 4;
    return (size_t) (5 + (c - 64) % 4) << (e - 2);
}

/* ------------------------------------------------------------------ */
/* The owner's pool                                                   */
/* ------------------------------------------------------------------ */

static size_t pool_process_limit(void)
{
    const size_t node = (size_t) mca_common_pnbc_params.shm_pool_node_bytes;
    const size_t procs = 1 + (size_t) opal_process_info.num_local_peers;
    return node / procs;
}

/* Caller holds pnbc_shm_pool_lock.  NULL: no pool (tried once). */
static pool_t *own_pool_get(void)
{
    if (own_pool_tried) {
        return own_pool;
    }
    own_pool_tried = true;
    const char *dir = pnbc_shm_own_dir_get();
    char *path = (NULL == dir) ? NULL : pnbc_shm_pool_path(dir, "dir", 0);
    pool_t *p = (NULL == path) ? NULL : calloc(1, sizeof(*p));
    if (NULL == p) {
        free(path);
        return NULL;
    }
    uint64_t cap = 64;
    while (cap < (uint64_t) mca_common_pnbc_params.shm_pool_entries && cap < (UINT64_C(1) << 30)) {
        cap <<= 1;
    }
    const size_t bells = sizeof(pool_dir_header_t);
    const uint64_t nbells = (uint64_t) ompi_process_info.num_procs;
    const size_t table = (bells + nbells * sizeof(pool_bells_t) + SHM_LINE - 1) &
                         ~(size_t) (SHM_LINE - 1);
    p->dir_bytes = table + cap * sizeof(pool_dir_entry_t);
    void *base = pnbc_shm_pool_file_create(path, p->dir_bytes, true);
    if (NULL == base) {
        const int why = errno;
        /* Tell the senders: an empty directory.  If even that fails they
         * would wait forever; nothing more can be done from here. */
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            close(fd);
        }
        if (mca_common_pnbc_params.verbose >= 1) {
            opal_output(0, "coll:pnbc: shm pool not created (%s): every message to this "
                        "process goes through pml", strerror(why));
        }
        free(p);
        free(path);
        return NULL;
    }
    free(path);
    p->hdr = base;
    p->dir = (pool_dir_entry_t *) ((char *) base + table);
    p->mask = cap - 1;
    p->hdr->capacity = cap;
    p->hdr->bells = bells;
    p->hdr->nbells = nbells;
    p->hdr->table = table;
    p->bells = (pool_bells_t *) ((char *) base + bells);
    p->nbells = nbells;
    __atomic_store_n(&p->hdr->magic, POOL_MAGIC, __ATOMIC_RELEASE);
    own_pool = p;
    return p;
}

static pool_comm_use_t *comm_use(pool_t *p, uint32_t cid, bool create)
{
    for (pool_comm_use_t *u = p->comms; NULL != u; u = u->next) {
        if (u->cid == cid) {
            return u;
        }
    }
    pool_comm_use_t *u = create ? calloc(1, sizeof(*u)) : NULL;
    if (NULL != u) {
        u->cid = cid;
        u->next = p->comms;
        p->comms = u;
    }
    return u;
}

/* Segments double from 256 KiB up to the step: a process with a few
 * requests does not clear megabytes at its first init. */
static size_t next_seg_bytes(const pool_t *p)
{
    size_t step = (size_t) mca_common_pnbc_params.shm_pool_step_bytes;
    if (p->nsegs < 16 && ((size_t) 256 << (10 + p->nsegs)) < step) {
        step = (size_t) 256 << (10 + p->nsegs);
    }
    return step;
}

/* A new segment of `size` bytes (the process's limit is the caller's). */
static bool pool_seg_add(pool_t *p, size_t size)
{
    if (p->nsegs >= POOL_MAX_SEGS) {
        return false;
    }
    char *path = pnbc_shm_pool_path(pnbc_shm_own_dir_get(), "", p->nsegs);
    void *base = (NULL == path) ? NULL : pnbc_shm_pool_file_create(path, size, false);
    free(path);
    if (NULL == base) {
        return false;
    }
    p->segs[p->nsegs++] = (pool_seg_t) { base, size, 0, 0 };
    return true;
}

/* A block of `size` bytes (zeroed) for communicator cid, or false. */
static bool pool_alloc(pool_t *p, uint32_t cid, size_t size, uint32_t *seg, uint64_t *offset,
                       size_t *rounded)
{
    const unsigned c = size_class(size, rounded);
    const size_t r = *rounded;
    pool_comm_use_t *u = comm_use(p, cid, true);

    if (NULL == u || u->bytes + r > (size_t) mca_common_pnbc_params.shm_pool_comm_bytes) {
        return false;
    }
    /* a freed block of the same class, else the current segment, else a
     * new segment, else a freed block of a larger class */
    pool_free_t *f = p->free[c];
    if (NULL == f) {
        pool_seg_t *last = (p->nsegs > 0) ? &p->segs[p->nsegs - 1] : NULL;
        if (NULL != last && last->used + r <= last->size) {
            *seg = p->nsegs - 1;
            *offset = last->used;
            last->used += r;
            goto found;
        }
        size_t step = next_seg_bytes(p);
        step = (step < r) ? r : step;
        size_t mapped = 0;
        for (uint32_t k = 0; k < p->nsegs; ++k) {
            mapped += p->segs[k].size;
        }
        if (mapped + step <= pool_process_limit() && pool_seg_add(p, step)) {
            p->segs[p->nsegs - 1].used = r;
            *seg = p->nsegs - 1;
            *offset = 0;
            goto found;
        }
        for (unsigned k = c + 1; k < POOL_NCLASSES && NULL == f; ++k) {
            if (NULL != (f = p->free[k])) {
                p->free[k] = f->next;
                *rounded = class_bytes(k);
            }
        }
        if (NULL == f) {
            return false;
        }
    } else {
        p->free[c] = f->next;
    }
    *seg = f->seg;
    *offset = f->offset;
    free(f);
    *rounded |= 1;      /* reused: see pnbc_shm_pool_reserve() */
found:
    u->bytes += *rounded & ~(size_t) 1;
    p->bytes += *rounded & ~(size_t) 1;
    return true;
}

/* ------------------------------------------------------------------ */
/* The directory                                                      */
/* ------------------------------------------------------------------ */

/* Robin Hood linear probing: an entry never lies further from its home
 * slot than the entry before it allows, so an insert moves richer entries
 * on, and a removal shifts back only the entries that are away from home
 * -- it stops at the first one at home (or an empty slot), instead of
 * scanning the whole cluster (a communicator's requests sit in one run of
 * consecutive slots: see pool_key_hash()).  Readers racing with a move
 * may miss an entry once; they look again at their next test. */
static uint64_t dir_distance(const pool_t *p, const pool_dir_entry_t *e, uint64_t at)
{
    return (at - pool_key_hash(e->cid, e->tag)) & p->mask;
}

/* Room for one more entry (counted in nentries by whoever takes it)? */
static bool dir_room(const pool_t *p)
{
    return 8 * (p->nentries + 1) <= 7 * (p->mask + 1);
}

static void dir_insert(pool_t *p, const pool_dir_entry_t *v)
{
    pool_dir_entry_t carry = *v;
    uint64_t dist = 0;
    for (uint64_t i = pool_key_hash(v->cid, v->tag) & p->mask;; i = (i + 1) & p->mask, ++dist) {
        pool_dir_entry_t *e = &p->dir[i];
        if (DIR_EMPTY == e->state) {
            pool_entry_write(e, &carry);
            return;
        }
        const uint64_t theirs = dir_distance(p, e, i);
        if (theirs < dist) {            /* take its place, carry it on */
            pool_dir_entry_t evicted = *(pool_dir_entry_t *) e;
            pool_entry_write(e, &carry);
            carry = evicted;
            dist = theirs;
        }
    }
}

static void dir_remove(pool_t *p, uint32_t cid, int32_t tag)
{
    uint64_t i = pool_key_hash(cid, tag) & p->mask;
    for (;; i = (i + 1) & p->mask) {
        pool_dir_entry_t *e = &p->dir[i];
        if (DIR_EMPTY == e->state) {
            return;                     /* not there: cannot happen */
        }
        if (e->cid == cid && e->tag == tag) {
            break;
        }
    }
    const pool_dir_entry_t empty = { 0 };
    for (uint64_t j = (i + 1) & p->mask;; j = (j + 1) & p->mask) {
        pool_dir_entry_t *e = &p->dir[j];
        if (DIR_EMPTY == e->state || 0 == dir_distance(p, e, j)) {
            break;
        }
        pool_dir_entry_t v = *(pool_dir_entry_t *) e;
        pool_entry_write(&p->dir[i], &v);
        i = j;
    }
    pool_entry_write(&p->dir[i], &empty);
}

/* ------------------------------------------------------------------ */
/* Owner: publish a request's block, or its fallback                  */
/* ------------------------------------------------------------------ */

int pnbc_shm_pool_reserve(shm_region_t *r, size_t size)
{
    int rc = PNBC_SHM_POOL_NONE;

    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool_get();
    if (NULL != p) {
        uint32_t seg = 0;
        uint64_t offset = 0;
        size_t rounded = 0;
        if (pool_alloc(p, r->cid, size, &seg, &offset, &rounded)) {
            r->base = p->segs[seg].base + offset;
            r->size = size;
            r->seg = seg;
            r->offset = offset;
            /* a block from a new segment is zero; a reused one holds its
             * last user's counters (pnbc_shm_recv_block_build() clears
             * what must start at zero, not the data) */
            r->reused = rounded & 1;
            r->reserved = rounded & ~(size_t) 1;
            rc = PNBC_SHM_POOL_BLOCK;
        } else {
            rc = PNBC_SHM_POOL_FULL;
        }
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
    return rc;
}

bool pnbc_shm_pool_publish(shm_region_t *r, bool fallback)
{
    pool_dir_entry_t v = { .state = fallback ? DIR_FALLBACK : DIR_LIVE,
                           .cid = r->cid, .tag = r->tag };
    bool ok = false;

    if (!fallback) {
        v.seg = r->seg;
        v.offset = r->offset;
        v.size = r->size;
    }
    pnbc_lock(&pnbc_shm_pool_lock);
    if (NULL != own_pool) {
        ok = r->entry || dir_room(own_pool);
        if (ok) {
            dir_insert(own_pool, &v);
            own_pool->nentries += !r->entry;
        } else {
            __atomic_store_n(&own_pool->hdr->markers, 1, __ATOMIC_RELEASE);
        }
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
    r->published = ok;
    return ok;
}

/* Retagged schedules publish under a new tag at each start: the entry is
 * counted once, at commit, so publishing it never finds the directory
 * full.  PNBC_SHM_POOL_BLOCK: reserved; _FULL: the directory is full;
 * _NONE: no pool (senders see that). */
int pnbc_shm_pool_entry_reserve(shm_region_t *r)
{
    int rc = PNBC_SHM_POOL_NONE;

    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool_get();
    if (NULL != p) {
        rc = PNBC_SHM_POOL_FULL;
        if (dir_room(p)) {
            p->nentries++;
            r->entry = true;
            rc = PNBC_SHM_POOL_BLOCK;
        }
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
    return rc;
}

/* Take r's entry out of the directory; its count goes too unless it is
 * reserved (r->entry).  Caller holds pnbc_shm_pool_lock. */
static void dir_unpublish(pool_t *p, shm_region_t *r)
{
    if (NULL != p && r->published) {
        dir_remove(p, r->cid, r->tag);
        p->nentries -= !r->entry;
    }
    r->published = false;
}

void pnbc_shm_pool_unpublish(shm_region_t *r)
{
    pnbc_lock(&pnbc_shm_pool_lock);
    dir_unpublish(own_pool, r);
    pnbc_unlock(&pnbc_shm_pool_lock);
}

void pnbc_shm_pool_release(shm_region_t *r)
{
    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool;
    dir_unpublish(p, r);
    if (NULL != p && r->entry) {
        p->nentries--;              /* the reservation */
    }
    r->entry = false;
    if (NULL != p && r->reserved > 0) {
        size_t rounded;
        const unsigned c = size_class(r->reserved, &rounded);
        pool_free_t *f = malloc(sizeof(*f));
        if (NULL != f) {        /* else the block is lost to the pool */
            f->seg = r->seg;
            f->offset = r->offset;
            f->next = p->free[c];
            p->free[c] = f;
        }
        pool_comm_use_t *u = comm_use(p, r->cid, false);
        if (NULL != u) {
            u->bytes -= r->reserved;
        }
        p->bytes -= r->reserved;
        r->reserved = 0;
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
}

/* Bytes a prefault maps beyond its block: the new blocks that follow are
 * carved from there, and small ones then make no call of their own. */
#define POOL_PREFAULT_AHEAD ((size_t) 64 << 10)

/* A persistent request's new block (never touched: every page would fault
 * at the first starts that reach it, at the boxes' rotation) gets its
 * pages mapped at init, in one call instead of a fault per page; a reused
 * block's are mapped already.  Bounded by coll_pnbc_shm_prefault_max_bytes
 * (docs/many/prefault.md).  New blocks are carved from a segment in
 * order, so the segment keeps how far they are mapped (`mapped`), and
 * a call maps POOL_PREFAULT_AHEAD more.  Best effort: a kernel without
 * MADV_POPULATE_WRITE (Linux < 5.14) says EINVAL and the pages fault as
 * before. */
void pnbc_shm_pool_prefault(const shm_region_t *r)
{
#ifdef MADV_POPULATE_WRITE
    if (r->reused || 0 == r->size || r->size > mca_common_pnbc_params.shm_prefault_max_bytes) {
        return;
    }
    const size_t page = (size_t) opal_getpagesize();
    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool;
    if (NULL != p && r->seg < p->nsegs && r->offset + r->size > p->segs[r->seg].mapped) {
        pool_seg_t *g = &p->segs[r->seg];
        const size_t lo = ((r->offset > g->mapped) ? r->offset : g->mapped) & ~(page - 1);
        size_t hi = r->offset + r->size + POOL_PREFAULT_AHEAD;
        hi = (hi < g->size) ? (hi + page - 1) & ~(page - 1) : g->size;
        (void) madvise(g->base + lo, hi - lo, MADV_POPULATE_WRITE);
        g->mapped = hi;
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
#else
    (void) r;
#endif
}

/* MPI_Init (the coll component opens, before the modex fence): the pool
 * and its first segment now, so that the node's other processes map them
 * when a communicator gets the component (pnbc_shm_comm_enable()), not at
 * their first start (docs/many/first-start.md).  Not when no other process
 * of the job shares this node. */
void pnbc_shm_pool_open(void)
{
    if (!mca_common_pnbc_params.shm || 0 == opal_process_info.num_local_peers) {
        return;
    }
    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool_get();
    if (NULL != p && 0 == p->nsegs && next_seg_bytes(p) <= pool_process_limit()) {
        (void) pool_seg_add(p, next_seg_bytes(p));
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
}

pool_t *pnbc_shm_own_pool(void)
{
    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool_get();
    pnbc_unlock(&pnbc_shm_pool_lock);
    return p;
}

/* ------------------------------------------------------------------ */
/* Finalize                                                           */
/* ------------------------------------------------------------------ */

void pnbc_shm_pool_free(pool_t *p)
{
    for (uint32_t k = 0; k < POOL_MAX_SEGS; ++k) {
        if (NULL != p->segs[k].base) {
            munmap(p->segs[k].base, p->segs[k].size);
        }
    }
    if (NULL != p->hdr) {
        munmap(p->hdr, p->dir_bytes);
    }
    for (unsigned c = 0; c < POOL_NCLASSES; ++c) {
        while (NULL != p->free[c]) {
            pool_free_t *f = p->free[c];
            p->free[c] = f->next;
            free(f);
        }
    }
    while (NULL != p->comms) {
        pool_comm_use_t *u = p->comms;
        p->comms = u->next;
        free(u);
    }
    free(p);
}

void pnbc_shm_pool_finalize(void)
{
    pnbc_lock(&pnbc_shm_pool_lock);
    if (NULL != own_pool) {
        pnbc_shm_pool_free(own_pool);
        own_pool = NULL;
    }
    own_pool_tried = false;
    pnbc_shm_peer_pools_finalize();
    pnbc_shm_cost_finalize();
    pnbc_unlock(&pnbc_shm_pool_lock);
}

/* How full is this process's pool for communicator cid: 0 (less than a
 * sixteenth of what it may take), 1 (less than a quarter), 2 (more).  The
 * receiver gives its slots fewer boxes as it fills (see slot_shape()). */
int pnbc_shm_pool_pressure(uint32_t cid)
{
    int level = 0;
    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = own_pool_get();
    if (NULL != p) {
        const pool_comm_use_t *u = comm_use(p, cid, false);
        const double comm = (NULL == u) ? 0.0
                          : (double) u->bytes / (double) mca_common_pnbc_params.shm_pool_comm_bytes;
        const double all = (double) p->bytes / (double) pool_process_limit();
        const double fill = (comm > all) ? comm : all;
        level = (fill < 0.0625) ? 0 : (fill < 0.25) ? 1 : 2;
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
    return level;
}
