/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Engine state shared by every client: parameters, the lock and active
 * list, and the progress callback, set up by the first client and torn
 * down by the last (the coll component at open/close; libpnbc and the part
 * component from their first call to MPI_Finalize).
 */

#include "common_pnbc.h"
#include "common_pnbc_request.h"
#include "common_pnbc_transport.h"

#include "opal/runtime/opal_progress.h"

#include <limits.h>

/* Defaults of the engine's MCA parameters (common_pnbc_params.c). */
pnbc_engine_params_t mca_common_pnbc_params = {
    .verbose = 0,
    .shm = 1,
    .shm_max_bytes = INT_MAX,
    .shm_frag_bytes = 0,
    .shm_stream_frag_bytes = 131072,
    .shm_single_copy = 1,
    .shm_nt_min_bytes = 16384,
    .shm_nt_max_bytes = 65536,
    .shm_nt_ratio = 5,
    .shm_nt_measured_min_bytes = 4096,
    .shm_exchange_boxes = 0,
    .shm_pool_comm_bytes = (size_t) 16 << 20,
    .shm_pool_node_bytes = (size_t) 1 << 30,
    .shm_pool_step_bytes = (size_t) 4 << 20,
    .shm_pool_entries = 131072,
    .shm_prefault_max_bytes = (size_t) 512 << 10,
    .shm_retag_min_bytes = 8193,
    .nbc_mailbox_cells = 16,
    .nbc_mailbox_large_cells = 4,
    .nbc_mailbox_large_bytes = 65536,
    .nbc_mailbox_declined_bytes = 262144,
    .nbc_single_copy_min_bytes = 16384,
    .shm_shared_copy_min_bytes = 32768,
    .shm_single_copy_dear_ns = 4500,
    .shm_single_copy_dear_min_bytes = 524288,
    .oversubscribed = -1,
    .progress_park_min = 16,
};

pnbc_engine_t mca_common_pnbc_engine = {
    .active_head = NULL,
    .users = 0,
    .progress_registered = false,
};

static int engine_progress(void)
{
    return pnbc_request_progress_all();
}

/* Called from MPI_Init (coll component open) or from an MPI call (libpnbc)
 * of one thread at a time per client; the client lock-free counter is
 * only touched here. */
int mca_common_pnbc_init(void)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;
    if (0 == e->users++) {
        OBJ_CONSTRUCT(&e->lock, opal_mutex_t);
        e->active_head = NULL;
        e->bells = NULL;
        e->wake = NULL;
        e->nactive = 0;
    }
    return OMPI_SUCCESS;
}

/* The progress callback goes in with the first request, after the
 * transports' own (opal_progress calls callbacks in registration order:
 * a BTL's progress then runs before the executor that consumes it). */
int mca_common_pnbc_progress_needed(void)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;
    if (OPAL_LIKELY(e->progress_registered)) {
        return OMPI_SUCCESS;
    }
    pnbc_engine_lock();
    if (!e->progress_registered) {
        e->progress_registered = (OPAL_SUCCESS == opal_progress_register(engine_progress));
    }
    pnbc_engine_unlock();
    return e->progress_registered ? OMPI_SUCCESS : OMPI_ERROR;
}

/* ------------------------------------------------------------------ */
/* Held from first use to MPI_Finalize                                */
/* ------------------------------------------------------------------ */

static pnbc_lock_t hold_lock = PNBC_LOCK_INITIALIZER;
static bool held;

/* Deleting MPI_COMM_SELF's attributes is the first thing MPI_Finalize
 * does (MPI-4.1 sec. 11.2.4): the hold ends there. */
static int release_hold(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void) comm;
    (void) keyval;
    (void) value;
    (void) extra;
    pnbc_lock(&hold_lock);
    if (held) {
        mca_common_pnbc_fini();
        mca_common_pnbc_deregister();
        held = false;
    }
    pnbc_unlock(&hold_lock);
    return MPI_SUCCESS;
}

int mca_common_pnbc_hold_until_finalize(void)
{
    int rc = OMPI_SUCCESS;
    pnbc_lock(&hold_lock);
    if (!held) {
        int keyval;
        (void) mca_common_pnbc_register();
        rc = mca_common_pnbc_init();
        if (OMPI_SUCCESS == rc &&
            MPI_SUCCESS == MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_hold, &keyval,
                                                  NULL) &&
            MPI_SUCCESS == MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL)) {
            /* the attribute keeps the key alive until MPI_Finalize deletes
             * it (MPI-4.1 sec. 7.7.2); freed here, it is not leaked */
            MPI_Comm_free_keyval(&keyval);
            held = true;
        } else {
            if (OMPI_SUCCESS == rc) {
                mca_common_pnbc_fini();
                rc = OMPI_ERROR;
            }
            mca_common_pnbc_deregister();
        }
    }
    pnbc_unlock(&hold_lock);
    return rc;
}

void mca_common_pnbc_fini(void)
{
    pnbc_engine_t *e = &mca_common_pnbc_engine;
    if (e->users <= 0 || 0 != --e->users) {
        return;
    }
    /* requests still parked were never completed: they stay so; wakers
     * still queued are not (their requests' free need not look) */
    e->bells = NULL;
    for (pnbc_waker_t *w = e->wake; NULL != w; w = w->next) {
        w->queued = false;
    }
    e->wake = NULL;
    e->nactive = 0;
    pnbc_transport_fini();
    pnbc_bells_fini();
    pnbc_sched_scratch_fini();
    if (e->progress_registered) {
        opal_progress_unregister(engine_progress);
        e->progress_registered = false;
    }
    OBJ_DESTRUCT(&e->lock);
}
