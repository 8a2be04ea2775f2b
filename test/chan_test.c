/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * chan_test: persistent point-to-point channels and K-slack channels
 * (MPIX_Bind_channel, ..., libpnbc).
 *
 *   chan_test [data|slack|order|mixed|long N]...     (default: the first four)
 *
 * data   ping-pong between rank pairs (2i, 2i+1) (completed by MPI_Wait,
 *        _all, _any, _some and MPI_Test, _all, _any, _some in turn) and a
 *        ring over all ranks (MPI_Waitall),
 *        8 B .. 4 MiB, contiguous MPI_INT and a strided type with a hole
 *        per element (the holes must keep the receiver's poison); every
 *        transfer checked against data computed locally from (seed, it).
 *        While bound, the receiver's shm pool exists (when
 *        CHAN_EXPECT_SHM=1; none with CHAN_EXPECT_SHM=0, the transport
 *        turned off); after the unbind no channel file is left.
 * slack  K-slack ring, K = 1, 2, 5, 16, address_base_increment default,
 *        2*count (gaps between slots) and -count (slots going down): per
 *        round m = 1..K starts (MPIX_Start_slack) then one MPI_Wait; every slot
 *        checked, the gaps must keep the poison.
 * order  MPIX_Bind_channels of 6 channels on two communicators, the two
 *        sides passing them in opposite orders; data routed by tag.
 * mixed  one MPI_Startall over channels, a persistent allreduce, a
 *        partitioned send/receive pair and ob1 MPI_Send_init/Recv_init.
 * long N ping-pong of N 8-byte transfers each way, each one checked.
 */
#define _GNU_SOURCE
#include "pnbc_mpi4.h"
#include "shm_dirs.h"

#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POISON 0xA5
static int rank, size, fails;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            if (fails++ < 20) {                                              \
                printf("FAIL chan_test rank %d: ", rank);                    \
                printf(__VA_ARGS__);                                         \
                printf("\n");                                                \
                fflush(stdout);                                              \
            }                                                                \
        }                                                                    \
    } while (0)
#define MPI_OK(call) CHECK(MPI_SUCCESS == (call), "%s failed (line %d)", #call, __LINE__)

static uint32_t val(uint64_t seed, size_t k)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + k * 0xBF58476D1CE4E5B9ull + 1;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    return (uint32_t) (x ^ (x >> 29));
}

/* A message type: `count` elements of `type`, element k an int at k*stride. */
typedef struct {
    MPI_Datatype type;
    int stride;         /* ints per element (1: contiguous, 2: a hole each) */
    const char *name;
} mtype_t;
static mtype_t types[2];

static void types_make(void)
{
    MPI_Datatype v;
    types[0] = (mtype_t) { MPI_INT, 1, "int" };
    MPI_Type_vector(1, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 2 * sizeof(int), &types[1].type);
    MPI_Type_commit(&types[1].type);
    MPI_Type_free(&v);
    types[1].stride = 2;
    types[1].name = "strided";
}

static void fill(int *buf, const mtype_t *t, size_t count, uint64_t seed)
{
    for (size_t k = 0; k < count; ++k) {
        buf[k * t->stride] = (int) val(seed, k);
    }
}

/* Data of `seed` in the elements, poison in the holes. */
static int check(const int *buf, const mtype_t *t, size_t count, uint64_t seed)
{
    const unsigned char *b = (const unsigned char *) buf;
    for (size_t k = 0; k < count; ++k) {
        if (buf[k * t->stride] != (int) val(seed, k)) {
            return (int) k + 1;
        }
        for (int h = 1; h < t->stride; ++h) {
            const unsigned char *p = b + (k * t->stride + h) * sizeof(int);
            for (size_t j = 0; j < sizeof(int); ++j) {
                if (POISON != p[j]) {
                    return -(int) k - 1;
                }
            }
        }
    }
    return 0;
}

static uint64_t seed_of(int tcase, int it, int from) { return ((uint64_t) tcase << 40) ^ ((uint64_t) it << 12) ^ (uint64_t) from; }

/* Files `name` in this job's pnbc shm directories
 * (pnbc.<node>.<uid>.<jobid hex>.<vpid>.<key>/): "pool.0", the first
 * segment of a process's shared-memory pool, exists once a receiver has
 * placed a request there; "*.8f[45]?????", a channel's fallback marker
 * (<cid>.<tag>, hex; channel tags -1890000000 - id = 0x8f58e380 - id),
 * only while the channel is bound. */
static int chan_files(char ***names, const char *name)
{
    glob_t g;
    int n = 0;
    *names = NULL;
    char pat[128];
    char job[96];
    if (!shm_own_token(0, job, sizeof(job))) {
        return 0;   /* this process has no directory: none of its job's seen */
    }
    snprintf(pat, sizeof(pat), "/dev/shm/pnbc.*%s*/%s", job, name);  /* only this job's */
    if (0 == glob(pat, 0, NULL, &g)) {
        *names = calloc(g.gl_pathc, sizeof(char *));
        for (size_t i = 0; i < g.gl_pathc; ++i) {
            (*names)[n++] = strdup(g.gl_pathv[i]);
        }
        globfree(&g);
    }
    return n;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; ++i) free(names[i]);
    free(names);
}

/* Complete one started request with one of 8 MPI_Wait* / MPI_Test* calls
 * (chosen by `it`). */
static int complete1(MPI_Request *r, MPI_Status *st, int it)
{
    int flag = 0, idx, n, rc = MPI_SUCCESS;
    MPI_Status tmp;
    if (MPI_STATUS_IGNORE == st) st = &tmp;
    switch (it % 8) {
    case 0: return MPI_Wait(r, st);
    case 1: return MPI_Waitall(1, r, st);
    case 2: return MPI_Waitany(1, r, &idx, st);
    case 3: return MPI_Waitsome(1, r, &n, &idx, st);
    case 4: while (MPI_SUCCESS == rc && !flag) rc = MPI_Test(r, &flag, st); return rc;
    case 5: while (MPI_SUCCESS == rc && !flag) rc = MPI_Testall(1, r, &flag, st); return rc;
    case 6: while (MPI_SUCCESS == rc && !flag) rc = MPI_Testany(1, r, &idx, &flag, st); return rc;
    default:
        for (n = 0; MPI_SUCCESS == rc && 0 == n;) rc = MPI_Testsome(1, r, &n, &idx, st);
        return rc;
    }
}

/* ---------------------------------------------------------------- data */

/* One channel pair of this rank: send to `to`, receive from `from`. */
static void exchange_case(int tcase, const mtype_t *t, size_t count, int iters, int to, int from,
                          int pingpong_first)
{
    const size_t bytes = count * t->stride * sizeof(int);
    int *sbuf = malloc(bytes), *rbuf = malloc(bytes);
    MPI_Request in[2], ch[2];
    memset(sbuf, 0, bytes);
    MPI_OK(MPI_Send_init(sbuf, (int) count, t->type, to, 100 + tcase, MPI_COMM_WORLD, &in[0]));
    MPI_OK(MPI_Recv_init(rbuf, (int) count, t->type, from, 100 + tcase, MPI_COMM_WORLD, &in[1]));
    int rc = MPIX_Bind_channels(in, ch, 2, NULL);
    CHECK(MPI_SUCCESS == rc, "bind case %d rc %d", tcase, rc);
    if (MPI_SUCCESS != rc) return;
    if (getenv("CHAN_EXPECT_SHM") && to != rank) {
        char **names;
        const int want = atoi(getenv("CHAN_EXPECT_SHM"));
        int n = chan_files(&names, "pool.0");
        CHECK(want ? n > 0 : 0 == n, "shm %s but %d pool segment(s) in /dev/shm/pnbc.*",
              want ? "expected" : "off", n);
        free_names(names, n);
    }
    for (int it = 0; it < iters; ++it) {
        memset(rbuf, POISON, bytes);
        fill(sbuf, t, count, seed_of(tcase, it, rank));
        MPI_Status st;
        if (pingpong_first < 0) {           /* ring: both at once */
            MPI_OK(MPI_Start(&ch[1]));
            MPI_OK(MPI_Start(&ch[0]));
            MPI_Status sts[2];
            MPI_OK(MPI_Waitall(2, ch, sts));
            st = sts[1];
        } else if (pingpong_first) {        /* ping, then wait for the pong */
            MPI_OK(MPI_Start(&ch[1]));
            MPI_OK(MPI_Start(&ch[0]));
            MPI_OK(complete1(&ch[0], MPI_STATUS_IGNORE, it + 3));
            MPI_OK(complete1(&ch[1], &st, it));
        } else {
            MPI_OK(MPI_Start(&ch[1]));
            MPI_OK(complete1(&ch[1], &st, it));
            MPI_OK(MPI_Start(&ch[0]));
            MPI_OK(complete1(&ch[0], MPI_STATUS_IGNORE, it + 5));
        }
        int bad = check(rbuf, t, count, seed_of(tcase, it, from));
        CHECK(0 == bad, "case %d %s count %zu it %d: element %d wrong%s", tcase, t->name, count, it,
              bad < 0 ? -bad - 1 : bad - 1, bad < 0 ? " (hole overwritten)" : "");
        int got = -1;
        MPI_Get_count(&st, t->type, &got);
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 100 + tcase && got == (int) count,
              "status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, got);
    }
    rc = MPIX_Unbind_channels(ch, 2);
    CHECK(MPI_SUCCESS == rc && MPI_REQUEST_NULL == ch[0] && MPI_REQUEST_NULL == ch[1], "unbind rc %d", rc);
    /* the user's requests still work on their own */
    fill(sbuf, t, count, seed_of(tcase, 999999, rank));
    memset(rbuf, POISON, bytes);
    MPI_OK(MPI_Startall(2, in));
    MPI_OK(MPI_Waitall(2, in, MPI_STATUSES_IGNORE));
    CHECK(0 == check(rbuf, t, count, seed_of(tcase, 999999, from)), "request_in after unbind");
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
    free(sbuf);
    free(rbuf);
}

static void case_data(void)
{
    static const size_t bytes[] = { 8, 64, 1024, 16384, 65536, 1 << 20, 4 << 20 };
    int tcase = 0;
    for (int ti = 0; ti < 2; ++ti) {
        for (size_t b = 0; b < sizeof(bytes) / sizeof(bytes[0]); ++b) {
            const size_t count = bytes[b] / sizeof(int);
            const int iters = bytes[b] <= 1024 ? 500 : bytes[b] <= 65536 ? 100 : 8;
            const int partner = rank ^ 1;
            tcase++;
            if (partner < size) {
                exchange_case(tcase, &types[ti], count, iters, partner, partner, rank < partner);
            }
            tcase++;
            exchange_case(tcase, &types[ti], count, iters, (rank + 1) % size,
                          (rank + size - 1) % size, -1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    char **names;
    int n = chan_files(&names, "*.8f[45]?????");
    CHECK(0 == n, "%d channel file(s) left after unbind, e.g. %s", n, n ? names[0] : "");
    free_names(names, n);
    MPI_Barrier(MPI_COMM_WORLD);    /* nobody binds again before all looked */
}

/* ---------------------------------------------------------------- slack */

static void slack_case(int K, int mode, const mtype_t *t, size_t count, int rounds)
{
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    const long incr = 0 == mode ? (long) count : 1 == mode ? 2 * (long) count : -(long) count;
    const long aincr = incr < 0 ? -incr : incr;
    const size_t ext = t->stride * sizeof(int);
    const size_t span = ((size_t) (K - 1) * aincr + count) * ext;
    char *sraw = malloc(span), *rraw = malloc(span);
    char *sbase = sraw + (incr < 0 ? (size_t) (K - 1) * aincr * ext : 0);
    char *rbase = rraw + (incr < 0 ? (size_t) (K - 1) * aincr * ext : 0);
    MPI_Info info = MPI_INFO_NULL;
    if (0 != mode) {
        char v[32];
        snprintf(v, sizeof(v), "%ld", incr);
        MPI_Info_create(&info);
        MPI_Info_set(info, "address_base_increment", v);
    }
    MPI_Request in[2], ch[2];
    MPI_Info infos[2] = { info, info };
    int ks[2] = { K, K };
    memset(sraw, 0, span);
    MPI_OK(MPI_Send_init(sbase, (int) count, t->type, to, 7, MPI_COMM_WORLD, &in[0]));
    MPI_OK(MPI_Recv_init(rbase, (int) count, t->type, from, 7, MPI_COMM_WORLD, &in[1]));
    int rc = MPIX_Bind_slack_channels(in, ch, 2, ks, infos);
    CHECK(MPI_SUCCESS == rc, "slack bind K %d rc %d", K, rc);
    if (MPI_SUCCESS != rc) return;
    long n = 0;     /* starts so far (the same on every rank) */
    for (int r = 0; r < rounds; ++r) {  /* never stop early: the peers would hang */
        const int m = 1 + r % K;
        memset(rraw, POISON, span);
        for (int j = 0; j < m; ++j) {       /* receives first: ready semantics */
            MPI_OK(MPIX_Start_slack(&ch[1]));
        }
        for (int j = 0; j < m; ++j) {
            long s = n + j;
            fill((int *) (sbase + (s % K) * incr * (long) ext), t, count, seed_of(K * 10 + mode, (int) s, rank));
            MPI_OK(MPIX_Start_slack(&ch[0]));
        }
        MPI_OK(MPI_Wait(&ch[1], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&ch[0], MPI_STATUS_IGNORE));
        /* every slot: data of its start, or poison when not used */
        for (int slot = 0; slot < K; ++slot) {
            const int *p = (const int *) (rbase + slot * incr * (long) ext);
            long s = -1;
            for (int j = 0; j < m; ++j) if ((n + j) % K == slot) s = n + j;
            if (s >= 0) {
                int bad = check(p, t, count, seed_of(K * 10 + mode, (int) s, from));
                CHECK(0 == bad, "K %d mode %d %s round %d slot %d: element %d wrong", K, mode, t->name, r, slot,
                      bad < 0 ? -bad - 1 : bad - 1);
            } else {
                const unsigned char *c = (const unsigned char *) p;
                int clean = 1;
                for (size_t b = 0; b < count * ext; ++b) clean &= (POISON == c[b]);
                CHECK(clean, "K %d mode %d round %d: unused slot %d written", K, mode, r, slot);
            }
        }
        if (aincr > (long) count) {          /* the gaps between slots */
            const unsigned char *c = (const unsigned char *) rraw;
            for (int slot = 0; slot + 1 < K; ++slot) {
                size_t lo = ((size_t) slot * aincr + count) * ext, hi = (size_t) (slot + 1) * aincr * ext;
                for (size_t b = lo; b < hi; ++b) {
                    CHECK(POISON == c[b], "K %d mode %d: gap byte %zu written", K, mode, b);
                    if (POISON != c[b]) break;
                }
            }
        }
        n += m;
        MPI_Barrier(MPI_COMM_WORLD);    /* the next round poisons the slots again */
    }
    CHECK(MPI_SUCCESS == MPIX_Unbind_channels(ch, 2), "slack unbind");
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
    if (MPI_INFO_NULL != info) MPI_Info_free(&info);
    free(sraw);
    free(rraw);
}

static void case_slack(void)
{
    static const int Ks[] = { 1, 2, 5, 16 };
    static const size_t counts[] = { 2, 1024, 32768 };  /* 8 B, 4 KiB, 128 KiB of ints */
    for (size_t k = 0; k < 4; ++k)
        for (int mode = 0; mode < 3; ++mode)
            for (int ti = 0; ti < 2; ++ti)
                for (size_t c = 0; c < 3; ++c)
                    slack_case(Ks[k], mode, &types[ti], counts[c], counts[c] > 1024 ? 2 * Ks[k] : 3 * Ks[k] + 4);
}

/* ---------------------------------------------------------------- order */

static void case_order(void)
{
    MPI_Comm c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);     /* collective: before leaving */
    if ((rank ^ 1) >= size) {
        MPI_Comm_free(&c2);
        return;
    }
    const int peer = rank ^ 1, low = rank < peer;
    enum { N = 6 };
    /* channel j: tag 40+j%3, on MPI_COMM_WORLD for j < 3, else on c2;
     * the lower rank sends j = 0,2,4 and receives 1,3,5 */
    int sbuf[N][4], rbuf[N][4];
    MPI_Request in[N], ch[N], in_order[N], ch_order[N];
    for (int j = 0; j < N; ++j) {
        MPI_Comm c = j < 3 ? MPI_COMM_WORLD : c2;
        const int sends = (j % 2 == 0) == low;
        if (sends) MPI_OK(MPI_Send_init(sbuf[j], 4, MPI_INT, peer, 40 + j % 3, c, &in[j]));
        else MPI_OK(MPI_Recv_init(rbuf[j], 4, MPI_INT, peer, 40 + j % 3, c, &in[j]));
    }
    for (int j = 0; j < N; ++j) in_order[j] = in[low ? j : N - 1 - j];
    int rc = MPIX_Bind_channels(in_order, ch_order, N, NULL);
    CHECK(MPI_SUCCESS == rc, "order bind rc %d", rc);
    for (int j = 0; j < N; ++j) ch[low ? j : N - 1 - j] = ch_order[j];
    for (int it = 0; it < 20 && MPI_SUCCESS == rc; ++it) {
        for (int j = 0; j < N; ++j) {
            memset(rbuf[j], POISON, sizeof(rbuf[j]));
            fill(sbuf[j], &types[0], 4, seed_of(50 + j, it, rank));
        }
        MPI_OK(MPI_Startall(N, ch));
        MPI_OK(MPI_Waitall(N, ch, MPI_STATUSES_IGNORE));
        for (int j = 0; j < N; ++j) {
            if ((j % 2 == 0) != low) CHECK(0 == check(rbuf[j], &types[0], 4, seed_of(50 + j, it, peer)), "order channel %d it %d", j, it);
        }
    }
    /* unbind in opposite orders too */
    if (MPI_SUCCESS == rc) {
        for (int j = 0; j < N; ++j) ch_order[j] = ch[low ? j : N - 1 - j];
        CHECK(MPI_SUCCESS == MPIX_Unbind_channels(ch_order, N), "order unbind");
    }
    for (int j = 0; j < N; ++j) MPI_Request_free(&in[j]);
    MPI_Comm_free(&c2);
}

/* ---------------------------------------------------------------- mixed */

static void case_mixed(void)
{
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    enum { C = 64, P = 4 };
    int cs[C] = { 0 }, cr[C], ps[C] = { 0 }, pr[C], os[C] = { 0 }, orv[C], ain = rank + 1, aout = 0;
    MPI_Request in[2], rq[7];
    MPI_OK(MPI_Send_init(cs, C, MPI_INT, to, 9, MPI_COMM_WORLD, &in[0]));
    MPI_OK(MPI_Recv_init(cr, C, MPI_INT, from, 9, MPI_COMM_WORLD, &in[1]));
    CHECK(MPI_SUCCESS == MPIX_Bind_channels(in, rq, 2, NULL), "mixed bind");
    MPI_OK(MPI_Allreduce_init(&ain, &aout, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
    MPI_OK(MPI_Psend_init(ps, P, C / P, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
    MPI_OK(MPI_Precv_init(pr, P, C / P, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[4]));
    MPI_OK(MPI_Send_init(os, C, MPI_INT, to, 9, MPI_COMM_WORLD, &rq[5]));
    MPI_OK(MPI_Recv_init(orv, C, MPI_INT, from, 9, MPI_COMM_WORLD, &rq[6]));
    for (int it = 0; it < 50; ++it) {
        memset(cr, POISON, sizeof(cr));
        memset(pr, POISON, sizeof(pr));
        memset(orv, POISON, sizeof(orv));
        fill(cs, &types[0], C, seed_of(60, it, rank));
        fill(ps, &types[0], C, seed_of(61, it, rank));
        fill(os, &types[0], C, seed_of(62, it, rank));
        ain = rank + it;
        MPI_OK(MPI_Startall(7, rq));
        for (int p = P - 1; p >= 0; --p) MPI_OK(MPI_Pready(p, rq[3]));
        MPI_OK(MPI_Waitall(7, rq, MPI_STATUSES_IGNORE));
        CHECK(0 == check(cr, &types[0], C, seed_of(60, it, from)), "mixed channel it %d", it);
        CHECK(0 == check(pr, &types[0], C, seed_of(61, it, from)), "mixed partitioned it %d", it);
        CHECK(0 == check(orv, &types[0], C, seed_of(62, it, from)), "mixed ob1 it %d", it);
        CHECK(aout == size * (size - 1) / 2 + size * it, "mixed allreduce it %d: %d", it, aout);
    }
    CHECK(MPI_SUCCESS == MPIX_Unbind_channels(rq, 2), "mixed unbind");
    for (int j = 2; j < 7; ++j) MPI_Request_free(&rq[j]);
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
}

/* ---------------------------------------------------------------- long */

static void case_long(int n)
{
    if ((rank ^ 1) >= size) return;
    const int peer = rank ^ 1, low = rank < peer;
    int s[2], r[2];
    MPI_Request in[2], ch[2];
    MPI_OK(MPI_Send_init(s, 2, MPI_INT, peer, 3, MPI_COMM_WORLD, &in[0]));
    MPI_OK(MPI_Recv_init(r, 2, MPI_INT, peer, 3, MPI_COMM_WORLD, &in[1]));
    CHECK(MPI_SUCCESS == MPIX_Bind_channels(in, ch, 2, NULL), "long bind");
    for (int it = 0; it < n; ++it) {
        s[0] = (int) val(it, rank);
        s[1] = it;
        r[0] = r[1] = -1;
        MPI_OK(MPI_Start(&ch[1]));
        if (low) {
            MPI_OK(MPI_Start(&ch[0]));
            MPI_OK(MPI_Wait(&ch[0], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&ch[1], MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Wait(&ch[1], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Start(&ch[0]));
            MPI_OK(MPI_Wait(&ch[0], MPI_STATUS_IGNORE));
        }
        CHECK(r[0] == (int) val(it, peer) && r[1] == it, "long it %d: got %d %d", it, r[0], r[1]);
    }
    CHECK(MPI_SUCCESS == MPIX_Unbind_channels(ch, 2), "long unbind");
    MPI_Request_free(&in[0]);
    MPI_Request_free(&in[1]);
}

int main(int argc, char **argv)
{
    int any = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    types_make();
    for (int i = 1; i < argc; ++i) {
        any = 1;
        if (!strcmp(argv[i], "data")) case_data();
        else if (!strcmp(argv[i], "slack")) case_slack();
        else if (!strcmp(argv[i], "order")) case_order();
        else if (!strcmp(argv[i], "mixed")) case_mixed();
        else if (!strcmp(argv[i], "long") && i + 1 < argc) case_long(atoi(argv[++i]));
        else CHECK(0, "unknown argument %s", argv[i]);
    }
    if (!any) {
        case_data();
        case_slack();
        case_order();
        case_mixed();
    }
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) printf("%s chan_test np=%d\n", fails ? "FAIL" : "PASS", size);
    MPI_Type_free(&types[1].type);
    MPI_Finalize();
    return fails ? 1 : 0;
}
