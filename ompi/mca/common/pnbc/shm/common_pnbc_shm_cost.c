/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What a single copy (process_vm_readv, common_pnbc_shm_copy.c) costs
 * here and at each peer on this node.
 *
 * Each process measures it once, when the coll component opens in
 * MPI_Init.  Where it is dear (coll_pnbc_shm_single_copy_dear_ns or more)
 * the process, as a receiver, declines single copy for messages below
 * coll_pnbc_shm_single_copy_dear_min_bytes (its offer floor), and says so
 * in the modex (scope: this node), so that every local peer knows with the
 * fence that follows.  The floor means two things:
 *  - its slots ask for no offer (pnbc_shm_offer_floor(); the receiver
 *    alone decides, the sender reads the answer in the slot), and
 *  - a nonblocking schedule's messages to it from
 *    coll_pnbc_nbc_shm_min_bytes up to the large ring's largest take the
 *    large mailbox ring (pnbc_mbox_tier()), which lets its senders run
 *    ahead; a paired slot would stream them with the sender waiting.
 * The second is decided by both sides of a message, so both read the
 * receiver's published floor (pnbc_shm_recv_floor()), whatever their own
 * measurement or parameters say.  With coll_pnbc_shm_exchange_boxes an
 * exchange's messages (allgather, alltoall), and a persistent allreduce's
 * always, such a receiver declines at every size
 * (pnbc_shm_declined_below()).  docs/design-measurements.md, "Machines
 * where a single copy is dear"; docs/nbc.md, "Where a single copy is
 * dear".
 */

#include "common_pnbc_shm.h"


#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PNBC_FLOOR_KEY "pnbc.shm.offer_floor"

/* Is the dear-single-copy rule on at all (the same parameters
 * everywhere)? */
static bool dear_rule_on(void)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    return p->shm_single_copy_dear_ns > 0 && p->shm_single_copy_dear_min_bytes > 0 &&
           p->shm_single_copy;
}

/* What a process_vm_readv of 64 KiB costs on this machine, in ns: the
 * best of a few reads of our own memory (the same system call path as a
 * peer's).  0 if the kernel refuses (offers are refused then anyway). */
static uint64_t readv_cost_ns(void)
{
    enum { BYTES = 65536, TRIES = 8 };
    char *from = malloc(BYTES), *to = malloc(BYTES);
    uint64_t best = UINT64_MAX;

    if (NULL == from || NULL == to) {
        free(from);
        free(to);
        return 0;
    }
    memset(from, 1, BYTES);
    memset(to, 0, BYTES);
    for (int i = 0; i < TRIES; ++i) {
        struct iovec mine = { to, BYTES }, theirs = { from, BYTES };
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const ssize_t n = process_vm_readv(getpid(), &mine, 1, &theirs, 1, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (BYTES != n) {
            best = 0;
            break;
        }
        const uint64_t took = (uint64_t) ((t1.tv_sec - t0.tv_sec) * 1000000000L +
                                          (t1.tv_nsec - t0.tv_nsec));
        best = (took < best) ? took : best;
    }
    free(from);
    free(to);
    return best;
}

/* Measured at the first call (a race measures twice and stores either):
 * the floor is all that is kept of the cost. */
size_t pnbc_shm_offer_floor(void)
{
    static size_t floor = SIZE_MAX;     /* SIZE_MAX until known */
    size_t f = __atomic_load_n(&floor, __ATOMIC_RELAXED);
    if (OPAL_LIKELY(SIZE_MAX != f)) {
        return f;
    }
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    f = 0;
    if (dear_rule_on()) {
        const uint64_t cost = readv_cost_ns();
        if (cost >= (uint64_t) p->shm_single_copy_dear_ns) {
            f = (size_t) p->shm_single_copy_dear_min_bytes;
        }
        if (p->verbose >= 1) {
            opal_output(0, "coll:pnbc: shm: a process_vm_readv of 64 KiB takes %llu ns here: "
                        "single copy from %zu bytes on", (unsigned long long) cost, f);
        }
    }
    __atomic_store_n(&floor, f, __ATOMIC_RELAXED);
    return f;
}

void mca_common_pnbc_modex_send(void)
{
    if (!dear_rule_on()) {
        return;     /* nothing declined here: peers find nothing, read 0 */
    }
    /* not published: peers read 0 */
    (void) pnbc_modex_send_u64(PNBC_FLOOR_KEY, (uint64_t) pnbc_shm_offer_floor());
}

/* The receivers asked about so far: vpid and floor (a process has a
 * handful of local peers). */
typedef struct {
    uint32_t vpid;
    size_t floor;
} recv_floor_t;

static recv_floor_t *known;
static uint32_t nknown;
static pnbc_lock_t known_lock = PNBC_LOCK_INITIALIZER;

/* The floor process `vpid` of our job published (0: none). */
static size_t published_floor(uint32_t vpid)
{
    /* Without the fence's data each lookup could go its own way. */
    if (!pnbc_modex_all_data()) {
        return 0;
    }
    uint64_t floor = 0;
    const int rc = pnbc_modex_recv_u64(vpid, PNBC_FLOOR_KEY, &floor);
    return (OPAL_SUCCESS == rc && floor < SIZE_MAX) ? (size_t) floor : 0;
}

size_t pnbc_shm_recv_floor(uint32_t vpid)
{
    pnbc_lock(&known_lock);
    for (uint32_t k = 0; k < nknown; ++k) {
        if (known[k].vpid == vpid) {
            const size_t floor = known[k].floor;
            pnbc_unlock(&known_lock);
            return floor;
        }
    }
    const size_t floor = published_floor(vpid);
    recv_floor_t *grown = realloc(known, (nknown + 1) * sizeof(*grown));
    if (NULL != grown) {    /* not remembered: asked again next time */
        known = grown;
        known[nknown++] = (recv_floor_t) { vpid, floor };
    }
    pnbc_unlock(&known_lock);
    return floor;
}

size_t pnbc_shm_pair_floor(const pnbc_channel_t *ch, const pnbc_action_t *a)
{
    if (PNBC_ACT_SEND != a->kind) {
        return pnbc_shm_recv_floor(OMPI_PROC_MY_NAME->vpid);
    }
    /* (peers of another job or node take the PML anyway) */
    return pnbc_shm_peer_local(ch->comm, a->peer)
               ? pnbc_shm_recv_floor(ompi_comm_peer_lookup(ch->comm, a->peer)->super.proc_name.vpid)
               : 0;
}

/* An exchange (pnbc_large_msgs_t.exchange) keeps both CPUs copying: each
 * process reads its peer's block while its peer reads its own, and copies
 * its own block besides.  Where a single copy is dear, a process_vm_readv
 * of a block then costs more than the sender's copy into a box and the
 * receiver's copy out together, which the two sides make at once (np=2,
 * 1 MiB: a bare exchange through boxes 94-104 us, through
 * process_vm_readv 135-168; contrib/bench/exchange_floor.c).  Where the
 * processes share CPUs the two copies no longer run at once: the floor
 * then stays as it is. */
bool pnbc_shm_exchange_boxes(const pnbc_channel_t *ch)
{
    return ch->large.exchange && 0 != mca_common_pnbc_params.shm_exchange_boxes;
}

/* A persistent allreduce's messages (pnbc_large_msgs_t.chained) above its
 * boxes go to the PML, whose own single copy (vader's) is as dear as ours
 * where the receiver declines single copy: there they stream through the
 * boxes at every size, folded out of them (np=2, 1 MiB, 10 launches each:
 * 83-111 us against 129-202 over the PML; docs/performance.md, "What the
 * cells above their targets are made of").  Not for nonblocking calls,
 * whose large messages were not measured so. */
static bool chained_boxes(const pnbc_channel_t *ch)
{
    return ch->large.chained && !ch->retag;
}

size_t pnbc_shm_declined_below(const pnbc_channel_t *ch, size_t floor)
{
    return (0 != floor && (pnbc_shm_exchange_boxes(ch) || chained_boxes(ch)) &&
            !pnbc_shm_oversubscribed())
               ? SIZE_MAX
               : floor;
}

void pnbc_shm_cost_finalize(void)
{
    pnbc_lock(&known_lock);
    free(known);
    known = NULL;
    nknown = 0;
    pnbc_unlock(&known_lock);
}
