/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * conf_neighbor, the topologies (see conf_neighbor.c): Cartesian, graph and
 * distributed-graph communicators, every rank's neighbour lists through
 * the public topology queries, and which block of which sender lands in
 * each of my receive slots.
 */
#define _GNU_SOURCE
#include "conf_neighbor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ topologies */
/* this rank's lists through the public query functions */
static void my_lists(topo_t *t, int *in, int **src, int *out, int **dst)
{
    if (t->kind == K_CART) {
        int nd;
        MPI_Cartdim_get(t->comm, &nd);
        int *dims = xcalloc((size_t)nd, sizeof(int)), *per = xcalloc((size_t)nd, sizeof(int));
        int *co = xcalloc((size_t)nd, sizeof(int)), *c = xcalloc((size_t)nd, sizeof(int));
        MPI_Cart_get(t->comm, nd, dims, per, co);
        *in = *out = 2 * nd;
        *src = xcalloc((size_t)*in, sizeof(int));
        *dst = xcalloc((size_t)*out, sizeof(int));
        for (int d = 0; d < nd; d++)
            for (int dir = 0; dir < 2; dir++) {
                int r;
                memcpy(c, co, sizeof(int) * (size_t)nd);
                c[d] += dir ? 1 : -1;
                if (!per[d] && (c[d] < 0 || c[d] >= dims[d])) r = MPI_PROC_NULL;
                else {
                    c[d] = (c[d] + dims[d]) % dims[d];
                    MPI_Cart_rank(t->comm, c, &r);
                }
                (*src)[2 * d + dir] = (*dst)[2 * d + dir] = r;
            }
        free(dims), free(per), free(co), free(c);
    } else if (t->kind == K_GRAPH) {
        int n;
        MPI_Graph_neighbors_count(t->comm, t->rank, &n);
        *in = *out = n;
        *src = xcalloc((size_t)n, sizeof(int));
        *dst = xcalloc((size_t)n, sizeof(int));
        MPI_Graph_neighbors(t->comm, t->rank, n, *src);
        memcpy(*dst, *src, sizeof(int) * (size_t)n);
    } else {
        int w;
        MPI_Dist_graph_neighbors_count(t->comm, in, out, &w);
        *src = xcalloc((size_t)*in, sizeof(int));
        *dst = xcalloc((size_t)*out, sizeof(int));
        int *sw = xcalloc((size_t)*in, sizeof(int)), *dw = xcalloc((size_t)*out, sizeof(int));
        MPI_Dist_graph_neighbors(t->comm, *in, *src, w ? sw : MPI_UNWEIGHTED, *out, *dst,
                                 w ? dw : MPI_UNWEIGHTED);
        free(sw), free(dw);
    }
}

static void gather_list(MPI_Comm comm, int n, const int *mine, const int *deg, int size, int **all)
{
    int *displs = xcalloc((size_t)size, sizeof(int)), tot = 0;
    for (int r = 0; r < size; r++) displs[r] = tot, tot += deg[r];
    int *flat = xcalloc((size_t)tot, sizeof(int));
    MPI_Allgatherv(mine, n, MPI_INT, flat, deg, displs, MPI_INT, comm);
    for (int r = 0; r < size; r++) {
        all[r] = xcalloc((size_t)deg[r], sizeof(int));
        memcpy(all[r], flat + displs[r], sizeof(int) * (size_t)deg[r]);
    }
    free(flat);
    free(displs);
}

/* Which block of its sender lands in each of my receive slots. */
static int compute_pairing(topo_t *t)
{
    int me = t->rank, bad = 0;
    t->pair = xcalloc((size_t)t->indeg[me], sizeof(int));
    for (int j = 0; j < t->indeg[me]; j++) {
        int s = t->src[me][j], k = -1;
        if (s == MPI_PROC_NULL) {
            t->pair[j] = -1;
            continue;
        }
        if (t->kind == K_CART) {
            k = j ^ 1;
            if (t->dst[s][k] != me) k = -1;
        } else {
            int m = 0;
            for (int i = 0; i < j; i++) m += (t->src[me][i] == s);
            for (int i = 0; i < t->outdeg[s] && k < 0; i++)
                if (t->dst[s][i] == me && m-- == 0) k = i;
        }
        if (k < 0) bad = 1;
        t->pair[j] = k;
    }
    return bad;
}

int topo_finish(topo_t *t)
{
    int in, out, *src, *dst;
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(t->comm, &t->rank);
    MPI_Comm_size(t->comm, &t->size);
    my_lists(t, &in, &src, &out, &dst);
    t->indeg = xcalloc((size_t)t->size, sizeof(int));
    t->outdeg = xcalloc((size_t)t->size, sizeof(int));
    MPI_Allgather(&in, 1, MPI_INT, t->indeg, 1, MPI_INT, t->comm);
    MPI_Allgather(&out, 1, MPI_INT, t->outdeg, 1, MPI_INT, t->comm);
    t->src = xcalloc((size_t)t->size, sizeof(int *));
    t->dst = xcalloc((size_t)t->size, sizeof(int *));
    gather_list(t->comm, in, src, t->indeg, t->size, t->src);
    gather_list(t->comm, out, dst, t->outdeg, t->size, t->dst);
    free(src);
    free(dst);
    int bad = compute_pairing(t);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, t->comm);
    return bad;
}

void topo_free(topo_t *t)
{
    for (int r = 0; r < t->size; r++) free(t->src[r]), free(t->dst[r]);
    free(t->src), free(t->dst), free(t->indeg), free(t->outdeg), free(t->pair);
    MPI_Comm_free(&t->comm);
}

int make_cart(topo_t *t, int nd, int *dims, const int *periods, int reorder)
{
    char *p = t->name;
    p += sprintf(p, "cart%dd(", nd);
    for (int d = 0; d < nd; d++)
        p += sprintf(p, "%s%d%s", d ? "x" : "", dims[d], periods[d] ? "p" : "");
    sprintf(p, ")");
    t->kind = K_CART;
    return MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, reorder, &t->comm);
}

/* Undirected multigraph: ring (doubled at n=2, self loop at n=1), a chord
 * 0 -- n/2, a self loop at n-1; lists rotated and reversed per node. */
int make_graph(topo_t *t, int n)
{
    int ea[64], eb[64], ne = 0;
    for (int i = 0; i < n; i++) ea[ne] = i, eb[ne++] = (i + 1) % n;
    ea[ne] = 0, eb[ne++] = n / 2;
    ea[ne] = n - 1, eb[ne++] = n - 1;
    int **adj = xcalloc((size_t)n, sizeof(int *)), *deg = xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) adj[i] = xcalloc(64, sizeof(int));
    for (int e = 0; e < ne; e++) {
        adj[ea[e]][deg[ea[e]]++] = eb[e];
        if (ea[e] != eb[e]) adj[eb[e]][deg[eb[e]]++] = ea[e];
    }
    int *index = xcalloc((size_t)n, sizeof(int)), *edges = xcalloc(128, sizeof(int)), m = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < deg[i]; j++) {
            int jj = (j + i) % deg[i];
            edges[m++] = adj[i][(i & 1) ? deg[i] - 1 - jj : jj];
        }
        index[i] = m;
    }
    snprintf(t->name, sizeof t->name, "graph(ring+chord+selfloop)");
    t->kind = K_GRAPH;
    int rc = MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t->comm);
    for (int i = 0; i < n; i++) free(adj[i]);
    free(adj), free(deg), free(index), free(edges);
    return rc;
}

/* Directed multigraph: i -> i+1 unless i%3==2, i -> i+2 for even i,
 * 0 -> n-1 twice, n/2 -> n/2.  Irregular and asymmetric, repeated and
 * self edges; at n>=3 rank 2 has no ring edge out. */
static int dg_edges(int n, int *es, int *ed)
{
    int ne = 0;
    for (int i = 0; i < n; i++) {
        if (i % 3 != 2) es[ne] = i, ed[ne++] = (i + 1) % n;
        if (i % 2 == 0) es[ne] = i, ed[ne++] = (i + 2) % n;
    }
    es[ne] = 0, ed[ne++] = n - 1;
    es[ne] = 0, ed[ne++] = n - 1;
    es[ne] = n / 2, ed[ne++] = n / 2;
    return ne;
}

int make_dist_adjacent(topo_t *t, int n, int weighted)
{
    int es[64], ed[64], ne = dg_edges(n, es, ed), me = wrank;
    int src[64], sw[64], dst[64], dw[64], in = 0, out = 0;
    for (int e = 0; e < ne; e++) {
        if (ed[e] == me) sw[in] = e + 1, src[in++] = es[e];
        if (es[e] == me) dw[out] = 100 + e, dst[out++] = ed[e];
    }
    /* scramble: rotate the in-list, reverse the out-list on odd ranks */
    int rs[64], rsw[64], rd[64], rdw[64];
    for (int i = 0; i < in; i++)
        rs[i] = src[(i + me + weighted) % in], rsw[i] = sw[(i + me + weighted) % in];
    for (int i = 0; i < out; i++) {
        int k = ((me + weighted) & 1) ? out - 1 - i : i;
        rd[i] = dst[k], rdw[i] = dw[k];
    }
    snprintf(t->name, sizeof t->name, "dist_adjacent(%s)", weighted ? "weighted" : "unweighted");
    t->kind = K_DIST;
    return MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, rs, weighted ? rsw : MPI_UNWEIGHTED,
                                          out, rd, weighted ? rdw : MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &t->comm);
}

/* Same edges, but rank r describes edges e with e % n == (r + 1) % n,
 * i.e. mostly edges of OTHER ranks; the library builds the lists. */
int make_dist_general(topo_t *t, int n)
{
    int es[64], ed[64], ne = dg_edges(n, es, ed), me = wrank;
    int srcs[64], degs[64], dsts[64], w[64], m = 0;
    for (int e = 0; e < ne; e++)
        if (e % n == (me + 1) % n) srcs[m] = es[e], degs[m] = 1, dsts[m] = ed[e], w[m++] = e;
    snprintf(t->name, sizeof t->name, "dist_graph_create(weighted)");
    t->kind = K_DIST;
    return MPI_Dist_graph_create(MPI_COMM_WORLD, m, srcs, degs, dsts, w, MPI_INFO_NULL, 0,
                                 &t->comm);
}

int make_dist_empty(topo_t *t)
{
    int dummy[1] = { 0 }, w[1] = { 1 };
    snprintf(t->name, sizeof t->name, "dist_adjacent(empty)");
    t->kind = K_DIST;
    return MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, dummy, w, 0, dummy, w,
                                          MPI_INFO_NULL, 0, &t->comm);
}
