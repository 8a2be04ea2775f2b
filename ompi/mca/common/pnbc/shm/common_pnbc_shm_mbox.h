/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The mailbox's private declarations (the protocol is described at the
 * top of common_pnbc_transport_mbox.c): the block's layout, the rings as
 * each side sees them, the per-communicator state, and what the
 * transport (common_pnbc_transport_mbox.c) and the mailbox itself
 * (common_pnbc_shm_mbox.c) share.
 */

#ifndef MCA_COMMON_PNBC_SHM_MBOX_H
#define MCA_COMMON_PNBC_SHM_MBOX_H

#include "common_pnbc_shm.h"

BEGIN_C_DECLS

#define MBOX_MAGIC      UINT64_C(0x34786f626d626e70)   /* "pnbmbox4" */
/* A tier's (pnbc_mbox_tier()) block in the directory: under no
 * communicator's context id and no request's tag. */
#define MBOX_CID        UINT32_C(0xfffffffe)
static inline int mbox_tag(int tier)
{
    return PNBC_TAG_FIRST + 1 + tier;
}
/* A ring is a power of two of units; a message takes as many as its
 * header and data need (a unit is a pair of cache lines, see SHM_LINE),
 * and one of more than a unit starts on a page (MBOX_PAGE_UNITS). */
#define MBOX_UNIT       SHM_LINE
#define MBOX_PAGE_UNITS (4096 / MBOX_UNIT)
/* A ring's own lines before its units: `tail` (the receiver's) and
 * `want` (a stuck sender's: kept off the tail's line, which the receiver
 * stores at every message; docs/nbc-rings.md) */
#define MBOX_RING_HEAD  (2 * SHM_LINE)
#define MBOX_UNITS_MAX  (UINT32_C(1) << 16)   /* unless the largest message needs more */
/* the key of a header that only makes the next message start further on
 * (len: the units to pass) */
#define MBOX_SKIP       UINT64_MAX

/* The block: header | table[nrings] | rings; a ring: its `tail` line,
 * its `want` line, then nunits units of MBOX_UNIT bytes. */
typedef struct mbox_header_t {
    uint64_t magic;
    uint32_t nrings;
    uint32_t nunits;
    /* Where a request's block keeps its incarnation (shm_header_t.gen,
     * never 0): a sender remembering the pool block this one reuses
     * reads 0 here and knows that its block is gone. */
    uint64_t not_a_gen;
    uint64_t unit;              /* MBOX_UNIT (both sides must agree) */
    uint64_t payload;           /* the largest message */
    volatile uint64_t wanted;   /* a sender waits for room in its ring */
} mbox_header_t;

typedef struct mbox_entry_t {
    int32_t sender;             /* its vpid */
    uint32_t pad;
    uint64_t offset;            /* of its ring, from the block's start */
} mbox_entry_t;

/* A message's header, at the start of its first unit. */
typedef struct mbox_msg_t {
    volatile uint64_t full;     /* u + 1 once the message at unit u is written */
    uint64_t key;               /* mbox_key(), or MBOX_SKIP */
    uint64_t len;
    uint64_t cid;               /* of the call's communicator */
    char data[];
} mbox_msg_t;

static inline uint64_t mbox_key(int tag, uint32_t pair_seq)
{
    return (uint64_t) (uint32_t) tag << 32 | pair_seq;
}

/* The units a message of len bytes takes: one, or whole pages. */
static inline uint64_t mbox_units(uint64_t len)
{
    const uint64_t k = (sizeof(mbox_msg_t) + len + MBOX_UNIT - 1) / MBOX_UNIT;
    return (k > 1) ? (k + MBOX_PAGE_UNITS - 1) / MBOX_PAGE_UNITS * MBOX_PAGE_UNITS : 1;
}

/* A ring as either side sees it. */
typedef struct mbox_ring_t {
    volatile uint64_t *tail;    /* shared: the receiver's oldest untaken unit */
    volatile uint64_t *want;    /* shared (a line of its own): the tail a
                                   stuck sender waits for */
    char *units;
    uint64_t mask;              /* nunits - 1 */
    size_t payload;             /* the largest message */
    uint64_t next;              /* sender: the next unit to write;
                                   receiver: its oldest untaken message's */
    uint64_t seen;              /* sender: *tail, last read */
    uint64_t *bits;             /* private, a bit per unit.  Receiver: the
                                   message at u is taken (until the tail
                                   passes it).  Sender: unit u holds the
                                   middle of a message (not a header) */
} mbox_ring_t;

typedef struct mbox_spill_t {
    struct mbox_spill_t *next, *prev;
    bool indexed;               /* found through the ring's index */
    uint64_t key;
    uint64_t cid;
    uint64_t len;
    char data[];
} mbox_spill_t;

enum { MBOX_UNKNOWN, MBOX_READY, MBOX_PML, MBOX_BROKEN };

typedef struct mbox_in_t {      /* receiver: one per on-node sender */
    mbox_ring_t ring;
    mbox_spill_t *spill;        /* messages moved aside, oldest first */
    mbox_spill_t *spill_last;
    uint64_t spill_unindexed;   /* of them not in the index (searched in turn) */
    struct mbox_idx_t *idx;     /* the ring's messages by key, once many wait
                                   (common_pnbc_shm_mbox_index.c; NULL before) */
    uint64_t idx_mask, nidx;
    uint64_t scanned;           /* with idx: the ring is indexed up to here */
    uint64_t stall;             /* progress: ring.next + 1 when last seen stuck */
    uint64_t spilled;           /* messages moved aside (coll_pnbc_verbose 2) */
    uint64_t spill_walked;      /* of them passed over in a search of the
                                   list (not in the index; verbose 2) */
    uint64_t idx_takes, idx_probes; /* index lookups, the slots they read (verbose 2) */
} mbox_in_t;

typedef struct mbox_out_t {     /* sender: one per receiver */
    mbox_ring_t ring;
    shm_region_t *region;       /* the receiver's block, once found */
    mbox_header_t *hdr;
    int state;                  /* MBOX_*: where our messages to it go */
    uint32_t stuck;             /* polls that found no room in the ring */
    uint64_t want;              /* the tail last asked for (ring.want) */
    pnbc_fill_t fill;           /* how we fill the ring */
} mbox_out_t;

/* A communicator's use of a tier's rings, which are the process's (one
 * per pair of processes, whatever the communicator). */
typedef struct mbox_comm_t {
    uint32_t cid;
    int tier;                   /* pnbc_mbox_tier(): which rings */
    int refs;                   /* the communicator + bound actions */
    bool live;                  /* the communicator is not freed */
    struct mbox_comm_t *next;
} mbox_comm_t;

/* A tier's rings of this process, shared by its communicators
 * (common_pnbc_shm_mbox_state.c). */
typedef struct mbox_job_t {
    int own_state;              /* MBOX_UNKNOWN until built */
    shm_region_t *own;
    int nprocs;                 /* MPI_COMM_WORLD's size */
    mbox_in_t **in;             /* by the sender's vpid */
    mbox_out_t **out;           /* by the receiver's vpid */
} mbox_job_t;

/* common_pnbc_shm_mbox_state.c: the states, under pnbc_mbox_lock (taken
 * after the engine's and before the pool's). */
extern pnbc_lock_t pnbc_mbox_lock;
extern mbox_comm_t *pnbc_mbox_comms;
extern mbox_job_t pnbc_mbox_jobs[2];

/* common_pnbc_shm_mbox.c.  A tier's block under (MBOX_CID, its tag), ours
 * (owner) or a peer's; place ours and publish it (or the fallback), the
 * in-states of j pointing into it (caller holds pnbc_mbox_lock). */
shm_region_t *pnbc_mbox_job_region(int tier, bool owner);
void pnbc_mbox_own_build(mbox_job_t *j, int tier);

/* common_pnbc_shm_mbox_state.c.  The per-communicator state of a tier: the
 * first bind makes it (receiver: and the process's block, at the first
 * bind of all), each bound action holds a reference; comm_free drops the
 * communicator's; the rings live until finalize (pnbc_mbox_fini()). */
/* The action's ring: *out (SEND) or *in (RECV; NULL: our block falls back
 * to pml) for its peer. */
mbox_comm_t *pnbc_mbox_comm_hold(const pnbc_channel_t *ch, const pnbc_action_t *a, int tier,
                                 mbox_out_t **out, mbox_in_t **in);
void pnbc_mbox_comm_release(mbox_comm_t *mc);
void pnbc_mbox_comm_free(uint32_t cid);
void pnbc_mbox_fini(void);
/* Sender: where do our messages to o go (looked up until known)? */
int pnbc_mbox_out_state(mbox_out_t *o, const mbox_comm_t *mc, int me, int peer);
/* Sender: write a message into o's ring; false: no room yet. */
bool pnbc_mbox_write(mbox_out_t *o, uint64_t key, uint32_t cid, const char *flat,
                     opal_convertor_t *conv, size_t bytes, int *err);
/* Receiver: find the message `key` from n; calls deliver(arg, data,
 * len) and returns true once it is there. */
bool pnbc_mbox_take(mbox_in_t *n, uint64_t key, uint32_t cid,
                    void (*deliver)(void *arg, const char *data, uint64_t len), void *arg);
/* common_pnbc_shm_mbox_index.c: does n keep an index (made once a search
 * has passed over `passed` messages, MBOX_INDEX_MIN at least)?  Note
 * where a message is (false: no room): at unit v of the ring, or moved
 * aside (v: its mbox_spill_t); take where a noted one is (and forget it;
 * MBOX_AT_NONE: not noted). */
#define MBOX_INDEX_MIN 16
enum { MBOX_AT_NONE, MBOX_AT_UNIT, MBOX_AT_SPILL };
bool pnbc_mbox_index_want(mbox_in_t *n, unsigned passed);
bool pnbc_mbox_index_note(mbox_in_t *n, uint64_t key, uint32_t cid, int at, uint64_t v);
int pnbc_mbox_index_take(mbox_in_t *n, uint64_t key, uint32_t cid, uint64_t *v);
/* Engine progress: move messages aside from rings whose sender waits. */
void pnbc_mbox_progress(void);

END_C_DECLS

#endif /* MCA_COMMON_PNBC_SHM_MBOX_H */
