/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Progress of started requests (the opal_progress callback): the active
 * list, parking on bells and wake-ups by callback.  The request core
 * (common_pnbc_request.c) hands a started request over with
 * pnbc_progress_activate() and gets it back, complete, through
 * pnbc_request_complete().
 *
 * With many requests active, most of them wait for a peer that has not
 * got there yet, and polling each at every pass makes every
 * opal_progress cost grow with their number (docs/many/progress.md).
 * So a request that a poll finds not done can leave the active list:
 *
 *  - parked on a bell (pnbc_bell_t): all its in-flight actions wait on
 *    one peer's shared-memory counters.  It is polled again when the
 *    bell has rung since it was read -- a reading taken before that poll,
 *    so nothing written after it goes unnoticed.
 *  - parked on pnbc_bell_callback: its in-flight actions wait only on
 *    transports that call back (PML requests).  The callback queues the
 *    request's waker (pnbc_waker_ring) and the next pass polls just the
 *    requests queued, whatever the number parked.
 *
 * A request waiting on a bell and on callbacks parks on the bell and is
 * woken by either.  Kinds with their own progress hook, gated actions
 * and actions whose transport names no bell stay on the active list.
 * Below coll_pnbc_progress_park_min active requests nothing is parked:
 * a single request's latency does not pay for reading a bell first.
 */

#include "common_pnbc_request.h"
#include "common_pnbc_transport.h"

#include <stddef.h>

/* Every so many passes the parked requests are polled whatever their
 * bells say: a bound on the wait should a transport ever miss a wake-up
 * (none is known: the test suite passes with the sweep off, threads
 * included, since the PML callback marks its request complete before
 * waking; docs/many/progress.md).  At least
 * PARK_SWEEP_MIN passes apart, and PARK_SWEEP_PER times as many as
 * requests are active, so that it costs a pass less than a 16th of a
 * poll on average however many are parked. */
#define PARK_SWEEP_MIN 1024
#define PARK_SWEEP_PER 16

/* Set while this thread runs pnbc_request_progress_all (it holds the
 * engine lock): a transport re-entering opal_progress from inside it.
 * Read at every progress pass while a request is active: initial-exec,
 * so that it is a load, not a call of __tls_get_addr (the library comes
 * with the coll component's dlopen; one byte of static TLS). */
static __thread bool in_progress __attribute__((tls_model("initial-exec"))) = false;

/* ------------------------------------------------------------------ */
/* Lists (engine lock held)                                           */
/* ------------------------------------------------------------------ */

/* The active list and each bell's parked list: intrusive, through
 * pnbc_request_t.next/prev, `head` their first element, whose prev is
 * the last.  Requests join at the end and are polled from the front, in
 * the order they were started: the oldest first, as their messages
 * arrived (a mailbox receiver searches its ring from the oldest message,
 * so with calls outstanding by the thousand the newest-first order made
 * every poll pass over all the older ones). */
static void list_push(pnbc_request_t **head, pnbc_request_t *req)
{
    req->next = NULL;
    if (NULL == *head) {
        req->prev = req;
        *head = req;
        return;
    }
    pnbc_request_t *last = (*head)->prev;
    last->next = req;
    req->prev = last;
    (*head)->prev = req;
}

static void list_unlink(pnbc_request_t **head, pnbc_request_t *req)
{
    if (*head == req) {
        *head = req->next;
        if (NULL != *head) {
            (*head)->prev = req->prev;
        }
    } else {
        req->prev->next = req->next;
        if (NULL != req->next) {
            req->next->prev = req->prev;
        } else {
            (*head)->prev = req->prev;
        }
    }
    req->next = req->prev = NULL;
}

/* The last element now: a walk stops there, so that what a poll puts
 * back at the end waits for the next pass. */
static pnbc_request_t *list_last(pnbc_request_t *head)
{
    return (NULL != head) ? head->prev : NULL;
}

static void active_push(pnbc_request_t *req)
{
    list_push(&mca_common_pnbc_engine.active_head, req);
}

static void active_unlink(pnbc_request_t *req)
{
    list_unlink(&mca_common_pnbc_engine.active_head, req);
}

static void parked_push(pnbc_bell_t *b, pnbc_request_t *req)
{
    list_push(&b->parked, req);
    req->parked_on = b;
}

static void parked_unlink(pnbc_request_t *req)
{
    list_unlink(&req->parked_on->parked, req);
    req->parked_on = NULL;
}

void pnbc_progress_activate(pnbc_request_t *req)
{
    mca_common_pnbc_engine.nactive++;
    active_push(req);
}

/* A started request is done (it has left every list). */
static void request_finish(pnbc_request_t *req)
{
    mca_common_pnbc_engine.nactive--;
    pnbc_request_complete(req);
}

static bool request_progress(pnbc_request_t *req)
{
    if (NULL != req->ops && NULL != req->ops->progress) {
        return req->ops->progress(req);
    }
    return pnbc_request_express(req) ? pnbc_exec_express_progress(&req->exec)
                                     : pnbc_exec_progress(&req->exec);
}

/* ------------------------------------------------------------------ */
/* Parking                                                            */
/* ------------------------------------------------------------------ */

/* The bell every in-flight action of req's current round waits on
 * (pnbc_bell_callback when all call back); NULL: it must be polled. */
static pnbc_bell_t *request_bell(pnbc_request_t *req)
{
    const pnbc_exec_t *x = &req->exec;

    if ((NULL != req->ops && NULL != req->ops->progress) || x->round >= x->sched->nrounds) {
        return NULL;
    }
    if (NULL != req->bell && req->bell_round == x->round) {
        return req->bell;           /* fewer actions in flight: the same bell */
    }
    const pnbc_round_t *r = &x->sched->rounds[x->round];
    pnbc_action_t *a = &x->sched->actions[r->first];
    pnbc_bell_t *b = NULL;
    bool callback = false;
    for (uint32_t i = 0; i < r->nactions; ++i, ++a) {
        if (!pnbc_action_is_comm(a) || !a->inflight) {
            if (pnbc_action_is_comm(a) && a->gate_left > 0) {
                return NULL;
            }
            continue;
        }
        pnbc_bell_t *ab = (NULL != a->transport->bell) ? a->transport->bell(a) : NULL;
        if (&pnbc_bell_callback == ab) {
            callback = true;
            continue;
        }
        if (NULL == ab || (NULL != b && ab != b)) {
            return NULL;
        }
        b = ab;
    }
    b = (NULL == b && callback) ? &pnbc_bell_callback : b;
    req->bell = b;
    req->bell_round = x->round;
    return b;
}

/* req (on no list) was just polled and is not done: park it on its bell,
 * or put it back on the active list.  A bell not yet listed is read now,
 * and req polled once more after that reading.  Returns 1 if that poll
 * completed it. */
static int request_park(pnbc_request_t *req)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;
    pnbc_bell_t *b = request_bell(req);

    if (NULL != b && !b->listed) {
        b->listed = true;
        b->next = e->bells;
        e->bells = b;
        (void) pnbc_bell_rang(b);
        if (request_progress(req)) {
            request_finish(req);
            return 1;
        }
        b = request_bell(req);
        b = (NULL != b && b->listed) ? b : NULL;
    }
    if (NULL == b) {
        active_push(req);
    } else {
        parked_push(b, req);
    }
    return 0;
}

/* Poll a parked request: finished, parked again (maybe elsewhere) or
 * back on the active list.  Returns 1 if it completed. */
static int parked_poll(pnbc_request_t *req)
{
    if (request_progress(req)) {
        parked_unlink(req);
        request_finish(req);
        return 1;
    }
    pnbc_bell_t *b = req->parked_on;
    if (request_bell(req) != b) {
        parked_unlink(req);
        return request_park(req);
    }
    return 0;
}

/* Poll the requests parked on bells that rang (on every bell when
 * `sweep`); bells left with none are dropped from the list. */
static int bells_progress(bool sweep)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;
    pnbc_bell_t **link = &e->bells;
    int completed = 0;

    while (NULL != *link) {
        pnbc_bell_t *b = *link;
        if (NULL == b->parked) {
            *link = b->next;
            b->listed = false;
            continue;
        }
        link = &b->next;
        if (!pnbc_bell_rang(b) && !sweep) {
            continue;
        }
        pnbc_request_t *req = b->parked, *next, *last = list_last(b->parked);
        for (; NULL != req; req = next) {
            next = (req == last) ? NULL : req->next;
            completed += parked_poll(req);
        }
    }
    return completed;
}

/* ------------------------------------------------------------------ */
/* Wake-ups by callback                                               */
/* ------------------------------------------------------------------ */

/* Any thread, any lock held (a PML request may complete inside its
 * post): queue w once on the engine's wake list (a lock-free stack that
 * progress empties whole). */
void pnbc_waker_ring(pnbc_waker_t *w)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;

    if (!opal_using_threads()) {
        if (!w->queued) {
            w->queued = true;
            w->next = e->wake;
            e->wake = w;
        }
        return;
    }
    if (__atomic_exchange_n(&w->queued, true, __ATOMIC_ACQ_REL)) {
        return;
    }
    pnbc_waker_t *head = __atomic_load_n(&e->wake, __ATOMIC_RELAXED);
    do {
        w->next = head;
    } while (!__atomic_compare_exchange_n(&e->wake, &head, w, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

static pnbc_request_t *waker_request(pnbc_waker_t *w)
{
    return (pnbc_request_t *) ((char *) w - offsetof(pnbc_request_t, waker));
}

/* Poll the parked requests whose wakers were queued (those on the active
 * list are polled there anyway). */
static int wakes_progress(void)
{
    pnbc_waker_t *w = __atomic_exchange_n(&mca_common_pnbc_engine.wake, NULL, __ATOMIC_ACQUIRE);
    int completed = 0;

    while (NULL != w) {
        pnbc_waker_t *next = w->next;
        __atomic_store_n(&w->queued, false, __ATOMIC_RELEASE);  /* may be queued again */
        pnbc_request_t *req = waker_request(w);
        if (NULL != req->parked_on) {
            completed += parked_poll(req);
        }
        w = next;
    }
    return completed;
}

void pnbc_progress_forget(pnbc_request_t *req)
{
    if (!__atomic_load_n(&req->waker.queued, __ATOMIC_ACQUIRE)) {
        return;
    }
    if (in_progress) {
        (void) wakes_progress();
        return;
    }
    pnbc_engine_lock();
    in_progress = true;
    (void) wakes_progress();
    in_progress = false;
    pnbc_engine_unlock();
}

/* ------------------------------------------------------------------ */
/* The progress callback                                              */
/* ------------------------------------------------------------------ */

int pnbc_request_progress_all(void)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;
    int completed = 0;

    if ((NULL == __atomic_load_n(&e->active_head, __ATOMIC_RELAXED) &&
         NULL == __atomic_load_n(&e->bells, __ATOMIC_RELAXED) &&
         NULL == __atomic_load_n(&e->wake, __ATOMIC_RELAXED)) || in_progress) {
        return 0;   /* the common case: costs three loads */
    }
    in_progress = true;
    pnbc_engine_lock();
    if (NULL != e->wake) {
        completed += wakes_progress();
    }
    if (NULL != e->bells) {
        const bool sweep = (++e->passes >= PARK_SWEEP_MIN &&
                            e->passes >= (uint64_t) PARK_SWEEP_PER * e->nactive);
        e->passes = sweep ? 0 : e->passes;
        completed += bells_progress(sweep);
    }
    const int park_min = mca_common_pnbc_params.progress_park_min;
    const bool park = park_min > 0 && e->nactive >= (uint32_t) park_min;
    pnbc_request_t *req = e->active_head, *next, *last = list_last(e->active_head);
    for (; NULL != req; req = next) {
        next = (req == last) ? NULL : req->next;
        if (request_progress(req)) {
            active_unlink(req);
            request_finish(req);
            completed++;
        } else if (park && NULL != request_bell(req)) {
            active_unlink(req);
            completed += request_park(req);
        }
    }
    pnbc_transport_progress();
    pnbc_engine_unlock();
    in_progress = false;
    return completed;
}
