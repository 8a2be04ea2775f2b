/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Bells by peer (pnbc_bell_t, common_pnbc.h): the counters a peer rings
 * for us (the shared-memory transport's, both directions) are gathered
 * in one bell per peer, so a request exchanging with one peer both ways
 * waits on one bell.  Processes of our job have one each, by vpid; every
 * other process (spawned jobs) shares one.  Actions whose transport calls
 * back (PML) wait on pnbc_bell_callback, which never rings: their
 * callback wakes their request instead (pnbc_waker_t).
 */

#include "common_pnbc.h"

#include "ompi/proc/proc.h"

#include <stdlib.h>

/* Made when an action is bound to its peer's counters (not at the first
 * park, so that a start allocates nothing); bells_lock keeps the table
 * (binds run outside the engine lock). */
static pnbc_lock_t bells_lock = PNBC_LOCK_INITIALIZER;
static pnbc_bell_t **bells;     /* by vpid, grown as needed */
static uint64_t nbells;
static pnbc_bell_t *others;

pnbc_bell_t pnbc_bell_callback;

static pnbc_bell_t *bell_new(void)
{
    return calloc(1, sizeof(pnbc_bell_t));
}

static pnbc_bell_t *bell_of_locked(const opal_process_name_t *name)
{
    if (name->jobid != OMPI_PROC_MY_NAME->jobid) {
        if (NULL == others) {
            others = bell_new();
        }
        return others;
    }
    const uint64_t v = name->vpid;
    if (v >= nbells) {
        uint64_t n = (0 == nbells) ? 64 : nbells;
        while (n <= v) {
            n *= 2;
        }
        pnbc_bell_t **grown = realloc(bells, n * sizeof(*grown));
        if (NULL == grown) {
            return NULL;
        }
        for (uint64_t k = nbells; k < n; ++k) {
            grown[k] = NULL;
        }
        bells = grown;
        nbells = n;
    }
    if (NULL == bells[v]) {
        bells[v] = bell_new();
    }
    return bells[v];
}

pnbc_bell_t *pnbc_bell_of(ompi_communicator_t *comm, int rank)
{
    const ompi_proc_t *proc = ompi_comm_peer_lookup(comm, rank);
    pnbc_lock(&bells_lock);
    pnbc_bell_t *b = bell_of_locked(&proc->super.proc_name);
    pnbc_unlock(&bells_lock);
    return b;
}

void pnbc_bells_fini(void)
{
    for (uint64_t k = 0; k < nbells; ++k) {
        free(bells[k]);
    }
    free(bells);
    free(others);
    bells = NULL;
    others = NULL;
    nbells = 0;
    pnbc_bell_callback.parked = NULL;
    pnbc_bell_callback.next = NULL;
    pnbc_bell_callback.listed = false;
}
