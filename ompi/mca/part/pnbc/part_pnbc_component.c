/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * part/pnbc: a component of Open MPI 5's `part` framework serving
 * MPI_Psend_init, MPI_Precv_init, MPI_Pready, MPI_Pready_range,
 * MPI_Pready_list and MPI_Parrived -- from C, Fortran and every binding
 * built on them -- with pnbc's partitioned implementation (part_pnbc.h) on
 * the shared engine: local init, unequal partition counts on the two
 * sides, early-bird transfers, shared memory on a node.
 *
 * The framework selects one component for the whole job, the highest
 * priority (part/persist's is 1; ours part_pnbc_priority, 20), and copies
 * its module into mca_part.  Open MPI's entry points check little
 * (MPI_Psend_init only the request pointer; MPI_Pready and MPI_Parrived
 * the request's type) and hand every error class we return to
 * MPI_COMM_WORLD's error handler, so the implementation checks all its
 * arguments itself.  Starts, completions and frees go through the
 * request's own functions (the engine's request core), as for every pnbc
 * request; the engine's progress callback drives it, so the module has
 * no progress function of its own.
 *
 * Open MPI 5.0's framework selects among the components named in its list
 * mca_part_base_part only, which its open function fills with "persist"
 * alone once the components are open: our open adds our name, so that the
 * framework's choice by priority sees us (--mca part persist still keeps
 * us from being opened at all).
 *
 * The engine is taken at the first partitioned init and held until
 * MPI_Finalize (mca_common_pnbc_hold_until_finalize): Open MPI 5.0 never
 * calls a selected part component's partm_finalize, nor closes the
 * framework.
 */

#include "ompi_config.h"

#include "part_pnbc.h"

#include "ompi/mca/part/base/base.h"
#include "ompi/mca/part/part.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

static int component_register(void);
static int component_open(void);
static int component_close(void);
static mca_part_base_module_t *component_init(int *priority, bool progress_threads,
                                              bool mpi_threads);
static int component_finalize(void);

OMPI_DECLSPEC extern mca_part_base_component_4_0_0_t mca_part_pnbc_component;

mca_part_base_component_4_0_0_t mca_part_pnbc_component = {
    .partm_version = {
        MCA_PART_BASE_VERSION_2_0_0,
        .mca_component_name = "pnbc",
        MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
        .mca_open_component = component_open,
        .mca_close_component = component_close,
        .mca_register_component_params = component_register,
    },
    .partm_data = {
        MCA_BASE_METADATA_PARAM_NONE
    },
    .partm_init = component_init,
    .partm_finalize = component_finalize,
};

/* Above part/persist's 1, so an installed pnbc serves partitioned
 * communication without any flag (--mca part persist: Open MPI's own). */
static int priority = 20;

/* ------------------------------------------------------------------ */
/* The module                                                         */
/* ------------------------------------------------------------------ */

static void say_init(const char *what, size_t parts, size_t count, int peer, int tag)
{
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "part:pnbc: %s partitions=%zu count=%zu peer=%d tag=%d", what, parts,
                    count, peer, tag);
    }
}

static int module_psend_init(const void *buf, size_t parts, size_t count,
                             struct ompi_datatype_t *datatype, int dst, int tag,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             struct ompi_request_t **request)
{
    const int rc = pnbc_part_init(true, buf, parts, count, datatype, dst, tag, comm, info,
                                  request);
    if (MPI_SUCCESS == rc) {
        say_init("psend_init", parts, count, dst, tag);
    }
    return rc;
}

static int module_precv_init(void *buf, size_t parts, size_t count,
                             struct ompi_datatype_t *datatype, int src, int tag,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             struct ompi_request_t **request)
{
    const int rc = pnbc_part_init(false, buf, parts, count, datatype, src, tag, comm, info,
                                  request);
    if (MPI_SUCCESS == rc) {
        say_init("precv_init", parts, count, src, tag);
    }
    return rc;
}

/* Not called by Open MPI 5.0's MPI layer (MPI_Start goes to the request's
 * req_start); kept correct for any caller of mca_part.part_start. */
static int module_start(size_t count, struct ompi_request_t **requests)
{
    for (size_t i = 0; i < count; ++i) {
        if (NULL != requests[i] && NULL != requests[i]->req_start) {
            const int rc = requests[i]->req_start(1, &requests[i]);
            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
    }
    return OMPI_SUCCESS;
}

static int module_pready(size_t min_part, size_t max_part, struct ompi_request_t *request)
{
    return pnbc_part_pready(min_part, max_part, request);
}

static int module_parrived(size_t min_part, size_t max_part, int *flag,
                           struct ompi_request_t *request)
{
    return pnbc_part_parrived(min_part, max_part, flag, request);
}

static mca_part_base_module_t module = {
    .part_progress = NULL,
    .part_precv_init = module_precv_init,
    .part_psend_init = module_psend_init,
    .part_start = module_start,
    .part_pready = module_pready,
    .part_parrived = module_parrived,
};

/* ------------------------------------------------------------------ */
/* The component                                                      */
/* ------------------------------------------------------------------ */

static int component_register(void)
{
    (void) mca_base_component_var_register(&mca_part_pnbc_component.partm_version, "priority",
                                           "Priority of the pnbc part component (part/persist's "
                                           "is 1; --mca part persist selects Open MPI's own)",
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
                                           MCA_BASE_VAR_SCOPE_READONLY, &priority);
    return mca_common_pnbc_register();
}

static int component_open(void)
{
    char *name = strdup(mca_part_pnbc_component.partm_version.mca_component_name);
    if (NULL != name && opal_pointer_array_add(&mca_part_base_part, name) < 0) {
        free(name);
    }
    return OMPI_SUCCESS;
}

static int component_close(void)
{
    mca_common_pnbc_deregister();
    return OMPI_SUCCESS;
}

static mca_part_base_module_t *component_init(int *out_priority, bool progress_threads,
                                              bool mpi_threads)
{
    (void) progress_threads;
    (void) mpi_threads;
    *out_priority = priority;
    return &module;
}

static int component_finalize(void)
{
    return OMPI_SUCCESS;
}

/* The implementation's host hook (part_pnbc.h): the engine from the first
 * partitioned init to MPI_Finalize. */
int pnbc_part_engine_take(void)
{
    return mca_common_pnbc_hold_until_finalize();
}
