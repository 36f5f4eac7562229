#!/bin/sh
# SPDX-License-Identifier: MIT
# A C program's walks out of wrappers (unwind_prog.c): the C library's stdio is walked
# from the unwind tables without loading libgcc_s, fopen's FILE and fprintf's buffer
# charged to their lines; a frame only libgcc's unwinder understands makes the walk
# load it and still finds the caller. Rebuilt with the header and preloaded.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: LD_PRELOAD under a sanitizer"; exit 77; }
I=$top_builddir/tests/integration
fail=0

# expect OUTPUT BYTES CALLS LINE MODULE [VIA]: one row exactly so.
expect() {
	tail=" func:main"
	[ -n "${6:-}" ] && tail="$tail via:$6"
	row=$(printf '%12d %8d ' "$2" "$3")
	if ! printf '%s\n' "$1" | grep -F -- "$row" |
			grep -E -- "(^|/| )unwind_prog\.c:$4 \[$5\]$tail \$" >/dev/null; then
		echo "$5: missing: ${row}unwind_prog.c:$4 [$5]$tail"
		fail=1
	fi
}

for v in plain tagged; do
	if [ $v = plain ]; then
		out=$(ALLOCINFO_WRAPPERS=expr_xmalloc LD_PRELOAD=$ALLOCINFO_LIB "$I/unwind_prog_plain")
	else
		out=$(ALLOCINFO_WRAPPERS=expr_xmalloc "$I/unwind_prog_tagged")
	fi || { echo "$v: the program failed"; exit 1; }
	set -- $(printf '%s\n' "$out" |
		sed -n 's/^lines fopen=\([0-9]*\) fprintf=\([0-9]*\) expr=\([0-9]*\) libgcc_s before=\([01]\) after=\([01]\)$/\1 \2 \3 \4 \5/p')
	[ $# -eq 5 ] || { echo "$v: no line numbers"; printf '%s\n' "$out"; exit 1; }
	m=unwind_prog_$v
	expect "$out" 472 1 "$1" $m		# glibc's FILE with its lock
	expect "$out" 4096 1 "$2" $m		# the buffer: /dev/null's st_blksize
	expect "$out" 300 1 "$3" $m expr_xmalloc
	[ "$4" = 0 ] || { echo "$v: libgcc_s was loaded by the walks out of stdio"; fail=1; }
	[ "$5" = 1 ] || { echo "$v: libgcc_s was not loaded for the expression frame"; fail=1; }
	[ $fail = 0 ] || printf '%s\n' "$out"
done
[ $fail = 0 ] && echo ok
exit $fail
