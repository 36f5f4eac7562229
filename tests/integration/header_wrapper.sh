#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo-cc and allocinfo-c++ on the kinds of file real projects hold, compiled
# unchanged with gcc and clang: strict feature sets chosen by the file, C89,
# -Wdeclaration-after-statement, headers that declare the malloc family after
# allocinfo.h, C++98, structures with members named malloc or realloc that take other
# arguments, all compile with the header (the object registers its tags); a
# file that declares calloc() itself compiles without it; assembly, -E and -v are the
# compiler's own; autoconf's compiler checks find what they find with gcc; a static
# link is refused with a reason.
set -u
# It compiles and never runs what it builds, through the wrapper scripts, which a
# sanitizer build does not change: the plain suite runs it.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || exit 77
src=$top_srcdir/tests/integration
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
export ALLOCINFO_CC_VERBOSE=1
cc_wrap=$top_builddir/tools/allocinfo-cc
cxx_wrap=$top_builddir/tools/allocinfo-c++
fail=0
failed() { echo "FAILED: $*"; cat "$tmp/log"; fail=1; }

# tagged WRAPPER FILE FLAGS...: compiles with the header, which registers the tags.
tagged() {
	w=$1 f=$2
	shift 2
	if ! "$w" "$@" -c "$src/$f" -o "$tmp/o.o" >"$tmp/log" 2>&1; then
		failed "$f ($*): does not compile"
	elif grep -q 'compiling again' "$tmp/log"; then
		failed "$f ($*): compiled without the header"
	elif ! nm "$tmp/o.o" | grep -q ' U allocinfo_register_tags$'; then
		failed "$f ($*): the object registers no tags"
	fi
}

for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	cxx=g++; [ $cc = clang ] && cxx=clang++
	export ALLOCINFO_CC=$cc ALLOCINFO_CXX=$cxx
	strict="-Wall -Wextra -Werror"
	tagged "$cc_wrap" header_posix_source.c -std=c99 $strict
	tagged "$cc_wrap" header_xopen_source.c -std=c11 $strict
	tagged "$cc_wrap" header_gnu_source.c -std=c99 $strict
	tagged "$cc_wrap" header_later_gnu_source.c -std=gnu11 $strict
	tagged "$cc_wrap" header_c89.c -std=c89 -pedantic $strict -Wstrict-prototypes \
		-Wshadow -Wcast-qual -Wundef -Wconversion -Wc++-compat
	tagged "$cc_wrap" header_decl_after_statement.c -std=gnu99 $strict \
		-Wdeclaration-after-statement -Wold-style-definition -Wvla
	for o in -O0 -O2; do
		tagged "$cc_wrap" header_mm_malloc.c -std=c99 $o $strict
	done
	if [ -e /usr/include/jemalloc/jemalloc.h ]; then
		tagged "$cc_wrap" header_jemalloc.c -std=gnu11 $strict
	fi
	tagged "$cxx_wrap" header_cxx98.cpp -std=c++98 -pedantic $strict
	tagged "$cc_wrap" header_member_calls.c -std=c89 -pedantic $strict
	tagged "$cc_wrap" header_member_calls.c -std=gnu11 -O2 $strict
	tagged "$cxx_wrap" header_member_calls.c -x c++ -std=c++11 $strict
	tagged "$cxx_wrap" header_first.cpp -std=c++17 $strict

	# Its own declaration of calloc(): compiled again without the header, and said so.
	if ! "$cc_wrap" -std=gnu11 -c "$src/header_own_declaration.c" -o "$tmp/o.o" \
		>"$tmp/log" 2>&1; then
		failed "$cc: header_own_declaration.c does not compile"
	elif ! grep -q '^allocinfo-cc: compiling again without allocinfo.h (caller tags only):$' \
		"$tmp/log" || nm "$tmp/o.o" | grep -q allocinfo; then
		failed "$cc: header_own_declaration.c was not compiled without the header"
	fi

	# Assembly, preprocessed.
	"$cc_wrap" -c "$src/header_asm.S" -o "$tmp/o.o" >"$tmp/log" 2>&1 &&
		nm "$tmp/o.o" | grep -q ' T header_asm_answer$' || failed "$cc: header_asm.S"
	# -E: the file's own preprocessing, nothing of allocinfo's.
	"$cc_wrap" -E "$src/header_c89.c" >"$tmp/i" 2>"$tmp/log" &&
		! grep -q allocinfo "$tmp/i" && grep -q 'malloc(10)' "$tmp/i" ||
		failed "$cc: -E"
	# -M: the file's dependencies.
	"$cc_wrap" -M "$src/header_c89.c" >"$tmp/d" 2>"$tmp/log" &&
		! grep -q allocinfo "$tmp/d" && grep -q 'header_c89.c' "$tmp/d" || failed "$cc: -M"
	# -v alone: the version, as the compiler prints it, and success.
	"$cc_wrap" -v >"$tmp/log" 2>&1 && grep -q ' version ' "$tmp/log" || failed "$cc: -v"
	"$cxx_wrap" --version >"$tmp/log" 2>&1 || failed "$cxx: --version"
done

# autoconf's compiler checks (C11, C99, C89; C++11, C++98) find what they find with
# gcc and g++.
if command -v autoconf >/dev/null; then
	mkdir "$tmp/ac"
	printf 'AC_INIT([t], [1])\nAC_PROG_CC\nAC_PROG_CXX\nAC_OUTPUT\n' >"$tmp/ac/configure.ac"
	if (cd "$tmp/ac" && autoconf 2>/dev/null); then
		(cd "$tmp/ac" && CC=gcc CXX=g++ ./configure) >"$tmp/plain" 2>&1
		(cd "$tmp/ac" && CC=$cc_wrap CXX=$cxx_wrap ALLOCINFO_CC=gcc ALLOCINFO_CXX=g++ \
			./configure) >"$tmp/wrapped" 2>&1
		sed -e "s|$cc_wrap|gcc|g" -e "s|$cxx_wrap|g++|g" "$tmp/wrapped" >"$tmp/log"
		if ! diff "$tmp/plain" "$tmp/log" >/dev/null || grep -q unsupported "$tmp/log"; then
			diff "$tmp/plain" "$tmp/log" >>"$tmp/log"
			failed "autoconf's checks differ"
		fi
	fi
fi
# Pointed where allocinfo is not: one line naming what is missing, and a failure, not
# an untagged object or the linker's complaint about -lallocinfo.
nowhere=$tmp/nowhere
printf 'int main(void) { return 0; }\n' >"$tmp/main.c"
ALLOCINFO_INCLUDEDIR=$nowhere "$cc_wrap" -c "$tmp/main.c" -o "$tmp/o.o" >"$tmp/log" 2>&1 &&
	failed "compiled with no header"
grep -q "^allocinfo-cc: no $nowhere/allocinfo/cc.h: allocinfo is not installed there" "$tmp/log" ||
	failed "no header: not said"
ALLOCINFO_LIBDIR=$nowhere "$cc_wrap" "$tmp/main.c" -o "$tmp/a.out" >"$tmp/log" 2>&1 &&
	failed "linked with no library"
grep -q "^allocinfo-cc: no $nowhere/liballocinfo.so: allocinfo is not installed there" "$tmp/log" ||
	failed "no library: not said"
ALLOCINFO_INCLUDEDIR=$nowhere ALLOCINFO_LIBDIR=$nowhere "$cc_wrap" -E "$tmp/main.c" \
	>"$tmp/log" 2>&1 || failed "-E needs no header"

# The compiler named first (CC="allocinfo-cc clang", as ccache takes it), which build
# systems keep for every compile: it is the one that runs, with the header; neither a
# file nor an option first is taken for one.
unset ALLOCINFO_CC ALLOCINFO_CXX
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	cxx=g++; [ $cc = clang ] && cxx=clang++
	macro=__GNUC__; [ $cc = clang ] && macro=__clang__
	echo | "$cc_wrap" $cc -dM -E - | grep -q "define $macro " ||
		failed "$cc_wrap $cc: not $cc"
	echo | "$cxx_wrap" $cxx -x c++ -dM -E - | grep -q "define $macro " ||
		failed "$cxx_wrap $cxx: not $cxx"
	tagged "$cc_wrap" header_gnu_source.c $cc
	tagged "$cxx_wrap" header_inline_cxx.cpp $cxx
	"$cc_wrap" $cc -c "$tmp/main.c" -o "$tmp/o.o" >"$tmp/log" 2>&1 || failed "$cc first: main.c"
done
echo | "$cc_wrap" -dM -E - | grep -q "define __clang__ " && failed "gcc by default: clang ran"
cp "$tmp/main.c" "$tmp/prog.cc" && chmod +x "$tmp/prog.cc"
(cd "$tmp" && "$cxx_wrap" ./prog.cc -o prog && ./prog) >"$tmp/log" 2>&1 ||
	failed "an executable source file first, ./prog.cc: not compiled"

# A static link: one line saying why, and a failure, not the linker's multiple
# definitions of malloc; an object compiled with -static, and the static runtimes of
# gcc and libstdc++ in a dynamic link, are fine.
for opt in -static -static-pie; do
	"$cc_wrap" $opt "$tmp/main.c" -o "$tmp/static" >"$tmp/log" 2>&1 && failed "$opt: linked"
	grep -q "^allocinfo-cc: cannot link with $opt: allocinfo counts a program through the dynamic loader" \
		"$tmp/log" || failed "$opt: not said"
	grep -q "multiple definition" "$tmp/log" && failed "$opt: the linker's complaint"
done
"$cc_wrap" -static -c "$tmp/main.c" -o "$tmp/o.o" >"$tmp/log" 2>&1 || failed "-static -c: not compiled"
printf '#include <string>\nint main() { std::string s(100, 0); return (int)s[1]; }\n' >"$tmp/s.cpp"
"$cxx_wrap" -static-libgcc -static-libstdc++ "$tmp/s.cpp" -o "$tmp/s" >"$tmp/log" 2>&1 ||
	failed "-static-libgcc -static-libstdc++: not linked"

[ $fail = 0 ] && echo ok
exit $fail
