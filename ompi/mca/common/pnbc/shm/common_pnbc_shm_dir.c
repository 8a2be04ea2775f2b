/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's directory per process: its name (with
 * the job key), its creation, its removal at finalize, and the removal of
 * directories whose process is gone.
 *
 * Who removes a directory:
 *  - its process, at finalize;
 *  - the runtime, when the process dies but its daemon lives (the
 *    directory is registered with PMIx's cleanup at creation);
 *  - when the daemon died too (mpirun killed with SIGKILL), the next job
 *    on the node.  A process holds an exclusive flock() on its directory
 *    for its whole life (the kernel drops it however the process ends), so
 *    a lock that can be taken says the owner is gone.  The first process
 *    of a node (local rank 0) that creates its directory removes every
 *    directory of the node and user that it can lock, among those whose
 *    file "flocked" says their owner took the lock (a directory of an
 *    older pnbc, which never locks, is left alone).  A directory is
 *    locked before it gets its name (made under a temporary name, then
 *    renamed), so none is ever seen unlocked while its owner lives; a
 *    temporary one is removed once its creator's pid is gone and it is
 *    over a minute old.
 */

#include "common_pnbc_shm.h"

#include "ompi/proc/proc.h"
#include "opal/util/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Process-wide state, set up on first use (under shm_lock: *_init calls
 * on different communicators may run concurrently). */
static pnbc_lock_t shm_lock = PNBC_LOCK_INITIALIZER;
static bool shm_ready = false;
static const char *shm_base;    /* where the directories go */
static uint64_t shm_key;        /* this job instance */
static bool shm_dir_tried = false;
static char *shm_own_dir = NULL;
static int shm_own_fd = -1;     /* holds the directory's flock */

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

/* A directory's name: SHM_DIR_NAMED.<node>.<uid>.<jobid>.<vpid>.<job key>;
 * one being made: SHM_DIR_MADE.<node>.<uid>.<creator's pid>.<jobid>.<vpid>. */
#define SHM_DIR_NAMED "pnbc"
#define SHM_DIR_MADE "pnbc-new"
/* The file that says a directory's owner holds its flock (a directory of
 * a pnbc without the lock has none and is never removed by a reaper). */
#define SHM_DIR_FLOCKED "flocked"

/* The prefix of every directory of this node and user of a kind. */
static char *shm_node_prefix(const char *kind)
{
    char *prefix = NULL;
    if (0 > asprintf(&prefix, "%s.%s.%u.", kind, opal_process_info.nodename,
                     (unsigned) geteuid())) {
        return NULL;
    }
    return prefix;
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
        0 > asprintf(&path, "%s/" SHM_DIR_NAMED ".%s.%u.%x.%u.%016" PRIx64, shm_base,
                     opal_process_info.nodename, (unsigned) geteuid(),
                     (unsigned) name->jobid, (unsigned) name->vpid, shm_key)) {
        return NULL;
    }
    return path;
}

char *pnbc_shm_dir_path(const opal_process_name_t *name)
{
    pnbc_lock(&shm_lock);
    char *path = shm_dir_path_locked(name);
    pnbc_unlock(&shm_lock);
    return path;
}

/* Remove every file in the directory open as dfd (closes dfd). */
static void shm_dir_empty_fd(int dfd)
{
    DIR *d = fdopendir(dfd);
    struct dirent *e;

    if (NULL == d) {
        close(dfd);
        return;
    }
    while (NULL != (e = readdir(d))) {
        if ('.' != e->d_name[0]) {
            (void) unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    closedir(d);
}

/* Is directory `name` (open as fd) one whose owner is gone?  A named
 * one: its lock can be taken (and is, until fd is closed).  A temporary
 * one: its creator's pid is not running and it is over a minute old (a
 * creator in another pid namespace would look gone; it renames its
 * directory within microseconds). */
static bool shm_owner_gone(int fd, const char *name, size_t made_len, bool made)
{
    if (!made) {
        return 0 == faccessat(fd, SHM_DIR_FLOCKED, F_OK, 0) && 0 == flock(fd, LOCK_EX | LOCK_NB);
    }
    char *end;
    struct stat st;
    const long pid = strtol(name + made_len, &end, 10);
    return pid > 0 && '.' == *end && 0 != kill((pid_t) pid, 0) && ESRCH == errno &&
           0 == fstat(fd, &st) && time(NULL) - st.st_mtime > 60;
}

/* Remove the directories of this node and user whose owner is gone.
 * Returns how many. */
static int shm_reap_stale(void)
{
    char *named = shm_node_prefix(SHM_DIR_NAMED), *made = shm_node_prefix(SHM_DIR_MADE);
    DIR *d = (NULL == named || NULL == made) ? NULL : opendir(shm_base);
    struct dirent *e;
    int reaped = 0;

    while (NULL != d && NULL != (e = readdir(d))) {
        const bool is_made = (0 == strncmp(e->d_name, made, strlen(made)));
        if (!is_made && 0 != strncmp(e->d_name, named, strlen(named))) {
            continue;
        }
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        if (shm_owner_gone(fd, e->d_name, strlen(made), is_made)) {
            int dup_fd = dup(fd);
            if (dup_fd >= 0) {
                shm_dir_empty_fd(dup_fd);
                reaped += (0 == unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR));
            }
        }
        close(fd);
    }
    if (NULL != d) {
        closedir(d);
    }
    free(named);
    free(made);
    return reaped;
}

/* Make `dir` (named for `name`) ours: created under a temporary name,
 * locked, then renamed, so that it is never seen unlocked under its
 * name.  Returns the fd that holds the lock (kept open for the process's
 * life), or -1 (no directory). */
static int shm_dir_create_locked(const char *dir, const opal_process_name_t *name)
{
    char *made = shm_node_prefix(SHM_DIR_MADE), *tmp = NULL;
    int fd = -1;

    if (NULL == made || 0 > asprintf(&tmp, "%s/%s%d.%x.%u", shm_base, made, (int) getpid(),
                                     (unsigned) name->jobid, (unsigned) name->vpid)) {
        free(made);
        return -1;
    }
    if (0 == mkdir(tmp, 0700)) {
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* a file system without flock() (the session directory's, say)
         * only loses the removal by a later job: a reaper that cannot
         * lock a directory leaves it alone */
        if (fd >= 0 && 0 == flock(fd, LOCK_EX | LOCK_NB)) {
            const int f = openat(fd, SHM_DIR_FLOCKED, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
            if (f >= 0) {
                close(f);
            }
        }
        if (fd >= 0 && 0 != rename(tmp, dir)) {
            close(fd);
            fd = -1;
        }
        if (fd < 0) {
            (void) rmdir(tmp);
        }
    }
    free(made);
    free(tmp);
    return fd;
}

/* Create our directory once (first request that receives through shm)
 * and hand it to the runtime's cleanup, which removes it when this
 * process ends, even by a signal, as long as its daemon lives. */
const char *pnbc_shm_own_dir_get(void)
{
    pnbc_lock(&shm_lock);
    if (!shm_dir_tried) {
        const opal_process_name_t *me = OMPI_PROC_MY_NAME;
        char *dir = shm_dir_path_locked(me);
        if (NULL != dir && 0 == strcmp(shm_base, "/dev/shm") &&
            0 == opal_process_info.my_local_rank) {
            const int reaped = shm_reap_stale();
            if (reaped > 0 && mca_common_pnbc_params.verbose >= 1) {
                opal_output(0, "pnbc: removed %d directories of processes that are gone from %s",
                            reaped, shm_base);
            }
        }
        if (NULL != dir) {
            shm_own_fd = shm_dir_create_locked(dir, me);
            if (shm_own_fd < 0) {
                free(dir);
                dir = NULL;
            }
        }
        if (NULL != dir) {
            pnbc_register_cleanup_dir(dir);
        }
        shm_own_dir = dir;
        shm_dir_tried = true;
    }
    pnbc_unlock(&shm_lock);
    return shm_own_dir;
}

/* At finalize (the transport's fini, once the pool is gone): remove our
 * directory with the files of requests never freed, and close the
 * descriptor that holds its flock. */
void pnbc_shm_own_dir_remove(void)
{
    pnbc_lock(&shm_lock);
    if (NULL != shm_own_dir) {
        int fd = open(shm_own_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            shm_dir_empty_fd(fd);
        }
        (void) rmdir(shm_own_dir);
        free(shm_own_dir);
        shm_own_dir = NULL;
    }
    if (shm_own_fd >= 0) {
        close(shm_own_fd);
        shm_own_fd = -1;
    }
    shm_dir_tried = false;
    pnbc_unlock(&shm_lock);
}
