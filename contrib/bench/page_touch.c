/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * page_touch: what the first touch of a page of shared memory costs a
 * process on this machine (no MPI).  A /dev/shm file the size of a small
 * pool block, allocated up front as the pool's segments are: its pages
 * touched in a mapping without more (a fault each), after
 * MADV_POPULATE_WRITE (what the receiver does for a new block at init),
 * and in a second mapping of the same file (a sender's view of its
 * receiver's boxes).  On a virtual machine whose hypervisor builds its own
 * page tables on first access, a populated page still costs a first touch
 * (docs/many/lockstep.md).
 *
 * Usage: page_touch [PAGES]      (default 128)
 * Prints µs per page for each case.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* µs per page to write one byte of each of n pages from p */
static double touch(char *p, size_t n, size_t page)
{
    const double t0 = now_us();
    for (size_t i = 0; i < n; ++i) {
        ((volatile char *) p)[i * page] = 1;
    }
    return (now_us() - t0) / (double) n;
}

int main(int argc, char **argv)
{
    const size_t n = (argc > 1) ? (size_t) atol(argv[1]) : 128;
    const size_t page = (size_t) sysconf(_SC_PAGESIZE), half = n * page;
    char name[64];
    snprintf(name, sizeof(name), "/dev/shm/page_touch.%d", (int) getpid());
    const int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        perror(name);
        return 1;
    }
    unlink(name);
    if (0 != posix_fallocate(fd, 0, (off_t) (3 * half))) {
        fprintf(stderr, "posix_fallocate failed\n");
        return 1;
    }
    char *a = mmap(NULL, 3 * half, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *b = mmap(NULL, 3 * half, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == a || MAP_FAILED == b) {
        perror("mmap");
        return 1;
    }
    printf("first touch, a fault each:            %6.2f us/page\n", touch(a, n, page));
    printf("second touch:                         %6.3f us/page\n", touch(a, n, page));
#ifdef MADV_POPULATE_WRITE
    double t0 = now_us();
    const int rc = madvise(a + half, half, MADV_POPULATE_WRITE);
    const double populate = (now_us() - t0) / (double) n;
    if (0 == rc) {
        printf("MADV_POPULATE_WRITE:                  %6.2f us/page\n", populate);
        printf("first touch after it:                 %6.2f us/page\n", touch(a + half, n, page));
    }
#endif
    printf("another mapping, pages in use:        %6.2f us/page\n", touch(b, n, page));
#ifdef MADV_POPULATE_WRITE
    t0 = now_us();
    if (0 == madvise(b + 2 * half, half, MADV_POPULATE_WRITE)) {
        (void) t0;
        printf("another mapping, populated then:      %6.2f us/page\n", touch(b + 2 * half, n, page));
    }
#endif
    munmap(a, 3 * half);
    munmap(b, 3 * half);
    close(fd);
    return 0;
}
