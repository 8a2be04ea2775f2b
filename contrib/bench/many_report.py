#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# many_report.py OUT CMDLINE: OUT/many.csv (run-many-bench.sh) -> OUT/many.md
# (best of the runs per cell, each metric separately) and OUT/many.png
# (gnuplot, if installed: per-request init, per-request round cost and
# one MPI_Test while the requests wait,
# against N, log-log, one line per implementation and size).
import csv
import os
import shutil
import subprocess
import sys

out, cmdline = sys.argv[1], sys.argv[2]
METRICS = ["init_s", "first_s", "rounds_s", "free_s", "maxrss_kb", "idle_test_s"]
best = {}
for row in csv.DictReader(open(os.path.join(out, "many.csv"))):
    key = (int(row["np"]), int(row["bytes"]), int(row["n"]), row["impl"])
    vals = [float(row[m]) for m in METRICS]
    best[key] = [min(a, b) for a, b in zip(best[key], vals)] if key in best else vals
impls = [i for i in ("pnbc", "libnbc", "mpich") if any(k[3] == i for k in best)]
cells = sorted({k[:3] for k in best})


def fmt_s(v):
    return "%.0f µs" % (v * 1e6) if v < 1e-3 else ("%.1f ms" % (v * 1e3) if v < 1 else "%.2f s" % v)


def ratio(a, b):
    return "%.2f" % (a / b) if b > 0 else "-"


lines = ["# Many live persistent requests (allreduce, MPI_SUM of int)", "",
         "Command: `%s`" % cmdline, "",
         "Best of the runs per cell; times are the maximum over the ranks; "
         "`rounds` is the total of the timed rounds after the first; "
         "RSS is the largest ru_maxrss of the ranks.", ""]
for metric, title in ((0, "init of all N"), (1, "first round (Startall + Waitall)"),
                      (2, "timed rounds (Startall + Waitall each)"), (3, "free of all N"),
                      (4, "max RSS"),
                      (5, "one MPI_Test (a progress pass) while the N wait for a late rank")):
    lines += ["## " + title, "",
              "| np | bytes | N | " + " | ".join(impls) + " | pnbc / libnbc |",
              "|---|---:|---:|" + "---:|" * len(impls) + "---:|"]
    for c in cells:
        vals = [best.get(c + (i,)) for i in impls]
        shown = ["-" if v is None else (("%.0f MB" % (v[4] / 1024)) if metric == 4 else
                                        ("%.3f µs" % (v[5] * 1e6)) if metric == 5 else fmt_s(v[metric]))
                 for v in vals]
        p, l = best.get(c + ("pnbc",)), best.get(c + ("libnbc",))
        r = ratio(p[metric], l[metric]) if p and l else "-"
        lines.append("| %d | %d | %d | %s | %s |" % (c[0], c[1], c[2], " | ".join(shown), r))
    lines.append("")
lines += ["## Per request (µs): init, one round", "",
          "| np | bytes | N | " + " | ".join("%s init | %s round" % (i, i) for i in impls) + " |",
          "|---|---:|---:|" + "---:|---:|" * len(impls)]
for c in cells:
    row = []
    for i in impls:
        v = best.get(c + (i,))
        rounds = 19.0
        row += ["-", "-"] if v is None else ["%.2f" % (v[0] * 1e6 / c[2]),
                                             "%.2f" % (v[2] * 1e6 / rounds / c[2])]
    lines.append("| %d | %d | %d | %s |" % (c[0], c[1], c[2], " | ".join(row)))
open(os.path.join(out, "many.md"), "w").write("\n".join(lines) + "\n")

if shutil.which("gnuplot"):
    series = []
    for np_ in sorted({c[0] for c in cells}):
        for b in sorted({c[1] for c in cells if c[0] == np_}):
            for i in impls:
                pts = [(c[2], best[c + (i,)]) for c in cells if c[:2] == (np_, b) and c + (i,) in best]
                if pts:
                    name = "%s %dB np%d" % (i, b, np_)
                    path = os.path.join(out, "many-%s-%d-%d.dat" % (i, b, np_))
                    with open(path, "w") as f:
                        for n, v in pts:
                            f.write("%d %g %g %g\n" % (n, v[0] * 1e6 / n, v[2] * 1e6 / 19.0 / n,
                                                        v[5] * 1e6))
                    series.append((name, path))
    if series:
        plot = lambda col: ", ".join('"%s" using 1:%d with linespoints title "%s"' % (p, col, n)
                                     for n, p in series)
        script = "\n".join([
            'set terminal png size 1800,500', 'set output "%s"' % os.path.join(out, "many.png"),
            'set multiplot layout 1,3', 'set logscale xy', 'set xlabel "live requests N"',
            'set key left top font ",8"', 'set ylabel "init per request (us)"', "plot " + plot(2),
            'set ylabel "one round per request (us)"', "plot " + plot(3),
            'set ylabel "one MPI_Test while they wait (us)"', "plot " + plot(4),
            "unset multiplot"])
        subprocess.run(["gnuplot"], input=script.encode(), check=False)
print("wrote %s/many.md" % out)
