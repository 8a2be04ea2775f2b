/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Persistent point-to-point channels and K-slack channels (the MPI
 * persistence working group's proposals 1 and 3) on the pnbc engine.
 *
 * MPIX_Bind_channel turns an inactive persistent point-to-point request
 * (MPI_Send_init, ..., MPI_Recv_init of the PML) into a new persistent
 * request of kind PNBC_REQ_CHANNEL, bound to the peer's matching request
 * by a handshake over the PML (chan_wire.c: one small message each way on
 * PNBC_CHAN_TAG_HANDSHAKE; several binds of one call are exchanged
 * together, so opposite orders on the two sides cannot deadlock).  The
 * receiver draws a channel id; the channel's data travels on its own tag
 * PNBC_CHAN_TAG_FIRST - id, which no other traffic uses.
 *
 * Its schedule is one round of K actions (one SEND or one RECV per slot,
 * slot k at base + k * step), committed once at bind, so on one node each
 * slot is a slot of the shared-memory transport (up to PNBC_CHAN_BOX_MAX
 * bytes: a copy into one of 8 boxes and a flag; larger messages stream
 * through 4 boxes of coll_pnbc_shm_stream_frag_bytes, the sender copying
 * fragment q+1 in while the receiver copies q out) and elsewhere a PML
 * message.  Single copy (process_vm_readv) is not used: streaming
 * measured faster at every size, in latency and in bandwidth
 * (docs/design-measurements.md, "Channels").  The channel does not run
 * the schedule with the executor: its
 * own hooks (chan_request.c) post action n mod K at the n-th start and
 * test the posted ones in order, so up to K transfers are in flight.
 * The second and later starts of a K-slack channel come through
 * MPIX_Start_slack / MPIX_Startall_slack (chan_request.c): Open MPI
 * 4.1.5+ and 5.0 refuse an active request in MPI_Start and MPI_Startall.
 */

#ifndef PNBC_CHAN_H
#define PNBC_CHAN_H

#include "common_pnbc.h"
#include "common_pnbc_request.h"
#include "common_pnbc_transport.h"

BEGIN_C_DECLS

/* Tag windows (see common_pnbc.h): below the partitioned data window,
 * which ends at PNBC_PART_TAG_FIRST - 2^28 + 1 = -1868435455.  Data of
 * channel `id` travels on PNBC_CHAN_TAG_FIRST - id; should the shm
 * transport fall back to the PML, on its mirror pnbc_local_tag() of that,
 * 2^27 lower: [-2025266303, -2024217728], still above INT_MIN. */
#define PNBC_CHAN_TAG_HANDSHAKE (-1880000000)
#define PNBC_CHAN_TAG_FIRST     (-1890000000)
#define PNBC_CHAN_IDS           (1 << 20)  /* live receiving channels per process */

#if PNBC_CHAN_TAG_FIRST - (PNBC_CHAN_IDS - 1) - (1 << 27) < -2147483647 || \
    PNBC_CHAN_TAG_HANDSHAKE >= PNBC_PART_TAG_FIRST - (1 << 28) || \
    PNBC_CHAN_TAG_FIRST >= PNBC_CHAN_TAG_HANDSHAKE
#error "pnbc channel tag window overlaps another window or INT_MIN"
#endif

/* On-node message shapes of a channel (the same on both sides). */
#define PNBC_CHAN_BOX_MAX  16384    /* up to this: one box, 8 per slot */

/* ------------------------------------------------------------------ */
/* Handshakes (chan_wire.c)                                           */
/* ------------------------------------------------------------------ */

enum { PNBC_CHAN_HS_BIND = 1, PNBC_CHAN_HS_UNBIND = 2 };

typedef struct pnbc_chan_hs_t {
    int32_t kind;       /* PNBC_CHAN_HS_* */
    int32_t is_recv;    /* sent by the receiving side */
    int32_t tag;        /* the user's tag */
    int32_t slack;      /* K */
    int64_t bytes;      /* packed bytes of one transfer */
    int32_t id;         /* the receiver's channel id (bind: -1 from the sender) */
    int32_t err;        /* an MPI error class found locally: both fail */
} pnbc_chan_hs_t;

/* One exchange with one peer: send `out`, receive the first message from
 * (comm, peer) that fits(). */
typedef struct pnbc_chan_xchg_t {
    ompi_communicator_t *comm;
    int peer;
    pnbc_chan_hs_t out;
    pnbc_chan_hs_t in;
    bool got;
    bool skip;          /* nothing to exchange (local error) */
    ompi_request_t *sreq, *rreq;
    pnbc_chan_hs_t rbuf;
} pnbc_chan_xchg_t;

/* Blocking over the pairs: every x[i] (not skip) sends its `out` and gets
 * its `in`.  Messages received for other exchanges are kept for later
 * calls.  Returns an OMPI error code. */
int pnbc_chan_exchange(pnbc_chan_xchg_t *x, int n);

/* Receiver channel ids (engine lock not needed: own lock). */
int pnbc_chan_id_alloc(void);
void pnbc_chan_id_release(int id);

/* ------------------------------------------------------------------ */
/* The channel request (chan_request.c)                               */
/* ------------------------------------------------------------------ */

typedef struct pnbc_chan_request_t {
    pnbc_request_t super;

    bool is_send;
    bool proc_null;     /* bound to an MPI_PROC_NULL request: no transfers */
    int peer;
    int tag;            /* the user's tag */
    int id;             /* the receiver's channel id */
    bool own_id;        /* receiver: release id at free */
    int slack;          /* K */
    size_t bytes;       /* packed bytes of one transfer */
    pnbc_channel_t ch;  /* what the transports' post needs */

    uint64_t posted;    /* transfers posted since bind */
    uint64_t finished;  /* ... and finished (tested in order) */
    uint32_t post_at;   /* slot of the next post: posted mod K */
    uint32_t test_at;   /* slot of the oldest unfinished: finished mod K */
    int outstanding;    /* starts since the last completion call */

    bool unbinding;     /* free allowed */
    int (*core_free)(ompi_request_t **);
} pnbc_chan_request_t;

OBJ_CLASS_DECLARATION(pnbc_chan_request_t);

/* What one side knows of its bind. */
typedef struct pnbc_chan_spec_t {
    bool is_send;
    bool proc_null;
    ompi_communicator_t *comm;
    int peer, tag;
    void *base;
    size_t count;
    ompi_datatype_t *dtype;
    int slack;
    ptrdiff_t incr;     /* elements between slots */
    int id;
    bool own_id;
} pnbc_chan_spec_t;

/* A new channel, committed (engine lock not held). */
int pnbc_chan_create(const pnbc_chan_spec_t *sp, pnbc_chan_request_t **out);
/* Is this MPI request a channel? */
bool pnbc_chan_is_channel(ompi_request_t *r);
/* Free an inactive channel (after its unbind handshake). */
void pnbc_chan_destroy(pnbc_chan_request_t *req);


END_C_DECLS

#endif /* PNBC_CHAN_H */
