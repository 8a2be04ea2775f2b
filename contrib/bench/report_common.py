# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by bench_report.py and part_report.py: number parsing and
formatting, the command line, the data-check failures on stderr and gnuplot.
Only the Python standard library is used.
"""

import math
import os
import re
import subprocess
import sys

# fields of a VERIFY FAILED line that are numbers
NUMERIC_FIELDS = ("bytes", "nparts")


def fnum(s):
    """float(s), or None if s is not a finite number."""
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def fmt_size(b):
    """Bytes as "N MiB", "N KiB" or "N B" (the largest unit dividing b)."""
    b = int(b)
    if b % (1 << 20) == 0:
        return "%d MiB" % (b >> 20)
    if b % (1 << 10) == 0:
        return "%d KiB" % (b >> 10)
    return "%d B" % b


def fmt_us(v):
    """Microseconds with three significant digits at most, "-" for None."""
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def parse_args(argv, doc, options):
    """RAW_CSV OUTDIR [--OPT VALUE ...] into (raw, outdir, opts), or None after
    writing the usage (doc) to stderr.  options: the accepted option names
    without "--"; "meta" collects a list, "errors" reads the non-empty lines
    of the file it names (if it exists), the others keep their last value.
    opts has every option: meta and errors [], plot "auto", the others ""."""
    args = list(argv[1:])
    if len(args) < 2:
        sys.stderr.write(doc)
        return None
    opts = {o: [] if o in ("meta", "errors") else "auto" if o == "plot" else "" for o in options}
    k = 2
    while k < len(args):
        opt = args[k][2:] if args[k].startswith("--") else None
        if opt not in opts or k + 1 >= len(args):
            sys.stderr.write(doc)
            return None
        val = args[k + 1]
        if opt == "meta":
            opts["meta"].append(val)
        elif opt == "errors":
            if os.path.exists(val):
                with open(val) as f:
                    opts["errors"] = [ln.rstrip() for ln in f if ln.strip()]
        else:
            opts[opt] = val
        k += 2
    return args[0], args[1], opts


def verify_failures(errors, fields):
    """{tuple of fields} of the "VERIFY FAILED: f1=v1 f2=v2 ..." lines among
    errors, e.g. fields ("impl", "coll", "bytes"); NUMERIC_FIELDS are ints."""
    pat = "VERIFY FAILED: " + " ".join(
        "%s=(%s)" % (f, r"\d+" if f in NUMERIC_FIELDS else r"\S+") for f in fields)
    bad = set()
    for e in errors:
        m = re.search(pat, e)
        if m:
            bad.add(tuple(int(v) if f in NUMERIC_FIELDS else v for f, v in zip(fields, m.groups())))
    return bad


def summarize_errors(errors, detail_re):
    """One line per distinct problem, with how often it happened (ranks and
    rounds repeat the same failure; detail_re removes the per-failure details)."""
    counts, order = {}, []
    for e in errors:
        key = re.sub(r" rank=\d+", "", e)
        key = re.sub(r": round \d+ ", ": ", key)
        key = re.sub(detail_re, "", key)
        if key not in counts:
            order.append(key)
            counts[key] = 0
        counts[key] += 1
    return ["%s  (%d times)" % (k, counts[k]) if counts[k] > 1 else k for k in order]


def gp_quote(s):
    """s as a gnuplot string."""
    return "'" + s.replace("'", "''") + "'"


def gnuplot_begin(outdir, png_name, term_opts, layout, title):
    """(data directory, png path, first script lines) of a multiplot PNG:
    pngcairo if gnuplot has it, else png; layout "ROWS,COLS"."""
    ddir = os.path.join(outdir, "plot-data")
    os.makedirs(ddir, exist_ok=True)
    terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    term = "pngcairo %s font 'sans,10'" % term_opts if "pngcairo" in (terms.stdout + terms.stderr) \
        else "png %s" % term_opts
    png = os.path.join(outdir, png_name)
    lines = ["set terminal %s" % term, "set output %s" % gp_quote(png),
             "set multiplot layout %s title %s" % (layout, gp_quote(title)), "set grid"]
    return ddir, png, lines


def gnuplot_finish(lines, script):
    """Close the multiplot, write the script and run gnuplot on it."""
    lines.append("unset multiplot")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["gnuplot", script], check=True)
