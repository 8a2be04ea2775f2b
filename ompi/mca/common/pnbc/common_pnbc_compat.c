/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The runtime (PMIx) services pnbc uses, on either Open MPI series
 * (common_pnbc_compat.h).  4.1 reaches PMIx through opal_pmix's function
 * table (opal/mca/pmix/pmix.h); 5.0 calls it directly through
 * opal/mca/pmix/pmix-internal.h.  The macros below are Open MPI's own.
 */

#include "common_pnbc_compat.h"

#if PNBC_OMPI_5
#include "opal/mca/pmix/pmix-internal.h"
#define PNBC_MODEX_LOCAL  PMIX_LOCAL
#define PNBC_MODEX_UINT64 PMIX_UINT64
#else
#include "opal/mca/pmix/pmix.h"
#define PNBC_MODEX_LOCAL  OPAL_PMIX_LOCAL
#define PNBC_MODEX_UINT64 OPAL_UINT64
#endif
#include "ompi/proc/proc.h"

int pnbc_modex_send_u64(const char *key, uint64_t value)
{
    int rc;
    OPAL_MODEX_SEND_VALUE(rc, PNBC_MODEX_LOCAL, (char *) key, &value, PNBC_MODEX_UINT64);
    return rc;
}

bool pnbc_modex_all_data(void)
{
    return opal_pmix_collect_all_data;
}

int pnbc_modex_recv_u64(uint32_t vpid, const char *key, uint64_t *value)
{
    opal_process_name_t name = { .jobid = OMPI_PROC_MY_NAME->jobid, .vpid = vpid };
    uint64_t *p = value;
    int rc;
    OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, (char *) key, &name, &p, PNBC_MODEX_UINT64);
    return rc;
}

void pnbc_register_cleanup_dir(char *dir)
{
#if PNBC_OMPI_5
    (void) opal_pmix_register_cleanup(dir, true, false, false);
#else
    if (NULL != opal_pmix.register_cleanup) {
        (void) opal_pmix.register_cleanup(dir, true, false, false);
    }
#endif
}
