/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Units: how a matched pair of partitioned requests cuts its data into
 * messages, computed alike on both sides from both handshakes, and the
 * schedule each side builds from them.
 *
 * Both sides see the data as one stream of packed bytes; the receiver
 * has n_r partitions of P_r bytes, the sender's datatype has e_s bytes.
 * A unit boundary must be a receive-partition boundary (so every receive
 * partition lies in exactly one unit, and MPI_Parrived is one flag) and
 * an element boundary of the sender (so each side's unit is a whole
 * number of its own elements).  Units start g = ceil(n_r / UNITS)
 * partitions long and grow a partition at a time until their end is also
 * a sender element boundary; the last unit ends at the shorter side's
 * total; a receiver longer than its sender extends its last unit to its
 * own total, a sender longer than its receiver sends no more than the
 * receiver holds (the receiver reports the truncation: it knows both).
 */

#include "part_pnbc.h"

#include <stdlib.h>

/* Stream boundaries for (t_send, t_recv, p_r, n_r, e_s): nunits + 1
 * offsets into *bounds (malloc'ed; NULL when there is no unit). */
static int part_units(size_t t_send, size_t t_recv, size_t p_r, size_t n_r, size_t e_s,
                      size_t **bounds, uint32_t *nunits)
{
    const size_t t_min = t_send < t_recv ? t_send : t_recv;

    *bounds = NULL;
    *nunits = 0;
    if (0 == t_min || 0 == p_r || 0 == e_s) {
        return OMPI_SUCCESS;
    }
    const size_t g = (n_r + PNBC_PART_UNITS - 1) / PNBC_PART_UNITS;
    size_t *b = malloc((PNBC_PART_UNITS + 1) * sizeof(*b));
    if (NULL == b) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    uint32_t n = 0;
    size_t lo = 0;
    while (lo < t_min) {
        size_t hi = lo + g * p_r;
        while (hi < t_min && 0 != hi % e_s) {
            hi += p_r;
        }
        b[n++] = lo;
        lo = hi < t_min ? hi : t_min;
    }
    b[n] = t_min;
    *bounds = b;
    *nunits = n;
    return OMPI_SUCCESS;
}

/* The byte range of unit u on this side.  The receiver's last unit ends
 * at its total (a shorter message is fine); the sender never sends past
 * the receiver's total (a longer send is the receiver's truncation, which
 * it sees in the handshake: nothing more is sent), and ends on one of its
 * element boundaries. */
static void unit_range(const pnbc_part_request_t *req, uint32_t u, size_t *lo, size_t *hi)
{
    *lo = req->bounds[u];
    if (u + 1 < req->nunits) {
        *hi = req->bounds[u + 1];
    } else if (!req->is_send || req->total <= req->peer_total) {
        *hi = req->total;
    } else {
        *hi = req->peer_total / req->esize * req->esize;
    }
}

int pnbc_part_build(pnbc_part_request_t *req)
{
    const pnbc_part_hs_t *peer = &req->peer_hs;
    pnbc_schedule_t *s = &req->super.sched;
    size_t t_send, t_recv, p_r, n_r, e_s;

    if (req->is_send) {
        t_send = req->total;
        e_s = req->esize;
        t_recv = (size_t) peer->bytes;
        p_r = (size_t) peer->esize;
        n_r = (size_t) peer->nparts;
        req->rid = peer->rid;
    } else {
        t_recv = req->total;
        p_r = req->part_bytes;
        n_r = (size_t) req->nparts;
        t_send = (size_t) peer->bytes;
        e_s = (size_t) peer->esize;
    }
    req->peer_total = req->is_send ? t_recv : t_send;
    int rc = part_units(t_send, t_recv, p_r, n_r, e_s, &req->bounds, &req->nunits);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }

    /* One round: a message per unit, unit u the u-th between the pair. */
    pnbc_sched_round(s);
    for (uint32_t u = 0; u < req->nunits; ++u) {
        size_t lo, hi;
        unit_range(req, u, &lo, &hi);
        const ptrdiff_t disp = (ptrdiff_t) (lo / req->esize) * req->extent;
        const size_t count = (hi - lo) / req->esize;
        if (req->is_send) {
            pnbc_sched_send(s, pnbc_ref(PNBC_BUF_SEND, disp), count, req->dtype, req->peer);
        } else {
            pnbc_sched_recv(s, pnbc_ref(PNBC_BUF_RECV, disp), count, req->dtype, req->peer);
        }
    }
    if (req->is_send && req->nunits > 0) {
        req->gate_need = malloc(req->nunits * sizeof(*req->gate_need));
        if (NULL == req->gate_need) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        for (uint32_t u = 0; u < req->nunits; ++u) {
            size_t lo, hi;
            unit_range(req, u, &lo, &hi);
            const size_t last = (hi > lo) ? hi - 1 : lo;
            req->gate_need[u] = (uint32_t) (last / req->part_bytes - lo / req->part_bytes + 1);
        }
    }

    /* Units of one request are posted in any order (each when ready); a
     * mismatched pair's last messages differ in size (PML only). */
    s->distinct_tags = true;
    s->sizes_may_differ = (t_send != t_recv);
    s->large.box_max = 16384;
    s->large.shm_max = SIZE_MAX;
    s->large.single_copy = true;
    req->super.exec.tag = PNBC_PART_TAG_FIRST - req->rid * (int) PNBC_PART_UNITS;
    rc = pnbc_sched_commit(s, req->buf, req->buf, req->super.comm, req->super.exec.tag);
    if (OMPI_SUCCESS == rc) {
        req->built = true;
    }
    return rc;
}

/* Last unit whose first byte is <= off. */
static uint32_t unit_at(const pnbc_part_request_t *req, size_t off)
{
    uint32_t lo = 0, hi = req->nunits;  /* answer in [lo, hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (req->bounds[mid] <= off) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint32_t pnbc_part_unit_of_recv(const pnbc_part_request_t *req, int j)
{
    return unit_at(req, (size_t) j * req->part_bytes);
}

bool pnbc_part_units_of_send(const pnbc_part_request_t *req, int i, uint32_t *first,
                             uint32_t *last)
{
    if (0 == req->nunits || 0 == req->part_bytes) {
        return false;
    }
    size_t end_lo, end;     /* this side's last unit: [end_lo, end) */
    unit_range(req, req->nunits - 1, &end_lo, &end);
    const size_t lo = (size_t) i * req->part_bytes;
    const size_t hi = lo + req->part_bytes;     /* exclusive */
    if (end == end_lo) {
        /* an empty last unit (a sender longer than its receiver, cut at
         * an element boundary): it waits for the partition holding end */
        if (lo <= end && end < hi) {
            *first = (lo < end) ? unit_at(req, lo) : req->nunits - 1;
            *last = req->nunits - 1;
            return true;
        }
    }
    if (lo >= end) {
        return false;       /* past what the receiver takes */
    }
    *first = unit_at(req, lo);
    *last = unit_at(req, (hi < end ? hi : end) - 1);
    return true;
}
