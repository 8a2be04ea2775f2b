/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * deny_cma.so: an LD_PRELOAD library that makes this process's
 * process_vm_writev (DENY_CMA=write), process_vm_readv (DENY_CMA=read) or
 * both (DENY_CMA=both) fail with EPERM, as a kernel with Yama ptrace scope
 * or a seccomp filter would: the tests use it to drive the transports'
 * refusal paths (a sender that cannot write its part of a shared copy or
 * its invited message, a receiver that cannot read an offer).
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

typedef ssize_t (*cma_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                          unsigned long, unsigned long);

static int denied(const char *what)
{
    const char *d = getenv("DENY_CMA");
    return NULL != d && (0 == strcmp(d, what) || 0 == strcmp(d, "both"));
}

static ssize_t call(const char *name, const char *what, pid_t pid, const struct iovec *l,
                    unsigned long nl, const struct iovec *r, unsigned long nr,
                    unsigned long flags)
{
    if (denied(what)) {
        errno = EPERM;
        return -1;
    }
    cma_fn next = (cma_fn) dlsym(RTLD_NEXT, name);
    if (NULL == next) {
        errno = ENOSYS;
        return -1;
    }
    return next(pid, l, nl, r, nr, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long nl,
                          const struct iovec *r, unsigned long nr, unsigned long flags)
{
    return call("process_vm_writev", "write", pid, l, nl, r, nr, flags);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl,
                         const struct iovec *r, unsigned long nr, unsigned long flags)
{
    return call("process_vm_readv", "read", pid, l, nl, r, nr, flags);
}
