#!/bin/sh
# SPDX-License-Identifier: MIT
# The report iterator: `cat /sys/fs/bpf/allocinfo/<pid>/allocinfo` prints the lines of
# `allocinfo -p PID` and of the process's own report, the process stopped, whatever
# the size of the reads; once allocinfo -p has named the caller tags, exactly its
# lines.
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

# Caller tags: the process writes them unnamed; the reader above named them
# (allocinfo -p runs as the process's user) and wrote the names into the tags map,
# so that now the iterator prints exactly the lines of allocinfo -p.
expect_row "$work/cli" 48 1 75
cat "$it" >"$work/iter" || fail "cannot read $it"
rows "$work/iter" >"$work/rows_iter"
rows "$work/cli" >"$work/rows_cli"
if ! cmp -s "$work/rows_iter" "$work/rows_cli" ||
	! [ "$(head -n 2 "$work/iter")" = "$(head -n 2 "$work/cli")" ]; then
	diff "$work/cli" "$work/iter"
	fail "the iterator's lines differ from those of allocinfo -p $pid once named"
fi

# Read in small pieces, the same text.
dd if="$it" bs=7 2>/dev/null >"$work/iter7"
cmp -s "$work/iter" "$work/iter7" || fail "reading $it 7 bytes at a time gives other text"
kill -CONT "$pid"
finish "$pid"
exit 0
