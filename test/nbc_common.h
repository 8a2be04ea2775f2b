/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * nbc_common.h: what the nbc_* test programs share (header only).
 *
 * Buffers hold longs.  A layout is MPI_LONG (stride 1) or a strided long:
 * vector(1,1,2,MPI_LONG) resized to 16 bytes (stride 2), whose second
 * long is a hole that no collective may write.  The input of rank r,
 * element i, call seed s is nbc_val(r, i, s), so every rank computes every
 * expected result locally.  An expected buffer starts as NBC_POISON
 * everywhere (nothing may be written there); NBC_ANY marks elements whose
 * value MPI leaves undefined.
 */
#ifndef PNBC_TEST_NBC_COMMON_H
#define PNBC_TEST_NBC_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBC_POISON (-777777L)
#define NBC_ANY (-555555L)

typedef struct nbc_layout_t {
    const char *name;
    MPI_Datatype type;
    int stride;         /* longs per element */
} nbc_layout_t;

static int nbc_fails;
static int nbc_wrank;
static const char *nbc_prog = "nbc";

/* MPI_Init; the world rank into nbc_wrank, MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD, line-buffered stdout; returns the world size. */
static inline int nbc_start(int *argc, char ***argv)
{
    int wsize;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &nbc_wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    return wsize;
}

/* The failures of all ranks (collective). */
static inline int nbc_total_fails(void)
{
    int total = 0;
    MPI_Allreduce(&nbc_fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* The end of a program (collective): "PASS|FAIL <nbc_prog>[ <only>]: N
 * failures (np P)" from rank 0, MPI_Finalize; returns the exit status. */
static inline int nbc_finish(const char *only, int wsize)
{
    const int total = nbc_total_fails();
    if (0 == nbc_wrank) {
        printf("%s %s%s%s: %d failures (np %d)\n", total ? "FAIL" : "PASS", nbc_prog,
               only ? " " : "", only ? only : "", total, wsize);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

static inline long nbc_val(int rank, long i, int seed)
{
    return (long) (rank + 1) * 1000L + i * 7L + (long) seed * 100003L;
}

static inline void nbc_fail(const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (nbc_fails < 20) {
        printf("FAIL %s rank %d: %s\n", nbc_prog, nbc_wrank, msg);
    }
    nbc_fails++;
}

static inline void nbc_layouts(nbc_layout_t lay[2])
{
    MPI_Datatype v;
    lay[0] = (nbc_layout_t) { "long", MPI_LONG, 1 };
    MPI_Type_vector(1, 1, 2, MPI_LONG, &v);
    MPI_Type_create_resized(v, 0, 2 * (MPI_Aint) sizeof(long), &lay[1].type);
    MPI_Type_free(&v);
    MPI_Type_commit(&lay[1].type);
    lay[1].name = "strided";
    lay[1].stride = 2;
}

static inline long *nbc_alloc(size_t n)
{
    long *b = malloc((n ? n : 1) * sizeof(long));
    if (NULL == b) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return b;
}

static inline void nbc_poison(long *b, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        b[i] = NBC_POISON;
    }
}

/* Compare n longs of got with exp (NBC_ANY matches anything). */
static inline int nbc_compare(const long *got, const long *exp, size_t n, const char *what)
{
    for (size_t i = 0; i < n; ++i) {
        if (exp[i] != NBC_ANY && got[i] != exp[i]) {
            nbc_fail("%s: long %zu is %ld, expected %ld", what, i, got[i], exp[i]);
            return 1;
        }
    }
    return 0;
}

/* Complete a request in one of three ways (seed picks). */
static inline int nbc_complete(MPI_Request *req, int how)
{
    int rc, flag = 0;
    switch (how % 3) {
    case 0:
        return MPI_Wait(req, MPI_STATUS_IGNORE);
    case 1:
        while (!flag) {
            rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
            if (MPI_SUCCESS != rc) {
                return rc;
            }
        }
        return (MPI_REQUEST_NULL == *req) ? MPI_SUCCESS : MPI_ERR_REQUEST;
    default:
        return MPI_Waitall(1, req, MPI_STATUSES_IGNORE);
    }
}

#endif /* PNBC_TEST_NBC_COMMON_H */
