#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
"""Aggregate pcoll_bench rounds into results.csv, results.md and a plot.

Usage: bench_report.py RAW_CSV OUTDIR [--meta TEXT ...] [--errors FILE]
                       [--plot auto|gnuplot|matplotlib|none]
       bench_report.py --floor-args COLL SIZES NP
       bench_report.py --bare-args COLL SIZES NP

RAW_CSV rows: round,impl,coll,bytes,np,median_us,min_us,init_us,overlap_pct
(one row per round; the round column is added by run-bench.sh), and the
machine's floor (shm_floor): round,floor,pingpong,box|flag|memcpy,BYTES,US,
and the bare exchanges of two processes (exchange_floor):
round,floor,alltoall|allreduce|barrier,MODE,BYTES,US.
Per (impl, coll, bytes, np): median over rounds of the per-round medians,
min of the mins, median of init_us and of overlap_pct.  Each cell's floor
(floor_parts) adds up the medians of its bare ping-pongs over all floor runs.
--floor-args prints, one a line, the shm_floor arguments that measure what
the floors of COLL at SIZES (comma list, K/M allowed) and NP ranks need;
--bare-args exchange_floor's for the bare exchanges of COLL's cells (none
if COLL or NP has none).
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


def floor_parts(coll, nbytes, np_):
    """The floor of a cell: [(count, bytes)], count bare ping-pongs of bytes
    each (bytes 0: the bare flag exchange): the bytes the busiest rank must
    receive, as one ping-pong; allreduce as a reduce-scatter then an
    allgather, two ping-pongs of (np-1)/np of the vector (np=2: half)."""
    S, others = int(nbytes), np_ - 1
    if coll == "barrier":
        return [(1, 0)]
    if coll in ("bcast", "reduce", "scatter"):
        return [(1, S)]
    if coll == "allreduce":
        return [(2, -(-S * others // np_))]
    if coll in ("allgather", "alltoall", "gather"):
        return [(1, S * others)]
    return []


def parse_size(t):
    """"4096", "64K", "1M" in bytes."""
    t = t.strip()
    mult = {"k": 1 << 10, "m": 1 << 20}.get(t[-1:].lower(), 1)
    return int(float(t[:-1] if mult > 1 else t) * mult)


def floor_args(coll, sizes, np_):
    """shm_floor's arguments for the floors of coll at sizes (and a memcpy
    and ping-pong of each size itself, the report's floor table; barrier:
    8 bytes) and, in every run, the bare flag exchange."""
    need = set()
    for S in [8] if coll == "barrier" else sizes:
        need.add(S)
        need.update(b for _, b in floor_parts(coll, S, np_) if b)
    return ["-s", ",".join(str(b) for b in sorted(need)), "-f"]


# The bare exchange of a cell: what two processes do for the collective
# without MPI, through boxes as pnbc's shared memory does (exchange_floor.c),
# its barrier taken out: {coll: (exchange_floor's collective, mode)}, from
# BARE_MIN bytes on (below, its barrier is most of it), at np=2 only.
BARE = {"allgather": ("alltoall", "box"), "alltoall": ("alltoall", "box"),
        "allreduce": ("allreduce", "fold")}
BARE_OTHER = {"alltoall": "cma", "allreduce": "halves"}   # shown beside it
BARE_MIN = 4096


def bare_args(coll, sizes, np_):
    """exchange_floor's arguments for coll's bare exchanges at sizes ([] if none)."""
    sizes = [S for S in sizes if S >= BARE_MIN]
    if np_ != 2 or coll not in BARE or not sizes:
        return []
    kind, mode = BARE[coll]
    return ["-s", ",".join(str(S) for S in sorted(set(sizes))),
            "-m", "%s,%s,barrier" % (mode, BARE_OTHER[kind])]


def bare_us(floor, coll, nbytes, np_, mode=None):
    """The bare exchange (or mode of its kind) of a cell in µs, less the barrier; or None."""
    if np_ != 2 or coll not in BARE or int(nbytes) < BARE_MIN:
        return None
    kind = BARE[coll][0]
    v = floor.get(("%s:%s" % (kind, mode or BARE[coll][1]), int(nbytes)))
    b = floor.get(("barrier:barrier", int(nbytes)))
    return None if v is None or b is None else max(v - b, 0.0)


def floor_us(floor, coll, nbytes, np_):
    """The cell's floor in µs from floor {(mode, bytes): µs}, or None."""
    parts = floor_parts(coll, nbytes, np_)
    vals = [(n, floor.get(("flag", 8) if b == 0 else ("box", b))) for n, b in parts]
    if not vals or any(v is None for _, v in vals):
        return None
    return sum(n * v for n, v in vals)


def load(raw):
    groups, floor = {}, {}
    with open(raw, newline="") as f:
        for row in csv.reader(f):
            if not row or row[0].startswith("#") or row[0] == "round":
                continue
            if len(row) == 6 and row[1] == "floor":
                v = fnum(row[5])
                # the ping-pongs by mode, the bare exchanges by kind:mode
                mode = row[3] if row[2] == "pingpong" else "%s:%s" % (row[2], row[3])
                if v is not None and v >= 0:
                    floor.setdefault((mode, int(row[4])), []).append(v)
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
    return res, {k: (statistics.median(v), min(v), len(v)) for k, v in floor.items()}


def write_csv(res, floor, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["impl", "coll", "bytes", "np", "median_us", "min_us", "init_us", "overlap_pct",
                    "floor_us"])
        for key in sorted(res, key=lambda k: (coll_key(k[1]), k[2], impl_key(k[0]), k[3])):
            r = res[key]
            fl = floor_us(floor, key[1], key[2], key[3])
            w.writerow([key[0], key[1], key[2], key[3]]
                       + ["NA" if r[c] is None else "%.3f" % r[c]
                          for c in ("median_us", "min_us", "init_us")]
                       + ["NA" if r["overlap_pct"] is None else "%.1f" % r["overlap_pct"]]
                       + ["NA" if fl is None else "%.3f" % fl])


def write_floor_csv(floor, path):
    """floor.csv: the floor runs' medians per mode and size."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["mode", "bytes", "median_us", "min_us", "runs"])
        for (mode, b), (med, mn, n) in sorted(floor.items()):
            w.writerow([mode, b, "%.4f" % med, "%.4f" % mn, n])


def wrong_cells(errors):
    """{(impl, coll, bytes)} whose data check failed (pcoll_bench's VERIFY FAILED lines)."""
    return verify_failures(errors, ("impl", "coll", "bytes"))


def floor_section(floor, np_list):
    """results.md's lines on the machine's floor: {(mode, bytes): µs} per size, the flag."""
    sizes = sorted({b for m, b in floor if m in ("box", "memcpy")})
    if not sizes:
        return ["No floor was measured (`--no-floor`): the floor columns are empty.", ""]
    out = ["## The machine's floor (no MPI: shm_floor.c, in the same rounds)\n",
           "Bare ping-pong: half round trip of two processes through shared memory, a box and a "
           "flag each way; one memcpy: the bytes copied once inside one process.\n",
           "| size | bare ping-pong µs | one memcpy µs |", "|---:|---:|---:|"]
    for b in sizes:
        out.append("| %s | %s | %s |" % (fmt_size_common(b), fmt_us(floor.get(("box", b))),
                                         fmt_us(floor.get(("memcpy", b)))))
    out.append("")
    if ("flag", 8) in floor:
        out.append("Bare flag exchange (8 B carried in the flag word, no box): %s µs.\n"
                   % fmt_us(floor[("flag", 8)]))
    out.append("A cell's floor is the bare ping-pong of the bytes the busiest rank must receive "
               "(S: bytes per rank-block, np: ranks%s): barrier the bare flag exchange; bcast, "
               "reduce, scatter S; allreduce two ping-pongs of ⌈S·(np−1)/np⌉ (a reduce-scatter, "
               "then an allgather: 2 × S/2 at np=2); allgather, alltoall, gather (np−1)·S."
               % ("" if np_list == [2] else "; at np > 2 a lower bound, not what any algorithm reaches"))
    out.append("")
    return out


def bare_section(res, floor, subject):
    """results.md's lines on the bare exchanges beside pnbc's cells (np=2)."""
    rows = sorted({(k[1], k[2]) for k in res if k[3] == 2 and bare_us(floor, k[1], k[2], 2)},
                  key=lambda r: (coll_key(r[0]), r[1]))
    if not rows or not subject:
        return []
    out = ["## What the exchanges are made of (no MPI: exchange_floor.c, in the same rounds)\n",
           "Two processes doing a cell's work without MPI, each copying at the same time as the "
           "other, as in the collective: allgather and alltoall each process's block for the "
           "other into its box, its own block, the other's block out of its box (`box`), or the "
           "other's block read with one `process_vm_readv` and its own copied (`cma`); allreduce "
           "(MPI_SUM of doubles) the whole vector into the box and the other's folded with its "
           "own in one pass (`fold`, recursive doubling's exchange), or a reduce-scatter and an "
           "allgather of halves (`halves`, Rabenseifner's). Each less the two processes' barrier "
           "that separates the iterations, measured beside it.\n",
           "| coll | size | `%s` | floor | bare `box` / `fold` | bare `cma` / `halves` | "
           "`%s` × bare |" % (subject, subject),
           "|---|---:|---:|---:|---:|---:|---:|"]
    for coll, nbytes in rows:
        r = res.get((subject, coll, nbytes, 2))
        v = r["median_us"] if r else None
        bare = bare_us(floor, coll, nbytes, 2)
        other = bare_us(floor, coll, nbytes, 2, BARE_OTHER[BARE[coll][0]])
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            coll, fmt_size(nbytes), fmt_us(v), fmt_us(floor_us(floor, coll, nbytes, 2)),
            fmt_us(bare), fmt_us(other), "%.1f" % (v / bare) if v and bare else "-"))
    out.append("")
    return out


def write_md(res, floor, path, meta, errors):
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
    hdr = ["coll", "size"] + ["`%s`" % i for i in impls] + [ratio_name, "floor",
                                                             "`%s` × floor" % (subject or "pnbc")]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "|".join(["---", "---:"] + ["---:"] * len(impls) + ["---:"] * 3) + "|")
    logs, flogs = [], []
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
        fl = floor_us(floor, coll, nbytes, np_)
        xf = "-"
        if fl and subject and vals.get(subject):
            flogs.append(math.log(vals[subject] / fl))
            xf = "%.1f" % (vals[subject] / fl)
        cells += [ratio, fmt_us(fl), xf]
        out.append("| " + " | ".join(cells) + " |")
    gm = "%.3f" % math.exp(sum(logs) / len(logs)) if logs else "-"
    gmf = "%.2f" % math.exp(sum(flogs) / len(flogs)) if flogs else "-"
    out.append("| **geometric mean** | | " + " | ".join([""] * len(impls))
               + " | **%s** | | **%s** |" % (gm, gmf))
    out.append("")
    out.append("Ratio < 1: %s is faster than the fastest other implementation on that row "
               "(among those whose data checks passed; ✗: wrong results). "
               "× floor: %s's median over the row's floor, what the machine allows (below)."
               % ((subject or "pnbc",) * 2))
    out.append("")
    out += floor_section(floor, nprocs)
    out += bare_section(res, floor, subject)

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
    if len(argv) == 5 and argv[1] == "--floor-args":
        sizes = [parse_size(t) for t in argv[3].split(",") if t.strip()]
        print("\n".join(floor_args(argv[2], sizes, int(argv[4]))))
        return 0
    if len(argv) == 5 and argv[1] == "--bare-args":
        sizes = [parse_size(t) for t in argv[3].split(",") if t.strip()]
        print("\n".join(bare_args(argv[2], sizes, int(argv[4]))))
        return 0
    parsed = parse_args(argv, __doc__, ("meta", "errors", "plot"))
    if parsed is None:
        return 2
    raw, outdir, opts = parsed
    meta, errors, plot = opts["meta"], opts["errors"], opts["plot"]
    os.makedirs(outdir, exist_ok=True)
    res, floor_runs = load(raw)
    if not res:
        sys.stderr.write("bench_report: no data in %s\n" % raw)
        return 1
    floor = {k: v[0] for k, v in floor_runs.items()}
    write_csv(res, floor, os.path.join(outdir, "results.csv"))
    if floor_runs:
        write_floor_csv(floor_runs, os.path.join(outdir, "floor.csv"))
    gm = write_md(res, floor, os.path.join(outdir, "results.md"), meta, errors)
    nps = sorted({k[3] for k in res})
    title = "persistent collectives, np=%s (median us per operation)" % ",".join(map(str, nps))
    # The plot shows only numbers whose data checks passed.
    wrong = wrong_cells(errors)
    if wrong:
        res = {k: v for k, v in res.items() if (k[0], k[1], int(k[2])) not in wrong}
        title += "; wrong results left out"
    # the floor as one more line (bar) of each panel
    for coll, nbytes, np_ in {k[1:] for k in res}:
        fl = floor_us(floor, coll, nbytes, np_)
        if fl is not None:
            res[("floor", coll, nbytes, np_)] = {"median_us": fl, "min_us": fl}
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
