/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * bcast_layouts: a bcast whose ranks describe the buffer with different
 * (count, datatype) pairs of one type signature, as MPI allows (MPI-4.1
 * sec. 6.4): n doubles
 *   - at the root: one vector(n, 1, 2, MPI_DOUBLE) (every other double),
 *   - at odd ranks: n MPI_DOUBLE, contiguous,
 *   - at the other ranks: n / 2 of contiguous(2, MPI_DOUBLE) when n is
 *     even, else one vector(n, 1, 3, MPI_DOUBLE); the root's layout at
 *     rank 0 when it is not the root.
 * The algorithms that cut the message (pipeline, binary_pipeline,
 * scatter_allgather) must cut every rank's buffer alike although the
 * elements do not line up.
 *
 * For every bcast algorithm (MPI_Info "pnbc_algorithm"; an implementation
 * without it ignores the hint), segment sizes (default, 1000 bytes: less
 * than one element at the root), n in {1, 7, 1000, 65539} and two roots:
 * MPIX_Bcast_init, three starts with new data, each checked against the
 * values the root's generator gives (and the holes of strided layouts
 * left untouched); then MPI_Ibcast of every case once.
 *
 * Usage: bcast_layouts.  Prints one FAIL line per failure; exit status 1
 * on any.
 */
#include <mpi.h>
#include "pcoll_names.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOLE (-7.25)

static int rank, size, nfail;

typedef struct layout {
    MPI_Datatype type;
    int count;
    int stride;         /* doubles from one value to the next */
    const char *name;
} layout_t;

static layout_t layout_of(int r, int root, int n)
{
    layout_t l = { MPI_DATATYPE_NULL, 1, 1, "" };
    if (r == root || (0 == r && 0 != root)) {
        MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &l.type);
        l.stride = 2;
        l.name = "vector stride 2";
    } else if (r % 2) {
        MPI_Type_dup(MPI_DOUBLE, &l.type);
        l.count = n;
        l.name = "doubles";
    } else if (0 == n % 2) {
        MPI_Type_contiguous(2, MPI_DOUBLE, &l.type);
        l.count = n / 2;
        l.name = "pairs";
    } else {
        MPI_Type_vector(n, 1, 3, MPI_DOUBLE, &l.type);
        l.stride = 3;
        l.name = "vector stride 3";
    }
    MPI_Type_commit(&l.type);
    return l;
}

static double value(int n, int root, int it, int i)
{
    return (double) (n * 31 + root * 7 + it * 1000003 + i);
}

/* Fill (root) or poison (others) the buffer for start `it`. */
static void prepare(double *buf, const layout_t *l, int n, int root, int it)
{
    for (int i = 0; i < n * l->stride; ++i) {
        buf[i] = HOLE;
    }
    for (int i = 0; i < n; ++i) {
        buf[i * l->stride] = (rank == root) ? value(n, root, it, i) : -1.0;
    }
}

static void check(const double *buf, const layout_t *l, int n, int root, int it,
                  const char *what)
{
    for (int i = 0; i < n * l->stride; ++i) {
        const double want = (0 == i % l->stride) ? value(n, root, it, i / l->stride) : HOLE;
        if (buf[i] != want) {
            printf("FAIL bcast_layouts rank %d: %s n=%d root=%d start %d (%s): "
                   "double %d = %g, expected %g\n", rank, what, n, root, it, l->name, i,
                   buf[i], want);
            nfail++;
            return;
        }
    }
}

static void one_case(const char *alg, const char *segsize, int n, int root)
{
    layout_t l = layout_of(rank, root, n);
    double *buf = malloc(sizeof(double) * (size_t) n * 3);
    char what[96];
    MPI_Info info;
    MPI_Request req;

    MPI_Info_create(&info);
    MPI_Info_set(info, "pnbc_algorithm", alg);
    if (NULL != segsize) {
        MPI_Info_set(info, "pnbc_segsize", segsize);
    }
    snprintf(what, sizeof(what), "persistent %s segsize %s", alg, segsize ? segsize : "default");
    MPIX_Bcast_init(buf, l.count, l.type, root, MPI_COMM_WORLD, info, &req);
    MPI_Info_free(&info);
    for (int it = 0; it < 3; ++it) {
        prepare(buf, &l, n, root, it);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(buf, &l, n, root, it, what);
    }
    MPI_Request_free(&req);
    prepare(buf, &l, n, root, 3);
    MPI_Ibcast(buf, l.count, l.type, root, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(buf, &l, n, root, 3, "MPI_Ibcast");
    MPI_Type_free(&l.type);
    free(buf);
}

int main(int argc, char **argv)
{
    static const char *const algs[] = { "binomial", "linear", "knomial", "pipeline",
                                        "binary_pipeline", "scatter_allgather" };
    static const char *const segsizes[] = { NULL, "1000" };
    static const int ns[] = { 1, 7, 1000, 65539 };
    int ncases = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); ++a) {
        for (size_t g = 0; g < sizeof(segsizes) / sizeof(segsizes[0]); ++g) {
            for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); ++k) {
                one_case(algs[a], segsizes[g], ns[k], 0);
                one_case(algs[a], segsizes[g], ns[k], size - 1);
                ncases += 2;
            }
        }
    }
    int total = 0;
    MPI_Reduce(&nfail, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("bcast_layouts: %d cases at np=%d, %d failures\n", ncases, size, total);
    }
    MPI_Finalize();
    return (0 == nfail) ? 0 : 1;
}
