/*
 * conf_inter: the persistent collectives on INTERcommunicators (barrier,
 * bcast, gather(v), scatter(v), allgather(v), alltoall(v,w), reduce,
 * allreduce, reduce_scatter, reduce_scatter_block) against independent
 * references.
 *
 * Communicators: MPI_COMM_WORLD split into two groups, joined with
 * MPI_Intercomm_create, in two ways: low half / high half (np=2,3,4,5 ->
 * group sizes (1,1) (1,2) (2,2) (2,3)) and even / odd world ranks with the
 * local order reversed ((1,1) (2,1) (2,2) (3,2)).  Rooted collectives run
 * with the root in either group, at its group's first and last rank.
 *
 * References: every input is a deterministic function of (case, start,
 * sending group, sending rank, destination), so every rank computes what it
 * must receive locally; reductions are folded locally over the REMOTE
 * group's inputs in canonical rank order (non-commutative user op
 * included).  Every start is additionally checked against the BLOCKING
 * intercommunicator collective with the same arguments (served by
 * coll/basic or coll/inter, never by a persistent-collective component).
 * Barrier: no rank may leave before every rank of the remote group entered
 * (CLOCK_MONOTONIC is common to the processes of a node).
 *
 * Each request is started ITERS times with new inputs; receive buffers are
 * poisoned before each start and must hold exactly the expected bytes
 * afterwards (holes of derived datatypes, gaps between blocks and buffers
 * that are not significant at a rank stay poisoned); send buffers must not
 * change.  Covers zero counts on some and on all ranks, non-contiguous
 * datatypes, send and receive types with different layouts but the same
 * signature, per-peer datatypes (alltoallw), and several requests
 * outstanding at once (MPI_Startall).
 *
 * Output: one "FAIL ..." line per failure; rank 0 ends with
 * "conf_inter: N checks, M failures".  Exit status non-zero on failure.
 *
 * Files: conf_inter.c (this one: datatypes, operations, intercommunicators,
 * the barrier test, the driver), conf_inter_cases.c (building the cases),
 * conf_inter_run.c (running and checking them), conf_inter.h.
 */
#define _GNU_SOURCE
#include "conf_inter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PRIME AFF_P     /* user ops work modulo this (the affine maps' prime) */

static int wrank, wsize;

/* ================================================================ utilities */

/* Seed of the data group g's rank i sends to destination `key` (-1: the
 * same data to everyone) at start `it` of case `id`. */
uint64_t data_seed(uint64_t id, int it, int g, int i, int key)
{
    return mix64(mix64(mix64(id * 1000003ULL + (uint64_t) it) ^ (uint64_t) (g * 7919 + i))
                 ^ (uint64_t) (key + 2));
}

/* ================================================================ datatypes */

ty_t TY_INT = { "int", MPI_DATATYPE_NULL, 4, 1, { 0, 0 } };
ty_t TY_2INT = { "2int", MPI_DATATYPE_NULL, 8, 2, { 0, 4 } };   /* predefined pair */
ty_t TY_PAIR = { "pair", MPI_DATATYPE_NULL, 8, 2, { 0, 4 } };   /* contiguous(2) */
ty_t TY_VPAIR = { "vpair", MPI_DATATYPE_NULL, 16, 2, { 0, 8 } }; /* vector, holes */
ty_t TY_LB = { "lbpair", MPI_DATATYPE_NULL, 12, 2, { 4, 8 } };  /* true_lb 4 */
static ty_t *const all_types[] = { &TY_INT, &TY_2INT, &TY_PAIR, &TY_VPAIR, &TY_LB };

static void ty_create_all(void)
{
    MPI_Datatype t0;
    TY_INT.t = MPI_INT;
    TY_2INT.t = MPI_2INT;
    MPI_Type_contiguous(2, MPI_INT, &TY_PAIR.t);
    MPI_Type_vector(2, 1, 2, MPI_INT, &t0);
    type_resized(t0, 0, 16, &TY_VPAIR.t);
    MPI_Type_create_hindexed_block(1, 2, (MPI_Aint[]) { 4 }, MPI_INT, &t0);
    type_resized(t0, 0, 12, &TY_LB.t);
    MPI_Type_commit(&TY_PAIR.t);
    MPI_Type_commit(&TY_VPAIR.t);
    MPI_Type_commit(&TY_LB.t);
}

static void ty_free_all(void)
{
    MPI_Type_free(&TY_PAIR.t);
    MPI_Type_free(&TY_VPAIR.t);
    MPI_Type_free(&TY_LB.t);
}

static const ty_t *ty_of(MPI_Datatype t)
{
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i) {
        if (all_types[i]->t == t) {
            return all_types[i];
        }
    }
    return NULL;
}

/* Write `cnt` elements of `ty` at buf from the int stream v (type-map order). */
void put_stream(char *buf, const ty_t *ty, int cnt, const int *v)
{
    for (int e = 0; e < cnt; ++e) {
        for (int f = 0; f < ty->nf; ++f) {
            memcpy(buf + (size_t) e * ty->ext + ty->off[f], &v[e * ty->nf + f], sizeof(int));
        }
    }
}

static void get_stream(const char *buf, const ty_t *ty, int cnt, int *v)
{
    for (int e = 0; e < cnt; ++e) {
        for (int f = 0; f < ty->nf; ++f) {
            memcpy(&v[e * ty->nf + f], buf + (size_t) e * ty->ext + ty->off[f], sizeof(int));
        }
    }
}

/* ================================================================ operations */

const char *const opk_names[] = { "none", "sum", "maxloc", "affine", "usum" };
static MPI_Op op_affine, op_usum;

/* One element (record of nf ints): inout = in (op) inout. */
void rec_op(redop_t k, const int *in, int *io)
{
    switch (k) {
    case OPK_SUM:
        io[0] += in[0];
        break;
    case OPK_MAXLOC:
        if (in[0] > io[0] || (in[0] == io[0] && in[1] < io[1])) {
            io[0] = in[0];
            io[1] = in[1];
        }
        break;
    case OPK_AFFINE: {
        /* x -> a x + b; (in o io)(t) = in(io(t)): a = a_in a_io, b = a_in b_io + b_in */
        long a, b;
        affine_compose(in[0], in[1], io[0], io[1], &a, &b);
        io[0] = (int) a;
        io[1] = (int) b;
        break;
    }
    case OPK_USUM:
        io[0] = (io[0] + in[0]) % PRIME;
        io[1] = (io[1] + in[1]) % PRIME;
        break;
    case OPK_NONE:
        break;
    }
}

/* The MPI callback of both user ops: the layout comes from the datatype,
 * which must be one of the test's pair types. */
static void user_fn(redop_t k, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const ty_t *ty = ty_of(*dt);
    if (NULL == ty || 2 != ty->nf) {
        fprintf(stderr, "conf_inter: user op called with an unknown datatype\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
        return;
    }
    for (int e = 0; e < *len; ++e) {
        int x[2], y[2];
        get_stream((char *) in + (size_t) e * ty->ext, ty, 1, x);
        get_stream((char *) inout + (size_t) e * ty->ext, ty, 1, y);
        rec_op(k, x, y);
        put_stream((char *) inout + (size_t) e * ty->ext, ty, 1, y);
    }
}

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_fn(OPK_AFFINE, in, inout, len, dt);
}

static void usum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_fn(OPK_USUM, in, inout, len, dt);
}

MPI_Op op_handle(redop_t k)
{
    switch (k) {
    case OPK_SUM: return MPI_SUM;
    case OPK_MAXLOC: return MPI_MAXLOC;
    case OPK_AFFINE: return op_affine;
    case OPK_USUM: return op_usum;
    default: return MPI_OP_NULL;
    }
}

/* n ints of data from `seed`, in the value range the op wants. */
void gen_ints(int *v, int n, uint64_t seed, redop_t k)
{
    for (int i = 0; i < n; ++i) {
        uint64_t r = mix64(seed + (uint64_t) i);
        switch (k) {
        case OPK_SUM: v[i] = (int) (r % 1000); break;
        case OPK_MAXLOC: v[i] = (int) (r % (i % 2 ? 100 : 5)); break;   /* value, index */
        case OPK_AFFINE: v[i] = (i % 2) ? (int) (r % PRIME) : 1 + (int) (r % (PRIME - 1)); break;
        case OPK_USUM: v[i] = (int) (r % PRIME); break;
        default: v[i] = (int) (r & 0x7fffffff); break;
        }
    }
}

/* ================================================================ intercommunicators */

static int split_color(int how, int w)
{
    return how ? w % 2 : (w >= wsize / 2);
}

static void ictx_create(ictx_t *ic, int how)
{
    MPI_Comm local;
    int color = split_color(how, wrank), remote_leader = -1;

    /* how = 1: reversed local order, so local rank 0 is the highest world rank */
    MPI_Comm_split(MPI_COMM_WORLD, color, how ? wsize - wrank : wrank, &local);
    for (int w = 0; w < wsize; ++w) {
        int wl = how ? wsize - 1 - w : w;   /* the remote group's local rank 0 */
        if (split_color(how, wl) != color) {
            remote_leader = wl;
            break;
        }
    }
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 77 + how, &ic->inter);
    MPI_Comm_free(&local);
    ic->name = how ? "even/odd-reversed" : "low/high";
    ic->gid = color;
    MPI_Comm_rank(ic->inter, &ic->lrank);
    MPI_Comm_size(ic->inter, &ic->lsize);
    MPI_Comm_remote_size(ic->inter, &ic->rsize);
    ic->gsize[color] = ic->lsize;
    ic->gsize[1 - color] = ic->rsize;
}

/* ================================================================ barrier */

static void test_barrier(const ictx_t *ic)
{
    tcase_t t = { .ic = ic };
    MPI_Request req;
    double *enter = xcalloc((size_t) wsize, sizeof(double));
    int *gids = xcalloc((size_t) wsize, sizeof(int));

    snprintf(t.desc, sizeof t.desc, "barrier %s (%d,%d)", ic->name, ic->gsize[0], ic->gsize[1]);
    watchdog_arm(CASE_TIMEOUT, "%s", t.desc);
    MPIX_Barrier_init(ic->inter, MPI_INFO_NULL, &req);
    MPI_Allgather(&ic->gid, 1, MPI_INT, gids, 1, MPI_INT, MPI_COMM_WORLD);
    for (int it = 0; it < ITERS; ++it) {
        const int late = (int) (mix64((uint64_t) it + 99) % (uint64_t) wsize);
        if (wrank == late) {
            usleep(30000);
        }
        double t_enter = now_sec();
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double t_exit = now_sec();
        MPI_Allgather(&t_enter, 1, MPI_DOUBLE, enter, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        n_checks++;
        for (int w = 0; w < wsize; ++w) {
            if (gids[w] != ic->gid && enter[w] > t_exit) {
                fail_line(t.desc, it, "left at %.6f before world rank %d (remote group) entered at %.6f",
                          t_exit, w, enter[w]);
                break;
            }
        }
    }
    MPI_Request_free(&req);
    watchdog_disarm();
    free(enter);
    free(gids);
}

/* ================================================================ driver */

static void test_intercomm(const ictx_t *ic)
{
    const int ks[] = { 0, 2, 6 };
    int tp = 0;

    test_barrier(ic);

    /* rooted data movement: root in each group, at its first and last rank */
    for (int rg = 0; rg < 2; ++rg) {
        for (int rr = 0; rr < ic->gsize[rg]; rr += (ic->gsize[rg] > 1 ? ic->gsize[rg] - 1 : 1)) {
            const kind_t kinds[] = { K_BCAST, K_GATHER, K_SCATTER };
            for (size_t c = 0; c < 3; ++c) {
                for (size_t i = 0; i < 3; ++i) {
                    run_case(rooted(kinds[c], ic, rg, rr, ks[i], tp++));
                }
            }
            run_case(rooted(K_GATHERV, ic, rg, rr, -1, tp++));
            run_case(rooted(K_GATHERV, ic, rg, rr, -1, tp++));
            run_case(rooted(K_SCATTERV, ic, rg, rr, -1, tp++));
            run_case(rooted(K_SCATTERV, ic, rg, rr, -1, tp++));
        }
    }

    /* all-to-all data movement */
    for (size_t i = 0; i < 3; ++i) {
        run_case(all_to(K_ALLGATHER, ic, ks[i], tp++));
        run_case(all_to(K_ALLTOALL, ic, ks[i], tp++));
    }
    for (int rep = 0; rep < NPAIRS; ++rep) {
        run_case(all_to(K_ALLGATHERV, ic, -1, tp++));
        run_case(all_to(K_ALLTOALLV, ic, -1, tp++));
        run_case(all_to(K_ALLTOALLW, ic, -1, tp++));
    }

    /* reductions: predefined ops on predefined types, user ops (one
     * non-commutative) on derived types of every layout */
    const struct { redop_t op; const ty_t *ty; int count; } reds[] = {
        { OPK_SUM, &TY_INT, 5 },     { OPK_SUM, &TY_INT, 0 },    { OPK_MAXLOC, &TY_2INT, 3 },
        { OPK_AFFINE, &TY_PAIR, 3 }, { OPK_AFFINE, &TY_VPAIR, 2 }, { OPK_AFFINE, &TY_LB, 4 },
        { OPK_USUM, &TY_VPAIR, 3 },  { OPK_USUM, &TY_LB, 1 },
    };
    const int nreds = (int) (sizeof reds / sizeof reds[0]);
    for (int r = 0; r < nreds; ++r) {
        for (int rg = 0; rg < 2; ++rg) {
            const int rr = (r % 2) ? ic->gsize[rg] - 1 : 0;
            run_case(reduction(K_REDUCE, ic, reds[r].op, reds[r].ty, reds[r].count, rg, rr));
        }
        run_case(reduction(K_ALLREDUCE, ic, reds[r].op, reds[r].ty, reds[r].count, 0, 0));
        run_case(reduction(K_RS, ic, reds[r].op, reds[r].ty, reds[r].count + 2, 0, 0));
        run_case(reduction(K_RS, ic, reds[r].op, reds[r].ty, reds[r].count ? 1 : 0, 0, 0));
        run_case(reduction(K_RSB, ic, reds[r].op, reds[r].ty, reds[r].count ? 1 : 0, 0, 0));
    }

    /* several requests outstanding at once, started together */
    tcase_t *ts[] = {
        reduction(K_ALLREDUCE, ic, OPK_AFFINE, &TY_VPAIR, 3, 0, 0),
        all_to(K_ALLTOALLV, ic, -1, tp++),
        rooted(K_BCAST, ic, 1, 0, 6, tp++),
        rooted(K_GATHERV, ic, 0, ic->gsize[0] - 1, -1, tp++),
        reduction(K_RS, ic, OPK_AFFINE, &TY_LB, 5, 0, 0),
        reduction(K_REDUCE, ic, OPK_SUM, &TY_INT, 4, 1, ic->gsize[1] - 1),
        all_to(K_ALLGATHER, ic, 2, tp++),
    };
    run_together(ts, (int) (sizeof ts / sizeof ts[0]));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "conf_inter", &wrank, &wsize);

    if (wsize < 2 || 2 * MAXB < wsize) {
        if (0 == wrank) {
            printf("conf_inter: 0 checks, 0 failures (needs 2..%d processes; skipped)\n",
                   2 * MAXB);
        }
        MPI_Finalize();
        return 0;
    }
    ty_create_all();
    MPI_Op_create(affine_fn, 0, &op_affine);
    MPI_Op_create(usum_fn, 1, &op_usum);

    for (int how = 0; how < 2; ++how) {
        ictx_t ic;
        if (1 == how && 2 == wsize) {
            break;      /* the same (1,1) intercommunicator again */
        }
        ictx_create(&ic, how);
        MPI_Comm_set_errhandler(ic.inter, MPI_ERRORS_RETURN);
        test_intercomm(&ic);
        MPI_Comm_free(&ic.inter);
    }

    MPI_Op_free(&op_affine);
    MPI_Op_free(&op_usum);
    ty_free_all();
    totals_t sum = totals_sum();
    if (0 == wrank) {
        printf("conf_inter: %ld checks, %ld failures\n", sum.checks, sum.failed);
    }
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
