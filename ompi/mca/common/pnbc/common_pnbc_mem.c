/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The memory of live requests.  A request holds about 1.7 KB from init to
 * free (its object, its settled schedule, its transports' state); a
 * process keeping 10^4 of them takes thousands of new heap pages at init,
 * one page fault each, and on a virtual machine whose hypervisor maps a
 * page at its first touch a fault costs ~12 us (docs/many/arena.md).
 * So these blocks come from chunks of their own:
 *
 *   - size classes 16 bytes apart up to MEM_SMALL_MAX; larger blocks, and
 *     every block with coll_pnbc_mem_chunk_bytes 0, come from malloc;
 *   - a block has a 16-byte header (its class, a magic number; its
 *     free-list link while free, or a malloc'ed block's size), so a free
 *     needs no size;
 *   - the first chunk is MEM_FIRST_CHUNK of ordinary pages (a process with
 *     a few requests maps no more than before); later ones are
 *     coll_pnbc_mem_chunk_bytes (2 MiB), aligned to 2 MiB and marked
 *     MADV_HUGEPAGE: where the kernel backs such memory with transparent
 *     huge pages (THP "madvise" mode) one fault maps the whole chunk;
 *   - a freed block goes on its class's list, from which the next request
 *     takes it (churn reuses memory, it does not grow it); chunks stay
 *     until the engine's last user leaves with no block alive.
 *
 * One lock: blocks are taken at init and returned at free, never per
 * start (the allocation-counter tests run with the chunks off, so that
 * every block is a malloc they count).
 */

#include "common_pnbc_mem.h"
#include "common_pnbc.h"

#include "opal/class/opal_object.h"
#include "opal/util/output.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MEM_ALIGN       16
#define MEM_SMALL_MAX   1024
#define MEM_NCLASSES    (MEM_SMALL_MAX / MEM_ALIGN)
#define MEM_BIG         UINT32_MAX      /* the class of a block from malloc */
#define MEM_MAGIC       UINT32_C(0x6d6d6e70)    /* "pnmm" */
#define MEM_FIRST_CHUNK ((size_t) 256 << 10)
#define MEM_HUGE        ((size_t) 2 << 20)

typedef struct mem_head_t {
    uint32_t cls;
    uint32_t magic;
    union {
        struct mem_head_t *next;        /* free, on its class's list */
        size_t bytes;                   /* a block from malloc */
    } u;
} mem_head_t;

typedef struct mem_chunk_t {            /* at the start of each chunk */
    struct mem_chunk_t *next;
    size_t bytes;
} mem_chunk_t;

static pnbc_lock_t mem_lock = PNBC_LOCK_INITIALIZER;
static mem_head_t *mem_free[MEM_NCLASSES];
static mem_chunk_t *mem_chunks;
static char *mem_bump, *mem_end;
static size_t mem_live, mem_mapped;

/* A new chunk to carve from (under the lock); false: no memory. */
static bool chunk_add(void)
{
    const size_t want = mca_common_pnbc_params.mem_chunk_bytes;
    const size_t bytes = (NULL == mem_chunks || want < MEM_FIRST_CHUNK) ? MEM_FIRST_CHUNK : want;
    const bool huge = 0 == bytes % MEM_HUGE;
    const size_t map_bytes = huge ? bytes + MEM_HUGE : bytes;   /* room to align */
    char *m = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == m) {
        return false;
    }
    char *base = m;
    if (huge) {
        base = (char *) (((uintptr_t) m + MEM_HUGE - 1) & ~(uintptr_t) (MEM_HUGE - 1));
        if (base > m) {
            (void) munmap(m, (size_t) (base - m));
        }
        (void) munmap(base + bytes, (size_t) (m + map_bytes - (base + bytes)));
#ifdef MADV_HUGEPAGE
        (void) madvise(base, bytes, MADV_HUGEPAGE);     /* advice: may be refused */
#endif
    }
    mem_chunk_t *c = (mem_chunk_t *) base;
    c->next = mem_chunks;
    c->bytes = bytes;
    mem_chunks = c;
    mem_bump = base + MEM_ALIGN;
    mem_end = base + bytes;
    mem_mapped += bytes;
    return true;
}

void *pnbc_mem_alloc(size_t bytes)
{
    if (0 == mca_common_pnbc_params.mem_chunk_bytes || bytes > MEM_SMALL_MAX) {
        if (bytes > SIZE_MAX - sizeof(mem_head_t)) {
            return NULL;
        }
        mem_head_t *h = malloc(sizeof(*h) + bytes);
        if (NULL == h) {
            return NULL;
        }
        h->cls = MEM_BIG;
        h->magic = MEM_MAGIC;
        h->u.bytes = bytes;
        pnbc_lock(&mem_lock);
        mem_live += bytes;
        pnbc_unlock(&mem_lock);
        return h + 1;
    }
    const uint32_t c = (0 == bytes) ? 0 : (uint32_t) ((bytes - 1) / MEM_ALIGN);
    const size_t size = (size_t) (c + 1) * MEM_ALIGN;
    pnbc_lock(&mem_lock);
    mem_head_t *h = mem_free[c];
    if (NULL != h) {
        mem_free[c] = h->u.next;
    } else {
        if ((size_t) (mem_end - mem_bump) < sizeof(*h) + size && !chunk_add()) {
            pnbc_unlock(&mem_lock);
            return NULL;
        }
        h = (mem_head_t *) mem_bump;
        mem_bump += sizeof(*h) + size;
        h->cls = c;
        h->magic = MEM_MAGIC;
    }
    mem_live += size;
    pnbc_unlock(&mem_lock);
    h->u.next = NULL;
    return h + 1;
}

void *pnbc_mem_calloc(size_t bytes)
{
    void *p = pnbc_mem_alloc(bytes);
    if (NULL != p) {
        memset(p, 0, bytes);
    }
    return p;
}

/* The bytes block h can hold. */
static size_t head_bytes(const mem_head_t *h)
{
    return (MEM_BIG == h->cls) ? h->u.bytes : (size_t) (h->cls + 1) * MEM_ALIGN;
}

void *pnbc_mem_realloc(void *p, size_t bytes)
{
    if (NULL == p) {
        return pnbc_mem_alloc(bytes);
    }
    const mem_head_t *h = (const mem_head_t *) p - 1;
    assert(MEM_MAGIC == h->magic);
    const size_t have = head_bytes(h);
    if (MEM_BIG != h->cls && bytes <= have) {
        return p;
    }
    void *q = pnbc_mem_alloc(bytes);
    if (NULL != q) {
        memcpy(q, p, (have < bytes) ? have : bytes);
        pnbc_mem_free(p);
    }
    return q;
}

void pnbc_mem_free(void *p)
{
    if (NULL == p) {
        return;
    }
    mem_head_t *h = (mem_head_t *) p - 1;
    assert(MEM_MAGIC == h->magic);
    pnbc_lock(&mem_lock);
    mem_live -= head_bytes(h);
    if (MEM_BIG == h->cls) {
        pnbc_unlock(&mem_lock);
        free(h);
        return;
    }
    h->u.next = mem_free[h->cls];
    mem_free[h->cls] = h;
    pnbc_unlock(&mem_lock);
}

void *pnbc_mem_obj_new(opal_class_t *cls)
{
    opal_object_t *o = pnbc_mem_alloc(cls->cls_sizeof);
    if (NULL != o) {
        OBJ_CONSTRUCT_INTERNAL(o, cls);
    }
    return o;
}

void pnbc_mem_obj_release(void *obj)
{
    opal_object_t *o = obj;
    if (0 == opal_obj_update(o, -1)) {
        opal_obj_run_destructors(o);
        pnbc_mem_free(o);
    }
}

void pnbc_mem_usage(size_t *live, size_t *mapped)
{
    pnbc_lock(&mem_lock);
    *live = mem_live;
    *mapped = mem_mapped;
    pnbc_unlock(&mem_lock);
}

void pnbc_mem_fini(void)
{
    pnbc_lock(&mem_lock);
    if (mca_common_pnbc_params.verbose >= 2) {
        opal_output(0, "coll:pnbc: request memory at finalize: %zu bytes of blocks alive, "
                    "%zu bytes of chunks", mem_live, mem_mapped);
    }
    if (0 == mem_live) {        /* else a block may still be freed later */
        while (NULL != mem_chunks) {
            mem_chunk_t *c = mem_chunks;
            mem_chunks = c->next;
            (void) munmap(c, c->bytes);
        }
        memset(mem_free, 0, sizeof(mem_free));
        mem_bump = mem_end = NULL;
        mem_mapped = 0;
    }
    pnbc_unlock(&mem_lock);
}
