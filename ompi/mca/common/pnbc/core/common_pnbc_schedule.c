/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Schedule builder.  Runs only at init (and free), so it may allocate;
 * commit (common_pnbc_commit.c) then produces everything a start needs.
 */

#include "common_pnbc_schedule.h"
#include "common_pnbc_transport.h"

#include <stdlib.h>
#include <string.h>

#define PNBC_TMP_ALIGN 64   /* temporaries start on cache-line boundaries */

/* The build scratch.  A schedule grows its action and round arrays by
 * doubling while it is built, and commit gives the slack back: two or
 * three reallocs a build, and as many again to shrink.  Instead the
 * schedule under construction borrows a pair of arrays that keep their
 * size from one build to the next, and commit copies them out at their
 * exact size (pnbc_sched_settle): two allocations a build.  One schedule
 * borrows them at a time; another one built meanwhile (another thread,
 * a build inside a build) grows its own arrays as before.  Arrays that
 * grew past PNBC_SCRATCH_KEEP bytes are freed when given back. */
#define PNBC_SCRATCH_KEEP (256u * 1024u)

static struct {
    int lent;                   /* atomic: borrowed by a schedule */
    pnbc_action_t *actions;
    pnbc_round_t *rounds;
    uint32_t actions_cap, rounds_cap;
} scratch;

static void scratch_borrow(pnbc_schedule_t *s)
{
    if (0 != __atomic_exchange_n(&scratch.lent, 1, __ATOMIC_ACQUIRE)) {
        return;
    }
    s->scratch = true;
    s->actions = scratch.actions;
    s->actions_cap = scratch.actions_cap;
    s->rounds = scratch.rounds;
    s->rounds_cap = scratch.rounds_cap;
}

/* s's arrays back to the scratch (the schedule keeps none). */
static void scratch_return(pnbc_schedule_t *s)
{
    if (s->actions_cap * sizeof(pnbc_action_t) > PNBC_SCRATCH_KEEP) {
        free(s->actions);
        s->actions = NULL;
        s->actions_cap = 0;
    }
    if (s->rounds_cap * sizeof(pnbc_round_t) > PNBC_SCRATCH_KEEP) {
        free(s->rounds);
        s->rounds = NULL;
        s->rounds_cap = 0;
    }
    scratch.actions = s->actions;
    scratch.actions_cap = s->actions_cap;
    scratch.rounds = s->rounds;
    scratch.rounds_cap = s->rounds_cap;
    s->actions = NULL;
    s->rounds = NULL;
    s->actions_cap = s->rounds_cap = 0;
    s->scratch = false;
    __atomic_store_n(&scratch.lent, 0, __ATOMIC_RELEASE);
}

void pnbc_sched_scratch_fini(void)
{
    free(scratch.actions);
    free(scratch.rounds);
    memset(&scratch, 0, sizeof(scratch));
}

/* Exact copies of the borrowed arrays; false (scratch kept) when out of
 * memory. */
static bool scratch_settle(pnbc_schedule_t *s)
{
    pnbc_action_t *a = NULL;
    pnbc_round_t *r = NULL;
    if (s->nactions > 0 && NULL == (a = malloc(s->nactions * sizeof(*a)))) {
        return false;
    }
    if (s->nrounds > 0 && NULL == (r = malloc(s->nrounds * sizeof(*r)))) {
        free(a);
        return false;
    }
    if (s->nactions > 0) {
        memcpy(a, s->actions, s->nactions * sizeof(*a));
    }
    if (s->nrounds > 0) {
        memcpy(r, s->rounds, s->nrounds * sizeof(*r));
    }
    const uint32_t nactions = s->nactions, nrounds = s->nrounds;
    scratch_return(s);
    s->actions = a;
    s->rounds = r;
    s->actions_cap = s->nactions = nactions;
    s->rounds_cap = s->nrounds = nrounds;
    return true;
}

void pnbc_sched_settle(pnbc_schedule_t *s)
{
    if (s->scratch) {
        if (!scratch_settle(s)) {
            s->error = OMPI_ERR_OUT_OF_RESOURCE;
        }
        return;
    }
    /* grown by doubling: give the slack back (requests keep their
     * schedules for their whole life, applications thousands of them) */
    if (s->actions_cap > s->nactions && s->nactions > 0) {
        pnbc_action_t *a = realloc(s->actions, s->nactions * sizeof(*a));
        if (NULL != a) {
            s->actions = a;
            s->actions_cap = s->nactions;
        }
    }
    if (s->rounds_cap > s->nrounds && s->nrounds > 0) {
        pnbc_round_t *r = realloc(s->rounds, s->nrounds * sizeof(*r));
        if (NULL != r) {
            s->rounds = r;
            s->rounds_cap = s->nrounds;
        }
    }
}

void pnbc_sched_construct(pnbc_schedule_t *s)
{
    memset(s, 0, sizeof(*s));
}

void pnbc_sched_destruct(pnbc_schedule_t *s)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (pnbc_action_is_comm(a)) {
            pnbc_transport_unbind(a);
        } else if (PNBC_ACT_COPY == a->kind && NULL != a->convert) {
            if (NULL != a->convert->pack) {
                OBJ_RELEASE(a->convert->pack);
            }
            if (NULL != a->convert->unpack) {
                OBJ_RELEASE(a->convert->unpack);
            }
            free(a->convert);
        }
    }
    if (s->scratch) {
        scratch_return(s);      /* a build that never committed */
    }
    free(s->rounds);
    free(s->actions);
    free(s->tmp);
    memset(s, 0, sizeof(*s));
}

/* Grow an array to hold at least `need` elements; sticky error on failure. */
static bool sched_reserve(pnbc_schedule_t *s, void **array, uint32_t *cap,
                          uint32_t need, size_t elem_size)
{
    if (OMPI_SUCCESS != s->error) {
        return false;
    }
    if (NULL == s->actions && NULL == s->rounds && !s->scratch) {
        scratch_borrow(s);      /* the first reserve of a build */
    }
    if (need > *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        while (ncap < need) {
            ncap *= 2;
        }
        void *grown = realloc(*array, (size_t) ncap * elem_size);
        if (NULL == grown) {
            s->error = OMPI_ERR_OUT_OF_RESOURCE;
            return false;
        }
        *array = grown;
        *cap = ncap;
    }
    return true;
}

void pnbc_sched_round(pnbc_schedule_t *s)
{
    if (!sched_reserve(s, (void **) &s->rounds, &s->rounds_cap, s->nrounds + 1,
                       sizeof(pnbc_round_t))) {
        return;
    }
    pnbc_round_t *r = &s->rounds[s->nrounds++];
    r->first = s->nactions;
    r->nactions = 0;
    r->ncomm = 0;
}

/* Append an action to the current round (opening one if none is open). */
static pnbc_action_t *sched_append(pnbc_schedule_t *s, pnbc_action_kind_t kind)
{
    if (0 == s->nrounds) {
        pnbc_sched_round(s);
    }
    if (!sched_reserve(s, (void **) &s->actions, &s->actions_cap, s->nactions + 1,
                       sizeof(pnbc_action_t))) {
        return NULL;
    }
    pnbc_action_t *a = &s->actions[s->nactions++];
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    pnbc_round_t *r = &s->rounds[s->nrounds - 1];
    r->nactions++;
    if (pnbc_action_is_comm(a)) {
        r->ncomm++;
    }
    return a;
}

static pnbc_span_t span(pnbc_ref_t ref, size_t count, ompi_datatype_t *dtype)
{
    pnbc_span_t sp = { .ref = ref, .addr = NULL, .count = count, .dtype = dtype };
    return sp;
}

pnbc_ref_t pnbc_sched_tmp(pnbc_schedule_t *s, size_t count, ompi_datatype_t *dtype)
{
    ptrdiff_t lb, extent, true_lb, true_extent;
    ompi_datatype_get_extent(dtype, &lb, &extent);
    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);

    size_t bytes = 0;
    if (count > 0) {
        bytes = (size_t) true_extent + (count - 1) * (size_t) extent;
    }
    size_t offset = (s->tmp_size + PNBC_TMP_ALIGN - 1) & ~(size_t) (PNBC_TMP_ALIGN - 1);
    s->tmp_size = offset + bytes;
    /* Element 0's data begins at true_lb: shift so it lands at `offset`. */
    return pnbc_ref(PNBC_BUF_TMP, (ptrdiff_t) offset - true_lb);
}

void pnbc_sched_local_peers(pnbc_schedule_t *s, bool local)
{
    s->local_peers = local;
}

static void sched_p2p(pnbc_schedule_t *s, pnbc_action_kind_t kind, pnbc_ref_t ref,
                      size_t count, ompi_datatype_t *dtype, int peer)
{
    pnbc_action_t *a = sched_append(s, kind);
    if (NULL != a) {
        a->buf = span(ref, count, dtype);
        a->peer = peer;
        a->local = s->local_peers;
    }
}

void pnbc_sched_send(pnbc_schedule_t *s, pnbc_ref_t ref, size_t count,
                     ompi_datatype_t *dtype, int peer)
{
    sched_p2p(s, PNBC_ACT_SEND, ref, count, dtype, peer);
}

void pnbc_sched_recv(pnbc_schedule_t *s, pnbc_ref_t ref, size_t count,
                     ompi_datatype_t *dtype, int peer)
{
    sched_p2p(s, PNBC_ACT_RECV, ref, count, dtype, peer);
}

void pnbc_sched_reduce(pnbc_schedule_t *s, pnbc_ref_t source, pnbc_ref_t target,
                       size_t count, ompi_datatype_t *dtype, ompi_op_t *op)
{
    if (0 == count) {
        return;
    }
    pnbc_action_t *a = sched_append(s, PNBC_ACT_REDUCE);
    if (NULL != a) {
        a->buf = span(target, count, dtype);
        a->src = span(source, count, dtype);
        a->op = op;
    }
}

void pnbc_sched_copy(pnbc_schedule_t *s, pnbc_ref_t src, size_t scount,
                     ompi_datatype_t *sdtype, pnbc_ref_t dst, size_t dcount,
                     ompi_datatype_t *ddtype)
{
    if (0 == scount || (pnbc_ref_eq(src, dst) && sdtype == ddtype && scount == dcount)) {
        return;
    }
    bool convert = (sdtype != ddtype || scount != dcount);
    bool via_staging = convert && !ompi_datatype_is_contiguous_memory_layout(sdtype, scount) &&
                       !ompi_datatype_is_contiguous_memory_layout(ddtype, dcount);
    pnbc_ref_t staging = PNBC_REF_NONE;
    if (via_staging) {
        staging = pnbc_sched_tmp(s, scount * sdtype->super.size, MPI_BYTE);
    }
    pnbc_copy_convert_t *cv = NULL;
    if (convert && OMPI_SUCCESS == s->error && NULL == (cv = calloc(1, sizeof(*cv)))) {
        s->error = OMPI_ERR_OUT_OF_RESOURCE;
    }
    pnbc_action_t *a = sched_append(s, PNBC_ACT_COPY);
    if (NULL == a) {
        free(cv);
        return;
    }
    a->buf = span(dst, dcount, ddtype);
    a->src = span(src, scount, sdtype);
    a->convert = cv;
    if (NULL != cv) {
        cv->staging = span(staging, scount * sdtype->super.size, MPI_BYTE);
    }
}

void pnbc_sched_rebase(pnbc_schedule_t *s, uint32_t mark, pnbc_buf_t buf, pnbc_ref_t to)
{
    for (uint32_t i = mark; i < s->nactions; ++i) {
        pnbc_span_t *spans[] = { &s->actions[i].buf, &s->actions[i].src };
        const size_t nspans = pnbc_action_is_comm(&s->actions[i]) ? 1 : 2;
        for (size_t k = 0; k < nspans; ++k) {
            if (buf == spans[k]->ref.buf) {
                spans[k]->ref = pnbc_ref_shift(to, spans[k]->ref.disp);
            }
        }
    }
}
