/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's files (see common_pnbc_transport_shm.c):
 * the process's directory and the job key in its name, regions (mapped
 * request files), building a receiver's request file or, when that fails,
 * its fallback marker, and the cleanup at finalize.
 */

#include "common_pnbc_shm.h"

#include "ompi/proc/proc.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* The process's directory                                            */
/* ------------------------------------------------------------------ */

/* Process-wide state, set up on first use (under shm_lock: *_init calls
 * on different communicators may run concurrently). */
static pthread_mutex_t shm_lock = PTHREAD_MUTEX_INITIALIZER;
static bool shm_ready = false;
static const char *shm_base;    /* where the directories go */
static uint64_t shm_key;        /* this job instance */
static bool shm_dir_tried = false;
static char *shm_own_dir = NULL;

/* What tells this job instance from an earlier one with the same jobid
 * (jobids repeat: they hash mpirun's pid) whose files a killed mpirun
 * left behind: the job session directory, created anew for each job --
 * its path (holds mpirun's pid) and inode.  Not its times: they change
 * as the processes add their own directories to it. */
static uint64_t job_key(void)
{
    const char *dir = opal_process_info.job_session_dir;
    struct stat st;
    uint64_t h = UINT64_C(0xcbf29ce484222325);      /* FNV-1a */

    for (const char *c = dir; NULL != c && '\0' != *c; ++c) {
        h = (h ^ (unsigned char) *c) * UINT64_C(0x100000001b3);
    }
    if (NULL != dir && 0 == stat(dir, &st)) {
        h ^= (uint64_t) st.st_ino * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t) st.st_dev;
    }
    return h;
}

/* The directory of process `name`'s files.  /dev/shm like btl/vader
 * (memory, not disk), else the job session directory: every process of
 * the node makes the same choice.  The name carries the job key, so
 * files a dead job left under a recycled jobid are never looked at.
 * Caller holds shm_lock. */
static char *shm_dir_path_locked(const opal_process_name_t *name)
{
    char *path = NULL;

    if (!shm_ready) {
        shm_base = (0 == access("/dev/shm", W_OK)) ? "/dev/shm"
                                                   : opal_process_info.job_session_dir;
        shm_key = job_key();
        shm_ready = true;
    }
    if (NULL == shm_base ||
        0 > asprintf(&path, "%s/pnbc.%s.%u.%x.%u.%016" PRIx64, shm_base,
                     opal_process_info.nodename, (unsigned) geteuid(),
                     (unsigned) name->jobid, (unsigned) name->vpid, shm_key)) {
        return NULL;
    }
    return path;
}

char *pnbc_shm_dir_path(const opal_process_name_t *name)
{
    pthread_mutex_lock(&shm_lock);
    char *path = shm_dir_path_locked(name);
    pthread_mutex_unlock(&shm_lock);
    return path;
}

/* Remove every file in `dir` (our own directory: nobody else writes it). */
static void shm_dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];

    if (NULL == d) {
        return;
    }
    while (NULL != (e = readdir(d))) {
        if ('.' == e->d_name[0]) {
            continue;
        }
        if ((int) sizeof(path) > snprintf(path, sizeof(path), "%s/%s", dir, e->d_name)) {
            (void) unlink(path);
        }
    }
    closedir(d);
}

/* Create our directory once (first request that receives through shm)
 * and hand it to the runtime's cleanup, which removes it when this
 * process ends, even by a signal. */
const char *pnbc_shm_own_dir_get(void)
{
    pthread_mutex_lock(&shm_lock);
    if (!shm_dir_tried) {
        char *dir = shm_dir_path_locked(&ompi_proc_local()->super.proc_name);
        if (NULL != dir && 0 != mkdir(dir, 0700) && EEXIST != errno) {
            free(dir);
            dir = NULL;
        }
        if (NULL != dir && NULL != opal_pmix.register_cleanup) {
            (void) opal_pmix.register_cleanup(dir, true, false, false);
        }
        shm_own_dir = dir;
        shm_dir_tried = true;
    }
    pthread_mutex_unlock(&shm_lock);
    return shm_own_dir;
}

void pnbc_transport_shm_finalize(void)
{
    pthread_mutex_lock(&shm_lock);
    if (NULL != shm_own_dir) {
        shm_dir_empty(shm_own_dir);
        (void) rmdir(shm_own_dir);
        free(shm_own_dir);
        shm_own_dir = NULL;
    }
    shm_dir_tried = false;
    pthread_mutex_unlock(&shm_lock);
}

/* ------------------------------------------------------------------ */
/* Regions                                                            */
/* ------------------------------------------------------------------ */

shm_region_t *pnbc_shm_region_new(char *path, bool owner)
{
    shm_region_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        free(path);
        return NULL;
    }
    r->refs = 1;
    r->owner = owner;
    r->path = path;
    return r;
}

void pnbc_shm_region_release(shm_region_t *r)
{
    if (NULL == r || --r->refs > 0) {
        return;
    }
    if (NULL != r->base) {
        munmap(r->base, r->size);
    }
    if (r->owner && NULL != r->path) {
        (void) unlink(r->path);
    }
    free(r->acts);
    free(r->path);
    free(r);
}

char *pnbc_shm_request_file_path(const char *dir, const pnbc_channel_t *ch, const char *suffix)
{
    char *path = NULL;
    if (0 > asprintf(&path, "%s/%x.%x%s", dir, (unsigned) ch->comm->c_contextid,
                     (unsigned) ch->tag, suffix)) {
        return NULL;
    }
    return path;
}

/* Sender: map the receiver's file if it is there and current.  Returns
 * false while it is not (yet): the caller retries at the next test. */
bool pnbc_shm_region_try_map(shm_region_t *r)
{
    struct stat st;
    int fd = open(r->path, O_RDWR);

    if (fd < 0) {
        return false;
    }
    if (0 != fstat(fd, &st)) {
        close(fd);
        return false;
    }
    if (0 == st.st_size) {          /* the receiver's fallback marker */
        close(fd);
        return true;
    }
    void *base = NULL;
    if ((size_t) st.st_size >= sizeof(shm_header_t)) {
        base = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    close(fd);
    if (NULL == base || MAP_FAILED == base) {
        return false;
    }
    const shm_header_t *h = base;
    if (SHM_MAGIC != h->magic ||
        sizeof(shm_header_t) + h->nslots * sizeof(shm_entry_t) > (size_t) st.st_size) {
        munmap(base, (size_t) st.st_size);  /* not ours: cannot happen */
        return false;
    }
    r->base = base;
    r->size = (size_t) st.st_size;
    return true;
}

/* ------------------------------------------------------------------ */
/* The receiver's file                                                */
/* ------------------------------------------------------------------ */

/* Write the whole file under a temporary name, then rename it into
 * place.  Returns the mapped region, or NULL (nothing left behind). */
shm_region_t *pnbc_shm_recv_file_create(pnbc_schedule_t *s, const char *dir,
                                      const pnbc_channel_t *ch, uint32_t nslots)
{
    char *path = pnbc_shm_request_file_path(dir, ch, "");
    char *tmp = pnbc_shm_request_file_path(dir, ch, ".tmp");
    shm_region_t *r = NULL;
    size_t size = sizeof(shm_header_t) + nslots * sizeof(shm_entry_t);
    int fd = -1;

    size = (size + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
    const size_t table_end = size;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (is_shm(&s->actions[i], PNBC_ACT_RECV)) {
            const shm_shape_t shape = slot_shape(s->actions[i].tstate.ptr);
            size += shm_slot_size(shape.frag, shape.depth);
        }
    }
    if (NULL == path || NULL == tmp) {
        goto out;
    }
    fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        goto out;
    }
    /* posix_fallocate: on tmpfs, running out of space must show here,
     * not as SIGBUS at the first store into the mapping. */
    int rc = posix_fallocate(fd, 0, (off_t) size);
    if (0 != rc) {
        errno = rc;
        goto out;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        goto out;
    }
    r = pnbc_shm_region_new(path, true);
    if (NULL == r) {
        path = NULL;
        munmap(base, size);
        goto out;
    }
    path = NULL;
    r->base = base;
    r->size = size;
    r->refs = 0;    /* one per action, below */

    shm_header_t *h = base;
    shm_entry_t *table = (shm_entry_t *) (h + 1);
    size_t offset = table_end;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (!is_shm(a, PNBC_ACT_RECV)) {
            continue;
        }
        shm_action_t *t = a->tstate.ptr;
        const shm_shape_t shape = slot_shape(t);
        table[k].sender = a->peer;
        table[k].pair_seq = a->pair_seq;
        table[k].offset = offset;
        table[k].capacity = t->bytes;
        table[k].depth = shape.depth;
        table[k].frag = shape.frag;
        slot_attach(t, (char *) base + offset, shape.frag, shape.depth);  /* zeroed */
        pnbc_shm_recv_take_fold(a, t);
        t->region = r;
        r->refs++;
        offset += shm_slot_size(shape.frag, shape.depth);
        k++;
    }
    h->nslots = nslots;
    h->magic = SHM_MAGIC;
    if (0 != rename(tmp, r->path)) {
        r->owner = false;   /* never published: nothing to unlink */
        for (uint32_t i = 0; i < s->nactions; ++i) {
            if (is_shm(&s->actions[i], PNBC_ACT_RECV)) {
                ((shm_action_t *) s->actions[i].tstate.ptr)->region = NULL;
            }
        }
        r->refs = 1;
        pnbc_shm_region_release(r);
        r = NULL;
    }
out:;
    const int err = errno;     /* why it failed, for the caller's message */
    if (fd >= 0) {
        close(fd);
    }
    if (NULL == r && NULL != tmp) {
        (void) unlink(tmp);
    }
    free(tmp);
    free(path);
    errno = err;
    return r;
}

/* The receiver could not build its file: publish an empty one (the
 * senders' cue) and carry our shm receives over pml. */
int pnbc_shm_recv_fall_back(pnbc_schedule_t *s, const char *dir, const pnbc_channel_t *ch)
{
    const int why = errno;
    char *path = (NULL == dir) ? NULL : pnbc_shm_request_file_path(dir, ch, "");
    int fd = (NULL == path) ? -1 : open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (is_shm(&s->actions[i], PNBC_ACT_RECV)) {
            ((shm_action_t *) s->actions[i].tstate.ptr)->fallback = true;
        }
    }
    if (fd < 0) {
        free(path);
        /* Senders on this node would wait for a file forever. */
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    close(fd);
    /* The marker is unlinked with the directory (free or finalize). */
    free(path);
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: shm segment for cid %u tag %d not created (%s), "
                    "receiving through pml", (unsigned) ch->comm->c_contextid, ch->tag,
                    strerror(why));
    }
    return OMPI_SUCCESS;
}
