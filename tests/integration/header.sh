#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo.h included first, then every standard header, compiles warning-free as
# C (gnu11) and C++ (C++17), with gcc and clang, optimised (the inline fast path);
# and with ALLOCINFO_DISABLE and ALLOCINFO_NO_INLINE, also as strict C89.
set -u
# It uses nothing of the build: the plain suite runs it, and a sanitizer build would
# only run the same compilers again.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || exit 77
src=$top_srcdir/tests/integration
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
try() {
	if ! "$@" >"$tmp/log" 2>&1; then
		echo "FAILED: $*"; cat "$tmp/log"; fail=1
	fi
}
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	cxx=g++; [ $cc = clang ] && cxx=clang++
	for d in "" -DALLOCINFO_DISABLE -DALLOCINFO_NO_INLINE; do
		try $cc -std=gnu11 -O2 -Wall -Wextra -Werror $d -I"$top_srcdir/include" -c "$src/header_first.c" -o "$tmp/c.o"
		try $cxx -std=c++17 -O2 -Wall -Wextra -Werror $d -I"$top_srcdir/include" -c "$src/header_first.cpp" -o "$tmp/cxx.o"
		# a source compiled unchanged through -include, as allocinfo-cc does
		try $cc -std=gnu11 -Wall -Werror $d -include allocinfo.h -I"$top_srcdir/include" -c "$src/header_later_gnu_source.c" -o "$tmp/g.o"
		# C89 has no inline keyword: the header's own stubs must not need it
		try $cc -std=c89 -pedantic -Wall -Wextra -Werror $d -include allocinfo.h -I"$top_srcdir/include" -c "$src/header_c89.c" -o "$tmp/c89.o"
	done
done
# The header's own code (the inline fast path) stays quiet under strict warning sets,
# whatever the including file's own warnings.
strict="-O2 -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wcast-qual -Wshadow"
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	cxx=g++; [ $cc = clang ] && cxx=clang++
	$cc -std=gnu11 $strict -I"$top_srcdir/include" -c "$src/header_first.c" \
		-o "$tmp/c.o" >"$tmp/log" 2>&1
	$cxx -std=c++17 $strict -Wold-style-cast -Wzero-as-null-pointer-constant \
		-I"$top_srcdir/include" -c "$src/header_first.cpp" -o "$tmp/cxx.o" >>"$tmp/log" 2>&1
	if grep -E 'allocinfo\.h:.*(warning|error)' "$tmp/log"; then
		echo "FAILED: $cc: diagnostics in allocinfo.h"; fail=1
	fi
done
[ $fail = 0 ] && echo ok
exit $fail
