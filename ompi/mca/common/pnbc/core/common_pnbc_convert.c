/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Datatype conversion between a typed span and a flat region: convertors
 * prepared at commit and run at each start (COPY actions, and the shm
 * transport's boxes, one fragment at a time).
 */

#include "common_pnbc_schedule.h"

#include "opal/datatype/opal_convertor.h"

/* A convertor over a resolved span, ready to be rewound at each start.
 * Also used by the shm transport. */
opal_convertor_t *pnbc_prepared_convertor(const pnbc_span_t *sp, bool for_send)
{
    opal_convertor_t *conv = OBJ_NEW(opal_convertor_t);
    if (NULL == conv) {
        return NULL;
    }
    int rc = for_send
        ? opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &sp->dtype->super,
                                                   sp->count, sp->addr, 0, conv)
        : opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &sp->dtype->super,
                                                   sp->count, sp->addr, 0, conv);
    if (OPAL_SUCCESS != rc) {
        OBJ_RELEASE(conv);
        return NULL;
    }
    return conv;
}

/* Run one convertor over a flat region (pack into it or unpack from
 * it), for up to `bytes` from `position` on in packed order; returns the
 * bytes moved (packing stops short of an element that does not fit).
 * Also used by the shm transport, one fragment at a time. */
size_t pnbc_convert_part(opal_convertor_t *conv, void *flat, size_t bytes, size_t position,
                         bool pack)
{
    size_t max_data = bytes;
    struct iovec iov = { .iov_base = flat, .iov_len = bytes };
    uint32_t iov_count = 1;

    /* Consecutive fragments continue where the last one stopped: then
     * the convertor keeps the part of an element that straddles the
     * boundary, which setting the position again would drop. */
    if (conv->bConverted != position) {
        opal_convertor_set_position(conv, &position);
    }
    if (pack) {
        opal_convertor_pack(conv, &iov, &iov_count, &max_data);
    } else {
        opal_convertor_unpack(conv, &iov, &iov_count, &max_data);
    }
    return max_data;
}

int pnbc_convert_flat(opal_convertor_t *conv, void *flat, size_t bytes, bool pack)
{
    return (pnbc_convert_part(conv, flat, bytes, 0, pack) == bytes) ? OMPI_SUCCESS
                                                                    : MPI_ERR_TRUNCATE;
}
