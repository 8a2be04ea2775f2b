# -*- autoconf -*-
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The warnings pnbc's libraries and test programs are compiled with, and
# --enable-werror, which makes them errors (contrib/test-all.sh, the project's own test
# command, turns it on; a plain ./configure does not, so that a compiler
# pnbc was not tried with warns but still builds).  Open MPI's headers are
# included as system headers (PNBC_CHECK_OMPI: -isystem), so their own
# warnings are not pnbc's and never fail the build.

# PNBC_WARNINGS
# -------------
# Sets and AC_SUBSTs PNBC_WARN_CFLAGS: "-Wall -Wextra" (those of them $CC
# accepts), plus -Werror with --enable-werror.  They go into the
# libraries' and test/Makefile.am's AM_CFLAGS, not CFLAGS: configure's own tests must not turn
# into errors, and a user's CFLAGS come after them (-Wno-... still wins).
AC_DEFUN([PNBC_WARNINGS], [
    AC_REQUIRE([AC_PROG_CC])
    AC_ARG_ENABLE([werror],
        [AS_HELP_STRING([--enable-werror],
            [make the compiler warnings (-Wall -Wextra) of the libraries
             and the test programs errors (contrib/test-all.sh turns
             this on); default: no])],
        [], [enable_werror=no])

    PNBC_WARN_CFLAGS=
    pnbc_save_CFLAGS=$CFLAGS
    for pnbc_flag in -Wall -Wextra; do
        AC_MSG_CHECKING([whether $CC accepts $pnbc_flag])
        CFLAGS="$pnbc_save_CFLAGS $pnbc_flag -Werror"
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
            [AC_MSG_RESULT([yes])
             PNBC_WARN_CFLAGS="$PNBC_WARN_CFLAGS $pnbc_flag"],
            [AC_MSG_RESULT([no])])
    done
    CFLAGS=$pnbc_save_CFLAGS

    AC_MSG_CHECKING([whether compiler warnings are errors in the libraries and tests])
    AS_CASE([$enable_werror],
        [yes], [PNBC_WARN_CFLAGS="$PNBC_WARN_CFLAGS -Werror"
                AC_MSG_RESULT([yes (--enable-werror)])],
        [no], [AC_MSG_RESULT([no])],
        [AC_MSG_ERROR([--enable-werror takes no value other than yes or no, got "$enable_werror"])])
    PNBC_WARN_CFLAGS=`echo $PNBC_WARN_CFLAGS`
    AC_SUBST([PNBC_WARN_CFLAGS])
])

# PNBC_SYSTEM_INCLUDE_FLAG
# ------------------------
# Sets pnbc_isystem to "-isystem" when $CC takes it (GCC, Clang and most
# others), else "-I": how PNBC_CHECK_OMPI names Open MPI's include
# directories, so that warnings in Open MPI's own headers (and in the
# macros they define) are not reported as pnbc's.
AC_DEFUN([PNBC_SYSTEM_INCLUDE_FLAG], [
    AC_REQUIRE([AC_PROG_CC])
    AC_MSG_CHECKING([whether $CC accepts -isystem DIR])
    pnbc_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -isystem ."
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
        [pnbc_isystem=-isystem; AC_MSG_RESULT([yes])],
        [pnbc_isystem=-I; AC_MSG_RESULT([no: Open MPI's headers with -I])])
    CPPFLAGS=$pnbc_save_CPPFLAGS
])
