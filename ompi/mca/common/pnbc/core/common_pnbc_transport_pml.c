/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The point-to-point transport: ordinary PML isend/irecv requests on the
 * request's private tag.  See common_pnbc_transport.h for why these beat
 * persistent PML requests here.
 */

#include "common_pnbc_transport.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"

/* A completed PML request wakes the pnbc request it belongs to (from its
 * completion callback, in whatever thread completes it).  Open MPI marks
 * a request complete only after its callback returns, so a poll from
 * another thread woken by this one could still find it pending and park
 * its request again for good: the callback marks it complete itself,
 * before the wake-up, and returns non-zero so that ompi_request_complete
 * leaves it as it is (nothing waits on these requests: pnbc only tests
 * them, so there is no wait_sync to signal). */
static int pml_completed(ompi_request_t *req)
{
    __atomic_store_n(&req->req_complete, REQUEST_COMPLETED, __ATOMIC_RELEASE);
    pnbc_waker_ring((pnbc_waker_t *) req->req_complete_cb_data);
    return 1;
}

void pnbc_transport_pml_watch(ompi_request_t *req, pnbc_waker_t *waker)
{
    if (NULL != waker) {
        (void) ompi_request_set_callback(req, pml_completed, waker);
    }
}

static ompi_communicator_t *pml_comm(const pnbc_action_t *a, ompi_communicator_t *comm)
{
    return a->local ? comm->c_local_comm : comm;
}

/* A watched request calls back when it completes (its callback data
 * stays until the request is freed). */
pnbc_bell_t *pnbc_transport_pml_bell(const ompi_request_t *req)
{
    return (NULL != req && NULL != req->req_complete_cb_data) ? &pnbc_bell_callback : NULL;
}

static pnbc_bell_t *pml_action_bell(pnbc_action_t *a)
{
    return pnbc_transport_pml_bell(a->tstate.req);
}

/* Messages to a local-group peer of an intercommunicator (a->local) travel
 * on comm->c_local_comm with the request's mirrored tag (see
 * pnbc_local_tag in common_pnbc.h). */
static int pml_post(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    ompi_communicator_t *comm = pml_comm(a, ch->comm);
    const int tag = pnbc_channel_tag(ch, a);
    int rc;

    if (PNBC_ACT_SEND == a->kind) {
        rc = MCA_PML_CALL(isend(a->buf.addr, a->buf.count, a->buf.dtype, a->peer, tag,
                                MCA_PML_BASE_SEND_STANDARD, comm, &a->tstate.req));
    } else {
        rc = MCA_PML_CALL(irecv(a->buf.addr, a->buf.count, a->buf.dtype, a->peer, tag,
                                comm, &a->tstate.req));
    }
    a->inflight = (OMPI_SUCCESS == rc);
    if (a->inflight) {
        pnbc_transport_pml_watch(a->tstate.req, ch->waker);
    }
    return rc;
}

static bool pml_test(pnbc_action_t *a, int *err)
{
    if (!REQUEST_COMPLETE(a->tstate.req)) {
        return false;
    }
    a->inflight = false;
    *err = a->tstate.req->req_status.MPI_ERROR;
    /* A completed non-persistent PML request goes back to its free list. */
    ompi_request_free(&a->tstate.req);
    a->tstate.req = NULL;
    return true;
}

const pnbc_transport_t pnbc_transport_pml = {
    .name = "pml",
    .caps = 0,
    .bind = NULL,
    .commit = NULL,
    .post = pml_post,
    .test = pml_test,
    .bell = pml_action_bell,
    .unbind = NULL,
};
