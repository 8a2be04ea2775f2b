/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Component: identity, MCA parameters, open/close, and the progress hook.
 */

#include "coll_pnbc.h"
#include "coll_pnbc_algorithms.h"
#include "common_pnbc_transport.h"

#include "opal/mca/base/mca_base_var.h"
#include "ompi/runtime/mpiruntime.h"

#include <limits.h>

const char *mca_coll_pnbc_component_version_string =
    "pnbc: persistent nonblocking collectives for Open MPI";

static int pnbc_register(void);
static int pnbc_open(void);
static int pnbc_close(void);
static int pnbc_init_query(bool enable_progress_threads, bool enable_mpi_threads);

mca_coll_pnbc_component_t mca_coll_pnbc_component = {
    .super = {
        .collm_version = {
            PNBC_COLL_BASE_VERSION,
            .mca_component_name = "pnbc",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = pnbc_open,
            .mca_close_component = pnbc_close,
            .mca_register_component_params = pnbc_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_NONE
        },
        .collm_init_query = pnbc_init_query,
        .collm_comm_query = mca_coll_pnbc_comm_query,
    },
    /* Above libnbc (10) so an installed pnbc serves the persistent slots
     * it implements without any flag; below tuned (30) is irrelevant, as
     * tuned fills no persistent slot. */
    .priority = 40,
    .segsize = 0,
    .cache_entries = 8192,
    .cache_bytes = 64 << 20,
    .cache_probation = 8,
};

/* The component's own MCA parameters, after coll_pnbc_ (pnbc_param_t);
 * pnbc_register() registers them all in this order, the engine's
 * (common_pnbc_*) through mca_common_pnbc_register(). */
static const pnbc_param_t pnbc_params[] = {
    { "priority",
      "Priority of the pnbc coll component (libnbc's is 10; --mca coll ^pnbc "
      "disables pnbc)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      &mca_coll_pnbc_component.priority },
    { "segsize",
      "Pipeline segment size in bytes for segmented algorithms (0: each algorithm's "
      "own default); the MPI_Info key pnbc_segsize overrides it per request",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.segsize },
    { "cache_entries",
      "Nonblocking collectives: committed schedules kept per communicator for calls "
      "repeated with the same arguments (least recently used evicted first; 0: no "
      "cache, every call builds its schedule)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.cache_entries },
    { "cache_bytes",
      "Nonblocking collectives: bytes of the schedules kept per communicator "
      "(schedules, temporary buffers, keys; 0: no cache)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.cache_bytes },
    { "cache_probation",
      "Nonblocking collectives: of the cached schedules whose arguments came only "
      "once (no hit yet), keep at most this many idle ones, evicting the oldest "
      "first, so calls that never repeat reuse memory instead of taking new pages "
      "(a hit promotes a schedule, so does a second miss of arguments evicted this way; "
      "0: no such bound)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.cache_probation },
    /* Both sides of a message choose its transport alone: these two must
     * be equal on all processes. */
    /* Only the receiver reads this one (its file tells the sender). */
    /* Each side decides alone: a receiver that cannot read refuses the
     * offer and the message streams instead. */
    /* The pool: each receiver sizes its own (its directory tells the
     * senders), so these may differ between processes. */
};

static int pnbc_register(void)
{
    for (size_t i = 0; i < sizeof(pnbc_params) / sizeof(pnbc_params[0]); ++i) {
        const pnbc_param_t *p = &pnbc_params[i];
        (void) mca_base_component_var_register(&mca_coll_pnbc_component.super.collm_version,
                                               p->name, p->help, p->type, NULL, 0, 0,
                                               p->level, p->scope, p->storage);
    }
    mca_coll_pnbc_select_register();
    return mca_common_pnbc_register();
}

static int pnbc_open(void)
{
    /* In MPI_Init (not ompi_info), before the modex fence: the single
     * copy's cost here reaches the node's other processes with it, and
     * they find the transports' shared state (the shm pool) once it is
     * over. */
    if (OMPI_MPI_STATE_INIT_STARTED == ompi_mpi_state) {
        mca_common_pnbc_modex_send();
        pnbc_transport_open();
    }
    return mca_common_pnbc_init();
}

static int pnbc_close(void)
{
    mca_common_pnbc_fini();
    mca_coll_pnbc_select_close();
    mca_common_pnbc_deregister();
    return OMPI_SUCCESS;
}

static int pnbc_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}
