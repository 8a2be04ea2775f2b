/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI-4.1 partitioned communication (chapter 5) on the pnbc engine.
 *
 * A partitioned send or receive is a pnbc request (common_pnbc_request.h)
 * whose schedule is one round of messages, "units": a SEND per unit at
 * the sender, gated on the MPI_Pready calls of the partitions it covers
 * (pnbc_action_t.gate_left), and a RECV per unit at the receiver, whose
 * completion MPI_Parrived reads (pnbc_action_t.done).  Both run on the
 * engine's executor and transports like a persistent collective: on one
 * node through the shared-memory transport, bound once; elsewhere through
 * the PML.
 *
 * Init is local (MPI-4.1 sec. 5.2).  Each side sends its peer one small
 * handshake message at init (PML, tag PNBC_PART_TAG_HANDSHAKE) describing
 * its side: total bytes, the receiver's partition size and count, the
 * receiver's id.  Handshakes from one process arrive in its init order
 * (MPI's non-overtaking rule), so the k-th handshake with tag t from a
 * peer belongs to the k-th local request with (peer, t): matching in init
 * order, as the standard requires, without any agreement at init
 * (part_pnbc_match.c).  With both sides known, each side computes the
 * same units (part_pnbc_layout.c) and builds and commits its schedule -- during
 * progress, once per request lifetime; every later start only runs it.
 *
 * Units are unions of whole receive partitions whose ends are element
 * boundaries on both sides, at most PNBC_PART_UNITS per request, so
 * partition counts and datatypes may differ between the sides.  A receive
 * smaller than its send gets the rest of the data in its last unit and
 * reports MPI_ERR_TRUNCATE without writing past its buffer; such
 * mismatched pairs use only transports that can tell the receiver
 * (pnbc_schedule_t.sizes_may_differ).
 */

#ifndef PNBC_PART_H
#define PNBC_PART_H

#include "common_pnbc.h"
#include "common_pnbc_request.h"

#include "ompi/info/info.h"

BEGIN_C_DECLS

/* The handshake: what one side tells the other, once. */
typedef struct pnbc_part_hs_t {
    int32_t from_recv;  /* 1: sent by the receive request, 0: by the send */
    int32_t tag;        /* the user's tag */
    int64_t bytes;      /* this side's total, packed bytes */
    int64_t esize;      /* send: its datatype's size; receive: bytes per
                           partition */
    int32_t nparts;     /* partitions on this side */
    int32_t rid;        /* receive: its id (data tag window); send: -1 */
} pnbc_part_hs_t;

struct pnbc_part_ctx_t;
struct pnbc_part_entry_t;

typedef struct pnbc_part_request_t {
    pnbc_request_t super;

    bool is_send;
    int peer;           /* rank of the other side, or MPI_PROC_NULL */
    int tag;            /* the user's tag */
    char *buf;
    int nparts;
    size_t count;       /* elements per partition */
    ompi_datatype_t *dtype;
    size_t esize;       /* packed bytes per element */
    ptrdiff_t extent;
    size_t part_bytes;  /* packed bytes per partition */
    size_t total;       /* packed bytes of the whole buffer */
    int rid;            /* receive: own id; send: the receiver's */

    /* Handshake and matching (part_pnbc_match.c) */
    pnbc_part_hs_t hs_out;
    ompi_request_t *hs_req;
    struct pnbc_part_ctx_t *ctx;
    struct pnbc_part_entry_t *entry;    /* while unmatched */
    bool matched;
    pnbc_part_hs_t peer_hs;

    /* The plan (part_pnbc_layout.c), made when matched */
    bool built;
    uint32_t nunits;
    size_t *bounds;     /* nunits + 1 byte offsets in the shared stream;
                           the last unit of each side ends at its total */
    uint32_t *gate_need;/* send: partitions each unit waits for */
    size_t peer_total;

    /* This epoch */
    uint32_t epoch;     /* incremented at each start */
    uint32_t *ready;    /* send: ready[i] == epoch once partition i is */
    bool running;       /* the schedule's run of this epoch has begun */
} pnbc_part_request_t;

OBJ_CLASS_DECLARATION(pnbc_part_request_t);

/* part_pnbc_request.c */
int pnbc_part_request_create(bool is_send, void *buf, int partitions, size_t count,
                             ompi_datatype_t *dtype, int peer, int tag,
                             ompi_communicator_t *comm, pnbc_part_request_t **out);
/* Engine lock held: the schedule of a matched request is built; start
 * this epoch's run if the request is active and waiting for it.
 * Returns true when the run is already complete. */
bool pnbc_part_begin_run(pnbc_part_request_t *req);

/* part_pnbc_match.c (engine lock held) */
int pnbc_part_match_add(pnbc_part_request_t *req);
void pnbc_part_match_poll(struct pnbc_part_ctx_t *ctx);
void pnbc_part_match_forget(pnbc_part_request_t *req);
int pnbc_part_rid_alloc(void);
void pnbc_part_rid_release(int rid);

/* part_pnbc_layout.c (engine lock held) */
int pnbc_part_build(pnbc_part_request_t *req);
/* The unit holding receive partition j / the units covering send
 * partition i: [*first, *last]. */
uint32_t pnbc_part_unit_of_recv(const pnbc_part_request_t *req, int j);
bool pnbc_part_units_of_send(const pnbc_part_request_t *req, int i, uint32_t *first,
                             uint32_t *last);

/* ------------------------------------------------------------------ */
/* The entry points, shaped like Open MPI 5's part module              */
/* ------------------------------------------------------------------ */

/* Each checks its own arguments and returns an MPI error class (never
 * calls an error handler): part_pnbc_component.c (Open MPI 5) hands it to
 * the framework, libpnbc's MPIX_ functions (Open MPI 4.1, part_mpix.c)
 * to the request's communicator. */

/* part_pnbc_init.c: MPI_Psend_init (is_send) / MPI_Precv_init.  parts
 * and count are the binding's non-negative int and MPI_Count. */
int pnbc_part_init(bool is_send, const void *buf, size_t parts, size_t count,
                   ompi_datatype_t *dtype, int peer, int tag, ompi_communicator_t *comm,
                   ompi_info_t *info, ompi_request_t **request);
/* part_pnbc_ready.c: MPI_Pready_range (min..max), MPI_Pready_list and
 * MPI_Parrived of partitions min..max (flag: all of them arrived; true
 * for a null or inactive request, MPI-4.1 sec. 5.2.3). */
int pnbc_part_pready(size_t min_part, size_t max_part, ompi_request_t *request);
int pnbc_part_pready_list(size_t length, const int *list, ompi_request_t *request);
int pnbc_part_parrived(size_t min_part, size_t max_part, int *flag, ompi_request_t *request);
/* The request's state in words, for error messages. */
const char *pnbc_part_state(ompi_request_t *request);

/* Provided by the host of this implementation (the part component, or
 * libpnbc): make sure the engine is set up; called at each init. */
int pnbc_part_engine_take(void);

END_C_DECLS

#endif /* PNBC_PART_H */
