/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's files (see common_pnbc_transport_shm.c):
 * regions (a request's block in a pool), building a receiver's block or,
 * when that fails, its fallback marker; the pool's files (created whole,
 * or mapped).  The process's directory itself: common_pnbc_shm_dir.c.
 */

#include "common_pnbc_shm_pool.h"

#include "opal/util/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Regions                                                            */
/* ------------------------------------------------------------------ */

shm_region_t *pnbc_shm_region_new(const pnbc_channel_t *ch, bool owner)
{
    shm_region_t *r = malloc(sizeof(*r));   /* (calloc skips malloc's thread cache) */
    if (NULL == r) {
        return NULL;
    }
    *r = (shm_region_t) { .refs = 1, .owner = owner, .cid = pnbc_comm_key(ch->comm),
                          .tag = ch->tag };
    return r;
}

void pnbc_shm_region_release(shm_region_t *r)
{
    if (NULL == r || --r->refs > 0) {
        return;
    }
    if (r->owner) {
        pnbc_shm_pool_release(r);
    }
    if (NULL != r->marker) {
        (void) unlink(r->marker);
        free(r->marker);
    }
    free(r->acts);
    free(r);
}

char *pnbc_shm_marker_path(const char *dir, uint32_t cid, int32_t tag)
{
    char *path = NULL;
    if (0 > asprintf(&path, "%s/%x.%x", dir, (unsigned) cid, (unsigned) tag)) {
        return NULL;
    }
    return path;
}

bool pnbc_shm_marker_exists(const shm_region_t *r)
{
    char *dir = pnbc_shm_dir_path(&r->peer);
    char *path = (NULL == dir) ? NULL : pnbc_shm_marker_path(dir, r->cid, r->tag);
    const bool there = (NULL != path && 0 == access(path, F_OK));
    free(path);
    free(dir);
    return there;
}

/* ------------------------------------------------------------------ */
/* The receiver's block                                               */
/* ------------------------------------------------------------------ */

/* The owner region r goes with every shm RECV of s (r->acts, in
 * schedule order: the order of the block's table). */
static int region_take_recvs(pnbc_schedule_t *s, shm_region_t *r, uint32_t nslots)
{
    r->acts = malloc(nslots * sizeof(*r->acts));
    if (NULL == r->acts) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    r->refs = 0;
    r->nacts = 0;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (is_shm(a, PNBC_ACT_RECV)) {
            ((shm_action_t *) a->tstate.ptr)->region = r;
            r->acts[r->nacts++] = a;
            r->refs++;
        }
    }
    return OMPI_SUCCESS;
}

/* The receiver's choice of boxes for t's message (see shm_box_max(),
 * common_pnbc_shm.h). */
static shm_shape_t slot_shape(const shm_action_t *t, int pressure)
{
    const size_t bytes = t->bytes;
    const bool declines = shm_recv_declines(t);
    if (t->ch.large.sender_writes && NULL != t->flat && !declines &&
        bytes > shm_box_max(&t->ch) && mca_common_pnbc_params.shm_single_copy) {
        /* the boxes carry the news -- or the message, from a sender that
         * cannot write (the kernel may refuse process_vm_writev) */
        return (shm_shape_t) { .frag = (0 == pressure) ? shm_box_max(&t->ch) : SHM_PRESSED_MIN,
                               .depth = 2, .offer = false, .invite = true };
    }
    if (pressure > 0 && bytes > SHM_PRESSED_MIN && !t->ch.retag) {
        if (bytes > SHM_OFFER_MIN && mca_common_pnbc_params.shm_single_copy && !declines) {
            return (shm_shape_t) { .frag = SHM_FRAG_MIN, .depth = 2, .offer = true, .invite = false };
        }
        return (shm_shape_t) { .frag = (pressure > 1) ? SHM_PRESSED_MIN / 2 : SHM_PRESSED_MIN,
                               .depth = 2, .offer = false, .invite = false };
    }
    if (bytes <= shm_box_max(&t->ch)) {
        if (t->ch.retag) {
            /* A retagged schedule's sender cannot run ahead into the next
             * call (it waits for the receiver to arm the slot), so boxes
             * cannot overlap one call's copy out with the next call's copy
             * in; a message in SHM_RETAG_PIECES pieces overlaps the two
             * copies of the same call instead (its memory stays that of
             * one box of the message). */
            const size_t piece = (bytes + SHM_RETAG_PIECES - 1) / SHM_RETAG_PIECES;
            /* For the same reason a sender whose data is in one piece is
             * asked to offer it (one copy, by the receiver) from
             * coll_pnbc_nbc_single_copy_min_bytes on: the boxes then serve
             * only senders that cannot (docs/nbc.md, "Single copy").  Never
             * below SHM_PRESSED_MIN: the offer itself fills the first box. */
            const int offer_min = mca_common_pnbc_params.nbc_single_copy_min_bytes;
            const bool offer = offer_min > 0 && bytes >= (size_t) offer_min && !declines &&
                               bytes >= SHM_PRESSED_MIN && mca_common_pnbc_params.shm_single_copy &&
                               (!t->ch.large.chained || !pnbc_shm_oversubscribed());
            return (bytes >= SHM_RETAG_PIECES * SHM_PRESSED_MIN)
                       ? (shm_shape_t) { .frag = (piece + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1),
                                         .depth = SHM_RETAG_PIECES, .offer = offer, .invite = false }
                       : (shm_shape_t) { .frag = bytes, .depth = 1, .offer = offer, .invite = false };
        }
        /* a lockstep collective's sender never runs further ahead: more
         * boxes would only be memory, each page of which costs a first
         * touch in both processes (docs/many/lockstep.md).  Where the
         * job's processes outnumber the CPUs, a sender of messages of a
         * line (a rooted call's) runs SHM_DEEP_LINE ahead: with fewer it
         * found its boxes full and gave up the CPU at every few starts
         * (16 KiB a slot; measured in docs/nbc-rings.md). */
        const bool lockstep = t->ch.large.lockstep && !OMPI_COMM_IS_INTER(t->ch.comm);
        const int deep = lockstep ? 2
                         : (shm_box_size(bytes) <= SHM_LINE && pnbc_shm_oversubscribed())
                             ? SHM_DEEP_LINE
                             : SHM_DEEP;
        return (shm_shape_t) { .frag = bytes, .depth = (0 == pressure) ? deep : (1 == pressure) ? 2 : 1,
                               .offer = false, .invite = false };
    }
    /* streamed (or offered: then the boxes serve a refusal): boxes of
     * coll_pnbc_shm_stream_frag_bytes, none larger than the message --
     * than a SHM_RETAG_PIECES-th of it for a retagged schedule, whose
     * sender cannot run ahead into the next call (see above) */
    const int stream = mca_common_pnbc_params.shm_stream_frag_bytes;
    size_t frag = (stream < SHM_STREAM_FRAG_MIN) ? SHM_STREAM_FRAG_MIN : (size_t) stream;
    const size_t part = t->ch.retag ? (bytes + SHM_RETAG_PIECES - 1) / SHM_RETAG_PIECES : bytes;
    const size_t whole = (part + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
    frag = (whole < frag && whole >= SHM_STREAM_FRAG_MIN) ? whole : frag;
    return (shm_shape_t) { .frag = frag, .depth = (0 == pressure) ? SHM_STREAM_DEPTH : 2,
                           .offer = false, .invite = false };
}

/* Lay out the block: header, table, then a slot per shm RECV. */
static void block_fill(shm_region_t *r, size_t table_end, int pressure)
{
    shm_header_t *h = r->base;
    shm_entry_t *table = (shm_entry_t *) (h + 1);
    size_t offset = table_end;

    if (r->reused) {
        /* the incarnation first: a sender of a retagged schedule
         * remembering a slot here reads it after the slot's `armed` */
        __atomic_store_n(&h->gen, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        memset(r->base, 0, table_end);
    }
    for (uint32_t k = 0; k < r->nacts; ++k) {
        pnbc_action_t *a = r->acts[k];
        shm_action_t *t = a->tstate.ptr;
        const shm_shape_t shape = slot_shape(t, pressure);
        table[k].sender = a->peer;
        table[k].pair_seq = a->pair_seq;
        table[k].offset = offset;
        table[k].capacity = t->bytes;
        table[k].depth = shape.depth;
        table[k].frag = shape.frag;
        table[k].offer = shape.offer;
        table[k].declined = shm_recv_declines(t);   /* never with single copy off */
        if (table[k].declined) {
            __atomic_add_fetch(&pnbc_shm_declined_slots, 1, __ATOMIC_RELAXED);
        }
        slot_attach(t, (char *) r->base + offset, shape.frag, shape.depth);
        pnbc_shm_bell_bind(a, t);
        if (r->reused) {    /* the counters and box headers start at zero */
            memset(t->slot, 0, sizeof(*t->slot));
            for (uint64_t q = 0; q < shape.depth; ++q) {
                memset(box_of(t, q), 0, sizeof(shm_box_t));
            }
        }
        pnbc_shm_recv_take_fold(a, t);
        t->invited = shape.invite;
        t->help = !shape.invite && !table[k].declined && pnbc_shm_recv_help(t);
        table[k].help = t->help;
        if (t->invited || t->help) {
            table[k].invite_addr = (uint64_t) (uintptr_t) t->flat;
            table[k].invite_pid = (uint64_t) getpid();
            table[k].invite_ns = pnbc_shm_pid_namespace();
        }
        offset += shm_slot_size(shape.frag, shape.depth);
    }
    static uint64_t generation;     /* inits may run in several threads */
    __atomic_store_n(&h->gen, __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED),
                     __ATOMIC_RELEASE);
    h->nslots = r->nacts;
    h->magic = SHM_MAGIC;
}

int pnbc_shm_region_announce_fallback(shm_region_t *r)
{
    if (pnbc_shm_pool_publish(r, true)) {
        return OMPI_SUCCESS;
    }
    const char *dir = pnbc_shm_own_dir_get();
    char *path = (NULL == dir) ? NULL : pnbc_shm_marker_path(dir, r->cid, r->tag);
    int fd = (NULL == path) ? -1 : open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        free(path);
        return OMPI_ERR_OUT_OF_RESOURCE;   /* senders would wait forever */
    }
    close(fd);
    r->marker = path;
    return OMPI_SUCCESS;
}

/* Our shm receives go over pml: tell the senders (now, or at each start
 * of a retagged schedule).  `why` for the verbose output (NULL: none). */
static int recv_fall_back(pnbc_schedule_t *s, shm_region_t *r, const pnbc_channel_t *ch,
                          const char *why)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (is_shm(a, PNBC_ACT_RECV)) {
            shm_action_t *t = a->tstate.ptr;
            t->fallback = true;
            /* a message that comes over pml is reduced by its REDUCE
             * action, not folded from a box (a block built and then not
             * published had set the fold up) */
            free(t->fold);
            t->fold = NULL;
            if (NULL != a->fold) {
                a->fold->folded = false;
            }
        }
    }
    if (NULL != r) {
        r->fallback = true;
        if (ch->retag) {
            /* announced at each start, in the entry reserved now; with
             * the directory full, by a marker file per start and without
             * ever a block; with no pool at all, senders see that and
             * nothing is announced */
            switch (r->entry ? PNBC_SHM_POOL_BLOCK : pnbc_shm_pool_entry_reserve(r)) {
            case PNBC_SHM_POOL_BLOCK:
                break;
            case PNBC_SHM_POOL_FULL:
                r->deferred = false;
                break;
            default:
                r->deferred = false;
                r->nopool = true;
            }
        } else {
            if (OMPI_SUCCESS != pnbc_shm_region_announce_fallback(r)) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            if (NULL != r->marker) {
                why = "the pool's directory is full";
            }
        }
    }
    if (NULL != why && mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: shm: cid %u tag %d receives through pml (%s)",
                    (unsigned) pnbc_comm_key(ch->comm), ch->tag, why);
    }
    return OMPI_SUCCESS;
}

/* Reserve r's block in the pool and lay it out: PNBC_SHM_POOL_BLOCK, or
 * _FULL (no room) or _NONE (no pool). */
static int block_place(shm_region_t *r)
{
    const int pressure = pnbc_shm_pool_pressure(r->cid);
    size_t size = sizeof(shm_header_t) + r->nacts * sizeof(shm_entry_t);

    size = (size + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
    const size_t table_end = size;
    for (uint32_t k = 0; k < r->nacts; ++k) {
        const shm_shape_t shape = slot_shape(r->acts[k]->tstate.ptr, pressure);
        size += shm_slot_size(shape.frag, shape.depth);
    }
    const int rc = pnbc_shm_pool_reserve(r, size);
    if (PNBC_SHM_POOL_BLOCK == rc) {
        block_fill(r, table_end, pressure);
    }
    return rc;
}

int pnbc_shm_recv_block_build(pnbc_schedule_t *s, const pnbc_channel_t *ch, uint32_t nslots)
{
    shm_region_t *r = pnbc_shm_region_new(ch, true);
    if (NULL == r) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OMPI_SUCCESS != region_take_recvs(s, r, nslots)) {
        pnbc_shm_region_release(r);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (ch->retag) {
        /* A retagged schedule (a cached nonblocking instance) earns its
         * block when it runs a second time (pnbc_shm_region_announce()):
         * until then its receives go over pml, so arguments that never
         * repeat cost no shared memory, and a first call no new pages. */
        r->deferred = true;
        return recv_fall_back(s, r, ch, NULL);
    }
    switch (block_place(r)) {
    case PNBC_SHM_POOL_BLOCK:
        pnbc_shm_pool_prefault(r);
        if (pnbc_shm_pool_publish(r, false)) {
            return OMPI_SUCCESS;
        }
        /* the directory is full: give the block back, fall back */
        pnbc_shm_pool_release(r);
        r->base = NULL;
        break;
    case PNBC_SHM_POOL_FULL:
        break;
    default:                    /* no pool: its empty directory says it */
        for (uint32_t k = 0; k < r->nacts; ++k) {
            ((shm_action_t *) r->acts[k]->tstate.ptr)->region = NULL;
        }
        r->refs = 1;
        pnbc_shm_region_release(r);
        return recv_fall_back(s, NULL, ch, "no shm pool");
    }
    return recv_fall_back(s, r, ch, "the shm pool is full");
}

/* ------------------------------------------------------------------ */
/* Retagged schedules: a block announced for one start                */
/* ------------------------------------------------------------------ */

/* A deferred region's second start: its receives take a block now, if
 * the pool has room (else they stay on pml, and the next start asks
 * again). */
static void region_earn_block(shm_region_t *r)
{
    switch (block_place(r)) {
    case PNBC_SHM_POOL_BLOCK:
        for (uint32_t k = 0; k < r->nacts; ++k) {
            ((shm_action_t *) r->acts[k]->tstate.ptr)->fallback = false;
        }
        r->fallback = r->deferred = false;
        break;
    case PNBC_SHM_POOL_FULL:
        break;
    default:
        r->deferred = false;    /* no pool: pml for good */
    }
}

void pnbc_shm_region_announce(shm_region_t *r, int32_t tag)
{
    r->left = r->nacts;
    if (r->nopool) {
        return;                     /* senders fall back by themselves */
    }
    pnbc_shm_region_withdraw(r);    /* an earlier start that failed midway */
    if (r->deferred && r->starts++ > 0) {
        region_earn_block(r);
    }
    r->tag = tag;
    if (r->fallback) {
        /* fails only if neither the directory nor a file can be written */
        (void) pnbc_shm_region_announce_fallback(r);
        return;
    }
    const uint64_t key = shm_armed_key(r->cid, tag);
    for (uint32_t k = 0; k < r->nacts; ++k) {
        shm_action_t *t = r->acts[k]->tstate.ptr;
        t->slot->base = t->q;
        __atomic_store_n(&t->slot->armed, key, __ATOMIC_RELEASE);
    }
    /* a block has a reserved entry, so this does not fail; it orders the
     * slots' writes before any sender's lookup */
    (void) pnbc_shm_pool_publish(r, false);
}

void pnbc_shm_region_withdraw(shm_region_t *r)
{
    /* Nothing announced (withdrawn when the last start's receives were
     * done): the slots are disarmed already; don't write their lines
     * again, a sender may be polling them. */
    if (!r->published && NULL == r->marker) {
        return;
    }
    /* disarmed, so that a sender remembering the slot does not take it
     * for the start of the same tag 2^26 calls later */
    for (uint32_t k = 0; k < r->nacts && !r->fallback; ++k) {
        ((shm_action_t *) r->acts[k]->tstate.ptr)->slot->armed = 0;
    }
    if (r->published) {
        pnbc_shm_pool_unpublish(r);
    }
    if (NULL != r->marker) {
        (void) unlink(r->marker);
        free(r->marker);
        r->marker = NULL;
    }
}

/* ------------------------------------------------------------------ */
/* The pool's files (common_pnbc_shm_pool.c)                          */
/* ------------------------------------------------------------------ */

char *pnbc_shm_pool_path(const char *dir, const char *name, uint32_t k)
{
    char *path = NULL;
    if (0 > asprintf(&path, "%s/pool.%s%u", dir, name, (unsigned) k)) {
        return NULL;
    }
    return path;
}

/* Map fd's `size` bytes shared; `aligned`: at a 2 MiB boundary (a
 * range twice as large reserved, the file mapped over its aligned part,
 * the rest given back).  MAP_FAILED on failure. */
static void *pool_mmap(int fd, size_t size, bool aligned)
{
    const size_t align = (size_t) 2 << 20;
    if (!aligned) {
        return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    char *r = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (MAP_FAILED == r) {
        return MAP_FAILED;
    }
    char *a = (char *) (((uintptr_t) r + align - 1) & ~(uintptr_t) (align - 1));
    void *base = mmap(a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (MAP_FAILED == base) {
        munmap(r, size + align);
        return MAP_FAILED;
    }
    if (a > r) {
        munmap(r, (size_t) (a - r));
    }
    munmap(a + size, (size_t) (r + align - a));     /* a < r + align: never empty */
    return base;
}

/* Create `path` of `size` bytes, fully allocated (on tmpfs, running out
 * of space must show here, not as SIGBUS later), written under a
 * temporary name and renamed into place; map it. */
void *pnbc_shm_pool_file_create(const char *path, size_t size, bool aligned)
{
    char *tmp = NULL;
    void *base = NULL;
    int fd = -1, err = 0;

    if (0 > asprintf(&tmp, "%s.tmp", path)) {
        errno = ENOMEM;
        return NULL;
    }
    fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        err = errno;
    } else if (0 != (err = posix_fallocate(fd, 0, (off_t) size))) {
        /* err says why */
    } else if (MAP_FAILED == (base = pool_mmap(fd, size, aligned))) {
        err = errno;
        base = NULL;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (NULL != base && 0 != rename(tmp, path)) {
        err = errno;
        munmap(base, size);
        base = NULL;
    }
    if (NULL == base) {
        (void) unlink(tmp);
    }
    free(tmp);
    errno = err;
    return base;
}

/* Map an existing file; its size in *size.  NULL: not there (yet). */
void *pnbc_shm_pool_file_map(const char *path, size_t *size, bool aligned)
{
    struct stat st;
    void *base = NULL;
    int fd = open(path, O_RDWR);

    if (fd < 0) {
        return NULL;
    }
    if (0 == fstat(fd, &st)) {
        *size = (size_t) st.st_size;
        if (0 == st.st_size) {
            base = MAP_FAILED;          /* the "no pool" marker: caller checks size */
        } else {
            base = pool_mmap(fd, (size_t) st.st_size, aligned);
        }
    }
    close(fd);
    return (MAP_FAILED == base && 0 != *size) ? NULL : base;
}
