#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
"""Aggregate pcoll_bench rounds into results.csv, results.md and a plot.

Usage: bench_report.py RAW_CSV OUTDIR [--meta TEXT ...] [--errors FILE]
                       [--plot auto|gnuplot|matplotlib|none]

RAW_CSV rows: round,impl,coll,bytes,np,median_us,min_us,init_us,overlap_pct
(one row per round; the round column is added by run-bench.sh).
Per (impl, coll, bytes, np): median over rounds of the per-round medians,
min of the mins, median of init_us and of overlap_pct.
Only the Python standard library is used; the plot needs gnuplot or matplotlib.
"""

import csv
import math
import os
import shutil
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from report_common import (fmt_us, fnum, gnuplot_begin, gnuplot_finish,  # noqa: E402
                           gp_quote, parse_args, summarize_errors, verify_failures)
from report_common import fmt_size as fmt_size_common  # noqa: E402

COLL_ORDER = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"]
IMPL_ORDER = ["pnbc", "pnbc-standin", "libnbc", "tuned", "mpich"]
IMPL_DESC = {
    "pnbc": "pnbc persistent (Open MPI, --mca coll pnbc,basic,libnbc,tuned,self)",
    "pnbc-standin": "STAND-IN: stock libnbc run in pnbc's place (pnbc was not found)",
    "libnbc": "libnbc persistent (Open MPI, --mca coll basic,libnbc,tuned,self)",
    "tuned": "tuned blocking (Open MPI, --mca coll basic,libnbc,tuned,self, MPI_<Coll>)",
    "mpich": "MPICH persistent (MPI_<Coll>_init)",
}


def fmt_size(b):
    """Like report_common.fmt_size, "-" for 0 (barrier)."""
    return "-" if int(b) == 0 else fmt_size_common(b)


def impl_key(i):
    return (IMPL_ORDER.index(i) if i in IMPL_ORDER else len(IMPL_ORDER), i)


def coll_key(c):
    return (COLL_ORDER.index(c) if c in COLL_ORDER else len(COLL_ORDER), c)


def load(raw):
    groups = {}
    with open(raw, newline="") as f:
        for row in csv.reader(f):
            if not row or row[0].startswith("#") or row[0] == "round":
                continue
            if len(row) != 9:
                continue
            _, impl, coll, nbytes, np_, med, mn, init, ovl = row
            key = (impl, coll, int(nbytes), int(np_))
            g = groups.setdefault(key, {"med": [], "min": [], "init": [], "ovl": []})
            for name, val in (("med", med), ("min", mn), ("init", init), ("ovl", ovl)):
                v = fnum(val)
                if v is not None:
                    g[name].append(v)
    res = {}
    for key, g in groups.items():
        res[key] = {
            "median_us": statistics.median(g["med"]) if g["med"] else None,
            "min_us": min(g["min"]) if g["min"] else None,
            "init_us": statistics.median(g["init"]) if g["init"] else None,
            "overlap_pct": statistics.median(g["ovl"]) if g["ovl"] else None,
            "rounds": len(g["med"]),
        }
    return res


def write_csv(res, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["impl", "coll", "bytes", "np", "median_us", "min_us", "init_us", "overlap_pct"])
        for key in sorted(res, key=lambda k: (coll_key(k[1]), k[2], impl_key(k[0]), k[3])):
            r = res[key]
            w.writerow([key[0], key[1], key[2], key[3]]
                       + ["NA" if r[c] is None else "%.3f" % r[c]
                          for c in ("median_us", "min_us", "init_us")]
                       + ["NA" if r["overlap_pct"] is None else "%.1f" % r["overlap_pct"]])


def wrong_cells(errors):
    """{(impl, coll, bytes)} whose data check failed (pcoll_bench's VERIFY FAILED lines)."""
    return verify_failures(errors, ("impl", "coll", "bytes"))


def write_md(res, path, meta, errors):
    wrong = wrong_cells(errors)
    impls = sorted({k[0] for k in res}, key=impl_key)
    rows = sorted({(k[1], k[2], k[3]) for k in res}, key=lambda r: (coll_key(r[0]), r[1], r[2]))
    subject = "pnbc" if "pnbc" in impls else ("pnbc-standin" if "pnbc-standin" in impls else None)
    # peers: other implementations, not pnbc's nonblocking rows (nbc_report.py's)
    peers = [i for i in impls if i != subject and not i.startswith("pnbc-nb")]
    out = []
    out.append("# pnbc benchmark results\n")
    for m in meta:
        out.append("- " + m)
    out.append("")
    if subject == "pnbc-standin":
        out.append("> **Warning:** the pnbc component was not found; the `pnbc-standin` column is stock "
                   "libnbc run in its place to exercise this pipeline. Its ratios say nothing about pnbc.\n")
    elif subject is None:
        out.append("> **Warning:** the pnbc component was not found (set `PNBC_COMPONENT_PATH` or install "
                   "it); the pnbc column and the ratio are missing.\n")
    if errors:
        out.append("> **Data check failures** (the received data was wrong; those numbers are void, "
                   "marked ✗ in the table and left out of the best-peer ratio):\n")
        for e in summarize_errors(errors, r", element \d+"):
            out.append(">     " + e)
        out.append("")
    out.append("Implementations:\n")
    for i in impls:
        out.append("- `%s`: %s" % (i, IMPL_DESC.get(i, i)))
    out.append("")
    out.append("## Latency: median µs per MPI_Start+MPI_Wait (persistent) or per call (blocking)\n")
    ratio_name = "%s / best peer" % subject if subject else "pnbc / best peer"
    hdr = ["coll", "size"] + ["`%s`" % i for i in impls] + [ratio_name]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "|".join(["---", "---:"] + ["---:"] * len(impls) + ["---:"]) + "|")
    logs = []
    nprocs = sorted({r[2] for r in rows})
    for coll, nbytes, np_ in rows:
        cells = [coll + ("" if len(nprocs) == 1 else " (np=%d)" % np_), fmt_size(nbytes)]
        vals = {}
        for i in impls:
            r = res.get((i, coll, nbytes, np_))
            v = r["median_us"] if r else None
            if (i, coll, int(nbytes)) in wrong:
                cells.append(fmt_us(v) + " ✗")
                v = None
            else:
                cells.append(fmt_us(v))
            vals[i] = v
        ratio = "-"
        if subject and vals.get(subject):
            cand = [(vals[p], p) for p in peers if vals.get(p)]
            if cand:
                best, who = min(cand)
                q = vals[subject] / best
                logs.append(math.log(q))
                ratio = "%.2f (%s)" % (q, who)
        cells.append(ratio)
        out.append("| " + " | ".join(cells) + " |")
    gm = "%.3f" % math.exp(sum(logs) / len(logs)) if logs else "-"
    out.append("| **geometric mean** | | " + " | ".join([""] * len(impls)) + " | **%s** |" % gm)
    out.append("")
    out.append("Ratio < 1: %s is faster than the fastest other implementation on that row "
               "(among those whose data checks passed; ✗: wrong results)." % (subject or "pnbc"))
    out.append("")

    pers = [i for i in impls if i != "tuned"]
    out.append("## Persistent extras: init cost (µs per *_init + MPI_Request_free) and overlap %\n")
    out.append("Overlap is OMB-style: a compute loop as long as the pure collective runs between "
               "MPI_Start and MPI_Wait, overlap = 100·(1 − (t_total − t_compute)/t_pure), clamped to "
               "[0, 100]. Without an asynchronous progress engine, 0 % is expected.\n")
    hdr = ["coll", "size"] + ["init `%s`" % i for i in pers] + ["overlap `%s`" % i for i in pers]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "|".join(["---", "---:"] + ["---:"] * (2 * len(pers))) + "|")
    for coll, nbytes, np_ in rows:
        cells = [coll + ("" if len(nprocs) == 1 else " (np=%d)" % np_), fmt_size(nbytes)]
        for i in pers:
            r = res.get((i, coll, nbytes, np_))
            cells.append(fmt_us(r["init_us"]) if r else "-")
        for i in pers:
            r = res.get((i, coll, nbytes, np_))
            cells.append("%.0f" % r["overlap_pct"] if r and r["overlap_pct"] is not None else "-")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out))
    return gm


def plot_data(res):
    """{coll: {impl: [(bytes, median, min)]}} for the first np."""
    data = {}
    for (impl, coll, nbytes, np_), r in res.items():
        if r["median_us"] is None:
            continue
        data.setdefault(coll, {}).setdefault(impl, []).append((nbytes, r["median_us"], r["min_us"]))
    for c in data.values():
        for pts in c.values():
            pts.sort()
    return data


def plot_gnuplot(res, outdir, title):
    data = plot_data(res)
    colls = sorted(data, key=coll_key)
    ncols = 3
    nrows = max(1, (len(colls) + ncols - 1) // ncols)
    ddir, png, lines = gnuplot_begin(outdir, "latency.png", "size 1500,950",
                                     "%d,%d" % (nrows, ncols), title)
    lines += ["set key top left font ',9'", "set ylabel 'median us'"]
    sizes = sorted({b for c in colls if c != "barrier" for pts in data[c].values() for b, _, _ in pts})
    if sizes:
        xtics = ", ".join("%s %d" % (gp_quote(fmt_size(b)), b) for b in sizes)
        xr = "set xrange [%g:%g]" % (sizes[0] / 2.0, sizes[-1] * 2.0)
    for coll in colls:
        impls = sorted(data[coll], key=impl_key)
        if coll == "barrier":
            fn = os.path.join(ddir, "barrier.dat")
            with open(fn, "w") as f:
                for n, i in enumerate(impls):
                    f.write("%s %g %d\n" % (i, data[coll][i][0][1], n + 1))
            lines += ["unset logscale", "set xlabel ''", "set title 'barrier'", "set autoscale x",
                      "set style fill solid 0.6", "set boxwidth 0.6", "set yrange [0:*]",
                      "plot %s using 0:2:3:xtic(1) with boxes lc variable notitle" % gp_quote(fn),
                      "set autoscale y", "set xtics autofreq"]
            continue
        plots = []
        for n, i in enumerate(impls):
            fn = os.path.join(ddir, "%s.%s.dat" % (coll, i))
            with open(fn, "w") as f:
                for b, med, mn in data[coll][i]:
                    f.write("%d %g %g\n" % (b, med, mn if mn is not None else med))
            plots.append("%s using 1:2 with linespoints lw 2 lc %d title %s" % (
                gp_quote(fn), n + 1, gp_quote(i)))
        lines += ["set logscale xy", "set title %s" % gp_quote(coll),
                  "set xlabel 'bytes per rank-block'", xr, "set xtics (%s)" % xtics,
                  "plot " + ", ".join(plots)]
    gnuplot_finish(lines, os.path.join(ddir, "latency.gp"))
    return png


def plot_matplotlib(res, outdir, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = plot_data(res)
    colls = sorted(data, key=coll_key)
    ncols = 3
    nrows = max(1, (len(colls) + ncols - 1) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(15, 4.75 * nrows), squeeze=False)
    all_impls = sorted({i for c in data.values() for i in c}, key=impl_key)
    color = {i: "C%d" % n for n, i in enumerate(all_impls)}
    for ax, coll in zip(axes.flat, colls):
        impls = sorted(data[coll], key=impl_key)
        if coll == "barrier":
            ax.bar(impls, [data[coll][i][0][1] for i in impls], color=[color[i] for i in impls])
        else:
            sizes = set()
            for i in impls:
                pts = data[coll][i]
                sizes.update(p[0] for p in pts)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=i,
                        color=color[i])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(sorted(sizes))
            ax.set_xticklabels([fmt_size(b) for b in sorted(sizes)])
            ax.set_xlabel("bytes per rank-block")
            ax.legend(fontsize=8)
        ax.set_title(coll)
        ax.set_ylabel("median us")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(colls):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    png = os.path.join(outdir, "latency.png")
    fig.savefig(png, dpi=100)
    return png


def main(argv):
    parsed = parse_args(argv, __doc__, ("meta", "errors", "plot"))
    if parsed is None:
        return 2
    raw, outdir, opts = parsed
    meta, errors, plot = opts["meta"], opts["errors"], opts["plot"]
    os.makedirs(outdir, exist_ok=True)
    res = load(raw)
    if not res:
        sys.stderr.write("bench_report: no data in %s\n" % raw)
        return 1
    write_csv(res, os.path.join(outdir, "results.csv"))
    gm = write_md(res, os.path.join(outdir, "results.md"), meta, errors)
    nps = sorted({k[3] for k in res})
    title = "persistent collectives, np=%s (median us per operation)" % ",".join(map(str, nps))
    # The plot shows only numbers whose data checks passed.
    wrong = wrong_cells(errors)
    if wrong:
        res = {k: v for k, v in res.items() if (k[0], k[1], int(k[2])) not in wrong}
        title += "; wrong results left out"
    png = None
    if plot in ("auto", "gnuplot") and shutil.which("gnuplot"):
        png = plot_gnuplot(res, outdir, title)
    elif plot in ("auto", "matplotlib"):
        try:
            png = plot_matplotlib(res, outdir, title)
        except ImportError:
            sys.stderr.write("bench_report: WARNING: neither gnuplot nor python3-matplotlib found; "
                             "no plot (apt-get install gnuplot-nox)\n")
    print("results: %s, %s%s; geometric mean of the pnbc/best-peer ratio: %s" % (
        os.path.join(outdir, "results.csv"), os.path.join(outdir, "results.md"),
        (", " + png) if png else "", gm))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
