/*
 * Copyright (c) 2026 The pnbc developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * jacobi_persistent: an iterative solver whose every iteration uses MPI-4
 * persistent collectives.
 *
 * Problem: the variable-coefficient Poisson equation
 *     -div(k(x,y) grad u) = f   on the unit square,  u = 0 on the boundary,
 * discretised with the 5-point finite-volume stencil on an n x n grid of
 * interior unknowns.  The grid rows are distributed in blocks over the ranks
 * (one ghost row above and below each block, one zero column left and right).
 *
 * Solver: Jacobi-preconditioned pipelined conjugate gradients (the
 * "pipelined CG" recurrences of Ghysels and Vanroose, with M = diag(A)).
 * Pipelined CG needs ONE global reduction per iteration (three dot products
 * packed into one allreduce) and that reduction is independent of the
 * matrix-vector product of the same iteration, so it can be in flight while
 * the halo exchange and the matrix-vector product run:
 *
 *     local dots; m = M^-1 w
 *     MPI_Start(allreduce(dots)); MPI_Startall(halo exchange of m, 4 p2p)
 *     MPI_Waitall(halo); n = A m          <- overlaps the allreduce
 *     MPI_Wait(allreduce)
 *     root decides (converged? iteration budget?) -> control word
 *     MPI_Start(bcast(control word)); MPI_Wait(bcast)
 *     vector updates
 *
 * The allreduce and the bcast are created once with MPIX_Allreduce_init /
 * MPIX_Bcast_init (MPI_Allreduce_init / MPI_Bcast_init with an MPI-4
 * library) and restarted every iteration of every solve.
 *
 * The same solve is also run with blocking MPI_Allreduce / MPI_Bcast (same
 * arithmetic, same order; the halo exchange before the allreduce), the two
 * solutions are compared, and both are timed (median over several solves,
 * interleaved), in us per iteration:
 *   us_per_iter_*  the whole iteration (slowest rank);
 *   us_comm_*      time inside the calls of the allreduce and the bcast
 *                  (persistent: MPI_Start + MPI_Wait, i.e. what is not hidden
 *                  behind the matvec; blocking: MPI_Allreduce + MPI_Bcast),
 *                  mean over the ranks;
 *   us_halo_*      time inside the halo exchange's MPI_Startall + MPI_Waitall,
 *                  mean over the ranks (a late neighbour is waited for here,
 *                  in both modes, since the halo comes first in both).
 * The RESULT line: label np n iters resid checksum agree bitwise converged
 * us_per_iter_persistent us_per_iter_blocking reps us_comm_persistent
 * us_comm_blocking us_halo_persistent us_halo_blocking (key=value, in order).
 *
 * Usage: jacobi_persistent [-n N] [-t TOL] [-r REPS] [-l LABEL] [-q]
 *   -n N      interior grid points per direction (default 32)
 *   -t TOL    relative residual tolerance (default 1e-8)
 *   -r REPS   timed solves per mode (default 50)
 *   -l LABEL  label printed in the RESULT line (e.g. the coll component)
 *   -q        print only the RESULT line
 * Exit status: 0 if the persistent and blocking runs agree and the solver
 * converged, 1 otherwise.
 */

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
/* MPI-4 libraries; Open MPI 5 has the MPI-4 names though its MPI_VERSION is 3 */
#define PX_Allreduce_init MPI_Allreduce_init
#define PX_Bcast_init MPI_Bcast_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PX_Allreduce_init MPIX_Allreduce_init
#define PX_Bcast_init MPIX_Bcast_init
#else
#error "this MPI library has no persistent collectives (MPI-4 or Open MPI's pcollreq extension)"
#endif

enum { CTL_CONTINUE = 0, CTL_CONVERGED = 1, CTL_BUDGET = 2 };
enum { MODE_PERSISTENT = 0, MODE_BLOCKING = 1 };

/* One rank's share of the problem. Vectors are (nloc + 2) x (n + 2) arrays:
 * row 0 and row nloc+1 are ghost rows, column 0 and n+1 are always zero. */
typedef struct {
    int n, nloc, row0;           /* global size, local rows, first global row */
    int ld;                      /* leading dimension = n + 2 */
    int up, down;                /* neighbour ranks or MPI_PROC_NULL */
    MPI_Comm comm;
    int rank, size;
    double *diag, *inv_diag;     /* operator diagonal and its inverse */
    double *cw, *ce, *cn, *cs;   /* couplings to the west/east/north/south */
    double *b;                   /* right-hand side */
    double bnorm;                /* ||b||_2 (global) */
} problem_t;

typedef struct {
    /* solver vectors, all (nloc+2) x ld */
    double *x, *r, *u, *w, *m, *nv, *z, *q, *s, *p;
    /* persistent requests: [0] allreduce, [1..4] halo of m, then bcast */
    MPI_Request req[5];
    MPI_Request bcast;
    double dots_local[3], dots_global[3];
    int ctl[2];                  /* [0] action, [1] iteration number */
    /* seconds this rank spent, during the last solve's iterations, inside
     * the calls of the allreduce and the bcast (MPI_Start + MPI_Wait, or
     * MPI_Allreduce + MPI_Bcast), and inside those of the halo exchange
     * (MPI_Startall + MPI_Waitall): time in which it computes nothing */
    double t_coll, t_halo;
} solver_t;

static double *vec_alloc(const problem_t *pb)
{
    size_t len = (size_t)(pb->nloc + 2) * (size_t)pb->ld;
    double *v = calloc(len, sizeof(double));
    if (NULL == v) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

#define AT(v, i, j) ((v)[(size_t)(i) * (size_t)ld + (size_t)(j)])

/* Diffusion coefficient: smooth, strongly varying (0.1 .. 1.9), so that the
 * Jacobi preconditioner actually matters. */
static double kcoef(double x, double y)
{
    return 1.0 + 0.9 * sin(2.0 * M_PI * x) * cos(3.0 * M_PI * y);
}

static double source(double x, double y)
{
    return 1.0 + 4.0 * x * (1.0 - y) + sin(5.0 * M_PI * x * y);
}

static void problem_setup(problem_t *pb, int n, MPI_Comm comm)
{
    memset(pb, 0, sizeof(*pb));
    pb->comm = comm;
    MPI_Comm_rank(comm, &pb->rank);
    MPI_Comm_size(comm, &pb->size);
    pb->n = n;
    pb->ld = n + 2;
    int base = n / pb->size, extra = n % pb->size;
    pb->nloc = base + (pb->rank < extra ? 1 : 0);
    pb->row0 = pb->rank * base + (pb->rank < extra ? pb->rank : extra);
    pb->up = pb->rank > 0 ? pb->rank - 1 : MPI_PROC_NULL;
    pb->down = pb->rank < pb->size - 1 ? pb->rank + 1 : MPI_PROC_NULL;

    pb->diag = vec_alloc(pb);
    pb->inv_diag = vec_alloc(pb);
    pb->cw = vec_alloc(pb);
    pb->ce = vec_alloc(pb);
    pb->cn = vec_alloc(pb);
    pb->cs = vec_alloc(pb);
    pb->b = vec_alloc(pb);

    const int ld = pb->ld;
    const double h = 1.0 / (n + 1);
    double bb = 0.0;
    for (int i = 1; i <= pb->nloc; i++) {
        int gi = pb->row0 + i - 1;          /* global row, 0-based; y = (gi+1) h */
        double y = (gi + 1) * h;
        for (int j = 1; j <= n; j++) {
            double x = j * h;               /* global column j-1; x = j h */
            double kw = kcoef(x - 0.5 * h, y), ke = kcoef(x + 0.5 * h, y);
            double kn = kcoef(x, y - 0.5 * h), ks = kcoef(x, y + 0.5 * h);
            AT(pb->diag, i, j) = kw + ke + kn + ks;
            AT(pb->inv_diag, i, j) = 1.0 / (kw + ke + kn + ks);
            /* couplings to unknowns outside the domain are dropped (u = 0) */
            AT(pb->cw, i, j) = (j > 1) ? kw : 0.0;
            AT(pb->ce, i, j) = (j < n) ? ke : 0.0;
            AT(pb->cn, i, j) = (gi > 0) ? kn : 0.0;
            AT(pb->cs, i, j) = (gi < n - 1) ? ks : 0.0;
            AT(pb->b, i, j) = h * h * source(x, y);
            bb += AT(pb->b, i, j) * AT(pb->b, i, j);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bb, 1, MPI_DOUBLE, MPI_SUM, comm);
    pb->bnorm = sqrt(bb);
}

static void problem_free(problem_t *pb)
{
    free(pb->diag); free(pb->inv_diag);
    free(pb->cw); free(pb->ce); free(pb->cn); free(pb->cs);
    free(pb->b);
}

/* out = A v (v's ghost rows must be current) */
static void matvec(const problem_t *pb, const double *v, double *out)
{
    const int ld = pb->ld, n = pb->n;
    for (int i = 1; i <= pb->nloc; i++) {
        for (int j = 1; j <= n; j++) {
            AT(out, i, j) = AT(pb->diag, i, j) * AT(v, i, j)
                          - AT(pb->cw, i, j) * AT(v, i, j - 1)
                          - AT(pb->ce, i, j) * AT(v, i, j + 1)
                          - AT(pb->cn, i, j) * AT(v, i - 1, j)
                          - AT(pb->cs, i, j) * AT(v, i + 1, j);
        }
    }
}

/* Blocking halo exchange, used only during setup and for the final check. */
static void halo_blocking(const problem_t *pb, double *v)
{
    const int ld = pb->ld;
    MPI_Sendrecv(&AT(v, 1, 0), ld, MPI_DOUBLE, pb->up, 21,
                 &AT(v, pb->nloc + 1, 0), ld, MPI_DOUBLE, pb->down, 21,
                 pb->comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(v, pb->nloc, 0), ld, MPI_DOUBLE, pb->down, 22,
                 &AT(v, 0, 0), ld, MPI_DOUBLE, pb->up, 22,
                 pb->comm, MPI_STATUS_IGNORE);
}

static void solver_setup(solver_t *sv, const problem_t *pb)
{
    memset(sv, 0, sizeof(*sv));
    sv->x = vec_alloc(pb); sv->r = vec_alloc(pb); sv->u = vec_alloc(pb);
    sv->w = vec_alloc(pb); sv->m = vec_alloc(pb); sv->nv = vec_alloc(pb);
    sv->z = vec_alloc(pb); sv->q = vec_alloc(pb); sv->s = vec_alloc(pb);
    sv->p = vec_alloc(pb);

    const int ld = pb->ld;
    /* Persistent collectives: created once, restarted every iteration. */
    PX_Allreduce_init(sv->dots_local, sv->dots_global, 3, MPI_DOUBLE, MPI_SUM,
                      pb->comm, MPI_INFO_NULL, &sv->req[0]);
    PX_Bcast_init(sv->ctl, 2, MPI_INT, 0, pb->comm, MPI_INFO_NULL, &sv->bcast);
    /* Persistent halo exchange of m (the only vector A is applied to). */
    MPI_Recv_init(&AT(sv->m, 0, 0), ld, MPI_DOUBLE, pb->up, 11, pb->comm, &sv->req[1]);
    MPI_Recv_init(&AT(sv->m, pb->nloc + 1, 0), ld, MPI_DOUBLE, pb->down, 12, pb->comm,
                  &sv->req[2]);
    MPI_Send_init(&AT(sv->m, 1, 0), ld, MPI_DOUBLE, pb->up, 12, pb->comm, &sv->req[3]);
    MPI_Send_init(&AT(sv->m, pb->nloc, 0), ld, MPI_DOUBLE, pb->down, 11, pb->comm,
                  &sv->req[4]);
}

static void solver_free(solver_t *sv)
{
    for (int k = 0; k < 5; k++) MPI_Request_free(&sv->req[k]);
    MPI_Request_free(&sv->bcast);
    free(sv->x); free(sv->r); free(sv->u); free(sv->w); free(sv->m);
    free(sv->nv); free(sv->z); free(sv->q); free(sv->s); free(sv->p);
}

/* Run one solve from x = 0. Returns the number of iterations (reductions). */
static int solve(const problem_t *pb, solver_t *sv, int mode, double tol, int maxit)
{
    const int ld = pb->ld, n = pb->n, nloc = pb->nloc;
    size_t len = (size_t)(nloc + 2) * (size_t)ld;
    double *x = sv->x, *r = sv->r, *u = sv->u, *w = sv->w, *m = sv->m;
    double *nv = sv->nv, *z = sv->z, *q = sv->q, *s = sv->s, *p = sv->p;

    memset(x, 0, len * sizeof(double));
    memset(z, 0, len * sizeof(double)); memset(q, 0, len * sizeof(double));
    memset(s, 0, len * sizeof(double)); memset(p, 0, len * sizeof(double));
    memset(m, 0, len * sizeof(double)); memset(u, 0, len * sizeof(double));

    /* r0 = b - A x0 = b;  u0 = M^-1 r0;  w0 = A u0 */
    memcpy(r, pb->b, len * sizeof(double));
    for (int i = 1; i <= nloc; i++)
        for (int j = 1; j <= n; j++) AT(u, i, j) = AT(pb->inv_diag, i, j) * AT(r, i, j);
    halo_blocking(pb, u);
    matvec(pb, u, w);

    double gamma_old = 0.0, alpha_old = 1.0;
    MPI_Status halo_st[4];
    int it = 0;
    double t_coll = 0.0, t_halo = 0.0, ta, tb;
    for (;;) {
        /* local parts of (r,u), (w,u), (r,r); and m = M^-1 w */
        double ru = 0.0, wu = 0.0, rr = 0.0;
        for (int i = 1; i <= nloc; i++) {
            for (int j = 1; j <= n; j++) {
                double ri = AT(r, i, j), ui = AT(u, i, j), wi = AT(w, i, j);
                ru += ri * ui;
                wu += wi * ui;
                rr += ri * ri;
                AT(m, i, j) = AT(pb->inv_diag, i, j) * wi;
            }
        }
        sv->dots_local[0] = ru; sv->dots_local[1] = wu; sv->dots_local[2] = rr;

        /* Only the time inside the MPI calls is counted (ta..tb): what the
         * allreduce costs beyond the matvec it overlaps is its MPI_Wait. */
        if (MODE_PERSISTENT == mode) {
            /* reduction and halo exchange in flight together */
            ta = MPI_Wtime();
            MPI_Start(&sv->req[0]);
            tb = MPI_Wtime();
            t_coll += tb - ta;
            MPI_Startall(4, &sv->req[1]);
            MPI_Waitall(4, &sv->req[1], halo_st);
            ta = MPI_Wtime();
            t_halo += ta - tb;
            matvec(pb, m, nv);                       /* overlaps the allreduce */
            ta = MPI_Wtime();
            MPI_Wait(&sv->req[0], MPI_STATUS_IGNORE);
            tb = MPI_Wtime();
            t_coll += tb - ta;
        } else {
            /* halo first, as above: a late neighbour is waited for in the
             * halo exchange in both modes, not in the allreduce in only one */
            ta = MPI_Wtime();
            MPI_Startall(4, &sv->req[1]);
            MPI_Waitall(4, &sv->req[1], halo_st);
            tb = MPI_Wtime();
            t_halo += tb - ta;
            MPI_Allreduce(sv->dots_local, sv->dots_global, 3, MPI_DOUBLE, MPI_SUM, pb->comm);
            t_coll += MPI_Wtime() - tb;
            matvec(pb, m, nv);
        }
        it++;

        /* The root alone decides whether to go on; everyone follows its word,
         * so all ranks stop at the same iteration whatever rounding they see. */
        if (0 == pb->rank) {
            double relres = sqrt(sv->dots_global[2]) / pb->bnorm;
            sv->ctl[0] = relres <= tol ? CTL_CONVERGED
                       : (it >= maxit ? CTL_BUDGET : CTL_CONTINUE);
            sv->ctl[1] = it;
        }
        ta = MPI_Wtime();
        if (MODE_PERSISTENT == mode) {
            MPI_Start(&sv->bcast);
            MPI_Wait(&sv->bcast, MPI_STATUS_IGNORE);
        } else {
            MPI_Bcast(sv->ctl, 2, MPI_INT, 0, pb->comm);
        }
        t_coll += MPI_Wtime() - ta;
        if (sv->ctl[1] != it) {
            fprintf(stderr, "rank %d: control word for iteration %d, expected %d\n",
                    pb->rank, sv->ctl[1], it);
            MPI_Abort(pb->comm, 3);
        }
        if (CTL_CONTINUE != sv->ctl[0]) break;

        double gamma = sv->dots_global[0], delta = sv->dots_global[1];
        double beta, alpha;
        if (1 == it) {
            beta = 0.0;
            alpha = gamma / delta;
        } else {
            beta = gamma / gamma_old;
            alpha = gamma / (delta - beta * gamma / alpha_old);
        }
        for (int i = 1; i <= nloc; i++) {
            for (int j = 1; j <= n; j++) {
                double zi = AT(nv, i, j) + beta * AT(z, i, j);
                double qi = AT(m, i, j) + beta * AT(q, i, j);
                double si = AT(w, i, j) + beta * AT(s, i, j);
                double pi = AT(u, i, j) + beta * AT(p, i, j);
                AT(z, i, j) = zi; AT(q, i, j) = qi; AT(s, i, j) = si; AT(p, i, j) = pi;
                AT(x, i, j) += alpha * pi;
                AT(r, i, j) -= alpha * si;
                AT(u, i, j) -= alpha * qi;
                AT(w, i, j) -= alpha * zi;
            }
        }
        gamma_old = gamma;
        alpha_old = alpha;
    }
    sv->t_coll = t_coll;
    sv->t_halo = t_halo;
    return sv->ctl[0] == CTL_CONVERGED ? it : -it;
}

/* True relative residual ||b - A x|| / ||b|| and a weighted checksum of x. */
static void evaluate(const problem_t *pb, const double *xin, double *relres, double *checksum)
{
    const int ld = pb->ld, n = pb->n;
    size_t len = (size_t)(pb->nloc + 2) * (size_t)ld;
    double *xc = vec_alloc(pb), *ax = vec_alloc(pb);
    memcpy(xc, xin, len * sizeof(double));
    halo_blocking(pb, xc);
    matvec(pb, xc, ax);
    double acc[2] = { 0.0, 0.0 };
    for (int i = 1; i <= pb->nloc; i++) {
        for (int j = 1; j <= n; j++) {
            double d = AT(pb->b, i, j) - AT(ax, i, j);
            long gidx = (long)(pb->row0 + i - 1) * n + (j - 1);
            acc[0] += d * d;
            acc[1] += AT(xc, i, j) * (double)(1 + gidx % 7);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, acc, 2, MPI_DOUBLE, MPI_SUM, pb->comm);
    *relres = sqrt(acc[0]) / pb->bnorm;
    *checksum = acc[1];
    free(xc);
    free(ax);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int k)
{
    qsort(v, (size_t)k, sizeof(double), cmp_double);
    return (k % 2) ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int main(int argc, char **argv)
{
    int n = 32, reps = 50, quiet = 0;
    double tol = 1e-8;
    const char *label = "unknown";

    MPI_Init(&argc, &argv);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc) n = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-t") && a + 1 < argc) tol = atof(argv[++a]);
        else if (!strcmp(argv[a], "-r") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-l") && a + 1 < argc) label = argv[++a];
        else if (!strcmp(argv[a], "-q")) quiet = 1;
        else {
            fprintf(stderr, "usage: %s [-n N] [-t TOL] [-r REPS] [-l LABEL] [-q]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (reps < 1) reps = 1;

    problem_t pb;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (n < size) {
        fprintf(stderr, "need n >= number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    problem_setup(&pb, n, MPI_COMM_WORLD);
    const int maxit = 20 * n;

    solver_t sv;
    solver_setup(&sv, &pb);
    size_t len = (size_t)(pb.nloc + 2) * (size_t)pb.ld;
    double *x_pers = vec_alloc(&pb), *x_block = vec_alloc(&pb);

    /* Untimed first solve in each mode: the reference solutions. */
    int it_pers = solve(&pb, &sv, MODE_PERSISTENT, tol, maxit);
    memcpy(x_pers, sv.x, len * sizeof(double));
    int it_block = solve(&pb, &sv, MODE_BLOCKING, tol, maxit);
    memcpy(x_block, sv.x, len * sizeof(double));

    /* Timed solves, interleaved; every persistent re-solve must reproduce the
     * first one bit for bit (the requests are restarted, never re-created).
     * Per solve and mode, in us per iteration: tm[mode][0] the whole solve
     * (slowest rank), tm[mode][1] the collectives' calls and tm[mode][2] the
     * halo exchange's calls (both averaged over the ranks). */
    double *tm[2][3];
    for (int md = 0; md < 2; md++)
        for (int f = 0; f < 3; f++) tm[md][f] = malloc(sizeof(double) * (size_t)reps);
    int repeat_ok = 1;
    for (int k = 0; k < reps; k++) {
        for (int pass = 0; pass < 2; pass++) {
            int mode = ((k + pass) % 2) ? MODE_BLOCKING : MODE_PERSISTENT;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            int it = solve(&pb, &sv, mode, tol, maxit);
            double dt = MPI_Wtime() - t0;
            double parts[2] = { sv.t_coll, sv.t_halo };
            MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, parts, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            int iters = it < 0 ? -it : it;
            const double *ref = (MODE_PERSISTENT == mode) ? x_pers : x_block;
            int ref_it = (MODE_PERSISTENT == mode) ? it_pers : it_block;
            if (it != ref_it || memcmp(sv.x, ref, len * sizeof(double)) != 0) repeat_ok = 0;
            tm[mode][0][k] = 1e6 * dt / iters;
            tm[mode][1][k] = 1e6 * parts[0] / pb.size / iters;
            tm[mode][2][k] = 1e6 * parts[1] / pb.size / iters;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &repeat_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

    /* Compare persistent and blocking solutions. */
    double maxdiff = 0.0, maxabs = 0.0;
    int bitwise = memcmp(x_pers, x_block, len * sizeof(double)) == 0;
    for (size_t k = 0; k < len; k++) {
        double d = fabs(x_pers[k] - x_block[k]);
        if (d > maxdiff) maxdiff = d;
        if (fabs(x_pers[k]) > maxabs) maxabs = fabs(x_pers[k]);
    }
    double red[2] = { maxdiff, maxabs };
    MPI_Allreduce(MPI_IN_PLACE, red, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &bitwise, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

    double res_p, sum_p, res_b, sum_b;
    evaluate(&pb, x_pers, &res_p, &sum_p);
    evaluate(&pb, x_block, &res_b, &sum_b);

    int converged = it_pers > 0 && it_block > 0;
    /* Same algorithm, same arithmetic: only the summation order inside the
     * MPI reductions may differ between implementations. */
    int agree = it_pers == it_block && red[0] <= 1e-10 * (red[1] > 0 ? red[1] : 1.0)
                && repeat_ok;
    double us[2][3];
    for (int md = 0; md < 2; md++)
        for (int f = 0; f < 3; f++) us[md][f] = median(tm[md][f], reps);
    const double us_p = us[MODE_PERSISTENT][0], us_b = us[MODE_BLOCKING][0];

    if (0 == pb.rank) {
        if (!quiet) {
            printf("jacobi_persistent: Jacobi-preconditioned pipelined CG, "
                   "-div(k grad u) = f on a %dx%d grid, np=%d, label=%s\n", n, n, pb.size, label);
            printf("  persistent (allreduce+bcast *_init once, MPI_Start + MPI_Wait):\n"
                   "    iterations %d%s, true rel. residual %.3e, checksum %.12e\n",
                   it_pers < 0 ? -it_pers : it_pers, it_pers < 0 ? " (NOT converged)" : "",
                   res_p, sum_p);
            printf("  blocking   (MPI_Allreduce + MPI_Bcast, same iterations):\n"
                   "    iterations %d%s, true rel. residual %.3e, checksum %.12e\n",
                   it_block < 0 ? -it_block : it_block, it_block < 0 ? " (NOT converged)" : "",
                   res_b, sum_b);
            printf("  agreement: %s (max |x_pers - x_block| = %.3e, %s; %d re-solves %s)\n",
                   agree ? "YES" : "NO", red[0], bitwise ? "bitwise identical" : "not bitwise identical",
                   reps, repeat_ok ? "reproduced bit for bit" : "DID NOT reproduce");
            printf("  us per iteration (median of %d solves)      persistent   blocking\n"
                   "    total (slowest rank)                     %10.2f %10.2f\n"
                   "    allreduce + bcast calls (mean of ranks)  %10.2f %10.2f\n"
                   "    halo exchange calls (mean of ranks)      %10.2f %10.2f\n"
                   "    the rest (compute; total - the above)    %10.2f %10.2f\n",
                   reps, us_p, us_b, us[MODE_PERSISTENT][1], us[MODE_BLOCKING][1],
                   us[MODE_PERSISTENT][2], us[MODE_BLOCKING][2],
                   us_p - us[MODE_PERSISTENT][1] - us[MODE_PERSISTENT][2],
                   us_b - us[MODE_BLOCKING][1] - us[MODE_BLOCKING][2]);
        }
        printf("RESULT label=%s np=%d n=%d iters=%d resid=%.3e checksum=%.12e agree=%s bitwise=%s "
               "converged=%s us_per_iter_persistent=%.2f us_per_iter_blocking=%.2f "
               "reps=%d us_comm_persistent=%.3f us_comm_blocking=%.3f "
               "us_halo_persistent=%.3f us_halo_blocking=%.3f\n",
               label, pb.size, n, it_pers < 0 ? -it_pers : it_pers, res_p, sum_p,
               agree ? "yes" : "no", bitwise ? "yes" : "no", converged ? "yes" : "no", us_p, us_b,
               reps, us[MODE_PERSISTENT][1], us[MODE_BLOCKING][1], us[MODE_PERSISTENT][2],
               us[MODE_BLOCKING][2]);
        fflush(stdout);
    }

    for (int md = 0; md < 2; md++)
        for (int f = 0; f < 3; f++) free(tm[md][f]);
    free(x_pers); free(x_block);
    solver_free(&sv);
    problem_free(&pb);
    MPI_Finalize();
    return (agree && converged) ? 0 : 1;
}
