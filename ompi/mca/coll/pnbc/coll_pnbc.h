/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * coll/pnbc: persistent and nonblocking collectives for Open MPI.
 *
 * Every *_init call compiles the chosen algorithm into a typed schedule
 * (common_pnbc_schedule.h) that lives in the request; MPI_Start runs it
 * through the engine's generic executor (common_pnbc_exec.c).  Nothing is
 * planned, allocated or looked up at start time.
 *
 * Every nonblocking call (MPI_I<coll>) takes the same path to a committed
 * schedule, but through a per-communicator cache keyed by its arguments
 * (coll_pnbc_cache.c): a repeated call starts the schedule built for an
 * earlier one (coll_pnbc_nbc.c).
 *
 * This header holds what the component, the module and the collective
 * entry points share: the component and module types, the MCA
 * parameters, the list of collectives, and the argument block every
 * *_init slot fills in.
 */

#ifndef MCA_COLL_PNBC_H
#define MCA_COLL_PNBC_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"
#include "ompi/mca/common/pnbc/common_pnbc.h"

BEGIN_C_DECLS

/* ------------------------------------------------------------------ */
/* Component                                                          */
/* ------------------------------------------------------------------ */

typedef struct mca_coll_pnbc_component_t {
    PNBC_COLL_COMPONENT_T super;

    /* MCA parameters */
    int priority;
    int segsize;        /* default pipeline segment, bytes (0: algorithm's own) */
    int cache_entries;  /* nonblocking schedule cache: instances per communicator */
    int cache_bytes;    /* ... and their bytes (schedules, temporaries, keys) */
    int cache_probation;    /* ... of which at most this many idle instances
                               whose arguments came once (0: no bound) */
    /* the engine's parameters are registered here too, with their
     * storage in mca_common_pnbc_params (common_pnbc.h) */
} mca_coll_pnbc_component_t;

OMPI_DECLSPEC extern mca_coll_pnbc_component_t mca_coll_pnbc_component;

/* ------------------------------------------------------------------ */
/* Collective descriptions                                            */
/* ------------------------------------------------------------------ */

/*
 * Every persistent collective pnbc knows, once:
 *
 *     X(ID, name, groups, large, pace)
 *
 *   ID      pnbc_coll_t constant PNBC_<ID>
 *   name    the MPI name, lower case, without MPI_ and _init: Open MPI's
 *           slot coll_<name>_init, served by mca_coll_pnbc_<name>_init
 *           (coll_pnbc_entry.c) with the algorithms of
 *           pnbc_<name>_algorithms[]; MCA variable coll_pnbc_<name>_algorithm
 *   groups  INTER: also on intercommunicators, with the algorithms of
 *           pnbc_inter_<name>_algorithms[]; INTRA: intracommunicators only
 *   large   how its on-node messages travel by size (pnbc_large_msgs_t):
 *             PNBC_LARGE_PML(box)            up to box bytes through one
 *                                            shm box, larger ones the PML
 *             PNBC_LARGE_SINGLE_COPY(box, max)  ... larger ones up to max
 *                                            through shm in one copy
 *                                            (process_vm_readv)
 *             PNBC_LARGE_SENDER_WRITES(box)  ... larger ones written by
 *                                            their sender into the
 *                                            receiver's buffer in one copy
 *                                            (process_vm_writev)
 *             PNBC_LARGE_STREAMED(box)       ... larger ones streamed
 *                                            through shm boxes (and folded
 *                                            into reductions from them)
 *             PNBC_LARGE_PML_CHAINED(box)    as PNBC_LARGE_PML; and on
 *                                            an oversubscribed node its
 *                                            nonblocking calls stream
 *                                            instead of reading in one
 *                                            copy (pnbc_large_msgs_t.chained)
 *             PNBC_LARGE_PML_EAGER(box),     as PNBC_LARGE_PML / _STREAMED;
 *             PNBC_LARGE_STREAMED_EAGER(box) and their nonblocking calls'
 *                                            messages up to
 *                                            coll_pnbc_nbc_mailbox_large_bytes
 *                                            take the mailbox's large cells
 *                                            (pnbc_large_msgs_t.retag_eager)
 *   pace    LOCKSTEP: on an intracommunicator no process completes a start
 *           before every other has started it (each one's result needs
 *           everyone's data), so a sender is never more than one start
 *           ahead of its receiver and a slot has two boxes, not eight
 *           (pnbc_large_msgs_t.lockstep); AHEAD: a sender may run ahead
 *           (a root, a scan's first ranks, a v-variant's zero counts)
 *
 * The enum, the slot declarations and the module's slot filling
 * (coll_pnbc_module.c), the algorithm table declarations
 * (coll_pnbc_algorithms.h), and the collective table of
 * coll_pnbc_select.c (names, tables, MCA variables, large messages) are
 * all generated from this list.
 *
 * Large messages: boxes (copy in, copy out, eight boxes deep so that
 * senders run ahead) up to a size, then what was measured faster, which
 * depends on what the collective does with the data next: the numbers
 * are in docs/design-measurements.md ("How each collective's large
 * on-node messages travel"); re-measure there before changing a row.
 */
#define PNBC_COLLECTIVES(X) \
    X(BARRIER,              barrier,              INTER, PNBC_LARGE_PML(16384), LOCKSTEP) \
    X(BCAST,                bcast,                INTER, PNBC_LARGE_PML_EAGER_SHARED(65536, 32768), AHEAD) \
    X(REDUCE,               reduce,               INTER, PNBC_LARGE_STREAMED_EAGER(65536), AHEAD) \
    X(ALLREDUCE,            allreduce,            INTER, PNBC_LARGE_PML_CHAINED(65536), LOCKSTEP) \
    X(GATHER,               gather,               INTER, PNBC_LARGE_SENDER_WRITES(32768), AHEAD) \
    X(GATHERV,              gatherv,              INTER, PNBC_LARGE_SENDER_WRITES(32768), AHEAD) \
    X(SCATTER,              scatter,              INTER, PNBC_LARGE_PML(16384), AHEAD) \
    X(SCATTERV,             scatterv,             INTER, PNBC_LARGE_PML(16384), AHEAD) \
    X(ALLGATHER,            allgather,            INTER, PNBC_LARGE_EXCHANGE(16384, 65536), LOCKSTEP) \
    X(ALLGATHERV,           allgatherv,           INTER, PNBC_LARGE_SINGLE_COPY(16384, 65536), AHEAD) \
    X(ALLTOALL,             alltoall,             INTER, PNBC_LARGE_EXCHANGE(16384, SIZE_MAX), LOCKSTEP) \
    X(ALLTOALLV,            alltoallv,            INTER, PNBC_LARGE_SINGLE_COPY(16384, SIZE_MAX), AHEAD) \
    X(ALLTOALLW,            alltoallw,            INTER, PNBC_LARGE_SINGLE_COPY(16384, SIZE_MAX), AHEAD) \
    X(REDUCE_SCATTER,       reduce_scatter,       INTER, PNBC_LARGE_PML(16384), LOCKSTEP) \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, INTER, PNBC_LARGE_PML(16384), LOCKSTEP) \
    X(SCAN,                 scan,                 INTRA, PNBC_LARGE_PML(16384), AHEAD) \
    X(EXSCAN,               exscan,               INTRA, PNBC_LARGE_PML(16384), AHEAD) \
    X(NEIGHBOR_ALLGATHER,   neighbor_allgather,   INTRA, PNBC_LARGE_PML(16384), AHEAD) \
    X(NEIGHBOR_ALLGATHERV,  neighbor_allgatherv,  INTRA, PNBC_LARGE_PML(16384), AHEAD) \
    X(NEIGHBOR_ALLTOALL,    neighbor_alltoall,    INTRA, PNBC_LARGE_PML(16384), AHEAD) \
    X(NEIGHBOR_ALLTOALLV,   neighbor_alltoallv,   INTRA, PNBC_LARGE_PML(16384), AHEAD) \
    X(NEIGHBOR_ALLTOALLW,   neighbor_alltoallw,   INTRA, PNBC_LARGE_PML(16384), AHEAD)

/* pnbc_large_msgs_t initialisers: up to box_max bytes through one box,
 * larger ones through the PML (shm_max 0) or shm (up to shm_max); the
 * flags not named are false.  _SHARED: where senders can share the copy
 * (mca_coll_pnbc_large_msgs()), up to shared_box bytes through one box
 * and larger ones offered, the sender copying half.  _EXCHANGE: as
 * _SINGLE_COPY, and every process copies at once (see
 * pnbc_large_msgs_t.exchange). */
#define PNBC_LARGE_PML(box)              { .box_max = (box), .shm_max = 0 }
#define PNBC_LARGE_PML_CHAINED(box)      { .box_max = (box), .shm_max = 0, .chained = true }
#define PNBC_LARGE_PML_EAGER(box)        { .box_max = (box), .shm_max = 0, .retag_eager = true }
#define PNBC_LARGE_STREAMED(box)         { .box_max = (box), .shm_max = SIZE_MAX }
#define PNBC_LARGE_STREAMED_EAGER(box)   { .box_max = (box), .shm_max = SIZE_MAX, \
                                           .retag_eager = true }
#define PNBC_LARGE_SENDER_WRITES(box)    { .box_max = (box), .shm_max = SIZE_MAX, \
                                           .sender_writes = true }
#define PNBC_LARGE_SINGLE_COPY(box, max) { .box_max = (box), .shm_max = (max), .single_copy = true }
#define PNBC_LARGE_EXCHANGE(box, max)    { .box_max = (box), .shm_max = (max), .single_copy = true, \
                                           .exchange = true }
#define PNBC_LARGE_PML_EAGER_SHARED(box, shared_box) \
    { .box_max = (box), .shm_max = 0, .retag_eager = true, .shared_copy = true, \
      .shared_box_max = (shared_box) }

typedef enum {
#define PNBC_COLL_ENUM(ID, name, groups, large, pace) PNBC_##ID,
    PNBC_COLLECTIVES(PNBC_COLL_ENUM)
#undef PNBC_COLL_ENUM
    PNBC_NCOLLS
} pnbc_coll_t;

/* ------------------------------------------------------------------ */
/* Module: one per communicator                                       */
/* ------------------------------------------------------------------ */

struct pnbc_nbc_request_t;

/* The lists a cached instance is on, each doubly linked through its own
 * pair of links (pnbc_nbc_request_t.next/prev[list]). */
enum {
    PNBC_LIST_LRU,          /* every cached instance, most recently used first */
    PNBC_LIST_PROBATION,    /* those not hit since their miss, most recent first
                               (coll_pnbc_cache_probation) */
    PNBC_NLISTS
};

/* The nonblocking schedule cache of one communicator (coll_pnbc_cache.c). */
typedef struct pnbc_nbc_cache_t {
    struct pnbc_nbc_request_t **buckets;    /* hash chains (NULL until the first call) */
    size_t nbuckets;                        /* a power of two, >= nentries */
    struct pnbc_nbc_request_t *head[PNBC_NLISTS], *tail[PNBC_NLISTS];
    size_t nentries, bytes;                 /* instances held and their bytes */
    size_t nprobation;                      /* on PNBC_LIST_PROBATION */
    /* Hashes of keys evicted from probation, one per slot (hash & mask;
     * NULL until the first such eviction): a key found here has come
     * again and skips probation (coll_pnbc_cache.c) */
    uint64_t *ghosts;
    size_t ghost_mask;
    uint64_t hits, misses, evictions;
    /* Per collective, the cached instance its last call ran with, found
     * again by the call's MPI arguments as passed (coll_pnbc_nbc.c) */
    struct pnbc_nbc_request_t *memo[PNBC_NCOLLS];
    /* The instance the last call through the cache ran with (the request
     * handed out may be Open MPI's completed one instead) */
    struct pnbc_nbc_request_t *last;
} pnbc_nbc_cache_t;

typedef struct mca_coll_pnbc_module_t {
    mca_coll_base_module_t super;
    /* Number of persistent collectives initialised on this communicator.
     * *_init calls are collective and ordered identically on every rank
     * (MPI-4.1 sec. 6.13), so this counter -- and the tag derived from
     * it -- agrees everywhere without any communication. */
    uint32_t ninit;
    /* Number of nonblocking collectives called on this communicator:
     * calls are ordered identically on every rank too (MPI-4.1 sec.
     * 6.12), so the call's tag agrees everywhere, whichever cached
     * instance each rank runs it with. */
    uint32_t ncalls;
    pnbc_nbc_cache_t cache;
    /* Its communicator's id: what the engine's transports keep for the
     * communicator goes at module destruction (pnbc_transport_comm_free). */
    uint32_t cid;
    bool has_cid;
    /* Its ranks are on more than one node: the decision rules for such
     * communicators apply (coll_pnbc_select.c).  The same on every rank:
     * if one rank finds all the others on its node, so does each. */
    bool multinode;
    /* With multinode: each rank's node, numbered in order of first
     * appearance (the same on every rank: from the modex's hostnames);
     * else NULL. */
    int *node_of;
} mca_coll_pnbc_module_t;

OBJ_CLASS_DECLARATION(mca_coll_pnbc_module_t);

/*
 * Tags.  The collective window of common_pnbc.h, PNBC_TAG_FIRST -
 * [0, PNBC_TAG_SPAN), is split in two halves:
 *
 *   persistent requests    PNBC_TAG_FIRST - [0, 2^26): one per *_init,
 *                          fixed at init: requests started in different
 *                          orders still match
 *   nonblocking calls      PNBC_TAG_FIRST - [2^26, 2^27): one per call
 *
 * so nonblocking calls never match persistent requests (nor, outside the
 * window, blocking or point-to-point traffic).  Their local-group mirrors
 * (pnbc_local_tag) fall into the two halves of [2^27, 2^28) likewise.
 * The tag of a call that is still running is reused only after 2^26
 * later calls on the same communicator.
 */
#define PNBC_PERSISTENT_TAG_SPAN (PNBC_TAG_SPAN / 2u)
#define PNBC_NBC_TAG_BASE        (PNBC_TAG_SPAN / 2u)
#define PNBC_NBC_TAG_SPAN        (PNBC_TAG_SPAN / 2u)

static inline int mca_coll_pnbc_next_tag(mca_coll_pnbc_module_t *module)
{
    return PNBC_TAG_FIRST - (int) (module->ninit++ % PNBC_PERSISTENT_TAG_SPAN);
}

static inline int mca_coll_pnbc_next_nbc_tag(mca_coll_pnbc_module_t *module)
{
    return PNBC_TAG_FIRST -
           (int) (PNBC_NBC_TAG_BASE + module->ncalls++ % PNBC_NBC_TAG_SPAN);
}

/*
 * The arguments of any *_init call, normalised.  One block serves every
 * collective so that a single path (choose algorithm -> build schedule ->
 * make request) handles them all; each collective reads the fields its
 * MPI binding defines and ignores the rest.
 *
 * On an intercommunicator `root` keeps its MPI meaning (MPI_ROOT,
 * MPI_PROC_NULL, or a rank of the remote group) and every SEND/RECV peer
 * is a rank of the remote group.
 *
 * MPI_IN_PLACE: `in_place` is set where this rank passed MPI_IN_PLACE
 * (send buffer, or receive buffer of scatter/scatterv at the root); the
 * buffer that was MPI_IN_PLACE is then NULL here, except for reduce and
 * allreduce, whose sbuf is set to rbuf (the input lives there).
 */
typedef struct pnbc_coll_args_t {
    pnbc_coll_t coll;
    ompi_communicator_t *comm;
    int rank;           /* in the local group */
    int size;           /* of the local group */
    bool inter;         /* intercommunicator: peers are remote ranks */
    bool multinode;     /* the communicator's ranks are on more than one
                           node (mca_coll_pnbc_module_t.multinode) */
    const int *node_of; /* then each rank's node (the module's), else NULL */
    bool in_place;      /* (not beside root: a cache lookup compares the
                           two, and one wide load over a byte and an int
                           stored separately just before stalls) */
    int remote_size;    /* intercommunicators only */
    int root;
    ompi_op_t *op;
    size_t segsize;     /* pipeline segment in bytes for segmented algorithms:
                           MPI_Info "pnbc_segsize", else coll_pnbc_segsize;
                           0 = the algorithm's own default */

    const void *sbuf;
    void *rbuf;

    /* bcast, reduce, allreduce, scan, exscan, reduce_scatter_block
     * (count = the per-rank block there) */
    size_t count;
    ompi_datatype_t *dtype;

    /* gather, scatter, allgather, alltoall and their neighbourhood forms */
    size_t scount, rcount;
    ompi_datatype_t *sdtype, *rdtype;

    /* v and w variants, reduce_scatter (rcounts).  Arrays belong to the
     * caller: builders copy what they need into the schedule. */
    const int *scounts, *sdispls, *rcounts, *rdispls;
    ompi_datatype_t *const *sdtypes, *const *rdtypes;     /* w variants */
    const MPI_Aint *sdispls_bytes, *rdispls_bytes;      /* neighbor_alltoallw */
    int nsend_entries, nrecv_entries;   /* lengths of the per-peer arrays */
} pnbc_coll_args_t;

/* Slot entry points (coll_pnbc_entry.c): normalise the arguments, then
 * mca_coll_pnbc_coll_init.  Each is declared with the type of the slot it
 * fills, mca_coll_base_module_t.coll_<name>_init. */
#define PNBC_COLL_SLOT(ID, name, groups, large, pace) \
    __typeof__(*((mca_coll_base_module_t *) NULL)->coll_##name##_init) mca_coll_pnbc_##name##_init;
PNBC_COLLECTIVES(PNBC_COLL_SLOT)
#undef PNBC_COLL_SLOT

/* Nonblocking slot entry points (coll_pnbc_nbc.c), with the type of
 * mca_coll_base_module_t.coll_i<name>: each calls the persistent entry
 * point with info = PNBC_NONBLOCKING, so both share the normalisation. */
#define PNBC_COLL_NBC_SLOT(ID, name, groups, large, pace) \
    __typeof__(*((mca_coll_base_module_t *) NULL)->coll_i##name) mca_coll_pnbc_i##name;
PNBC_COLLECTIVES(PNBC_COLL_NBC_SLOT)
#undef PNBC_COLL_NBC_SLOT

/* Not an MPI_Info: marks a nonblocking call (there is no info argument). */
extern char mca_coll_pnbc_nonblocking_marker;
#define PNBC_NONBLOCKING ((struct ompi_info_t *) &mca_coll_pnbc_nonblocking_marker)

/* The one path every entry point takes (coll_pnbc_module.c): a
 * persistent request, or with info == PNBC_NONBLOCKING a started
 * nonblocking one (mca_coll_pnbc_nbc_call). */
int mca_coll_pnbc_coll_init(pnbc_coll_args_t *args, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module);

struct pnbc_request_t;
/* Build and commit a collective's schedule into req (set up by the
 * caller with its tag): select (done by the caller) -> build -> commit
 * -> retain the user's datatypes and op.  Returns an OMPI error code. */
struct pnbc_algorithm_t;
int mca_coll_pnbc_build(struct pnbc_request_t *req, pnbc_coll_args_t *args,
                        const struct pnbc_algorithm_t *alg);

/* Every argument significant at this rank valid?  MPI_SUCCESS or an MPI
 * error class (coll_pnbc_module.c). */
int mca_coll_pnbc_check_args(const pnbc_coll_args_t *a, ompi_request_t **request);

/* Nonblocking call (coll_pnbc_nbc.c): args normalised and completed, not
 * yet checked (a cache hit has the arguments of a call that passed the
 * checks; a miss checks them). */
int mca_coll_pnbc_nbc_call(pnbc_coll_args_t *args, ompi_request_t **request,
                           mca_coll_pnbc_module_t *module);

/* At communicator free: release the nonblocking schedule cache
 * (coll_pnbc_cache.c). */
void mca_coll_pnbc_cache_fini(mca_coll_pnbc_module_t *m);

/* Component-wide services (coll_pnbc_component.c) */
mca_coll_base_module_t *mca_coll_pnbc_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority);

END_C_DECLS

#endif /* MCA_COLL_PNBC_H */
