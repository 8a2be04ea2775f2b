/*
 * lifecycle: request life-cycle semantics of persistent collectives.
 *
 * Sub-tests (each reported individually as "PASS|FAIL lifecycle/<name> np=N"):
 *   a-start-order         rank-dependent order of MPI_Start of 4 persistent
 *                         collectives (two of them identical allreduces)
 *   b-startall-permuted   MPI_Startall of 6 requests in a rank-dependent order
 *   c-mixed-p2p           persistent collectives + MPI_Send_init/MPI_Recv_init in
 *                         one MPI_Startall, completed with Waitall, Waitany,
 *                         Testall, Testany, Testsome, Waitsome, Test, Wait
 *   d-wait-never-started  Test/Wait/Waitall/Testall/Waitany on never-started
 *                         requests return at once with an empty status
 *   e-startall-active     MPI_Startall on an active request -> MPI_ERR_REQUEST
 *   e-start-active        MPI_Start on an active request -> MPI_ERR_REQUEST,
 *                         the request then still completes correctly
 *   f-free-active         MPI_Request_free on an active request ->
 *                         MPI_ERR_REQUEST, handle kept, completes, then frees
 *   g-free-never-started  MPI_Request_free of never-started / completed requests
 *   h-freed-type-op       user datatypes and user ops freed right after *_init
 *                         (and their memory recycled) -> results still right
 *   i-comm-self           all four collectives on MPI_COMM_SELF and a dup of it
 *
 * MPI_ERRORS_RETURN is set on MPI_COMM_WORLD (Open MPI reports
 * MPI_Request_free/MPI_Startall errors through it), MPI_COMM_SELF and every test
 * communicator.  Completion uses MPI_Test loops with a timeout (10 s) so one
 * broken sub-test does not hang the others; a SIGALRM watchdog ends the program
 * if a call never returns.  Sub-tests most likely to break an implementation
 * run last.
 *
 * Usage: lifecycle [name-or-letter ...]   (default: all; "e" selects both e-*)
 *
 * Files: lifecycle.c (this one: the harness of the sub-tests, main),
 * lifecycle_start.c (a, b, c, i), lifecycle_misuse.c (d to h), lifecycle.h.
 */
#define _GNU_SOURCE
#include "lifecycle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUB_WATCHDOG 45

int wrank, wsize;
int sub_fail, tainted;
static int n_pass, n_fail;
static char sub_name[64];
uint64_t next_id = 1;

void sfail(const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sub_fail < 6) printf("  lifecycle/%s np=%d rank %d: %s\n", sub_name, wsize, wrank, msg);
    sub_fail++;
}

MPI_Comm sub_begin(const char *name)
{
    MPI_Comm c;
    snprintf(sub_name, sizeof sub_name, "%s", name);
    sub_fail = 0;
    watchdog_arm(SUB_WATCHDOG, "lifecycle/%s", name);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

void sub_end(MPI_Comm *c)
{
    int f = sub_fail;
    int t = tainted;
    MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    tainted = t;
    if (f) n_fail++;
    else n_pass++;
    if (wrank == 0) printf("%s lifecycle/%s np=%d\n", f ? "FAIL" : "PASS", sub_name, wsize);
    if (!tainted && c && *c != MPI_COMM_NULL) MPI_Comm_free(c);
    watchdog_disarm();
    watchdog_note("lifecycle: after sub-test %s", sub_name);
}

/* 1 once TMO s have passed since t0: reports the hang and taints the run. */
static int hung_since(double t0, const char *what)
{
    if (now_sec() - t0 <= TMO) return 0;
    sfail("%s: not complete after %.0f s (hang)", what, TMO);
    tainted = 1;
    return 1;
}

/* MPI_Test loop with timeout.  0 = complete, -1 = timeout/error (reported). */
int wait_tmo(MPI_Request *r, MPI_Status *st, const char *what)
{
    double t0 = now_sec();
    int flag = 0;
    MPI_Status dummy;
    for (;;) {
        int rc = MPI_Test(r, &flag, st ? st : &dummy);
        if (rc != MPI_SUCCESS) {
            sfail("%s: MPI_Test returned %s", what, err_class_str(rc));
            return -1;
        }
        if (flag) return 0;
        if (hung_since(t0, what)) return -1;
    }
}

/* the same with MPI_Testall */
int waitall_tmo(int n, MPI_Request *r, const char *what)
{
    double t0 = now_sec();
    int flag = 0;
    for (;;) {
        int rc = MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) {
            sfail("%s: MPI_Testall returned %s", what, err_class_str(rc));
            return -1;
        }
        if (flag) return 0;
        if (hung_since(t0, what)) return -1;
    }
}

int check_p(preq_t *p, int it, const char *what)
{
    char m[600];
    if (preq_check(p, it, m, sizeof m)) {
        sfail("%s: iteration %d: %s count=%d type=%s op=%s root=%d: %s", what, it, coll_name(p->coll),
              p->count, p->dt.name, op_name(p->opk), p->root, m);
        return 1;
    }
    return 0;
}

int init_p(preq_t *p)
{
    int rc = preq_init(p, MPI_INFO_NULL);
    if (rc != MPI_SUCCESS) sfail("MPIX_%s_init returned %s", coll_name(p->coll), err_class_str(rc));
    return rc;
}

void setup(preq_t *p, coll_t coll, MPI_Comm comm, const dtype_t *dt, opk_t opk, int count,
           int root, int inplace)
{
    preq_setup(p, coll, comm, dt, opk, coll_op(coll, opk, dt), count, root, inplace, 0, next_id++);
}

void free_p(preq_t *p)
{
    if (p->req != MPI_REQUEST_NULL && !tainted) {
        int rc = MPI_Request_free(&p->req);
        if (rc != MPI_SUCCESS) sfail("MPI_Request_free (inactive %s) returned %s", coll_name(p->coll), err_class_str(rc));
        else if (p->req != MPI_REQUEST_NULL) sfail("MPI_Request_free did not set MPI_REQUEST_NULL");
    }
    preq_release(p);
}

/* one ordinary start/complete/check round */
int normal_round(preq_t *p, int it, const char *what)
{
    preq_prepare(p, it);
    int rc = MPI_Start(&p->req);
    if (rc != MPI_SUCCESS) {
        sfail("%s: MPI_Start returned %s", what, err_class_str(rc));
        return -1;
    }
    if (wait_tmo(&p->req, NULL, what)) return -1;
    return check_p(p, it, what) ? -1 : 0;
}

/* ================================================================ main */
typedef struct { const char *name; void (*fn)(void); } subtest_t;

int main(int argc, char **argv)
{
    /* ordered so that the sub-tests most likely to break an implementation
     * (and leave it unusable) run last */
    subtest_t all[] = {
        { "d-wait-never-started", test_d }, { "g-free-never-started", test_g },
        { "a-start-order", test_a },        { "b-startall-permuted", test_b },
        { "c-mixed-p2p", test_c },          { "i-comm-self", test_i },
        { "h-freed-type-op", test_h },      { "e-startall-active", test_e_startall },
        { "f-free-active", test_f },        { "e-start-active", test_e_start },
    };
    int nall = (int)(sizeof all / sizeof all[0]);
    test_init(&argc, &argv, "lifecycle", &wrank, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    abort_unless(types_create() == MPI_SUCCESS && ops_create() == MPI_SUCCESS, "test datatypes/ops");
    for (int k = 0; k < nall; k++) {
        int run = argc < 2;
        for (int a = 1; a < argc; a++)     /* full name, or its letter */
            if (!strcmp(all[k].name, argv[a]) || (strlen(argv[a]) == 1 && all[k].name[0] == argv[a][0]))
                run = 1;
        if (!run) continue;
        if (tainted) {
            if (wrank == 0) printf("FAIL lifecycle/%s np=%d: not run (an earlier sub-test left a request hanging)\n",
                                   all[k].name, wsize);
            n_fail++;
            continue;
        }
        all[k].fn();
    }
    if (wrank == 0) printf("lifecycle np=%d: %d sub-tests passed, %d failed\n", wsize, n_pass, n_fail);
    if (tainted) {
        /* a request is stuck: MPI_Finalize could hang */
        if (wrank == 0) printf("lifecycle: requests left hanging, exiting without MPI_Finalize\n");
        fflush(stdout);
        _exit(1);
    }
    watchdog_arm(60, "lifecycle: MPI_Finalize");
    ops_free();
    types_free();
    MPI_Finalize();
    return n_fail ? 1 : 0;
}
