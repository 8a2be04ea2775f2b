/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * MPIX_Bind_channel(s), MPIX_Bind_slack_channel(s), MPIX_Unbind_channel(s).
 *
 * Bind reads what it needs from the inactive persistent PML request
 * (buffer, count, datatype, peer, tag, communicator; the request stays
 * the user's, usable on its own), checks it, exchanges a handshake with
 * the peer (chan_wire.c) and creates the channel (chan_request.c).
 *
 * Errors.  What can be told to the peer (an active request, slackness
 * < 1, a bad address_base_increment; and after the exchange, different
 * message sizes or slackness) fails the bind on BOTH sides, each with the
 * class found, so neither hangs.  What cannot -- the handle is not a
 * persistent point-to-point request, or a wildcard receive (refused: the
 * partner of a channel must be known at bind) -- fails locally without
 * any communication; the partner's bind then waits, as an unmatched
 * receive would.
 */

#include "chan.h"
#include "mpiext_pnbc_c.h"

#include "ompi/errhandler/errhandler.h"
#include "ompi/info/info.h"
#include "ompi/mca/pml/base/pml_base_request.h"
#include "ompi/runtime/mpiruntime.h"

#include <errno.h>
#include <stdlib.h>

typedef struct bind_t {
    pnbc_chan_spec_t sp;
    int err;            /* MPI error class of this bind */
    bool told;          /* err is known to the peer (it was exchanged) */
    pnbc_chan_request_t *pre;   /* receiver: its channel, made before the
                                   handshake (see bind_all) */
} bind_t;

static int info_increment(MPI_Info info, ptrdiff_t *incr)
{
    if (NULL == info || MPI_INFO_NULL == info) {
        return MPI_SUCCESS;
    }
    char value[64];
    int flag = 0;
    if (MPI_SUCCESS != MPI_Info_get(info, "address_base_increment", (int) sizeof(value) - 1,
                                    value, &flag)) {
        return MPI_ERR_INFO;
    }
    if (!flag) {
        return MPI_SUCCESS;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (0 != errno || end == value || '\0' != *end) {
        return MPI_ERR_INFO_VALUE;
    }
    *incr = (ptrdiff_t) v;
    return MPI_SUCCESS;
}

/* Fill b from request_in.  Returns false when the peer cannot be told
 * (b->err set). */
static bool inspect(bind_t *b, MPI_Request r, int slack, MPI_Info info)
{
    pnbc_chan_spec_t *sp = &b->sp;
    sp->comm = &ompi_mpi_comm_world.comm;
    sp->slack = slack;
    sp->id = -1;
    sp->own_id = false;
    b->err = MPI_SUCCESS;
    if (NULL == r || MPI_REQUEST_NULL == r || !r->req_persistent) {
        b->err = MPI_ERR_REQUEST;
        return false;
    }
    if (OMPI_REQUEST_NOOP == r->req_type) {
        /* MPI_Send_init/MPI_Recv_init with MPI_PROC_NULL */
        sp->proc_null = true;
        sp->peer = MPI_PROC_NULL;
        sp->tag = MPI_ANY_TAG;
        if (OMPI_REQUEST_INACTIVE != r->req_state) {
            b->err = MPI_ERR_REQUEST;
        } else if (slack < 1) {
            b->err = MPI_ERR_ARG;
        }
        return false;
    }
    if (OMPI_REQUEST_PML != r->req_type) {
        b->err = MPI_ERR_REQUEST;       /* a collective, a partitioned request, ... */
        return false;
    }
    mca_pml_base_request_t *p = (mca_pml_base_request_t *) r;
    if (MCA_PML_REQUEST_SEND != p->req_type && MCA_PML_REQUEST_RECV != p->req_type) {
        b->err = MPI_ERR_REQUEST;
        return false;
    }
    sp->is_send = (MCA_PML_REQUEST_SEND == p->req_type);
    sp->comm = p->req_comm;
    sp->peer = p->req_peer;
    sp->tag = p->req_tag;
    sp->base = p->req_addr;
    sp->count = p->req_count;
    sp->dtype = p->req_datatype;
    sp->incr = (ptrdiff_t) p->req_count;
    sp->proc_null = (MPI_PROC_NULL == sp->peer);
    if (MPI_ANY_SOURCE == sp->peer) {
        b->err = MPI_ERR_RANK;          /* wildcard receive: refused */
        return false;
    }
    if (MPI_ANY_TAG == sp->tag) {
        b->err = MPI_ERR_TAG;
        return false;
    }
    if (sp->proc_null) {
        b->err = (slack < 1) ? MPI_ERR_ARG : MPI_SUCCESS;
        return false;
    }
    if (OMPI_REQUEST_INACTIVE != r->req_state) {
        b->err = MPI_ERR_REQUEST;
    } else if (slack < 1) {
        b->err = MPI_ERR_ARG;
    } else {
        b->err = info_increment(info, &sp->incr);
    }
    return true;
}

/* Check the peer's handshake against ours. */
static int agree(const bind_t *b, const pnbc_chan_xchg_t *x)
{
    if (MPI_SUCCESS != b->err) {
        return b->err;
    }
    if (MPI_SUCCESS != x->in.err) {
        return x->in.err;               /* the peer's bind failed: so does ours */
    }
    if (x->in.bytes != x->out.bytes) {
        return MPI_ERR_TRUNCATE;        /* channels move whole messages of one size */
    }
    if (x->in.slack != x->out.slack) {
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

static int bind_all(const char *name, MPI_Request in[], MPI_Request out[], int n,
                    const int slack[], MPI_Info infos[])
{
    if (ompi_mpi_state < OMPI_MPI_STATE_INIT_COMPLETED ||
        ompi_mpi_state >= OMPI_MPI_STATE_FINALIZE_STARTED) {
        return MPI_ERR_OTHER;
    }
    if (n < 0 || (n > 0 && (NULL == in || NULL == out))) {
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_ARG, name);
    }
    if (0 == n) {
        return MPI_SUCCESS;
    }
    if (OMPI_SUCCESS != mca_common_pnbc_hold_until_finalize()) {
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_INTERN, name);
    }
    bind_t *b = calloc((size_t) n, sizeof(*b));
    pnbc_chan_xchg_t *x = calloc((size_t) n, sizeof(*x));
    if (NULL == b || NULL == x) {
        free(b);
        free(x);
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_NO_MEM, name);
    }
    for (int i = 0; i < n; ++i) {
        out[i] = MPI_REQUEST_NULL;
        const int k = (NULL == slack) ? 1 : slack[i];
        const bool tell = inspect(&b[i], in[i], k, (NULL == infos) ? MPI_INFO_NULL : infos[i]);
        pnbc_chan_spec_t *sp = &b[i].sp;
        x[i].skip = !tell;
        if (!tell) {
            continue;
        }
        if (MPI_SUCCESS == b[i].err && !sp->is_send) {
            sp->id = pnbc_chan_id_alloc();
            sp->own_id = (sp->id >= 0);
            b[i].err = (sp->id < 0) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        }
        /* The receiver commits (creates its shm file) before telling the
         * sender its id: the sender's first start finds the file of THIS
         * channel, never a missing or older one under the same name. */
        if (MPI_SUCCESS == b[i].err && !sp->is_send) {
            int crc = pnbc_chan_create(sp, &b[i].pre);
            if (OMPI_SUCCESS == crc) {
                sp->own_id = false;     /* the channel's now */
            } else {
                b[i].pre = NULL;
                b[i].err = ompi_errcode_get_mpi_code(crc);
            }
        }
        x[i].comm = sp->comm;
        x[i].peer = sp->peer;
        x[i].out.kind = PNBC_CHAN_HS_BIND;
        x[i].out.is_recv = !sp->is_send;
        x[i].out.tag = sp->tag;
        x[i].out.slack = sp->slack;
        x[i].out.bytes = (int64_t) (sp->count * pnbc_type_size(sp->dtype));
        x[i].out.id = sp->id;
        x[i].out.err = b[i].err;
        b[i].told = true;
    }
    int rc = pnbc_chan_exchange(x, n);
    int first = MPI_SUCCESS;
    ompi_communicator_t *first_comm = &ompi_mpi_comm_world.comm;
    for (int i = 0; i < n; ++i) {
        pnbc_chan_spec_t *sp = &b[i].sp;
        int err = b[i].err;
        if (b[i].told) {
            err = (OMPI_SUCCESS != rc) ? ompi_errcode_get_mpi_code(rc) : agree(&b[i], &x[i]);
            if (MPI_SUCCESS == err && sp->is_send) {
                sp->id = x[i].in.id;
            }
        }
        if (NULL != b[i].pre) {
            if (MPI_SUCCESS == err) {
                out[i] = &b[i].pre->super.super;
            } else {
                pnbc_chan_destroy(b[i].pre);    /* releases the id too */
            }
        } else if (MPI_SUCCESS == err) {
            pnbc_chan_request_t *ch = NULL;
            int crc = pnbc_chan_create(sp, &ch);
            if (OMPI_SUCCESS == crc) {
                out[i] = &ch->super.super;
                sp->own_id = false;     /* the channel's now */
            } else {
                err = ompi_errcode_get_mpi_code(crc);
            }
        }
        if (sp->own_id) {
            pnbc_chan_id_release(sp->id);
        }
        if (MPI_SUCCESS != err && MPI_SUCCESS == first) {
            first = err;
            first_comm = sp->comm;
        }
    }
    free(b);
    free(x);
    return (MPI_SUCCESS == first) ? MPI_SUCCESS : OMPI_ERRHANDLER_INVOKE(first_comm, first, name);
}

int MPIX_Bind_channel(MPI_Request request_in, MPI_Request *channel, MPI_Info info)
{
    return bind_all("MPIX_Bind_channel", &request_in, channel, 1, NULL, &info);
}

int MPIX_Bind_channels(MPI_Request requests_in[], MPI_Request channels[], int n,
                       MPI_Info infos[])
{
    return bind_all("MPIX_Bind_channels", requests_in, channels, n, NULL, infos);
}

int MPIX_Bind_slack_channel(MPI_Request request_in, MPI_Request *channel, int slackness,
                            MPI_Info info)
{
    return bind_all("MPIX_Bind_slack_channel", &request_in, channel, 1, &slackness, &info);
}

int MPIX_Bind_slack_channels(MPI_Request requests_in[], MPI_Request channels[], int n,
                             const int slackness[], MPI_Info infos[])
{
    if (NULL == slackness && n > 0) {
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_ARG, "MPIX_Bind_slack_channels");
    }
    return bind_all("MPIX_Bind_slack_channels", requests_in, channels, n, slackness, infos);
}

/* ------------------------------------------------------------------ */
/* Unbind                                                             */
/* ------------------------------------------------------------------ */

int MPIX_Unbind_channels(MPI_Request channels[], int n)
{
    static const char name[] = "MPIX_Unbind_channels";
    if (n < 0 || (n > 0 && NULL == channels)) {
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_ARG, name);
    }
    if (0 == n) {
        return MPI_SUCCESS;
    }
    pnbc_chan_xchg_t *x = calloc((size_t) n, sizeof(*x));
    int *err = calloc((size_t) n, sizeof(*err));
    if (NULL == x || NULL == err) {
        free(x);
        free(err);
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_NO_MEM, name);
    }
    for (int i = 0; i < n; ++i) {
        x[i].skip = true;
        if (!pnbc_chan_is_channel(channels[i])) {
            err[i] = MPI_ERR_REQUEST;   /* not a channel: nobody to tell */
            continue;
        }
        pnbc_chan_request_t *req = (pnbc_chan_request_t *) channels[i];
        err[i] = pnbc_request_is_active(&req->super) ? MPI_ERR_REQUEST : MPI_SUCCESS;
        if (req->proc_null) {
            continue;
        }
        x[i].skip = false;
        x[i].comm = req->super.comm;
        x[i].peer = req->peer;
        x[i].out.kind = PNBC_CHAN_HS_UNBIND;
        x[i].out.is_recv = !req->is_send;
        x[i].out.tag = req->tag;
        x[i].out.slack = req->slack;
        x[i].out.bytes = (int64_t) req->bytes;
        x[i].out.id = req->id;
        x[i].out.err = err[i];
    }
    int rc = pnbc_chan_exchange(x, n);
    int first = MPI_SUCCESS;
    ompi_communicator_t *first_comm = &ompi_mpi_comm_world.comm;
    for (int i = 0; i < n; ++i) {
        int e = err[i];
        if (!x[i].skip && MPI_SUCCESS == e) {
            e = (OMPI_SUCCESS != rc) ? ompi_errcode_get_mpi_code(rc) : x[i].in.err;
        }
        if (MPI_SUCCESS == e) {
            pnbc_chan_destroy((pnbc_chan_request_t *) channels[i]);
            channels[i] = MPI_REQUEST_NULL;
        } else if (MPI_SUCCESS == first) {
            first = e;
            if (pnbc_chan_is_channel(channels[i])) {
                first_comm = ((pnbc_request_t *) channels[i])->comm;
            }
        }
    }
    free(x);
    free(err);
    return (MPI_SUCCESS == first) ? MPI_SUCCESS : OMPI_ERRHANDLER_INVOKE(first_comm, first, name);
}

int MPIX_Unbind_channel(MPI_Request *channel)
{
    if (NULL == channel) {
        return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_ARG, "MPIX_Unbind_channel");
    }
    return MPIX_Unbind_channels(channel, 1);
}
