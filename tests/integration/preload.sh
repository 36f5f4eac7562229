#!/bin/sh
# SPDX-License-Identifier: MIT
# LD_PRELOAD=liballocinfo.so on a program built without the header: it runs
# correctly and its allocations appear under caller tags with file:line.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: LD_PRELOAD under a sanitizer"; exit 77; }
prog=$top_builddir/tests/unit/preload_target
out=$(LD_PRELOAD=$ALLOCINFO_LIB "$prog") || { echo "the program failed"; exit 1; }
line=$(printf '%s\n' "$out" | sed -n 's/^line //p')
expected=$(printf '%12d %8d preload_target.c:%d [preload_target] func:make_buffer' 3000 3 "$line")
if ! printf '%s\n' "$out" | grep -E "^ *3000 +3 .*preload_target\.c:$line \[preload_target\] func:make_buffer \$" >/dev/null; then
	echo "expected a line like: $expected"
	printf '%s\n' "$out"
	exit 1
fi
# Without the library the same program runs and prints no report.
out=$("$prog") || exit 1
printf '%s\n' "$out" | grep -q 'allocinfo - version' && { echo "report without the library"; exit 1; }
echo "ok"
