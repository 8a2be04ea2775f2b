/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pnbc_tune: measure every pnbc algorithm of a few collectives on this
 * machine and write a decision file for coll_pnbc_tuning_file.
 *
 *   mpirun -np P --mca coll pnbc,basic,libnbc,tuned,self pnbc_tune OUTFILE
 *
 * The algorithm names come from pnbc's own MCA enums (read through the
 * MPI tool interface, so the tuner never goes stale); each algorithm is
 * requested per request with the MPI_Info hint "pnbc_algorithm".  For
 * every message size the median Start+Wait time of each algorithm is
 * taken (rank 0's clock, after a barrier, interleaved repetitions), and
 * the output says, for increasing size bounds, which algorithm won:
 *
 *   <coll> <comm_size> <max_bytes> <algorithm>
 *
 * (rules for exactly this communicator size; the last rule of a
 * collective has max_bytes 0 = unbounded).
 */

#include <mpi.h>
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define PX_INIT(P) MPI_##P##_init   /* Open MPI 5: the MPI-4 names */
#else
#include <mpi-ext.h>
#define PX_INIT(P) MPIX_##P##_init  /* Open MPI 4.1: its pcollreq extension */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALGS 16
#define NSIZES 9
#define REPS 5
#define HYSTERESIS 1.10

static const size_t sizes[NSIZES] = { 8, 64, 512, 4096, 16384, 65536, 262144, 1048576, 4194304 };

typedef enum { T_BCAST, T_REDUCE, T_ALLREDUCE, T_ALLGATHER, T_ALLTOALL, T_GATHER, T_SCATTER,
               T_NCOLLS } tcoll_t;
static const char *coll_names[T_NCOLLS] = { "bcast", "reduce", "allreduce", "allgather",
                                            "alltoall", "gather", "scatter" };

/* Algorithm names of coll_pnbc_<coll>_algorithm, via MPI_T. */
static int algorithm_names(const char *coll, char names[MAX_ALGS][64])
{
    char want[96], name[256], desc[16];
    int ncvars, n = 0;
    snprintf(want, sizeof(want), "coll_pnbc_%s_algorithm", coll);
    MPI_T_cvar_get_num(&ncvars);
    for (int i = 0; i < ncvars; ++i) {
        int nlen = sizeof(name), dlen = sizeof(desc), verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_SUCCESS != MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen,
                                               &bind, &scope) ||
            0 != strcmp(name, want) || MPI_T_ENUM_NULL == en) {
            continue;
        }
        int nitems, value;
        char ename[64];
        MPI_T_enum_get_info(en, &nitems, ename, &(int){ sizeof(ename) });
        for (int k = 0; k < nitems && n < MAX_ALGS; ++k) {
            int len = 64;
            MPI_T_enum_get_item(en, k, &value, names[n], &len);
            if (0 != strcmp(names[n], "auto")) {
                n++;
            }
        }
    }
    return n;
}

static int make_request(tcoll_t c, size_t bytes, void *sbuf, void *rbuf, MPI_Info info,
                        MPI_Request *req)
{
    const int n = (int) (bytes / sizeof(double));
    switch (c) {
    case T_BCAST:
        return PX_INIT(Bcast)(rbuf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, info, req);
    case T_REDUCE:
        return PX_INIT(Reduce)(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, info, req);
    case T_ALLREDUCE:
        return PX_INIT(Allreduce)(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, info, req);
    case T_ALLGATHER:
        return PX_INIT(Allgather)(sbuf, n, MPI_DOUBLE, rbuf, n, MPI_DOUBLE, MPI_COMM_WORLD,
                                   info, req);
    case T_GATHER:
        return PX_INIT(Gather)(sbuf, n, MPI_DOUBLE, rbuf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD,
                                info, req);
    case T_SCATTER:
        return PX_INIT(Scatter)(sbuf, n, MPI_DOUBLE, rbuf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD,
                                 info, req);
    default:
        return PX_INIT(Alltoall)(sbuf, n, MPI_DOUBLE, rbuf, n, MPI_DOUBLE, MPI_COMM_WORLD,
                                  info, req);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Median over REPS batches of the mean Start+Wait time (us), as rank 0 sees it. */
static double time_algorithm(tcoll_t c, size_t bytes, const char *alg, void *sbuf, void *rbuf)
{
    MPI_Info info;
    MPI_Request req;
    double t[REPS];
    const int iters = bytes <= 4096 ? 200 : (bytes <= 262144 ? 40 : 6);

    MPI_Info_create(&info);
    MPI_Info_set(info, "pnbc_algorithm", alg);
    make_request(c, bytes, sbuf, rbuf, info, &req);
    MPI_Info_free(&info);
    for (int i = 0; i < 3; ++i) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int r = 0; r < REPS; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) {
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t[r] = (MPI_Wtime() - t0) * 1e6 / iters;
    }
    MPI_Request_free(&req);
    qsort(t, REPS, sizeof(double), cmp_double);
    return t[REPS / 2];
}

int main(int argc, char **argv)
{
    int provided, rank, p;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    const char *out = argc > 1 ? argv[1] : "pnbc-tuning.txt";
    const size_t maxbytes = sizes[NSIZES - 1];
    void *sbuf = calloc((size_t) p, maxbytes), *rbuf = calloc((size_t) p, maxbytes);
    FILE *f = NULL;
    if (0 == rank && NULL == (f = fopen(out, "w"))) {
        fprintf(stderr, "pnbc_tune: cannot write %s\n", out);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The rules are for communicators like the one measured: on one node
     * or across nodes (the last field; files of both kinds concatenate). */
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int spans = (node_size < p), any_spans = 0;
    MPI_Allreduce(&spans, &any_spans, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    const char *reach = any_spans ? "nodes" : "node";
    if (0 == rank) {
        fprintf(f, "# pnbc decision rules measured by contrib/tuner on %d ranks (%s)\n"
                   "# <coll> <max_comm_size> <max_bytes> <algorithm> <reach>   "
                   "(median us per start+wait)\n",
                p, any_spans ? "across nodes" : "one node");
    }
    for (int c = 0; c < T_NCOLLS; ++c) {
        char names[MAX_ALGS][64];
        const int nalg = algorithm_names(coll_names[c], names);
        const char *prev = NULL;
        for (int s = 0; s < NSIZES && nalg > 0; ++s) {
            /* allgather, alltoall, gather, scatter sizes are per block:
             * keep the totals sane */
            if (c >= T_ALLGATHER && sizes[s] > maxbytes / 4) {
                break;
            }
            double best = 1e30, us, prev_us = 1e30;
            int winner = 0;
            for (int k = 0; k < nalg; ++k) {
                us = time_algorithm((tcoll_t) c, sizes[s], names[k], sbuf, rbuf);
                MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                if (us < best) {
                    best = us;
                    winner = k;
                }
                if (NULL != prev && 0 == strcmp(prev, names[k])) {
                    prev_us = us;
                }
                if (0 == rank) {
                    printf("%-10s %8zu B  %-22s %10.2f us\n", coll_names[c], sizes[s],
                           names[k], us);
                }
            }
            /* Hysteresis: keep the previous winner unless it is clearly
             * (HYSTERESIS) slower, so noise does not fragment the rules. */
            if (NULL != prev && prev_us <= best * HYSTERESIS) {
                for (int k = 0; k < nalg; ++k) {
                    winner = (0 == strcmp(prev, names[k])) ? k : winner;
                }
                best = prev_us;
            }
            /* A rule ends where the winner changes: close the previous one. */
            if (0 == rank && NULL != prev && 0 != strcmp(prev, names[winner])) {
                fprintf(f, "%s %d %zu %s %s\n", coll_names[c], p, sizes[s - 1], prev, reach);
            }
            prev = names[winner];
            if (0 == rank) {
                fprintf(f, "# %s %zu B: %s %.2f us\n", coll_names[c], sizes[s], prev, best);
            }
        }
        if (0 == rank && NULL != prev) {
            fprintf(f, "%s %d 0 %s %s\n", coll_names[c], p, prev, reach);
        }
    }
    if (0 == rank) {
        fclose(f);
        printf("wrote %s\n", out);
    }
    free(sbuf);
    free(rbuf);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
