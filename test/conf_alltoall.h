/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the files of the conf_alltoall program share: conf_alltoall.c (the
 * case table, the scenarios, the driver) and conf_alltoall_req.c (one
 * request of a case: blocks, buffers, calls, inputs, checks).
 */
#ifndef PNBC_TEST_CONF_ALLTOALL_H
#define PNBC_TEST_CONF_ALLTOALL_H

#include "common.h"

#define ITERS 3

/* --only SUBSTR: 1 when the scenario `desc` is to run */
int selected(const char *desc);
void check(int ok, const char *what, int it, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------------ cases */
typedef enum { F_INT, F_DBL, F_STR, F_MIX } fam_t;     /* F_MIX: per pair */

typedef enum { A2A, A2AV, A2AW } coll_k;
extern const char *coll_str[];

typedef enum {
    U_CONST,        /* param units everywhere */
    U_VARIED,       /* 0..3, not symmetric */
    U_SYMM,         /* 0..2, symmetric (in place) */
    U_ZERO_RANK,    /* rank z exchanges nothing, symmetric */
    U_ZERO_SEND     /* rank z sends nothing but receives */
} units_k;

typedef struct {
    const char *name;
    coll_k coll;
    int inplace;
    units_k units;
    int param;
    fam_t fam;
    /* type index = base + rmul * rank + pmul * peer (pmul: alltoallw only) */
    int s_base, s_rmul, s_pmul;
    int r_base, r_rmul, r_pmul;
} case_t;

/* ------------------------------------------------------------------ one request
 * (conf_alltoall_req.c) */
typedef struct {
    const dtype_t *dt;
    int count;
    size_t disp;            /* bytes */
} blk_t;

typedef struct {
    const case_t *c;
    MPI_Comm comm;
    int rank, size;
    uint64_t id;
    blk_t *sblk, *rblk;     /* per peer */
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype *stypes, *rtypes;
    size_t sbytes, rbytes;
    unsigned char *sbuf, *rbuf, *scopy, *exp, *ref, *init_rbuf;
    MPI_Request req;
    char desc[300];
} a2a_t;

void a2a_setup(a2a_t *x, const case_t *c, MPI_Comm comm, const char *comm_name);
void a2a_release(a2a_t *x);
/* init with junk in the buffers; 1 when it succeeded on every rank */
int a2a_init_checked(a2a_t *x);
/* New inputs for iteration `it`; poisoned receive side; expectation. */
void a2a_prepare(a2a_t *x, int it);
/* Check iteration `it`: persistent result vs expectation, send buffer
 * unchanged, and the blocking collective vs expectation. */
void a2a_check(a2a_t *x, int it);
/* One case, ITERS starts; freed_types: the request is initialised with
 * datatype handles that are freed right after init. */
void run_case(const case_t *c, MPI_Comm comm, const char *comm_name, int freed_types);

#endif
