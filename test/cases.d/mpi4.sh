# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/mpi4.sh: MPI-4 programs build unchanged against the INSTALLED
# pnbc (run after "make install"): test/mpi4_names.c, which uses only the
# MPI-4 names (MPI_<Coll>_init, MPI_Psend_init, ..., MPI_Parrived) and
# includes only <mpi.h>, is built
#   - with $PREFIX/bin/mpicc-pnbc, and run at np 2 and 4 with the default
#     coll selection and with "--mca coll ^pnbc" (partitioned
#     communication does not need pnbc's coll component; the persistent
#     collectives then come from libnbc);
#   - with mpicc -o prog mpi4_names.c $(pkg-config --cflags --libs pnbc)
#     (and with plain cc), and run at np 2 and 4;
# and the wrapper's and the .pc files' flags are checked (mpicc-pnbc -c:
# an object, no link flags; --showme shows pnbc's flags; pnbc-mpix.pc
# does not map the names); and a real autoconf run with CC=mpicc-pnbc finds
# mpi.h, MPI_Init, MPI_Allreduce_init and MPI_Psend_init (with CC=mpicc,
# on Open MPI 4.1, it must not find MPI_Allreduce_init: the check can
# fail; on Open MPI 5.0 it finds all of them too).  On Open MPI 5.0 the
# MPI-4 names are Open MPI's own: the objects call them, not MPIX_ ones.
#
# Sourced by run-tests.sh, where it adds the mpi4-* cases; each case runs
# this file as a script:  bash mpi4.sh MODE [MPIRUN ARGS...]
#   MODE: wrapper | pkgconfig (build, then run MPIRUN ARGS... PROGRAM)
#         wrapper-flags | pkgconfig-flags | autoconf
# Environment: PNBC_PREFIX    install prefix (default /usr/local)
#              PNBC_LIBDIR    its libdir (default $PNBC_PREFIX/lib)
#              PNBC_MPICC     Open MPI's mpicc (default mpicc)
# A missing mpicc-pnbc or pnbc.pc is a FAIL, not a skip.  Build outputs go
# to a temporary directory, removed afterwards.

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    # ---- sourced by run-tests.sh: the cases ----
    mpi4_self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    for mpi4_np in 2 4; do
        # shellcheck disable=SC2046
        run_case "mpi4-wrapper-np$mpi4_np" bash "$mpi4_self" wrapper "$MPIRUN" $(mpiargs $mpi4_np)
        # shellcheck disable=SC2046
        run_case "mpi4-wrapper-no-coll-pnbc-np$mpi4_np" bash "$mpi4_self" wrapper "$MPIRUN" \
            $(PNBC_COLL='^pnbc' mpiargs $mpi4_np)
        # shellcheck disable=SC2046
        run_case "mpi4-pkgconfig-np$mpi4_np" bash "$mpi4_self" pkgconfig "$MPIRUN" $(mpiargs $mpi4_np)
    done
    run_case mpi4-wrapper-flags bash "$mpi4_self" wrapper-flags
    run_case mpi4-pkgconfig-flags bash "$mpi4_self" pkgconfig-flags
    run_case mpi4-autoconf bash "$mpi4_self" autoconf
    unset mpi4_np mpi4_self
    return 0
fi

# ---- run as a case ----
set -u
mode=${1:-}
shift || true
here=$(cd "$(dirname "$0")/.." && pwd)
src=$here/mpi4_names.c
prefix=${PNBC_PREFIX:-/usr/local}
libdir=${PNBC_LIBDIR:-$prefix/lib}
wrapper=$prefix/bin/mpicc-pnbc
mpicc=${PNBC_MPICC:-mpicc}
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# the wrapper must not pick up an MPICC meant for something else
unset MPICC

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-mpi4.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

nfail=0
fail() {
    echo "FAIL mpi4 $mode: $*"
    nfail=$((nfail + 1))
}
# run CMD...: echo it, run it, its output in the log
run() {
    echo "+ $*"
    "$@"
}
# Open MPI 5 has the MPI-4 names itself (its MPI_VERSION is still 3)
series5=0
case $("$mpicc" --showme:version 2>&1) in *"Open MPI 5"*|*"Open MPI v5"*) series5=1 ;; esac

# has "TEXT" WORD: TEXT (a flag list) contains WORD as a whole word
has() {
    case " $1 " in *" $2 "*) return 0 ;; esac
    return 1
}

need_wrapper() {
    if [ ! -x "$wrapper" ]; then
        echo "FAIL mpi4 $mode: $wrapper is not installed (run \"make install\", or set PNBC_PREFIX)"
        exit 1
    fi
}
need_pc() {
    if ! command -v pkg-config >/dev/null 2>&1; then
        echo "FAIL mpi4 $mode: pkg-config not found"
        exit 1
    fi
    if ! pkg-config --exists pnbc; then
        echo "FAIL mpi4 $mode: pkg-config finds no pnbc.pc (PKG_CONFIG_PATH=$PKG_CONFIG_PATH; run \"make install\", or set PNBC_PREFIX / PNBC_LIBDIR)"
        exit 1
    fi
    local dir
    dir=$(pkg-config --variable=pcfiledir pnbc)
    if [ "$dir" != "$libdir/pkgconfig" ]; then
        echo "FAIL mpi4 $mode: pkg-config finds pnbc.pc in $dir, not in $libdir/pkgconfig (set PNBC_PREFIX / PNBC_LIBDIR)"
        exit 1
    fi
}

# run_prog PROGRAM: MPIRUN ARGS... PROGRAM, which must pass
run_prog() {
    local out="$tmp/run.out"
    if [ $# -lt 1 ] || [ ${#mpirun_cmd[@]} -eq 0 ]; then
        fail "no mpirun command given"
        return
    fi
    echo "+ ${mpirun_cmd[*]} $1"
    "${mpirun_cmd[@]}" "$1" >"$out" 2>&1
    local rc=$?
    cat "$out"
    if [ $rc -ne 0 ]; then
        fail "$1 exited with status $rc"
    elif ! grep -q '^PASS mpi4_names' "$out"; then
        fail "$1 printed no PASS line"
    fi
}

mpirun_cmd=("$@")
case $mode in
    wrapper)
        need_wrapper
        run "$wrapper" -Wall -o "$tmp/mpi4_names" "$src" || fail "mpicc-pnbc could not build mpi4_names.c"
        [ -x "$tmp/mpi4_names" ] && run_prog "$tmp/mpi4_names"
        ;;

    pkgconfig)
        need_pc
        # shellcheck disable=SC2046
        run "$mpicc" -Wall -o "$tmp/mpi4_names" "$src" $(pkg-config --cflags --libs pnbc) ||
            fail "$mpicc \$(pkg-config --cflags --libs pnbc) could not build mpi4_names.c"
        # Open MPI's own flags are in pnbc.pc too: plain cc builds it as well
        # shellcheck disable=SC2046
        run "${CC:-cc}" -Wall -o "$tmp/mpi4_names_cc" "$src" $(pkg-config --cflags --libs pnbc) ||
            fail "${CC:-cc} \$(pkg-config --cflags --libs pnbc) could not build mpi4_names.c"
        [ -x "$tmp/mpi4_names" ] && run_prog "$tmp/mpi4_names"
        ;;

    wrapper-flags)
        need_wrapper
        # -c: an object whose calls go to the MPIX_ functions, nothing linked
        run "$wrapper" -c "$src" -o "$tmp/m.o" || fail "mpicc-pnbc -c failed"
        if [ -f "$tmp/m.o" ]; then
            undef=$(nm -u "$tmp/m.o" | awk '{ print $NF }')
            # Open MPI 4.1: the MPI-4 names mapped onto the MPIX_ ones;
            # Open MPI 5: left as they are (the library's own)
            for f in Psend_init Precv_init Pready Pready_range Pready_list Parrived Allreduce_init \
                     Neighbor_alltoallw_init; do
                want=MPIX_$f other=MPI_$f
                [ $series5 -eq 1 ] && { want=MPI_$f; other=MPIX_$f; }
                grep -qx "$want" <<<"$undef" || fail "the object does not call $want"
                grep -qx "$other" <<<"$undef" && fail "the object calls $other"
            done
            case $(od -An -c -j16 -N1 "$tmp/m.o" | tr -d ' ') in
                001) ;; # ELF e_type 1: relocatable, not linked
                *) fail "mpicc-pnbc -c did not produce a relocatable object" ;;
            esac
        fi
        # what the wrapper runs: --showme with and without -c
        show_c=$("$wrapper" --showme -c "$src" -o "$tmp/m.o") || fail "mpicc-pnbc --showme -c failed"
        echo "mpicc-pnbc --showme -c: $show_c"
        show_l=$("$wrapper" --showme "$src" -o "$tmp/m") || fail "mpicc-pnbc --showme failed"
        echo "mpicc-pnbc --showme: $show_l"
        inc=$(pkg-config --variable=pnbcincludedir pnbc 2>/dev/null)
        inc=${inc:-$prefix/include/pnbc}
        for s in "$show_c" "$show_l"; do
            has "$s" "-I$inc/mpi4" || fail "--showme lacks -I$inc/mpi4: $s"
            has "$s" "-I$inc" || fail "--showme lacks -I$inc: $s"
            has "$s" -include && fail "--showme force-includes a header: $s"
            has "$s" "$src" || fail "--showme lost the user's arguments: $s"
        done
        has "$show_c" -lpnbc && fail "link flags with -c: $show_c"
        has "$show_c" "-L$libdir" && fail "link flags with -c: $show_c"
        has "$show_l" -lpnbc || fail "--showme lacks -lpnbc: $show_l"
        has "$show_l" "-L$libdir" || fail "--showme lacks -L$libdir: $show_l"
        has "$show_l" -lmpi || fail "--showme lacks Open MPI's -lmpi (is $mpicc Open MPI's mpicc?): $show_l"
        # -showme:compile / -showme:link (what build systems query)
        sc=$("$wrapper" -showme:compile) || fail "mpicc-pnbc -showme:compile failed"
        echo "mpicc-pnbc -showme:compile: $sc"
        has "$sc" "-I$inc" || fail "-showme:compile lacks -I$inc: $sc"
        has "$sc" -lpnbc && fail "-showme:compile has link flags: $sc"
        sl=$("$wrapper" -showme:link) || fail "mpicc-pnbc -showme:link failed"
        echo "mpicc-pnbc -showme:link: $sl"
        has "$sl" -lpnbc || fail "-showme:link lacks -lpnbc: $sl"
        has "$sl" "-I$inc/mpi4" && fail "-showme:link has compile flags: $sl"
        # linking the object: the program finds libpnbc at run time
        if [ -f "$tmp/m.o" ]; then
            run "$wrapper" "$tmp/m.o" -o "$tmp/m" || fail "mpicc-pnbc could not link the object"
            if [ -x "$tmp/m" ]; then
                lib=$(ldd "$tmp/m" | grep 'libpnbc\.so')
                echo "ldd: $lib"
                case $lib in
                    *"not found"*|"") fail "the program does not find libpnbc: ${lib:-not linked}" ;;
                esac
            fi
        fi
        ;;

    pkgconfig-flags)
        need_pc
        cflags=$(pkg-config --cflags pnbc)
        libs=$(pkg-config --libs pnbc)
        echo "pnbc: cflags: $cflags"
        echo "pnbc: libs: $libs"
        inc=$(pkg-config --variable=pnbcincludedir pnbc)
        has "$cflags" "-I$inc/mpi4" || fail "pnbc Cflags lack -I$inc/mpi4"
        [ -f "$inc/pnbc_mpi4.h" ] || fail "$inc/pnbc_mpi4.h is not installed"
        [ -f "$inc/mpi4/mpi.h" ] || fail "$inc/mpi4/mpi.h is not installed"
        [ -f "$inc/mpiext_pnbc_c.h" ] || fail "$inc/mpiext_pnbc_c.h is not installed"
        has "$libs" -lpnbc || fail "pnbc Libs lack -lpnbc"
        for w in $("$mpicc" --showme:compile); do
            has "$cflags" "$w" || fail "pnbc Cflags lack Open MPI's $w"
        done
        has "$libs" -lmpi || fail "pnbc Libs lack Open MPI's -lmpi"
        # pnbc-mpix: the same without the mapping, so mpi4_names.c (MPI-4
        # names under Open MPI 4.1) must not compile with it
        mcflags=$(pkg-config --cflags pnbc-mpix) || fail "pkg-config finds no pnbc-mpix.pc"
        echo "pnbc-mpix: cflags: $mcflags"
        has "$mcflags" -include && fail "pnbc-mpix Cflags force-include a header: $mcflags"
        has "$mcflags" "-I$inc/mpi4" && fail "pnbc-mpix Cflags have the mapping's mpi4/: $mcflags"
        # shellcheck disable=SC2086
        if [ $series5 -eq 1 ]; then
            :   # Open MPI 5: the MPI-4 names need no mapping
        elif "$mpicc" -c -o "$tmp/x.o" "$src" $mcflags >"$tmp/x.log" 2>&1; then
            fail "mpi4_names.c compiled without pnbc_mpi4.h: the MPI-4 names are not what the test checks"
        else
            grep -q 'no MPI-4 names' "$tmp/x.log" || { cat "$tmp/x.log"; fail "unexpected error without pnbc_mpi4.h"; }
        fi
        echo '#include <mpiext_pnbc_c.h>
int main(void) { return MPIX_Pready(0, MPI_REQUEST_NULL) == 0; }' >"$tmp/mpix.c"
        # shellcheck disable=SC2046
        run "$mpicc" -o "$tmp/mpix" "$tmp/mpix.c" $(pkg-config --cflags --libs pnbc-mpix) ||
            fail "a program using the MPIX_ names does not build with pnbc-mpix"
        ;;

    autoconf)
        need_wrapper
        command -v autoconf >/dev/null 2>&1 || { echo "FAIL mpi4 autoconf: autoconf is not installed"; exit 1; }
        mkdir -p "$tmp/ac"
        cat >"$tmp/ac/configure.ac" <<'EOF_AC'
AC_INIT([mpi4-names-check], [1])
AC_PROG_CC
AC_CHECK_HEADER([mpi.h], [], [AC_MSG_ERROR([no usable mpi.h])])
AC_CHECK_FUNC([MPI_Init], [], [AC_MSG_ERROR([no MPI_Init])])
AC_CHECK_FUNC([MPI_Allreduce_init], [], [AC_MSG_ERROR([no MPI_Allreduce_init])])
AC_CHECK_FUNC([MPI_Psend_init], [], [AC_MSG_ERROR([no MPI_Psend_init])])
AC_OUTPUT
EOF_AC
        (cd "$tmp/ac" && run autoconf) || fail "autoconf failed"
        if (cd "$tmp/ac" && run ./configure CC="$wrapper"); then
            echo "configure with CC=mpicc-pnbc found mpi.h, MPI_Init, MPI_Allreduce_init, MPI_Psend_init"
        else
            tail -n 30 "$tmp/ac/config.log"
            fail "configure with CC=$wrapper failed"
        fi
        # the same with Open MPI's own mpicc: Open MPI 4.1 has no MPI-4 names
        (cd "$tmp/ac" && rm -f config.cache && ./configure CC="$mpicc" >"$tmp/ac/plain.log" 2>&1)
        plain=$?
        cat "$tmp/ac/plain.log"
        if [ $series5 -eq 1 ]; then
            [ $plain -eq 0 ] || fail "configure with CC=$mpicc failed on Open MPI 5 (which has the MPI-4 names)"
        elif [ $plain -eq 0 ]; then
            fail "configure with CC=$mpicc found MPI_Allreduce_init on Open MPI 4.1: the check cannot fail"
        else
            grep -q 'no MPI_Allreduce_init' "$tmp/ac/plain.log" ||
                fail "configure with CC=$mpicc failed, but not for want of MPI_Allreduce_init"
        fi
        ;;

    *)
        echo "usage: bash $0 wrapper|pkgconfig MPIRUN ARGS... | wrapper-flags | pkgconfig-flags | autoconf" >&2
        exit 2
        ;;
esac

if [ $nfail -gt 0 ]; then
    echo "FAIL mpi4 $mode: $nfail check(s) failed"
    exit 1
fi
echo "PASS mpi4 $mode"
exit 0
