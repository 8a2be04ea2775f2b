/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * random_ops: one randomly drawn operation (see random_ops.c for the
 * driver).  random_colls.c draws an operation from (seed, op index), makes
 * its buffers, issues it (MPIX_<Coll>_init, MPI_I<coll>, or
 * MPI_Psend_init + MPI_Precv_init), writes the inputs of a start and
 * checks the results against references computed locally: every rank can
 * compute every rank's input from (op id, start number, rank).
 */
#ifndef PNBC_RANDOM_OPS_H
#define PNBC_RANDOM_OPS_H

#include "part_common.h"

enum { K_PERS, K_NBC, K_PART };
enum {
    RC_BARRIER, RC_BCAST, RC_REDUCE, RC_ALLREDUCE, RC_GATHER, RC_GATHERV, RC_SCATTER, RC_SCATTERV,
    RC_ALLGATHER, RC_ALLGATHERV, RC_ALLTOALL, RC_ALLTOALLV, RC_ALLTOALLW, RC_REDUCE_SCATTER,
    RC_REDUCE_SCATTER_BLOCK, RC_SCAN, RC_EXSCAN, RC_N
};

typedef struct rop {
    long idx;                   /* op index in the sequence */
    uint64_t id;                /* hash of (seed, idx): the inputs' case id */
    int kind, coll;
    MPI_Comm comm;
    const char *comm_name;
    int rank, size;
    const dtype_t *dt;          /* layout (and shared handle) of the data */
    int dtfree;                 /* the call gets a new handle of dt, freed right after it */
    opk_t opk;
    int count, root, inplace;
    int *cnt;                   /* v/reduce_scatter: count of every rank */
    int *sc, *sd, *rc, *rd;     /* this rank's counts/displacements (w: bytes) */
    const dtype_t **sdt, **rdt; /* alltoallw: types per peer */
    MPI_Datatype *st, *rt;
    size_t sbytes, rbytes, cmpbytes, fullbytes;
    unsigned char *sbuf, *rbuf, *exp, *scopy, *tmp, *full;
    int it;                     /* starts so far */
    int life;                   /* persistent: epochs left in the pool */
    int started;                /* started in the current epoch */
    int nreq;
    MPI_Request req[2];
    /* partitioned: req[0] = send to dst, req[1] = receive from src */
    int ps, pr, dst, src, tag;
    size_t n;
    pt_plan_t plan;
    int readied;
} rop_t;

extern dtype_t T_INDEXED;       /* indexed(3, {2,1,1}, {0,3,5}, MPI_INT): 4 ints in 24 bytes */
int rnd_types_create(void);
void rnd_types_free(void);

const char *rop_coll_name(int coll);
const char *rop_kind_name(int kind);
/* Draw op `idx` of sequence `seed` on comm (same result on every rank). */
void rop_draw(rop_t *o, uint64_t seed, long idx, MPI_Comm comm, const char *comm_name);
/* Describe o into s (for FAIL lines and the watchdog). */
void rop_describe(const rop_t *o, char *s, size_t n);
/* Buffers of this rank. */
void rop_alloc(rop_t *o);
/* Inputs of start number o->it, poisoned outputs. */
void rop_prepare(rop_t *o);
/* Persistent: *_init; nonblocking: the MPI_I<coll> call (inputs must be
 * prepared); partitioned: Psend_init + Precv_init.  Returns an MPI code. */
int rop_issue(rop_t *o, uint64_t rank_rng);
/* After completion of start o->it: compare; returns 0 when all is right,
 * else writes what is wrong into msg. */
int rop_check(rop_t *o, char *msg, size_t n);
void rop_release(rop_t *o);
/* Partitioned, after MPI_Start of req[0]: write and ready every send
 * partition in a random plan (Pready, _range, _list).  An MPI code. */
int rop_pready(rop_t *o, uint64_t *rank_rng);

static inline int rnd_int(uint64_t *g, int n)
{
    return n <= 0 ? 0 : (int)(pt_rand(g) % (uint64_t)n);
}

#endif
