/*
 * conf_reduce_scatter: results of the persistent reduce-scatter and scan
 * family -- MPIX_Reduce_scatter_init, MPIX_Reduce_scatter_block_init,
 * MPIX_Scan_init, MPIX_Exscan_init -- against independent references.
 *
 * References are computed locally in canonical rank order
 * x_lo op (x_lo+1 op (... op x_hi)) (every rank can generate every other
 * rank's input); for predefined ops on predefined types the local
 * reference is also cross-checked against the BLOCKING MPI_Reduce_scatter,
 * MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan (served by tuned/basic).
 *
 * Every request is started ITERS times with new inputs; receive buffers
 * are poisoned before each start (holes of derived types must stay
 * poisoned, and a guard area behind rbuf must stay intact), send buffers
 * must stay unchanged.  Covered: MPI_IN_PLACE, zero counts on some or all
 * ranks, predefined ops on predefined, derived contiguous and derived
 * non-contiguous types, user-defined commutative and non-commutative ops,
 * MPI_COMM_WORLD and a split communicator in reversed rank order, several
 * requests outstanding at once.  In place, reduce-scatter defines only the
 * result block at the start of rbuf; exscan must leave rank 0's rbuf as it
 * was (pnbc's promise; MPI leaves it undefined).  The collectives have a
 * single datatype and no root, so those variations do not apply.
 *
 * Predefined ops on derived datatypes: Open MPI's parameter checking
 * rejects them before any component sees the call.  The test probes for
 * that once; when they are rejected those cases are skipped (a note says
 * so) -- run with --mca mpi_param_check 0 to cover them.
 *
 * Output: one "FAIL ..." line per failing case and rank, then on rank 0
 * "conf_reduce_scatter: N checks, M failures".  Exit status non-zero on
 * any failure.
 *
 * Usage: conf_reduce_scatter [--quick] [--max-print N]
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 3
#define GUARD 64                /* bytes behind rbuf that must stay poisoned */

typedef enum { K_RS, K_RSB, K_SCAN, K_EXSCAN } kind_t;

static const char *kind_name(kind_t k)
{
    switch (k) {
    case K_RS: return "reduce_scatter";
    case K_RSB: return "reduce_scatter_block";
    case K_SCAN: return "scan";
    case K_EXSCAN: return "exscan";
    }
    return "?";
}

static int wrank;
static uint64_t next_id = 1;
static int predefined_op_on_derived_ok;     /* see the header comment */

/* ------------------------------------------------------------------ one request */
typedef struct {
    kind_t kind;
    dtype_t dt;
    opk_t opk;
    MPI_Op op;
    MPI_Comm comm;
    int rank, size, inplace;
    int count;                  /* scan/exscan: count; RSB: the block count */
    int *rcounts, *displs;      /* RS, RSB: per-rank blocks of the vector */
    int nin, nout;              /* input / result elements on this rank */
    size_t in_bytes, rbuf_bytes;
    unsigned char *sbuf, *scopy, *rbuf, *rinit, *exp, *tmp;
    MPI_Request req;
    uint64_t id;
} tc_t;

static void tc_setup(tc_t *t, kind_t kind, MPI_Comm comm, const dtype_t *dt, opk_t opk,
                     int count, const int *rcounts, int inplace, uint64_t id)
{
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->dt = *dt;
    t->opk = opk;
    t->op = op_get(opk, dt);
    t->comm = comm;
    t->inplace = inplace;
    t->count = count;
    t->req = MPI_REQUEST_NULL;
    t->id = id;
    MPI_Comm_rank(comm, &t->rank);
    MPI_Comm_size(comm, &t->size);
    t->rcounts = xmalloc(sizeof(int) * (size_t)t->size);
    t->displs = xmalloc(sizeof(int) * (size_t)t->size);
    int total = 0;
    for (int r = 0; r < t->size; r++) {
        t->rcounts[r] = (kind == K_RS) ? rcounts[r] : count;
        t->displs[r] = total;
        total += t->rcounts[r];
    }
    if (kind == K_RS || kind == K_RSB) {
        t->nin = total;
        t->nout = t->rcounts[t->rank];
    } else {
        t->nin = t->nout = count;
    }
    t->in_bytes = (size_t)t->nin * dt->extent;
    t->rbuf_bytes = inplace ? t->in_bytes : (size_t)t->nout * dt->extent;
    if (!inplace) {
        t->sbuf = xmalloc(t->in_bytes);
        t->scopy = xmalloc(t->in_bytes);
    }
    t->rbuf = xmalloc(t->rbuf_bytes + GUARD);
    t->rinit = xmalloc(t->rbuf_bytes + GUARD);
    t->exp = xmalloc(t->in_bytes);
    t->tmp = xmalloc(t->in_bytes);
}

static void tc_release(tc_t *t)
{
    free(t->rcounts);
    free(t->displs);
    free(t->sbuf);
    free(t->scopy);
    free(t->rbuf);
    free(t->rinit);
    free(t->exp);
    free(t->tmp);
    memset(t, 0, sizeof *t);
}

static const void *tc_sendarg(const tc_t *t)
{
    return t->inplace ? MPI_IN_PLACE : t->sbuf;
}

static int tc_init(tc_t *t, MPI_Info info)
{
    /* junk at init time: data must be read at start, not at init */
    if (t->sbuf) memset(t->sbuf, JUNK_SEND, t->in_bytes);
    memset(t->rbuf, JUNK_RECV, t->rbuf_bytes + GUARD);
    switch (t->kind) {
    case K_RS:
        return MPIX_Reduce_scatter_init(tc_sendarg(t), t->rbuf, t->rcounts, t->dt.type, t->op,
                                        t->comm, info, &t->req);
    case K_RSB:
        return MPIX_Reduce_scatter_block_init(tc_sendarg(t), t->rbuf, t->count, t->dt.type,
                                              t->op, t->comm, info, &t->req);
    case K_SCAN:
        return MPIX_Scan_init(tc_sendarg(t), t->rbuf, t->count, t->dt.type, t->op, t->comm,
                              info, &t->req);
    case K_EXSCAN:
        return MPIX_Exscan_init(tc_sendarg(t), t->rbuf, t->count, t->dt.type, t->op, t->comm,
                                info, &t->req);
    }
    return MPI_ERR_ARG;
}

/* The blocking twin, same buffers (not in place). */
static int tc_blocking(tc_t *t)
{
    switch (t->kind) {
    case K_RS:
        return MPI_Reduce_scatter(t->sbuf, t->rbuf, t->rcounts, t->dt.type, t->op, t->comm);
    case K_RSB:
        return MPI_Reduce_scatter_block(t->sbuf, t->rbuf, t->count, t->dt.type, t->op, t->comm);
    case K_SCAN:
        return MPI_Scan(t->sbuf, t->rbuf, t->count, t->dt.type, t->op, t->comm);
    case K_EXSCAN:
        return MPI_Exscan(t->sbuf, t->rbuf, t->count, t->dt.type, t->op, t->comm);
    }
    return MPI_ERR_ARG;
}

/* New inputs for iteration `it`, poisoned receive buffer and guard. */
static void tc_prepare(tc_t *t, int it)
{
    uint64_t seed = input_seed(t->id, it, t->rank);
    memset(t->rbuf, POISON_RECV, t->rbuf_bytes + GUARD);
    if (t->inplace) {
        fill_input(t->rbuf, &t->dt, t->nin, t->opk, seed);
    } else {
        fill_send(t->sbuf, t->scopy, &t->dt, t->nin, t->opk, seed);
    }
    memcpy(t->rinit, t->rbuf, t->rbuf_bytes + GUARD);
}

/* exp = x_lo op (x_lo+1 op (... op x_hi)) over the whole input vector;
 * holes carry the receive poison. */
static void tc_reference(tc_t *t, int it, int lo, int hi)
{
    fold_reference(t->exp, t->tmp, &t->dt, t->nin, t->opk, t->id, it, lo, hi);
}

/* Check iteration `it`'s result; 0 = ok, otherwise msg says why.
 * `blocking`: the result came from the blocking twin (exscan's rank 0
 * result is undefined there). */
static int tc_check(tc_t *t, int it, int blocking, char *msg, size_t len)
{
    char m[500];
    n_checks++;
    if (!t->inplace && memcmp(t->sbuf, t->scopy, t->in_bytes)) {
        compare_buffers(t->sbuf, t->scopy, &t->dt, t->nin, m, sizeof m);
        snprintf(msg, len, "send buffer modified: %s", m);
        return 1;
    }
    if (memcmp(t->rbuf + t->rbuf_bytes, t->rinit + t->rbuf_bytes, GUARD)) {
        snprintf(msg, len, "bytes written behind the end of rbuf (%zu bytes)", t->rbuf_bytes);
        return 1;
    }
    if (t->kind == K_EXSCAN && t->rank == 0) {
        if (!blocking && t->rbuf_bytes && memcmp(t->rbuf, t->rinit, t->rbuf_bytes)) {
            compare_buffers(t->rbuf, t->rinit, &t->dt, t->nout, m, sizeof m);
            snprintf(msg, len, "rank 0's exscan rbuf was modified: %s", m);
            return 1;
        }
        return 0;
    }
    if (t->nout == 0) return 0;
    size_t off = 0;
    switch (t->kind) {
    case K_RS:
    case K_RSB:
        tc_reference(t, it, 0, t->size - 1);
        off = (size_t)t->displs[t->rank] * t->dt.extent;
        break;
    case K_SCAN:
        tc_reference(t, it, 0, t->rank);
        break;
    case K_EXSCAN:
        tc_reference(t, it, 0, t->rank - 1);
        break;
    }
    if (compare_buffers(t->rbuf, t->exp + off, &t->dt, t->nout, m, sizeof m)) {
        snprintf(msg, len, "%s", m);
        return 1;
    }
    return 0;
}

static void describe_counts(const tc_t *t, char *s, size_t len)
{
    if (t->kind != K_RS) {
        snprintf(s, len, "%d", t->count);
        return;
    }
    size_t used = (size_t)snprintf(s, len, "[");
    for (int r = 0; r < t->size && used < len; r++)
        used += (size_t)snprintf(s + used, len - used, "%s%d", r ? "," : "", t->rcounts[r]);
    if (used < len) snprintf(s + used, len - used, "]");
}

/* ------------------------------------------------------------------ one case */
static void prepare_it(void *t, int it)
{
    tc_prepare(t, it);
}

static int check_it(void *t, int it, char *msg, size_t len)
{
    return tc_check(t, it, 0, msg, len);
}

static void run_case(ctx_t *c, kind_t kind, const dtype_t *dt, opk_t opk, int count,
                     const int *rcounts, int inplace)
{
    tc_t t;
    char msg[600], counts[200];
    int rc;

    tc_setup(&t, kind, c->comm, dt, opk, count, rcounts, inplace, next_id++);
    describe_counts(&t, counts, sizeof counts);
    case_begin("coll=%s comm=%s np=%d count=%s type=%s op=%s in-place=%d", kind_name(kind),
               c->name, c->size, counts, dt->name, op_name(opk), inplace);
    rc = tc_init(&t, MPI_INFO_NULL);
    if (!case_init_ok(c->comm, rc, &t.req)) {
        tc_release(&t);
        return;
    }
    case_iterate(&t.req, ITERS, &t, prepare_it, check_it);
    case_free_req(&t.req);
    /* cross-check of the local reference with the blocking collective */
    if (!op_is_user(opk) && !dt->derived && !inplace && t.nin > 0) {
        int it = ITERS - 1;
        tc_prepare(&t, it);
        rc = tc_blocking(&t);
        case_cross_check(it, rc, rc == MPI_SUCCESS && tc_check(&t, it, 1, msg, sizeof msg), kind_name(kind), msg);
    }
    tc_release(&t);
}

/* ------------------------------------------------------------------ many outstanding */
/* Can this combination reach the collective at all? */
static int combo_allowed(opk_t op, const dtype_t *dt)
{
    return op_is_user(op) || !dt->derived || predefined_op_on_derived_ok;
}

static void multi_case(ctx_t *c)
{
    enum { N = 8 };
    tc_t ts[N];
    MPI_Request rq[N];
    int *rc1 = xmalloc(sizeof(int) * (size_t)c->size);
    int n = 0, ok = 1, rc;
    char msg[600];

    for (int r = 0; r < c->size; r++) rc1[r] = (r * 7) % 5;
    tc_setup(&ts[n++], K_RS, c->comm, &T_INT, OP_SUM, 0, rc1, 0, next_id++);
    tc_setup(&ts[n++], K_RS, c->comm, &T_MAT2V, OP_U_MATMUL, 0, rc1, 1, next_id++);
    tc_setup(&ts[n++], K_RSB, c->comm, &T_DOUBLE, OP_MAX, 33, NULL, 1, next_id++);
    tc_setup(&ts[n++], K_RSB, c->comm, &T_INT, OP_U_AFFINE, 5, NULL, 0, next_id++);
    tc_setup(&ts[n++], K_SCAN, c->comm, combo_allowed(OP_SUM, &T_VECD) ? &T_VECD : &T_DOUBLE,
             OP_SUM, 40, NULL, 0, next_id++);
    tc_setup(&ts[n++], K_SCAN, c->comm, &T_MAT2H, OP_U_MATMUL, 9, NULL, 1, next_id++);
    tc_setup(&ts[n++], K_EXSCAN, c->comm, &T_LONG, OP_BXOR, 100, NULL, 1, next_id++);
    tc_setup(&ts[n++], K_EXSCAN, c->comm, &T_MAT2C, OP_U_MATMUL, 17, NULL, 0, next_id++);
    free(rc1);

    case_begin("many-outstanding (%d requests, Startall/Waitall) comm=%s np=%d", n, c->name,
               c->size);
    for (int i = 0; i < n; i++) {
        rc = tc_init(&ts[i], MPI_INFO_NULL);
        if (rc != MPI_SUCCESS) {
            case_fail(-1, "init of request %d (%s) returned %s", i, kind_name(ts[i].kind),
                      err_class_str(rc));
            ok = 0;
        }
        rq[i] = ts[i].req;
    }
    if (all_ok(c->comm, ok)) {
        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < n; i++) tc_prepare(&ts[i], it);
            if (case_startall_waitall(n, rq, it) != MPI_SUCCESS) break;
            for (int i = 0; i < n; i++)
                if (tc_check(&ts[i], it, 0, msg, sizeof msg))
                    case_fail(it, "request %d (%s %s type=%s in-place=%d): %s", i,
                              kind_name(ts[i].kind), op_name(ts[i].opk), ts[i].dt.name,
                              ts[i].inplace, msg);
        }
    }
    for (int i = 0; i < n; i++) {
        if (rq[i] != MPI_REQUEST_NULL) MPI_Request_free(&rq[i]);
        tc_release(&ts[i]);
    }
}

/* ------------------------------------------------------------------ sweep */
#define NPATTERNS 6
/* reduce_scatter block sizes: pattern k, rank r of p */
static int rs_pattern(int k, int r, int p)
{
    switch (k) {
    case 0: return 0;                           /* all zero */
    case 1: return r + 1;                       /* uneven */
    case 2: return (r % 2) ? 0 : 3 + 2 * r;     /* zeros on odd ranks */
    case 3: return r == p - 1 ? 9 : 0;          /* one rank only */
    case 4: return r == 0 ? 0 : 1;              /* rank 0 empty */
    default: return 150 + 37 * r;               /* large, uneven */
    }
}

static void sweep(ctx_t *c)
{
    static const int counts_full[] = { 0, 1, 7, 600 };
    static const int counts_reduced[] = { 0, 5 };
    const int *counts = c->full ? counts_full : counts_reduced;
    int ncounts = c->full ? 4 : 2;
    combo_t combos[] = {
        { OP_SUM, &T_INT }, { OP_SUM, &T_DOUBLE }, { OP_MAX, &T_LONG }, { OP_MIN, &T_FLOAT },
        { OP_PROD, &T_DOUBLE }, { OP_BAND, &T_INT }, { OP_BOR, &T_LONG }, { OP_BXOR, &T_BYTE },
        { OP_MINLOC, &T_DINT }, { OP_MAXLOC, &T_DINT },
        { OP_SUM, &T_CONTIG3I },        /* predefined op, derived contiguous */
        { OP_SUM, &T_VECD },            /* predefined op, derived non-contiguous */
        { OP_BXOR, &T_MAT2H },          /* predefined op, struct with holes */
        { OP_MAX, &T_MAT2V },
        { OP_U_AFFINE, &T_INT },        /* user, non-commutative, predefined type */
        { OP_U_MATMUL, &T_MAT2C },      /* user, non-commutative, derived types */
        { OP_U_MATMUL, &T_MAT2H },
        { OP_U_MATMUL, &T_MAT2V },
        { OP_U_DSUM, &T_VECD },         /* user, commutative, non-contiguous */
    };
    int ncombos = (int)(sizeof combos / sizeof combos[0]);
    int *rcounts = xmalloc(sizeof(int) * (size_t)c->size);

    for (int cb = 0; cb < ncombos; cb++) {
        const combo_t *k = &combos[cb];
        if (!c->full && cb % 3 != 0 && k->op != OP_U_MATMUL) continue;
        if (!combo_allowed(k->op, k->dt)) continue;
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < ncounts; i++) {
                run_case(c, K_SCAN, k->dt, k->op, counts[i], NULL, inplace);
                run_case(c, K_EXSCAN, k->dt, k->op, counts[i], NULL, inplace);
                run_case(c, K_RSB, k->dt, k->op, counts[i] > 200 ? 200 : counts[i], NULL, inplace);
            }
            for (int pat = 0; pat < NPATTERNS; pat++) {
                if (!c->full && pat != 2 && pat != 3) continue;
                for (int r = 0; r < c->size; r++) rcounts[r] = rs_pattern(pat, r, c->size);
                run_case(c, K_RS, k->dt, k->op, 0, rcounts, inplace);
            }
        }
    }
    free(rcounts);
}

/* Does the MPI layer let a predefined op with a derived datatype through? */
static int probe_predefined_op_on_derived(void)
{
    int in[3] = { 0 }, out[3];
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPIX_Scan_init(in, out, 1, T_CONTIG3I.type, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &r);
    if (rc == MPI_SUCCESS && r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    return all_ok(MPI_COMM_WORLD, rc == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    int quick = 0, wsize;
    test_init(&argc, &argv, "conf_reduce_scatter", &wrank, &wsize);
    parse_test_args(argc, argv, &quick);
    abort_unless(types_create() == MPI_SUCCESS && ops_create() == MPI_SUCCESS, "test datatypes/ops");

    predefined_op_on_derived_ok = probe_predefined_op_on_derived();
    if (!predefined_op_on_derived_ok && wrank == 0)
        printf("conf_reduce_scatter: note: predefined ops on derived datatypes are rejected by "
               "the MPI layer; those cases are skipped (run with --mca mpi_param_check 0)\n");
    ctx_t world = { MPI_COMM_WORLD, "world", wrank, wsize, !quick };
    ctx_t split;
    /* reversed rank order matters for the non-commutative ops */
    ctx_split_reversed(&split);

    sweep(&world);
    if (!quick) sweep(&split);
    /* the split groups ran different numbers of cases: re-synchronise the ids */
    MPI_Allreduce(MPI_IN_PLACE, &next_id, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    multi_case(&world);
    multi_case(&split);
    watchdog_arm(CASE_TIMEOUT, "conf_reduce_scatter final reduction of the results");

    totals_t sum = totals_sum();
    if (wrank == 0) printf("conf_reduce_scatter: %ld checks, %ld failures\n", sum.checks, sum.failed);
    MPI_Comm_free(&split.comm);
    ops_free();
    types_free();
    watchdog_disarm();
    MPI_Finalize();
    return sum.failed ? 1 : 0;
}
