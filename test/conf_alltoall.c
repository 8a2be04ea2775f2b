/*
 * conf_alltoall: results of the persistent all-to-all collectives
 * (MPIX_Alltoall_init, MPIX_Alltoallv_init, MPIX_Alltoallw_init).
 *
 * Every block s -> d is a sequence of primitive values generated from
 * (case, iteration, s, d, index), so every rank computes locally what it
 * must receive.  Each result is compared with that local expectation
 * (holes of derived types must keep the receive poison) and with the
 * BLOCKING MPI_Alltoall{,v,w} run on the same input (served by
 * tuned/basic, not by a persistent-collective component).
 *
 * Types: a block's signature comes from a "family" (ints, doubles, or a
 * struct with holes); each side picks any type of the family, so sender
 * and receiver use different layouts of the same signature (vector vs
 * contiguous vs struct with holes), and alltoallw picks per peer --
 * even the family changes from pair to pair.
 *
 * Coverage: MPI_IN_PLACE for all three; zero counts on some ranks, on
 * one rank only, or everywhere; a rank that sends nothing but receives;
 * non-monotonic displacements with gaps; duplicated and split (reversed
 * rank order) communicators; blocks above the eager limit; datatype
 * handles freed right after init; several requests outstanding at once
 * (MPI_Startall); and an in-place alltoallv in which one rank has only
 * zero counts, followed on the same communicator by persistent allreduce
 * and bcast requests started several times (a libnbc hang).
 *
 * Every request is started ITERS times with new inputs; receive buffers
 * are poisoned before each start; send buffers must stay unchanged.
 * Output: one FAIL line per failing check; rank 0 prints
 * "conf_alltoall: N checks, M failures".  Exit status non-zero on failure.
 *
 * Files: conf_alltoall.c (this one: the case table, the scenarios, the
 * driver), conf_alltoall_req.c (one request of a case), conf_alltoall.h.
 */
#define _GNU_SOURCE
#include "conf_alltoall.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *only;        /* --only SUBSTR: run matching scenarios only */

int selected(const char *desc)
{
    return only == NULL || strstr(desc, only) != NULL;
}

/* ------------------------------------------------------------------ report */
void check(int ok, const char *what, int it, const char *fmt, ...)
{
    n_checks++;
    if (ok) return;
    va_list ap;
    va_start(ap, fmt);
    vfail_line(what, it, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ case table */
/*  name          coll  inpl units        par fam    s: base rmul pmul  r: base rmul pmul */
static const case_t cases[] = {
    { "int",          A2A,  0, U_CONST,      1, F_INT, 3, 0, 0,   3, 0, 0 },
    { "vec-vs-struct", A2A, 0, U_CONST,      3, F_INT, 1, 1, 0,   2, 1, 0 },
    { "vecd-vs-dbl",  A2A,  0, U_CONST,      2, F_DBL, 0, 0, 0,   1, 0, 0 },
    { "structh",      A2A,  0, U_CONST,      2, F_STR, 0, 0, 0,   0, 0, 0 },
    { "zero",         A2A,  0, U_CONST,      0, F_INT, 1, 0, 0,   0, 0, 0 },
    { "large",        A2A,  0, U_CONST,     80, F_INT, 0, 0, 0,   3, 0, 0 },
    { "ip-vec",       A2A,  1, U_CONST,      2, F_INT, 0, 0, 0,   1, 0, 0 },
    { "ip-structh",   A2A,  1, U_CONST,      1, F_STR, 0, 0, 0,   0, 0, 0 },
    { "ip-vecd",      A2A,  1, U_CONST,      3, F_DBL, 0, 0, 0,   0, 1, 0 },
    { "ip-large",     A2A,  1, U_CONST,     70, F_INT, 0, 0, 0,   2, 0, 0 },
    { "ip-zero",      A2A,  1, U_CONST,      0, F_INT, 0, 0, 0,   1, 0, 0 },
    { "huge",         A2A,  0, U_CONST,    600, F_INT, 1, 0, 0,   2, 0, 0 },
    { "ip-huge",      A2A,  1, U_CONST,    600, F_INT, 0, 0, 0,   1, 1, 0 },
    /* blocks above the shm box size (16 KiB): read in one copy when both
     * sides are contiguous, through a bounce box into a vector, streamed
     * through boxes from a vector */
    { "sc-flat",      A2A,  0, U_CONST,   5000, F_INT, 3, 0, 0,   0, 0, 0 },
    { "sc-vec-recv",  A2A,  0, U_CONST,   5000, F_INT, 3, 0, 0,   1, 0, 0 },
    { "sc-vec-send",  A2A,  0, U_CONST,   4100, F_INT, 1, 0, 0,   3, 0, 0 },
    { "ip-sc",        A2A,  1, U_CONST,   4500, F_INT, 0, 0, 0,   3, 0, 0 },

    { "varied",       A2AV, 0, U_VARIED,     1, F_INT, 1, 0, 0,   3, 0, 0 },
    { "zero-rank",    A2AV, 0, U_ZERO_RANK,  0, F_DBL, 1, 0, 0,   0, 1, 0 },
    { "zero-send",    A2AV, 0, U_ZERO_SEND,  1, F_INT, 2, 1, 0,   1, 1, 0 },
    { "all-zero",     A2AV, 0, U_CONST,      0, F_INT, 0, 0, 0,   0, 0, 0 },
    { "structh",      A2AV, 0, U_VARIED,     2, F_STR, 0, 0, 0,   0, 0, 0 },
    { "ip-symm",      A2AV, 1, U_SYMM,       1, F_INT, 0, 0, 0,   2, 1, 0 },
    { "ip-zero-rank", A2AV, 1, U_ZERO_RANK,  1, F_INT, 0, 0, 0,   1, 0, 0 },
    { "ip-all-zero",  A2AV, 1, U_CONST,      0, F_DBL, 0, 0, 0,   0, 0, 0 },
    { "ip-huge",      A2AV, 1, U_CONST,    500, F_DBL, 0, 0, 0,   0, 1, 0 },
    { "sc-mixed",     A2AV, 0, U_CONST,   4500, F_DBL, 0, 1, 0,   1, 1, 0 },

    { "varied",       A2AW, 0, U_VARIED,     0, F_INT, 0, 1, 1,   1, 0, 3 },
    { "zero-rank",    A2AW, 0, U_ZERO_RANK,  2, F_DBL, 0, 0, 1,   1, 1, 1 },
    { "zero-send",    A2AW, 0, U_ZERO_SEND,  0, F_MIX, 1, 0, 1,   0, 1, 1 },
    { "mixed-fam",    A2AW, 0, U_VARIED,     3, F_MIX, 0, 1, 1,   1, 1, 2 },
    { "all-zero",     A2AW, 0, U_CONST,      0, F_MIX, 0, 0, 1,   0, 0, 1 },
    { "ip-mixed-fam", A2AW, 1, U_SYMM,       2, F_MIX, 0, 0, 0,   0, 1, 1 },
    { "ip-zero-rank", A2AW, 1, U_ZERO_RANK,  0, F_MIX, 0, 0, 0,   1, 0, 1 },
    { "ip-huge",      A2AW, 1, U_CONST,    300, F_MIX, 0, 0, 0,   1, 1, 1 },
    { "sc-mixed-fam", A2AW, 0, U_CONST,   2500, F_MIX, 0, 1, 1,   1, 1, 2 },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const case_t *find_case(coll_k coll, const char *name)
{
    for (int i = 0; i < NCASES; i++)
        if (cases[i].coll == coll && !strcmp(cases[i].name, name)) return &cases[i];
    fprintf(stderr, "no case %s/%s\n", coll_str[coll], name);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return NULL;
}

/* ------------------------------------------------------------------ scenarios */
/* All three collectives outstanding at once on one communicator. */
static void run_concurrent(MPI_Comm comm, const char *comm_name)
{
    const case_t *pick_cases[3] = { find_case(A2A, "vec-vs-struct"), find_case(A2AV, "varied"),
                                    find_case(A2AW, "mixed-fam") };
    a2a_t x[3];
    MPI_Request reqs[3];
    int ok = 1;
    if (!selected("concurrent")) return;
    for (int i = 0; i < 3; i++) {
        a2a_setup(&x[i], pick_cases[i], comm, comm_name);
        strncat(x[i].desc, " concurrent", sizeof x[i].desc - strlen(x[i].desc) - 1);
        ok &= a2a_init_checked(&x[i]);
    }
    watchdog_arm(CASE_TIMEOUT, "concurrent alltoall/v/w on %s", comm_name);
    for (int it = 0; ok && it < ITERS; it++) {
        for (int i = 0; i < 3; i++) {
            a2a_prepare(&x[i], it);
            reqs[i] = x[i].req;
        }
        int rc = MPI_Startall(3, reqs);
        if (rc == MPI_SUCCESS) rc = MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
        check(rc == MPI_SUCCESS, "concurrent", it, "Startall/Waitall: %s", err_class_str(rc));
        if (rc != MPI_SUCCESS) break;
        for (int i = 0; i < 3; i++) a2a_check(&x[i], it);
    }
    for (int i = 0; i < 3; i++) a2a_release(&x[i]);
    watchdog_disarm();
}

/*
 * In-place alltoallv/alltoallw where one rank has only zero counts, then
 * persistent allreduce and bcast on the same communicator, all started
 * several times, interleaved.
 */
static void run_zero_rank_then_persistent(MPI_Comm parent, coll_k coll)
{
    const char *what = coll == A2AV ? "zero-rank in-place alltoallv + persistent allreduce/bcast"
                                    : "zero-rank in-place alltoallw + persistent allreduce/bcast";
    MPI_Comm comm;
    if (!selected(what)) return;
    MPI_Comm_dup(parent, &comm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const case_t *c = find_case(coll, "ip-zero-rank");
    a2a_t x;
    a2a_setup(&x, c, comm, "dup(world)");
    watchdog_arm(CASE_TIMEOUT, "%s", what);
    int ok = a2a_init_checked(&x);

    int ar_in[4], ar_out[4], bc[3];
    MPI_Request ar = MPI_REQUEST_NULL, bcr = MPI_REQUEST_NULL, both[2];
    const int root = size - 1;
    int rc = MPIX_Allreduce_init(ar_in, ar_out, 4, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &ar);
    check(rc == MPI_SUCCESS, what, -1, "allreduce init: %s", err_class_str(rc));
    rc = MPIX_Bcast_init(bc, 3, MPI_INT, root, comm, MPI_INFO_NULL, &bcr);
    check(rc == MPI_SUCCESS, what, -1, "bcast init: %s", err_class_str(rc));
    ok = all_ok(comm, ok && ar != MPI_REQUEST_NULL && bcr != MPI_REQUEST_NULL);

    for (int it = 0; ok && it < 2 * ITERS; it++) {
        a2a_prepare(&x, it);
        rc = start_complete_req(&x.req, it);
        check(rc == MPI_SUCCESS, what, it, "alltoall start: %s", err_class_str(rc));
        if (rc != MPI_SUCCESS) break;
        a2a_check(&x, it);
        for (int rep = 0; rep < 3; rep++) {
            for (int i = 0; i < 4; i++) ar_in[i] = (rank + 1) * (i + 1) + it * 100 + rep;
            for (int i = 0; i < 3; i++) bc[i] = (rank == root) ? 1000 * it + 10 * rep + i : -1;
            memset(ar_out, 0xA5, sizeof ar_out);
            if (rep == 2) {     /* both at once */
                both[0] = ar;
                both[1] = bcr;
                rc = MPI_Startall(2, both);
                if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
            } else {
                rc = start_complete_req(&ar, rep);
                if (rc == MPI_SUCCESS) rc = start_complete_req(&bcr, rep + 1);
            }
            check(rc == MPI_SUCCESS, what, it, "allreduce/bcast: %s", err_class_str(rc));
            if (rc != MPI_SUCCESS) { ok = 0; break; }
            for (int i = 0; i < 4; i++) {
                int want = (i + 1) * size * (size + 1) / 2 + size * (it * 100 + rep);
                check(ar_out[i] == want, what, it, "allreduce[%d] = %d, expected %d", i,
                      ar_out[i], want);
            }
            for (int i = 0; i < 3; i++)
                check(bc[i] == 1000 * it + 10 * rep + i, what, it, "bcast[%d] = %d", i, bc[i]);
        }
    }
    if (ar != MPI_REQUEST_NULL) MPI_Request_free(&ar);
    if (bcr != MPI_REQUEST_NULL) MPI_Request_free(&bcr);
    a2a_release(&x);
    MPI_Comm_free(&comm);
    watchdog_disarm();
}

/* ------------------------------------------------------------------ main */
int main(int argc, char **argv)
{
    int wrank, wsize;
    test_init(&argc, &argv, "conf_alltoall", &wrank, &wsize);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--only")) only = argv[i + 1];
    if (types_create() != MPI_SUCCESS) {
        fprintf(stderr, "types_create failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    MPI_Comm dup, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev);     /* reversed order */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);

    for (int i = 0; i < NCASES; i++) run_case(&cases[i], MPI_COMM_WORLD, "world", 0);
    for (int i = 0; i < NCASES; i++) run_case(&cases[i], rev, "reversed", 0);
    run_case(find_case(A2A, "vec-vs-struct"), dup, "dup(world)", 1);
    run_case(find_case(A2AV, "ip-symm"), dup, "dup(world)", 1);
    run_case(find_case(A2AW, "mixed-fam"), dup, "dup(world)", 1);
    run_concurrent(dup, "dup(world)");
    run_zero_rank_then_persistent(MPI_COMM_WORLD, A2AV);
    run_zero_rank_then_persistent(MPI_COMM_WORLD, A2AW);

    totals_t sum = totals_sum();
    if (wrank == 0) printf("conf_alltoall: %ld checks, %ld failures\n", sum.checks, sum.failed);

    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    types_free();
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
