#!/bin/sh
# SPDX-License-Identifier: MIT
# Wrappers known by name (xmalloc, xcalloc, xstrdup) in a program rebuilt with the
# header: each tagged call inside them is charged to its caller's line, via the
# wrapper, never to a line of allocinfo.h (whose helpers, and in C++ the overloads
# that take the tag, are frames between the wrapper and the library), in C and C++ at
# -O0 and -O2, built with the header and with allocinfo-cc and allocinfo-c++; in C++
# also a wrapper in a namespace declared by its bare name (pool::grab) whose
# allocation has no tag; and calls on the smallest thread stack, and on a stack that
# ends just above them (a coroutine's), run.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] ||
	{ echo "skip: the sanitizer builds link the library statically (no walk out of wrappers)"; exit 77; }
I=$top_builddir/tests/integration
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# The same program through the compiler wrappers, as a user builds it.
for o in O0 O2; do
	for lang in c cxx; do
		cc=$top_builddir/tools/allocinfo-cc
		[ $lang = cxx ] && cc="$top_builddir/tools/allocinfo-c++ -x c++"
		if ! $cc -g -$o -pthread "$top_srcdir/tests/integration/known_wrappers_prog.c" \
			-o "$tmp/known_wrappers_cc_${lang}_$o" 2>"$tmp/err"; then
			echo "cc $lang $o: does not build"; cat "$tmp/err"; exit 1
		fi
	done
done

# expect NAME OUTPUT BYTES CALLS LINE MODULE VIA: one row exactly so.
expect() {
	row=$(printf '%12d %8d ' "$3" "$4")
	if ! printf '%s\n' "$2" | grep -F -- "$row" |
			grep -E -- "(^|/| )known_wrappers_prog\.c:$5 \[$6\] func:calls via:$7 \$" >/dev/null; then
		echo "$1: missing: ${row}known_wrappers_prog.c:$5 [$6] func:calls via:$7"
		fail=1
	fi
}

for p in c_O0 c_O2 cxx_O0 cxx_O2 cc_c_O0 cc_c_O2 cc_cxx_O0 cc_cxx_O2; do
	m=known_wrappers_$p
	prog=$I/$m
	case $p in cc_*) prog=$tmp/$m ;; esac
	out=$(ALLOCINFO_WRAPPERS=pool::grab "$prog" 2>"$tmp/stderr")
	rc=$?
	if [ $rc != 0 ]; then
		echo "$p: the program failed ($rc)"
		printf '%s\n' "$out"
		cat "$tmp/stderr"
		fail=1
		continue
	fi
	[ -s "$tmp/stderr" ] && { echo "$p: unexpected stderr:"; cat "$tmp/stderr"; fail=1; }
	set -- $(printf '%s\n' "$out" | sed -n 's/^lines malloc=\([0-9]*\) big=\([0-9]*\) calloc=\([0-9]*\) strdup=\([0-9]*\) grab=\([0-9]*\)$/\1 \2 \3 \4 \5/p')
	[ $# -eq 5 ] || { echo "$p: no line numbers"; printf '%s\n' "$out"; fail=1; continue; }
	# Each line ran twice: on the thread, then on the coroutine.
	expect $p "$out" 80 2 "$1" $m xmalloc
	expect $p "$out" 200000 2 "$2" $m xmalloc
	expect $p "$out" 160 2 "$3" $m xcalloc
	expect $p "$out" 32 4 "$4" $m xstrdup
	case $p in	# C++: pool::grab, declared by its bare name; C: xmalloc
	*cxx*) expect $p "$out" 2000 2 "$5" $m pool::grab ;;
	*) expect $p "$out" 2000 2 "$5" $m xmalloc ;;
	esac
	if printf '%s\n' "$out" | grep -E 'allocinfo\.h:|func:(allocinfo__|malloc |calloc |strdup )' >/dev/null; then
		echo "$p: a line of the header is charged:"
		printf '%s\n' "$out" | grep -E 'allocinfo\.h:|func:allocinfo__'
		fail=1
	fi
	n=$(printf '%s\n' "$out" | grep -c ' via:')
	[ "$n" = 5 ] || { echo "$p: $n rows via a wrapper, expected 5"; printf '%s\n' "$out"; fail=1; }
done
exit $fail
