# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/deb.sh: the Debian package (debian/).  deb-package-np2:
#   1. builds it (dpkg-buildpackage -b -us -uc) from a copy of the source
#      tree in a temporary directory (the files git knows; else the
#      distribution's files, "make distdir" of a configured tree; else the
#      whole unconfigured tree: the tree is never written to), checks that
#      its version is configure.ac's, that it depends on exactly the
#      version of the Open MPI library package installed here (the one
#      that holds the libmpi ompi_info names) and that it holds every part
#      of pnbc in its Debian place (the components in ompi_info's
#      pkglibdir, mca_part_pnbc.so on Open MPI 5.0 only, the libraries in
#      /usr/lib/<multiarch>, headers, pkg-config files, mpicc-pnbc, man
#      pages) and nothing under /usr/local; lintian, when installed, must
#      report no error;
#   2. installs it (apt-get install ./openmpi-pnbc_*.deb) and checks the
#      installed files against the package's checksums (dpkg --verify);
#      with Open MPI's component path set to its own directory and the
#      loader's path to /usr/lib/<multiarch> (so that a pnbc installed
#      under /usr/local by "make install" is not the one tested), ompi_info
#      lists coll/pnbc (and part/pnbc on 5.0), and test/mpi4_names.c, built
#      with the installed /usr/bin/mpicc-pnbc, passes its data checks
#      (every result against locally computed values) at np 2
#        - with coll/pnbc: each of the 22 persistent collectives of the
#          program was served by coll/pnbc on every rank (its
#          coll_pnbc_verbose "<name>_init" lines);
#        - without coll/pnbc (--mca coll basic,libnbc,tuned,self): the
#          partitioned exchanges went through pnbc's engine
#          (common_pnbc_verbose 2 lines of shared-memory sends; on 5.0
#          also part/pnbc's psend_init/precv_init lines);
#      and pkg-config, given only the package's directory, finds pnbc.pc;
#   3. purges it (apt-get purge) and checks that nothing of it stays: no
#      file dpkg -L listed that was not there before, no dpkg record, and
#      ompi_info lists no pnbc component.
# A file of the package found on disk before (Open MPI's component
# directory holds "make install"'s mca_coll_pnbc.so, the same path) is
# saved first and put back after the purge, also when the case fails or
# is killed: the case leaves the machine as it found it.
# SKIP when not root, without dpkg-buildpackage or debhelper, or when the
# package is installed already (the case would remove it).  A package
# build is one more build of the tree: the case may take a few minutes,
# so its timeout is at least 1200 s.
#
# Sourced by run-tests.sh, where it adds the case; the case runs this file
# as a script:  bash deb.sh
# Environment: MPIRUN, PNBC_MPI_ARGS (from run-tests.sh), OMPI_INFO,
#              DEB_JOBS (parallel jobs of the package build, default 2)
#              DEB_OUTDIR (if set, the built .deb is copied there)

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    # ---- sourced by run-tests.sh: the case ----
    deb_self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    TEST_TIMEOUT=$((TEST_TIMEOUT > 1200 ? TEST_TIMEOUT : 1200)) \
        run_case deb-package-np2 bash "$deb_self"
    unset deb_self
    return 0
fi

# ---- run as a case ----
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
np=2
mpirun=${MPIRUN:-mpirun}
ompi_info=${OMPI_INFO:-ompi_info}
# the package is built and tested as a user would: nothing of the test
# runner's build tree (component path, libraries) nor of an enclosing
# "make check" (its make flags and variables) reaches it
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES DESTDIR CC CFLAGS CPPFLAGS LDFLAGS LIBS
unset OMPI_MCA_mca_base_component_path PMIX_MCA_mca_base_component_path LD_LIBRARY_PATH
export LC_ALL=C

# fail [-x] MESSAGE: a check failed (-x: one the case cannot go on after)
nfail=0
fail() {
    local stop=
    if [ "$1" = -x ]; then stop=1; shift; fi
    echo "FAIL deb-package: $*"
    nfail=$((nfail + 1))
    [ -z "$stop" ] && return 0
    echo "FAIL deb-package: $nfail check(s) failed"
    exit 1
}
skip() { echo "SKIP deb-package: $*"; exit 77; }
# phase NAME: print the time the last phase took
t_last=$SECONDS
phase() {
    echo "== $1 (previous step: $((SECONDS - t_last)) s)"
    t_last=$SECONDS
}

[ "$(id -u)" -eq 0 ] || skip "not root (the case installs and purges a package)"
for tool in dpkg-buildpackage dpkg-deb dpkg-query apt-get; do
    command -v "$tool" >/dev/null 2>&1 || skip "no $tool (Debian: dpkg-dev, apt)"
done
command -v dh >/dev/null 2>&1 || skip "no dh (Debian: debhelper)"
[ -f "$top/debian/control" ] || fail -x "no debian/control in $top"
pkg=$(sed -n 's/^Package: *//p' "$top/debian/control" | head -n 1)
[ -n "$pkg" ] || fail -x "debian/control names no binary package"
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -qv 'not-installed'; then
    skip "$pkg is installed already (this case would remove it)"
fi

# ---- what the package must fit: this machine's Open MPI ----
pkglibdir=$("$ompi_info" --parsable --path pkglibdir 2>/dev/null | sed -n 's/^path:pkglibdir://p')
ompi_libdir=$("$ompi_info" --parsable --path libdir 2>/dev/null | sed -n 's/^path:libdir://p')
series=$("$ompi_info" --parsable 2>/dev/null |
    sed -n 's/^ompi:version:full:\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
if [ -z "$pkglibdir" ] || [ -z "$series" ]; then fail -x "$ompi_info names no pkglibdir or version"; fi
libmpi=$(readlink -f "$ompi_libdir/libmpi.so")
ompi_pkg=$(dpkg-query -S "$libmpi" 2>/dev/null | sed -n 's/^\([^:,]*\):.*/\1/p' | head -n 1)
ompi_arch=$(dpkg-query -S "$libmpi" 2>/dev/null | sed -n 's/^[^:,]*:\([a-z0-9-]*\): .*/\1/p' | head -n 1)
[ -n "$ompi_pkg" ] || fail -x "no package holds Open MPI's $libmpi"
ompi_ver=$(dpkg-query -W -f='${Version}' "$ompi_pkg${ompi_arch:+:$ompi_arch}")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) || multiarch=$(gcc -print-multiarch)
libdir=/usr/lib/$multiarch
echo "Open MPI $series: components in $pkglibdir, $libmpi from $ompi_pkg $ompi_ver; libdir $libdir"

ac_version=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
deb_version=$(dpkg-parsechangelog -l "$top/debian/changelog" -SVersion)
[ "$deb_version" = "$ac_version" ] ||
    fail "debian/changelog's version $deb_version is not configure.ac's $ac_version"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-deb.XXXXXX") || exit 1
installed=0 saved=0
restore() {
    echo "+ restoring the files found before the install"
    tar -xpf "$tmp/saved.tar" -C / && saved=0
    ldconfig
}
# shellcheck disable=SC2317  # (run by the EXIT trap)
cleanup() {
    if [ "$installed" = 1 ]; then
        echo "+ purging $pkg (cleanup)"
        apt-get purge -y -o DPkg::Lock::Timeout=120 "$pkg" >/dev/null 2>&1 ||
            dpkg --purge "$pkg" >/dev/null 2>&1
    fi
    [ "$saved" = 1 ] && restore
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- 1. build from a copy of the tree ----
phase "copy the source tree"
src=$tmp/pnbc-$ac_version
mkdir -p "$src"
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
    # the files git knows (untracked ones too, not ignored ones), as they are
    (cd "$top" && git ls-files -z -co --exclude-standard |
        tar --null --ignore-failed-read -cf - -T - 2>/dev/null) | tar -xf - -C "$src" ||
        fail -x "could not copy the tree's files"
elif build=$(cd "${TEST_BINDIR:-$top/test}/.." && pwd) && [ -f "$build/Makefile" ]; then
    # not a git checkout, configured: the distribution's files (make
    # distdir of the build tree, written into the copy; automake wants the
    # directory relative to the build tree)
    make -s -C "$build" distdir distdir="$(realpath --relative-to="$build" "$src")" \
        >"$tmp/distdir.log" 2>&1 || {
        tail -n 20 "$tmp/distdir.log"; fail -x "make distdir failed"; }
else
    # a tree never configured: all of it
    tar -C "$top" -cf - . | tar -xf - -C "$src" || fail -x "could not copy $top"
fi
[ -f "$src/debian/rules" ] || fail -x "the copy has no debian/rules (not in git or in EXTRA_DIST?)"

phase "dpkg-buildpackage -b -us -uc"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=${DEB_JOBS:-2}" \
    dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1 || {
    grep -E 'error|Error|unmet' "$tmp/build.log" | head -n 20
    tail -n 30 "$tmp/build.log"
    fail -x "dpkg-buildpackage failed"
}
grep -E '^(dpkg-deb: building|debian/rules: pnbc:OpenMPI)' "$tmp/build.log"
debs=("$tmp/${pkg}_${ac_version}_"*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
    fail -x "expected one ${pkg}_${ac_version}_*.deb, got: ${debs[*]}"
fi
deb=${debs[0]}
if [ -n "${DEB_OUTDIR:-}" ]; then
    cp "$deb" "$DEB_OUTDIR"/ || fail "could not copy $deb to $DEB_OUTDIR"
fi

# the exact Open MPI library it was built with
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
case ", $depends," in
    *", $ompi_pkg (= $ompi_ver),"*) ;;
    *) fail "Depends lacks \"$ompi_pkg (= $ompi_ver)\"" ;;
esac

# its files, in their Debian places
mapfile -t contents < <(dpkg-deb --fsys-tarfile "$deb" | tar -tf - | sed -e 's|^\./|/|' -e 's|/$||' |
    grep -v '^/*$')
want=("$pkglibdir/mca_coll_pnbc.so"
      "$libdir/libmca_common_pnbc.so.0" "$libdir/libpnbc.so.0" "$libdir/libpnbc.so"
      /usr/include/pnbc/mpiext_pnbc_c.h /usr/include/pnbc/pnbc_mpi4.h /usr/include/pnbc/mpi4/mpi.h
      "$libdir/pkgconfig/pnbc.pc" "$libdir/pkgconfig/pnbc-mpix.pc" /usr/bin/mpicc-pnbc
      /usr/share/man/man1/mpicc-pnbc.1.gz /usr/share/man/man3/MPIX_Psend_init.3.gz
      /usr/share/man/man3/MPIX_Bind_channel.3.gz /usr/share/man/man7/pnbc.7.gz
      "/usr/share/doc/$pkg/copyright")
part_so="$pkglibdir/mca_part_pnbc.so"
[ "$series" = 5.0 ] && want+=("$part_so")
for f in "${want[@]}"; do
    printf '%s\n' "${contents[@]}" | grep -qxF "$f" || fail "the package lacks $f"
done
if [ "$series" != 5.0 ] && printf '%s\n' "${contents[@]}" | grep -qxF "$part_so"; then
    fail "the package holds $part_so, which Open MPI $series has no framework for"
fi
bad=$(printf '%s\n' "${contents[@]}" | grep -E '^/usr/local|\.la$|\.a$')
[ -z "$bad" ] || fail "the package holds files it must not: $bad"
echo "${#contents[@]} entries in $(basename "$deb")"

if command -v lintian >/dev/null 2>&1; then
    phase "lintian"
    lintian --fail-on error "$deb" >"$tmp/lintian.log" 2>&1
    lrc=$?
    sed 's/^/    lintian: /' "$tmp/lintian.log" | head -n 30
    [ $lrc -eq 0 ] || fail "lintian reports errors (exit status $lrc)"
else
    echo "(lintian is not installed: not run)"
fi

# ---- 2. install ----
phase "install"
# what is there before: paths of the package already on disk; its files
# among them (not a directory) are saved and, if another package owns
# one, the install would fail: say so
declare -A before=()
save=()
for f in "${contents[@]}"; do
    if [ -e "$f" ] || [ -L "$f" ]; then
        before[$f]=1
        if [ ! -d "$f" ] || [ -L "$f" ]; then
            owner=$(dpkg-query -S "$f" 2>/dev/null | sed -n 's/^\([^:,]*\).*/\1/p' | head -n 1)
            [ -z "$owner" ] || fail -x "$f belongs to the package $owner"
            save+=("${f#/}")
        fi
    fi
done
if [ ${#save[@]} -gt 0 ]; then
    echo "saving ${#save[@]} file(s) found where the package puts its own: ${save[*]}"
    tar -cpf "$tmp/saved.tar" -C / "${save[@]}" || fail -x "could not save ${save[*]}"
    saved=1
fi

installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    -o DPkg::Lock::Timeout=120 "$deb" </dev/null >"$tmp/install.log" 2>&1 || {
    tail -n 20 "$tmp/install.log"; fail -x "apt-get install $deb failed"; }
[ "$(dpkg-query -W -f='${Status}' "$pkg")" = "install ok installed" ] || fail -x "$pkg is not installed"
mapfile -t listed < <(dpkg -L "$pkg")
for f in "${want[@]}"; do
    printf '%s\n' "${listed[@]}" | grep -qxF "$f" || fail "dpkg -L $pkg lacks $f"
    [ -e "$f" ] || fail "$f is not on disk"
done
verify=$(dpkg --verify "$pkg" 2>&1)
[ -z "$verify" ] || fail "installed files differ from the package's: $verify"

# run the package's files: Open MPI's own component directory only, the
# package's libraries before any other (a make-installed libpnbc in
# /usr/local/lib comes first in the loader's cache)
renv=(env PATH="/usr/bin:/bin:$PATH" LD_LIBRARY_PATH="$libdir" OMPI_MCA_mca_base_component_path="$pkglibdir")
pmix_libdir=$(pkg-config --variable=libdir pmix 2>/dev/null)
[ -n "$pmix_libdir" ] && [ -d "$pmix_libdir/pmix" ] &&
    renv+=(PMIX_MCA_mca_base_component_path="$pmix_libdir/pmix")

components() {
    "${renv[@]}" "$ompi_info" --parsable 2>/dev/null | sed -n 's/^mca:\(coll\|part\):pnbc:.*/\1/p' | sort -u |
        tr '\n' ' '
}
listed_comps=$(components)
echo "ompi_info lists pnbc components: ${listed_comps:-none}"
case " $listed_comps" in *" coll "*) ;; *) fail "ompi_info lists no coll/pnbc" ;; esac
if [ "$series" = 5.0 ]; then
    case " $listed_comps" in *" part "*) ;; *) fail "ompi_info lists no part/pnbc" ;; esac
fi
engine=$("${renv[@]}" ldd "$pkglibdir/mca_coll_pnbc.so" | awk '$1 ~ /^libmca_common_pnbc/ { print $3 }')
[ "$engine" = "$libdir/libmca_common_pnbc.so.0" ] ||
    fail "mca_coll_pnbc.so loads the engine from ${engine:-nowhere}, not $libdir"

phase "build test/mpi4_names.c with /usr/bin/mpicc-pnbc"
prog=$tmp/mpi4_names
echo "+ /usr/bin/mpicc-pnbc -O2 -o $prog $top/test/mpi4_names.c"
"${renv[@]}" /usr/bin/mpicc-pnbc -O2 -o "$prog" "$top/test/mpi4_names.c" ||
    fail -x "the installed mpicc-pnbc could not build mpi4_names.c"
lib=$("${renv[@]}" ldd "$prog" | awk '$1 ~ /^libpnbc\.so/ { print $3 }')
echo "libpnbc: ${lib:-not linked}"
# (Open MPI 5: the program calls only Open MPI's own functions, and the
# linker may leave libpnbc out)
if [ -n "$lib" ] || [ "$series" != 5.0 ]; then
    [ "$lib" = "$libdir/libpnbc.so.0" ] || fail "the program loads libpnbc from ${lib:-nowhere}, not $libdir"
fi

# mpirun ARGS...: the program at np 2 with ARGS; its output in $tmp/out
mpirun_prog() {
    # shellcheck disable=SC2086
    set -- "$mpirun" -np $np ${PNBC_MPI_ARGS:---mca btl self,vader --mca pml ob1 --bind-to none} "$@" "$prog"
    echo "+ $*"
    "${renv[@]}" "$@" >"$tmp/out" 2>&1
    local rc=$?
    grep -vE '(coll|part):pnbc: ' "$tmp/out" | tail -n 20
    [ $rc -eq 0 ] || fail "exit status $rc"
    grep -q '^PASS mpi4_names' "$tmp/out" || fail "no PASS line from mpi4_names"
}

phase "persistent collectives through coll/pnbc"
mpirun_prog --mca coll pnbc,basic,libnbc,tuned,self --mca coll_pnbc_verbose 1
# each collective's name with the ranks that made it through coll/pnbc
served=$(sed -n 's/.*coll:pnbc: \([a-z_]*\)_init algorithm=.* rank=\([0-9]*\) .*/\1 \2/p' "$tmp/out" |
    sort -u | awk '{ n[$1]++ } END { for (c in n) if (n[c] == '$np') full++; print length(n), full + 0 }')
read -r ncoll nfull <<<"$served"
echo "coll/pnbc served $ncoll persistent collectives, $nfull of them on all $np ranks"
if [ "${ncoll:-0}" -ne 22 ] || [ "${nfull:-0}" -ne 22 ]; then
    fail "coll/pnbc served ${ncoll:-0} collectives (${nfull:-0} on every rank), not the program's 22"
fi

phase "partitioned communication through pnbc's engine (no coll/pnbc)"
mpirun_prog --mca coll basic,libnbc,tuned,self --mca common_pnbc_verbose 2
nshm=$(grep -cE 'coll:pnbc: shm cid .*[1-9][0-9]* sends' "$tmp/out")
ncoll=$(grep -cE 'coll:pnbc: [a-z_]+_init algorithm=' "$tmp/out")
echo "$nshm engine schedules with shared-memory sends, $ncoll coll/pnbc requests"
[ "$nshm" -ge "$np" ] || fail "the engine sent nothing on shared memory: partitioned requests did not reach it"
[ "$ncoll" -eq 0 ] || fail "coll/pnbc served $ncoll requests although --mca coll excluded it"
if [ "$series" = 5.0 ]; then
    for what in psend_init precv_init; do
        n=$(grep -c "part:pnbc: $what " "$tmp/out")
        echo "part/pnbc: $n $what"
        [ "$n" -ge "$np" ] || fail "part/pnbc made $n $what requests, fewer than the $np ranks"
    done
fi

pc=$(env PKG_CONFIG_LIBDIR="$libdir/pkgconfig" PKG_CONFIG_PATH= pkg-config --libs pnbc 2>&1)
echo "pkg-config --libs pnbc: $pc"
case " $pc " in *" -lpnbc "*) ;; *) fail "pkg-config finds no pnbc.pc in $libdir/pkgconfig" ;; esac

# ---- 3. purge: nothing of it stays ----
phase "purge"
apt-get purge -y -o DPkg::Lock::Timeout=120 "$pkg" </dev/null >"$tmp/purge.log" 2>&1 || {
    tail -n 20 "$tmp/purge.log"; fail -x "apt-get purge $pkg failed"; }
installed=0
dpkg-query -W "$pkg" >/dev/null 2>&1 && fail "dpkg still has a record of $pkg"
ls /var/lib/dpkg/info/"$pkg".* >/dev/null 2>&1 && fail "dpkg still has $pkg's files in /var/lib/dpkg/info"
left=0
for f in "${listed[@]}"; do
    case $f in "" | /.) continue ;; esac
    if [ -z "${before[$f]:-}" ] || [ ! -d "$f" ]; then
        if [ -e "$f" ] || [ -L "$f" ]; then
            fail "$f stayed after the purge"
            left=$((left + 1))
        fi
    fi
done
echo "${#listed[@]} paths listed by dpkg -L, $left left behind"
comps=$(components)
[ -z "$comps" ] || fail "after the purge ompi_info still lists pnbc components: $comps"

if [ "$saved" = 1 ]; then
    restore
    tar -dpf "$tmp/saved.tar" -C / >/dev/null || fail "the saved files were not restored as they were"
fi
phase "done"

if [ $nfail -gt 0 ]; then
    echo "FAIL deb-package: $nfail check(s) failed"
    exit 1
fi
echo "PASS deb-package (Open MPI $series, $pkg $deb_version, depends on $ompi_pkg (= $ompi_ver); ${SECONDS} s)"
exit 0
