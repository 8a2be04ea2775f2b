#!/bin/bash
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# The channel benchmark (np=2, one node):
#   1. builds chan_bench.c twice:
#        ompi   Open MPI 4.1 + the build tree's libpnbc (a copy, taken at
#               the start): pnbc channels, ob1 persistent, ob1 isend/irecv,
#               K-slack streaming and the isend window
#        mpich  MPICH's persistent requests (mpicc.mpich, -DCHAN_BENCH_NO_PNBC)
#      and shm_floor.c (no MPI): the simplest shared-memory ping-pong of two
#      processes (a box and a flag each way) and one memcpy of the message,
#      what the machine allows, measured in the same rounds;
#   2. for each round, runs every (implementation, test) in turn, the order
#      rotating from round to round (one interleaved run: the numbers are
#      comparable with each other only);
#   3. writes OUT/chan.csv (medians over rounds), OUT/chan.md (tables,
#      ratios and the targets), OUT/chan.png (gnuplot, if found) and
#      OUT/raw.csv (every round).
#
# Usage: contrib/bench/run-chan-bench.sh [--quick] [--rounds R] [--batches B]
#          [--batch-ms MS] [--sizes LIST] [--stream-sizes LIST] [--out DIR]
#          [--quiet-wait S]
#   defaults: 5 rounds (quick 2) of 9 batches (quick 5) of ~10 ms (quick 4);
#   before each run, wait up to S s (default 10, quick 2) for idle CPUs
#   (the report counts the runs that started on a busy machine);
#   ping-pong sizes 8,64,512,4K,32K,256K,1M; streaming 4K,16K,64K,256K,1M.
# Environment: MPICC, MPIRUN, MPICC_MPICH, MPIEXEC_MPICH (see mpi-env.sh),
#   PNBC_BUILD_TREE (default: this source tree), BUILD_DIR.
# Exit status: 0 on success, 1 if a build or a run failed or a data check failed.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_TREE=$(cd "$HERE/../.." && pwd)
# shellcheck source=SCRIPTDIR/mpi-env.sh
. "$HERE/mpi-env.sh"

CMDLINE="contrib/bench/run-chan-bench.sh${*:+ $*}"
ROUNDS="" BATCHES="" BATCH_MS="" QUIET_WAIT="" QUICK=0 OUT=chan-bench-results
SIZES=8,64,512,4K,32K,256K,1M
STREAM_SIZES=4K,16K,64K,256K,1M
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --rounds) ROUNDS=$2; shift ;;
        --batches) BATCHES=$2; shift ;;
        --batch-ms) BATCH_MS=$2; shift ;;
        --quiet-wait) QUIET_WAIT=$2; shift ;;
        --sizes) SIZES=$2; shift ;;
        --stream-sizes) STREAM_SIZES=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h|--help) bench_usage "${BASH_SOURCE[0]}"; exit 0 ;;
        *) pnbc_log "unknown option: $1 (try --help)"; exit 2 ;;
    esac
    shift
done
if [ "$QUICK" = 1 ]; then
    : "${ROUNDS:=2}" "${BATCHES:=5}" "${BATCH_MS:=4}" "${QUIET_WAIT:=2}"
else
    : "${ROUNDS:=5}" "${BATCHES:=9}" "${BATCH_MS:=10}" "${QUIET_WAIT:=10}"
fi
bench_make_dirs pnbc-chan
RAW="$OUT/raw.csv" ERR="$OUT/errors.log"
echo "round,label,test,mode,bytes,value" >"$RAW"
: >"$ERR"
status=0

# ---------------------------------------------------------------- build
tree=${PNBC_BUILD_TREE:-$SRC_TREE}
libdir="$BUILD_DIR/pnbc-lib"
if ! pnbc_snapshot_libs "$tree" "$libdir"; then
    pnbc_log "error: no libpnbc.so in $tree (build the tree first)"
    exit 1
fi
BENCH_OMPI="$BUILD_DIR/chan_bench.ompi" BENCH_MPICH="$BUILD_DIR/chan_bench.mpich"
"$MPICC" -O2 -Wall -I"$SRC_TREE/ompi/mpiext/pnbc/c" -o "$BENCH_OMPI" "$HERE/chan_bench.c" \
    -L"$libdir" -lpnbc -Wl,-rpath,"$libdir" || exit 1
HAVE_MPICH=0
if have_mpich && "$MPICC_MPICH" -O2 -Wall -Wno-stringop-overflow -DCHAN_BENCH_NO_PNBC \
        -o "$BENCH_MPICH" "$HERE/chan_bench.c"; then
    HAVE_MPICH=1
else
    pnbc_log "note: no MPICH column"
fi
BENCH_FLOOR="$BUILD_DIR/shm_floor"
"${CC:-cc}" -O2 -Wall -o "$BENCH_FLOOR" "$HERE/shm_floor.c" || exit 1
rev=$(pnbc_tree_rev "$tree")

# ---------------------------------------------------------------- runs
JOBS=("pnbc pingpong chan" "ob1 pingpong persist" "ob1 pingpong isend"
      "pnbc stream kslack" "ob1 stream window" "floor pingpong box")
[ "$HAVE_MPICH" = 1 ] && JOBS+=("mpich pingpong persist")
OMPI_ARGS=(-np 2 --mca pml ob1 --mca btl "self,vader" --bind-to none)
run_job() {
    local label=$1 test=$2 mode=$3 sizes=$SIZES
    [ "$test" = stream ] && sizes=$STREAM_SIZES
    local args=(-l "$label" -m "$mode" -t "$test" -s "$sizes" -b "$BATCHES" -T "$BATCH_MS")
    if [ "$label" = floor ]; then
        timeout 300 "$BENCH_FLOOR" -s "$sizes" -b "$BATCHES" -T "$BATCH_MS"
    elif [ "$label" = mpich ]; then
        timeout 300 "$MPIEXEC_MPICH" -n 2 "$BENCH_MPICH" "${args[@]}"
    else
        timeout 300 "$MPIRUN" "${OMPI_ARGS[@]}" "$BENCH_OMPI" "${args[@]}"
    fi
}
BUSY_RUNS=0 NRUNS=0
for ((r = 0; r < ROUNDS; r++)); do
    n=${#JOBS[@]}
    for ((j = 0; j < n; j++)); do
        job=${JOBS[$(((j + r) % n))]}
        NRUNS=$((NRUNS + 1))
        wait_quiet "$QUIET_WAIT" || BUSY_RUNS=$((BUSY_RUNS + 1))
        # shellcheck disable=SC2086
        if ! out=$(run_job $job 2>>"$ERR"); then
            pnbc_log "run failed: $job (round $r)"
            status=1
        fi
        printf '%s\n' "$out" | grep -E '^[a-z0-9]+,' | sed "s/^/$r,/" >>"$RAW"
    done
    echo "round $((r + 1))/$ROUNDS done"
done

# ---------------------------------------------------------------- report
python3 - "$RAW" "$OUT" "$CMDLINE" "${rev:-?}" "$ROUNDS" "$BATCHES" "$BATCH_MS" "$BUSY_RUNS" "$NRUNS" <<'PY' || status=1
import csv, statistics, sys, datetime, platform, os
raw, out, cmd, rev, rounds, batches, ms, busy, nruns = sys.argv[1:10]
vals = {}
for row in csv.DictReader(open(raw)):
    vals.setdefault((row["label"], row["test"], row["mode"], int(row["bytes"])), []).append(float(row["value"]))
med = {k: statistics.median(v) for k, v in vals.items()}
with open(f"{out}/chan.csv", "w") as f:
    f.write("impl,test,mode,bytes,median,min,max,rounds\n")
    for k in sorted(med):
        v = vals[k]
        f.write(f"{k[0]},{k[1]},{k[2]},{k[3]},{med[k]:.4f},{min(v):.4f},{max(v):.4f},{len(v)}\n")
def human(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"
def g(k):
    return med.get(k)
def fmt(x, d=2):
    return "-" if x is None else (f"{x:.{d}f}" if x < 100 else f"{x:.0f}")
L = ["# pnbc channels: benchmark (np=2, one node)", "",
     f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; host: {platform.node()} {platform.machine()}",
     f"- pnbc: build tree commit {rev}; Open MPI 4.1 (--mca pml ob1 --mca btl self,vader --bind-to none); MPICH 4.0.2 (mpiexec.mpich, defaults)",
     f"- {rounds} interleaved rounds x {batches} batches of ~{ms} ms; each number: median over batches, then over rounds",
     f"- command: `{cmd}`",
     f"- runs started while other processes kept the CPUs busy: {busy} of {nruns}; load average at the end: {os.getloadavg()[0]:.1f}", "",
     "## Half round trip (µs), ping-pong with MPI_Start/MPI_Wait", "",
     "| size | pnbc channel | ob1 persistent | ob1 isend/irecv | MPICH persistent | channel / ob1 persistent | target | shm floor | one memcpy |",
     "|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
sizes = sorted({k[3] for k in med if k[1] == "pingpong"})
for b in sizes:
    c, p, i, m = g(("pnbc", "pingpong", "chan", b)), g(("ob1", "pingpong", "persist", b)), \
        g(("ob1", "pingpong", "isend", b)), g(("mpich", "pingpong", "persist", b))
    ratio = c / p if c and p else None
    tgt = "≤ 0.6" + (", ≤ 0.25 µs" if b == 8 else "")
    ok = ratio is not None and ratio <= 0.6 and (b != 8 or c <= 0.25)
    fb, fm = g(("floor", "pingpong", "box", b)), g(("floor", "pingpong", "memcpy", b))
    L.append(f"| {human(b)} | {fmt(c)} | {fmt(p)} | {fmt(i)} | {fmt(m)} | {fmt(ratio)} | {tgt} {'met' if ok else 'missed'} | {fmt(fb)} | {fmt(fm, 3)} |")
L += ["", "shm floor: half round trip of a bare two-process ping-pong through shared memory (a box and",
      "a flag each way, no MPI; shm_floor.c); one memcpy: the message copied once inside one process.",
      "A transport on this machine cannot go below the first; a single-copy transfer not below the",
      "second.",
      "", "## Streaming bandwidth (MB/s), 8 messages in flight, rank 0 -> 1", "",
      "| size | K-slack channel (K = 8) | window of 8 MPI_Isend | kslack / window | target |", "|---:|---:|---:|---:|---|"]
for b in sorted({k[3] for k in med if k[1] == "stream"}):
    k8, w = g(("pnbc", "stream", "kslack", b)), g(("ob1", "stream", "window", b))
    ratio = k8 / w if k8 and w else None
    tgt = ("≥ 1.3 " + ("met" if ratio and ratio >= 1.3 else "missed")) if b <= 65536 else "-"
    L.append(f"| {human(b)} | {fmt(k8, 0)} | {fmt(w, 0)} | {fmt(ratio)} | {tgt} |")
open(f"{out}/chan.md", "w").write("\n".join(L) + "\n")
with open(f"{out}/chan.dat", "w") as f:
    for b in sizes:
        row = [g(("pnbc", "pingpong", "chan", b)), g(("ob1", "pingpong", "persist", b)),
               g(("ob1", "pingpong", "isend", b)), g(("mpich", "pingpong", "persist", b))]
        f.write(f"{b} " + " ".join("NaN" if x is None else f"{x}" for x in row) + "\n")
print("\n".join(L))
PY
if command -v gnuplot >/dev/null 2>&1 && [ -s "$OUT/chan.dat" ]; then
    gnuplot <<EOF || status=1
set terminal pngcairo size 900,550
set output "$OUT/chan.png"
set title "Half round trip, np=2, one node"
set logscale xy
set xlabel "message bytes"
set ylabel "microseconds"
set key left top
plot "$OUT/chan.dat" using 1:2 with linespoints title "pnbc channel", \
     "" using 1:3 with linespoints title "ob1 persistent", \
     "" using 1:4 with linespoints title "ob1 isend/irecv", \
     "" using 1:5 with linespoints title "MPICH persistent"
EOF
fi
[ -s "$ERR" ] && { pnbc_log "stderr of the runs in $ERR:"; head -5 "$ERR" >&2; }
exit $status
