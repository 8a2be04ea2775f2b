/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory pool's private declarations (the pool is described at
 * the top of common_pnbc_shm_pool.c): the directory's layout, a pool as
 * its owner or a sender sees it, and what the owner's file
 * (common_pnbc_shm_pool.c) and the senders' (common_pnbc_shm_peer.c)
 * share.
 */

#ifndef MCA_COMMON_PNBC_SHM_POOL_H
#define MCA_COMMON_PNBC_SHM_POOL_H

#include "common_pnbc_shm.h"

BEGIN_C_DECLS

#define POOL_MAGIC      UINT64_C(0x326c6f6f70626e70)    /* "pnbpool2" */
#define POOL_MAX_SEGS   1024
#define POOL_NCLASSES   208

enum { DIR_EMPTY = 0, DIR_LIVE = 1, DIR_FALLBACK = 2 };

typedef struct pool_dir_header_t {
    uint64_t magic;
    uint64_t capacity;          /* entries, a power of two */
    volatile uint64_t markers;  /* nonzero: some requests fell back by
                                   marker file (the directory was full) */
    uint64_t bells;             /* offset of the bells (pool_bells_t) */
    uint64_t nbells;            /* one per process of the job, by vpid */
    uint64_t table;             /* offset of the entries (pool_dir_entry_t) */
    char pad[SHM_LINE - 6 * sizeof(uint64_t)];
} pool_dir_header_t;

/* The directory file: the header, the bells right after it (a sender
 * touches both when it maps the pool: one page, and one page-table page
 * with the first megabytes of entries, docs/many/first-start.md), then
 * the table.  Mapped at a 2 MiB boundary (the `aligned` argument of
 * pnbc_shm_pool_file_map()). */

/* The owner's bells for the job's process v (see pnbc_bell_t): each
 * counter has one writer, on a line of its own. */
typedef struct pool_bells_t {
    volatile uint64_t data;     /* v rang: it filled a box of ours */
    char pad0[SHM_LINE - sizeof(uint64_t)];
    volatile uint64_t ack;      /* we rang: we emptied a box v fills */
    char pad1[SHM_LINE - sizeof(uint64_t)];
} pool_bells_t;

typedef struct pool_dir_entry_t {
    volatile uint32_t seq;      /* odd while the owner rewrites the entry */
    volatile uint32_t state;
    volatile uint32_t cid;
    volatile int32_t tag;
    volatile uint64_t seg;
    volatile uint64_t offset;
    volatile uint64_t size;
} pool_dir_entry_t;

typedef struct pool_seg_t {
    char *base;
    size_t size;
    size_t used;                /* bump pointer (owner) */
    size_t mapped;              /* new blocks below this are prefaulted
                                   (owner, pnbc_shm_pool_prefault()) */
} pool_seg_t;

typedef struct pool_free_t {    /* a free block (owner, private memory) */
    uint32_t seg;
    uint64_t offset;
    struct pool_free_t *next;
} pool_free_t;

typedef struct pool_comm_use_t {
    uint32_t cid;
    size_t bytes;
    struct pool_comm_use_t *next;
} pool_comm_use_t;

/* A process's pool seen from here: our own (owner) or a peer's. */
typedef struct pool_t {
    uint32_t vpid;
    bool none;                  /* the owner has no pool (empty pool.dir) */
    pool_dir_header_t *hdr;     /* NULL until mapped */
    pool_dir_entry_t *dir;
    size_t dir_bytes;
    uint64_t mask;
    pool_bells_t *bells;        /* NULL: none (an older directory) */
    uint64_t nbells;
    uint32_t nsegs;
    pool_seg_t segs[POOL_MAX_SEGS];
    /* owner only */
    uint64_t nentries;
    size_t bytes;               /* in live blocks */
    pool_free_t *free[POOL_NCLASSES];
    pool_comm_use_t *comms;
} pool_t;


/* The pools, their lock (taken after the engine's, never before). */
extern pnbc_lock_t pnbc_shm_pool_lock;

/* <dir>/pool.<name><k> (malloc'ed). */
char *pnbc_shm_pool_path(const char *dir, const char *name, uint32_t k);
/* Map an existing file, its size in *size; NULL: not there (yet).  An
 * empty file maps to MAP_FAILED with *size 0. */
void *pnbc_shm_pool_file_map(const char *path, size_t *size, bool aligned);
/* Create `path` of `size` bytes, fully allocated, and map it (NULL and
 * errno on failure; no file left behind then); `aligned`: at a 2 MiB
 * boundary, where one page-table page covers the file's first 2 MiB. */
void *pnbc_shm_pool_file_create(const char *path, size_t size, bool aligned);
/* Unmap and free a pool (finalize). */
void pnbc_shm_pool_free(pool_t *p);
/* Our pool (created at first use; NULL: none), a peer's if mapped. */
pool_t *pnbc_shm_own_pool(void);
pool_t *pnbc_shm_peer_pool(uint32_t vpid);
/* Senders: forget the peers' pools (finalize). */
void pnbc_shm_peer_pools_finalize(void);

/* Where (cid, tag) lives in the directory, modulo its size: a
 * communicator's requests take consecutive tags, so they take consecutive
 * entries -- pages of the directory are touched as requests accumulate,
 * not all at once, and a lookup rarely probes further -- and communicators
 * start far apart. */
static inline uint64_t pool_key_hash(uint32_t cid, int32_t tag)
{
    return (uint64_t) cid * UINT64_C(0x9e3779b1) + (uint64_t) (uint32_t) -tag;
}
/* The owner rewrites an entry: its sequence number is odd meanwhile. */
static inline void pool_entry_write(pool_dir_entry_t *e, const pool_dir_entry_t *v)
{
    const uint32_t s = e->seq;
    __atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    e->cid = v->cid;
    e->tag = v->tag;
    e->seg = v->seg;
    e->offset = v->offset;
    e->size = v->size;
    e->state = v->state;
    __atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/* A reader's consistent copy of *e; false if the owner was rewriting it. */
static inline bool pool_entry_read(const pool_dir_entry_t *e, pool_dir_entry_t *v)
{
    const uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    if (s & 1) {
        return false;
    }
    v->state = e->state;
    v->cid = e->cid;
    v->tag = e->tag;
    v->seg = e->seg;
    v->offset = e->offset;
    v->size = e->size;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return s == __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
}

END_C_DECLS

#endif /* MCA_COMMON_PNBC_SHM_POOL_H */
