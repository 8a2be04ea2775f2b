/*
 * shm_test: stress test of pnbc's shared-memory transport
 * (coll_pnbc_transport_shm.c).  Any persistent-collective component must
 * pass it; with pnbc, run at np >= 2 on one node so the slots are used.
 *
 *   shm_test [CYCLES] [MODE]
 *     CYCLES  start+wait cycles of part B (default 100000)
 *     MODE    normal    (default)
 *             unfreed   leave some requests unfreed at MPI_Finalize: their
 *                       files must still be gone afterwards
 *             fallback  odd ranks cannot create files (RLIMIT_FSIZE) and
 *                       reach their *_init calls late: the transport must
 *                       fall back to pml on both sides
 *
 * A. Many requests outstanding: allreduce and bcast of sizes around the
 *    slot limit (16 KiB by default), derived non-contiguous datatypes,
 *    a bcast whose root sends a strided vector that the others receive
 *    contiguously (same signature, different layouts), barriers, requests
 *    on a split communicator, a neighbour alltoallv with several edges
 *    between the same ranks (small and large messages between one pair in
 *    one round); started in a rank-dependent order (single
 *    MPI_Start and permuted MPI_Startall), completed in another order.
 * B. CYCLES start+wait cycles of a small allreduce and of a bcast whose
 *    root rotates, each result checked; every 64th cycle a bcast is started
 *    several times in a row so the root runs ahead of its receivers.
 * D. Persistent gathers of 80 KB blocks, 50 cycles per root: a root
 *    invites its senders to write into its buffer (process_vm_writev),
 *    and senders start the next cycle at once; every 4th cycle the root
 *    holds its result 2 ms before checking it, so a sender writing before
 *    the root's next start would be seen.
 * C. After MPI_Finalize each rank checks that its pnbc directory
 *    (/dev/shm/pnbc.<node>.<uid>.<jobid>.<vpid>) is gone, and rank 0 lists
 *    any pnbc entry of this job still present.
 *
 * Prints one line per failure and, on rank 0, "shm_test: N checks, M failures".
 */
#include "common.h"
#include "shm_dirs.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int wrank, wsize;
static long nchecks, nfail;

#define FAILF(...) do { nfail++; printf("FAIL rank %d: ", wrank); printf(__VA_ARGS__); \
                        printf("\n"); fflush(stdout); } while (0)

/* Deterministic per (rank, iteration) shuffle. */
static void permute(int *v, int n, uint64_t seed)
{
    for (int i = 0; i < n; ++i) {
        v[i] = i;
    }
    for (int i = n - 1; i > 0; --i) {
        int j = (int) (mix64(seed + (uint64_t) i) % (uint64_t) (i + 1));
        int t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* ------------------------------------------------------------------ */
/* A: many requests outstanding                                       */
/* ------------------------------------------------------------------ */

#define MAXREQ 64

/* Bcast with different layouts: the root sends `n` doubles as a strided
 * vector (stride 3), the others receive them contiguously. */
typedef struct {
    MPI_Comm comm;
    int root, rank, n;
    MPI_Datatype vec;
    double *buf;
    MPI_Request req;
} mixbcast_t;

static void mix_init(mixbcast_t *m, MPI_Comm comm, int root, int n)
{
    m->comm = comm;
    m->root = root;
    m->n = n;
    MPI_Comm_rank(comm, &m->rank);
    m->buf = malloc(sizeof(double) * 3 * (size_t) n);
    if (m->rank == root) {
        MPI_Type_vector(n, 1, 3, MPI_DOUBLE, &m->vec);
        MPI_Type_commit(&m->vec);
        MPIX_Bcast_init(m->buf, 1, m->vec, root, comm, MPI_INFO_NULL, &m->req);
    } else {
        m->vec = MPI_DATATYPE_NULL;
        MPIX_Bcast_init(m->buf, n, MPI_DOUBLE, root, comm, MPI_INFO_NULL, &m->req);
    }
}

static void mix_prepare(mixbcast_t *m, int it)
{
    for (int i = 0; i < 3 * m->n; ++i) {
        m->buf[i] = (m->rank == m->root && i % 3 == 0) ? (double) (it * 100003 + i / 3) : -1.0;
    }
}

static void mix_check(mixbcast_t *m, int it)
{
    nchecks++;
    for (int i = 0; i < m->n; ++i) {
        double got = (m->rank == m->root) ? m->buf[3 * i] : m->buf[i];
        if (got != (double) (it * 100003 + i)) {
            FAILF("mixed-layout bcast n=%d root=%d it=%d: [%d] = %g", m->n, m->root, it, i, got);
            return;
        }
    }
    if (m->rank == m->root) {
        for (int i = 0; i < 3 * m->n; ++i) {
            if (i % 3 != 0 && m->buf[i] != -1.0) {
                FAILF("mixed-layout bcast: root's gap %d written", i);
                return;
            }
        }
    }
}

/* Neighbour alltoallv on a graph where every rank has NDUP edges to the
 * next rank and from the previous one: several messages between the
 * same pair in one round, small ones (shm) around a large one (pml). */
#define NDUP 3
typedef struct {
    MPI_Comm graph;
    int counts[NDUP], displs[NDUP], total, src;
    int *sbuf, *rbuf;
    MPI_Request req;
} dupgraph_t;

static void dup_init(dupgraph_t *g)
{
    int dst = (wrank + 1) % wsize, srcs[NDUP], dsts[NDUP];
    const int counts[NDUP] = { 2, 8192, 3 };     /* 8 B, 32 KiB, 12 B */
    g->src = (wrank + wsize - 1) % wsize;
    g->total = 0;
    for (int k = 0; k < NDUP; ++k) {
        srcs[k] = g->src;
        dsts[k] = dst;
        g->counts[k] = counts[k];
        g->displs[k] = g->total;
        g->total += counts[k];
    }
    /* weights, not MPI_UNWEIGHTED: gcc takes that sentinel for an array */
    const int w[NDUP] = { 1, 1, 1 };
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, NDUP, srcs, w, NDUP, dsts, w,
                                   MPI_INFO_NULL, 0, &g->graph);
    g->sbuf = malloc(sizeof(int) * (size_t) g->total);
    g->rbuf = malloc(sizeof(int) * (size_t) g->total);
    MPIX_Neighbor_alltoallv_init(g->sbuf, g->counts, g->displs, MPI_INT, g->rbuf, g->counts,
                                 g->displs, MPI_INT, g->graph, MPI_INFO_NULL, &g->req);
}

static int dup_value(int rank, int k, int i, int it)
{
    return (int) (mix64((uint64_t) rank * 1000003u + (uint64_t) k * 7919u + (uint64_t) it) %
                  100000u) + i;
}

static void dup_prepare(dupgraph_t *g, int it)
{
    for (int k = 0; k < NDUP; ++k) {
        for (int i = 0; i < g->counts[k]; ++i) {
            g->sbuf[g->displs[k] + i] = dup_value(wrank, k, i, it);
            g->rbuf[g->displs[k] + i] = -1;
        }
    }
}

static void dup_check(dupgraph_t *g, int it)
{
    nchecks++;
    for (int k = 0; k < NDUP; ++k) {
        for (int i = 0; i < g->counts[k]; ++i) {
            if (g->rbuf[g->displs[k] + i] != dup_value(g->src, k, i, it)) {
                FAILF("dup-edge neighbor_alltoallv it=%d: block %d [%d] = %d, expected %d", it,
                      k, i, g->rbuf[g->displs[k] + i], dup_value(g->src, k, i, it));
                return;
            }
        }
    }
}

static void dup_free(dupgraph_t *g)
{
    MPI_Request_free(&g->req);
    MPI_Comm_free(&g->graph);
    free(g->sbuf);
    free(g->rbuf);
}

static void part_a(int rounds, int late)
{
    static preq_t p[MAXREQ];
    mixbcast_t mix[4];
    int np = 0, nmix = 0;
    char msg[256];
    MPI_Comm half;

    dupgraph_t dup;

    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half);
    if (late) {
        usleep(200000);     /* the others start before our files exist */
    }
    dup_init(&dup);
    /* Counts in bytes of MPI_INT: 4, 28, 16380, 16384 (the default slot
     * limit), 16388 (just over it), 80000. */
    const int icounts[] = { 1, 7, 4095, 4096, 4097, 20000 };
    for (size_t i = 0; i < sizeof(icounts) / sizeof(icounts[0]); ++i) {
        preq_setup(&p[np++], C_ALLREDUCE, MPI_COMM_WORLD, &T_INT, OP_SUM, MPI_SUM, icounts[i],
                   0, 0, 0, 100 + i);
        preq_setup(&p[np++], C_BCAST, MPI_COMM_WORLD, &T_INT, OP_NONE, MPI_OP_NULL, icounts[i],
                   (int) i % wsize, 0, 0, 200 + i);
        preq_setup(&p[np++], C_ALLREDUCE, half, &T_INT, OP_SUM, MPI_SUM, icounts[i],
                   0, (int) i % 2, 0, 300 + i);
    }
    const dtype_t *derived[] = { &T_VECD, &T_STRUCTH, &T_MAT2V };
    for (size_t i = 0; i < 3; ++i) {
        preq_setup(&p[np++], C_BCAST, MPI_COMM_WORLD, derived[i], OP_NONE, MPI_OP_NULL, 5,
                   wsize - 1, 0, 0, 400 + i);
    }
    /* non-contiguous reductions (user ops), one of them through a tree */
    preq_setup(&p[np++], C_ALLREDUCE, MPI_COMM_WORLD, &T_VECD, OP_U_DSUM,
               op_get(OP_U_DSUM, &T_VECD), 9, 0, 0, 0, 500);
    preq_setup(&p[np++], C_REDUCE, MPI_COMM_WORLD, &T_MAT2V, OP_U_MATMUL,
               op_get(OP_U_MATMUL, &T_MAT2V), 600, 1 % wsize, 0, 0, 600);
    preq_setup(&p[np++], C_ALLREDUCE, MPI_COMM_WORLD, &T_MAT2H, OP_U_MATMUL,
               op_get(OP_U_MATMUL, &T_MAT2H), 40, 0, 0, 0, 601);
    preq_setup(&p[np++], C_ALLREDUCE, MPI_COMM_WORLD, &T_MAT2C, OP_U_MATMUL,
               op_get(OP_U_MATMUL, &T_MAT2C), 3, 0, 0, 0, 700);
    preq_setup(&p[np++], C_BARRIER, MPI_COMM_WORLD, &T_INT, OP_NONE, MPI_OP_NULL, 0,
               0, 0, 0, 800);
    preq_setup(&p[np++], C_BARRIER, half, &T_INT, OP_NONE, MPI_OP_NULL, 0, 0, 0, 0, 801);
    for (int i = 0; i < np; ++i) {
        if (MPI_SUCCESS != preq_init(&p[i], MPI_INFO_NULL)) {
            FAILF("init of request %d (%s) failed", i, coll_name(p[i].coll));
        }
    }
    mix_init(&mix[nmix++], MPI_COMM_WORLD, 0, 3);
    mix_init(&mix[nmix++], MPI_COMM_WORLD, wsize - 1, 1000);
    mix_init(&mix[nmix++], MPI_COMM_WORLD, wsize / 2, 5000);  /* 40000 B: pml */
    mix_init(&mix[nmix++], half, 0, 2048);                    /* 16384 B: shm */

    const int ntot = np + nmix + 1;
    MPI_Request all[MAXREQ + 4], perm_reqs[MAXREQ + 4];
    int order[MAXREQ + 4];
    for (int r = 0; r < rounds; ++r) {
        watchdog_note("shm_test part A round %d", r);
        for (int i = 0; i < np; ++i) {
            preq_prepare(&p[i], r);
            all[i] = p[i].req;
        }
        for (int i = 0; i < nmix; ++i) {
            mix_prepare(&mix[i], r);
            all[np + i] = mix[i].req;
        }
        dup_prepare(&dup, r);
        all[np + nmix] = dup.req;
        permute(order, ntot, mix64((uint64_t) wrank * 7919 + (uint64_t) r));
        if (r % 2 == 0) {
            for (int i = 0; i < ntot; ++i) {
                MPI_Start(&all[order[i]]);
            }
        } else {
            /* Startall in two permuted batches */
            for (int i = 0; i < ntot; ++i) {
                perm_reqs[i] = all[order[i]];
            }
            MPI_Startall(ntot / 2, perm_reqs);
            MPI_Startall(ntot - ntot / 2, perm_reqs + ntot / 2);
        }
        /* complete in another order: one by one from the end of a new
         * permutation, or Waitall */
        if (r % 3 == 2) {
            MPI_Waitall(ntot, all, MPI_STATUSES_IGNORE);
        } else {
            permute(order, ntot, mix64((uint64_t) wrank * 104729 + (uint64_t) r + 1));
            for (int i = ntot - 1; i >= 0; --i) {
                MPI_Wait(&all[order[i]], MPI_STATUS_IGNORE);
            }
        }
        for (int i = 0; i < np; ++i) {
            nchecks++;
            if (0 != preq_check(&p[i], r, msg, sizeof(msg))) {
                FAILF("A round %d: %s count %d %s: %s", r, coll_name(p[i].coll), p[i].count,
                      p[i].dt.name, msg);
            }
        }
        for (int i = 0; i < nmix; ++i) {
            mix_check(&mix[i], r);
        }
        dup_check(&dup, r);
    }
    for (int i = 0; i < np; ++i) {
        preq_release(&p[i]);
    }
    for (int i = 0; i < nmix; ++i) {
        MPI_Request_free(&mix[i].req);
        /* freed only now: libnbc's persistent requests do not keep their
         * datatypes (lifecycle_misuse.c tests freeing them early) */
        if (MPI_DATATYPE_NULL != mix[i].vec) {
            MPI_Type_free(&mix[i].vec);
        }
        free(mix[i].buf);
    }
    dup_free(&dup);
    MPI_Comm_free(&half);
}

/* ------------------------------------------------------------------ */
/* B: many cycles of small collectives                                */
/* ------------------------------------------------------------------ */

static void part_b(long cycles)
{
    int in[2], out[2], bbuf[3];
    MPI_Request ar, *bc = malloc(sizeof(MPI_Request) * (size_t) wsize);
    long bad = 0;

    MPIX_Allreduce_init(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar);
    for (int root = 0; root < wsize; ++root) {
        MPIX_Bcast_init(bbuf, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bc[root]);
    }
    for (long c = 0; c < cycles; ++c) {
        const int it = (int) (c & 0x3fffffff);
        in[0] = wrank + it;
        in[1] = wrank * it;
        out[0] = out[1] = -7;
        MPI_Start(&ar);
        MPI_Wait(&ar, MPI_STATUS_IGNORE);
        const long n = wsize;
        const int e0 = (int) (n * (n - 1) / 2 + n * it), e1 = (int) ((n * (n - 1) / 2) * it);
        if (out[0] != e0 || out[1] != e1) {
            if (bad++ < 10) {
                FAILF("B cycle %ld allreduce: got %d %d, expected %d %d", c, out[0], out[1],
                      e0, e1);
            }
        }
        /* bcast: every 64th cycle the same root 4 times in a row */
        const int reps = (c % 64 == 0) ? 4 : 1;
        const int root = (int) (c % wsize);
        for (int k = 0; k < reps; ++k) {
            for (int i = 0; i < 3; ++i) {
                bbuf[i] = (wrank == root) ? it * 3 + i + k : -1;
            }
            MPI_Start(&bc[root]);
            MPI_Wait(&bc[root], MPI_STATUS_IGNORE);
            for (int i = 0; i < 3; ++i) {
                if (bbuf[i] != it * 3 + i + k) {
                    if (bad++ < 10) {
                        FAILF("B cycle %ld bcast root %d rep %d: [%d] = %d, expected %d", c,
                              root, k, i, bbuf[i], it * 3 + i + k);
                    }
                    break;
                }
            }
        }
        nchecks += 1 + reps;
    }
    nfail += (bad > 10) ? bad - 10 : 0;
    MPI_Request_free(&ar);
    for (int root = 0; root < wsize; ++root) {
        MPI_Request_free(&bc[root]);
    }
    free(bc);
}

/* ------------------------------------------------------------------ */
/* D: senders writing into the root's buffer                          */
/* ------------------------------------------------------------------ */

static int gather_value(int rank, int i, int it)
{
    return rank * 1000003 + i * 7 + it;
}

static void part_d(int cycles)
{
    enum { N = 20000 };     /* 80 KB: above the gather's shm box */
    int *sbuf = malloc(sizeof(int) * N), *rbuf = malloc(sizeof(int) * N * (size_t) wsize);
    MPI_Request *g = malloc(sizeof(MPI_Request) * (size_t) wsize);
    long bad = 0;

    for (int root = 0; root < wsize; ++root) {
        MPIX_Gather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &g[root]);
    }
    for (int c = 0; c < cycles; ++c) {
        const int root = (c / 50) % wsize;
        for (int i = 0; i < N; ++i) {
            sbuf[i] = gather_value(wrank, i, c);
        }
        MPI_Start(&g[root]);
        MPI_Wait(&g[root], MPI_STATUS_IGNORE);
        if (wrank != root) {
            continue;
        }
        if (c % 4 == 0) {
            usleep(2000);   /* the senders have started the next cycle */
        }
        for (int p = 0; p < wsize; ++p) {
            for (int i = 0; i < N; ++i) {
                if (rbuf[(size_t) p * N + i] != gather_value(p, i, c)) {
                    if (bad++ < 10) {
                        FAILF("D cycle %d root %d: block %d [%d] = %d, expected %d", c, root, p,
                              i, rbuf[(size_t) p * N + i], gather_value(p, i, c));
                    }
                    break;
                }
            }
        }
        nchecks++;
    }
    nfail += (bad > 10) ? bad - 10 : 0;
    for (int root = 0; root < wsize; ++root) {
        MPI_Request_free(&g[root]);
    }
    free(g);
    free(rbuf);
    free(sbuf);
}

/* ------------------------------------------------------------------ */
/* C: no files left                                                   */
/* ------------------------------------------------------------------ */

/* The transport's directory of a process is
 * pnbc.<node>.<uid>.<jobid hex>.<vpid>.<job instance key> (shm_dirs.h
 * finds the token of this process's or this job's).  Count (and with
 * `print`, list) the /dev/shm entries whose name holds `token`. */
static int leftovers(const char *token, int print)
{
    int n = 0;
    DIR *d;
    struct dirent *e;

    if (NULL == token || NULL == (d = opendir("/dev/shm"))) {
        return 0;
    }
    while (NULL != (e = readdir(d))) {
        if (0 == strncmp(e->d_name, "pnbc.", 5) && NULL != strstr(e->d_name, token)) {
            n++;
            if (print) {
                printf("shm_test: left behind: /dev/shm/%s\n", e->d_name);
            }
        }
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    long cycles = (argc > 1) ? atol(argv[1]) : 100000;
    const char *mode = (argc > 2) ? argv[2] : "normal";
    const int unfreed = 0 == strcmp(mode, "unfreed");
    const int fallback = 0 == strcmp(mode, "fallback");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    watchdog_init("shm_test", wrank);
    types_create();
    ops_create();

    if (fallback && wrank % 2 == 1) {
        /* no file can grow beyond 64 bytes: the receiver's segment
         * cannot be built, its empty fallback marker can */
        struct rlimit rl = { 64, 64 };
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &rl);
    }

    watchdog_arm(240, "shm_test part A");
    /* fallback: the ranks without files also init late, so the others
     * find no file at their first post and must wait for the marker */
    part_a(30, fallback && wrank % 2 == 1);
    watchdog_arm(600, "shm_test part B (%ld cycles)", cycles);
    part_b(cycles);
    watchdog_arm(240, "shm_test part D");
    part_d(cycles < 400 ? (int) cycles : 400);
    watchdog_disarm();

    MPI_Request keep[3];
    int kin = wrank, kout;
    if (unfreed) {
        /* started once, then left inactive and unfreed */
        MPIX_Allreduce_init(&kin, &kout, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &keep[0]);
        MPIX_Bcast_init(&kin, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &keep[1]);
        MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &keep[2]);
        MPI_Startall(3, keep);
        MPI_Waitall(3, keep, MPI_STATUSES_IGNORE);
    }

    /* Evidence that part C checks something: with pnbc's shm transport
     * on, each rank that received through it has its directory now. */
    char own[96], job[96];
    const int has_dir = shm_own_token(1, own, sizeof own);
    const int has_job = shm_own_token(0, job, sizeof job);
    long totals[3], mine[3] = { nchecks, nfail, has_dir ? leftovers(own, 0) > 0 : 0 };
    MPI_Reduce(mine, totals, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    ops_free();
    types_free();
    watchdog_arm(60, "shm_test: MPI_Finalize");
    MPI_Finalize();
    watchdog_disarm();

    /* C: this rank's directory must be gone */
    long left = has_dir ? leftovers(own, 1) : 0;
    if (left > 0) {
        printf("FAIL rank %d: %ld pnbc entries left after MPI_Finalize\n", wrank, left);
    }
    if (0 == wrank) {
        printf("shm_test: %ld of %d ranks had a pnbc shm directory before MPI_Finalize\n",
               totals[2], wsize);
        usleep(300000);     /* the others finalize too */
        if (has_job) {
            (void) leftovers(job, 1);   /* the others' too, for the log */
        }
        totals[1] += left;
        printf("shm_test (%s, np=%d): %ld checks, %ld failures\n", mode, wsize, totals[0],
               totals[1]);
    }
    return (0 == wrank ? totals[1] : nfail + left) > 0 ? 1 : 0;
}
