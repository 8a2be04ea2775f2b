/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's private declarations: the layout of a
 * request's block in the receiver's pool, the per-action state, the slot shape, and the
 * functions its files share.  The protocol is described at the top of
 * common_pnbc_transport_shm.c; the files:
 *
 *   common_pnbc_transport_shm.c  bind, unbind, commit; the transport itself
 *   common_pnbc_shm_file.c       the process's directory, regions (a
 *                                request's block), building the
 *                                receiver's block or its fallback, cleanup
 *   common_pnbc_shm_pool.c       the pool: segments, allocator, directory
 *   common_pnbc_shm_peer.c       a peer's pool seen by a sender
 *   common_pnbc_shm_slot.c       the slot protocol: post/test, finding a
 *                                slot, boxes, streaming, the pml fallback
 *   common_pnbc_shm_copy.c       single copy (offers, process_vm_readv) and
 *                                folding a message into a reduction
 *   common_pnbc_shm_express.c    the express path: a one-box message moved
 *                                by a copy and a flag
 */

#ifndef MCA_COMMON_PNBC_SHM_H
#define MCA_COMMON_PNBC_SHM_H

#include "common_pnbc_transport.h"

#include "ompi/request/request.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/util/proc.h"

#include <stdint.h>

BEGIN_C_DECLS

#define SHM_MAGIC       UINT64_C(0x31636e62702d6d73)   /* "sm-pbnc1" */
#define SHM_LINE        128     /* two cache lines: the adjacent-line
                                   prefetcher moves them as a pair */
#define SHM_TRUNCATED   UINT64_MAX  /* len: the message did not fit */
#define SHM_OFFER       (UINT64_MAX - 1)  /* len: the box holds a shm_offer_t */
#define SHM_WRITTEN     (UINT64_MAX - 2)  /* len: the sender wrote the whole
                                             message into the receiver's
                                             buffer (see pnbc_shm_send_write) */
#define SHM_DEEP        8       /* boxes per slot for one-box messages */
#define SHM_DEEP_LINE   128     /* ... of a line where processes outnumber CPUs */
#define SHM_STREAM_DEPTH 4      /* boxes per slot of a streamed message */
#define SHM_RETAG_PIECES 4      /* a retagged schedule's message of at least
                                   this many times SHM_PRESSED_MIN bytes
                                   (up to a box) travels in this many
                                   pieces, a box each (see slot_shape()) */
#define SHM_FRAG_MIN    1024
#define SHM_STREAM_FRAG_MIN 256 /* > the largest element a fold carries */
#define SHM_PRESSED_MIN 4096    /* a pool under pressure: larger messages
                                   stream through two small boxes ... */
#define SHM_OFFER_MIN   65536   /* ... or, larger still, are offered (see
                                   slot_shape()) */

/* ------------------------------------------------------------------ */
/* A request's block                                                  */
/* ------------------------------------------------------------------ */

typedef struct shm_header_t {
    uint64_t magic;
    uint32_t nslots;
    uint32_t pad;
    /* This incarnation of the block (never 0).  A freed block goes back
     * to the pool and is reused: a sender still waiting for the answer to
     * its offer (see pnbc_shm_send_offer_answered()) after the receiver
     * completed and freed the request sees another number here. */
    volatile uint64_t gen;
} shm_header_t;

typedef struct shm_entry_t {
    int32_t sender;         /* rank in the communicator */
    uint32_t pair_seq;
    uint64_t offset;        /* of the slot, from the start of the block */
    uint64_t capacity;      /* bytes the receiver expects */
    uint64_t depth;         /* boxes in the slot */
    uint64_t frag;          /* bytes per box */
    uint64_t offer;         /* the receiver asks for single copy (see
                               slot_shape()): the sender offers its buffer
                               whenever it lies in one piece */
    /* The receiver invites the sender to write the message into its
     * buffer (pnbc_large_msgs_t.sender_writes): where (0: no invitation),
     * in which process and PID namespace. */
    uint64_t invite_addr;
    uint64_t invite_pid;
    uint64_t invite_ns;
    /* The receiver takes help with an offered message (shared copy, see
     * pnbc_shm_send_offer()): the sender may write its upper part into
     * invite_addr while the receiver reads the lower part. */
    uint64_t help;
    /* The receiver declines single copy for this message
     * (pnbc_shm_offer_floor()): the sender streams it through the boxes. */
    uint64_t declined;
} shm_entry_t;

/* A slot: the receiver's counter, then `depth` boxes; fragment q goes
 * into box q % depth. */
typedef struct shm_slot_t {
    volatile uint64_t consumed;
    volatile uint64_t refused;      /* the receiver cannot take offers */
    /* Retagged schedules (see pnbc_shm_region_announce()): the start this
     * slot is armed for (shm_armed_key(); 0: none), and the fragments it
     * carried before it -- the sender numbers this start's from base + 1. */
    volatile uint64_t armed;
    volatile uint64_t base;
    /* Invited slots: the receiver's post count, stored at each post (its
     * buffer is the message's from then on). */
    volatile uint64_t invited;
    char pad[SHM_LINE - 5 * sizeof(uint64_t)];
} shm_slot_t;

static inline uint64_t shm_armed_key(uint32_t cid, int32_t tag)
{
    return ((uint64_t) cid << 32 | (uint32_t) tag) | UINT64_C(1) << 63;
}

/* A box's data when its len is SHM_OFFER: where the sender's message is
 * (single copy, see pnbc_shm_send_offer()). */
typedef struct shm_offer_t {
    uint64_t pid;
    uint64_t pid_ns;        /* see pid_namespace() */
    uint64_t addr;
    uint64_t bytes;
    /* Shared copy: 0, the receiver reads it all; else it reads the bytes
     * below `split` and the sender writes the rest into its buffer, then
     * sets `helped` to SHM_HELP_DONE (or SHM_HELP_FAILED: the receiver
     * reads them too). */
    uint64_t split;
    volatile uint64_t helped;
} shm_offer_t;

enum { SHM_HELP_PENDING, SHM_HELP_DONE, SHM_HELP_FAILED };

typedef struct shm_box_t {
    volatile uint64_t full;
    uint64_t len;
    uint64_t last;          /* the message's last fragment */
    char data[];            /* frag bytes */
} shm_box_t;

static inline size_t shm_box_size(size_t frag)
{
    size_t bytes = sizeof(shm_box_t) + frag;
    return (bytes + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
}

static inline size_t shm_slot_size(size_t frag, size_t depth)
{
    return sizeof(shm_slot_t) + depth * shm_box_size(frag);
}

/* ------------------------------------------------------------------ */
/* Per-action and shared state                                        */
/* ------------------------------------------------------------------ */

/* A request's block in a receiver's pool (common_pnbc_shm_pool.c): the receiver's
 * own, or a peer's seen by a sender.  Shared (refcount) by the request's actions. */
typedef struct shm_region_t {
    int refs;
    bool owner;             /* ours: give the block back at the last release */
    uint32_t cid;           /* the request's key in the pool's directory */
    int32_t tag;
    void *base;             /* the block; NULL until found (sender) */
    size_t size;
    /* Owner: where the block is, and what the pool counts for it. */
    uint32_t seg;
    uint64_t offset;
    size_t reserved;
    bool reused;            /* not fresh from a new segment: not zero */
    bool published;         /* in the directory */
    bool entry;             /* a directory entry is reserved for it */
    bool fallback;          /* its receives go over pml */
    bool deferred;          /* retagged: no block until its second start */
    bool nopool;            /* retagged: this process has no pool */
    uint32_t starts;        /* retagged, deferred: starts so far */
    uint32_t left;          /* retagged: receives of this start not done */
    char *marker;           /* the fallback marker file made, if any */
    /* Sender: the receiver, and its actions sending to it, in schedule
     * order (they switch to pml together, see region_fall_back()).
     * Owner: its receives, in schedule order (the order of the table). */
    opal_process_name_t peer;
    struct pnbc_action_t **acts;
    uint32_t nacts;
} shm_region_t;

typedef struct shm_action_t {
    shm_region_t *region;
    shm_slot_t *slot;       /* NULL until found (sender: at first map) */
    char *boxes;            /* the slot's first box */
    size_t box_size;
    uint64_t depth;
    uint64_t frag;          /* bytes per box */
    uint64_t seen;          /* sender: the receiver's `consumed`, last read */
    uint64_t q;             /* fragments moved through the slot so far */
    uint64_t moved;         /* bytes of this post moved so far */
    int err;
    uint32_t polls;         /* sender, retagged: polls while unpaired */
    bool offer;             /* sender: offer single copy (see send_offer) */
    bool offered;           /* sender: an offer is out */
    bool done;              /* this post has finished */
    bool offer_asked;       /* sender: the slot's entry asks for an offer */
    bool offer_declined;    /* sender: ... or declines one */
    bool unpaired;          /* sender, retagged: the slot is not yet known
                               to be armed for this start */
    bool fallback;          /* the receiver has no block: pml, see below */
    bool invited;           /* the receiver invites the sender to write
                               (see pnbc_shm_send_write) */
    bool help;              /* shared copy: the receiver takes help with
                               offers (entry's `help`; both sides) */
    bool help_wait;         /* receiver: read its part of a shared offer,
                               waits for the sender's */
    pnbc_fill_t fill;       /* sender: how it fills the boxes */
    uint64_t posts;         /* posts of this action (both sides count) */
    uint64_t invite_addr, invite_pid;   /* sender: where to write (the entry's) */
    uint64_t gen;           /* sender: the block's incarnation at attach */
    const shm_header_t *hdr;    /* sender: that block */
    pnbc_channel_t ch;      /* test() has none: kept for the sender's
                               first map and the fallback */
    size_t bytes;           /* of this side's data */
    uint64_t capacity;      /* sender: the receiver's byte count */
    char *flat;             /* contiguous data, or NULL: use conv */
    opal_convertor_t *conv; /* non-contiguous data, prepared at bind */
    ompi_request_t *req;    /* its PML request when `fallback` */
    /* Receiver folding the message into a reduction (see
     * pnbc_shm_recv_fold()); NULL: copy the data out.  Apart, as few
     * receives fold and many requests may be alive. */
    struct shm_fold_t *fold;
    /* Express path (common_pnbc_shm_express.c): commit found the message
     * fit for it; it takes it (for a sender: once its slot is known). */
    bool xcand;
    bool express;
    bool xwords;            /* ... and its copy is two words, inline */
    /* The counter this side rings after moving a box (a sender after
     * filling one, a receiver after emptying one; common_pnbc_shm_bell.c);
     * NULL: none. */
    volatile uint64_t *bell;
} shm_action_t;

typedef struct shm_fold_t {
    ompi_op_t *op;
    ompi_datatype_t *dtype;
    size_t elsize;
    char *acc;              /* acc = data (op) acc, or */
    char *operand;          /* landing = operand (op) data */
    char carry[64];         /* an element split between two fragments */
    uint64_t count;         /* elements of the whole message */
} shm_fold_t;

typedef struct shm_shape_t {
    size_t frag;            /* bytes per box */
    size_t depth;           /* boxes, a power of two */
    bool offer;             /* ask the sender for single copy */
    bool invite;            /* invite the sender to write (then the boxes
                               carry only the news, or the message if the
                               sender cannot write) */
} shm_shape_t;

/* The receiver's choice of boxes for a message of `bytes` (the sender
 * reads it from the block; slot_shape() in common_pnbc_shm_file.c).
 * Several boxes let a sender start message n while its receiver is
 * still reading n-1: in an exchange (allreduce) each side finishes as
 * soon as it has the other's message, so with one box the faster one
 * would wait for the slower one's read at its next start, a
 * cache-line round trip on the critical path; and a root repeating a
 * bcast runs ahead as it would over an eager PML protocol
 * (docs/design-measurements.md, "Boxes per slot").  Larger messages
 * stream through a few boxes of coll_pnbc_shm_stream_frag_bytes, so a
 * slot's memory does not grow with the message.  As the receiver's
 * pool fills (pnbc_shm_pool_pressure()), its new slots get fewer
 * boxes: 8, then 2, then 1, and messages above SHM_PRESSED_MIN stream
 * through two boxes of 4 KiB, then 2 KiB; above SHM_OFFER_MIN the
 * slot's entry asks the sender to offer its buffer (single copy, read
 * with process_vm_readv -- a system call per message, dearer than two
 * copies below that size, docs/many/pressure-shapes.md -- and folded
 * through a bounce buffer in a reduction; a sender whose data is not
 * in one piece, or a receiver that cannot read it, streams through
 * the two boxes instead).  The pool then holds a request's message in
 * a few KiB however large it is, and the pages both processes touch
 * (their RSS, the first round's page faults) do not grow with the
 * messages: measured in docs/many/.
 */
static inline size_t shm_box_max(const pnbc_channel_t *ch)
{
    const int forced = mca_common_pnbc_params.shm_frag_bytes;
    const size_t box = (forced > 0) ? (size_t) forced : ch->large.box_max;
    return (box < SHM_FRAG_MIN) ? SHM_FRAG_MIN : box;
}

/* More of the job's processes on this node than CPUs (coll_pnbc_oversubscribed)? */
bool pnbc_shm_oversubscribed(void);

/* A sender's fill of a slot's boxes (box) or of a mailbox ring, as the
 * parameters say (pnbc_fill(); common_pnbc_shm_copy.c). */
void pnbc_fill_init(pnbc_fill_t *f, bool box);

/* What a single copy costs here and at the peers (common_pnbc_shm_cost.c;
 * docs/design-measurements.md, "Machines where a single copy is dear").
 * pnbc_shm_offer_floor(): the smallest message a receiver here takes in
 * one copy (offers, invitations, shared copies); smaller ones it declines
 * and they stream through its boxes.  0 (every size the collective's row
 * says) unless a process_vm_readv of 64 KiB takes
 * coll_pnbc_shm_single_copy_dear_ns or more here: then
 * coll_pnbc_shm_single_copy_dear_min_bytes.  Each receiver decides for its
 * own slots and says so in their entries.
 * mca_common_pnbc_modex_send() measures and publishes our cost (MPI_Init,
 * before the modex fence).  pnbc_shm_recv_floor(vpid): the offer floor
 * process vpid (our job, this node; ourselves too) published (0: none) --
 * the same answer on both sides of a message. */
size_t pnbc_shm_offer_floor(void);
size_t pnbc_shm_recv_floor(uint32_t vpid);
/* The offer floor a's receiver published (0: none, or no peer of our job here): both read it. */
size_t pnbc_shm_pair_floor(const pnbc_channel_t *ch, const pnbc_action_t *a);
/* Does ch exchange through boxes (an exchange, coll_pnbc_shm_exchange_boxes)?  Its receiver
 * then declines single copy at every size where the offer floor is not 0 and each process has
 * a CPU (pnbc_shm_declined_below()), as a persistent allreduce's does; other messages below the
 * floor. */
bool pnbc_shm_exchange_boxes(const pnbc_channel_t *ch);
size_t pnbc_shm_declined_below(const pnbc_channel_t *ch, size_t floor);
void pnbc_shm_cost_finalize(void);
/* Slots laid out declining single copy (coll_pnbc_verbose 2). */
extern uint64_t pnbc_shm_declined_slots;

/* Receiver: does it decline single copy for t's message? */
static inline bool shm_recv_declines(const shm_action_t *t)
{
    return t->bytes < pnbc_shm_declined_below(&t->ch, pnbc_shm_offer_floor());
}

/* Is a message of `bytes` one whose copy the sender may share
 * (pnbc_large_msgs_t.shared_copy), whatever the buffers' layouts?  Both
 * sides decide alike (coll_pnbc_shm_shared_copy_min_bytes is equal
 * everywhere). */
static inline bool pnbc_shm_shared_size(const pnbc_channel_t *ch, size_t bytes)
{
    const int min = mca_common_pnbc_params.shm_shared_copy_min_bytes;
    return ch->large.shared_copy && bytes >= (size_t) min && pnbc_shm_shared_possible();
}

/* The largest message of the large mailbox ring at a receiver that published offer
 * floor `floor`: coll_pnbc_nbc_mailbox_large_bytes, or
 * coll_pnbc_nbc_mailbox_declined_bytes if it declines single copy. */
static inline size_t pnbc_mbox_large_payload(size_t floor)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    return (floor > 0 && p->nbc_mailbox_declined_bytes > p->nbc_mailbox_large_bytes)
               ? (size_t) p->nbc_mailbox_declined_bytes : (size_t) p->nbc_mailbox_large_bytes;
}

/* Which mailbox ring carries a retagged schedule's on-node message a of
 * `bytes` (both sides decide alike: the parameters must be equal
 * everywhere): 0 the small ring, 1 the large ring, -1 none (the shm
 * slots, paired per call, or the PML).  The large ring takes the
 * collectives whose senders gain from running ahead
 * (pnbc_large_msgs_t.retag_eager), and every collective's messages to a
 * receiver that declines single copy (a paired slot would stream them,
 * the sender waiting for the receiver's call). */
static inline int pnbc_mbox_tier(const pnbc_channel_t *ch, const pnbc_action_t *a, size_t bytes)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    if (bytes < (size_t) p->shm_retag_min_bytes) {
        return (p->nbc_mailbox_cells > 0) ? 0 : -1;
    }
    if (p->nbc_mailbox_large_cells <= 0) {
        return -1;
    }
    /* a message both sides copy goes paired: the large ring would take
     * two copies, one after the other */
    if (bytes <= (size_t) p->nbc_mailbox_large_bytes && ch->large.retag_eager &&
        !pnbc_shm_shared_size(ch, bytes)) {
        return 1;
    }
    const size_t floor = pnbc_shm_pair_floor(ch, a);
    return (bytes < floor && bytes <= pnbc_mbox_large_payload(floor)) ? 1 : -1;
}

/* ------------------------------------------------------------------ */
/* Helpers every part uses                                            */
/* ------------------------------------------------------------------ */

/* Is `a` a `kind` action bound to this transport? */
static inline bool is_shm(const pnbc_action_t *a, pnbc_action_kind_t kind)
{
    return a->kind == kind && a->transport == &pnbc_transport_shm;
}

/* A sender, once a message is written: ask now for the line its next
 * one goes to (a free unit of a mailbox ring) in exclusive state.  That
 * line was last read by the receiver, a lap ago; a store to it waits for
 * the receiver's copy to be invalidated, and the next call's stores
 * queue behind it: np=2 loops of 8 B nonblocking gathers and reduces
 * spent about half of every call so (docs/nbc-rings.md, "The sender's next line").
 * A hint: nothing depends on it. */
static inline void shm_prefetch_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *) p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Point t at its slot in a mapping: the receiver's counter, `depth` boxes of `frag` bytes. */
static inline void slot_attach(shm_action_t *t, char *slot, uint64_t frag, uint64_t depth)
{
    t->slot = (shm_slot_t *) slot;
    t->boxes = slot + sizeof(shm_slot_t);
    t->box_size = shm_box_size(frag);
    t->depth = depth;
    t->frag = frag;
}

/* The box of fragment q. */
static inline shm_box_t *box_of(const shm_action_t *t, uint64_t q)
{
    return (shm_box_t *) (t->boxes + (q & (t->depth - 1)) * t->box_size);
}

/* After writing what the other side of t polls for (a box filled, or
 * emptied): ring the pair's bell. */
static inline void shm_ring(const shm_action_t *t)
{
    if (NULL != t->bell) {
        pnbc_bell_ring(t->bell);
    }
}

/* Sender: may fragment q go into its box?  Box q % depth last held
 * fragment q - depth: has it been read?  The receiver's counter is read
 * only when the last value seen does not tell: each read is a cache-line
 * transfer, and makes the receiver's next write of it one too. */
static inline bool send_box_free(shm_action_t *t, uint64_t q)
{
    if (t->seen + t->depth < q) {
        t->seen = __atomic_load_n(&t->slot->consumed, __ATOMIC_ACQUIRE);
    }
    return t->seen + t->depth >= q;
}

/* ------------------------------------------------------------------ */
/* Between the files                                                  */
/* ------------------------------------------------------------------ */

/* common_pnbc_transport_shm.c: is rank a process of our node and job
 * (its pool is one we can map)?  May action a of ch take shared memory
 * at all (on, intracommunicator, not ourselves, such a peer)? */
bool pnbc_shm_peer_local(ompi_communicator_t *comm, int rank);
bool pnbc_shm_peer_ok(const pnbc_action_t *a, const pnbc_channel_t *ch);
/* Where a's `bytes` of data are for a copy: *flat (in one piece) or a
 * convertor prepared for it (*conv); false: out of memory. */
bool pnbc_shm_bind_data(const pnbc_action_t *a, size_t bytes, char **flat,
                        opal_convertor_t **conv);

/* common_pnbc_shm_dir.c: the directory of process `name`'s files
 * (malloc'ed; NULL: none), and our own (created at first use). */
char *pnbc_shm_dir_path(const opal_process_name_t *name);
const char *pnbc_shm_own_dir_get(void);
/* The transport's fini, after the pool's: remove our directory. */
void pnbc_shm_own_dir_remove(void);
/* The path of request (cid, tag)'s fallback marker in `dir`. */
char *pnbc_shm_marker_path(const char *dir, uint32_t cid, int32_t tag);
/* Regions: the last release gives the owner's block back to the pool. */
shm_region_t *pnbc_shm_region_new(const pnbc_channel_t *ch, bool owner);
void pnbc_shm_region_release(shm_region_t *r);
/* Receiver: place the nslots shm RECVs of s in a block of the pool and
 * publish it; when that cannot be done, publish the fallback and switch
 * them to pml.  Error only if the senders cannot be told. */
int pnbc_shm_recv_block_build(pnbc_schedule_t *s, const pnbc_channel_t *ch, uint32_t nslots);
/* Sender: is the receiver's fallback marker for r there? */
bool pnbc_shm_marker_exists(const shm_region_t *r);
/* Receiver, retagged schedules: arm every slot for the start under `tag`
 * (its base: its fragment count so far) and announce the block (or the
 * fallback) in the directory under `tag` -- its entry is reserved at
 * commit; withdraw and disarm it once this start's receives are done. */
void pnbc_shm_region_announce(shm_region_t *r, int32_t tag);
void pnbc_shm_region_withdraw(shm_region_t *r);
/* Tell the senders that r's receives go over pml: the directory, or a
 * marker file when it is full.  Error if neither can be written. */
int pnbc_shm_region_announce_fallback(shm_region_t *r);

/* common_pnbc_shm_pool.c: the pool (see there). */
enum {
    PNBC_SHM_POOL_BLOCK,    /* r->base, r->size set */
    PNBC_SHM_POOL_FULL,     /* owner: no room for it */
    PNBC_SHM_POOL_NONE,     /* no pool, or the request fell back */
    PNBC_SHM_POOL_WAIT,     /* sender: not (yet) published */
    PNBC_SHM_POOL_MARKER    /* sender: not published, look for a marker */
};
int pnbc_shm_pool_reserve(shm_region_t *r, size_t size);
bool pnbc_shm_pool_publish(shm_region_t *r, bool fallback);
int pnbc_shm_pool_entry_reserve(shm_region_t *r);
void pnbc_shm_pool_unpublish(shm_region_t *r);
void pnbc_shm_pool_release(shm_region_t *r);
/* Map the pages of r's new block now (a persistent request's). */
void pnbc_shm_pool_prefault(const shm_region_t *r);
int pnbc_shm_pool_find(shm_region_t *r, const opal_process_name_t *name);
int pnbc_shm_pool_pressure(uint32_t cid);
/* The transport's open hook: this process's pool, at MPI_Init. */
void pnbc_shm_pool_open(void);
/* common_pnbc_shm_peer.c, the transport's comm_enable hook: map the pools
 * of comm's other on-node processes (each once per process). */
void pnbc_shm_comm_enable(ompi_communicator_t *comm);
void pnbc_shm_pool_finalize(void);

/* common_pnbc_shm_slot.c: the transport's post and test; a message the
 * receiver carries over pml instead (under `tag`: see its callers). */
int pnbc_shm_fallback_post(pnbc_action_t *a, const pnbc_channel_t *ch, int tag,
                           ompi_request_t **req);
int pnbc_shm_post(pnbc_action_t *a, const pnbc_channel_t *ch);
bool pnbc_shm_test(pnbc_action_t *a, int *err);
/* Receiver: take the fragments that are there; t->done after the last. */
void pnbc_shm_recv_progress(shm_action_t *t);

/* common_pnbc_shm_express.c: the transport's express hooks. */
bool pnbc_shm_express(pnbc_action_t *a);
/* Once t's slot is known (a receiver's at commit, a sender's when found):
 * set t->express (and t->xwords). */
void pnbc_shm_express_ready(shm_action_t *t, bool send);
bool pnbc_shm_xpost(pnbc_action_t *a, int *err);
bool pnbc_shm_xtest(pnbc_action_t *a, int *err);

/* common_pnbc_shm_bell.c: the bells.  Once t is attached to its slot:
 * set the counter it rings (t->bell); the transport's bell hook; free
 * the bells (finalize). */
void pnbc_shm_bell_bind(const pnbc_action_t *a, shm_action_t *t);
pnbc_bell_t *pnbc_shm_bell(pnbc_action_t *a);

/* common_pnbc_shm_copy.c: single copy and folding. */
bool pnbc_shm_send_offer(shm_action_t *t, bool last);
bool pnbc_shm_send_write(shm_action_t *t);
uint64_t pnbc_shm_pid_namespace(void);
bool pnbc_shm_send_offer_answered(shm_action_t *t);
/* pnbc_shm_recv_take_offer(): the message is read, the sender's part
 * is still being written, or the offer was refused (it follows as
 * fragments). */
enum { SHM_TAKE_DONE, SHM_TAKE_PENDING, SHM_TAKE_REFUSED };
int pnbc_shm_recv_take_offer(shm_action_t *t, shm_box_t *box, uint64_t q);
/* At finalize: how many offered messages this process helped copy
 * (coll_pnbc_verbose 2). */
void pnbc_shm_copy_report(void);
/* Receiver: does it take help with offered messages (shared copy)? */
bool pnbc_shm_recv_help(const shm_action_t *t);
void pnbc_shm_recv_fold(shm_action_t *t, const char *data, uint64_t len);
void pnbc_shm_recv_take_fold(pnbc_action_t *a, shm_action_t *t);
shm_fold_t *pnbc_shm_fold_take(pnbc_action_t *a, shm_fold_t *f);
/* Fold `n` whole elements that start `at` bytes into the message:
 * acc = data (op) acc, or landing = operand (op) data (for a user op the
 * 3-buffer form computes source2 (op) source1).  Shared with the mailbox,
 * which folds a whole message from its cell. */
static inline void pnbc_shm_fold_run(const shm_fold_t *f, const char *data, uint64_t at,
                                     uint64_t n, char *landing)
{
    if (NULL != f->acc) {
        ompi_op_reduce(f->op, (void *) data, f->acc + at, (int) n, f->dtype);
    } else {
        ompi_3buff_op_reduce(f->op, (void *) data, f->operand + at, landing + at, (int) n,
                             f->dtype);
    }
}

END_C_DECLS

#endif /* MCA_COMMON_PNBC_SHM_H */
