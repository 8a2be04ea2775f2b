/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The executor: runs a committed schedule.  It knows nothing about the
 * collective that built the schedule -- only rounds of typed actions --
 * so any persistent operation expressed as a schedule can run on it.
 *
 * A round begins by running its actions in order (local ones execute,
 * SEND/RECV are posted through their transport); it ends when every
 * posted action has completed, and the next round begins at once in the
 * same call, so a schedule advances as far as it can every time it is
 * polled (from MPI_Start and from the opal_progress callback).
 *
 * Express: a schedule whose every SEND/RECV its transport can move with
 * no channel, no gate and no pairing per start (pnbc_schedule_t.express,
 * decided at commit) runs through the transports' xpost/xtest, which
 * finish a message within its post when the peer lets them: a start that
 * finds its peers' messages there completes in one pass.
 */

#include "common_pnbc_schedule.h"
#include "common_pnbc_transport.h"

#include "opal/datatype/opal_convertor.h"

static int exec_convert(const pnbc_copy_convert_t *cv)
{
    const size_t bytes = cv->staging.count;
    int rc = OMPI_SUCCESS;

    if (NULL != cv->pack) {
        rc = pnbc_convert_flat(cv->pack, cv->staging.addr, bytes, true);
    }
    if (OMPI_SUCCESS == rc && NULL != cv->unpack) {
        rc = pnbc_convert_flat(cv->unpack, cv->staging.addr, bytes, false);
    }
    return rc;
}

/* A plain COPY (pnbc_action_t.plain): one block of bytes. */
static inline void exec_plain_copy(const pnbc_action_t *a)
{
    const ptrdiff_t lb = a->buf.dtype->super.true_lb;
    pnbc_copy((char *) a->buf.addr + lb, (const char *) a->src.addr + lb,
              a->buf.count * a->buf.dtype->super.size);
}

static int exec_local(const pnbc_action_t *a)
{
    if (PNBC_ACT_REDUCE == a->kind) {
        ompi_op_reduce(a->op, a->src.addr, a->buf.addr, a->buf.count, a->buf.dtype);
        return OMPI_SUCCESS;
    }
    /* COPY: same type map is a straight content copy (one block of bytes
     * when the type map has no gaps: a plain COPY, which exec_run_round
     * copies itself); otherwise the convertors prepared at commit pack
     * and/or unpack. */
    if (NULL == a->convert) {
        return ompi_datatype_copy_content_same_ddt(a->buf.dtype, a->buf.count,
                                                   (char *) a->buf.addr,
                                                   (char *) a->src.addr);
    }
    return exec_convert(a->convert);
}

static pnbc_channel_t exec_channel(const pnbc_exec_t *x)
{
    const pnbc_channel_t ch = { .comm = x->comm, .tag = x->tag,
                                .distinct_tags = x->sched->distinct_tags,
                                .sizes_may_differ = x->sched->sizes_may_differ,
                                .retag = x->sched->retag, .waker = x->sched->waker };
    return ch;
}

/* A retagged schedule runs under x->tag this time: its transports pair
 * each message afresh, before the first round posts any. */
static void exec_retag(pnbc_exec_t *x)
{
    const pnbc_channel_t ch = exec_channel(x);
    pnbc_action_t *a = x->sched->actions;

    for (uint32_t i = 0; i < x->sched->nactions; ++i, ++a) {
        if (pnbc_action_is_comm(a) && NULL != a->transport->retag) {
            a->transport->retag(a, &ch);
        }
    }
}

static void exec_note_error(pnbc_exec_t *x, int rc)
{
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc) && OMPI_SUCCESS == x->error) {
        x->error = rc;
    }
}

/* Run round x->round's actions; leaves x->pending = SEND/RECVs posted or
 * waiting for their gate.  Express (pnbc_schedule_t.express): no gates,
 * and each SEND/RECV through its transport's xpost, which may finish it
 * at once; no channel is built. */
static inline __attribute__((always_inline)) void exec_run_round(pnbc_exec_t *x, bool express)
{
    const pnbc_round_t *r = &x->sched->rounds[x->round];
    pnbc_action_t *a = &x->sched->actions[r->first];
    const pnbc_action_t *const end = a + r->nactions;
    pnbc_channel_t ch;
    uint32_t pending = 0;
    int rc;

    if (!express) {
        ch = exec_channel(x);
    }
    for (; a < end; ++a) {
        if (pnbc_action_is_comm(a)) {
            if (express) {
                a->done = a->transport->xpost(a, &rc);
                if (a->done) {
                    exec_note_error(x, rc);
                } else {
                    pending++;
                }
                continue;
            }
            a->done = false;
            if (a->gate_left > 0) {
                pending++;          /* posted by pnbc_exec_open_gate() */
                continue;
            }
            rc = a->transport->post(a, &ch);
            if (a->inflight) {
                pending++;
            } else if (OMPI_SUCCESS == rc) {
                a->done = true;     /* finished within its post */
            }
        } else if (a->plain) {
            exec_plain_copy(a);     /* (no call: the small ones inline) */
            continue;
        } else if (!a->folded) {
            rc = exec_local(a);
        } else {
            rc = OMPI_SUCCESS;      /* done by the transport of a RECV */
        }
        exec_note_error(x, rc);
    }
    x->pending = pending;
}

static void exec_begin_round(pnbc_exec_t *x)
{
    exec_run_round(x, false);
}

int pnbc_exec_open_gate(pnbc_exec_t *x, pnbc_action_t *a)
{
    if (0 == a->gate_left || 0 != --a->gate_left) {
        return OMPI_SUCCESS;
    }
    const pnbc_round_t *r = &x->sched->rounds[x->round < x->sched->nrounds ? x->round : 0];
    const uint32_t idx = (uint32_t) (a - x->sched->actions);
    if (x->round >= x->sched->nrounds || idx < r->first || idx >= r->first + r->nactions) {
        return OMPI_SUCCESS;        /* its round posts it when it begins */
    }
    const pnbc_channel_t ch = exec_channel(x);
    int rc = a->transport->post(a, &ch);
    if (!a->inflight) {
        x->pending--;               /* counted as waiting: finished within its post, or failed */
        a->done = (OMPI_SUCCESS == rc);
        exec_note_error(x, rc);
    }
    return rc;
}

/* Test the current round's in-flight actions (express: through xtest);
 * true when none is left. */
static inline __attribute__((always_inline)) bool exec_round_done(pnbc_exec_t *x, bool express)
{
    if (0 == x->pending) {
        return true;                /* its actions finished within their posts */
    }
    const pnbc_round_t *r = &x->sched->rounds[x->round];
    pnbc_action_t *a = &x->sched->actions[r->first];
    int err;

    for (uint32_t i = 0; i < r->nactions && x->pending > 0; ++i, ++a) {
        if (!a->inflight ||
            !(express ? a->transport->xtest(a, &err) : a->transport->test(a, &err))) {
            continue;
        }
        x->pending--;
        a->done = true;
        exec_note_error(x, err);
    }
    return 0 == x->pending;
}

/* Advance as far as possible (express: see exec_run_round). */
static inline __attribute__((always_inline)) bool exec_advance(pnbc_exec_t *x, bool express)
{
    while (x->round < x->sched->nrounds) {
        if (!exec_round_done(x, express)) {
            return false;
        }
        /* After an error the remaining rounds would read or send garbage:
         * stop here, with every posted action of this round finished. */
        if (OPAL_UNLIKELY(OMPI_SUCCESS != x->error)) {
            x->round = x->sched->nrounds;
            break;
        }
        if (++x->round < x->sched->nrounds) {
            exec_run_round(x, express);
        }
    }
    return true;
}

bool pnbc_exec_progress(pnbc_exec_t *x)
{
    return exec_advance(x, false);
}

bool pnbc_exec_express_progress(pnbc_exec_t *x)
{
    return exec_advance(x, true);
}

bool pnbc_exec_express_start(pnbc_exec_t *x)
{
    x->round = 0;
    x->error = OMPI_SUCCESS;
    if (OPAL_UNLIKELY(0 == x->sched->nrounds)) {
        x->pending = 0;
        return true;
    }
    exec_run_round(x, true);
    return exec_advance(x, true);
}

bool pnbc_exec_start(pnbc_exec_t *x)
{
    x->round = 0;
    x->pending = 0;
    x->error = OMPI_SUCCESS;
    if (0 == x->sched->nrounds) {
        return true;
    }
    if (x->sched->retag_pass) {
        exec_retag(x);
    }
    exec_begin_round(x);
    return pnbc_exec_progress(x);
}
