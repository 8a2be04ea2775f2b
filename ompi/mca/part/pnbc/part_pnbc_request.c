/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The partitioned request: a pnbc request of kind PSEND or PRECV whose
 * hooks wait for the match (the first start may come before the peer's
 * handshake), open the gates of partitions made ready before the run
 * began, and fill in the receive status.
 */

#include "part_pnbc.h"

#include "ompi/mca/pml/pml.h"

#include <stdlib.h>
#include <string.h>

/* Engine lock held. */
bool pnbc_part_begin_run(pnbc_part_request_t *req)
{
    pnbc_exec_t *x = &req->super.exec;
    pnbc_schedule_t *s = &req->super.sched;

    if (OMPI_SUCCESS != s->error) {
        x->error = s->error;        /* matching or building failed */
        return true;
    }
    if (req->is_send) {
        /* gates: partitions each unit still waits for in this epoch */
        for (uint32_t u = 0; u < req->nunits; ++u) {
            s->actions[u].gate_left = req->gate_need[u];
        }
        for (int i = 0; i < req->nparts; ++i) {
            uint32_t first, last;
            if (req->ready[i] == req->epoch && pnbc_part_units_of_send(req, i, &first, &last)) {
                for (uint32_t u = first; u <= last; ++u) {
                    s->actions[u].gate_left--;
                }
            }
        }
    }
    req->running = true;
    return pnbc_exec_start(x);
}

static bool part_start(pnbc_request_t *base)
{
    pnbc_part_request_t *req = (pnbc_part_request_t *) base;

    req->epoch++;
    req->running = false;
    base->exec.error = OMPI_SUCCESS;
    if (MPI_PROC_NULL == req->peer) {
        return true;
    }
    if (!req->built && OMPI_SUCCESS == base->sched.error) {
        pnbc_part_match_poll(req->ctx);
    }
    if (!req->built && OMPI_SUCCESS == base->sched.error) {
        return false;               /* progress waits for the handshake */
    }
    return pnbc_part_begin_run(req);
}

static bool part_progress(pnbc_request_t *base)
{
    pnbc_part_request_t *req = (pnbc_part_request_t *) base;

    if (req->running) {
        return pnbc_exec_progress(&base->exec);
    }
    pnbc_part_match_poll(req->ctx);
    if (!req->built && OMPI_SUCCESS == base->sched.error) {
        return false;
    }
    return pnbc_part_begin_run(req);
}

static void part_complete(pnbc_request_t *base)
{
    pnbc_part_request_t *req = (pnbc_part_request_t *) base;
    ompi_status_public_t *st = &base->super.req_status;

    st->_ucount = 0;
    if (req->is_send || MPI_PROC_NULL == req->peer) {
        /* a receive from MPI_PROC_NULL: the null status (MPI-4.1 3.11) */
        st->MPI_SOURCE = req->is_send ? MPI_ANY_SOURCE : MPI_PROC_NULL;
        st->MPI_TAG = MPI_ANY_TAG;
        return;
    }
    st->MPI_SOURCE = req->peer;
    st->MPI_TAG = req->tag;
    st->_ucount = req->peer_total < req->total ? req->peer_total : req->total;
    if (req->matched && req->peer_total > req->total) {
        st->MPI_ERROR = MPI_ERR_TRUNCATE;
    }
}

static void part_free(pnbc_request_t *base)
{
    pnbc_part_request_t *req = (pnbc_part_request_t *) base;

    /* The handshake send is eager and tiny: it finishes at once, and its
     * buffer lives in this request. */
    if (NULL != req->hs_req) {
        ompi_request_wait(&req->hs_req, MPI_STATUS_IGNORE);
        req->hs_req = NULL;
    }
    pnbc_engine_lock();
    pnbc_part_match_forget(req);
    if (!req->is_send) {
        pnbc_part_rid_release(req->rid);
    }
    pnbc_engine_unlock();
}

static const pnbc_request_ops_t part_ops = {
    .start = part_start,
    .progress = part_progress,
    .complete = part_complete,
    .free = part_free,
};

static void part_construct(pnbc_part_request_t *req)
{
    req->hs_req = NULL;
    req->ctx = NULL;
    req->entry = NULL;
    req->matched = req->built = req->running = false;
    req->nunits = 0;
    req->bounds = NULL;
    req->gate_need = NULL;
    req->ready = NULL;
    req->epoch = 0;
    req->rid = -1;
}

static void part_destruct(pnbc_part_request_t *req)
{
    free(req->bounds);
    free(req->gate_need);
    free(req->ready);
}

OBJ_CLASS_INSTANCE(pnbc_part_request_t, pnbc_request_t, part_construct, part_destruct);

int pnbc_part_request_create(bool is_send, void *buf, int partitions, size_t count,
                             ompi_datatype_t *dtype, int peer, int tag,
                             ompi_communicator_t *comm, pnbc_part_request_t **out)
{
    pnbc_part_request_t *req = OBJ_NEW(pnbc_part_request_t);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    pnbc_request_setup(&req->super, is_send ? PNBC_REQ_PSEND : PNBC_REQ_PRECV, &part_ops,
                       comm, 0);
    req->super.name = is_send ? "psend" : "precv";
    req->super.algorithm = "units";
    req->is_send = is_send;
    req->peer = peer;
    req->tag = tag;
    req->buf = buf;
    req->nparts = partitions;
    req->count = count;
    req->dtype = dtype;
    req->esize = pnbc_type_size(dtype);
    req->extent = pnbc_extent(dtype);
    req->part_bytes = count * req->esize;
    req->total = req->part_bytes * (size_t) partitions;

    int rc = pnbc_request_retain_dtype(&req->super, dtype);
    if (OMPI_SUCCESS == rc && is_send) {
        req->ready = calloc(partitions > 0 ? (size_t) partitions : 1, sizeof(*req->ready));
        rc = (NULL == req->ready) ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS == rc && MPI_PROC_NULL != peer) {
        pnbc_engine_lock();
        if (!is_send) {
            req->rid = pnbc_part_rid_alloc();
            rc = (req->rid < 0) ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
        }
        if (OMPI_SUCCESS == rc) {
            rc = pnbc_part_match_add(req);
        }
        pnbc_engine_unlock();
    }
    if (OMPI_SUCCESS != rc) {
        ompi_request_t *r = &req->super.super;
        ompi_request_free(&r);
        return rc;
    }
    *out = req;
    return OMPI_SUCCESS;
}
