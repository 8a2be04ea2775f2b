# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/docs.sh: the documentation is current and installed.
#   docs-parameters   contrib/gen-parameters.sh, run against the build tree's
#                     components, writes exactly docs/parameters.md and the
#                     MCA PARAMETERS section of man/man7/pnbc.7 (a help
#                     string changed without regenerating them fails; SKIP
#                     when they were made on another Open MPI series)
#   docs-man          after "make install": man -w finds, under
#                     PNBC_PREFIX/share/man, a page for every MPIX_ function
#                     that ompi/mpiext/pnbc/c/mpiext_pnbc_c.h declares, for
#                     mpicc-pnbc(1), pnbc-tune(1) and pnbc(7), and each
#                     installed page formats without a groff warning
#   docs-words        README.md, docs/ and man/ name results by date and
#                     commit, never by a work counter (the word for a sitting
#                     followed by its number, in text or a file name), and
#                     cite no issue of the project's own tracker
#
# Sourced by run-tests.sh, where it adds the docs-* cases; each case runs
# this file as a script:  bash docs.sh parameters|man|words
# Environment: PNBC_PREFIX  install prefix (default /usr/local)
#              TEST_BINDIR  the build tree's test directory (its parent is
#                           the build tree)

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    # ---- sourced by run-tests.sh: the cases ----
    docs_self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    run_case docs-parameters bash "$docs_self" parameters
    run_case docs-man bash "$docs_self" man
    run_case docs-words bash "$docs_self" words
    unset docs_self
    return 0
fi

# ---- run as a case ----
set -u
mode=${1:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${TEST_BINDIR:-$top/test}/.." && pwd)
prefix=${PNBC_PREFIX:-/usr/local}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-docs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

case "$mode" in
parameters)
    page=$top/docs/parameters.md
    [ -f "$page" ] || { echo "FAIL docs-parameters: no $page"; exit 1; }
    made_on=$(sed -n 's/.*on Open MPI \([0-9]*\.[0-9]*\)\.x with.*/\1/p' "$page" | head -n 1)
    here_on=$(${OMPI_INFO:-ompi_info} --parsable 2>/dev/null |
        sed -n 's/^ompi:version:full:\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
    if [ "$made_on" != "$here_on" ]; then
        echo "SKIP docs/parameters.md lists Open MPI $made_on's parameters, this is $here_on"
        exit 77
    fi
    bash "$top/contrib/gen-parameters.sh" -o "$tmp/parameters.md" \
        -m "$top/man/man7/pnbc.7" -M "$tmp/pnbc.7" "$build" || {
        echo "FAIL docs-parameters: contrib/gen-parameters.sh failed"; exit 1; }
    n=$(grep -c '^| `' "$tmp/parameters.md")
    [ "$n" -ge 20 ] || { echo "FAIL docs-parameters: only $n parameters listed"; exit 1; }
    stale=0
    diff -u "$page" "$tmp/parameters.md" || stale=1
    diff -u "$top/man/man7/pnbc.7" "$tmp/pnbc.7" || stale=1
    nm=$(grep -c '^\.TP' "$tmp/pnbc.7")
    [ "$nm" -ge "$n" ] || { echo "FAIL docs-parameters: pnbc.7 lists $nm entries, the page $n"; exit 1; }
    if [ $stale -ne 0 ]; then
        echo "FAIL docs-parameters: docs/parameters.md or man/man7/pnbc.7 is stale:" \
            "bash contrib/gen-parameters.sh -o docs/parameters.md -m man/man7/pnbc.7"
        exit 1
    fi
    echo "PASS docs-parameters ($n parameters, Open MPI $here_on)"
    ;;
man)
    command -v man >/dev/null 2>&1 || {
        echo "FAIL docs-man: no man command (contrib/install-deps.sh installs man-db)"; exit 1; }
    mandir=$prefix/share/man
    # the pages expected: every MPIX_ function of the public header, and
    # the commands and the overview
    funcs=$(grep -o '^int MPIX_[A-Za-z_]*' "$top/ompi/mpiext/pnbc/c/mpiext_pnbc_c.h" | sed 's/^int //' | sort -u)
    nf=$(echo "$funcs" | wc -w)
    [ "$nf" -ge 12 ] || { echo "FAIL docs-man: only $nf MPIX_ functions found in the header"; exit 1; }
    nfail=0
    check() {
        local sec=$1 name=$2 f
        if ! f=$(MANPATH=$mandir man -w "$sec" "$name" 2>/dev/null) || [ -z "$f" ]; then
            echo "FAIL docs-man: man -w $sec $name finds nothing under $mandir"
            nfail=$((nfail + 1))
            return
        fi
        case "$f" in "$mandir"/*) ;; *)
            echo "FAIL docs-man: man -w $sec $name gives $f, not under $mandir"
            nfail=$((nfail + 1)); return ;;
        esac
        if ! MANWIDTH=80 man --warnings -l "$f" >"$tmp/out" 2>"$tmp/err" || [ -s "$tmp/err" ]; then
            echo "FAIL docs-man: $f does not format cleanly:"
            head -n 5 "$tmp/err"
            nfail=$((nfail + 1))
            return
        fi
        grep -q "$name" "$tmp/out" || {
            echo "FAIL docs-man: $f does not name $name"; nfail=$((nfail + 1)); return; }
        echo "ok $sec $name: $f"
    }
    for fn in $funcs; do check 3 "$fn"; done
    check 1 mpicc-pnbc
    check 1 pnbc-tune
    check 7 pnbc
    [ $nfail -eq 0 ] || exit 1
    echo "PASS docs-man ($nf functions, 2 commands, the overview)"
    ;;
words)
    word=sess
    word=${word}ion
    hits=$(grep -rniE "${word}s? *[0-9]" "$top/README.md" "$top/docs" "$top/man" 2>/dev/null |
        grep -v '\.csv:' | head -n 20)
    files=$(cd "$top" && find README.md docs man -iname "*$word*" 2>/dev/null | head -n 20)
    # the project's own tracker (another project's public issue, "Open MPI
    # issue 13303", is a reference a user can follow) and links to run
    # records that are no longer in the tree
    hits=$hits$(grep -rniE "(^|[^a-z])issue[s]? *[0-9]|its run record" "$top/README.md" \
        "$top/docs" "$top/man" 2>/dev/null | grep -viE "(open mpi|openmpi|mpich|prrte|pmix|mpi-issues)[^|]{0,12}issue" |
        grep -v '\.csv:' | head -n 20)
    if [ -n "$hits$files" ]; then
        echo "FAIL docs-words: a work counter in the documentation:"
        echo "$hits"
        echo "$files"
        exit 1
    fi
    echo "PASS docs-words"
    ;;
*)
    echo "usage: docs.sh parameters|man|words" >&2
    exit 2
    ;;
esac
