/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared part of the badinput program (badinput.c: collectives,
 * badinput_pc.c: partitioned communication and channels).
 */
#ifndef PNBC_BADINPUT_H
#define PNBC_BADINPUT_H

#include "pnbc_mpi4.h"
#include "common.h"

/* Open MPI 5: the MPI-4 entry points are Open MPI's own, which check some
 * arguments before any component sees them (and route errors to
 * MPI_COMM_WORLD's handler). */
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define BI_OMPI5 1
#else
#define BI_OMPI5 0
#endif

extern int bi_wrank, bi_wsize;
extern long bi_tried;           /* invalid calls made by this process */
extern int bi_round;            /* the round of the misuse sequence (0 = first) */

/* Name of an MPI error class ("MPI_ERR_COMM"), or "class N". */
const char *bi_class_name(int cls);
/* The class of a return code (MPI_SUCCESS stays MPI_SUCCESS). */
int bi_class(int rc);
/* One invalid call: rc must have class `want` (or `alt` when alt >= 0).
 * Counts the call; prints a FAIL line otherwise.  Returns 1 when it had. */
int bi_expect(int rc, int want, int alt, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A handle the failed call was given: it must still be `sentinel` or be
 * MPI_REQUEST_NULL.  Anything else was created by the failed call: it is
 * reported and freed. */
void bi_untouched(MPI_Request *r, MPI_Request sentinel, const char *what);
/* A request of its own (MPI_Send_init to MPI_PROC_NULL) that the output
 * handles are set to before each invalid call. */
extern MPI_Request bi_sentinel;
/* Check a verified result: ok or a FAIL line. */
void bi_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define MAXN 64         /* peers of any communicator used */

/* A communicator the collectives are tried on. */
typedef struct {
    const char *name;
    MPI_Comm comm;
    int rank, size, inter, remote, topo;
    int root_here;      /* inter: 1 in the root's group (rank 0 of the low group) */
} cx_t;

/* badinput_pc.c */
void bi_verify_colls(const cx_t *w, const cx_t *t, const cx_t *ic);    /* correct collectives afterwards */
void bi_partitioned(void);
void bi_channels(void);
void bi_pc_verify(void);        /* correct partitioned exchange (+ channel) afterwards */

#endif
