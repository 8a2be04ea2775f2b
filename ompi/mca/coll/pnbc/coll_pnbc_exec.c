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
 */

#include "coll_pnbc_schedule.h"
#include "coll_pnbc_transport.h"

#include "opal/datatype/opal_convertor.h"

/* Run one convertor over a flat region (pack into it or unpack from
 * it), for up to `bytes` from `position` on in packed order; returns the
 * bytes moved (packing stops short of an element that does not fit).
 * Also used by the shm transport, one fragment at a time. */
size_t pnbc_convert_part(opal_convertor_t *conv, void *flat, size_t bytes, size_t position,
                         bool pack)
{
    size_t max_data = bytes;
    struct iovec iov = { .iov_base = flat, .iov_len = bytes };
    uint32_t iov_count = 1;

    /* Consecutive fragments continue where the last one stopped: then
     * the convertor keeps the part of an element that straddles the
     * boundary, which setting the position again would drop. */
    if (conv->bConverted != position) {
        opal_convertor_set_position(conv, &position);
    }
    if (pack) {
        opal_convertor_pack(conv, &iov, &iov_count, &max_data);
    } else {
        opal_convertor_unpack(conv, &iov, &iov_count, &max_data);
    }
    return max_data;
}

int pnbc_convert_flat(opal_convertor_t *conv, void *flat, size_t bytes, bool pack)
{
    return (pnbc_convert_part(conv, flat, bytes, 0, pack) == bytes) ? OMPI_SUCCESS
                                                                    : MPI_ERR_TRUNCATE;
}

static int exec_convert(const pnbc_action_t *a)
{
    const size_t bytes = a->staging.count;
    int rc = OMPI_SUCCESS;

    if (NULL != a->pack) {
        rc = pnbc_convert_flat(a->pack, a->staging.addr, bytes, true);
    }
    if (OMPI_SUCCESS == rc && NULL != a->unpack) {
        rc = pnbc_convert_flat(a->unpack, a->staging.addr, bytes, false);
    }
    return rc;
}

static int exec_local(const pnbc_action_t *a)
{
    if (PNBC_ACT_REDUCE == a->kind) {
        ompi_op_reduce(a->op, a->src.addr, a->buf.addr, a->buf.count, a->buf.dtype);
        return OMPI_SUCCESS;
    }
    /* COPY: same type map is a straight content copy; otherwise the
     * convertors prepared at commit pack and/or unpack. */
    if (NULL == a->pack && NULL == a->unpack) {
        return ompi_datatype_copy_content_same_ddt(a->buf.dtype, a->buf.count,
                                                   (char *) a->buf.addr,
                                                   (char *) a->src.addr);
    }
    return exec_convert(a);
}

/* Run round x->round's actions; leaves x->pending = posted SEND/RECVs. */
static void exec_begin_round(pnbc_exec_t *x)
{
    const pnbc_round_t *r = &x->sched->rounds[x->round];
    pnbc_action_t *a = &x->sched->actions[r->first];
    const pnbc_channel_t ch = { x->comm, x->tag, { 0, 0, false } };
    int rc;

    x->pending = 0;
    for (uint32_t i = 0; i < r->nactions; ++i, ++a) {
        if (PNBC_ACT_SEND == a->kind || PNBC_ACT_RECV == a->kind) {
            rc = a->transport->post(a, &ch);
            if (OMPI_SUCCESS == rc) {
                x->pending++;
            }
        } else if (!a->folded) {
            rc = exec_local(a);
        } else {
            rc = OMPI_SUCCESS;      /* done by the transport of a RECV */
        }
        if (OPAL_UNLIKELY(OMPI_SUCCESS != rc) && OMPI_SUCCESS == x->error) {
            x->error = rc;
        }
    }
}

/* Test the current round's in-flight actions; true when none is left. */
static bool exec_round_done(pnbc_exec_t *x)
{
    const pnbc_round_t *r = &x->sched->rounds[x->round];
    pnbc_action_t *a = &x->sched->actions[r->first];
    int err;

    for (uint32_t i = 0; i < r->nactions && x->pending > 0; ++i, ++a) {
        if (!a->inflight || !a->transport->test(a, &err)) {
            continue;
        }
        x->pending--;
        if (OPAL_UNLIKELY(MPI_SUCCESS != err) && OMPI_SUCCESS == x->error) {
            x->error = err;
        }
    }
    return 0 == x->pending;
}

bool pnbc_exec_progress(pnbc_exec_t *x)
{
    while (x->round < x->sched->nrounds) {
        if (!exec_round_done(x)) {
            return false;
        }
        /* After an error the remaining rounds would read or send garbage:
         * stop here, with every posted action of this round finished. */
        if (OPAL_UNLIKELY(OMPI_SUCCESS != x->error)) {
            x->round = x->sched->nrounds;
            break;
        }
        if (++x->round < x->sched->nrounds) {
            exec_begin_round(x);
        }
    }
    return true;
}

bool pnbc_exec_start(pnbc_exec_t *x)
{
    x->round = 0;
    x->pending = 0;
    x->error = OMPI_SUCCESS;
    if (0 == x->sched->nrounds) {
        return true;
    }
    exec_begin_round(x);
    return pnbc_exec_progress(x);
}
