# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The error blocks of valgrind memcheck logs that are pnbc's: used by the
# valgrind cases of make check (valgrind_test.sh, nbc-valgrind,
# badinput-valgrind).
#
#   awk -f vg_errors.awk [-v pat=STR] [-v leaks=1] [-v datapath=1] LOG...
#
# A log is split into blocks at its "==PID==" blank lines; a block is an
# error when its first line names one (an invalid access or free, a use of
# uninitialised memory, with leaks=1 a definite leak).  An error is
# pnbc's when one of its stack frames ("at 0x..." / "by 0x..." lines)
# names STR (default "pnbc") in its function, source file or library
# name -- not in a directory, so a tree checked out under /pnbc does not
# make every error pnbc's.  With datapath=1 an invalid access inside Open
# MPI's data path (PML, BTL, coll, convertor, datatype, op) counts too.
# Prints the first four offending blocks, then
#   SUMMARY offending=N other_ignored=M

function flush() {
    if (hdr != "") {
        invalid = (hdr ~ /Invalid (read|write|free)|Mismatched free|[Oo]verlap/)
        uninit = (hdr ~ /uninitialised/)
        lost = (leaks && hdr ~ /definitely lost/)
        dp = (datapath && frames ~ /mca_pml_|mca_btl_|mca_coll_|opal_convertor|opal_generic_simple|opal_datatype|ompi_datatype|ompi_op_/)
        if (((invalid || uninit || lost) && ours) || (invalid && dp)) {
            nbad++
            if (nbad <= 4) printf("---- offending valgrind error %d (%s):\n%s", nbad, FILENAME, buf)
        } else if (invalid || uninit || lost) {
            nother++
        }
    }
    buf = ""; hdr = ""; frames = ""; ours = 0
}

BEGIN { if (pat == "") pat = "pnbc" }

FNR == 1 { flush() }

/^==[0-9]+== *$/ { flush(); next }

/^==[0-9]+== / {
    line = $0
    # the block's first line that says what it is ("Thread 2:" is not it)
    if (hdr == "" && line ~ /^==[0-9]+== [^ ]/ && line !~ /^==[0-9]+== Thread [0-9]+:/ &&
        line !~ /Memcheck|Copyright|Using Valgrind|Command:|Parent PID|HEAP SUMMARY|LEAK SUMMARY|ERROR SUMMARY|For lists|For counts|For a detailed|Rerun with|Use --/)
        hdr = line
    if (hdr == "")
        next
    buf = buf line "\n"
    if (line ~ /^==[0-9]+== +(at|by) 0x[0-9A-Fa-f]+: /) {
        # "func (file.c:12)" or "func (in /dir/lib.so)": the function and
        # the file or library's own name, without its directory
        f = line
        sub(/^==[0-9]+== +(at|by) 0x[0-9A-Fa-f]+: /, "", f)
        if (f ~ /\(in [^)]*\)$/) {
            lib = f
            sub(/.*\(in /, "", lib); sub(/\)$/, "", lib); sub(/.*\//, "", lib)
            sub(/ \(in [^)]*\)$/, "", f)
            f = f " " lib
        }
        frames = frames f "\n"
        if (index(f, pat) > 0)
            ours = 1
    }
    next
}

END { flush(); printf("SUMMARY offending=%d other_ignored=%d\n", nbad + 0, nother + 0) }
