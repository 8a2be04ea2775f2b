/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The transport registry: the transports in order of preference (see
 * common_pnbc_transport.h), binding an action to the first that takes it,
 * each transport's commit step, the calls of the transports' hooks
 * (progress, open, communicator enable and free, fini), and the check a
 * transport's commit makes of its binds.
 */

#include "common_pnbc_transport.h"

/* Transports in order of preference; the last one accepts everything. */
static const pnbc_transport_t *const transports[] = {
    &pnbc_transport_shm,
    &pnbc_transport_mbox,
    &pnbc_transport_pml,
};

void pnbc_transport_bind(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    const size_t n = sizeof(transports) / sizeof(transports[0]);
    for (size_t i = 0; i < n; ++i) {
        if (NULL == transports[i]->bind || transports[i]->bind(a, ch) || i == n - 1) {
            a->transport = transports[i];
            return;
        }
    }
}

int pnbc_transport_commit(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    const size_t n = sizeof(transports) / sizeof(transports[0]);
    for (size_t i = 0; i < n; ++i) {
        if (NULL != transports[i]->commit) {
            int rc = transports[i]->commit(s, ch);
            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
    }
    return OMPI_SUCCESS;
}

void pnbc_transport_unbind(pnbc_action_t *a)
{
    if (NULL != a->transport && NULL != a->transport->unbind) {
        a->transport->unbind(a);
    }
    a->transport = NULL;
}

/* Call each transport's hook `h` that is set, with the arguments given. */
#define PNBC_TRANSPORTS_CALL(h, ...)                                                   \
    do {                                                                               \
        for (size_t i_ = 0; i_ < sizeof(transports) / sizeof(transports[0]); ++i_) { \
            if (NULL != transports[i_]->h) {                                           \
                transports[i_]->h(__VA_ARGS__);                                        \
            }                                                                          \
        }                                                                              \
    } while (0)

void pnbc_transport_progress(void)
{
    PNBC_TRANSPORTS_CALL(progress);
}

void pnbc_transport_open(void)
{
    PNBC_TRANSPORTS_CALL(open);
}

void pnbc_transport_comm_enable(ompi_communicator_t *comm)
{
    PNBC_TRANSPORTS_CALL(comm_enable, comm);
}

void pnbc_transport_comm_free(uint32_t cid)
{
    PNBC_TRANSPORTS_CALL(comm_free, cid);
}

void pnbc_transport_fini(void)
{
    PNBC_TRANSPORTS_CALL(fini);
}

int pnbc_transport_bound_all(const pnbc_schedule_t *s, const pnbc_transport_t *tp)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (pnbc_action_is_comm(&s->actions[i]) && s->actions[i].transport == tp &&
            NULL == s->actions[i].tstate.ptr) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    return OMPI_SUCCESS;
}
