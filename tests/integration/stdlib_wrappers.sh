#!/bin/sh
# SPDX-License-Identifier: MIT
# The standard libraries are wrappers by default: v.push_back(x), std::string(100,
# 'x') and strdup() are charged to the user's lines, at -O0 and -O2, rebuilt with the
# header and preloaded; ALLOCINFO_WRAPPERS=-std,-libc turns that off.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: LD_PRELOAD under a sanitizer"; exit 77; }
I=$top_builddir/tests/integration
fail=0

run() {	# run O0|O2 plain|tagged [WRAPPERS]
	if [ "$2" = plain ]; then
		ALLOCINFO_WRAPPERS=${3:-} LD_PRELOAD=$ALLOCINFO_LIB "$I/stdlib_prog_$1_plain"
	else
		ALLOCINFO_WRAPPERS=${3:-} "$I/stdlib_prog_$1_tagged"
	fi
}

# expect WHAT OUTPUT BYTES CALLS LINE MODULE
expect() {
	row=$(printf '%12d %8d ' "$3" "$4")
	if ! printf '%s\n' "$2" | grep -F -- "$row" |
			grep -E -- "(^|/| )stdlib_prog\.cpp:$5 \[$6\] func:main \$" >/dev/null; then
		echo "$1: missing: ${row}stdlib_prog.cpp:$5 [$6] func:main"
		fail=1
	fi
}

for o in O0 O2; do
	for v in plain tagged; do
		out=$(run $o $v) || { echo "$o $v: the program failed"; exit 1; }
		set -- $(printf '%s\n' "$out" | sed -n 's/^lines vector=\([0-9]*\) string=\([0-9]*\) copy=\([0-9]*\) strdup=\([0-9]*\)$/\1 \2 \3 \4/p')
		[ $# -eq 4 ] || { echo "$o $v: no line numbers"; printf '%s\n' "$out"; exit 1; }
		m=stdlib_prog_${o}_$v
		expect "$o $v" "$out" 4096 1 "$1" $m	# 1024 ints: the last growth
		expect "$o $v" "$out" 101 1 "$2" $m	# 100 chars and the NUL
		expect "$o $v" "$out" 133 2 "$3" $m	# one std::string slot, and the copy
		expect "$o $v" "$out" 6 1 "$4" $m
		if printf '%s\n' "$out" | grep -E '(bits/|/c\+\+/|\[libstdc\+\+|func:_ZNSt|func:std::)' >/dev/null; then
			echo "$o $v: a standard library line is charged:"
			printf '%s\n' "$out"
			fail=1
		fi
		# Left out, the growth is the standard library's again.
		out=$(run $o $v "-std,-libc")
		printf '%s\n' "$out" | grep -E -- "stdlib_prog\.cpp:$1 .* func:main \$" >/dev/null &&
			{ echo "$o $v: -std: the growth is still the user's"; fail=1; }
		if [ $v = plain ]; then
			printf '%s\n' "$out" | grep -E -- "stdlib_prog\.cpp:$4 .* func:main \$" >/dev/null &&
				{ echo "$o $v: -libc: strdup is still the user's"; fail=1; }
		fi
	done
done
[ $fail = 0 ] && echo ok
exit $fail
