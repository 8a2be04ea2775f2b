/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Transports: how a SEND or RECV action moves its bytes.
 *
 * A transport is chosen per action when the schedule is committed, so
 * algorithms never change when one is added.  The executor only calls
 * post() when a round begins and test() until the action is done (xpost()
 * and xtest() for a schedule committed express: pnbc_transport_t.express).
 *
 * pml: MCA_PML_CALL(isend/irecv).  Ordinary requests, not persistent
 *      ones: a persistent ob1 start cannot take ob1's inline-send path
 *      and measured slower (docs/design-measurements.md, "pml"); ob1
 *      takes them from its free lists, and pnbc itself allocates nothing
 *      per start.
 *
 * shm: same-node messages up to a box (coll_pnbc_shm_frag_bytes) go
 *      through a slot of the receiver's shared-memory pool, set up at
 *      commit (retagged schedules: paired again at each start); larger
 *      ones, for the collectives that take it, in one copy from the
 *      sender's buffer (process_vm_readv) or streamed through boxes.
 *      Tried before pml.  Protocol: common_pnbc_transport_shm.c.
 *
 * mbox: same-node messages of retagged schedules (nonblocking calls)
 *      below coll_pnbc_nbc_shm_min_bytes, through a ring per pair of
 *      processes and communicator, matched by the call: the sender
 *      writes at once.  Tried after shm, before pml.  Protocol:
 *      common_pnbc_transport_mbox.c.
 */

#ifndef MCA_COMMON_PNBC_TRANSPORT_H
#define MCA_COMMON_PNBC_TRANSPORT_H

#include "common_pnbc_schedule.h"

BEGIN_C_DECLS

typedef struct pnbc_channel_t {
    ompi_communicator_t *comm;
    int tag;
    bool distinct_tags;         /* pnbc_schedule_t.distinct_tags */
    bool sizes_may_differ;      /* pnbc_schedule_t.sizes_may_differ */
    bool retag;                 /* pnbc_schedule_t.retag */
    pnbc_large_msgs_t large;    /* at bind: pnbc_schedule_t.large */
    pnbc_waker_t *waker;        /* pnbc_schedule_t.waker */
} pnbc_channel_t;

/* The PML tag of a SEND/RECV on channel ch. */
static inline int pnbc_channel_tag(const pnbc_channel_t *ch, const pnbc_action_t *a)
{
    const int tag = ch->distinct_tags ? ch->tag - (int) a->pair_seq : ch->tag;
    return a->local ? pnbc_local_tag(tag) : tag;
}

/* What a transport can do beyond moving bytes (pnbc_transport_t.caps);
 * commit's peepholes ask for these, never for a transport by name. */
#define PNBC_TCAP_EAGER_SEND 0x1u   /* a SEND completes without the receiver
                                       taking part (its data is buffered at
                                       the receiver's side): commit posts it
                                       before the round's receives */
#define PNBC_TCAP_FOLD       0x2u   /* a RECV can carry out the REDUCE that
                                       consumes it (pnbc_action_t.fold) while
                                       copying the message out, straight from
                                       the transport's own buffers */

typedef struct pnbc_transport_t {
    const char *name;
    unsigned caps;      /* PNBC_TCAP_* */
    /* At commit: prepare everything a start needs for this action.
     * Returns false when this transport cannot carry it (the next one in
     * line is tried).  NULL: nothing to prepare. */
    bool (*bind)(pnbc_action_t *a, const pnbc_channel_t *ch);
    /* At commit, after every action of the schedule is bound: set up what
     * this transport's actions share (shm: the receiver's segment).
     * Returns an OMPI error code.  NULL: nothing to set up. */
    int (*commit)(pnbc_schedule_t *s, const pnbc_channel_t *ch);
    /* Post a SEND/RECV action: a->inflight true while it is to be tested;
     * false when it finished within the post (returning its MPI error) or
     * was not posted (returning an OMPI error code). */
    int (*post)(pnbc_action_t *a, const pnbc_channel_t *ch);
    /* If the action finished, store its MPI error in *err and return true. */
    bool (*test)(pnbc_action_t *a, int *err);
    /* Express.  At commit, after every transport's commit step: may a
     * take the express path at every start -- a message that needs no
     * channel, no gate and no pairing per start (pnbc_schedule_t.express,
     * set when every SEND/RECV of the schedule may)?  NULL: never.  Such
     * an action is then posted by xpost and tested by xtest instead: both
     * return true once it finished (its error in *err, a->inflight false),
     * else leave a->inflight true. */
    bool (*express)(pnbc_action_t *a);
    bool (*xpost)(pnbc_action_t *a, int *err);
    bool (*xtest)(pnbc_action_t *a, int *err);
    /* At each start of a retagged schedule (pnbc_schedule_t.retag), for
     * each of its SEND/RECVs bound here, before any is posted: pair the
     * action afresh under ch->tag.  NULL: nothing is paired at commit. */
    void (*retag)(pnbc_action_t *a, const pnbc_channel_t *ch);
    /* An in-flight action that test() found not done: the bell (see
     * pnbc_bell_t) that rings once something it waits for has happened,
     * pnbc_bell_callback when the transport rings the request's waker
     * instead (ch->waker at post), NULL when none is sure to (it must be
     * polled).  Engine lock held.
     * NULL hook: none ever is. */
    pnbc_bell_t *(*bell)(pnbc_action_t *a);
    /* At free: release what bind prepared.  NULL: nothing to release. */
    void (*unbind)(pnbc_action_t *a);
    /* At each engine progress pass while requests are active (engine
     * lock held): work no action of this process is polling for.  NULL:
     * none. */
    void (*progress)(void);
    /* MPI_Init, before the modex fence (the coll component opens): set
     * up what the process's requests will share and the node's other
     * processes will look for (shm: its pool).  NULL: nothing. */
    void (*open)(void);
    /* A communicator gets the component (after MPI_Init's fence, for
     * MPI_COMM_WORLD): set up what its first requests would otherwise
     * set up at their first start (shm: map the peers' pools).  NULL:
     * nothing. */
    void (*comm_enable)(ompi_communicator_t *comm);
    /* A communicator is freed: drop what the transport keeps for it
     * beyond any request (the mailbox).  NULL: nothing. */
    void (*comm_free)(uint32_t cid);
    /* The engine's last release (component close): release what the
     * transport keeps beyond requests and communicators.  NULL: nothing. */
    void (*fini)(void);
} pnbc_transport_t;

extern const pnbc_transport_t pnbc_transport_pml;
/* shm: same-node messages through slots of a shared file
 * (common_pnbc_transport_shm.c, common_pnbc_shm*.c). */
extern const pnbc_transport_t pnbc_transport_shm;
/* mbox: small messages of retagged schedules through a ring per pair of
 * on-node processes and communicator (common_pnbc_transport_mbox.c). */
extern const pnbc_transport_t pnbc_transport_mbox;

/* Bind an action to the first transport that accepts it (pml always does). */
void pnbc_transport_bind(pnbc_action_t *a, const pnbc_channel_t *ch);
/* After binding every action of s: run each transport's commit step. */
int pnbc_transport_commit(pnbc_schedule_t *s, const pnbc_channel_t *ch);
/* Release an action's transport state (schedule destruction). */
void pnbc_transport_unbind(pnbc_action_t *a);
/* For a transport's commit: did its bind prepare every action it took?
 * (A bind that takes an action and then runs out of memory leaves its
 * tstate.ptr NULL.)  OMPI_ERR_OUT_OF_RESOURCE if not. */
int pnbc_transport_bound_all(const pnbc_schedule_t *s, const pnbc_transport_t *tp);
/* A PML request rings `waker` when it completes (its completion callback
 * and its data: nothing else may set them); its action's bell is then
 * pnbc_bell_callback.  NULL: it rings none (the action is polled). */
void pnbc_transport_pml_watch(ompi_request_t *req, pnbc_waker_t *waker);
/* The bell of an in-flight action waiting on PML request req:
 * pnbc_bell_callback if it was watched, else NULL (poll it). */
pnbc_bell_t *pnbc_transport_pml_bell(const ompi_request_t *req);
/* The transports' progress, open, communicator and fini hooks (see above). */
void pnbc_transport_progress(void);
void pnbc_transport_open(void);
void pnbc_transport_comm_enable(ompi_communicator_t *comm);
void pnbc_transport_comm_free(uint32_t cid);
void pnbc_transport_fini(void);

END_C_DECLS

#endif /* MCA_COMMON_PNBC_TRANSPORT_H */
