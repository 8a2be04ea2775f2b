/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers for the pnbc test programs; see common.h.  This file:
 * time, memory, the watchdog, program start, preq_t requests, running
 * requests, communicators, reporting.  The datatypes, operations and the
 * local reduction are in common_ops.c; inputs, references and comparison
 * in common_data.c.
 */
#define _GNU_SOURCE
#include "common.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ================================================================ time */
double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ================================================================ memory */
void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* ================================================================ watchdog */
static char wd_prog[64] = "test";       /* also the program of case_begin's text */
static int wd_rank = -1;                /* also the world rank of the FAIL lines */
static char wd_what[600];
static int wd_secs;

static void wd_handler(int sig)
{
    char line[900];
    (void)sig;
    int n = snprintf(line, sizeof(line),
                     "WATCHDOG %s rank %d: no completion within %d s; hung in: %s\n",
                     wd_prog, wd_rank, wd_secs, wd_what);
    if (n > 0) {
        if (n > (int)sizeof(line)) n = (int)sizeof(line);
        ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
        (void)w;
    }
    _exit(124);
}

/* crash signals: say what was running, then hand over to the previous
 * handler (Open MPI's, which prints a backtrace) */
static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NCRASH ((int)(sizeof(crash_sigs) / sizeof(crash_sigs[0])))
static struct sigaction crash_old[NCRASH];

static void crash_handler(int sig)
{
    char line[900];
    int n = snprintf(line, sizeof(line), "CRASH %s rank %d: signal %d while in: %s\n", wd_prog, wd_rank,
                     sig, wd_what[0] ? wd_what : "(unknown)");
    if (n > 0) {
        if (n > (int)sizeof(line)) n = (int)sizeof(line);
        ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
        (void)w;
    }
    for (int i = 0; i < NCRASH; i++)
        if (crash_sigs[i] == sig) sigaction(sig, &crash_old[i], NULL);
    raise(sig);
}

void watchdog_init(const char *progname, int rank)
{
    struct sigaction sa;
    snprintf(wd_prog, sizeof(wd_prog), "%s", progname);
    wd_rank = rank;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = wd_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = crash_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (int i = 0; i < NCRASH; i++) sigaction(crash_sigs[i], &sa, &crash_old[i]);
}

void watchdog_arm(int seconds, const char *fmt, ...)
{
    va_list ap;
    alarm(0);
    va_start(ap, fmt);
    vsnprintf(wd_what, sizeof(wd_what), fmt, ap);
    va_end(ap);
    wd_secs = seconds;
    alarm((unsigned)seconds);
}

void watchdog_disarm(void)
{
    alarm(0);
}

void watchdog_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wd_what, sizeof(wd_what), fmt, ap);
    va_end(ap);
}

/* ================================================================ program */
void test_init(int *argc, char ***argv, const char *prog, int *wrank, int *wsize)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, wrank);
    MPI_Comm_size(MPI_COMM_WORLD, wsize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    watchdog_init(prog, *wrank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void abort_unless(int ok, const char *what)
{
    if (ok) return;
    printf("FAIL %s: cannot create %s\n", wd_prog, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}


/* ================================================================ requests */
const char *coll_name(coll_t c)
{
    switch (c) {
    case C_BARRIER: return "barrier";
    case C_BCAST: return "bcast";
    case C_REDUCE: return "reduce";
    case C_ALLREDUCE: return "allreduce";
    }
    return "?";
}

MPI_Op coll_op(coll_t coll, opk_t opk, const dtype_t *dt)
{
    return (coll == C_REDUCE || coll == C_ALLREDUCE) ? op_get(opk, dt) : MPI_OP_NULL;
}

void preq_setup(preq_t *p, coll_t coll, MPI_Comm comm, const dtype_t *dt, opk_t opk,
                MPI_Op op, int count, int root, int inplace, int nullrecv, uint64_t id)
{
    memset(p, 0, sizeof(*p));
    p->coll = coll;
    p->dt = *dt;
    p->opk = opk;
    p->op = op;
    p->count = count;
    p->root = root;
    p->inplace = inplace;
    p->nullrecv = nullrecv;
    p->comm = comm;
    p->id = id;
    p->req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &p->rank);
    MPI_Comm_size(comm, &p->size);
    p->bytes = (size_t)count * dt->extent;
    switch (coll) {
    case C_BARRIER:
        p->am_root = 1;
        break;
    case C_BCAST:
        p->am_root = (p->rank == root);
        p->rbuf = xmalloc(p->bytes);
        p->exp = xmalloc(p->bytes);
        p->scopy = xmalloc(p->bytes);
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        p->am_root = (coll == C_ALLREDUCE) || (p->rank == root);
        p->use_inplace = inplace && p->am_root;
        if (!p->use_inplace) {
            p->sbuf = xmalloc(p->bytes);
            p->scopy = xmalloc(p->bytes);
        }
        if (p->am_root || !nullrecv) p->rbuf = xmalloc(p->bytes);
        if (p->am_root) {
            p->exp = xmalloc(p->bytes);
            p->tmp = xmalloc(p->bytes);
        }
        break;
    }
}

int preq_init(preq_t *p, MPI_Info info)
{
    /* junk in the buffers at init time: an implementation that snapshots the
     * data at init instead of at start produces wrong results later */
    if (p->sbuf) {
        memset(p->sbuf, JUNK_SEND, p->bytes);
        fill_input(p->sbuf, &p->dt, p->count, p->opk, input_seed(p->id, 777, p->rank));
    }
    if (p->rbuf) {
        memset(p->rbuf, JUNK_RECV, p->bytes);
        fill_input(p->rbuf, &p->dt, p->count, p->opk, input_seed(p->id, 778, p->rank));
    }
    switch (p->coll) {
    case C_BARRIER:
        return MPIX_Barrier_init(p->comm, info, &p->req);
    case C_BCAST:
        return MPIX_Bcast_init(p->rbuf, p->count, p->dt.type, p->root, p->comm, info, &p->req);
    case C_REDUCE:
        return MPIX_Reduce_init(p->use_inplace ? MPI_IN_PLACE : p->sbuf, p->rbuf, p->count,
                                p->dt.type, p->op, p->root, p->comm, info, &p->req);
    case C_ALLREDUCE:
        return MPIX_Allreduce_init(p->use_inplace ? MPI_IN_PLACE : p->sbuf, p->rbuf, p->count,
                                   p->dt.type, p->op, p->comm, info, &p->req);
    }
    return MPI_ERR_ARG;
}

void preq_prepare(preq_t *p, int it)
{
    switch (p->coll) {
    case C_BARRIER:
        return;
    case C_BCAST:
        if (p->am_root) {
            fill_send(p->rbuf, p->scopy, &p->dt, p->count, OP_NONE, input_seed(p->id, it, p->rank));
        } else {
            memset(p->rbuf, POISON_RECV, p->bytes);
        }
        return;
    case C_REDUCE:
    case C_ALLREDUCE:
        if (p->use_inplace) {
            memset(p->rbuf, POISON_RECV, p->bytes);
            fill_input(p->rbuf, &p->dt, p->count, p->opk, input_seed(p->id, it, p->rank));
        } else {
            fill_send(p->sbuf, p->scopy, &p->dt, p->count, p->opk, input_seed(p->id, it, p->rank));
            if (p->rbuf) memset(p->rbuf, POISON_RECV, p->bytes);
        }
        return;
    }
}

int preq_check(preq_t *p, int it, char *msg, size_t msglen)
{
    char m[400];
    switch (p->coll) {
    case C_BARRIER:
        return 0;
    case C_BCAST:
        if (p->am_root) {
            if (compare_buffers(p->rbuf, p->scopy, &p->dt, p->count, m, sizeof m)) {
                snprintf(msg, msglen, "root buffer modified: %s", m);
                return 1;
            }
            return 0;
        }
        memset(p->exp, POISON_RECV, p->bytes);
        fill_input(p->exp, &p->dt, p->count, OP_NONE, input_seed(p->id, it, p->root));
        if (compare_buffers(p->rbuf, p->exp, &p->dt, p->count, m, sizeof m)) {
            snprintf(msg, msglen, "%s", m);
            return 1;
        }
        return 0;
    case C_REDUCE:
    case C_ALLREDUCE:
        if (!p->use_inplace &&
            compare_buffers(p->sbuf, p->scopy, &p->dt, p->count, m, sizeof m)) {
            snprintf(msg, msglen, "send buffer modified: %s", m);
            return 1;
        }
        if (!p->am_root) return 0;
        /* expected = x0 op (x1 op (... op x_{n-1})), holes = receive poison */
        fold_reference(p->exp, p->tmp, &p->dt, p->count, p->opk, p->id, it, 0, p->size - 1);
        if (compare_buffers(p->rbuf, p->exp, &p->dt, p->count, m, sizeof m)) {
            snprintf(msg, msglen, "%s", m);
            return 1;
        }
        return 0;
    }
    return 0;
}

void preq_release(preq_t *p)
{
    free(p->sbuf);
    free(p->rbuf);
    free(p->exp);
    free(p->tmp);
    free(p->scopy);
    p->sbuf = p->rbuf = p->exp = p->tmp = p->scopy = NULL;
}

/* ================================================================ running requests */
int start_req(MPI_Request *r, int it)
{
    return (it % 2 == 1) ? MPI_Startall(1, r) : MPI_Start(r);
}

int complete_req(MPI_Request *r, int it)
{
    if (it % 2 == 0) return MPI_Wait(r, MPI_STATUS_IGNORE);
    int flag = 0, rc;
    do {
        rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int start_complete_req(MPI_Request *r, int it)
{
    int rc = start_req(r, it);
    return rc != MPI_SUCCESS ? rc : complete_req(r, it);
}

int all_ok(MPI_Comm comm, int ok)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

/* ================================================================ communicators */
void ctx_split_reversed(ctx_t *c)
{
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    memset(c, 0, sizeof *c);
    MPI_Comm_split(MPI_COMM_WORLD, wrank == 0 ? 0 : 1, -wrank, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    snprintf(c->name, sizeof c->name, "split(size=%d,reversed)", c->size);
}

/* ================================================================ reporting */
long n_cases, n_checks, n_failed;
int max_print = 40;
int case_failed;
static int n_printed;
static char case_desc[512];

void parse_test_args(int argc, char **argv, int *quick)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            if (quick) *quick = 1;
        } else if (!strcmp(argv[i], "--max-print") && i + 1 < argc) {
            max_print = atoi(argv[++i]);
        }
    }
}

void vfail_line(const char *what, int it, const char *fmt, va_list ap)
{
    n_failed++;
    if (n_printed++ < max_print) {
        char msg[700];
        vsnprintf(msg, sizeof msg, fmt, ap);
        printf("FAIL %s iter=%d world_rank=%d: %s\n", what, it, wd_rank, msg);
        fflush(stdout);
    }
}

void fail_line(const char *what, int it, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_line(what, it, fmt, ap);
    va_end(ap);
}

void case_begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(case_desc, sizeof case_desc, fmt, ap);
    va_end(ap);
    case_failed = 0;
    n_cases++;
    watchdog_arm(CASE_TIMEOUT, "%s case %s", wd_prog, case_desc);
}

void case_fail(int it, const char *fmt, ...)
{
    va_list ap;
    if (case_failed) return;    /* one line per failing case and rank */
    case_failed = 1;
    if (n_printed == max_print)
        printf("FAIL ... (world rank %d: further failure lines suppressed)\n", wd_rank);
    va_start(ap, fmt);
    vfail_line(case_desc, it, fmt, ap);
    va_end(ap);
}

int case_init_ok(MPI_Comm comm, int rc, MPI_Request *req)
{
    if (all_ok(comm, rc == MPI_SUCCESS)) return 1;
    if (rc != MPI_SUCCESS) case_fail(-1, "init returned %s", err_class_str(rc));
    else case_fail(-1, "init failed on another rank");
    if (rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL) MPI_Request_free(req);
    return 0;
}

int case_start_complete(MPI_Request *r, int it)
{
    int rc = start_req(r, it);
    if (rc != MPI_SUCCESS) {
        case_fail(it, "%s returned %s", it % 2 ? "MPI_Startall" : "MPI_Start", err_class_str(rc));
        return rc;
    }
    rc = complete_req(r, it);
    if (rc != MPI_SUCCESS)
        case_fail(it, "%s returned %s", it % 2 ? "MPI_Test" : "MPI_Wait", err_class_str(rc));
    return rc;
}

int case_startall_waitall(int n, MPI_Request *rq, int it)
{
    int rc = MPI_Startall(n, rq);
    if (rc != MPI_SUCCESS) {
        case_fail(it, "MPI_Startall returned %s", err_class_str(rc));
        return rc;
    }
    rc = MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) case_fail(it, "MPI_Waitall returned %s", err_class_str(rc));
    return rc;
}

void case_free_req(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL) return;
    int rc = MPI_Request_free(r);
    if (rc != MPI_SUCCESS) case_fail(-1, "MPI_Request_free returned %s", err_class_str(rc));
    else if (*r != MPI_REQUEST_NULL) case_fail(-1, "MPI_Request_free did not set MPI_REQUEST_NULL");
}

void case_iterate(MPI_Request *req, int iters, void *obj, case_prepare_fn prepare, case_check_fn check)
{
    char msg[600];
    if (*req == MPI_REQUEST_NULL) case_fail(-1, "init returned MPI_REQUEST_NULL");
    for (int it = 0; it < iters && *req != MPI_REQUEST_NULL; it++) {
        prepare(obj, it);
        if (case_start_complete(req, it) != MPI_SUCCESS) break;
        if (check(obj, it, msg, sizeof msg)) case_fail(it, "%s", msg);
    }
}

void case_cross_check(int it, int rc, int differs, const char *coll, const char *msg)
{
    if (rc != MPI_SUCCESS)
        case_fail(it, "REFERENCE CROSS-CHECK: blocking call returned %s", err_class_str(rc));
    else if (differs)
        case_fail(it, "REFERENCE CROSS-CHECK (test bug or tuned bug): blocking MPI_%s disagrees with the local "
                  "reference: %s", coll, msg);
}

totals_t totals_sum(void)
{
    long mine[3] = { n_cases, n_checks, n_failed }, sum[3];
    MPI_Allreduce(mine, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (totals_t){ sum[0], sum[1], sum[2] };
}

/* ================================================================ misc */
const char *err_class_str(int rc)
{
    static char buf[MPI_MAX_ERROR_STRING + 64];
    char s[MPI_MAX_ERROR_STRING];
    int cls = -1, len = 0;
    const char *name = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, s, &len);
    if (cls == MPI_SUCCESS) name = "MPI_SUCCESS";
    else if (cls == MPI_ERR_REQUEST) name = "MPI_ERR_REQUEST";
    else if (cls == MPI_ERR_ARG) name = "MPI_ERR_ARG";
    else if (cls == MPI_ERR_OP) name = "MPI_ERR_OP";
    else if (cls == MPI_ERR_TYPE) name = "MPI_ERR_TYPE";
    else if (cls == MPI_ERR_INTERN) name = "MPI_ERR_INTERN";
    else if (cls == MPI_ERR_OTHER) name = "MPI_ERR_OTHER";
    snprintf(buf, sizeof buf, "rc=%d class=%d %s (%s)", rc, cls, name, s);
    return buf;
}

long rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}
