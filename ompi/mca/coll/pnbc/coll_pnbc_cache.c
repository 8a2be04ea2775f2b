/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The nonblocking schedule cache: per communicator, committed instances
 * of nonblocking collectives, found by every argument of the call.
 *
 * Key.  The scalars (collective, buffers, counts, datatypes, op, root,
 * in place) by value and the per-peer arrays that are significant for
 * this call (counts, displacements, datatypes of the v/w variants; at the
 * root only for gatherv/scatterv; not the send side in place) by
 * content.  The algorithm is a function of these (selection reads only
 * the arguments, the MCA parameters, the rules and whether the
 * communicator spans nodes, fixed after init), so it needs no place in
 * the key.  Datatypes and ops are compared by handle: an instance holds a
 * reference to each, so a handle cannot be reused for another object
 * while it is cached.
 *
 * Structure.  A hash table of chains and one list in order of use (most
 * recent first).  Several instances may share a key (calls outstanding at
 * once); a lookup takes the first idle one.  Bounds: at most
 * coll_pnbc_cache_entries instances and coll_pnbc_cache_bytes bytes
 * (schedules, temporaries, keys); a new instance evicts idle ones from
 * the least recently used end until it fits, and if it does not fit even
 * then (the others are all running) it is not kept: it serves its call
 * and is destroyed at its free.  0 entries: no caching at all.
 *
 * Threads.  Lookups, inserts and evictions happen in the calling thread
 * of a collective on the communicator (MPI orders these calls); a free in
 * another thread only clears `busy` (release), as its last touch of the
 * instance.
 */

#include "coll_pnbc_nbc.h"

#include "ompi/mca/topo/base/base.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

/* Hash chains: as many as instances held (at least this many), so a
 * lookup costs the same with coll_pnbc_cache_entries at 128 or 10^5.
 * Few at first: a communicator's first call makes them, and most
 * communicators hold a few instances (a 2 KiB table was a new heap page
 * at many a communicator's first call: docs/many/first-start.md). */
#define PNBC_CACHE_MIN_BUCKETS 8u       /* power of two */

/* Running instances an insert's eviction walk passes before it gives up
 * (the new instance then serves its call uncached). */
#define PNBC_CACHE_EVICT_LOOK 64

/* ------------------------------------------------------------------ */
/* Key                                                                */
/* ------------------------------------------------------------------ */

static void part(pnbc_key_parts_t *parts, int which, const void *p, int n, size_t elem)
{
    if (NULL != p && n > 0) {
        parts->mask |= 1u << which;
        parts->part[which].p = p;
        parts->part[which].bytes = (size_t) n * elem;
    }
}

/* Is this rank the root of a rooted collective (whose root-only arrays
 * are then significant)? */
static bool at_root(const pnbc_coll_args_t *a)
{
    return a->inter ? (MPI_ROOT == a->root) : (a->rank == a->root);
}

void mca_coll_pnbc_key_parts(const pnbc_coll_args_t *a, pnbc_key_parts_t *parts)
{
    const int n = a->inter ? a->remote_size : a->size;
    const bool send_side = !a->in_place || NULL != a->sbuf;
    int indeg = 0, outdeg = 0;

    parts->mask = 0;
    switch (a->coll) {
    case PNBC_GATHERV:
        if (at_root(a)) {
            part(parts, PNBC_KEY_RCOUNTS, a->rcounts, n, sizeof(int));
            part(parts, PNBC_KEY_RDISPLS, a->rdispls, n, sizeof(int));
        }
        break;
    case PNBC_SCATTERV:
        if (at_root(a)) {
            part(parts, PNBC_KEY_SCOUNTS, a->scounts, n, sizeof(int));
            part(parts, PNBC_KEY_SDISPLS, a->sdispls, n, sizeof(int));
        }
        break;
    case PNBC_ALLGATHERV:
        part(parts, PNBC_KEY_RCOUNTS, a->rcounts, n, sizeof(int));
        part(parts, PNBC_KEY_RDISPLS, a->rdispls, n, sizeof(int));
        break;
    case PNBC_ALLTOALLV:
    case PNBC_ALLTOALLW:
        if (send_side) {
            part(parts, PNBC_KEY_SCOUNTS, a->scounts, n, sizeof(int));
            part(parts, PNBC_KEY_SDISPLS, a->sdispls, n, sizeof(int));
            part(parts, PNBC_KEY_SDTYPES, a->sdtypes, n, sizeof(ompi_datatype_t *));
        }
        part(parts, PNBC_KEY_RCOUNTS, a->rcounts, n, sizeof(int));
        part(parts, PNBC_KEY_RDISPLS, a->rdispls, n, sizeof(int));
        part(parts, PNBC_KEY_RDTYPES, a->rdtypes, n, sizeof(ompi_datatype_t *));
        break;
    case PNBC_REDUCE_SCATTER:
        part(parts, PNBC_KEY_RCOUNTS, a->rcounts, a->size, sizeof(int));
        break;
    case PNBC_NEIGHBOR_ALLGATHERV:
    case PNBC_NEIGHBOR_ALLTOALLV:
    case PNBC_NEIGHBOR_ALLTOALLW:
        if (OMPI_SUCCESS != mca_topo_base_neighbor_count(a->comm, &indeg, &outdeg)) {
            break;
        }
        if (PNBC_NEIGHBOR_ALLGATHERV != a->coll) {
            part(parts, PNBC_KEY_SCOUNTS, a->scounts, outdeg, sizeof(int));
            part(parts, PNBC_KEY_SDISPLS, a->sdispls, outdeg, sizeof(int));
            part(parts, PNBC_KEY_SDTYPES, a->sdtypes, outdeg, sizeof(ompi_datatype_t *));
            part(parts, PNBC_KEY_SDISPLS_BYTES, a->sdispls_bytes, outdeg, sizeof(MPI_Aint));
        }
        part(parts, PNBC_KEY_RCOUNTS, a->rcounts, indeg, sizeof(int));
        part(parts, PNBC_KEY_RDISPLS, a->rdispls, indeg, sizeof(int));
        part(parts, PNBC_KEY_RDTYPES, a->rdtypes, indeg, sizeof(ompi_datatype_t *));
        part(parts, PNBC_KEY_RDISPLS_BYTES, a->rdispls_bytes, indeg, sizeof(MPI_Aint));
        break;
    default:
        break;
    }
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t key_hash(const pnbc_coll_args_t *a,
                         const pnbc_key_parts_t *parts)
{
    uint64_t h = (uint64_t) a->coll;
    h = mix(h, (uint64_t) (uintptr_t) a->sbuf);
    h = mix(h, (uint64_t) (uintptr_t) a->rbuf);
    h = mix(h, (uint64_t) a->count ^ ((uint64_t) a->scount << 21) ^ ((uint64_t) a->rcount << 42));
    h = mix(h, (uint64_t) (uintptr_t) a->dtype ^ (uint64_t) (uintptr_t) a->sdtype);
    h = mix(h, (uint64_t) (uintptr_t) a->rdtype ^ (uint64_t) (uintptr_t) a->op);
    h = mix(h, (uint64_t) (uint32_t) a->root ^ ((uint64_t) a->in_place << 32));
    for (unsigned m = parts->mask; 0 != m; m &= m - 1) {
        const int i = __builtin_ctz(m);
        const unsigned char *p = parts->part[i].p;
        const size_t bytes = parts->part[i].bytes;
        for (size_t k = 0; k < bytes; k += sizeof(uint64_t)) {
            uint64_t w = 0;
            memcpy(&w, p + k, (bytes - k < sizeof(w)) ? bytes - k : sizeof(w));
            h = mix(h, w);
        }
        h = mix(h, bytes ^ ((uint64_t) i << 56));
    }
    return h;
}

static bool key_eq(const pnbc_nbc_request_t *e, const pnbc_coll_args_t *a,
                   const pnbc_key_parts_t *parts)
{
    const pnbc_coll_args_t *k = &e->key;
    if (k->coll != a->coll || k->sbuf != a->sbuf || k->rbuf != a->rbuf ||
        k->count != a->count || k->scount != a->scount || k->rcount != a->rcount ||
        k->dtype != a->dtype || k->sdtype != a->sdtype || k->rdtype != a->rdtype ||
        k->op != a->op || k->root != a->root || k->in_place != a->in_place) {
        return false;
    }
    if (e->parts.mask != parts->mask) {
        return false;
    }
    for (unsigned m = parts->mask; 0 != m; m &= m - 1) {
        const int i = __builtin_ctz(m);
        if (e->parts.part[i].bytes != parts->part[i].bytes ||
            0 != memcmp(e->parts.part[i].p, parts->part[i].p, parts->part[i].bytes)) {
            return false;
        }
    }
    return true;
}

int mca_coll_pnbc_key_store(pnbc_nbc_request_t *e, const pnbc_coll_args_t *a,
                            const pnbc_key_parts_t *parts, uint64_t hash)
{
    size_t total = 0;
    for (unsigned m = parts->mask; 0 != m; m &= m - 1) {
        total += (parts->part[__builtin_ctz(m)].bytes + 7) & ~(size_t) 7;
    }
    e->hash = hash;
    e->key = *a;
    /* the caller's arrays are not ours to keep: the copies stand in */
    e->key.scounts = e->key.sdispls = e->key.rcounts = e->key.rdispls = NULL;
    e->key.sdtypes = e->key.rdtypes = NULL;
    e->key.sdispls_bytes = e->key.rdispls_bytes = NULL;
    if (total > 0 && NULL == (e->keymem = malloc(total))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    char *p = e->keymem;
    e->parts.mask = parts->mask;
    for (unsigned m = parts->mask; 0 != m; m &= m - 1) {
        const int i = __builtin_ctz(m);
        e->parts.part[i].bytes = parts->part[i].bytes;
        e->parts.part[i].p = p;
        memcpy(p, parts->part[i].p, parts->part[i].bytes);
        p += (parts->part[i].bytes + 7) & ~(size_t) 7;
    }
    e->bytes = sizeof(*e) + total + e->super.sched.tmp_size +
               e->super.sched.actions_cap * sizeof(pnbc_action_t) +
               e->super.sched.rounds_cap * sizeof(pnbc_round_t) +
               e->super.dtypes_cap * sizeof(ompi_datatype_t *);
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Lists                                                              */
/* ------------------------------------------------------------------ */

static void list_unlink(pnbc_nbc_cache_t *c, pnbc_nbc_request_t *e, int l)
{
    if (NULL != e->prev[l]) {
        e->prev[l]->next[l] = e->next[l];
    } else {
        c->head[l] = e->next[l];
    }
    if (NULL != e->next[l]) {
        e->next[l]->prev[l] = e->prev[l];
    } else {
        c->tail[l] = e->prev[l];
    }
    e->next[l] = e->prev[l] = NULL;
}

static void list_push_front(pnbc_nbc_cache_t *c, pnbc_nbc_request_t *e, int l)
{
    e->prev[l] = NULL;
    e->next[l] = c->head[l];
    if (NULL != c->head[l]) {
        c->head[l]->prev[l] = e;
    } else {
        c->tail[l] = e;
    }
    c->head[l] = e;
}

static pnbc_nbc_request_t **bucket(pnbc_nbc_cache_t *c, uint64_t hash)
{
    return &c->buckets[(hash ^ (hash >> 32)) & (c->nbuckets - 1u)];
}

static void chain_push(pnbc_nbc_cache_t *c, pnbc_nbc_request_t *e)
{
    pnbc_nbc_request_t **b = bucket(c, e->hash);
    e->h_prev = NULL;
    e->h_next = *b;
    if (NULL != *b) {
        (*b)->h_prev = e;
    }
    *b = e;
}

/* Room in the chains for one more instance: the first call makes them,
 * and they double (every instance rehashed) when there would be more
 * instances than chains.  False when there are none (out of memory). */
static bool chains_reserve(pnbc_nbc_cache_t *c)
{
    if (NULL != c->buckets && c->nentries + 1 <= c->nbuckets) {
        return true;
    }
    const size_t n = (NULL == c->buckets) ? PNBC_CACHE_MIN_BUCKETS : 2 * c->nbuckets;
    pnbc_nbc_request_t **grown = calloc(n, sizeof(*grown));
    if (NULL == grown) {
        return NULL != c->buckets;      /* longer chains, still right */
    }
    free(c->buckets);
    c->buckets = grown;
    c->nbuckets = n;
    for (pnbc_nbc_request_t *e = c->head[PNBC_LIST_LRU]; NULL != e; e = e->next[PNBC_LIST_LRU]) {
        chain_push(c, e);
    }
    return true;
}

static void chain_unlink(pnbc_nbc_cache_t *c, pnbc_nbc_request_t *e)
{
    if (NULL != e->h_prev) {
        e->h_prev->h_next = e->h_next;
    } else {
        *bucket(c, e->hash) = e->h_next;
    }
    if (NULL != e->h_next) {
        e->h_next->h_prev = e->h_prev;
    }
    e->h_next = e->h_prev = NULL;
}

/* Ghosts: a key evicted from probation may come again -- a loop over
 * more distinct calls than the bound, each ending within its call, looks
 * like one-off calls until their second round.  Its hash is kept in a
 * direct-mapped table (a collision forgets the older one); a miss whose
 * hash is found there is a repeat and skips probation.  The table starts
 * small (2 KiB: one-off calls, which never come again, note a ghost at
 * every call, and a large table would put them on new heap pages); the
 * first ghost that comes back shows a loop, and the table grows to four
 * times the entry bound (a key then loses its slot to a later one about
 * once in ten), at most PNBC_CACHE_MAX_GHOSTS. */
#define PNBC_CACHE_MIN_GHOSTS 256u      /* powers of two */
#define PNBC_CACHE_MAX_GHOSTS 16384u

static void ghosts_resize(pnbc_nbc_cache_t *c, size_t n)
{
    uint64_t *t = calloc(n, sizeof(*t));
    if (NULL == t) {
        return;
    }
    for (size_t i = 0; NULL != c->ghosts && i <= c->ghost_mask; ++i) {
        if (0 != c->ghosts[i]) {
            t[c->ghosts[i] & (n - 1)] = c->ghosts[i];
        }
    }
    free(c->ghosts);
    c->ghosts = t;
    c->ghost_mask = n - 1;
}

static void ghost_note(pnbc_nbc_cache_t *c, uint64_t hash)
{
    if (NULL == c->ghosts) {
        ghosts_resize(c, PNBC_CACHE_MIN_GHOSTS);
    }
    if (NULL != c->ghosts) {
        c->ghosts[hash & c->ghost_mask] = hash;
    }
}

/* Was this key evicted from probation?  (Forgets it: one admission.) */
static bool ghost_take(pnbc_nbc_cache_t *c, uint64_t hash)
{
    if (NULL == c->ghosts || c->ghosts[hash & c->ghost_mask] != hash) {
        return false;
    }
    c->ghosts[hash & c->ghost_mask] = 0;
    size_t want = PNBC_CACHE_MIN_GHOSTS;
    while (want < 4 * (size_t) mca_coll_pnbc_component.cache_entries &&
           want < PNBC_CACHE_MAX_GHOSTS) {
        want <<= 1;
    }
    if (c->ghost_mask + 1 < want) {
        ghosts_resize(c, want);
    }
    return true;
}

/* Probation: the instances not hit since their miss, most recent first.
 * Calls whose arguments never come again (new buffers every call) would
 * otherwise fill the cache with instances on new heap pages, each call
 * touching memory never touched before; bounding the idle ones in
 * probation lets their memory go round instead
 * (coll_pnbc_cache_probation, docs/nbc.md). */
static void probation_unlink(pnbc_nbc_cache_t *c, pnbc_nbc_request_t *e)
{
    list_unlink(c, e, PNBC_LIST_PROBATION);
    e->probation = false;
    c->nprobation--;
}

void mca_coll_pnbc_cache_promote(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e)
{
    probation_unlink(&m->cache, e);
}

/* Take an idle instance out of the cache and destroy it; a key that had
 * no hit becomes a ghost unless the cache itself goes (`forget`). */
static void evict(pnbc_nbc_cache_t *c, pnbc_nbc_request_t *e, bool forget)
{
    if (c->memo[e->key.coll] == e) {
        c->memo[e->key.coll] = NULL;
    }
    if (e->probation) {
        probation_unlink(c, e);
        if (!forget) {
            ghost_note(c, e->hash);
        }
    }
    list_unlink(c, e, PNBC_LIST_LRU);
    chain_unlink(c, e);
    c->nentries--;
    c->bytes -= e->bytes;
    e->cached = false;
    OBJ_RELEASE(e);
}

/* ------------------------------------------------------------------ */
/* Lookup, insert, fini                                               */
/* ------------------------------------------------------------------ */

/* A hit: e is the caller's, and the most recently used. */
void mca_coll_pnbc_cache_to_front(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e)
{
    list_unlink(&m->cache, e, PNBC_LIST_LRU);
    list_push_front(&m->cache, e, PNBC_LIST_LRU);
}

static pnbc_nbc_request_t *take(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e)
{
    mca_coll_pnbc_cache_take(m, e);
    return e;
}

pnbc_nbc_request_t *mca_coll_pnbc_cache_lookup(mca_coll_pnbc_module_t *m,
                                               const pnbc_coll_args_t *a,
                                               const pnbc_key_parts_t *parts,
                                               uint64_t *hash)
{
    pnbc_nbc_cache_t *c = &m->cache;
    /* A loop repeating one call, or alternating two, finds its instance
     * among the two most recently used, without hashing the arguments. */
    pnbc_nbc_request_t *e = c->head[PNBC_LIST_LRU];
    for (int k = 0; k < 2 && NULL != e; ++k, e = e->next[PNBC_LIST_LRU]) {
        if (!pnbc_nbc_busy(e) && key_eq(e, a, parts)) {
            *hash = e->hash;
            return take(m, e);
        }
    }
    *hash = key_hash(a, parts);
    if (NULL != c->buckets) {
        for (e = *bucket(c, *hash); NULL != e; e = e->h_next) {
            if (e->hash == *hash && !pnbc_nbc_busy(e) && key_eq(e, a, parts)) {
                return take(m, e);
            }
        }
    }
    c->misses++;
    return NULL;
}

void mca_coll_pnbc_cache_insert(mca_coll_pnbc_module_t *m, pnbc_nbc_request_t *e)
{
    pnbc_nbc_cache_t *c = &m->cache;
    const size_t max_entries = (size_t) (mca_coll_pnbc_component.cache_entries > 0
                                         ? mca_coll_pnbc_component.cache_entries : 0);
    const size_t max_bytes = (size_t) (mca_coll_pnbc_component.cache_bytes > 0
                                       ? mca_coll_pnbc_component.cache_bytes : 0);

    e->cached = false;
    if (0 == max_entries || e->bytes > max_bytes) {
        return;
    }
    /* Evict idle instances, least recently used first, until e fits.  The
     * walk looks at PNBC_CACHE_EVICT_LOOK running ones at most: with more
     * calls outstanding than the cache holds, all may be running, and a
     * walk over all of them at every miss made each miss cost the cache's
     * size. */
    pnbc_nbc_request_t *v = c->tail[PNBC_LIST_LRU];
    for (int running = 0; NULL != v && running < PNBC_CACHE_EVICT_LOOK &&
         (c->nentries + 1 > max_entries || c->bytes + e->bytes > max_bytes);) {
        pnbc_nbc_request_t *prev = v->prev[PNBC_LIST_LRU];
        if (!pnbc_nbc_busy(v)) {
            evict(c, v, false);
            c->evictions++;
        } else {
            running++;
        }
        v = prev;
    }
    if (c->nentries + 1 > max_entries || c->bytes + e->bytes > max_bytes) {
        return;     /* the others are all running: serve this call uncached */
    }
    if (!chains_reserve(c)) {
        return;
    }
    chain_push(c, e);
    list_push_front(c, e, PNBC_LIST_LRU);
    c->nentries++;
    c->bytes += e->bytes;
    e->cached = true;

    /* In probation until its first hit; past the bound the oldest idle
     * ones go (e itself is running).  The walk looks at a few more than
     * the bound: running ones (calls outstanding) are left for later. */
    const int bound = mca_coll_pnbc_component.cache_probation;
    if (bound <= 0 || ghost_take(c, e->hash)) {
        return;
    }
    e->probation = true;
    list_push_front(c, e, PNBC_LIST_PROBATION);
    c->nprobation++;
    v = c->tail[PNBC_LIST_PROBATION];
    for (int steps = 0; NULL != v && c->nprobation > (size_t) bound && steps <= 2 * bound;
         ++steps) {
        pnbc_nbc_request_t *prev = v->prev[PNBC_LIST_PROBATION];
        if (!pnbc_nbc_busy(v)) {
            evict(c, v, false);
            c->evictions++;
        }
        v = prev;
    }
}

void mca_coll_pnbc_cache_fini(mca_coll_pnbc_module_t *m)
{
    pnbc_nbc_cache_t *c = &m->cache;
    if (mca_common_pnbc_params.verbose >= 2 && (c->hits > 0 || c->misses > 0)) {
        opal_output(0, "coll:pnbc: nonblocking schedule cache: %llu hits, %llu misses, "
                    "%llu evictions, %zu instances (%zu bytes) at communicator free",
                    (unsigned long long) c->hits, (unsigned long long) c->misses,
                    (unsigned long long) c->evictions, c->nentries, c->bytes);
    }
    pnbc_nbc_request_t *e = c->head[PNBC_LIST_LRU];
    while (NULL != e) {
        pnbc_nbc_request_t *next = e->next[PNBC_LIST_LRU];
        if (pnbc_nbc_busy(e)) {
            /* never completed by the user (MPI_Finalize with calls
             * outstanding): leave it, it may still be in the engine */
            list_unlink(c, e, PNBC_LIST_LRU);
            e->cached = false;
        } else {
            evict(c, e, true);
        }
        e = next;
    }
    free(c->buckets);
    free(c->ghosts);
    memset(c, 0, sizeof(*c));
}
