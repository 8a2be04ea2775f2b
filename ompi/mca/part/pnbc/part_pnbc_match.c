/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Matching partitioned requests without waiting at init.
 *
 * Each request sends its handshake to its peer at init.  Per
 * communicator, a context keeps the local requests not matched yet, in
 * init order, and the handshakes that arrived before their request was
 * created, in arrival order; one wildcard receive on the handshake tag is
 * posted while a request waits.  MPI's non-overtaking rule orders the
 * handshakes of one sender, so "oldest unmatched request of (peer, tag,
 * direction)" pairs the k-th init on one side with the k-th on the other.
 * A request freed before it matched leaves its entry behind, empty, so
 * that its peer's handshake is consumed in its turn and not given to a
 * later request.  Everything here runs under the engine lock.
 */

#include "part_pnbc.h"

#include "ompi/mca/pml/pml.h"

#include <stdlib.h>
#include <string.h>

typedef struct pnbc_part_entry_t {
    struct pnbc_part_entry_t *next;
    pnbc_part_request_t *req;   /* NULL: freed before it matched */
    int peer, tag;
    bool is_send;
} pnbc_part_entry_t;

typedef struct pnbc_part_early_t {
    struct pnbc_part_early_t *next;
    int source;
    pnbc_part_hs_t hs;
} pnbc_part_early_t;

typedef struct pnbc_part_ctx_t {
    struct pnbc_part_ctx_t *next;
    ompi_communicator_t *comm;  /* retained while the context lives */
    pnbc_part_entry_t *waiting, *waiting_tail;
    pnbc_part_early_t *early, *early_tail;
    ompi_request_t *recv;       /* wildcard handshake receive, or NULL */
    pnbc_part_hs_t inbox;
} pnbc_part_ctx_t;

static pnbc_part_ctx_t *contexts;

/* ------------------------------------------------------------------ */
/* Receive ids: the data tag window of each live receive request       */
/* ------------------------------------------------------------------ */

static uint8_t rid_used[PNBC_PART_IDS / 8];
static uint32_t rid_next;

int pnbc_part_rid_alloc(void)
{
    for (uint32_t k = 0; k < PNBC_PART_IDS; ++k) {
        const uint32_t id = (rid_next + k) % PNBC_PART_IDS;
        if (!(rid_used[id / 8] & (1u << (id % 8)))) {
            rid_used[id / 8] |= (uint8_t) (1u << (id % 8));
            rid_next = id + 1;
            return (int) id;
        }
    }
    return -1;
}

void pnbc_part_rid_release(int rid)
{
    if (rid >= 0 && rid < (int) PNBC_PART_IDS) {
        rid_used[rid / 8] &= (uint8_t) ~(1u << (rid % 8));
    }
}

/* ------------------------------------------------------------------ */
/* Contexts                                                           */
/* ------------------------------------------------------------------ */

static pnbc_part_ctx_t *ctx_get(ompi_communicator_t *comm)
{
    for (pnbc_part_ctx_t *c = contexts; NULL != c; c = c->next) {
        if (c->comm == comm) {
            return c;
        }
    }
    pnbc_part_ctx_t *c = calloc(1, sizeof(*c));
    if (NULL != c) {
        OBJ_RETAIN(comm);
        c->comm = comm;
        c->next = contexts;
        contexts = c;
    }
    return c;
}

static int ctx_post(pnbc_part_ctx_t *c)
{
    if (NULL != c->recv || NULL == c->waiting) {
        return OMPI_SUCCESS;
    }
    return MCA_PML_CALL(irecv(&c->inbox, sizeof(c->inbox), MPI_BYTE, MPI_ANY_SOURCE,
                              PNBC_PART_TAG_HANDSHAKE, c->comm, &c->recv));
}

static void matched(pnbc_part_request_t *req, const pnbc_part_hs_t *hs)
{
    req->peer_hs = *hs;
    req->matched = true;
    req->entry = NULL;
    int rc = pnbc_part_build(req);
    if (OMPI_SUCCESS != rc && OMPI_SUCCESS == req->super.sched.error) {
        req->super.sched.error = rc;
    }
}

/* A handshake from `source`: give it to the oldest waiting entry it
 * belongs to, or keep it for a request not created yet. */
static void deliver(pnbc_part_ctx_t *c, int source, const pnbc_part_hs_t *hs)
{
    const bool for_send = (0 != hs->from_recv);
    pnbc_part_entry_t **pe = &c->waiting, *prev = NULL;
    for (; NULL != *pe; prev = *pe, pe = &(*pe)->next) {
        pnbc_part_entry_t *e = *pe;
        if (e->peer != source || e->tag != hs->tag || e->is_send != for_send) {
            continue;
        }
        *pe = e->next;
        if (c->waiting_tail == e) {
            c->waiting_tail = prev;
        }
        if (NULL != e->req) {
            matched(e->req, hs);
        }
        free(e);
        return;
    }
    pnbc_part_early_t *early = malloc(sizeof(*early));
    if (NULL == early) {
        return;     /* out of memory: that request will never match */
    }
    early->next = NULL;
    early->source = source;
    early->hs = *hs;
    if (NULL == c->early_tail) {
        c->early = early;
    } else {
        c->early_tail->next = early;
    }
    c->early_tail = early;
}

void pnbc_part_match_poll(pnbc_part_ctx_t *c)
{
    while (NULL != c->recv && REQUEST_COMPLETE(c->recv)) {
        const int source = c->recv->req_status.MPI_SOURCE;
        const int err = c->recv->req_status.MPI_ERROR;
        const pnbc_part_hs_t hs = c->inbox;
        ompi_request_free(&c->recv);
        c->recv = NULL;
        if (MPI_SUCCESS == err) {
            deliver(c, source, &hs);
        }
        if (OMPI_SUCCESS != ctx_post(c)) {
            break;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Requests                                                           */
/* ------------------------------------------------------------------ */

int pnbc_part_match_add(pnbc_part_request_t *req)
{
    pnbc_part_ctx_t *c = ctx_get(req->super.comm);
    if (NULL == c) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->ctx = c;

    /* Our side, to the peer. */
    req->hs_out.from_recv = req->is_send ? 0 : 1;
    req->hs_out.tag = req->tag;
    req->hs_out.bytes = (int64_t) req->total;
    req->hs_out.esize = (int64_t) (req->is_send ? req->esize : req->part_bytes);
    req->hs_out.nparts = req->nparts;
    req->hs_out.rid = req->is_send ? -1 : req->rid;
    int rc = MCA_PML_CALL(isend(&req->hs_out, sizeof(req->hs_out), MPI_BYTE, req->peer,
                                PNBC_PART_TAG_HANDSHAKE, MCA_PML_BASE_SEND_STANDARD,
                                req->super.comm, &req->hs_req));
    if (OMPI_SUCCESS != rc) {
        return rc;
    }

    /* The peer's side: arrived already, or to be waited for. */
    pnbc_part_early_t **pe = &c->early, *prev = NULL;
    for (; NULL != *pe; prev = *pe, pe = &(*pe)->next) {
        pnbc_part_early_t *e = *pe;
        if (e->source == req->peer && e->hs.tag == req->tag &&
            (0 != e->hs.from_recv) == req->is_send) {
            *pe = e->next;
            if (c->early_tail == e) {
                c->early_tail = prev;
            }
            matched(req, &e->hs);
            free(e);
            return OMPI_SUCCESS;
        }
    }
    pnbc_part_entry_t *e = malloc(sizeof(*e));
    if (NULL == e) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *e = (pnbc_part_entry_t) { NULL, req, req->peer, req->tag, req->is_send };
    if (NULL == c->waiting_tail) {
        c->waiting = e;
    } else {
        c->waiting_tail->next = e;
    }
    c->waiting_tail = e;
    req->entry = e;
    return ctx_post(c);
}

/* The request is being freed: an unmatched one leaves its entry, empty. */
void pnbc_part_match_forget(pnbc_part_request_t *req)
{
    if (NULL != req->entry) {
        req->entry->req = NULL;
        req->entry = NULL;
    }
}
