/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * common/pnbc: the planned-communication engine shared by pnbc's clients
 * (the coll/pnbc component: persistent collectives; libpnbc, the MPI
 * extension: partitioned communication).
 *
 * core/:
 *   common_pnbc_schedule.[ch]  the typed schedule (IR) and its builder
 *   common_pnbc_commit.c       commit: addresses, transports, peepholes
 *   common_pnbc_exec.c         the executor (knows no client)
 *   common_pnbc_transport.[ch], common_pnbc_transport_pml.c   the
 *                              transports' interface and registry, pml
 *   common_pnbc_request.[ch]   the request core: one req_start for every
 *                              kind of pnbc request, one progress loop
 *   common_pnbc_engine.c       engine state, parameters, init/fini
 *   common_pnbc_copy.c         the data path's non-temporal copy
 * shm/: the shared-memory transports, common_pnbc_transport_shm.c,
 *   common_pnbc_transport_mbox.c and common_pnbc_shm*.{h,c}
 * here: this header and the compatibility layer, common_pnbc_compat.[ch]
 *
 * This header holds what the whole engine shares: its parameters (the
 * coll component registers them as coll_pnbc_* MCA variables; without it
 * they keep their defaults), its lock and active list, the tag windows,
 * and small helpers every client needs.
 */

#ifndef MCA_COMMON_PNBC_H
#define MCA_COMMON_PNBC_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"
#include "common_pnbc_compat.h"
#include "opal/mca/base/mca_base_var.h"

#include <pthread.h>
#include <string.h>

BEGIN_C_DECLS

/* ------------------------------------------------------------------ */
/* Parameters                                                         */
/* ------------------------------------------------------------------ */

typedef struct pnbc_engine_params_t {
    int verbose;
    int shm;            /* shm transport on (coll_pnbc_shm) */
    int shm_max_bytes;  /* largest message it carries (coll_pnbc_shm_max_bytes) */
    int shm_frag_bytes; /* messages up to this size take one box
                           (coll_pnbc_shm_frag_bytes; 0: per client) */
    int shm_stream_frag_bytes; /* larger ones stream through boxes this
                                  big (coll_pnbc_shm_stream_frag_bytes) */
    int shm_single_copy;/* ...or go in one copy, process_vm_readv */
    int shm_nt_min_bytes;   /* a sender fills boxes of this many bytes up
                               to shm_nt_max_bytes always with
                               non-temporal stores
                               (coll_pnbc_shm_nt_*; 0: never;
                               pnbc_fill()), ... */
    int shm_nt_max_bytes;
    int shm_nt_ratio;       /* ...other messages of at least
                               shm_nt_measured_min_bytes while it
                               measures its ordinary stores this many
                               times dearer (0: always) */
    int shm_nt_measured_min_bytes;
    int shm_exchange_boxes; /* allgather and alltoall exchange through
                               boxes filled as measured where single copy
                               is dear (coll_pnbc_shm_exchange_boxes) */
    size_t shm_pool_comm_bytes; /* a communicator's share of a process's
                                   shm pool (coll_pnbc_shm_pool_comm_bytes) */
    size_t shm_pool_node_bytes; /* the job's pools on a node together */
    size_t shm_pool_step_bytes; /* a pool grows by segments this big */
    int shm_pool_entries;       /* requests a pool's directory holds */
    size_t shm_prefault_max_bytes;  /* a persistent request's new block of
                                       at most this many bytes gets its
                                       pages mapped at init
                                       (coll_pnbc_shm_prefault_max_bytes;
                                       0: never) */
    int shm_retag_min_bytes;    /* retagged schedules (nonblocking calls)
                                   take shm from this size on
                                   (coll_pnbc_nbc_shm_min_bytes) */
    int nbc_mailbox_cells;      /* smaller ones go through a ring per pair
                                   of processes with room for this many of
                                   the largest (coll_pnbc_nbc_mailbox_cells;
                                   0: pml) */
    int nbc_mailbox_large_cells;    /* ... and messages of collectives whose
                                       senders should run ahead
                                       (pnbc_large_msgs_t.retag_eager) up to
                                       nbc_mailbox_large_bytes through a ring
                                       with room for this many (0: paired) */
    int nbc_mailbox_large_bytes;
    int nbc_mailbox_declined_bytes; /* the large ring's largest message at a receiver
                                       that declines single copy
                                       (pnbc_shm_offer_floor) */
    int nbc_single_copy_min_bytes;  /* a retagged schedule's receiver asks
                                       for single copy from this size on
                                       (coll_pnbc_nbc_single_copy_min_bytes;
                                       0: never) */
    int shm_shared_copy_min_bytes;  /* an offered message of at least
                                       this many bytes is copied by both
                                       sides, half each, where the
                                       receiver's buffer is in one piece
                                       (coll_pnbc_shm_shared_copy_min_bytes;
                                       0: never) */
    int shm_single_copy_dear_ns;    /* a process_vm_readv of 64 KiB taking
                                       this many ns makes single copy dear
                                       here ... */
    int shm_single_copy_dear_min_bytes; /* ... and receivers then take
                                           single copy only from this size
                                           on (pnbc_shm_offer_floor) */
    int oversubscribed;         /* more of the job's processes on the node
                                   than CPUs: -1 find out, 0 no, 1 yes
                                   (coll_pnbc_oversubscribed) */
    int progress_park_min;      /* from this many active requests on,
                                   those waiting on a bell are parked
                                   (coll_pnbc_progress_park_min; 0:
                                   never) */
} pnbc_engine_params_t;

OMPI_DECLSPEC extern pnbc_engine_params_t mca_common_pnbc_params;

/* Can senders share the copies of their offered messages here
 * (coll_pnbc_shm_shared_copy_min_bytes, and a CPU per process:
 * common_pnbc_shm_copy.c)?  The same on every process of a node, so both
 * sides of a message shape it alike; each side's
 * coll_pnbc_shm_single_copy then decides whether it takes part. */
OMPI_DECLSPEC bool pnbc_shm_shared_possible(void);

/* ------------------------------------------------------------------ */
/* Engine state                                                       */
/* ------------------------------------------------------------------ */

struct pnbc_request_t;

/*
 * A bell: counters that other processes advance after making progress
 * possible for some in-flight actions -- a transport rings one after it
 * writes what an action polls for, and says which bell an action waits
 * on (pnbc_transport_t.bell).  While many requests are active, a request
 * whose in-flight actions all wait on one bell is parked on it and polled
 * again only once it has rung, so a progress pass costs what can have
 * advanced plus a load per bell, not a poll per active request
 * (common_pnbc_progress.c).
 */
#define PNBC_BELL_CTRS 2
typedef struct pnbc_bell_t {
    const volatile uint64_t *ctr[PNBC_BELL_CTRS];  /* NULL: unused */
    uint64_t seen[PNBC_BELL_CTRS];      /* their values when last read */
    struct pnbc_request_t *parked;      /* through pnbc_request_t.next/prev */
    struct pnbc_bell_t *next;           /* in pnbc_engine_t.bells */
    bool listed;
} pnbc_bell_t;

/* The bell of actions whose transport calls back when they complete (PML
 * requests): it never rings; the callback rings the request's waker. */
OMPI_DECLSPEC extern pnbc_bell_t pnbc_bell_callback;

/* A request's waker: a transport's completion callback rings it, which
 * queues it (once) on the engine's wake list, and the next progress pass
 * polls that request if it is parked -- O(callbacks), not O(parked). */
typedef struct pnbc_waker_t {
    struct pnbc_waker_t *next;          /* in pnbc_engine_t.wake */
    bool queued;
} pnbc_waker_t;

/* From any thread, whatever locks it holds. */
OMPI_DECLSPEC void pnbc_waker_ring(pnbc_waker_t *w);

/* Ring a counter of a bell (its only writer is this process). */
static inline void pnbc_bell_ring(volatile uint64_t *ctr)
{
    if (opal_using_threads()) {
        (void) __atomic_add_fetch(ctr, 1, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(ctr, *ctr + 1, __ATOMIC_RELEASE);
    }
}

/* Has b rung since it was last read?  What it guards is visible after a
 * true answer (acquire). */
static inline bool pnbc_bell_rang(pnbc_bell_t *b)
{
    bool rang = false;
    for (int i = 0; i < PNBC_BELL_CTRS; ++i) {
        if (NULL != b->ctr[i]) {
            const uint64_t v = __atomic_load_n(b->ctr[i], __ATOMIC_ACQUIRE);
            rang |= (v != b->seen[i]);
            b->seen[i] = v;
        }
    }
    return rang;
}

/* A transport gives a bell a counter it did not have: the next reading
 * tells it has rung (nothing parked on it can have relied on it). */
static inline void pnbc_bell_add(pnbc_bell_t *b, int i, const volatile uint64_t *ctr)
{
    b->ctr[i] = ctr;
    b->seen[i] = ~*ctr;
}

/* The bell of process `rank` of comm (its remote group): one per process
 * of our job, and one for every other process; the shared-memory
 * transport gives it its counters.  NULL: out of memory.
 * Any context (the table has its own lock).  Freed with the engine
 * (pnbc_bells_fini). */
OMPI_DECLSPEC pnbc_bell_t *pnbc_bell_of(ompi_communicator_t *comm, int rank);
OMPI_DECLSPEC void pnbc_bells_fini(void);

typedef struct pnbc_engine_t {
    /* Requests that are started and not yet complete (intrusive list
     * through pnbc_request_t.next/prev), but for those parked on a bell.
     * The progress callback walks only this list and the bells, so it
     * costs two loads when no request is active. */
    struct pnbc_request_t *active_head;
    pnbc_bell_t *bells;     /* bells with requests parked (or just had) */
    pnbc_waker_t *wake;     /* wakers rung since the last pass */
    uint32_t nactive;       /* started and not complete, parked or not */
    uint32_t passes;        /* progress passes while some are parked */
    opal_mutex_t lock;  /* the active list, every request's execution
                           state, and clients' matching state */
    int users;          /* clients holding the engine (init/fini) */
    bool progress_registered;
} pnbc_engine_t;

OMPI_DECLSPEC extern pnbc_engine_t mca_common_pnbc_engine;

/* A client takes the engine (idempotent per call pair; the first one
 * sets it up and registers the progress callback) and releases it; the
 * last release removes the shared-memory files left and unregisters. */
OMPI_DECLSPEC int mca_common_pnbc_init(void);
OMPI_DECLSPEC void mca_common_pnbc_fini(void);
/* A client that first needs the engine in an MPI call -- libpnbc (a
 * channel bind; on Open MPI 4.1 a partitioned init), the part component
 * (a partitioned init: Open MPI 5.0 never finalizes its part framework)
 * -- takes it here, with its parameters registered, once for all such
 * clients, until MPI_Finalize deletes MPI_COMM_SELF's attributes. */
OMPI_DECLSPEC int mca_common_pnbc_hold_until_finalize(void);
/* One MCA parameter of a table of them: its name (after the prefix of
 * whoever registers it), help text, type, info level, scope and storage,
 * whose initial value is the default (the engine's table, the coll
 * component's). */
typedef struct pnbc_param_t {
    const char *name;
    const char *help;
    mca_base_var_type_t type;
    mca_base_var_info_lvl_t level;
    mca_base_var_scope_t scope;
    void *storage;
} pnbc_param_t;

/* The engine's MCA parameters (common_pnbc_*, common_pnbc_params.c):
 * every client registers them with its own and deregisters at close. */
OMPI_DECLSPEC int mca_common_pnbc_register(void);
OMPI_DECLSPEC void mca_common_pnbc_deregister(void);
/* Register the progress callback if it is not yet (every request's setup
 * calls this). */
OMPI_DECLSPEC int mca_common_pnbc_progress_needed(void);
/* What the node's other processes must know of this one (the cost of a
 * single copy here, common_pnbc_shm_cost.c): called in MPI_Init before
 * the modex fence, by the component that opens first. */
OMPI_DECLSPEC void mca_common_pnbc_modex_send(void);

/* The engine's own locks (shared-memory directory, pool, mailbox;
 * channels and partitioned matching): taken only where threads may call
 * MPI at once (opal_using_threads(), the rule OPAL_THREAD_LOCK follows).
 * Otherwise one thread at a time calls MPI and they cost a flag: `held`
 * still makes pnbc_trylock() refuse a lock its own caller holds (the
 * progress callback, run from inside a call that holds one). */
typedef struct pnbc_lock_t {
    pthread_mutex_t mutex;
    bool held;
} pnbc_lock_t;

#define PNBC_LOCK_INITIALIZER { PTHREAD_MUTEX_INITIALIZER, false }

static inline void pnbc_lock(pnbc_lock_t *l)
{
    if (opal_using_threads()) {
        pthread_mutex_lock(&l->mutex);
    }
    l->held = true;
}

static inline void pnbc_unlock(pnbc_lock_t *l)
{
    l->held = false;
    if (opal_using_threads()) {
        pthread_mutex_unlock(&l->mutex);
    }
}

static inline bool pnbc_trylock(pnbc_lock_t *l)
{
    if (opal_using_threads()) {
        if (0 != pthread_mutex_trylock(&l->mutex)) {
            return false;
        }
    } else if (l->held) {
        return false;
    }
    l->held = true;
    return true;
}

static inline void pnbc_engine_lock(void)
{
    OPAL_THREAD_LOCK(&mca_common_pnbc_engine.lock);
}

static inline void pnbc_engine_unlock(void)
{
    OPAL_THREAD_UNLOCK(&mca_common_pnbc_engine.lock);
}

/* ------------------------------------------------------------------ */
/* Tags                                                               */
/* ------------------------------------------------------------------ */

/*
 * pnbc's traffic must never match the user's (tags >= 0), tuned's and
 * basic's blocking collectives (-10..-26), libnbc's nonblocking ones
 * (-27 .. -INT_MAX/2) or the neighbourhood/ucc tags below them.  The only
 * remaining space is the window Open MPI reserves for coll/hcoll, which
 * is not built into this Open MPI (and uses the top of its window only);
 * pnbc takes windows deep inside it:
 *
 *   collectives   PNBC_TAG_FIRST - [0, 2^27)          one tag per request
 *   their local-group traffic  PNBC_TAG_FIRST - [2^27, 2^28)
 *   nonblocking calls' mailbox messages when the receiver has no mailbox
 *                              PNBC_TAG_FIRST + 2^20 + (0, 2^26] (small
 *                              ring) and + (2^26, 2^27] (large ring): the
 *                              call's tag moved above the collective window
 *                              (pnbc_mbox_fallback_tag), apart from every
 *                              other transport's messages of the call
 *   partitioned handshakes     PNBC_PART_TAG_HANDSHAKE
 *   partitioned data           PNBC_PART_TAG_FIRST - [0, 2^28): one
 *                              window of PNBC_PART_UNITS tags per receive
 *   channels                   handshakes and data below those
 *                              (ompi/mpiext/pnbc/c/chan.h, which checks
 *                              that they overlap none of these)
 */
#define PNBC_TAG_FIRST  (-1300000000)
#define PNBC_TAG_SPAN   (1u << 27)
#define PNBC_PART_TAG_HANDSHAKE (-1590000000)
#define PNBC_PART_TAG_FIRST     (-1600000000)
#define PNBC_PART_UNITS         1024u       /* messages per request, at most */
#define PNBC_PART_IDS           (1u << 17)  /* live receive requests per process:
                                               tags in [0, 2^27), their shm fallback
                                               mirror (pnbc_local_tag) in [2^27, 2^28) */

/* The mailbox transport's pml fallback (common_pnbc_transport_mbox.c):
 * its own tags, so that those messages can never match another
 * transport's message of the same call posted in another order. */
#define PNBC_MBOX_FALLBACK_SHIFT ((int) PNBC_TAG_SPAN + (1 << 20))
static inline int pnbc_mbox_fallback_tag(int call_tag, int tier)
{
    return call_tag + PNBC_MBOX_FALLBACK_SHIFT + tier * (int) (PNBC_TAG_SPAN / 2);
}

/* On an intercommunicator, traffic inside the local group travels on
 * comm->c_local_comm.  A pnbc request created on that communicator
 * itself would draw its tag from the upper half of the collective window,
 * so local-group traffic mirrors the request's tag into the lower half,
 * which no request tag occupies. */
static inline int pnbc_local_tag(int request_tag)
{
    return request_tag - (int) PNBC_TAG_SPAN;
}

/* ------------------------------------------------------------------ */
/* Helpers every client needs                                         */
/* ------------------------------------------------------------------ */

/* Largest power of two <= n (n >= 1). */
static inline int pnbc_pow2_floor(int n)
{
    int p = 1;
    while (p <= n / 2) {
        p *= 2;
    }
    return p;
}

/* Extent of a datatype (0 for NULL). */
static inline ptrdiff_t pnbc_extent(ompi_datatype_t *dtype)
{
    ptrdiff_t lb = 0, extent = 0;
    if (NULL != dtype) {
        ompi_datatype_get_extent(dtype, &lb, &extent);
    }
    return extent;
}

/* Packed size of a datatype in bytes (0 for NULL). */
static inline size_t pnbc_type_size(ompi_datatype_t *dtype)
{
    size_t size = 0;
    if (NULL != dtype) {
        ompi_datatype_type_size(dtype, &size);
    }
    return size;
}

static inline bool pnbc_op_commutative(ompi_op_t *op)
{
    return NULL == op || ompi_op_is_commute(op);
}

/* memcpy for the data path.  glibc copies 2 KiB .. 512 KiB with `rep
 * movsb`; on CPUs with fast short rep movs (AMD EPYC here) that runs up
 * to 25 times slower when the destination lies 1..63 bytes after the
 * source modulo 4 KiB (the loads then alias the copy's own recent
 * stores) -- a distance that consecutive malloc()ed buffers of a multiple
 * of 4 KiB have.  Those copies go in 2 KiB pieces, which glibc does with
 * vector moves (docs/design-measurements.md, "Copies just past 4 KiB"). */
#define PNBC_COPY_PIECE 2048
#define PNBC_COPY_PIECES_MAX (512 * 1024)

static inline void pnbc_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes - 8 <= 8) {       /* 8..16 bytes (one double, a pair): two words */
        uint64_t head, tail;
        memcpy(&head, src, 8);
        memcpy(&tail, (const char *) src + bytes - 8, 8);
        memcpy(dst, &head, 8);
        memcpy((char *) dst + bytes - 8, &tail, 8);
        return;
    }
    const uintptr_t d = ((uintptr_t) dst - (uintptr_t) src) & 4095;
    if (bytes <= PNBC_COPY_PIECE || bytes > PNBC_COPY_PIECES_MAX || 0 == d || d >= 64) {
        memcpy(dst, src, bytes);
        return;
    }
    char *to = (char *) dst;
    const char *from = (const char *) src;
    for (size_t at = 0; at < bytes; at += PNBC_COPY_PIECE) {
        size_t piece = (bytes - at < PNBC_COPY_PIECE) ? bytes - at : PNBC_COPY_PIECE;
        /* hidden from the compiler: knowing it at most 2 KiB, GCC copies
         * it inline with `rep movsq`, as slow at such a distance as
         * glibc's `rep movsb` (np=2 alltoall 64 KiB: 15% of the time) */
        __asm__("" : "+r"(piece));
        memcpy(to + at, from + at, piece);
    }
}

/* memcpy with non-temporal stores (whole lines are written without
 * being fetched first), then an sfence: they are weakly ordered, and the
 * store that publishes the data must not pass them (common_pnbc_copy.c;
 * its use: pnbc_fill()). */
void pnbc_copy_nt(void *dst, const void *src, size_t bytes);

/* How one sender fills one stretch of shared memory another process
 * reads (a slot's boxes, a mailbox ring): a box of
 * coll_pnbc_shm_nt_min_bytes to _max_bytes with non-temporal stores, any
 * other message of at least coll_pnbc_shm_nt_measured_min_bytes with
 * them while the sender measures its ordinary stores
 * coll_pnbc_shm_nt_ratio times as dear (0: always), the other way tried
 * now and then; smaller messages with pnbc_copy() (common_pnbc_copy.c).
 * Set up by pnbc_fill_init() (common_pnbc_shm.h). */
typedef struct pnbc_fill_t {
    size_t from;                /* the least bytes that may take non-temporal
                                   stores (SIZE_MAX: none may) */
    bool box;
    bool nt;                    /* the way in use */
    uint8_t samples[2];         /* fills measured each way (up to 2) */
    uint32_t since;             /* fills since the other way was tried */
    uint32_t cost[2];           /* ticks per KiB, smoothed: ordinary,
                                   non-temporal */
} pnbc_fill_t;

void pnbc_fill_measured(pnbc_fill_t *f, void *dst, const void *src, size_t bytes);

/* Small messages (most of a mailbox ring's) are copied here, inline, as
 * before fills were measured. */
static inline void pnbc_fill(pnbc_fill_t *f, void *dst, const void *src, size_t bytes)
{
    if (bytes < f->from) {
        pnbc_copy(dst, src, bytes);
    } else {
        pnbc_fill_measured(f, dst, src, bytes);
    }
}

/* Fills with non-temporal stores so far (coll_pnbc_verbose 2). */
uint64_t pnbc_fill_nt_count(void);

END_C_DECLS

#endif /* MCA_COMMON_PNBC_H */
