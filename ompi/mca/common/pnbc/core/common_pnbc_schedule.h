/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The typed schedule: the intermediate representation every algorithm
 * compiles into at *_init, and the only thing the executor reads.
 *
 *   schedule = rounds[]            executed strictly one after the other
 *   round    = actions[first .. first+nactions)
 *   action   = SEND | RECV         point-to-point, through a transport
 *            | REDUCE              buf = src (op) buf, via ompi_op_reduce
 *            | COPY                buf <- src, datatype to datatype
 *
 * Within a round, actions run in the order they were added: local
 * actions (REDUCE, COPY) execute immediately, SEND/RECV are posted; the
 * round is over when all of its SEND/RECVs have completed.  A builder
 * therefore puts the local work that consumes round k's messages at the
 * head of round k+1.
 *
 * Buffers are explicit references (which buffer + byte displacement),
 * not pointers: the user send buffer, the user receive buffer, or the
 * request's temporary area.  pnbc_sched_commit() allocates the temporary
 * area and resolves every reference to an address once, so a start does
 * no arithmetic and reads the user's buffers only when it runs.
 *
 * Errors during building are sticky: the first failure is recorded and
 * later builder calls do nothing, so builders need no error checks and
 * pnbc_sched_commit() reports it.
 */

#ifndef MCA_COMMON_PNBC_SCHEDULE_H
#define MCA_COMMON_PNBC_SCHEDULE_H

#include "common_pnbc.h"

BEGIN_C_DECLS

struct pnbc_transport_t;

typedef enum {
    PNBC_BUF_NONE = 0,  /* no data (zero-byte messages) */
    PNBC_BUF_SEND,      /* the user's send buffer */
    PNBC_BUF_RECV,      /* the user's receive buffer */
    PNBC_BUF_TMP,       /* the request's temporary area */
    PNBC_NBUFS
} pnbc_buf_t;

typedef struct pnbc_ref_t {
    pnbc_buf_t buf;
    ptrdiff_t disp;     /* bytes from the start of that buffer */
} pnbc_ref_t;

static inline pnbc_ref_t pnbc_ref(pnbc_buf_t buf, ptrdiff_t disp)
{
    pnbc_ref_t r = { buf, disp };
    return r;
}

static inline bool pnbc_ref_eq(pnbc_ref_t a, pnbc_ref_t b)
{
    return a.buf == b.buf && a.disp == b.disp;
}

static inline pnbc_ref_t pnbc_ref_shift(pnbc_ref_t r, ptrdiff_t bytes)
{
    r.disp += bytes;
    return r;
}

#define PNBC_REF_NONE pnbc_ref(PNBC_BUF_NONE, 0)


/* A typed region: `count` elements of `dtype` starting at `ref`. */
typedef struct pnbc_span_t {
    pnbc_ref_t ref;
    void *addr;                 /* resolved by pnbc_sched_commit() */
    size_t count;
    ompi_datatype_t *dtype;
} pnbc_span_t;

typedef enum {
    PNBC_ACT_SEND,
    PNBC_ACT_RECV,
    PNBC_ACT_REDUCE,
    PNBC_ACT_COPY
} pnbc_action_kind_t;

/* COPY between different type maps: convertors prepared at commit (a
 * start only rewinds them).  `pack` reads src, `unpack` writes buf;
 * `staging` is the flat byte region between them: the contiguous side
 * itself, or a temporary when neither side is contiguous.  Allocated by
 * the builder for such copies only (most copies are plain). */
typedef struct pnbc_copy_convert_t {
    struct opal_convertor_t *pack, *unpack;
    pnbc_span_t staging;
} pnbc_copy_convert_t;

/* One action.  Applications keep thousands of requests alive, each with
 * its actions: the fields of SEND/RECV and those of REDUCE/COPY share
 * their storage, and only code that checked `kind` reads them. */
typedef struct pnbc_action_t {
    pnbc_action_kind_t kind;
    bool local;         /* SEND/RECV on an intercommunicator: `peer` is a
                           rank of the LOCAL group (pnbc_sched_local_peers) */
    /* SEND/RECV: true from post until test reports completion (false for
     * the others, so the executor may test it on any action). */
    bool inflight;
    /* SEND/RECV finished in the current run (reset when its round
     * begins): the per-action completion query (MPI_Parrived). */
    bool done;
    /* REDUCE: a transport carries it out as it receives the message this
     * reduction consumes (see `fold`); the executor skips it. */
    bool folded;
    /* The last action of its round (set at commit): time a transport
     * spends in its post delays no other action of the round. */
    bool last;
    /* COPY within one type map whose data lies in one piece (set at
     * commit): a start copies buf.count * size bytes from the true lower
     * bound on, with no datatype call. */
    bool plain;

    pnbc_span_t buf;    /* SEND: data; RECV: landing zone; REDUCE: in/out
                           operand (right); COPY: destination */
    union {
        struct {        /* SEND, RECV */
            int peer;   /* rank in the communicator */
            /* This action's position among the same-direction messages
             * between the same pair of ranks in this schedule (both sides
             * agree on it: MPI's non-overtaking order), so a transport
             * can pair them at init. */
            uint32_t pair_seq;
            /* SEND gated on user events (partitioned: MPI_Pready): its
             * round leaves it unposted while gate_left > 0;
             * pnbc_exec_open_gate() counts an event and posts it at zero.
             * The client sets gate_left before each start.  0: not gated. */
            uint32_t gate_left;
            /* Bound at commit: how this SEND/RECV moves its bytes.
             * `tstate` is the bound transport's own state, which only
             * that transport reads. */
            const struct pnbc_transport_t *transport;
            union {
                ompi_request_t *req;    /* pml: the PML request in flight */
                void *ptr;              /* others: their per-action state */
            } tstate;
            /* RECV: a REDUCE at the head of the next round that consumes
             * this message and that the transport may carry out as the
             * data arrives, straight from its own buffers (found at
             * commit: find_folds()). */
            struct pnbc_action_t *fold;
        };
        struct {        /* REDUCE, COPY */
            pnbc_span_t src;    /* REDUCE: input operand (left); COPY: source */
            union {
                ompi_op_t *op;                  /* REDUCE */
                pnbc_copy_convert_t *convert;   /* COPY: NULL when both
                                                   sides have one type map */
            };
        };
    };
} pnbc_action_t;

static inline bool pnbc_action_is_comm(const pnbc_action_t *a)
{
    return PNBC_ACT_SEND == a->kind || PNBC_ACT_RECV == a->kind;
}

typedef struct pnbc_round_t {
    uint32_t first;     /* index of the first action */
    uint32_t nactions;
    uint32_t ncomm;     /* how many of them are SEND/RECV */
} pnbc_round_t;

/* How a collective's on-node messages travel by size; chosen per
 * collective, so the same on every rank (see mca_coll_pnbc_large_msgs()). */
typedef struct pnbc_large_msgs_t {
    size_t box_max;     /* on-node messages up to this size go through one
                           shm box (unless coll_pnbc_shm_frag_bytes says) */
    size_t shm_max;     /* larger ones up to this many bytes through the shm
                           transport too (0: none, all through the PML) */
    bool single_copy;   /* offered for process_vm_readv, else streamed
                           through boxes (and folded into a reduction
                           straight from them where the schedule allows) */
    bool sender_writes; /* ... or written by the sender straight into the
                           receiver's buffer (process_vm_writev), once the
                           receiver has started: its receives then cost it
                           no copy (a gather root's; receives that fold
                           into a reduction must not ask for it) */
    bool chained;       /* a rank's sends wait for its receives round after
                           round (allreduce): on an oversubscribed node a
                           retagged schedule streams its messages rather
                           than have them read in one copy, which makes the
                           two processes meet on every hop
                           (pnbc_shm_oversubscribed()) */
    bool retag_eager;   /* a retagged schedule's messages up to
                           coll_pnbc_nbc_mailbox_large_bytes go through the
                           mailbox's large ring, so that a sender runs
                           ahead as it does over a persistent request's
                           boxes, instead of being paired per call */
    bool shared_copy;   /* an offered message's sender, otherwise idle
                           until it is read, copies half of it into the
                           receiver's buffer meanwhile (bcast: not an
                           exchange, where both sides have their own
                           message to read); where sharing is possible
                           (pnbc_shm_shared_possible()) messages above
                           shared_box_max are offered, with no size limit,
                           else the fields above apply as they are */
    size_t shared_box_max;
    bool lockstep;      /* on an intracommunicator no process completes a
                           start before every other has started it: a
                           sender is at most one start ahead of its
                           receiver, so a one-box message's slot has two
                           boxes, not SHM_DEEP (slot_shape()) */
    bool exchange;      /* every process sends and receives at once and
                           copies a block of its own besides (allgather,
                           alltoall): both CPUs copy already, so with
                           coll_pnbc_shm_exchange_boxes, where a
                           receiver finds single copy dear it declines it
                           at every size, not only below its offer floor
                           (pnbc_shm_declined_below()), and a sender fills
                           its boxes with non-temporal stores only as it
                           measures them (pnbc_fill_t), not always */
} pnbc_large_msgs_t;

typedef struct pnbc_schedule_t {
    pnbc_round_t *rounds;
    uint32_t nrounds, rounds_cap;
    pnbc_action_t *actions;
    uint32_t nactions, actions_cap;

    bool local_peers;   /* builder state: see pnbc_sched_local_peers() */
    bool scratch;       /* builder state: the arrays are the build scratch
                           (common_pnbc_schedule.c) until commit */
    /* Set before commit by clients whose messages between one pair of
     * ranks may be posted in any order (partitioned: each unit when it is
     * ready): every message then carries its own tag, tag - pair_seq. */
    bool distinct_tags;
    /* Set before commit when a SEND and its RECV may differ in size (a
     * partitioned receive smaller than its send must report truncation):
     * only transports that can tell the receiver take such messages. */
    bool sizes_may_differ;
    /* Set before commit by clients whose schedule runs under another tag
     * at every start (a cached nonblocking-collective instance runs under
     * its call's tag): the two sides of a message may be different
     * instances, so transports pair them afresh at each start
     * (pnbc_transport_t.retag) instead of once at commit. */
    bool retag;
    /* Set by commit: some action's transport pairs it at each start
     * (pnbc_transport_t.retag), so a start first runs that pass. */
    bool retag_pass;
    /* Set by commit: every SEND/RECV's transport takes it on its express
     * path (pnbc_transport_t.express), so pnbc_exec_express_start() and
     * _progress() may run the schedule. */
    bool express;
    pnbc_large_msgs_t large;    /* set before commit */
    /* The waker of the request running this schedule, which transports
     * that call back ring (pnbc_waker_t); set before commit, NULL: none
     * (every in-flight action is polled). */
    pnbc_waker_t *waker;
    size_t tmp_size;    /* bytes reserved by pnbc_sched_tmp() */
    void *tmp;          /* allocated by pnbc_sched_commit() */
    int error;          /* first builder error (sticky) */
} pnbc_schedule_t;

/* Builder ------------------------------------------------------------ */

void pnbc_sched_construct(pnbc_schedule_t *s);
void pnbc_sched_destruct(pnbc_schedule_t *s);
/* Commit: the arrays at their exact size, out of the build scratch (or
 * shrunk), before anything points into them; sticky error on failure. */
void pnbc_sched_settle(pnbc_schedule_t *s);
/* Engine fini: free the build scratch. */
void pnbc_sched_scratch_fini(void);

/* Start a new round; later actions go into it. */
void pnbc_sched_round(pnbc_schedule_t *s);

/* Reserve temporary space for `count` elements of `dtype` (true extent,
 * aligned); the reference points where element 0's lower bound goes. */
pnbc_ref_t pnbc_sched_tmp(pnbc_schedule_t *s, size_t count, ompi_datatype_t *dtype);

/*
 * Intercommunicators only.  SEND/RECV peers are ranks of the remote group
 * (the communicator's own meaning).  After pnbc_sched_local_peers(s, true)
 * and until pnbc_sched_local_peers(s, false), the peers of SEND/RECVs added
 * are ranks of the LOCAL group instead; the transports carry those messages
 * on the communicator's local-group duplicate (comm->c_local_comm).  Being
 * a builder mode rather than a separate call, it lets intracommunicator
 * builders (bcast, reduce views, ...) compose unchanged into the local
 * phases of an intercommunicator algorithm.
 */
void pnbc_sched_local_peers(pnbc_schedule_t *s, bool local);

void pnbc_sched_send(pnbc_schedule_t *s, pnbc_ref_t ref, size_t count,
                     ompi_datatype_t *dtype, int peer);
void pnbc_sched_recv(pnbc_schedule_t *s, pnbc_ref_t ref, size_t count,
                     ompi_datatype_t *dtype, int peer);
/* target = source (op) target, element-wise, `count` elements of dtype */
void pnbc_sched_reduce(pnbc_schedule_t *s, pnbc_ref_t source, pnbc_ref_t target,
                       size_t count, ompi_datatype_t *dtype, ompi_op_t *op);
void pnbc_sched_copy(pnbc_schedule_t *s, pnbc_ref_t src, size_t scount,
                     ompi_datatype_t *sdtype, pnbc_ref_t dst, size_t dcount,
                     ompi_datatype_t *ddtype);

/* Number of actions added so far (a mark for pnbc_sched_rebase). */
static inline uint32_t pnbc_sched_mark(const pnbc_schedule_t *s)
{
    return s->nactions;
}

/* Make the actions added since `mark` use `to` wherever they referred to
 * buffer `buf`: lets a builder compose another builder whose result it
 * wants somewhere else (e.g. reduce into a temporary, then scatter). */
void pnbc_sched_rebase(pnbc_schedule_t *s, uint32_t mark, pnbc_buf_t buf, pnbc_ref_t to);

/* Allocate the temporary area, drop empty rounds, resolve every reference
 * against the user's buffers and bind each SEND/RECV to a transport for
 * (comm, tag).  Returns the first builder error, if any. */
int pnbc_sched_commit(pnbc_schedule_t *s, const void *sbuf, void *rbuf,
                      ompi_communicator_t *comm, int tag);

/* Datatype conversion between a typed span and a flat region: a
 * convertor prepared at commit (NULL: out of memory), run at each start
 * from position 0 over `bytes` (MPI_ERR_TRUNCATE if it did not move
 * exactly that many); pnbc_convert_part() moves up to `bytes` from
 * `position` on and returns how many it moved. */
struct opal_convertor_t *pnbc_prepared_convertor(const pnbc_span_t *sp, bool for_send);
int pnbc_convert_flat(struct opal_convertor_t *conv, void *flat, size_t bytes, bool pack);
size_t pnbc_convert_part(struct opal_convertor_t *conv, void *flat, size_t bytes,
                         size_t position, bool pack);

/* Executor (common_pnbc_exec.c) -------------------------------------- */

typedef struct pnbc_exec_t {
    pnbc_schedule_t *sched;
    ompi_communicator_t *comm;
    int tag;
    uint32_t round;     /* current round; == nrounds when done */
    uint32_t pending;   /* SEND/RECVs of the current round still in flight */
    int error;          /* first transport error of this start */
} pnbc_exec_t;

/* Begin a run of the schedule; returns true when it already finished. */
bool pnbc_exec_start(pnbc_exec_t *x);
/* Advance as far as possible; returns true when the run finished. */
bool pnbc_exec_progress(pnbc_exec_t *x);
/* The same for a schedule committed express (pnbc_schedule_t.express)
 * whose SENDs are never gated: every SEND/RECV through its transport's
 * xpost and xtest, no channel built.  A client that gates SENDs (its own
 * start hook) runs the schedule with the two above. */
bool pnbc_exec_express_start(pnbc_exec_t *x);
bool pnbc_exec_express_progress(pnbc_exec_t *x);
/* One event for a gated SEND (see pnbc_action_t.gate_left): posts it
 * when that was the last one it waited for and its round is running.
 * Caller holds the engine lock. */
int pnbc_exec_open_gate(pnbc_exec_t *x, pnbc_action_t *a);

END_C_DECLS

#endif /* MCA_COMMON_PNBC_SCHEDULE_H */
