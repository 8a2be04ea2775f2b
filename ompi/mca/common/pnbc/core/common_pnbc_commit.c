/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Commit: turn a built schedule into one a start can run without any
 * arithmetic or allocation -- allocate the temporary area, drop empty
 * rounds, number the messages of each pair of ranks, resolve every
 * reference to an address, prepare convertors, bind each SEND/RECV to a
 * transport, and apply the peepholes the bound transports allow (eager
 * sends first, reductions folded into a receive).
 */

#include "common_pnbc_schedule.h"
#include "common_pnbc_transport.h"

#include "opal/datatype/opal_convertor.h"

#include <stdlib.h>
#include <string.h>

/* COPY between different type maps (a->convert, made by the builder;
 * a copy within one type map is a content copy and has none): pack from
 * a non-contiguous source, unpack into a non-contiguous destination (both
 * through staging). */
static int bind_copy(pnbc_action_t *a)
{
    pnbc_copy_convert_t *cv = a->convert;
    bool src_flat = ompi_datatype_is_contiguous_memory_layout(a->src.dtype, a->src.count);
    bool dst_flat = ompi_datatype_is_contiguous_memory_layout(a->buf.dtype, a->buf.count);
    if (!src_flat || dst_flat) {
        cv->pack = pnbc_prepared_convertor(&a->src, true);
        if (NULL == cv->pack) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (!dst_flat) {
        cv->unpack = pnbc_prepared_convertor(&a->buf, false);
        if (NULL == cv->unpack) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    /* With one convertor the flat side is the staging region: its data
     * starts at its true lower bound. */
    ptrdiff_t true_lb, true_extent;
    if (NULL == cv->unpack) {
        ompi_datatype_get_true_extent(a->buf.dtype, &true_lb, &true_extent);
        cv->staging.addr = (char *) a->buf.addr + true_lb;
    } else if (NULL == cv->pack) {
        ompi_datatype_get_true_extent(a->src.dtype, &true_lb, &true_extent);
        cv->staging.addr = (char *) a->src.addr + true_lb;
    }
    return OMPI_SUCCESS;
}

/* Remove rounds that ended up with no actions (builders may open a round
 * and then find nothing to do in it on this rank). */
static void sched_drop_empty_rounds(pnbc_schedule_t *s)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->nrounds; ++i) {
        if (s->rounds[i].nactions > 0) {
            s->rounds[kept++] = s->rounds[i];
        }
    }
    s->nrounds = kept;
}

static bool is_eager_send(const pnbc_action_t *a)
{
    return PNBC_ACT_SEND == a->kind && 0 != (a->transport->caps & PNBC_TCAP_EAGER_SEND);
}

/* Actions [from, to): eager sends first, the rest after them, stably. */
static void eager_sends_first(pnbc_action_t *acts, uint32_t from, uint32_t to,
                              pnbc_action_t *spill)
{
    uint32_t front = from, back = 0;
    for (uint32_t k = from; k < to; ++k) {
        if (is_eager_send(&acts[k])) {
            acts[front++] = acts[k];
        } else {
            spill[back++] = acts[k];
        }
    }
    memcpy(&acts[front], spill, back * sizeof(*spill));
}

/* Within each run of consecutive SEND/RECVs of a round, post the SENDs
 * whose transport is eager (PNBC_TCAP_EAGER_SEND) first: such a send is
 * done once its data is at the peer's side, and the peer gets it sooner
 * than after our receives are posted (docs/design-measurements.md,
 * "Eager sends first").  Receives stay ahead of the PML's sends, so
 * that an eager message finds its receive posted.  A stable partition: the order of
 * the sends to any one peer, hence pair_seq and MPI's matching order,
 * does not change.  Local actions are not crossed (they may prepare a
 * send or consume a receive).  Runs before the transports' commit, which
 * keeps pointers to actions. */
static int sched_eager_sends_first(pnbc_schedule_t *s)
{
    pnbc_action_t *spill = NULL;
    for (uint32_t r = 0; r < s->nrounds; ++r) {
        const uint32_t round_end = s->rounds[r].first + s->rounds[r].nactions;
        for (uint32_t i = s->rounds[r].first; i < round_end;) {
            uint32_t end = i, neager = 0;
            while (end < round_end && pnbc_action_is_comm(&s->actions[end])) {
                neager += is_eager_send(&s->actions[end++]);
            }
            if (neager > 0 && end - i > neager) {
                if (NULL == spill && NULL == (spill = malloc(s->nactions * sizeof(*spill)))) {
                    return OMPI_ERR_OUT_OF_RESOURCE;
                }
                eager_sends_first(s->actions, i, end, spill);
            }
            i = (end > i) ? end : i + 1;
        }
    }
    free(spill);
    return OMPI_SUCCESS;
}

/* The bytes a resolved span touches: [*lo, *hi). */
static void span_range(const pnbc_span_t *sp, const char **lo, const char **hi)
{
    *lo = *hi = sp->addr;
    if (NULL == sp->addr || NULL == sp->dtype || 0 == sp->count) {
        return;
    }
    ptrdiff_t lb, extent, true_lb, true_extent;
    ompi_datatype_get_extent(sp->dtype, &lb, &extent);
    ompi_datatype_get_true_extent(sp->dtype, &true_lb, &true_extent);
    *lo = (const char *) sp->addr + true_lb;
    *hi = *lo + true_extent + (ptrdiff_t) (sp->count - 1) * extent;
}

static bool spans_overlap(const pnbc_span_t *x, const pnbc_span_t *y)
{
    const char *xlo, *xhi, *ylo, *yhi;
    span_range(x, &xlo, &xhi);
    span_range(y, &ylo, &yhi);
    return xlo < xhi && ylo < yhi && xlo < yhi && ylo < xhi;
}

static bool span_eq(const pnbc_span_t *x, const pnbc_span_t *y)
{
    return x->addr == y->addr && x->count == y->count && x->dtype == y->dtype;
}

/* Does action b write / read or write any byte of span sp? */
static bool action_writes(const pnbc_action_t *b, const pnbc_span_t *sp)
{
    return PNBC_ACT_SEND != b->kind && spans_overlap(&b->buf, sp);
}

static bool action_touches(const pnbc_action_t *b, const pnbc_span_t *sp)
{
    return spans_overlap(&b->buf, sp) ||
           ((PNBC_ACT_REDUCE == b->kind || PNBC_ACT_COPY == b->kind) && spans_overlap(&b->src, sp));
}

/* Elements a fold can take a fragment at a time: one contiguous run of
 * equal, gap-free elements (a fragment may end inside one; the transport
 * keeps the part, up to 64 bytes). */
static bool foldable_type(const pnbc_span_t *sp)
{
    ptrdiff_t lb, extent, true_lb, true_extent;
    if (NULL == sp->dtype || 0 == sp->count ||
        !ompi_datatype_is_contiguous_memory_layout(sp->dtype, sp->count)) {
        return false;
    }
    ompi_datatype_get_extent(sp->dtype, &lb, &extent);
    ompi_datatype_get_true_extent(sp->dtype, &true_lb, &true_extent);
    return 0 == lb && 0 == true_lb && (size_t) extent == sp->dtype->super.size &&
           true_extent == extent && extent > 0 && extent <= 64;
}

/* May the REDUCE x at the head of round r+1 happen while RECV a of
 * round r arrives, fragment by fragment?  x either folds the message into
 * an accumulator (src = a's landing zone, which is then never written:
 * it must be a dead part of the temporary area) or folds an operand into
 * the message (buf = a's landing zone).  Nothing else of round r may touch the accumulator, or
 * write the operand, and nothing of round r+1 before x may touch
 * either. */
static bool fold_ok(const pnbc_schedule_t *s, uint32_t r, const pnbc_action_t *a,
                    const pnbc_action_t *x)
{
    const bool into_acc = span_eq(&x->src, &a->buf);
    if (!(into_acc || span_eq(&x->buf, &a->buf)) ||
        (into_acc && PNBC_BUF_TMP != a->buf.ref.buf) || x->src.count != x->buf.count ||
        x->src.dtype != x->buf.dtype || !foldable_type(&x->buf) ||
        spans_overlap(&x->src, &x->buf)) {
        return false;
    }
    const pnbc_span_t *other = into_acc ? &x->buf : &x->src;
    const pnbc_round_t *now = &s->rounds[r], *next = &s->rounds[r + 1];
    for (uint32_t i = now->first; i < now->first + now->nactions; ++i) {
        const pnbc_action_t *b = &s->actions[i];
        if (b != a && (into_acc ? action_touches(b, other) : action_writes(b, other))) {
            return false;
        }
    }
    for (const pnbc_action_t *b = &s->actions[next->first]; b != x; ++b) {
        if (action_touches(b, other) || action_touches(b, &a->buf)) {
            return false;
        }
    }
    if (!into_acc) {
        return true;
    }
    /* The landing zone stays empty: its next user must overwrite it. */
    for (const pnbc_action_t *b = x + 1; b < &s->actions[s->nactions]; ++b) {
        if (action_touches(b, &a->buf)) {
            return PNBC_ACT_RECV == b->kind && span_eq(&b->buf, &a->buf);
        }
    }
    return true;
}

/* Offer each RECV whose transport can fold (PNBC_TCAP_FOLD) the REDUCE
 * that consumes it, for the transport to carry out straight from its own
 * buffers (saving the copy out of them). */
static void find_folds(pnbc_schedule_t *s)
{
    for (uint32_t r = 0; r + 1 < s->nrounds; ++r) {
        const pnbc_round_t *now = &s->rounds[r], *next = &s->rounds[r + 1];
        for (uint32_t i = now->first; i < now->first + now->nactions; ++i) {
            pnbc_action_t *a = &s->actions[i];
            if (PNBC_ACT_RECV != a->kind || 0 == (a->transport->caps & PNBC_TCAP_FOLD)) {
                continue;
            }
            for (uint32_t j = next->first; j < next->first + next->nactions; ++j) {
                pnbc_action_t *x = &s->actions[j];
                if (pnbc_action_is_comm(x)) {
                    break;
                }
                if (PNBC_ACT_REDUCE == x->kind && !x->folded && NULL == a->fold &&
                    fold_ok(s, r, a, x)) {
                    a->fold = x;
                }
            }
        }
    }
}

static void resolve(pnbc_span_t *sp, char *const base[PNBC_NBUFS])
{
    sp->addr = (PNBC_BUF_NONE == sp->ref.buf) ? NULL : base[sp->ref.buf] + sp->ref.disp;
}

/* Number the messages between each ordered pair of ranks: the k-th SEND
 * to a peer and that peer's k-th RECV from us are the same message.  One
 * counter per (direction, local group or not, peer): O(actions + peers). */
static int number_pair_messages(pnbc_schedule_t *s)
{
    int max_peer = -1;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (pnbc_action_is_comm(&s->actions[i]) && s->actions[i].peer > max_peer) {
            max_peer = s->actions[i].peer;
        }
    }
    if (max_peer < 0) {
        return OMPI_SUCCESS;
    }
    const size_t npeers = (size_t) max_peer + 1;
    uint32_t small[4 * 64];     /* up to 64 peers: no allocation */
    uint32_t *next = (npeers <= 64) ? small : malloc(4 * npeers * sizeof(*next));
    if (NULL == next) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memset(next, 0, 4 * npeers * sizeof(*next));
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (!pnbc_action_is_comm(a)) {
            continue;
        }
        const size_t lane = 2 * (PNBC_ACT_SEND == a->kind) + (a->local ? 1 : 0);
        a->pair_seq = next[lane * npeers + (size_t) a->peer]++;
    }
    if (next != small) {
        free(next);
    }
    return OMPI_SUCCESS;
}

/* May the schedule run express (pnbc_schedule_t.express)?  Asked of
 * each SEND/RECV's transport once its commit step is done; a retagged
 * schedule never does (its transports pair messages at each start). */
static bool sched_express(pnbc_schedule_t *s)
{
    if (s->retag) {
        return false;
    }
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (pnbc_action_is_comm(a) &&
            (NULL == a->transport->express || !a->transport->express(a))) {
            return false;
        }
    }
    return true;
}

int pnbc_sched_commit(pnbc_schedule_t *s, const void *sbuf, void *rbuf,
                      ompi_communicator_t *comm, int tag)
{
    const pnbc_channel_t ch = { .comm = comm, .tag = tag, .distinct_tags = s->distinct_tags,
                                .sizes_may_differ = s->sizes_may_differ, .retag = s->retag,
                                .large = s->large, .waker = s->waker };

    if (OMPI_SUCCESS != s->error) {
        return s->error;
    }
    if (s->tmp_size > 0) {
        s->tmp = malloc(s->tmp_size);
        if (NULL == s->tmp) {
            return s->error = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    sched_drop_empty_rounds(s);
    pnbc_sched_settle(s);
    if (OMPI_SUCCESS != s->error) {
        return s->error;
    }
    if (OMPI_SUCCESS != number_pair_messages(s)) {
        return s->error = OMPI_ERR_OUT_OF_RESOURCE;
    }

    char *const base[PNBC_NBUFS] = {
        [PNBC_BUF_NONE] = NULL,
        [PNBC_BUF_SEND] = (char *) sbuf,
        [PNBC_BUF_RECV] = (char *) rbuf,
        [PNBC_BUF_TMP] = (char *) s->tmp,
    };
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        resolve(&a->buf, base);
        if (pnbc_action_is_comm(a)) {
            pnbc_transport_bind(a, &ch);
            s->retag_pass |= s->retag && NULL != a->transport && NULL != a->transport->retag;
            continue;
        }
        resolve(&a->src, base);
        a->plain = PNBC_ACT_COPY == a->kind && NULL == a->convert &&
                   ompi_datatype_is_contiguous_memory_layout(a->buf.dtype, a->buf.count);
        if (PNBC_ACT_COPY == a->kind && NULL != a->convert) {
            resolve(&a->convert->staging, base);
            if (OMPI_SUCCESS != bind_copy(a)) {
                return s->error = OMPI_ERR_OUT_OF_RESOURCE;
            }
        }
    }
    if (OMPI_SUCCESS != sched_eager_sends_first(s)) {
        return s->error = OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < s->nrounds; ++r) {
        if (s->rounds[r].nactions > 0) {
            s->actions[s->rounds[r].first + s->rounds[r].nactions - 1].last = true;
        }
    }
    find_folds(s);
    s->error = pnbc_transport_commit(s, &ch);
    s->express = OMPI_SUCCESS == s->error && sched_express(s);
    return s->error;
}
