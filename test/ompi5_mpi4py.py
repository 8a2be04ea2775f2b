#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# ompi5_mpi4py.py: a persistent collective and partitioned communication
# from Python (mpi4py 4, numpy) on Open MPI 5.0: Comm.Allreduce_init,
# Comm.Psend_init / Comm.Precv_init, Prequest.Pready / Pready_range /
# Pready_list / Parrived.  Whichever component Open MPI selects serves the
# calls; the cases (cases.d/ompi5.sh) check from the verbose output which
# one did.
#   - Allreduce_init (sum, max) at three counts, started 4 times each with
#     new data, every element checked against numpy's result on the data
#     of every rank computed locally;
#   - each rank sends NPART partitions to its right neighbour and receives
#     from its left one, 12 rounds; the sender marks partitions ready in a
#     random order with Pready, Pready_range or Pready_list; the receiver
#     polls Parrived and checks each partition as soon as it says True
#     (rounds where rank + round is even) or only waits; every element is
#     checked after Wait too, the receive buffer is poisoned every round.
# Prints "PASS ompi5_mpi4py (np N)" on rank 0, "FAIL ..." lines otherwise
# (exit status 1).
import random
import sys
import time

import numpy as np
from mpi4py import MPI

NSTARTS = 4
NROUNDS = 12
NPART = 8
PCOUNT = 500
POISON = -0x5A5A5A5A

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
errors = 0


def fail(msg):
    global errors
    errors += 1
    if errors <= 12:
        print(f"FAIL rank {rank}: {msg}", flush=True)


def cval(s, r, n):
    """rank r's contribution in start s (n elements)"""
    i = np.arange(n, dtype=np.int64)
    return (s * 7919 + r * 104729 + i * 31) % 1000003 - 500000


def pval(s, r, n):
    """the message rank r sends in partitioned round s (n elements)"""
    i = np.arange(n, dtype=np.int64)
    return (s + 1) * 1000003 + r * 7907 + i * 13


def check_allreduce(count, op):
    sbuf = np.zeros(count, dtype=np.int64)
    rbuf = np.zeros(count, dtype=np.int64)
    req = comm.Allreduce_init(sbuf, rbuf, op)
    for s in range(NSTARTS):
        sbuf[:] = cval(s, rank, count)
        rbuf[:] = POISON
        req.Start()
        req.Wait()
        every = np.array([cval(s, r, count) for r in range(size)])
        want = every.sum(axis=0) if op == MPI.SUM else every.max(axis=0)
        bad = np.nonzero(rbuf != want)[0]
        if bad.size:
            i = bad[0]
            fail(f"allreduce {'sum' if op == MPI.SUM else 'max'} count {count} "
                 f"start {s}: {bad.size} wrong elements, first {i}: got {rbuf[i]} want {want[i]}")
    req.Free()


def check_part(rbuf, p, src, s, when):
    lo, hi = p * PCOUNT, (p + 1) * PCOUNT
    want = pval(s, src, NPART * PCOUNT)[lo:hi]
    bad = np.nonzero(rbuf[lo:hi] != want)[0]
    if bad.size:
        i = bad[0]
        what = " (not written yet)" if rbuf[lo + i] == POISON else ""
        fail(f"part round {s} from {src} partition {p} ({when}): {bad.size} wrong elements, "
             f"first {i}: got {rbuf[lo + i]} want {want[i]}{what}")


def check_partitioned():
    right, left = (rank + 1) % size, (rank - 1) % size
    sbuf = np.zeros(NPART * PCOUNT, dtype=np.int64)
    rbuf = np.zeros(NPART * PCOUNT, dtype=np.int64)
    rreq = comm.Precv_init(rbuf, NPART, left, tag=11)
    sreq = comm.Psend_init(sbuf, NPART, right, tag=11)
    for s in range(NROUNDS):
        rng = random.Random(1000 * s + rank)
        rbuf[:] = POISON
        rreq.Start()
        sreq.Start()
        order = list(range(NPART))
        rng.shuffle(order)
        data = pval(s, rank, NPART * PCOUNT)
        for p in order:
            sbuf[p * PCOUNT:(p + 1) * PCOUNT] = data[p * PCOUNT:(p + 1) * PCOUNT]
        if s % 3 == 0:
            for p in order:
                sreq.Pready(p)
        elif s % 3 == 1:
            cut = rng.randrange(1, NPART)
            sreq.Pready_range(cut, NPART - 1)
            sreq.Pready_range(0, cut - 1)
        else:
            sreq.Pready_list(order[:NPART // 2])
            sreq.Pready_list(order[NPART // 2:])
        if (rank + s) % 2 == 0:
            seen = set()
            t0 = time.monotonic()
            while len(seen) < NPART and time.monotonic() - t0 < 5.0:
                for p in range(NPART):
                    if p not in seen and rreq.Parrived(p):
                        check_part(rbuf, p, left, s, "right after Parrived said True")
                        seen.add(p)
            if len(seen) < NPART:
                fail(f"part round {s}: Parrived never said True in 5 s for partitions "
                     f"{sorted(set(range(NPART)) - seen)}")
        rreq.Wait()
        for p in range(NPART):
            check_part(rbuf, p, left, s, "after Wait")
        sreq.Wait()
    sreq.Free()
    rreq.Free()


def main():
    counts = (1, 1000, 100000)
    for count in counts:
        check_allreduce(count, MPI.SUM)
        check_allreduce(count, MPI.MAX)
    check_partitioned()
    total = comm.allreduce(errors, op=MPI.SUM)
    if rank == 0:
        print(f"inits per rank: allreduce_init={2 * len(counts)}", flush=True)
        print("part inits per rank: psend_init=1 precv_init=1", flush=True)
        if total == 0:
            print(f"PASS ompi5_mpi4py (np {size})", flush=True)
        else:
            print(f"FAIL ompi5_mpi4py (np {size}): {total} check(s) failed", flush=True)
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
