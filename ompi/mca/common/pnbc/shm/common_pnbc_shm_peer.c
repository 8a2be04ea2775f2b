/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory pool seen by senders (see common_pnbc_shm_pool.c): a
 * peer's directory and segments, mapped once each when first needed, and
 * the lock-free lookup of a request's block.
 */

#include "common_pnbc_shm_pool.h"

#include "ompi/proc/proc.h"

#include <stdlib.h>
#include <sys/mman.h>

static pool_t **peer_pools;
static uint32_t npeer_pools;
static size_t nmapped;          /* of them mapped (or known to have none) */

/* ------------------------------------------------------------------ */
/* Sender: find a peer's block                                        */
/* ------------------------------------------------------------------ */

/* Caller holds pnbc_shm_pool_lock. */
static pool_t *peer_pool_get(uint32_t vpid)
{
    for (uint32_t k = 0; k < npeer_pools; ++k) {
        if (peer_pools[k]->vpid == vpid) {
            return peer_pools[k];
        }
    }
    pool_t *p = calloc(1, sizeof(*p));
    pool_t **grown = (NULL == p) ? NULL : realloc(peer_pools, (npeer_pools + 1) * sizeof(*grown));
    if (NULL == grown) {
        free(p);
        return NULL;
    }
    p->vpid = vpid;
    peer_pools = grown;
    peer_pools[npeer_pools++] = p;
    return p;
}

/* Caller holds pnbc_shm_pool_lock.  False while the directory is not there. */
static bool peer_pool_map(pool_t *p, const opal_process_name_t *name)
{
    if (NULL != p->hdr || p->none) {
        return true;
    }
    char *dir = pnbc_shm_dir_path(name);
    char *path = (NULL == dir) ? NULL : pnbc_shm_pool_path(dir, "dir", 0);
    size_t size = 0;
    void *base = (NULL == path) ? NULL : pnbc_shm_pool_file_map(path, &size, true);
    free(path);
    free(dir);
    if (NULL == base) {
        return false;
    }
    if (0 == size) {
        p->none = true;
        nmapped++;
        return true;
    }
    pool_dir_header_t *h = base;
    if (size < sizeof(*h) || POOL_MAGIC != __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) ||
        0 == h->capacity || 0 != (h->capacity & (h->capacity - 1)) || h->table < sizeof(*h) ||
        h->table > size || h->capacity > (size - h->table) / sizeof(pool_dir_entry_t)) {
        munmap(base, size);
        return false;
    }
    p->hdr = h;
    nmapped++;
    p->dir = (pool_dir_entry_t *) ((char *) base + h->table);
    p->dir_bytes = size;
    p->mask = h->capacity - 1;
    if (h->nbells > 0 && h->bells >= sizeof(*h) && h->bells <= h->table &&
        h->nbells <= (h->table - h->bells) / sizeof(pool_bells_t)) {
        p->bells = (pool_bells_t *) ((char *) base + h->bells);
        p->nbells = h->nbells;
    }
    return true;
}

pool_t *pnbc_shm_peer_pool(uint32_t vpid)
{
    pool_t *p = NULL;
    pnbc_lock(&pnbc_shm_pool_lock);
    for (uint32_t k = 0; k < npeer_pools && NULL == p; ++k) {
        if (peer_pools[k]->vpid == vpid && NULL != peer_pools[k]->hdr) {
            p = peer_pools[k];
        }
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
    return p;
}

/* Caller holds pnbc_shm_pool_lock. */
static char *peer_seg(pool_t *p, const opal_process_name_t *name, uint64_t k)
{
    if (k >= POOL_MAX_SEGS) {
        return NULL;
    }
    if (NULL == p->segs[k].base) {
        char *dir = pnbc_shm_dir_path(name);
        char *path = (NULL == dir) ? NULL : pnbc_shm_pool_path(dir, "", (uint32_t) k);
        size_t size = 0;
        void *base = (NULL == path) ? NULL : pnbc_shm_pool_file_map(path, &size, false);
        free(path);
        free(dir);
        if (NULL == base || 0 == size) {
            return NULL;
        }
        p->segs[k] = (pool_seg_t) { base, size, 0, 0 };
    }
    return p->segs[k].base;
}

int pnbc_shm_pool_find(shm_region_t *r, const opal_process_name_t *name)
{
    int rc = PNBC_SHM_POOL_WAIT;

    pnbc_lock(&pnbc_shm_pool_lock);
    pool_t *p = peer_pool_get(name->vpid);
    if (NULL == p || !peer_pool_map(p, name)) {
        goto out;
    }
    if (p->none) {
        rc = PNBC_SHM_POOL_NONE;
        goto out;
    }
    for (uint64_t i = pool_key_hash(r->cid, r->tag), n = 0; n <= p->mask; ++i, ++n) {
        pool_dir_entry_t v;
        if (!pool_entry_read(&p->dir[i & p->mask], &v)) {
            goto out;                   /* being rewritten: look again later */
        }
        if (DIR_EMPTY == v.state) {
            break;
        }
        if (v.cid != r->cid || v.tag != r->tag) {
            continue;
        }
        if (DIR_FALLBACK == v.state) {
            rc = PNBC_SHM_POOL_NONE;
            goto out;
        }
        char *base = peer_seg(p, name, v.seg);
        if (NULL == base || v.offset + v.size > p->segs[v.seg].size) {
            goto out;
        }
        r->base = base + v.offset;
        r->size = v.size;
        rc = PNBC_SHM_POOL_BLOCK;
        goto out;
    }
    if (0 != __atomic_load_n(&p->hdr->markers, __ATOMIC_ACQUIRE)) {
        rc = PNBC_SHM_POOL_MARKER;      /* the caller looks for one */
    }
out:
    pnbc_unlock(&pnbc_shm_pool_lock);
    return rc;
}

/* Touch a page of a peer's pool for writing, its contents unchanged (an
 * atomic add of 0: its owner or another sender may be writing there). */
static void peer_touch(volatile uint64_t *x)
{
    (void) __atomic_fetch_add(x, 0, __ATOMIC_RELAXED);
}

/* A communicator gets the component.  Its other on-node processes
 * created their pools in MPI_Init, before its modex fence
 * (pnbc_shm_pool_open()): map them now, with their first segment, and
 * touch the pages every first start would (the directory's header and
 * bells, the segment's first page, the entries of this communicator's
 * first requests): on a VM a page's first touch costs microseconds, one
 * that needs a new page-table page tens (docs/many/first-start.md).  A
 * pool not there yet is mapped at the first start, as before.  Once per
 * process: later communicators find every pool mapped. */
void pnbc_shm_comm_enable(ompi_communicator_t *comm)
{
    if (!mca_common_pnbc_params.shm || OMPI_COMM_IS_INTER(comm) ||
        0 == opal_process_info.num_local_peers) {
        return;
    }
    const int n = ompi_comm_size(comm), me = ompi_comm_rank(comm);
    const uint32_t my_vpid = OMPI_PROC_MY_NAME->vpid;
    /* a count (int32_t in Open MPI 4.1, uint32_t in 5.0), not 0 here */
    const size_t local_peers = (size_t) opal_process_info.num_local_peers;
    pnbc_lock(&pnbc_shm_pool_lock);
    /* every on-node process's pool mapped: nothing to look for (a
     * communicator's creation then costs no walk over its ranks) */
    for (int r = 0; r < n && nmapped < local_peers; ++r) {
        if (r == me || !pnbc_shm_peer_local(comm, r)) {
            continue;
        }
        const opal_process_name_t *name = &ompi_comm_peer_lookup(comm, r)->super.proc_name;
        pool_t *p = peer_pool_get(name->vpid);
        if (NULL == p || NULL != p->hdr || p->none || !peer_pool_map(p, name) || p->none) {
            continue;       /* mapped before, or no pool (yet) */
        }
        if (NULL != p->bells && my_vpid < p->nbells) {
            peer_touch(&p->bells[my_vpid].data);
        }
        char *seg = peer_seg(p, name, 0);
        if (NULL != seg) {
            peer_touch((volatile uint64_t *) seg);
        }
        /* the entries of comm's first requests and of its mailbox (a
         * read: senders only read the directory) */
        const uint64_t first = pool_key_hash(pnbc_comm_key(comm), PNBC_TAG_FIRST);
        (void) __atomic_load_n(&p->dir[first & p->mask].seq, __ATOMIC_RELAXED);
    }
    pnbc_unlock(&pnbc_shm_pool_lock);
}

void pnbc_shm_peer_pools_finalize(void)
{
    for (uint32_t k = 0; k < npeer_pools; ++k) {
        pnbc_shm_pool_free(peer_pools[k]);
    }
    free(peer_pools);
    peer_pools = NULL;
    npeer_pools = 0;
    nmapped = 0;
}
