/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers of the partitioned-communication tests; see part_common.h.
 */
#include "part_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ program */
void pt_ring(MPI_Comm *comm, int *dst, int *src)
{
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_dup(MPI_COMM_WORLD, comm);
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
    *dst = (wrank + 1) % wsize;
    *src = (wrank + wsize - 1) % wsize;
}

int pt_report(const char *prog)
{
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    watchdog_arm(60, "%s final", prog);
    totals_t t = totals_sum();
    if (wrank == 0)
        printf("%s %s np=%d: %ld cases, %ld checks, %ld failures\n", t.failed ? "FAIL" : "PASS", prog, wsize,
               t.cases, t.checks, t.failed);
    return t.failed ? 1 : 0;
}

/* ================================================================ data */
void pt_fill(unsigned char *buf, const dtype_t *dt, size_t lo, size_t hi, uint64_t seed)
{
    for (size_t k = lo; k < hi; k++) {
        unsigned char *e = buf + k * dt->extent;
        for (int f = 0; f < dt->nprim; f++)
            gen_field(e + dt->off[f], dt->kind[f], OP_NONE, mix64(seed ^ (k * MAXPRIM + (size_t)f)));
    }
}

void pt_expect(unsigned char *exp, size_t bytes, const dtype_t *dt, size_t n, uint64_t seed)
{
    memset(exp, POISON_RECV, bytes + PT_GUARD);
    pt_fill(exp, dt, 0, n, seed);
}

int pt_cmp(const unsigned char *got, const unsigned char *exp, size_t lo, size_t hi, const dtype_t *dt,
           char *msg, size_t len)
{
    size_t d = lo + first_diff(got + lo, exp + lo, hi - lo);
    if (d == hi) return 0;
    size_t k = d / dt->extent, o = d % dt->extent;
    const char *where = "a hole";
    for (int f = 0; f < dt->nprim; f++)
        if (o >= dt->off[f] && o < dt->off[f] + prim_size(dt->kind[f])) where = "a field";
    size_t nd = 0;
    for (size_t i = d; i < hi; i++) nd += got[i] != exp[i];
    snprintf(msg, len, "byte %zu (element %zu + %zu, %s%s) is 0x%02x, expected 0x%02x; %zu bytes differ in [%zu, %zu)",
             d, k, o, where, exp[d] == POISON_RECV ? ", must keep the poison" : "", got[d], exp[d], nd, lo, hi);
    return 1;
}

void pt_shuffle(int *a, int n, uint64_t *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(pt_rand(rng) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ================================================================ plans */
const char *pt_mode_name(pmode_t m)
{
    static const char *names[] = { "inorder", "reverse", "random", "range", "list", "mixed" };
    return m < PM_NMODES ? names[m] : "?";
}

void pt_plan_make(pt_plan_t *p, int parts, pmode_t mode, uint64_t seed)
{
    uint64_t rng = seed;
    p->n = parts;
    p->order = xmalloc(sizeof(int) * (size_t)parts);
    p->gstart = xmalloc(sizeof(int) * (size_t)(parts + 1));
    p->gkind = xmalloc((size_t)parts + 1);
    p->ngroups = 0;
    if (mode == PM_INORDER || mode == PM_REVERSE || mode == PM_RANDOM) {
        for (int i = 0; i < parts; i++) p->order[i] = mode == PM_REVERSE ? parts - 1 - i : i;
        if (mode == PM_RANDOM) pt_shuffle(p->order, parts, &rng);
        for (int i = 0; i < parts; i++) {
            p->gstart[i] = i;
            p->gkind[i] = 'p';
        }
        p->ngroups = parts;
        p->gstart[parts] = parts;
        return;
    }
    /* contiguous chunks of random length 1..4, taken in a random order */
    int nch = 0, *cs = xmalloc(sizeof(int) * (size_t)(parts + 1)), *cl = xmalloc(sizeof(int) * (size_t)(parts + 1));
    for (int i = 0; i < parts;) {
        int len = 1 + (int)(pt_rand(&rng) % 4);
        if (len > parts - i) len = parts - i;
        cs[nch] = i;
        cl[nch++] = len;
        i += len;
    }
    int *perm = xmalloc(sizeof(int) * (size_t)(nch + 1));
    for (int c = 0; c < nch; c++) perm[c] = c;
    pt_shuffle(perm, nch, &rng);
    int pos = 0;
    for (int c = 0; c < nch; c++) {
        int s = cs[perm[c]], len = cl[perm[c]];
        char kind = mode == PM_RANGE ? 'r' : 'l';
        if (mode == PM_MIXED) kind = "prl"[pt_rand(&rng) % 3];
        if (kind == 'p') {      /* one MPI_Pready per partition of the chunk */
            for (int i = 0; i < len; i++) {
                p->gstart[p->ngroups] = pos;
                p->gkind[p->ngroups++] = 'p';
                p->order[pos++] = s + i;
            }
            continue;
        }
        p->gstart[p->ngroups] = pos;
        p->gkind[p->ngroups++] = kind;
        for (int i = 0; i < len; i++) p->order[pos + i] = s + i;
        if (kind == 'l') pt_shuffle(p->order + pos, len, &rng);
        pos += len;
    }
    p->gstart[p->ngroups] = pos;
    free(perm);
    free(cs);
    free(cl);
}

void pt_plan_free(pt_plan_t *p)
{
    free(p->order);
    free(p->gstart);
    free(p->gkind);
    memset(p, 0, sizeof *p);
}

int pt_plan_exec(const pt_plan_t *p, int g, MPI_Request req)
{
    int s = p->gstart[g], e = p->gstart[g + 1];
    switch (p->gkind[g]) {
    case 'r': return MPI_Pready_range(p->order[s], p->order[e - 1], req);
    case 'l': return MPI_Pready_list(e - s, p->order + s, req);
    default: return MPI_Pready(p->order[s], req);
    }
}

/* ================================================================ completion */
const char *pt_method_name(int m)
{
    static const char *names[] = { "Wait", "Waitall", "Waitany", "Waitsome",
                                   "Test", "Testall", "Testany", "Testsome" };
    return m >= 0 && m < CM_N ? names[m] : "?";
}

/* the error of a multi-completion call: the first failing status */
static int in_status(int rc, int n, const int *idx, const MPI_Status *st)
{
    if (rc != MPI_ERR_IN_STATUS) return rc;
    for (int i = 0; i < n; i++) {
        int e = st[idx ? idx[i] : i].MPI_ERROR;
        if (e != MPI_SUCCESS && e != MPI_ERR_PENDING) return e;
    }
    return rc;
}

#ifdef MPICH_VERSION
static MPI_Request *pt_live(MPI_Request *live, const MPI_Request *rq, const char *fin, int n)
{
    for (int i = 0; i < n; i++) live[i] = fin[i] ? MPI_REQUEST_NULL : rq[i];
    return live;
}
#endif

int pt_complete(int method, int n, MPI_Request *rq, MPI_Status *st, int *timedout)
{
    int rc = MPI_SUCCESS, first = MPI_SUCCESS, done = 0, flag, idx, outc;
    int ids[16];
    MPI_Status tmp[16];
    double t0 = now_sec();
    *timedout = 0;
    if (n > 16) return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) st[i].MPI_ERROR = MPI_SUCCESS;
#ifdef MPICH_VERSION
    /* MPICH 4.0.2 (known wrong): MPI_Waitany / Waitsome / ... return an
     * inactive persistent collective request again (the index of a request
     * completed before, with an empty status).  Under MPICH the requests
     * completed so far are passed as MPI_REQUEST_NULL instead (in a copy:
     * the caller's handles stay); elsewhere the array as it is, inactive
     * requests included, as MPI allows. */
    MPI_Request live[16];
#define PT_LIVE() (pt_live(live, rq, fin, n))
#else
#define PT_LIVE() (rq)
#endif
    /* a request reported complete twice in one round is an error */
    char fin[16] = { 0 };
#define PT_DONE(i)                                                                                   \
    do {                                                                                             \
        if (fin[i]) {                                                                                \
            fail_line("pt_complete", -1, "MPI_%s reported request %d complete a second time (an "    \
                      "inactive request)", pt_method_name(method), (i));                             \
            return MPI_ERR_REQUEST;                                                                  \
        }                                                                                            \
        fin[i] = 1;                                                                                  \
    } while (0)
#define PT_KEEP(r) do { if ((r) != MPI_SUCCESS && first == MPI_SUCCESS) first = (r); } while (0)
#define PT_SPIN() do { if (now_sec() - t0 > PT_POLL_LIMIT) { *timedout = 1; return MPI_ERR_PENDING; } } while (0)
    switch (method) {
    case CM_WAIT:
        for (int i = 0; i < n; i++) PT_KEEP(MPI_Wait(&rq[i], &st[i]));
        break;
    case CM_WAITALL:
        rc = MPI_Waitall(n, rq, st);
        PT_KEEP(in_status(rc, n, NULL, st));
        break;
    case CM_WAITANY:
        for (done = 0; done < n; done++) {
            rc = MPI_Waitany(n, PT_LIVE(), &idx, &tmp[0]);
            if (idx == MPI_UNDEFINED) return rc != MPI_SUCCESS ? rc : MPI_ERR_REQUEST;
            st[idx] = tmp[0];
            PT_DONE(idx);
            PT_KEEP(rc);
        }
        break;
    case CM_WAITSOME:
    case CM_TESTSOME:
        while (done < n) {
            if (method == CM_WAITSOME)
                rc = MPI_Waitsome(n, PT_LIVE(), &outc, ids, tmp);
            else
                rc = MPI_Testsome(n, PT_LIVE(), &outc, ids, tmp);
            if (outc == MPI_UNDEFINED) return rc != MPI_SUCCESS ? rc : MPI_ERR_REQUEST;
            for (int i = 0; i < outc; i++) {
                st[ids[i]] = tmp[i];
                PT_DONE(ids[i]);
            }
            if (rc == MPI_ERR_IN_STATUS) {
                for (int i = 0; i < outc; i++) PT_KEEP(tmp[i].MPI_ERROR);
            } else {
                PT_KEEP(rc);
            }
            done += outc;
            if (method == CM_TESTSOME && done < n) PT_SPIN();
        }
        break;
    case CM_TEST:
        for (int i = 0; i < n; i++) {
            do {
                rc = MPI_Test(&rq[i], &flag, &st[i]);
                PT_SPIN();
            } while (rc == MPI_SUCCESS && !flag);
            PT_KEEP(rc);
        }
        break;
    case CM_TESTALL:
        do {
            rc = MPI_Testall(n, PT_LIVE(), &flag, tmp);
#ifdef MPICH_VERSION
            /* MPICH 4.0.2 (known wrong): MPI_Testall over partitioned
             * requests returns MPI_ERR_IN_STATUS with no failed status
             * (MPI_SUCCESS for the requests it completed, MPI_ERR_PENDING
             * for the others).  Only that case is accepted: the completed
             * ones are kept and left out of the next calls. */
            if (rc == MPI_ERR_IN_STATUS && in_status(rc, n, NULL, tmp) == MPI_ERR_IN_STATUS) {
                int all = 1;
                for (int i = 0; i < n; i++) {
                    if (!fin[i] && tmp[i].MPI_ERROR == MPI_SUCCESS) {
                        st[i] = tmp[i];
                        fin[i] = 1;
                    }
                    all &= fin[i];
                }
                rc = MPI_SUCCESS;
                flag = all;
                continue;
            }
#endif
            if (rc == MPI_SUCCESS && flag)
                for (int i = 0; i < n; i++)
                    if (!fin[i]) st[i] = tmp[i];
            PT_SPIN();
        } while (rc == MPI_SUCCESS && !flag);
        if (rc == MPI_ERR_IN_STATUS)
            for (int i = 0; i < n; i++)
                if (!fin[i]) st[i] = tmp[i];
#ifdef OPEN_MPI
        /* Open MPI 4.1 (known wrong, ob1's persistent requests too):
         * MPI_Testall returns MPI_SUCCESS when a persistent request
         * completed with an error, which is only in its status */
        if (rc == MPI_SUCCESS)
            for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
                if (st[i].MPI_ERROR != MPI_SUCCESS) rc = st[i].MPI_ERROR;
#endif
        PT_KEEP(in_status(rc, n, NULL, st));
        break;
    case CM_TESTANY:
        while (done < n) {
            rc = MPI_Testany(n, PT_LIVE(), &idx, &flag, &tmp[0]);
            if (rc != MPI_SUCCESS && idx == MPI_UNDEFINED) return rc;
            if (flag && idx == MPI_UNDEFINED) return MPI_ERR_REQUEST;   /* none active: lost a request */
            if (flag) {
                st[idx] = tmp[0];
                PT_DONE(idx);
                PT_KEEP(rc);
                done++;
            }
            PT_SPIN();
        }
        break;
    default:
        return MPI_ERR_ARG;
    }
#undef PT_KEEP
#undef PT_SPIN
#undef PT_LIVE
#undef PT_DONE
    return first;
}

/* ================================================================ errors */
int pt_class(int rc)
{
    int c = rc;
    if (MPI_Error_class(rc, &c) != MPI_SUCCESS) return rc;
    return c;
}

const char *pt_class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_TAG: return "MPI_ERR_TAG";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
    default: return "(other class)";
    }
}

int pt_expect_class(int rc, int cls, const char *what, int it)
{
    n_checks++;
    if (pt_class(rc) == cls) return 1;
    case_fail(it, "%s: expected %s, got %s", what, pt_class_name(cls), err_class_str(rc));
    return 0;
}

/* ================================================================ status */
int pt_check_status(const MPI_Status *st, int src, int tag, MPI_Datatype dt, MPI_Count n, int it)
{
    int cnt = -1;
    n_checks++;
    MPI_Get_count(st, dt, &cnt);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || (MPI_Count)cnt != n) {
        case_fail(it, "receive status: source %d tag %d count %d, expected %d / %d / %lld", st->MPI_SOURCE,
                  st->MPI_TAG, cnt, src, tag, (long long)n);
        return 0;
    }
    return 1;
}
