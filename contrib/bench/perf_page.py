#!/usr/bin/env python3
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
"""Rewrite the generated blocks of docs/performance.md from a run of
run-performance.sh.

perf_page.py PAGE OUT

OUT holds `meta` (key=value lines: series, ompi, mpich, os, cpu, date,
commit, quick) and one folder per suite with that suite's report, plus
SUITE.cmd (the suite's command line).  Every block of PAGE marked
    <!-- perf: SERIES SUITE -->
    ...
    <!-- /perf -->
whose SERIES is the run's and whose SUITE was run is replaced by the
suite's report under a line that says where, when, at which commit and
with which command it was measured.  A suite with no block in PAGE gets
a new section at the end.  Text outside the blocks stays as it is.
"""

import os
import re
import sys

REPORT = {  # suite -> report file in its folder
    "persistent-np2": "results.md",
    "persistent-np4": "results.md",
    "nonblocking-np2": "results-nbc.md",
    "partitioned": "part.md",
    "channels": "chan.md",
    "many": "many.md",
    "instructions": "instructions.md",
}
TITLE = {
    "persistent-np2": "persistent collectives, 2 processes",
    "persistent-np4": "persistent collectives, 4 processes (oversubscribed)",
    "nonblocking-np2": "nonblocking collectives, 2 processes",
    "partitioned": "partitioned communication, 2 processes",
    "channels": "channels, 2 processes",
    "many": "many live requests",
    "instructions": "instructions per 8 B call, 2 processes",
}
BLOCK = re.compile(r"<!-- perf: (\S+) (\S+) -->\n.*?<!-- /perf -->", re.S)


def read_meta(out):
    meta = {}
    with open(os.path.join(out, "meta")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    return meta


def report(out, suite):
    """The suite's report: its headings below the page's, no images, no
    leading title."""
    path = os.path.join(out, suite, REPORT[suite])
    if not os.path.exists(path):
        return None
    lines = []
    for line in open(path).read().rstrip("\n").split("\n"):
        if line.startswith("![") or (not lines and line.startswith("# ")):
            continue
        m = re.match(r"(#+) (.*)", line)
        if m:
            line = "#" * min(len(m.group(1)) + 2, 6) + " " + m.group(2)
        lines.append(line)
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def block(meta, out, suite, body):
    cmdfile = os.path.join(out, suite + ".cmd")
    cmd = open(cmdfile).read().strip() if os.path.exists(cmdfile) else "?"
    peers = "Open MPI %s" % meta.get("ompi", "?")
    if meta.get("mpich"):
        peers += ", MPICH %s" % meta["mpich"]
    series = "5.0" if meta["series"] == "ompi-5.0" else "native"
    head = ("Measured %s at commit %s: %s; %s; %s.  "
            "`contrib/bench/run-performance.sh --series %s --suites %s` "
            "(the suite alone: `%s`)." %
            (meta.get("date", "?"), meta.get("commit", "?"), peers,
             meta.get("os", "?"), meta.get("cpu", "?"), series, suite, cmd))
    if meta.get("quick", "0") != "0":
        head += "  **Quick run: to try the command, not a measurement.**"
    return "<!-- perf: %s %s -->\n%s\n\n%s\n<!-- /perf -->" % (
        meta["series"], suite, head, body)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: perf_page.py PAGE OUT")
    page, out = sys.argv[1], sys.argv[2]
    meta = read_meta(out)
    text = open(page).read()
    done = set()

    def repl(m):
        series, suite = m.group(1), m.group(2)
        if series != meta["series"] or suite not in REPORT:
            return m.group(0)
        body = report(out, suite)
        if body is None:
            return m.group(0)
        done.add(suite)
        return block(meta, out, suite, body)

    text = BLOCK.sub(repl, text)
    for suite in REPORT:
        if suite in done:
            continue
        body = report(out, suite)
        if body is None:
            continue
        name = "Open MPI %s: %s" % (meta["series"][5:], TITLE[suite])
        text = text.rstrip("\n") + "\n\n## %s\n\n%s\n" % (
            name[0].upper() + name[1:], block(meta, out, suite, body))
        done.add(suite)
    open(page, "w").write(text)
    print("perf_page.py: %s: %s rewritten from %s" %
          (page, ", ".join(sorted(done)) or "nothing", out))


if __name__ == "__main__":
    main()
