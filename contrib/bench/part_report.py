#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
"""Aggregate part_bench rounds into part.csv, part.md and part.png.

Usage: part_report.py RAW_CSV OUTDIR [--command CMD] [--meta TEXT ...]
                      [--errors FILE] [--plot auto|gnuplot|none]

RAW_CSV rows: round,impl,test,nparts,bytes,np,median_us,min_us,ok
(one row per round; run-part-bench.sh adds the round column).
Per (impl, test, nparts, bytes): median over rounds of the per-round
medians, min of the mins, ok = every round's data check passed.

The targets are reported, not enforced: in every cell
pnbc <= 0.7 x MPICH partitioned and pnbc <= the whole-buffer isend (of the
same total); early-bird 8 x 8 KiB: last Pready -> completion <= 2 us.
Only the Python standard library is used; the plot needs gnuplot.
"""

import csv
import math
import os
import shutil
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from report_common import (fmt_size, fmt_us, fnum, gnuplot_begin,  # noqa: E402
                           gnuplot_finish, parse_args, summarize_errors, verify_failures)
from report_common import gp_quote as gq  # noqa: E402

IMPLS = ["pnbc", "persist", "mpich", "isend"]
IMPL_DESC = {
    "pnbc": "pnbc partitioned (Open MPI 4.1: libpnbc, the MPI-4 names via pnbc_mpi4.h; Open MPI 5: "
            "Open MPI's own names served by part/pnbc; `--mca pml ob1 --mca btl self,vader`)",
    "persist": "Open MPI 5's own partitioned communication (the same program, "
               "`--mca part persist`)",
    "mpich": "MPICH partitioned (`MPI_Psend_init`/`MPI_Precv_init`/`MPI_Pready`, mpiexec.mpich)",
    "isend": "one `MPI_Isend`/`MPI_Irecv` of the whole buffer (Open MPI, "
             "`--mca pml ob1 --mca btl self,vader`)",
}
RATIO_MPICH = 0.7
RATIO_ISEND = 1.0
RATIO_PERSIST = 0.5
# the peers a pnbc cell is compared with, and the target of each ratio
TARGETS = (("persist", RATIO_PERSIST), ("mpich", RATIO_MPICH), ("isend", RATIO_ISEND))
EB_TARGET_US = 2.0
EB_TARGET_CELL = (8, 8 * 8192)


def load(raw):
    groups = {}
    with open(raw, newline="") as f:
        for row in csv.reader(f):
            if len(row) != 9 or row[1] == "impl":
                continue
            _, impl, test, nparts, nbytes, np_, med, mn, ok = row
            try:
                key = (impl, test, int(nparts), int(nbytes))
            except ValueError:
                continue
            g = groups.setdefault(key, {"med": [], "min": [], "ok": [], "np": np_})
            if fnum(med) is not None:
                g["med"].append(fnum(med))
            if fnum(mn) is not None:
                g["min"].append(fnum(mn))
            g["ok"].append(ok.strip() == "1")
    res = {}
    for key, g in groups.items():
        res[key] = {
            "median_us": statistics.median(g["med"]) if g["med"] else None,
            "min_us": min(g["min"]) if g["min"] else None,
            "rounds": len(g["med"]),
            "ok": all(g["ok"]),
            "np": g["np"],
        }
    return res


def wrong_from_errors(errors):
    """{(impl, test, nparts, bytes)} whose data check failed (part_bench's VERIFY FAILED lines)."""
    return verify_failures(errors, ("impl", "test", "nparts", "bytes"))


# what summarize_errors drops from part_bench's VERIFY FAILED lines
ERROR_DETAIL = r", byte \d+ \(partition \d+\): got 0x[0-9a-f]+, expected 0x[0-9a-f]+"


def write_csv(res, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["impl", "test", "nparts", "bytes", "np", "median_us", "min_us", "rounds", "ok"])
        order = {i: n for n, i in enumerate(IMPLS)}
        for k in sorted(res, key=lambda k: (k[1], k[2], k[3], order.get(k[0], 9), k[0])):
            r = res[k]
            w.writerow([k[0], k[1], k[2], k[3], r["np"],
                        "NA" if r["median_us"] is None else "%.4f" % r["median_us"],
                        "NA" if r["min_us"] is None else "%.4f" % r["min_us"],
                        r["rounds"], 1 if r["ok"] else 0])


class Cell:
    """Values of one table row: value per impl (None if missing or wrong)."""

    def __init__(self, res, keys):
        self.keys = keys
        self.shown, self.val = {}, {}
        for impl, key in keys.items():
            r = res.get(key)
            v = r["median_us"] if r else None
            if r and not r["ok"]:
                self.shown[impl] = fmt_us(v) + " ✗"
                self.val[impl] = None
            else:
                self.shown[impl] = fmt_us(v)
                self.val[impl] = v
        self.missing_pnbc = "pnbc" in keys and keys["pnbc"] in res and not res[keys["pnbc"]]["ok"]

    def ratio(self, peer):
        p, q = self.val.get("pnbc"), self.val.get(peer)
        return p / q if p and q else None


def verdict(cell, extra=None):
    """✓ / ✗ against the targets, with the failing ones named."""
    if cell.missing_pnbc:
        return "✗ wrong data"
    if cell.val.get("pnbc") is None:
        return "-"
    fails, unknown = [], []
    for peer, lim in TARGETS:
        if peer not in cell.keys:
            continue
        q = cell.ratio(peer)
        if q is None:
            unknown.append(peer)
        elif q > lim:
            fails.append("%s %.2f > %.1f" % (peer, q, lim))
    if extra is not None and cell.val["pnbc"] > extra:
        fails.append("%.2f µs > %g µs" % (cell.val["pnbc"], extra))
    if fails:
        return "✗ (" + "; ".join(fails) + ")"
    if len(unknown) == 2 and extra is None:
        return "-"
    # partial: not counted as met (see counted())
    return "✓" + (" (no %s)" % ", ".join(unknown) if unknown else "")


def counted(v):
    """(tried, met) increments for a verdict: complete verdicts only."""
    if v == "-" or "(no " in v:
        return 0, 0
    return 1, int(v.startswith("✓"))


def fmt_ratio(q):
    return "-" if q is None else "%.2f" % q


def gmean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def write_md(res, path, command, meta, errors):
    impls = [i for i in IMPLS if any(k[0] == i for k in res)]
    out = ["# Partitioned communication benchmark, np=2\n"]
    if command:
        out += ["```sh", command, "```", ""]
    out += ["- " + m for m in meta] + [""]
    if "pnbc" not in impls:
        out.append("> **Warning:** no pnbc numbers (libpnbc / mpicc-pnbc not found, or every run "
                   "failed); the ratios are missing.\n")
    if errors:
        out.append("> **Problems** (✗ after a number: its data check failed, the number is void):\n")
        out += [">     " + e for e in summarize_errors(errors, ERROR_DETAIL)] + [""]
    out.append("Implementations:\n")
    out += ["- `%s`: %s" % (i, IMPL_DESC[i]) for i in impls] + [""]
    out.append("Targets (reported, not enforced): pnbc ≤ %.1f × mpich, ≤ isend and (Open MPI 5) "
               "≤ %.1f × persist in every cell; early-bird %d × %s: last Pready → completion ≤ %g µs.\n"
               % (RATIO_MPICH, RATIO_PERSIST, EB_TARGET_CELL[0],
                  fmt_size(EB_TARGET_CELL[1] // EB_TARGET_CELL[0]), EB_TARGET_US))

    # ---- ping-pong
    out.append("## Ping-pong: half round trip, median µs\n")
    out.append("Persistent requests created once per cell, started every iteration; rank 0: "
               "`MPI_Start(send)`, `MPI_Pready` of each partition, `MPI_Wait`, `MPI_Start(recv)`, "
               "`MPI_Wait`; rank 1 the mirror image. `isend`: the whole buffer in one message "
               "(the same number in every partition row of a size). Cells with partitions below "
               "one byte (8 B in 64 partitions) are not run.\n")
    peers = [p for p, _ in TARGETS if p in impls]
    out.append("| partitions | total | partition | `pnbc` | " + " | ".join("`%s`" % p for p in peers)
               + " | " + " | ".join("pnbc/%s" % p for p in peers) + " | target |")
    out.append("|---:|---:|---:|---:|" + "---:|" * (2 * len(peers)) + "---|")
    cells = sorted({(k[2], k[3]) for k in res if k[1] == "pingpong" and k[0] != "isend"})
    met = tried = 0
    ratios = {p: [] for p in peers}
    for nparts, nbytes in cells:
        keys = {"pnbc": ("pnbc", "pingpong", nparts, nbytes)}
        for p in peers:
            keys[p] = (p, "pingpong", 1 if p == "isend" else nparts, nbytes)
        c = Cell(res, keys)
        v = verdict(c)
        t, m = counted(v)
        tried, met = tried + t, met + m
        for p in peers:
            ratios[p].append(c.ratio(p))
        out.append("| %d | %s | %s | %s | " % (nparts, fmt_size(nbytes), fmt_size(nbytes // nparts),
                                              c.shown.get("pnbc", "-"))
                   + " | ".join(c.shown.get(p, "-") for p in peers) + " | "
                   + " | ".join(fmt_ratio(c.ratio(p)) for p in peers) + " | %s |" % v)
    gms = {p: gmean(ratios[p]) for p in peers}
    gm_m, gm_i = gms.get("mpich"), gms.get("isend")
    out.append("| **geometric mean** | | | |" + " |" * len(peers) + " "
               + " | ".join("**%s**" % fmt_ratio(gms[p]) for p in peers) + " | |")
    out.append("")
    out.append("Ping-pong targets met in **%d of %d** cells (cells with both comparisons).\n"
               % (met, tried))

    # ---- early-bird
    out.append("## Early-bird: last partition ready → receiver complete, µs (median / min)\n")
    out.append("Rank 0 spins for the given work before each partition and readies it right after "
               "(`isend`: sends the whole buffer after the last work). The clock runs from just before "
               "rank 0's last `MPI_Pready` (`MPI_Isend`) to the moment rank 1's busy-polling sees "
               "completion: `earlybird` polls `MPI_Test`, `eb_parrived` polls `MPI_Parrived` on each "
               "partition in order (compared with isend's `MPI_Test` number). CLOCK_MONOTONIC on both "
               "ranks.\n")
    out.append("| configuration | test | `pnbc` | " + " | ".join("`%s`" % p for p in peers) + " | "
               + " | ".join("pnbc/%s" % p for p in peers) + " | target |")
    out.append("|---|---|---:|" + "---:|" * (2 * len(peers)) + "---|")
    ebcells = sorted({(k[2], k[3], k[1]) for k in res if k[1] in ("earlybird", "eb_parrived")})
    eb_met = eb_tried = 0
    for nparts, nbytes, test in ebcells:
        keys = {"pnbc": ("pnbc", test, nparts, nbytes)}
        for p in peers:
            keys[p] = (p, "earlybird" if p == "isend" else test, nparts, nbytes)
        c = Cell(res, keys)
        for impl, key in keys.items():
            r = res.get(key)
            if r and r["ok"] and r["min_us"] is not None:
                c.shown[impl] += " / " + fmt_us(r["min_us"])
        extra = EB_TARGET_US if (nparts, nbytes) == EB_TARGET_CELL else None
        v = verdict(c, extra)
        t, m = counted(v)
        eb_tried, eb_met = eb_tried + t, eb_met + m
        out.append("| %d × %s | %s | %s | " % (nparts, fmt_size(nbytes // nparts), test,
                                              c.shown.get("pnbc", "-"))
                   + " | ".join(c.shown.get(p, "-") for p in peers) + " | "
                   + " | ".join(fmt_ratio(c.ratio(p)) for p in peers) + " | %s |" % v)
    out.append("")
    out.append("Early-bird targets met in **%d of %d** rows (rows with both comparisons).\n"
               % (eb_met, eb_tried))
    out.append("Numbers per round: ping-pong, the median over batches of (batch time / iterations / 2, "
               "max over the ranks); early-bird, the median over repetitions. Table: the median over "
               "rounds; part.csv also has the min over everything. Ratios < 1: pnbc is faster.\n")
    with open(path, "w") as f:
        f.write("\n".join(out))
    return met, tried, eb_met, eb_tried, gm_m, gm_i


def plot_gnuplot(res, outdir, title):
    ddir, png, lines = gnuplot_begin(outdir, "part.png", "noenhanced size 1400,1000", "2,2", title)
    lines.append("set key top left")
    pp_parts = sorted({k[2] for k in res if k[1] == "pingpong" and k[0] != "isend"})
    sizes = sorted({k[3] for k in res if k[1] == "pingpong"})
    xt = ", ".join("%s %d" % (gq(fmt_size(b)), b) for b in sizes)
    for nparts in pp_parts[:3]:
        plots = []
        for n, impl in enumerate(IMPLS):
            pts = sorted((k[3], r["median_us"]) for k, r in res.items()
                         if k[0] == impl and k[1] == "pingpong" and r["ok"] and r["median_us"]
                         and k[2] == (1 if impl == "isend" else nparts))
            if not pts:
                continue
            fn = os.path.join(ddir, "pp.%d.%s.dat" % (nparts, impl))
            with open(fn, "w") as f:
                f.writelines("%d %g\n" % p for p in pts)
            plots.append("%s using 1:2 with linespoints lw 2 lc %d title %s" % (
                gq(fn), n + 1, gq(impl + (" (whole buffer)" if impl == "isend" else ""))))
        if plots:
            lines += ["set logscale xy", "set title %s" % gq("ping-pong, %d partition%s" % (
                nparts, "" if nparts == 1 else "s")), "set xlabel 'total bytes'",
                "set ylabel 'half round trip, median us'",
                "set xrange [%g:%g]" % (sizes[0] / 2.0, sizes[-1] * 2.0), "set xtics (%s)" % xt,
                "plot " + ", ".join(plots)]
    for _ in range(3 - min(3, len(pp_parts))):
        lines.append("set multiplot next")
    # early-bird: clustered bars (earlybird test only)
    eb = sorted({(k[2], k[3]) for k in res if k[1] == "earlybird"})
    if eb:
        fn = os.path.join(ddir, "eb.dat")

        def ebval(impl, nparts, nbytes):
            r = res.get((impl, "earlybird", nparts, nbytes))
            return r["median_us"] if r and r["ok"] and r["median_us"] else None
        have = [i for i in IMPLS if any(ebval(i, n, b) for n, b in eb)]
        with open(fn, "w") as f:
            f.write("config %s\n" % " ".join(have))
            for nparts, nbytes in eb:
                vals = ["%g" % ebval(i, nparts, nbytes) if ebval(i, nparts, nbytes) else "NaN"
                        for i in have]
                f.write('"%d x %s" %s\n' % (nparts, fmt_size(nbytes // nparts), " ".join(vals)))
        lines += ["unset logscale", "set logscale y", "set autoscale", "set xtics autofreq",
                  "set title 'early-bird: last Pready -> receiver completion (MPI_Test polling)'",
                  "set xlabel ''", "set ylabel 'median us'", "set style data histograms",
                  "set style histogram clustered gap 1", "set style fill solid 0.7",
                  "set key top right autotitle columnhead", "set yrange [0.1:*]",
                  "plot " + ", ".join("%s using %d%s lc %d" % (
                      gq(fn) if n == 0 else "''", n + 2, ":xtic(1)" if n == 0 else "",
                      IMPLS.index(i) + 1) for n, i in enumerate(have))]
    gnuplot_finish(lines, os.path.join(ddir, "part.gp"))
    return png


def main(argv):
    parsed = parse_args(argv, __doc__, ("meta", "command", "errors", "plot"))
    if parsed is None:
        return 2
    raw, outdir, opts = parsed
    meta, errors, plot, command = opts["meta"], opts["errors"], opts["plot"], opts["command"]
    os.makedirs(outdir, exist_ok=True)
    res = load(raw)
    if not res:
        sys.stderr.write("part_report: no data in %s\n" % raw)
        return 1
    # a data failure reported on stderr voids the cell even if the row is missing
    for key in wrong_from_errors(errors):
        if key in res:
            res[key]["ok"] = False
    write_csv(res, os.path.join(outdir, "part.csv"))
    met, tried, eb_met, eb_tried, gm_m, gm_i = write_md(
        res, os.path.join(outdir, "part.md"), command, meta, errors)
    png = None
    if plot in ("auto", "gnuplot") and shutil.which("gnuplot"):
        try:
            png = plot_gnuplot(res, outdir, "partitioned communication, np=2 (wrong results left out)")
        except (subprocess.CalledProcessError, OSError) as e:
            sys.stderr.write("part_report: WARNING: gnuplot failed (%s); no plot\n" % e)
    elif plot != "none":
        sys.stderr.write("part_report: WARNING: gnuplot not found; no plot (apt-get install gnuplot-nox)\n")
    print("results: %s, %s%s" % (os.path.join(outdir, "part.csv"), os.path.join(outdir, "part.md"),
                                 (", " + png) if png else ""))
    print("ping-pong targets met: %d of %d cells; early-bird: %d of %d rows; geometric mean "
          "pnbc/mpich %s, pnbc/isend %s" % (met, tried, eb_met, eb_tried, fmt_ratio(gm_m), fmt_ratio(gm_i)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
