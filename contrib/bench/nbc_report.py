#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
"""The nonblocking grid's report (run-bench.sh --nonblocking).

Usage: nbc_report.py RESULTS_CSV RAW_CSV OUT_MD [--meta LINE]...

RESULTS_CSV is bench_report.py's results.csv (medians over rounds), RAW_CSV
the per-round rows it came from.  Writes OUT_MD: pnbc-nb against libnbc-nb,
the best peer (libnbc-nb, tuned, mpich-nb) and pnbc's persistent call; first
calls; overlap.  Two columns compare with the persistent call: against the
`pnbc` launches (another launch of each round), and against the
`pnbc-nb-persistent` rows that `pcoll_bench -m paired` measures in the
pnbc-nb launch itself, batch for batch (the ratio taken per round, then
the median over rounds): on a VM whose speed changes from one launch to the
next only the second compares like with like.
"""

import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import fmt_size  # noqa: E402

ORDER = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter"]
PEERS = ["libnbc-nb", "tuned", "mpich-nb"]


def load_results(path):
    res = {}
    for r in csv.DictReader(open(path)):
        res[(r["impl"], r["coll"], int(r["bytes"]))] = r
    return res


def same_launch_ratios(path):
    """(coll, bytes) -> median over rounds of pnbc-nb / pnbc-nb-persistent."""
    by_round = {}
    for row in csv.reader(open(path)):
        if len(row) != 9 or row[0] == "round" or row[0].startswith("#"):
            continue
        rnd, impl, coll, nbytes, _, med = row[:6]
        try:
            by_round[(rnd, impl, coll, int(nbytes))] = float(med)
        except ValueError:
            continue
    ratios = {}
    for (rnd, impl, coll, nbytes), x in by_round.items():
        p = by_round.get((rnd, "pnbc-nb-persistent", coll, nbytes))
        if impl == "pnbc-nb" and p:
            ratios.setdefault((coll, nbytes), []).append(x / p)
    return {k: statistics.median(v) for k, v in ratios.items()}


def fmt(v):
    if v is None:
        return ""
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v


def size(c, b):
    return "" if c == "barrier" else fmt_size(b)


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    src, raw, dst = argv[1:4]
    meta = [m for m in argv[4:] if m != "--meta"]
    res = load_results(src)
    paired = same_launch_ratios(raw)

    def val(i, c, b, f="median_us"):
        r = res.get((i, c, b))
        try:
            return float(r[f]) if r and r[f] not in ("NA", "") else None
        except ValueError:
            return None

    impls = [i for i in ["pnbc-nb", "libnbc-nb", "tuned", "mpich-nb", "pnbc"]
             if any(k[0] == i for k in res)]
    peers = [i for i in PEERS if i in impls]
    rows = sorted({(k[1], k[2]) for k in res if k[0] == "pnbc-nb"},
                  key=lambda x: (ORDER.index(x[0]) if x[0] in ORDER else 99, x[1]))
    out = ["# pnbc nonblocking collectives: benchmark", ""] + ["- " + m for m in meta] + [""]
    out += ["Median us per call + MPI_Wait (persistent `pnbc`: MPI_Start + MPI_Wait; `tuned`: "
            "blocking call). The last column: the persistent call timed in the pnbc-nb launch "
            "itself, in batches alternating with the nonblocking ones (`pcoll_bench -m paired`).", ""]
    hdr = (["coll", "size"] + ["`%s`" % i for i in impls] +
           ["pnbc-nb / libnbc-nb", "pnbc-nb / best peer", "pnbc-nb / pnbc persistent",
            "pnbc-nb / persistent, same launch"])
    out += ["| " + " | ".join(hdr) + " |",
            "|" + "|".join(["---", "---:"] + ["---:"] * (len(hdr) - 2)) + "|"]
    g = {"l": [], "b": [], "p": [], "s": []}
    for c, b in rows:
        x = val("pnbc-nb", c, b)
        best = min([v for v in (val(i, c, b) for i in peers) if v is not None] or [None])
        ratios = []
        for key, ref in (("l", val("libnbc-nb", c, b)), ("b", best), ("p", val("pnbc", c, b))):
            if x is not None and ref:
                g[key].append(x / ref)
                ratios.append("%.2f" % (x / ref))
            else:
                ratios.append("")
        s = paired.get((c, b))
        if s:
            g["s"].append(s)
        ratios.append("%.2f" % s if s else "")
        out.append("| %s | %s | " % (c, size(c, b)) + " | ".join(fmt(val(i, c, b)) for i in impls) +
                   " | " + " | ".join(ratios) + " |")

    def gm(v):
        return "%.2f" % math.exp(sum(map(math.log, v)) / len(v)) if v else ""
    out.append("| **geometric mean** | | " + " | ".join([""] * len(impls)) +
               " | **%s** | **%s** | **%s** | **%s** |" % (gm(g["l"]), gm(g["b"]), gm(g["p"]), gm(g["s"])))

    out += ["", "First call (a call + wait with buffers not used before: pnbc builds, commits and "
            "caches a schedule; libnbc and MPICH build theirs as on every call), median us:", ""]
    fi = [i for i in ["pnbc-nb", "libnbc-nb", "mpich-nb"] if i in impls]
    # the last column is what the first-call target measures (at most 5x, docs/nbc-targets.md): a
    # first call against libnbc's call (its median over the timed loops; libnbc has no cache, so
    # its first call is the same call timed 100 times)
    out += ["| coll | size | " + " | ".join("`%s`" % i for i in fi) +
            " | pnbc-nb / libnbc-nb (first calls) | pnbc-nb first / libnbc-nb call |",
            "|---|---:|" + "---:|" * (len(fi) + 2)]

    def ratio(x, ref):
        return "%.2f" % (x / ref) if x is not None and ref else ""
    for c, b in rows:
        if c == "barrier":
            continue
        x, first = val("pnbc-nb", c, b, "init_us"), val("libnbc-nb", c, b, "init_us")
        out.append("| %s | %s | " % (c, size(c, b)) +
                   " | ".join(fmt(val(i, c, b, "init_us")) for i in fi) +
                   " | %s | %s |" % (ratio(x, first), ratio(x, val("libnbc-nb", c, b))))
    out += ["", "Overlap (% of the collective hidden behind computation between the call and "
            "MPI_Wait):", ""]
    ov = [i for i in ["pnbc-nb", "libnbc-nb", "mpich-nb", "pnbc"] if i in impls]
    out += ["| coll | size | " + " | ".join("`%s`" % i for i in ov) + " |",
            "|---|---:|" + "---:|" * len(ov)]
    for c, b in rows:
        out.append("| %s | %s | " % (c, size(c, b)) +
                   " | ".join(fmt(val(i, c, b, "overlap_pct")) for i in ov) + " |")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote " + dst)


if __name__ == "__main__":
    main(sys.argv)
