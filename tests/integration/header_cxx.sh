#!/bin/sh
# SPDX-License-Identifier: MIT
# Tagged calls in inline member functions, templates, lambdas, static, extern and
# anonymous-namespace functions of one C++ file compile with g++ and clang++, at -O0
# and -O2, included first or through allocinfo-c++, and each is charged to its line.
set -u
# The programs it builds are not instrumented, and a sanitizer build's library (and
# the reader module it loads) needs the sanitizer's runtime loaded first.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: programs built without the sanitizer"; exit 77; }
src=$top_srcdir/tests/integration/header_inline_cxx.cpp
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
lib=$top_builddir/lib/.libs
# "bytes calls line" of each site, in the file's order
want='2000 1 10
32 1 12
40 1 13
2001 1 15
4 1 16
24 1 18
2002 1 26'
fail=0
check() {	# check LABEL: runs $tmp/prog, compares the report's lines for the file
	ALLOCINFO=1 ALLOCINFO_STORE=none "$tmp/prog" >"$tmp/report" 2>&1
	got=$(sed -n 's/^ *\([0-9]*\) *\([0-9]*\) .*header_inline_cxx\.cpp:\([0-9]*\) .*/\1 \2 \3/p' \
		"$tmp/report" | sort -n -k3)
	if [ "$got" != "$want" ]; then
		echo "FAILED: $1"; echo "expected:"; echo "$want"; echo "got:"; cat "$tmp/report"
		fail=1
	fi
}
for cxx in g++ clang++; do
	command -v $cxx >/dev/null || continue
	for opt in -O0 -O2; do
		for d in "" -DALLOCINFO_NO_INLINE; do
			if $cxx -std=c++11 $opt $d -Wall -Wextra -Werror -I"$top_srcdir/include" \
				"$src" -o "$tmp/prog" -L"$lib" -Wl,-rpath,"$lib" -lallocinfo \
				>"$tmp/log" 2>&1; then
				check "$cxx $opt $d, allocinfo.h included"
			else
				echo "FAILED: $cxx $opt $d: does not compile"; cat "$tmp/log"; fail=1
			fi
		done
		if ALLOCINFO_CXX=$cxx ALLOCINFO_CC_VERBOSE=1 "$top_builddir/tools/allocinfo-c++" \
			-std=c++17 $opt -Wall -Werror "$src" -o "$tmp/prog" >"$tmp/log" 2>&1 &&
			! grep -q 'compiling again' "$tmp/log"; then
			check "$cxx $opt, through allocinfo-c++"
		else
			echo "FAILED: allocinfo-c++ ($cxx $opt)"; cat "$tmp/log"; fail=1
		fi
	done
done
[ $fail = 0 ] && echo ok
exit $fail
