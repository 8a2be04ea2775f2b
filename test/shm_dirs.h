/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The tests' view of pnbc's shared-memory directories,
 * /dev/shm/pnbc.<node>.<uid>.<jobid hex>.<vpid>.<job key> (one a process,
 * common_pnbc_shm_dir.c).  The engine keeps its own directory open while
 * it lives, so a process finds it among its descriptors (/proc/self/fd);
 * from its name, the part that names this job's directories
 * (".<uid>.<jobid hex>.") or this process's (".<uid>.<jobid hex>.<vpid>.").
 * Nothing else is needed from the runtime (Open MPI 4.1 has the jobid in
 * the environment, 5.0 does not).
 */
#ifndef PNBC_TEST_SHM_DIRS_H
#define PNBC_TEST_SHM_DIRS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 1 and the path of this process's open pnbc directory, or 0. */
static inline int shm_own_dir(char *path, size_t len)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int found = 0;
    if (NULL == d) return 0;
    while (!found && NULL != (e = readdir(d))) {
        char target[512];
        /* the entry's link, read relative to the directory itself */
        ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        if (0 == strncmp(target, "/dev/shm/pnbc.", 14) && NULL == strchr(target + 9, '/')) {
            snprintf(path, len, "%s", target);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

/* From the path of a pnbc directory: ".<uid>.<jobid hex>." (with_vpid 0)
 * or ".<uid>.<jobid hex>.<vpid>." -- the node name may hold dots, so the
 * fields are counted from the right.  1, or 0 for another name. */
static inline int shm_dir_token(const char *path, int with_vpid, char *tok, size_t len)
{
    const char *dot[4], *p = path + strlen(path);
    int k = 0;
    while (k < 4 && p > path) {
        if ('.' == *--p) dot[k++] = p;
    }
    if (k < 4) return 0;    /* dot[3] uid dot[2] jobid dot[1] vpid dot[0] key */
    const char *end = with_vpid ? dot[0] : dot[1];
    snprintf(tok, len, "%.*s", (int) (end - dot[3] + 1), dot[3]);
    return 1;
}

/* This process's token (0 when it has no directory open). */
static inline int shm_own_token(int with_vpid, char *tok, size_t len)
{
    char path[512];
    return shm_own_dir(path, sizeof path) && shm_dir_token(path, with_vpid, tok, len);
}

#endif /* PNBC_TEST_SHM_DIRS_H */
