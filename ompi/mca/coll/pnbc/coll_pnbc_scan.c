/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Inclusive and exclusive scan algorithms.
 *
 * Rank r's result is x0 (op) x1 (op) ... (op) xr for scan and stops at
 * x(r-1) for exscan, in that order for non-commutative ops: data of lower
 * ranks always goes on the left.  Exscan leaves rank 0's rbuf untouched
 * (MPI leaves its content undefined).  Each algorithm is written once,
 * for both, with `inclusive` telling them apart.
 *
 * Operand handling (datatype views, scratch buffers) is shared with the
 * other reductions: see coll_pnbc_reduce_view.h.
 */

#include "coll_pnbc_algorithms.h"
#include "coll_pnbc_reduce_view.h"

/* The operands of a scan in progress. */
typedef struct scan_state_t {
    pnbc_reduce_view_t v;
    pnbc_ref_t result;      /* PNBC_REF_NONE while empty (exscan) */
    pnbc_ref_t partial;     /* reduction of my span; may alias result */
    bool partial_writable;
    pnbc_ref_t tmp[3];      /* operand-sized temporaries, reserved on use */
    int ntmp;
} scan_state_t;

static bool scan_has_result(const scan_state_t *st)
{
    return PNBC_BUF_NONE != st->result.buf;
}

/* A temporary that is neither `busy1` nor `busy2`.  At most two operands
 * are ever live besides the view's own, so three temporaries suffice. */
static pnbc_ref_t scan_free_tmp(pnbc_schedule_t *s, scan_state_t *st, pnbc_ref_t busy1,
                                pnbc_ref_t busy2)
{
    for (int i = 0; i < st->ntmp; ++i) {
        if (!pnbc_ref_eq(st->tmp[i], busy1) && !pnbc_ref_eq(st->tmp[i], busy2)) {
            return st->tmp[i];
        }
    }
    st->tmp[st->ntmp] = pnbc_sched_tmp(s, st->v.wcount, st->v.wtype);
    return st->tmp[st->ntmp++];
}

/* Open the view; the result starts as this rank's contribution (scan)
 * or empty (exscan), the partial as the contribution. */
static void scan_open(pnbc_schedule_t *s, const pnbc_coll_args_t *a, bool inclusive,
                      scan_state_t *st)
{
    *st = (scan_state_t) { .result = PNBC_REF_NONE, .ntmp = 0 };
    pnbc_view_open(s, a, &st->v);
    if (inclusive) {
        st->result = pnbc_view_writable_acc(s, &st->v);
        st->partial = st->result;
        st->partial_writable = true;
    } else {
        st->partial = st->v.in;
        st->partial_writable = st->v.in_writable;
    }
}

/* The result into the user's rbuf; an empty one (exscan's rank 0) leaves
 * it untouched. */
static void scan_finish(pnbc_schedule_t *s, scan_state_t *st)
{
    if (scan_has_result(st)) {
        pnbc_view_finish(s, &st->v, st->result);
    }
}

/* Nothing to do: no data, or exscan on one rank. */
static bool scan_trivial(const pnbc_coll_args_t *a, bool inclusive)
{
    return 0 == a->count || (!inclusive && 1 == a->size);
}

/* ------------------------------------------------------------------ */
/* recursive doubling                                                 */
/* ------------------------------------------------------------------ */

/* Will `rank` send its partial in a step after the one with `mask`? */
static bool needs_partial(int rank, int mask, int p)
{
    for (int m = mask << 1; m < p; m <<= 1) {
        if ((rank ^ m) < p) {
            return true;
        }
    }
    return false;
}

/* Exchange with a lower peer: its partial belongs to ranks below all of
 * mine, so it goes on the left of both the result and the partial. */
static void scan_from_lower(pnbc_schedule_t *s, scan_state_t *st, int peer, int mask)
{
    const pnbc_coll_args_t *a = st->v.args;
    pnbc_reduce_view_t *v = &st->v;
    pnbc_ref_t landing;

    /* The first data of an empty result lands where the result goes. */
    if (!scan_has_result(st) && !v->packed && !pnbc_ref_eq(st->partial, v->out)) {
        landing = v->out;
    } else {
        landing = scan_free_tmp(s, st, st->partial, st->result);
    }
    if (needs_partial(peer, mask, a->size)) {
        pnbc_view_send(s, v, st->partial, peer);
    }
    pnbc_view_recv(s, v, landing, peer);
    pnbc_sched_round(s);

    const bool aliased = pnbc_ref_eq(st->partial, st->result);
    if (scan_has_result(st)) {
        pnbc_sched_reduce(s, landing, st->result, v->wcount, v->wtype, v->op);
    } else {
        st->result = landing;
    }
    if (aliased || !needs_partial(a->rank, mask, a->size)) {
        return;     /* an aliased partial got the same update */
    }
    if (!st->partial_writable) {
        pnbc_ref_t copy = scan_free_tmp(s, st, st->result, landing);
        pnbc_sched_copy(s, st->partial, v->wcount, v->wtype, copy, v->wcount, v->wtype);
        st->partial = copy;
        st->partial_writable = true;
    }
    pnbc_sched_reduce(s, landing, st->partial, v->wcount, v->wtype, v->op);
}

/* Exchange with a higher peer: it needs my partial for its result; its
 * partial goes on the right of mine, and only if I send mine again. */
static void scan_from_higher(pnbc_schedule_t *s, scan_state_t *st, int peer, int mask)
{
    const pnbc_coll_args_t *a = st->v.args;
    pnbc_reduce_view_t *v = &st->v;
    const bool keep_partial = needs_partial(a->rank, mask, a->size);
    pnbc_ref_t landing = PNBC_REF_NONE;

    pnbc_view_send(s, v, st->partial, peer);
    if (keep_partial) {
        landing = scan_free_tmp(s, st, st->partial, st->result);
        pnbc_view_recv(s, v, landing, peer);
    }
    pnbc_sched_round(s);
    if (keep_partial) {
        pnbc_sched_reduce(s, st->partial, landing, v->wcount, v->wtype, v->op);
        st->partial = landing;
        st->partial_writable = true;
    }
}

/*
 * pnbc_scan_recursive_doubling, pnbc_exscan_recursive_doubling
 *   Accepts: any size, count, datatype, op (commutative or not).
 *   Moves:   each rank keeps `partial` (the reduction over its aligned
 *            span of 2^k ranks) and `result`.  At step 2^k it trades
 *            partials with rank ^ 2^k: a lower peer's partial covers
 *            ranks below all of its own, so it is folded on the LEFT of
 *            both result and partial; a higher peer's goes on the right
 *            of the partial only.  A partial is sent only if the peer
 *            uses it, so the last exchanges are often one-way.  Exscan
 *            starts with an empty result that takes the first lower
 *            partial as it is; scan starts with its own contribution, and
 *            its partial shares the result's buffer until they differ.
 *
 *   p=5:  step 1: 0<->1 2<->3 (4 idle) | step 2: 0<->2 1->3 (1 needs
 *         no partial back: it has no later step) | step 4: 0->4
 */
static void scan_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                    bool inclusive)
{
    scan_state_t st;

    if (scan_trivial(a, inclusive)) {
        return;
    }
    scan_open(s, a, inclusive, &st);
    pnbc_sched_round(s);
    for (int mask = 1; mask < a->size; mask <<= 1) {
        const int peer = a->rank ^ mask;
        if (peer >= a->size) {
            continue;
        }
        if (peer < a->rank) {
            scan_from_lower(s, &st, peer, mask);
        } else {
            scan_from_higher(s, &st, peer, mask);
        }
    }
    scan_finish(s, &st);
}

void pnbc_scan_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    scan_recursive_doubling(s, a, true);
}

void pnbc_exscan_recursive_doubling(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    scan_recursive_doubling(s, a, false);
}

/* ------------------------------------------------------------------ */
/* linear chain                                                       */
/* ------------------------------------------------------------------ */

/* Scan, rank > 0: result = prefix of the ranks below (op) my contribution. */
static void scan_linear_inclusive(pnbc_schedule_t *s, scan_state_t *st)
{
    const pnbc_coll_args_t *a = st->v.args;
    pnbc_ref_t landing = scan_free_tmp(s, st, st->result, PNBC_REF_NONE);

    pnbc_view_recv(s, &st->v, landing, a->rank - 1);
    pnbc_sched_round(s);
    pnbc_sched_reduce(s, landing, st->result, st->v.wcount, st->v.wtype, st->v.op);
    if (a->rank + 1 < a->size) {
        pnbc_view_send(s, &st->v, st->result, a->rank + 1);
    }
}

/* Exscan, rank > 0: the prefix received is the result; the next rank
 * gets prefix (op) my contribution, formed where my contribution is
 * (copied first when that is the user's read-only sbuf). */
static void scan_linear_exclusive(pnbc_schedule_t *s, scan_state_t *st)
{
    const pnbc_coll_args_t *a = st->v.args;
    pnbc_reduce_view_t *v = &st->v;
    const bool last = (a->rank + 1 == a->size);

    /* The last rank never reads its own data: land straight in rbuf. */
    if (!v->packed && (last || !pnbc_ref_eq(v->in, v->out))) {
        st->result = v->out;
    } else {
        st->result = scan_free_tmp(s, st, v->in, PNBC_REF_NONE);
    }
    if (!last && !v->in_writable) {
        st->partial = scan_free_tmp(s, st, st->result, PNBC_REF_NONE);
        pnbc_sched_copy(s, v->in, v->wcount, v->wtype, st->partial, v->wcount, v->wtype);
    }
    pnbc_view_recv(s, v, st->result, a->rank - 1);
    pnbc_sched_round(s);
    if (!last) {
        pnbc_sched_reduce(s, st->result, st->partial, v->wcount, v->wtype, v->op);
        pnbc_view_send(s, v, st->partial, a->rank + 1);
        pnbc_sched_round(s);    /* in place, the partial is in rbuf */
    }
}

/*
 * pnbc_scan_linear, pnbc_exscan_linear
 *   Accepts: any size, count, datatype, op (commutative or not).
 *   Moves:   a chain: rank r waits for the prefix of ranks 0..r-1 from
 *            r-1, combines it (on the left) with its own contribution
 *            and forwards the prefix 0..r to r+1.  p-1 sequential hops of
 *            one message each: for tiny communicators, or to compare.
 *
 *   p=4:  0->1 | 1->2 | 2->3
 */
static void scan_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a, bool inclusive)
{
    scan_state_t st;

    if (scan_trivial(a, inclusive)) {
        return;
    }
    scan_open(s, a, inclusive, &st);
    pnbc_sched_round(s);
    if (0 == a->rank) {
        if (a->size > 1) {
            pnbc_view_send(s, &st.v, st.v.in, 1);
        }
    } else if (inclusive) {
        scan_linear_inclusive(s, &st);
    } else {
        scan_linear_exclusive(s, &st);
    }
    scan_finish(s, &st);
}

void pnbc_scan_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    scan_linear(s, a, true);
}

void pnbc_exscan_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    scan_linear(s, a, false);
}

const pnbc_algorithm_t pnbc_scan_algorithms[] = {
    { "recursive_doubling", pnbc_scan_recursive_doubling, NULL },
    { "linear", pnbc_scan_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_exscan_algorithms[] = {
    { "recursive_doubling", pnbc_exscan_recursive_doubling, NULL },
    { "linear", pnbc_exscan_linear, NULL },
    { NULL, NULL, NULL }
};
