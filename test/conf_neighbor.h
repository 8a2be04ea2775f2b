/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the files of the conf_neighbor program share: conf_neighbor.c (the
 * layouts, the failure check, the driver), conf_neighbor_topo.c (the
 * topologies and every rank's neighbour lists) and conf_neighbor_cases.c
 * (the cases run on each topology).
 */
#ifndef PNBC_TEST_CONF_NEIGHBOR_H
#define PNBC_TEST_CONF_NEIGHBOR_H

#include "common.h"

extern int wrank, wsize;

/* Every failed check counts as a failure; one FAIL line per case and rank. */
void check(int ok, int it, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------- layouts
 * Every datatype is made of ints: `nint` ints per element at byte offsets
 * off[] from the element's origin (which may lie after its lower bound). */
typedef struct {
    const char *name;
    MPI_Datatype type;
    long extent;
    int nint;
    long off[4];
} lay_t;

enum { L_INT, L_C3I, L_M2C, L_M2H, L_M2V, L_NEG, NLAY };
extern lay_t lay[NLAY];
#define UNIT 12             /* ints per count unit: multiple of every nint */

/* ---------------------------------------------------------------- topologies
 * (conf_neighbor_topo.c) */
typedef enum { K_CART, K_GRAPH, K_DIST } kind_t;

typedef struct {
    char name[96];
    kind_t kind;
    MPI_Comm comm;
    int rank, size;
    int *indeg, *outdeg;        /* of every rank */
    int **src, **dst;           /* every rank's lists */
    int *pair;                  /* my slot j -> sender's block index, -1: PROC_NULL */
} topo_t;

int make_cart(topo_t *t, int nd, int *dims, const int *periods, int reorder);
/* undirected multigraph (MPI_Graph_create) */
int make_graph(topo_t *t, int n);
/* directed multigraph: MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create */
int make_dist_adjacent(topo_t *t, int n, int weighted);
int make_dist_general(topo_t *t, int n);
int make_dist_empty(topo_t *t);
/* Every rank's neighbour lists and the pairing of my receive slots
 * (collective); non-zero when the lists do not pair up. */
int topo_finish(topo_t *t);
void topo_free(topo_t *t);

/* ---------------------------------------------------------------- cases
 * (conf_neighbor_cases.c) */
extern uint64_t next_id;        /* input id of the next case */
/* Every case on one topology, then all five collectives at once. */
void sweep(topo_t *t);

#endif
