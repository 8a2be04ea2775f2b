/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The channel request: a pnbc request of kind PNBC_REQ_CHANNEL whose
 * schedule is one round of K SEND or K RECV actions, one per slot,
 * committed at bind.  Its hooks replace the executor:
 *
 *   start (inactive -> active)  post slot posted % K
 *   start_active (K-slack)      up to K - 1 more posts before a
 *                               completion call; a (K+1)-th start is
 *                               MPI_ERR_REQUEST and changes nothing
 *   progress                    test the posted actions in order
 *
 * Open MPI 4.1.5+ and 5.0 (commit 31f7f777e0): MPI_Start with parameter
 * checking refuses an ACTIVE request before req_start sees it, and
 * MPI_Startall always does, so the second and later starts of a K-slack
 * channel go through MPIX_Start_slack / MPIX_Startall_slack (below):
 * they start an active channel through start_active directly and hand
 * everything else to MPI_Start / MPI_Startall.  A request cannot be both
 * "inactive" for MPI_Start and "not yet complete" for MPI_Test, whose
 * Open MPI code reports an inactive request complete without looking
 * further, so the request's state cannot be bent to let MPI_Start
 * through.
 *
 * A start posts through the bound transport only (shm: a copy into the
 * slot's boxes and a flag; pml: an isend/irecv from ob1's free lists), so
 * a start allocates nothing.
 *
 * Several starts in flight.  The request core completes a request (and
 * takes it off the engine's active list) as soon as every posted
 * transfer has finished, before the user's completion call; a start made
 * after that and before the completion call must put it back:
 * pnbc_request_rearm() (engine lock held).
 */

#include "chan.h"
#include "mpiext_pnbc_c.h"

#include "ompi/errhandler/errhandler.h"

#include <stdlib.h>

/* The slot after `at`. */
static inline uint32_t chan_next(const pnbc_chan_request_t *req, uint32_t at)
{
    return (at + 1 == (uint32_t) req->slack) ? 0 : at + 1;
}

static void note_error(pnbc_chan_request_t *req, int err)
{
    if (OPAL_UNLIKELY(MPI_SUCCESS != err) && OMPI_SUCCESS == req->super.exec.error) {
        req->super.exec.error = err;
    }
}

/* Post the transfer of start number req->posted: express where the
 * schedule was committed so (pnbc_schedule_t.express), which may finish
 * it within its post (its error noted now; chan_progress() counts it
 * when it gets there). */
static int chan_post(pnbc_chan_request_t *req)
{
    pnbc_action_t *a = &req->super.sched.actions[req->post_at];
    int rc;
    if (req->super.sched.express) {
        if (a->transport->xpost(a, &rc)) {
            note_error(req, rc);
        }
        rc = OMPI_SUCCESS;
    } else {
        rc = a->transport->post(a, &req->ch);
    }
    if (OMPI_SUCCESS == rc) {
        req->posted++;
        req->post_at = chan_next(req, req->post_at);
    }
    return rc;
}

/* Engine lock held: true when every posted transfer has finished. */
static bool chan_progress(pnbc_request_t *base)
{
    pnbc_chan_request_t *req = (pnbc_chan_request_t *) base;
    const bool express = base->sched.express;

    while (req->finished < req->posted) {
        pnbc_action_t *a = &base->sched.actions[req->test_at];
        int err = MPI_SUCCESS;
        if (a->inflight) {      /* (not: finished within its post) */
            if (!(express ? a->transport->xtest(a, &err) : a->transport->test(a, &err))) {
                return false;
            }
            note_error(req, err);
        }
        req->finished++;
        req->test_at = chan_next(req, req->test_at);
    }
    return true;
}

static bool chan_start(pnbc_request_t *base)
{
    pnbc_chan_request_t *req = (pnbc_chan_request_t *) base;

    base->exec.error = OMPI_SUCCESS;
    req->outstanding = 1;
    if (OPAL_LIKELY(base->sched.express)) {     /* (never MPI_PROC_NULL's: no schedule) */
        /* Nothing is in flight: the completion call that made the request
         * inactive found every transfer finished (finished == posted,
         * test_at == post_at).  One finished within its post is counted
         * here. */
        pnbc_action_t *a = &base->sched.actions[req->post_at];
        req->post_at = chan_next(req, req->post_at);
        req->posted++;
        if (!a->transport->xpost(a, &base->exec.error)) {
            return false;
        }
        req->finished++;
        req->test_at = req->post_at;
        return true;
    }
    if (req->proc_null) {
        return true;
    }
    int rc = chan_post(req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        note_error(req, rc);
        return chan_progress(base);     /* the earlier ones, if any */
    }
    return chan_progress(base);
}

static int chan_start_active(pnbc_request_t *base)
{
    pnbc_chan_request_t *req = (pnbc_chan_request_t *) base;

    if (req->outstanding >= req->slack) {
        return MPI_ERR_REQUEST;         /* K starts already: changes nothing */
    }
    if (req->proc_null) {
        req->outstanding++;
        return MPI_SUCCESS;
    }
    const bool was_complete = REQUEST_COMPLETE(&base->super);
    int rc = chan_post(req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return ompi_errcode_get_mpi_code(rc);
    }
    req->outstanding++;
    if (!chan_progress(base) && was_complete) {
        pnbc_request_rearm(base);
    }
    return MPI_SUCCESS;
}

/* Refuse (change nothing) when an active channel already has K starts. */
static int slack_check(ompi_request_t *r)
{
    if (!pnbc_chan_is_channel(r) || !pnbc_request_is_active((pnbc_request_t *) r)) {
        return MPI_SUCCESS;
    }
    const pnbc_chan_request_t *req = (const pnbc_chan_request_t *) r;
    return (req->outstanding >= req->slack) ? MPI_ERR_REQUEST : MPI_SUCCESS;
}

static int slack_error(ompi_request_t *r, int err, const char *name)
{
    ompi_communicator_t *comm = pnbc_chan_is_channel(r) ? ((pnbc_request_t *) r)->comm
                                                        : &ompi_mpi_comm_world.comm;
    return OMPI_ERRHANDLER_INVOKE(comm, err, name);
}

/* One more start of an active channel (slack_check passed). */
static int slack_start_active(ompi_request_t *r, const char *name)
{
    pnbc_engine_lock();
    int err = chan_start_active((pnbc_request_t *) r);
    pnbc_engine_unlock();
    return (MPI_SUCCESS == err) ? MPI_SUCCESS : slack_error(r, err, name);
}

static bool is_active_channel(ompi_request_t *r)
{
    return pnbc_chan_is_channel(r) && pnbc_request_is_active((pnbc_request_t *) r);
}

int MPIX_Start_slack(MPI_Request *request)
{
    static const char name[] = "MPIX_Start_slack";
    if (NULL == request) {
        return slack_error(NULL, MPI_ERR_REQUEST, name);
    }
    if (!is_active_channel(*request)) {
        return MPI_Start(request);      /* Open MPI's own checks */
    }
    int err = slack_check(*request);
    return (MPI_SUCCESS == err) ? slack_start_active(*request, name)
                                : slack_error(*request, err, name);
}

int MPIX_Startall_slack(int count, MPI_Request requests[])
{
    static const char name[] = "MPIX_Startall_slack";
    if (count < 0) {
        return slack_error(NULL, MPI_ERR_ARG, name);
    }
    if (count > 0 && NULL == requests) {
        return slack_error(NULL, MPI_ERR_REQUEST, name);
    }
    /* Every refusal before anything starts: a refused call changes
     * nothing (the checks MPI_Startall makes itself are left to it). */
    for (int i = 0; i < count; ++i) {
        int err = slack_check(requests[i]);
        if (MPI_SUCCESS != err) {
            return slack_error(requests[i], err, name);
        }
    }
    /* Runs of other requests go to MPI_Startall as they are (one call per
     * run, as the user would make it); active channels one by one. */
    int rc = MPI_SUCCESS;
    int i = 0;
    while (i < count && MPI_SUCCESS == rc) {
        int j = i;
        while (j < count && !is_active_channel(requests[j])) {
            ++j;
        }
        if (j > i) {
            rc = MPI_Startall(j - i, &requests[i]);
        } else {
            rc = slack_start_active(requests[i], name);
            j = i + 1;
        }
        i = j;
    }
    return rc;
}

/* The status every completion reports (see chan_ops). */
static void chan_complete(pnbc_request_t *base)
{
    pnbc_chan_request_t *req = (pnbc_chan_request_t *) base;
    ompi_status_public_t *st = &base->super.req_status;

    if (req->proc_null) {
        st->MPI_SOURCE = MPI_PROC_NULL;
        st->MPI_TAG = MPI_ANY_TAG;
        st->_ucount = 0;
    } else if (req->is_send) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        st->_ucount = 0;
    } else {
        st->MPI_SOURCE = req->peer;
        st->MPI_TAG = req->tag;
        st->_ucount = req->bytes;
    }
}

static void chan_free_hook(pnbc_request_t *base)
{
    pnbc_chan_request_t *req = (pnbc_chan_request_t *) base;
    if (req->own_id) {
        pnbc_chan_id_release(req->id);
        req->own_id = false;
    }
}

/* The status is the same at every completion (MPI_ERROR aside, which the
 * request core sets): filled in once, at create. */
static const pnbc_request_ops_t chan_ops = {
    .start = chan_start,
    .progress = chan_progress,
    .free = chan_free_hook,
    .start_active = chan_start_active,
};

/* MPI_Request_free on a channel: refused (MPIX_Unbind_channel frees it). */
static int chan_req_free(ompi_request_t **request)
{
    pnbc_chan_request_t *req = (pnbc_chan_request_t *) *request;
    if (!req->unbinding) {
        return MPI_ERR_REQUEST;
    }
    return req->core_free(request);
}

static void chan_construct(pnbc_chan_request_t *req)
{
    req->proc_null = false;
    req->own_id = false;
    req->id = -1;
    req->posted = req->finished = 0;
    req->post_at = req->test_at = 0;
    req->outstanding = 0;
    req->unbinding = false;
    req->core_free = NULL;
}

OBJ_CLASS_INSTANCE(pnbc_chan_request_t, pnbc_request_t, chan_construct, NULL);

bool pnbc_chan_is_channel(ompi_request_t *r)
{
    return NULL != r && MPI_REQUEST_NULL != r && pnbc_request_is_pnbc(r) &&
           PNBC_REQ_CHANNEL == ((pnbc_request_t *) r)->kind;
}

void pnbc_chan_destroy(pnbc_chan_request_t *req)
{
    ompi_request_t *r = &req->super.super;
    req->unbinding = true;
    (void) ompi_request_free(&r);
}

int pnbc_chan_create(const pnbc_chan_spec_t *sp, pnbc_chan_request_t **out)
{
    pnbc_chan_request_t *req = OBJ_NEW(pnbc_chan_request_t);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    const int data_tag = sp->proc_null ? 0 : PNBC_CHAN_TAG_FIRST - sp->id;
    pnbc_request_setup(&req->super, PNBC_REQ_CHANNEL, &chan_ops, sp->comm, data_tag);
    req->core_free = req->super.super.req_free;
    req->super.super.req_free = chan_req_free;
    req->super.name = sp->is_send ? "channel-send" : "channel-recv";
    req->super.algorithm = "slots";
    req->is_send = sp->is_send;
    req->proc_null = sp->proc_null;
    req->peer = sp->peer;
    req->tag = sp->tag;
    req->id = sp->id;
    req->own_id = sp->own_id;
    req->slack = sp->slack;
    req->bytes = sp->count * pnbc_type_size(sp->dtype);
    chan_complete(&req->super);

    int rc = OMPI_SUCCESS;
    if (!sp->proc_null) {
        pnbc_schedule_t *s = &req->super.sched;
        const ptrdiff_t step = sp->incr * pnbc_extent(sp->dtype);
        const pnbc_buf_t buf = sp->is_send ? PNBC_BUF_SEND : PNBC_BUF_RECV;
        rc = pnbc_request_retain_dtype(&req->super, sp->dtype);
        pnbc_sched_round(s);
        for (int k = 0; k < sp->slack; ++k) {
            if (sp->is_send) {
                pnbc_sched_send(s, pnbc_ref(buf, k * step), sp->count, sp->dtype, sp->peer);
            } else {
                pnbc_sched_recv(s, pnbc_ref(buf, k * step), sp->count, sp->dtype, sp->peer);
            }
        }
        s->distinct_tags = false;   /* one tag; PML order pairs the slots */
        s->sizes_may_differ = false;
        s->large.box_max = PNBC_CHAN_BOX_MAX;
        s->large.shm_max = SIZE_MAX;
        s->large.single_copy = false;  /* streaming beats process_vm_readv
                                          here (see chan.h) */
        if (OMPI_SUCCESS == rc) {
            rc = pnbc_sched_commit(s, sp->base, sp->base, sp->comm, data_tag);
        }
        /* no waker: a channel has its own progress hook, never parked */
        req->ch = (pnbc_channel_t) { .comm = sp->comm, .tag = data_tag, .large = s->large };
    }
    if (OMPI_SUCCESS != rc) {
        req->own_id = false;        /* the caller releases it */
        pnbc_chan_destroy(req);
        return rc;
    }
    *out = req;
    return OMPI_SUCCESS;
}
