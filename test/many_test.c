/*
 * many_test: many live persistent collective requests (the aim: a cost that
 * does not grow with the number of live requests).
 *
 *   many_test many N [ROUNDS]
 *       N live requests of mixed collectives and sizes (allreduce 8 B,
 *       1 KiB and 16 KiB, bcast with a rotating root, reduce, allgather,
 *       alltoall) on MPI_COMM_WORLD and a duplicate, all started by one
 *       MPI_Startall (in a different order on every rank) and completed by
 *       one MPI_Waitall, ROUNDS times (default 3), every result checked
 *       against values computed locally; then freed in reverse order.
 *   many_test big N [ROUNDS]
 *       the same with the largest requests 80 000 bytes instead of 64 KiB
 *   many_test late N [ROUNDS]
 *       the same, but in round k rank k % size starts 20 ms after the
 *       others, which meanwhile call MPI_Test on an unrelated receive:
 *       with many requests active, those waiting on one peer are parked on
 *       its bell (coll_pnbc_progress_park_min) and must wake up when the
 *       late rank's messages (through shared memory or the PML) arrive
 *   many_test churn K
 *       K init / start / wait / free cycles of the same mix (one request at
 *       a time, sizes cycling up to 64 KiB): the resident set after the
 *       first 10% of the cycles may grow by at most 4 MiB, and this
 *       process's pnbc shared-memory directory holds only its pool's files
 *       (pool.dir, pool.<k>) -- no file per request -- at the end.
 *
 * Inputs: element i of request r on rank p in round k is
 * (p * 7 + r * 13 + i + k) % 1000 (ints), so every expected value is
 * computed locally.  Run it with a tiny pool (coll_pnbc_shm_pool_comm_bytes)
 * to check that requests that do not fit fall back to the PML and still
 * compute the right results.
 */
#include "common.h"
#include "shm_dirs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { K_ALLREDUCE, K_BCAST, K_REDUCE, K_ALLGATHER, K_ALLTOALL, K_NKINDS };

typedef struct item_t {
    int kind, count, root;
    MPI_Comm comm;
    int *sbuf, *rbuf;
    MPI_Request req;
} item_t;

static int wrank, wsize, fails;

#define FAIL(...)                                                            \
    do {                                                                     \
        if (fails++ < 10) {                                                  \
            printf("FAIL many_test rank %d: ", wrank);                       \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

static int input(int p, int r, int i, int k)
{
    return (p * 7 + r * 13 + i + k) % 1000;
}

/* "big": the largest requests are 80 000 bytes instead of 64 KiB (in a
 * pool under pressure: offered for single copy, see slot_shape()). */
static int big, late;

/* The shape of request r (the same on every rank). */
static void shape(item_t *it, int r, int sizes, MPI_Comm dup)
{
    static const int counts[] = { 2, 256, 4096, 1, 16384 };
    static const int big_counts[] = { 2, 256, 4096, 1, 20000 };
    it->kind = r % K_NKINDS;
    it->count = (big ? big_counts : counts)[(r / K_NKINDS) % sizes];
    if (K_ALLGATHER == it->kind || K_ALLTOALL == it->kind) {
        it->count = (it->count + wsize - 1) / wsize;    /* per rank */
    }
    it->root = r % wsize;
    it->comm = (r % 3 == 2) ? dup : MPI_COMM_WORLD;
}

static size_t rbuf_count(const item_t *it)
{
    return (K_ALLGATHER == it->kind || K_ALLTOALL == it->kind) ? (size_t) it->count * wsize
                                                               : (size_t) it->count;
}

static int item_init(item_t *it)
{
    const size_t n = rbuf_count(it);
    it->sbuf = xmalloc(n * sizeof(int));
    it->rbuf = xmalloc(n * sizeof(int));
    switch (it->kind) {
    case K_ALLREDUCE:
        return MPIX_Allreduce_init(it->sbuf, it->rbuf, it->count, MPI_INT, MPI_SUM, it->comm,
                                   MPI_INFO_NULL, &it->req);
    case K_BCAST:
        return MPIX_Bcast_init(it->rbuf, it->count, MPI_INT, it->root, it->comm, MPI_INFO_NULL,
                               &it->req);
    case K_REDUCE:
        return MPIX_Reduce_init(it->sbuf, it->rbuf, it->count, MPI_INT, MPI_MAX, it->root,
                                it->comm, MPI_INFO_NULL, &it->req);
    case K_ALLGATHER:
        return MPIX_Allgather_init(it->sbuf, it->count, MPI_INT, it->rbuf, it->count, MPI_INT,
                                   it->comm, MPI_INFO_NULL, &it->req);
    default:
        return MPIX_Alltoall_init(it->sbuf, it->count, MPI_INT, it->rbuf, it->count, MPI_INT,
                                  it->comm, MPI_INFO_NULL, &it->req);
    }
}

static void item_fill(item_t *it, int r, int k)
{
    const size_t n = rbuf_count(it);
    for (size_t i = 0; i < n; ++i) {
        it->rbuf[i] = -1;
        it->sbuf[i] = input(wrank, r, (int) i, k);
    }
    if (K_BCAST == it->kind && wrank == it->root) {
        for (int i = 0; i < it->count; ++i) {
            it->rbuf[i] = input(it->root, r, i, k);
        }
    }
}

/* The expected element i of request r's result in round k, or INT_MIN
 * where the buffer is not significant. */
static int expected(const item_t *it, int r, int i, int k)
{
    int v = 0;
    switch (it->kind) {
    case K_ALLREDUCE:
        for (int p = 0; p < wsize; ++p) {
            v += input(p, r, i, k);
        }
        return v;
    case K_BCAST:
        return input(it->root, r, i, k);
    case K_REDUCE:
        if (wrank != it->root) {
            return -1;      /* untouched */
        }
        for (int p = 0; p < wsize; ++p) {
            v = (input(p, r, i, k) > v) ? input(p, r, i, k) : v;
        }
        return v;
    case K_ALLGATHER:
        return input(i / it->count, r, i % it->count, k);
    default:    /* block j of rank p's send buffer goes to rank j */
        return input(i / it->count, r, wrank * it->count + i % it->count, k);
    }
}

static void item_check(item_t *it, int r, int k)
{
    const size_t n = rbuf_count(it);
    for (size_t i = 0; i < n; ++i) {
        const int want = expected(it, r, (int) i, k);
        if (it->rbuf[i] != want) {
            FAIL("request %d (kind %d, count %d) round %d: element %zu is %d, expected %d", r,
                 it->kind, it->count, k, i, it->rbuf[i], want);
            return;
        }
    }
}

static void item_free(item_t *it)
{
    if (MPI_REQUEST_NULL != it->req) {
        MPI_Request_free(&it->req);
    }
    free(it->sbuf);
    free(it->rbuf);
}

/* "late": the late rank tells the others it has started; they make
 * progress meanwhile through MPI_Test of the receive of that word. */
static void round_late_rank(int lr)
{
    int word = 0, flag = 0;
    if (wrank == lr) {
        for (int p = 0; p < wsize; ++p) {
            if (p != lr) {
                MPI_Send(&word, 1, MPI_INT, p, 77, MPI_COMM_WORLD);
            }
        }
        return;
    }
    MPI_Request x;
    MPI_Irecv(&word, 1, MPI_INT, lr, 77, MPI_COMM_WORLD, &x);
    while (!flag) {
        MPI_Test(&x, &flag, MPI_STATUS_IGNORE);
    }
}

static void run_many(int n, int rounds)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    item_t *items = xcalloc((size_t) n, sizeof(*items));
    MPI_Request *reqs = xmalloc((size_t) n * sizeof(*reqs));
    int *order = xmalloc((size_t) n * sizeof(*order));

    watchdog_arm(240, "init of %d requests", n);
    for (int r = 0; r < n; ++r) {
        shape(&items[r], r, big ? 5 : 4, dup);
        if (MPI_SUCCESS != item_init(&items[r])) {
            FAIL("init of request %d failed", r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    /* a start order of this rank's own: a rotation, reversed on odd ranks */
    for (int r = 0; r < n; ++r) {
        const int rot = (int) (((long) r + (long) wrank * 17) % n);
        order[r] = (wrank % 2) ? n - 1 - rot : rot;
    }
    for (int k = 0; k < rounds; ++k) {
        for (int r = 0; r < n; ++r) {
            item_fill(&items[r], r, k);
        }
        for (int r = 0; r < n; ++r) {
            reqs[r] = items[order[r]].req;
        }
        watchdog_arm(240, "round %d of %d requests", k, n);
        if (late && k % wsize == wrank) {
            usleep(20000);
        }
        if (MPI_SUCCESS != MPI_Startall(n, reqs)) {
            FAIL("round %d: Startall failed", k);
        }
        if (late) {
            round_late_rank(k % wsize);
        }
        if (MPI_SUCCESS != MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE)) {
            FAIL("round %d: Waitall failed", k);
        }
        for (int r = 0; r < n; ++r) {
            item_check(&items[r], r, k);
        }
    }
    for (int r = n - 1; r >= 0; --r) {
        item_free(&items[r]);
    }
    watchdog_disarm();
    free(items);
    free(reqs);
    free(order);
    MPI_Comm_free(&dup);
}

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (NULL != f) {
        if (2 != fscanf(f, "%ld %ld", &pages, &rss)) {
            rss = 0;
        }
        fclose(f);
    }
    return rss * 4;
}

/* Files in this process's pnbc directory other than its pool's (and the
 * mark of its lock, "flocked": common_pnbc_shm_dir.c). */
static int stray_files(void)
{
    char prefix[128], path[512];
    int stray = 0;
    if (!shm_own_token(1, prefix, sizeof(prefix))) {
        return 0;   /* no directory: nothing stray */
    }
    DIR *d = opendir("/dev/shm"), *sub;
    struct dirent *e, *f;
    while (NULL != d && NULL != (e = readdir(d))) {
        if (0 != strncmp(e->d_name, "pnbc.", 5) || NULL == strstr(e->d_name, prefix)) {
            continue;
        }
        snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
        if (NULL == (sub = opendir(path))) {
            continue;
        }
        while (NULL != (f = readdir(sub))) {
            if ('.' != f->d_name[0] && 0 != strncmp(f->d_name, "pool.", 5) &&
                0 != strcmp(f->d_name, "flocked")) {
                FAIL("file left in %s: %s", path, f->d_name);
                stray++;
            }
        }
        closedir(sub);
    }
    if (NULL != d) {
        closedir(d);
    }
    return stray;
}

static void run_churn(int cycles)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    long base = 0;
    watchdog_arm(240, "churn");
    for (int c = 0; c < cycles; ++c) {
        item_t it = { 0 };
        shape(&it, c, 5, dup);
        if (MPI_SUCCESS != item_init(&it)) {
            FAIL("init of cycle %d failed", c);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        item_fill(&it, c, c);
        MPI_Start(&it.req);
        MPI_Wait(&it.req, MPI_STATUS_IGNORE);
        item_check(&it, c, c);
        item_free(&it);
        if (c == cycles / 10) {
            base = rss_kb();
        }
    }
    const long grown = rss_kb() - base;
    if (getenv("MANY_SHOW_RSS")) printf("rss grew %ld KiB\n", grown);
    if (grown > 4096) {
        FAIL("resident set grew by %ld KiB over %d init/free cycles", grown, cycles - cycles / 10);
    }
    (void) stray_files();
    watchdog_disarm();
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "many_test", &wrank, &wsize);
    const char *mode = (argc > 1) ? argv[1] : "many";
    const int n = (argc > 2) ? atoi(argv[2]) : 1000;
    big = (0 == strcmp(mode, "big"));
    late = (0 == strcmp(mode, "late"));
    if (0 == strcmp(mode, "churn")) {
        run_churn(n);
    } else {
        run_many(n, (argc > 3) ? atoi(argv[3]) : 3);
    }
    int all;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == wrank) {
        printf("many_test %s %d: %s\n", mode, n, all ? "FAILED" : "ok");
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
