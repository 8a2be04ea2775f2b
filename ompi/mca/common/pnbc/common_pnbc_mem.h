/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The memory of live requests: their objects, settled schedules and
 * transport state, allocated at init and freed with the request (the
 * allocator is described at the top of common_pnbc_mem.c).  malloc-like:
 * every pointer from pnbc_mem_alloc/calloc/realloc goes back through
 * pnbc_mem_free or pnbc_mem_realloc, never through free(), and nothing
 * from malloc comes here.
 */

#ifndef MCA_COMMON_PNBC_MEM_H
#define MCA_COMMON_PNBC_MEM_H

#include "ompi_config.h"

#include <stddef.h>

BEGIN_C_DECLS

/* NULL: out of memory.  16-byte aligned. */
void *pnbc_mem_alloc(size_t bytes);
void *pnbc_mem_calloc(size_t bytes);
/* As realloc(3): NULL p allocates; on failure p is left as it was. */
void *pnbc_mem_realloc(void *p, size_t bytes);
/* NULL is ignored. */
void pnbc_mem_free(void *p);

/* An opal object of class cls in this memory (OBJ_NEW's work), and its
 * release (OBJ_RELEASE's: destructors run when the last reference
 * goes). */
struct opal_class_t;
void *pnbc_mem_obj_new(struct opal_class_t *cls);
void pnbc_mem_obj_release(void *obj);

/* Bytes of the blocks handed out and not freed; bytes of chunks mapped. */
void pnbc_mem_usage(size_t *live, size_t *mapped);
/* The engine's last user leaves: chunks are unmapped if no block lives. */
void pnbc_mem_fini(void);

END_C_DECLS

#endif /* MCA_COMMON_PNBC_MEM_H */
