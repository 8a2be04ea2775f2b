/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The point-to-point transport: ordinary PML isend/irecv requests on the
 * request's private tag.  See coll_pnbc_transport.h for why these beat
 * persistent PML requests here.
 */

#include "coll_pnbc_transport.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"

static int pml_post(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    if (PNBC_ACT_SEND == a->kind) {
        return MCA_PML_CALL(isend(a->buf.addr, a->buf.count, a->buf.dtype, a->peer,
                                  ch->tag, MCA_PML_BASE_SEND_STANDARD, ch->comm,
                                  &a->handle));
    }
    return MCA_PML_CALL(irecv(a->buf.addr, a->buf.count, a->buf.dtype, a->peer,
                              ch->tag, ch->comm, &a->handle));
}

static bool pml_test(pnbc_action_t *a, int *err)
{
    if (!REQUEST_COMPLETE(a->handle)) {
        return false;
    }
    *err = a->handle->req_status.MPI_ERROR;
    /* A completed non-persistent PML request goes back to its free list. */
    ompi_request_free(&a->handle);
    a->handle = NULL;
    return true;
}

const pnbc_transport_t pnbc_transport_pml = {
    .name = "pml",
    .post = pml_post,
    .test = pml_test,
};

const pnbc_transport_t *pnbc_transport_select(const pnbc_action_t *a)
{
    (void) a;   /* one transport so far; the shared-memory one binds here */
    return &pnbc_transport_pml;
}
