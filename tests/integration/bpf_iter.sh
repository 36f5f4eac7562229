#!/bin/sh
# SPDX-License-Identifier: MIT
# The report iterator: `cat /sys/fs/bpf/allocinfo/<pid>/allocinfo` prints the lines of
# `allocinfo -p PID` and of the process's own report, the process stopped, whatever
# the size of the reads.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require

start wait own ALLOCINFO_STORE=bpf
kill -STOP "$pid"
it=$pins/$pid/allocinfo
cat "$it" >"$work/iter" || fail "cannot read $it"
allocinfo -p "$pid" >"$work/cli" 2>"$work/cli.err" || fail "allocinfo -p $pid: $(cat "$work/cli.err")"
expect_subject_rows "$work/iter"
same_rows "$work/iter" "$work/cli" || fail "the iterator and allocinfo -p $pid differ"
same_rows "$work/iter" "$work/own" || fail "the iterator and the process's own report differ"

# Read in small pieces, the same text.
dd if="$it" bs=7 2>/dev/null >"$work/iter7"
cmp -s "$work/iter" "$work/iter7" || fail "reading $it 7 bytes at a time gives other text"
kill -CONT "$pid"
finish "$pid"
exit 0
