#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# gen-parameters.sh: write docs/parameters.md, and the MCA PARAMETERS
# section of pnbc(7), from the MCA parameters pnbc registers, as Open MPI's
# ompi_info reports them (name, default, level, help string, the values of
# an enumeration, synonyms).  The help strings in the sources are the one
# place a parameter is described; these pages are their copy, and the
# docs-parameters test case fails when they are stale.
#
# Usage: contrib/gen-parameters.sh [-o FILE] [-m MANPAGE [-M OUT]] [BUILDDIR]
#   BUILDDIR  a configured and built pnbc tree (default: this source tree)
#   -o FILE   write the markdown page to FILE instead of standard output
#   -m MAN    also rewrite the lines of MAN (man/man7/pnbc.7) between its
#             BEGIN and END GENERATED PARAMETERS markers ...
#   -M OUT    ... writing the result to OUT instead of MAN
#   Regenerate both:
#     bash contrib/gen-parameters.sh -o docs/parameters.md -m man/man7/pnbc.7
# Environment:
#   OMPI_INFO            ompi_info to run (default: ompi_info on PATH)
#   PNBC_COMPONENT_PATH  component path to give Open MPI (default: every
#                        BUILDDIR/ompi/mca/*/pnbc/.libs, then Open MPI's own
#                        component directory)
#
# Every framework and component pnbc registers in is listed, whatever their
# names: every parameter whose framework, component or name contains
# "pnbc".  A parameter registered under one name and known by others
# (synonyms) appears once, under the name it was registered with, the
# synonyms beside it.  The OMPI_MCA_* variables of the caller's environment
# are dropped, so the values shown are the defaults.

set -euo pipefail

out=
man=
man_out=
while [ $# -gt 0 ]; do
    case "$1" in
    -o) out=$2; shift 2 ;;
    -m) man=$2; shift 2 ;;
    -M) man_out=$2; shift 2 ;;
    *) break ;;
    esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here}" && pwd)
ompi_info=${OMPI_INFO:-ompi_info}

pkglibdir=$("$ompi_info" --parsable --path pkglibdir | cut -d: -f3-)
if [ -z "${PNBC_COMPONENT_PATH:-}" ]; then
    PNBC_COMPONENT_PATH=
    for d in "$build"/ompi/mca/*/pnbc/.libs; do
        case "$d" in */common/pnbc/.libs) continue ;; esac
        [ -d "$d" ] && PNBC_COMPONENT_PATH="$PNBC_COMPONENT_PATH$d:"
    done
    PNBC_COMPONENT_PATH="$PNBC_COMPONENT_PATH$pkglibdir"
fi
libpath="$build/ompi/mca/common/pnbc/.libs:$build/ompi/mpiext/pnbc/.libs"
series=$("$ompi_info" --parsable 2>/dev/null | sed -n 's/^ompi:version:full:\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)

# Open MPI, with the caller's OMPI_MCA_* variables dropped
clean_env=(env)
while IFS='=' read -r name _; do
    case "$name" in OMPI_MCA_*) clean_env+=(-u "$name") ;; esac
done < <(env)
raw=$("${clean_env[@]}" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_mca_base_component_path="$PNBC_COMPONENT_PATH" \
    LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$ompi_info" --all --parsable 2>/dev/null |
    awk -F: '$1 == "mca" && $4 == "param" && tolower($2 ":" $3 ":" $5) ~ /pnbc/')
if [ -z "$raw" ]; then
    echo "gen-parameters.sh: ompi_info lists no pnbc parameter (component path: $PNBC_COMPONENT_PATH)" >&2
    exit 1
fi

# records: the parameters as tab-separated records, in registration order,
# grouped by the framework_component they were registered in:
#   S <tab> framework_component
#   P <tab> name <tab> default <tab> level <tab> help (values, synonyms added)
records() {
    printf '%s\n' "$raw" | awk -F: '
    {
        name = $5; attr = $6
        rest = $7; for (i = 8; i <= NF; ++i) rest = rest ":" $i
        gsub(/\t/, " ", rest)
        if (!(name in seen)) { seen[name] = 1; order[++n] = name; fc[name] = $2 "_" $3 }
        if (attr == "value") value[name] = rest
        else if (attr == "level") level[name] = rest
        else if (attr == "help") help[name] = rest
        else if (attr == "synonym_of") { sub(/^name:/, "", rest); primary[name] = rest }
        else if (attr == "synonym") { sub(/^name:/, "", rest); syn[name] = syn[name] (syn[name] == "" ? "" : ", ") rest }
        else if (attr == "enumerator") {
            # value:NUMBER:NAME
            split(rest, e, ":"); en = e[3]; for (i = 4; i in e; ++i) en = en ":" e[i]
            enums[name] = enums[name] (enums[name] == "" ? "" : ", ") en
        }
    }
    END {
        # a synonym gives its row to the name it stands for
        for (k = 1; k <= n; ++k) {
            nm = order[k]
            if (!(nm in primary)) continue
            p = primary[nm]
            also[p] = also[p] (also[p] == "" ? "" : ", ") nm
            if (!(p in seen)) {
                seen[p] = 1; order[++n] = p
                value[p] = value[nm]; level[p] = level[nm]
                help[p] = help[nm]; enums[p] = enums[nm]
                split(p, parts, "_"); fc[p] = parts[1] "_" parts[2]
            }
            skip[nm] = 1
        }
        for (k = 1; k <= n; ++k) {
            nm = order[k]
            if (nm in skip) continue
            sec = fc[nm]
            if (!(sec in secseen)) { secseen[sec] = 1; secs[++ns] = sec }
            rows[sec] = rows[sec] k " "
        }
        for (s = 1; s <= ns; ++s) {
            sec = secs[s]
            print "S\t" sec
            m = split(rows[sec], idx, " ")
            for (j = 1; j <= m; ++j) {
                nm = order[idx[j]]
                v = value[nm]; gsub(/^"|"$/, "", v); if (v == "") v = "(empty)"
                h = help[nm]; gsub(/^"|"$/, "", h)
                if (enums[nm] != "") h = h ". Values: " enums[nm]
                if (also[nm] != "") h = h ". Also known as " also[nm]
                else if (syn[nm] != "") h = h ". Also known as " syn[nm]
                print "P\t" nm "\t" v "\t" level[nm] "\t" h
            }
        }
    }'
}

markdown() {
    cat <<EOF
# MCA parameters

<!-- Generated by contrib/gen-parameters.sh from the parameters' help
     strings; do not edit: change the help string in the source and run
     bash contrib/gen-parameters.sh -o docs/parameters.md -m man/man7/pnbc.7 -->

Every MCA parameter pnbc registers, as \`ompi_info --all --parsable\` reports
it on Open MPI $series.x with pnbc's components loaded. Set one with
\`mpirun --mca NAME VALUE\`, the environment (\`OMPI_MCA_NAME=VALUE\`) or an
MCA parameter file. A parameter whose help says "must be the same on all
processes" must have one value in the whole job. Level: the \`ompi_info --level\`
from which the parameter is shown. How they fit together: [user-guide.md](user-guide.md).
EOF
    records | awk -F'\t' '
    function md(s) {
        gsub(/\|/, "\\|", s); gsub(/\*/, "\\*", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
        return s
    }
    $1 == "S" {
        split($2, parts, "_")
        printf("\n## %s/%s (`%s_*`)\n\n", parts[1], parts[2], $2)
        print "| parameter | default | level | meaning |"
        print "|---|---|---|---|"
    }
    $1 == "P" { printf("| `%s` | %s | %s | %s |\n", $2, md($3), $4, md($5)) }'
}

# roff: the same, as the body of pnbc(7)'s MCA PARAMETERS section
roff() {
    records | awk -F'\t' '
    function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
    $1 == "S" { split($2, parts, "_"); printf(".SS %s/%s\n", parts[1], parts[2]) }
    $1 == "P" {
        print ".TP"
        printf(".B %s\n", esc($2))
        printf("\\&(default %s, level %s) %s\n", esc($3), $4, esc($5))
    }'
}

# splice MAN: MAN with the lines between its markers replaced by roff
splice() {
    local body
    body=$(roff)
    if ! grep -q '^\.\\" BEGIN GENERATED PARAMETERS' "$1"; then
        echo "gen-parameters.sh: $1 has no BEGIN GENERATED PARAMETERS marker" >&2
        exit 1
    fi
    awk -v body="$body" '
        /^\.\\" BEGIN GENERATED PARAMETERS/ { print; print body; skip = 1; next }
        /^\.\\" END GENERATED PARAMETERS/ { skip = 0 }
        !skip' "$1"
}

if [ -n "$out" ]; then
    markdown >"$out.tmp.$$"
    mv "$out.tmp.$$" "$out"
else
    markdown
fi
if [ -n "$man" ]; then
    dest=${man_out:-$man}
    splice "$man" >"$dest.tmp.$$"
    mv "$dest.tmp.$$" "$dest"
fi
