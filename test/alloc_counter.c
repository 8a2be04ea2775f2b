/*
 * alloc_counter: LD_PRELOAD library counting heap calls by who made them.
 *
 * Interposes malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 * memalign and valloc.  Each call is attributed by the address it returns to
 * (__builtin_return_address(0), i.e. the direct caller): to "match" when that
 * address lies in a shared object whose path contains the substring
 * $ALLOC_COUNTER_MATCH (default "pnbc": the component, the engine library, libpnbc), otherwise to "other".
 * dladdr() results are cached per return address.
 *
 * Optional: ALLOC_COUNTER_DEPTH=N (N > 1) attributes a call to "match" when
 * any of the N innermost caller frames (from backtrace()) is in a matching
 * object, which also catches allocations made through helpers (strdup,
 * asprintf, opal_* functions) and tail calls.  Slower; default 1.
 *
 * API (look it up with dlsym(RTLD_DEFAULT, ...)):
 *   void alloc_counter_reset(void);
 *   void alloc_counter_get(unsigned long match[4], unsigned long other[4]);
 *        index 0 malloc (+posix_memalign/aligned_alloc/memalign/valloc),
 *        1 calloc, 2 realloc, 3 free (free(NULL) not counted)
 *   const char *alloc_counter_match(void);
 *   int alloc_counter_match_loaded(void);   loaded objects whose path matches
 *
 * dlsym() itself may call calloc before the real functions are known: those
 * calls are served from a static bootstrap buffer (and free() ignores it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { K_MALLOC, K_CALLOC, K_REALLOC, K_FREE, K_N };

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);

static unsigned long counts[2][K_N];
static char match_str[256] = "pnbc";
static int depth = 1;

/* bootstrap heap for allocations made while dlsym runs */
static unsigned char boot_buf[1 << 16] __attribute__((aligned(64)));
static size_t boot_used;
static int resolving;

static __thread int in_hook __attribute__((tls_model("initial-exec")));

static int is_boot(const void *p)
{
    return (const unsigned char *)p >= boot_buf && (const unsigned char *)p < boot_buf + sizeof(boot_buf);
}

static void *boot_alloc(size_t n)
{
    size_t a = (boot_used + 63) & ~(size_t)63;
    if (a + n > sizeof(boot_buf)) return NULL;
    boot_used = a + n;
    return boot_buf + a;        /* static storage: already zero */
}

static void resolve(void)
{
    if (real_malloc || resolving) return;
    resolving = 1;
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    real_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
    const char *m = getenv("ALLOC_COUNTER_MATCH");
    if (m && *m) {
        strncpy(match_str, m, sizeof(match_str) - 1);
        match_str[sizeof(match_str) - 1] = 0;
    }
    const char *d = getenv("ALLOC_COUNTER_DEPTH");
    if (d && atoi(d) > 1) depth = atoi(d) > 32 ? 32 : atoi(d);
    resolving = 0;
}

__attribute__((constructor)) static void ac_init(void)
{
    resolve();
    if (depth > 1) {            /* load libgcc_s now, not in the middle of a hook */
        void *f[2];
        in_hook = 1;
        backtrace(f, 2);
        in_hook = 0;
    }
}

/* ---- attribution cache: return address -> 0/1 ---- */
#define CACHE_SIZE 16384
static uintptr_t cache_key[CACHE_SIZE];
static unsigned char cache_val[CACHE_SIZE];

static int addr_matches(void *ra)
{
    Dl_info info;
    if (!ra) return 0;
    if (dladdr(ra, &info) && info.dli_fname && strstr(info.dli_fname, match_str)) return 1;
    return 0;
}

static int classify_one(void *ra)
{
    uintptr_t key = (uintptr_t)ra;
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 40) & (CACHE_SIZE - 1);
    for (int probe = 0; probe < 32; probe++) {
        size_t i = (h + (size_t)probe) & (CACHE_SIZE - 1);
        uintptr_t k = __atomic_load_n(&cache_key[i], __ATOMIC_ACQUIRE);
        if (k == key) return cache_val[i];
        if (k == 0) {
            int v = addr_matches(ra);
            uintptr_t expected = 0;
            cache_val[i] = (unsigned char)v;    /* racing writers store the same value */
            __atomic_compare_exchange_n(&cache_key[i], &expected, key, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
            return v;
        }
    }
    return addr_matches(ra);
}

static void count(int kind, void *ra)
{
    if (in_hook) return;
    in_hook = 1;
    int m;
    if (depth <= 1) {
        m = classify_one(ra);
    } else {
        void *frames[34];
        int n = backtrace(frames, depth + 1);
        m = 0;
        for (int i = 1; i < n && !m; i++) m = classify_one(frames[i]);     /* frame 0 is this hook */
    }
    __atomic_fetch_add(&counts[m][kind], 1, __ATOMIC_RELAXED);
    in_hook = 0;
}

/* ---- interposed functions ---- */
EXPORT void *malloc(size_t n)
{
    if (!real_malloc) {
        resolve();
        if (!real_malloc) return boot_alloc(n);
    }
    count(K_MALLOC, __builtin_return_address(0));
    return real_malloc(n);
}

EXPORT void *calloc(size_t n, size_t s)
{
    if (!real_calloc) {
        resolve();
        if (!real_calloc) return boot_alloc(n * s);
    }
    count(K_CALLOC, __builtin_return_address(0));
    return real_calloc(n, s);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (!real_realloc) {
        resolve();
        if (!real_realloc) return NULL;
    }
    count(K_REALLOC, __builtin_return_address(0));
    if (is_boot(p)) {           /* move a bootstrap block to the real heap */
        size_t avail = (size_t)(boot_buf + sizeof(boot_buf) - (unsigned char *)p);
        void *q = real_malloc(n);
        if (q) memcpy(q, p, n < avail ? n : avail);
        return q;
    }
    return real_realloc(p, n);
}

EXPORT void free(void *p)
{
    if (!p || is_boot(p)) return;
    if (!real_free) {
        resolve();
        if (!real_free) return;
    }
    count(K_FREE, __builtin_return_address(0));
    real_free(p);
}

EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
    if (!real_posix_memalign) resolve();
    count(K_MALLOC, __builtin_return_address(0));
    return real_posix_memalign(out, al, n);
}

EXPORT void *aligned_alloc(size_t al, size_t n)
{
    if (!real_aligned_alloc) resolve();
    count(K_MALLOC, __builtin_return_address(0));
    return real_aligned_alloc(al, n);
}

EXPORT void *memalign(size_t al, size_t n)
{
    if (!real_memalign) resolve();
    count(K_MALLOC, __builtin_return_address(0));
    return real_memalign(al, n);
}

EXPORT void *valloc(size_t n)
{
    if (!real_valloc) resolve();
    count(K_MALLOC, __builtin_return_address(0));
    return real_valloc(n);
}

/* ---- API ---- */
EXPORT void alloc_counter_reset(void)
{
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < K_N; k++) __atomic_store_n(&counts[m][k], 0, __ATOMIC_RELAXED);
}

EXPORT void alloc_counter_get(unsigned long match[4], unsigned long other[4])
{
    for (int k = 0; k < K_N; k++) {
        match[k] = __atomic_load_n(&counts[1][k], __ATOMIC_RELAXED);
        other[k] = __atomic_load_n(&counts[0][k], __ATOMIC_RELAXED);
    }
}

EXPORT const char *alloc_counter_match(void)
{
    return match_str;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, match_str)) ++*(int *)data;
    return 0;
}

EXPORT int alloc_counter_match_loaded(void)
{
    int n = 0;
    dl_iterate_phdr(phdr_cb, &n);
    return n;
}
