/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * libpnbc's hold on the engine: taken (with the engine's MCA parameters
 * registered) at the first call that needs it -- a channel bind, or on
 * Open MPI 4.1 a partitioned init -- and released at MPI_Finalize, whose
 * first step deletes MPI_COMM_SELF's attributes (MPI-4.1 sec. 11.2.4).
 */

#include "chan.h"

static pnbc_lock_t take_lock = PNBC_LOCK_INITIALIZER;
static bool taken;

static int release_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void) comm;
    (void) keyval;
    (void) value;
    (void) extra;
    pnbc_lock(&take_lock);
    if (taken) {
        mca_common_pnbc_fini();
        mca_common_pnbc_deregister();
        taken = false;
    }
    pnbc_unlock(&take_lock);
    return MPI_SUCCESS;
}

int pnbc_ext_engine_take(void)
{
    int rc = OMPI_SUCCESS;
    pnbc_lock(&take_lock);
    if (!taken) {
        int keyval;
        (void) mca_common_pnbc_register();
        rc = mca_common_pnbc_init();
        if (OMPI_SUCCESS == rc &&
            MPI_SUCCESS == MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_at_finalize,
                                                  &keyval, NULL) &&
            MPI_SUCCESS == MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL)) {
            /* the attribute keeps the key alive until MPI_Finalize deletes
             * it (MPI-4.1 sec. 7.7.2); freed here, it is not leaked */
            MPI_Comm_free_keyval(&keyval);
            taken = true;
        } else {
            if (OMPI_SUCCESS == rc) {
                mca_common_pnbc_fini();
                rc = OMPI_ERROR;
            }
            mca_common_pnbc_deregister();
        }
    }
    pnbc_unlock(&take_lock);
    return rc;
}
