# -*- autoconf -*-
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Locate an installed Open MPI 4.1.x or 5.0.x (wrapper compiler, launcher,
# devel headers, libraries and component directory) so that pnbc can be
# built out of tree as components of that installation.

# _PNBC_OMPI_FAIL(message)
# ------------------------
# Stop configure with MESSAGE plus a hint on how to get a usable Open MPI.
AC_DEFUN([_PNBC_OMPI_FAIL], [
    AC_MSG_ERROR([$1
pnbc is built as components of Open MPI 4.1.x or 5.0.x and needs its
development files.
On Debian/Ubuntu install them with:
    apt-get install libopenmpi-dev openmpi-bin
(or run contrib/install-deps.sh), or use --with-ompi=DIR to point at the
prefix of an Open MPI 4.1.x or 5.0.x installation (the directory containing
bin/mpicc).])
])

# _PNBC_OMPI_INCLUDE(DIR)
# -----------------------
# Append Open MPI include directory DIR to OMPI_CPPFLAGS as a system
# directory (-isystem DIR, or -IDIR where the compiler has no -isystem):
# warnings in Open MPI's headers are not pnbc's.
AC_DEFUN([_PNBC_OMPI_INCLUDE], [
    AS_IF([test "$pnbc_isystem" = -isystem],
          [OMPI_CPPFLAGS="$OMPI_CPPFLAGS -isystem $1"],
          [OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$1"])
])

# _PNBC_OMPI5_HEADERS
# -------------------
# Open MPI 5.0's internal headers include <pmix.h>, which is not in the
# wrapper's include directories (Debian: pkg-config pmix knows where it
# is), and Debian's 5.0 devel package lacks the headers of the threads and
# timer components that its opal_config.h names: when they are missing,
# pnbc's own versions (compat/ompi-5.0) come after Open MPI's directories.
AC_DEFUN([_PNBC_OMPI5_HEADERS], [
    AC_MSG_CHECKING([for PMIx's headers])
    pnbc_pmix_cppflags=
    for pnbc_d in $OMPI_INCDIRS; do
        AS_IF([test -f "$pnbc_d/pmix.h"], [pnbc_pmix_cppflags=none])
    done
    AS_IF([test -z "$pnbc_pmix_cppflags"],
          [pnbc_pmix_cppflags=`pkg-config --cflags-only-I pmix 2>/dev/null`])
    AS_IF([test -z "$pnbc_pmix_cppflags"],
          [for pnbc_d in $OMPI_LIBDIRS; do
               pnbc_d=`AS_DIRNAME(["$pnbc_d"])`
               for pnbc_p in "$pnbc_d"/pmix*/include; do
                   AS_IF([test -z "$pnbc_pmix_cppflags" && test -f "$pnbc_p/pmix.h"],
                         [pnbc_pmix_cppflags="-I$pnbc_p"])
               done
           done])
    AS_CASE([$pnbc_pmix_cppflags],
        [none], [AC_MSG_RESULT([with Open MPI's])],
        [""], [AC_MSG_RESULT([not found])
               _PNBC_OMPI_FAIL([PMIx's pmix.h, which Open MPI 5's headers include, was not found
(Debian: libpmix-dev, which libopenmpi-dev depends on; or set CPPFLAGS).])],
        [AC_MSG_RESULT([$pnbc_pmix_cppflags])
         for pnbc_f in $pnbc_pmix_cppflags; do
             AS_CASE([$pnbc_f],
                 [-I*], [_PNBC_OMPI_INCLUDE([${pnbc_f#-I}])],
                 [OMPI_CPPFLAGS="$OMPI_CPPFLAGS $pnbc_f"])
         done])

    AC_MSG_CHECKING([whether Open MPI's threads and timer component headers are installed])
    pnbc_ompi5_missing=yes
    for pnbc_d in $OMPI_INCDIRS; do
        AS_IF([test -f "$pnbc_d/opal/mca/threads/pthreads/threads_pthreads_mutex.h"],
              [pnbc_ompi5_missing=no])
    done
    AS_IF([test "$pnbc_ompi5_missing" = yes],
          [pnbc_abs_srcdir=`cd "$srcdir" && pwd`
           # after Open MPI's directories, and as they are (-isystem): they
           # stand for Open MPI's own headers
           _PNBC_OMPI_INCLUDE([$pnbc_abs_srcdir/ompi/mca/common/pnbc/compat/ompi-5.0])
           AC_MSG_RESULT([no: using pnbc's (compat/ompi-5.0)])],
          [AC_MSG_RESULT([yes])])
])

# PNBC_CHECK_OMPI
# ---------------
# Options:
#   --with-ompi=DIR                 Open MPI install prefix (DIR/bin/mpicc)
#   --with-ompi-component-dir=DIR   where "make install" puts the component
#
# Sets and AC_SUBSTs:
#   MPICC              Open MPI's C wrapper compiler (absolute path)
#   MPIRUN             Open MPI's mpirun (absolute path)
#   OMPI_INFO          Open MPI's ompi_info (absolute path, may be empty)
#   OMPI_VERSION       full version, e.g. 4.1.4
#   OMPI_SERIES        4.1 or 5.0
#   OMPI_INCDIRS       include directories (space separated)
#   OMPI_LIBDIRS       library directories (space separated)
#   OMPI_CPPFLAGS      flags for OMPI_INCDIRS (-isystem DIR: see
#                      PNBC_SYSTEM_INCLUDE_FLAG in pnbc_warnings.m4)
#   OMPI_LDFLAGS       -L flags for OMPI_LIBDIRS
#   OMPI_LIBS          libraries the component links against (-lmpi ...)
#   OMPI_PKGLIBDIR     Open MPI's own component directory
#   OMPI_COMPONENT_DIR install directory of mca_coll_pnbc.so
AC_DEFUN([PNBC_CHECK_OMPI], [
    AC_REQUIRE([AC_PROG_CC])
    AC_REQUIRE([AC_PROG_SED])
    AC_REQUIRE([PNBC_SYSTEM_INCLUDE_FLAG])

    AC_ARG_VAR([MPICC], [Open MPI C wrapper compiler (default: mpicc.openmpi or mpicc)])
    AC_ARG_VAR([MPIRUN], [Open MPI launcher (default: mpirun.openmpi or mpirun)])
    AC_ARG_VAR([OMPI_INFO], [Open MPI ompi_info program])

    AC_ARG_WITH([ompi],
        [AS_HELP_STRING([--with-ompi=DIR],
            [prefix of the Open MPI 4.1.x or 5.0.x installation to build against
             (the directory containing bin/mpicc); default: search PATH])],
        [], [with_ompi=yes])

    AC_ARG_WITH([ompi-component-dir],
        [AS_HELP_STRING([--with-ompi-component-dir=DIR],
            [install mca_coll_pnbc.so into DIR instead of Open MPI's own
             component directory (e.g. $HOME/.openmpi/components)])],
        [], [with_ompi_component_dir=])

    pnbc_ompi_bindir=
    AS_CASE([$with_ompi],
        [no], [_PNBC_OMPI_FAIL([pnbc cannot be built without Open MPI (--without-ompi given).])],
        [yes|""], [],
        [
            AS_IF([test ! -d "$with_ompi"],
                  [_PNBC_OMPI_FAIL([--with-ompi=$with_ompi: no such directory.])])
            AS_IF([test -x "$with_ompi/bin/mpicc" || test -x "$with_ompi/bin/mpicc.openmpi"], [],
                  [_PNBC_OMPI_FAIL([--with-ompi=$with_ompi: no Open MPI wrapper compiler $with_ompi/bin/mpicc.])])
            pnbc_ompi_bindir=`cd "$with_ompi/bin" && pwd`
        ])

    # Search the given prefix first (only it, if one was given); prefer the
    # unambiguous Debian names, since "mpicc"/"mpirun" may be alternatives
    # pointing at MPICH.
    AS_IF([test -n "$pnbc_ompi_bindir"],
          [pnbc_ompi_path=$pnbc_ompi_bindir],
          [pnbc_ompi_path=$PATH])

    AC_PATH_PROGS([MPICC], [mpicc.openmpi mpicc], [], [$pnbc_ompi_path])
    AS_IF([test -z "$MPICC"],
          [_PNBC_OMPI_FAIL([Open MPI's wrapper compiler (mpicc) was not found.])])

    AC_MSG_CHECKING([whether $MPICC is Open MPI's wrapper compiler])
    pnbc_ompi_showme=`"$MPICC" --showme:version 2>&1`
    AS_CASE([$pnbc_ompi_showme],
        [*"Open MPI"*], [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         _PNBC_OMPI_FAIL([$MPICC is not Open MPI's mpicc ("$MPICC --showme:version" printed: $pnbc_ompi_showme).])])

    # ompi_info lives next to the wrapper compiler.
    pnbc_mpicc_real=`readlink -f "$MPICC" 2>/dev/null`
    AS_IF([test -z "$pnbc_mpicc_real"], [pnbc_mpicc_real=$MPICC])
    pnbc_mpicc_dir=`AS_DIRNAME(["$MPICC"])`
    pnbc_mpicc_realdir=`AS_DIRNAME(["$pnbc_mpicc_real"])`
    AC_PATH_PROGS([OMPI_INFO], [ompi_info],
                  [], [$pnbc_mpicc_dir$PATH_SEPARATOR$pnbc_mpicc_realdir$PATH_SEPARATOR$pnbc_ompi_path])

    # Version: from mpicc, or from ompi_info if mpicc's answer has none.
    AC_MSG_CHECKING([Open MPI version])
    OMPI_VERSION=`echo "$pnbc_ompi_showme" | $SED -n 's/.*Open MPI \([[0-9]][[0-9.]]*[[0-9]]\).*/\1/p' | head -n 1`
    AS_IF([test -z "$OMPI_VERSION" && test -n "$OMPI_INFO"],
          [OMPI_VERSION=`"$OMPI_INFO" --parsable 2>/dev/null | $SED -n 's/^ompi:version:full://p' | head -n 1`])
    AS_IF([test -z "$OMPI_VERSION"],
          [AC_MSG_RESULT([unknown])
           _PNBC_OMPI_FAIL([Could not determine the Open MPI version from $MPICC.])])
    AC_MSG_RESULT([$OMPI_VERSION])
    AC_MSG_CHECKING([whether pnbc supports Open MPI $OMPI_VERSION])
    AS_CASE([$OMPI_VERSION],
        [4.1|4.1.*], [OMPI_SERIES=4.1],
        [5.0|5.0.*], [OMPI_SERIES=5.0],
        [OMPI_SERIES=])
    AS_IF([test -n "$OMPI_SERIES"],
          [AC_MSG_RESULT([yes, the $OMPI_SERIES series])],
          [AC_MSG_RESULT([no])
           _PNBC_OMPI_FAIL([Open MPI $OMPI_VERSION found ($MPICC), but pnbc supports the 4.1.x and 5.0.x
series only: the component interfaces and internal headers differ between series.])])

    # Include and library directories.
    AC_MSG_CHECKING([Open MPI include directories])
    OMPI_INCDIRS=`"$MPICC" --showme:incdirs 2>/dev/null`
    AS_IF([test -z "$OMPI_INCDIRS" && test -n "$OMPI_INFO"],
          [pnbc_ompi_incdir=`"$OMPI_INFO" --parsable --path incdir 2>/dev/null | $SED -n 's/^path:incdir://p'`
           AS_IF([test -n "$pnbc_ompi_incdir"],
                 [OMPI_INCDIRS="$pnbc_ompi_incdir $pnbc_ompi_incdir/openmpi"])])
    AS_IF([test -z "$OMPI_INCDIRS"],
          [AC_MSG_RESULT([none])
           _PNBC_OMPI_FAIL([Could not get Open MPI's include directories ($MPICC --showme:incdirs).])])
    AC_MSG_RESULT([$OMPI_INCDIRS])

    AC_MSG_CHECKING([Open MPI library directories])
    OMPI_LIBDIRS=`"$MPICC" --showme:libdirs 2>/dev/null`
    AS_IF([test -z "$OMPI_LIBDIRS" && test -n "$OMPI_INFO"],
          [OMPI_LIBDIRS=`"$OMPI_INFO" --parsable --path libdir 2>/dev/null | $SED -n 's/^path:libdir://p'`])
    AS_IF([test -z "$OMPI_LIBDIRS"],
          [AC_MSG_RESULT([none])
           _PNBC_OMPI_FAIL([Could not get Open MPI's library directories ($MPICC --showme:libdirs).])])
    AC_MSG_RESULT([$OMPI_LIBDIRS])

    OMPI_CPPFLAGS=
    for pnbc_d in $OMPI_INCDIRS; do
        _PNBC_OMPI_INCLUDE([$pnbc_d])
    done
    OMPI_CPPFLAGS=`echo $OMPI_CPPFLAGS`
    OMPI_LDFLAGS=
    for pnbc_d in $OMPI_LIBDIRS; do
        OMPI_LDFLAGS="$OMPI_LDFLAGS -L$pnbc_d"
    done
    OMPI_LDFLAGS=`echo $OMPI_LDFLAGS`

    # Devel headers: the component includes Open MPI's internal headers.
    # Check them with the compat include dir first, as the component is
    # built (ompi/op/op.h needs our fint_2_int.h).
    pnbc_save_CPPFLAGS=$CPPFLAGS
    AS_IF([test "$OMPI_SERIES" = 5.0], [_PNBC_OMPI5_HEADERS])
    CPPFLAGS="-I$srcdir/ompi/mca/common/pnbc/compat $OMPI_CPPFLAGS $CPPFLAGS"
    AC_CHECK_HEADER([mpi.h], [],
        [_PNBC_OMPI_FAIL([Open MPI's mpi.h was not found in: $OMPI_INCDIRS
(the Debian package libopenmpi-dev provides it).])], [ ])
    AC_CHECK_HEADER([ompi_config.h], [],
        [_PNBC_OMPI_FAIL([Open MPI's development header ompi_config.h was not found in: $OMPI_INCDIRS
(the Debian package libopenmpi-dev provides it).])],
        [ ])
    AC_CHECK_HEADER([ompi/mca/coll/coll.h], [],
        [_PNBC_OMPI_FAIL([Open MPI's development header ompi/mca/coll/coll.h was not found (or does not compile) in: $OMPI_INCDIRS
(the Debian package libopenmpi-dev provides it).])],
        [#include "ompi_config.h"])
    AC_CHECK_HEADER([ompi/op/op.h], [],
        [_PNBC_OMPI_FAIL([Open MPI's internal header ompi/op/op.h does not compile with pnbc's compat headers ($OMPI_INCDIRS).])],
        [#include "ompi_config.h"])
    CPPFLAGS=$pnbc_save_CPPFLAGS

    # Libraries: libmpi always; libopen-pal too when it is a separate
    # library (4.1 has it), since the component calls opal functions.
    pnbc_save_LDFLAGS=$LDFLAGS
    pnbc_save_LIBS=$LIBS
    LDFLAGS="$OMPI_LDFLAGS $LDFLAGS"
    OMPI_LIBS=
    AC_CHECK_LIB([mpi], [MPI_Init], [OMPI_LIBS="-lmpi"],
        [_PNBC_OMPI_FAIL([Cannot link against Open MPI's libmpi (libdirs: $OMPI_LIBDIRS).])])
    AC_CHECK_LIB([open-pal], [opal_class_initialize],
        [OMPI_LIBS="$OMPI_LIBS -lopen-pal"], [], [-lmpi])
    LDFLAGS=$pnbc_save_LDFLAGS
    LIBS=$pnbc_save_LIBS

    # Launcher.
    AC_PATH_PROGS([MPIRUN], [mpirun.openmpi mpirun orterun], [],
                  [$pnbc_mpicc_dir$PATH_SEPARATOR$pnbc_mpicc_realdir$PATH_SEPARATOR$pnbc_ompi_path])
    AS_IF([test -n "$MPIRUN"],
          [AC_MSG_CHECKING([whether $MPIRUN is Open MPI's launcher])
           pnbc_mpirun_version=`"$MPIRUN" --version 2>&1 | head -n 1`
           AS_CASE([$pnbc_mpirun_version],
               [*"Open MPI"*|*OpenRTE*], [AC_MSG_RESULT([yes])],
               [AC_MSG_RESULT([no])
                AC_MSG_WARN([$MPIRUN does not look like Open MPI's mpirun ($pnbc_mpirun_version)])])],
          [AC_MSG_WARN([Open MPI's mpirun not found: "make check" will not work])])

    # Open MPI's component directory, and ours.
    AC_MSG_CHECKING([Open MPI component directory])
    OMPI_PKGLIBDIR=
    AS_IF([test -n "$OMPI_INFO"],
          [OMPI_PKGLIBDIR=`"$OMPI_INFO" --parsable --path pkglibdir 2>/dev/null | $SED -n 's/^path:pkglibdir://p' | head -n 1`])
    AS_IF([test -z "$OMPI_PKGLIBDIR"],
          [for pnbc_d in $OMPI_LIBDIRS; do
               AS_IF([test -z "$OMPI_PKGLIBDIR" && test -d "$pnbc_d/openmpi"],
                     [OMPI_PKGLIBDIR=$pnbc_d/openmpi])
           done])
    AS_IF([test -z "$OMPI_PKGLIBDIR"],
          [AC_MSG_RESULT([unknown])
           _PNBC_OMPI_FAIL([Could not determine Open MPI's component directory (ompi_info --parsable --path pkglibdir).])])
    AC_MSG_RESULT([$OMPI_PKGLIBDIR])

    AC_MSG_CHECKING([where to install mca_coll_pnbc.so])
    AS_CASE([$with_ompi_component_dir],
        [yes|no|""], [OMPI_COMPONENT_DIR=$OMPI_PKGLIBDIR],
        [/*], [OMPI_COMPONENT_DIR=$with_ompi_component_dir],
        [AC_MSG_ERROR([--with-ompi-component-dir needs an absolute directory, got "$with_ompi_component_dir"])])
    AC_MSG_RESULT([$OMPI_COMPONENT_DIR])

    AC_SUBST([OMPI_VERSION])
    AC_SUBST([OMPI_SERIES])
    AC_SUBST([OMPI_INCDIRS])
    AC_SUBST([OMPI_LIBDIRS])
    AC_SUBST([OMPI_CPPFLAGS])
    AC_SUBST([OMPI_LDFLAGS])
    AC_SUBST([OMPI_LIBS])
    AC_SUBST([OMPI_PKGLIBDIR])
    AC_SUBST([OMPI_COMPONENT_DIR])
])

# PNBC_CHECK_MPICH
# ----------------
# Optional MPICH (for comparison runs): MPICC_MPICH and MPIEXEC_MPICH are
# the absolute paths of mpicc.mpich / mpiexec.mpich, or empty.
AC_DEFUN([PNBC_CHECK_MPICH], [
    AC_ARG_VAR([MPICC_MPICH], [MPICH C wrapper compiler (optional, for comparisons)])
    AC_ARG_VAR([MPIEXEC_MPICH], [MPICH launcher (optional, for comparisons)])
    AC_PATH_PROG([MPICC_MPICH], [mpicc.mpich], [])
    AC_PATH_PROG([MPIEXEC_MPICH], [mpiexec.mpich], [])
])
