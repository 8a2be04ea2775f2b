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

/* Transports in order of preference; the last one accepts everything. */
static const pnbc_transport_t *const transports[] = {
    &pnbc_transport_shm,
    &pnbc_transport_mbox,
    &pnbc_transport_pml,
};

void pnbc_transport_bind(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    const size_t n = sizeof(transports) / sizeof(transports[0]);
    for (size_t i = 0; i < n; ++i) {
        if (NULL == transports[i]->bind || transports[i]->bind(a, ch) || i == n - 1) {
            a->transport = transports[i];
            return;
        }
    }
}

int pnbc_transport_commit(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    const size_t n = sizeof(transports) / sizeof(transports[0]);
    for (size_t i = 0; i < n; ++i) {
        if (NULL != transports[i]->commit) {
            int rc = transports[i]->commit(s, ch);
            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
    }
    return OMPI_SUCCESS;
}

void pnbc_transport_unbind(pnbc_action_t *a)
{
    if (NULL != a->transport && NULL != a->transport->unbind) {
        a->transport->unbind(a);
    }
    a->transport = NULL;
}

/* Call each transport's hook `h` that is set, with the arguments given. */
#define PNBC_TRANSPORTS_CALL(h, ...)                                                   \
    do {                                                                               \
        for (size_t i_ = 0; i_ < sizeof(transports) / sizeof(transports[0]); ++i_) { \
            if (NULL != transports[i_]->h) {                                           \
                transports[i_]->h(__VA_ARGS__);                                        \
            }                                                                          \
        }                                                                              \
    } while (0)

void pnbc_transport_progress(void)
{
    PNBC_TRANSPORTS_CALL(progress);
}

void pnbc_transport_open(void)
{
    PNBC_TRANSPORTS_CALL(open);
}

void pnbc_transport_comm_enable(ompi_communicator_t *comm)
{
    PNBC_TRANSPORTS_CALL(comm_enable, comm);
}

void pnbc_transport_comm_free(uint32_t cid)
{
    PNBC_TRANSPORTS_CALL(comm_free, cid);
}

void pnbc_transport_fini(void)
{
    PNBC_TRANSPORTS_CALL(fini);
}

int pnbc_transport_bound_all(const pnbc_schedule_t *s, const pnbc_transport_t *tp)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (pnbc_action_is_comm(&s->actions[i]) && s->actions[i].transport == tp &&
            NULL == s->actions[i].tstate.ptr) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    return OMPI_SUCCESS;
}
