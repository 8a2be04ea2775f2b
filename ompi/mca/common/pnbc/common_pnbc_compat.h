/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The one place where pnbc meets the differences between the Open MPI
 * series it builds against, 4.1.x and 5.0.x (PNBC_OMPI_5).  Everything
 * else in the tree is written once, against these names:
 *
 *   opal_mutex_t                 from whichever header defines it
 *   pnbc_comm_key(comm)          a communicator's 32-bit key, equal in all
 *                                its processes (shared-memory names)
 *   pnbc_info_get(...)           an MPI_Info value into a char buffer
 *   pnbc_modex_*()               publishing and reading one uint64 per
 *                                process through the runtime (PMIx)
 *   pnbc_register_cleanup_dir()  a directory the runtime removes when the
 *                                process ends
 *   PNBC_COLL_COMPONENT_T,
 *   PNBC_COLL_BASE_VERSION       the coll framework's component type and
 *                                version macro
 *   PNBC_REQUEST_PART            the request type of a partitioned request:
 *                                5.0's MPI_Pready/MPI_Parrived want
 *                                OMPI_REQUEST_PART; 4.1 has none, and pnbc's
 *                                own entry points take a PML request
 *
 * The functions that need PMIx's headers live in common_pnbc_compat.c,
 * so that no other file includes them.
 */

#ifndef MCA_COMMON_PNBC_COMPAT_H
#define MCA_COMMON_PNBC_COMPAT_H

#include "ompi_config.h"
#include "mpi.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if OMPI_MAJOR_VERSION >= 5
#define PNBC_OMPI_5 1
#include "opal/mca/threads/mutex.h"
#else
#define PNBC_OMPI_5 0
#include "opal/threads/mutex.h"
#endif

#include "ompi/communicator/communicator.h"
#include "ompi/info/info.h"
#include "ompi/request/request.h"

BEGIN_C_DECLS

#if PNBC_OMPI_5
#define PNBC_COLL_COMPONENT_T  mca_coll_base_component_2_4_0_t
#define PNBC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
#define PNBC_REQUEST_PART      OMPI_REQUEST_PART
#else
#define PNBC_COLL_COMPONENT_T  mca_coll_base_component_2_0_0_t
#define PNBC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
#define PNBC_REQUEST_PART      OMPI_REQUEST_PML
#endif

/* A communicator's key in pnbc's shared-memory names (pool directory,
 * marker files, mailbox), the same in every process of the communicator.
 * 4.1: the context id.  5.0: a communicator made the classic way (dup,
 * split, create, the predefined ones) has a process-local index equal to
 * its agreed context id in every process, so the key is the same as on
 * 4.1; one made from a group (MPI_Comm_create_from_group, sessions)
 * carries an extended id (base, sub) agreed through PMIx and a local
 * index that may differ between processes: its key is a 31-bit mix of the
 * extended id with the top bit set, so it never meets a classic key (two
 * live group-made communicators sharing processes and a key would share
 * names: odds about n^2 / 2^32 for n such communicators). */
static inline uint32_t pnbc_comm_key(const ompi_communicator_t *comm)
{
#if PNBC_OMPI_5
    const ompi_comm_extended_cid_t x = comm->c_contextid;
    if ((0 == x.cid_base && x.cid_sub.u64 == comm->c_index) || comm->c_index <= 2) {
        return comm->c_index;
    }
    uint64_t h = x.cid_base * UINT64_C(0x9E3779B97F4A7C15) ^ x.cid_sub.u64;
    h ^= h >> 29;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 32;
    return (uint32_t) (h & 0x7fffffffu) | 0x80000000u;
#else
    return comm->c_contextid;
#endif
}

/* The value of `key` in `info` (at most len - 1 characters, always
 * terminated); *flag = 0 when it is not there. */
static inline int pnbc_info_get(ompi_info_t *info, const char *key, char *value, int len,
                                int *flag)
{
    *flag = 0;
    if (NULL == info || MPI_INFO_NULL == info || len < 1) {
        return OMPI_SUCCESS;
    }
#if PNBC_OMPI_5
    opal_cstring_t *s = NULL;
    int rc = ompi_info_get(info, key, &s, flag);
    if (OMPI_SUCCESS == rc && *flag && NULL != s) {
        size_t n = s->length < (size_t) len - 1 ? s->length : (size_t) len - 1;
        memcpy(value, s->string, n);
        value[n] = '\0';
    }
    if (NULL != s) {
        OBJ_RELEASE(s);
    }
    return rc;
#else
    value[len - 1] = '\0';
    return ompi_info_get(info, key, len - 1, value, flag);
#endif
}

/* common_pnbc_compat.c: the runtime's key-value store and cleanup. */

/* Publish `value` under `key` for the processes of this node (before the
 * modex fence).  An OMPI error code. */
int pnbc_modex_send_u64(const char *key, uint64_t value);
/* Can every process read what the others published at the fence without
 * asking their servers (the fence collected all data)? */
bool pnbc_modex_all_data(void);
/* What process `vpid` of this job published under `key`: OMPI_SUCCESS
 * and *value, or an error when nothing was published. */
int pnbc_modex_recv_u64(uint32_t vpid, const char *key, uint64_t *value);
/* The runtime removes `dir` (a directory) when this process ends, even by
 * a signal, while its daemon lives. */
void pnbc_register_cleanup_dir(char *dir);

END_C_DECLS

#endif /* MCA_COMMON_PNBC_COMPAT_H */
