/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the files of the conf_inter program share: conf_inter.c (datatypes,
 * operations, intercommunicators, the barrier test, the driver),
 * conf_inter_cases.c (building the cases: buffers, blocks, MPI arguments)
 * and conf_inter_run.c (running and checking them).
 */
#ifndef PNBC_TEST_CONF_INTER_H
#define PNBC_TEST_CONF_INTER_H

#include "common.h"

#define ITERS 3

/* Seed of the data group g's rank i sends to destination `key` (-1: the
 * same data to everyone) at start `it` of case `id`. */
uint64_t data_seed(uint64_t id, int it, int g, int i, int key);

/* ---------------------------------------------------------------- datatypes */
/* A test datatype: `nf` ints per element at byte offsets off[], element
 * extent `ext`.  Bytes not covered by a field are holes. */
typedef struct ty {
    const char *name;
    MPI_Datatype t;
    int ext, nf, off[2];
} ty_t;

extern ty_t TY_INT, TY_2INT, TY_PAIR, TY_VPAIR, TY_LB;
/* Write `cnt` elements of `ty` at buf from the int stream v (type-map order). */
void put_stream(char *buf, const ty_t *ty, int cnt, const int *v);

/* ---------------------------------------------------------------- operations */
typedef enum { OPK_NONE, OPK_SUM, OPK_MAXLOC, OPK_AFFINE, OPK_USUM } redop_t;
extern const char *const opk_names[];
/* One element (record of nf ints): inout = in (op) inout. */
void rec_op(redop_t k, const int *in, int *io);
MPI_Op op_handle(redop_t k);
/* n ints of data from `seed`, in the value range the op wants. */
void gen_ints(int *v, int n, uint64_t seed, redop_t k);

/* ---------------------------------------------------------------- intercommunicators */
typedef struct ictx {
    const char *name;
    MPI_Comm inter;
    int gid, lrank, lsize, rsize;
    int gsize[2];   /* by group id */
} ictx_t;

/* ---------------------------------------------------------------- test cases */
typedef enum {
    K_BCAST, K_GATHER, K_GATHERV, K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV,
    K_ALLTOALL, K_ALLTOALLV, K_ALLTOALLW, K_REDUCE, K_ALLREDUCE, K_RS, K_RSB
} kind_t;

/* A block of a buffer: cnt elements of ty at byte disp, carrying the data
 * group g's rank i produced for destination key (see data_seed). */
typedef struct blk {
    const ty_t *ty;
    int cnt;
    size_t disp;
    int g, i, key;
} blk_t;

#define MAXB 8      /* blocks per buffer: one per remote rank at most */

typedef struct tcase {
    kind_t kind;
    char desc[256];
    uint64_t id;
    const ictx_t *ic;

    /* MPI arguments */
    char *sbuf, *rbuf;
    size_t sbytes, rbytes;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    int scounts[MAXB], sdispls[MAXB], rcounts[MAXB], rdispls[MAXB];
    MPI_Datatype stypes[MAXB], rtypes[MAXB];
    MPI_Op op;
    int root;

    /* data movement: what each block carries */
    int nsb, nrb;
    blk_t sb[MAXB], rb[MAXB];
    /* reductions */
    redop_t opk;
    const ty_t *rty;
    int count;          /* elements each rank contributes */
    int res_first, res_cnt;     /* my slice of the remote group's reduction */

    char *sref, *exp, *ref;     /* send copy, expected rbuf, blocking result */
    int blocking_ref;           /* run and compare the blocking collective */
    MPI_Request req;
} tcase_t;

/* conf_inter_cases.c: the cases (rooted: bcast, gather(v), scatter(v);
 * all_to: allgather(v), alltoall(v,w); reduction: reduce, allreduce,
 * reduce_scatter(_block)); tp selects a send/receive type pair. */
#define NPAIRS 4        /* send/receive type pairs */
tcase_t *rooted(kind_t kind, const ictx_t *ic, int rg, int rr, int k, int tp);
tcase_t *all_to(kind_t kind, const ictx_t *ic, int k, int tp);
tcase_t *reduction(kind_t kind, const ictx_t *ic, redop_t opk, const ty_t *ty, int count,
                   int rg, int rr);

/* conf_inter_run.c: run one case / several at once (MPI_Startall), check
 * every start, free the case(s). */
void run_case(tcase_t *t);
void run_together(tcase_t **ts, int n);

#endif
