#!/bin/sh
# SPDX-License-Identifier: MIT
# Programs built with allocinfo-cc or allocinfo-c++ and a sanitizer, as projects
# build for their CI (-fsanitize=address, thread, leak, undefined, and clang's
# memory), with gcc and clang:
# - a program without bugs (sanitized.c) runs clean, and is counted exactly, threads
#   and fork included, where the sanitizer's runtime is a shared library (gcc's,
#   clang's -shared-libsan); where clang links it into the executable, nothing is
#   counted and, to a terminal, the library says why;
# - LeakSanitizer's reports name the program's line that leaked, for every kind of
#   allocation, C and C++ (its stacks are walked by frame pointers through the
#   library);
# - AddressSanitizer still finds a write one past a block's end and a write after
#   free, naming the line that made the block, and ThreadSanitizer a race on a block.
set -u
# The sanitizers here are the program's; a sanitizer build of the library is not.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: the library is built for a sanitizer"; exit 77; }
src=$top_srcdir/tests/integration
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
export ALLOCINFO_CC_VERBOSE=1
unset TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
cc_wrap=$top_builddir/tools/allocinfo-cc
cxx_wrap=$top_builddir/tools/allocinfo-c++
ran=0 failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
pass() { echo "ok: $*"; }

# build WRAPPER OUT SOURCES-AND-FLAGS...: with the header (the wrapper's fallback
# without it would test nothing here).
build() {
	w=$1 out=$2
	shift 2
	if ! "$w" -g -fno-omit-frame-pointer "$@" -o "$tmp/$out" >"$tmp/build.log" 2>&1; then
		fail "$out: does not build"; sed -n 1,20p "$tmp/build.log"; return 1
	elif grep -q 'compiling again' "$tmp/build.log"; then
		fail "$out: built without the header"; sed -n 1,20p "$tmp/build.log"; return 1
	fi
}

# The lines of FILE that end in the comment MARK.
marked() { grep -nE "(/\* $2 \*/|// $2)\$" "$src/$1" | cut -d: -f1; }

# sanitizer_runs CC SAN FLAGS: whether a plain program built so runs here (ThreadSanitizer
# needs an address-space layout some kernels do not give).
sanitizer_runs() {
	printf 'int main(void) { return 0; }\n' >"$tmp/probe.c"
	$1 -fsanitize=$2 $3 "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1 && "$tmp/probe" >/dev/null 2>&1
}

clean_run() {	# clean_run NAME COUNTED [ENV...]
	name=$1 counted=$2
	shift 2
	ran=$((ran + 1))
	out=$(timeout 120 env "$@" "$tmp/$name" $counted 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || [ "$(printf '%s\n' "$out" | tail -n 1)" != ok ]; then
		fail "$name (exit $rc)"; printf '%s\n' "$out" | head -n 30
	else
		pass "$name"
	fi
}

for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "skip: no $cc"; continue; }
	cxx=g++; [ $cc = clang ] && cxx=clang++
	export ALLOCINFO_CC=$cc ALLOCINFO_CXX=$cxx
	for san in address thread leak undefined memory; do
		[ $cc = gcc ] && [ $san = memory ] && continue	# clang's alone
		if ! sanitizer_runs $cc $san ""; then
			echo "skip: $cc -fsanitize=$san does not run here"; continue
		fi
		name=clean-$cc-$san
		build "$cc_wrap" $name -O1 -D_GNU_SOURCE -fsanitize=$san -I"$top_srcdir/tests/unit" \
			"$src/sanitized.c" "$top_srcdir/tests/unit/site_report.c" -lcmocka -lpthread || continue
		# clang links these runtimes, malloc and all, into the executable.
		counted=1
		[ $cc = clang ] && [ $san != undefined ] && counted=0
		clean_run $name $counted
		if [ $counted = 0 ] && command -v script >/dev/null; then
			ran=$((ran + 1))
			if timeout 120 script -qec "$tmp/$name 0" /dev/null 2>&1 | grep -q "allocinfo: the program has a sanitizer's runtime linked in"; then
				pass "$name: says why nothing is counted"
			else
				fail "$name: does not say why nothing is counted"
			fi
		fi
	done
	# clang's AddressSanitizer as a shared library: counted.
	[ $cc = clang ] || continue
	rt=$(dirname "$(clang -print-file-name=libclang_rt.asan-x86_64.so)")
	sanitizer_runs clang address "-shared-libsan -Wl,-rpath,$rt" || continue
	build "$cc_wrap" clean-clang-shared-address -O1 -D_GNU_SOURCE -fsanitize=address \
		-shared-libsan -Wl,-rpath,"$rt" -I"$top_srcdir/tests/unit" "$src/sanitized.c" \
		"$top_srcdir/tests/unit/site_report.c" -lcmocka -lpthread &&
		clean_run clean-clang-shared-address 1
done

# Leak reports: every marked line is the first of the program's frames in a report.
export ALLOCINFO_CC=gcc ALLOCINFO_CXX=g++
leaks() {	# leaks WRAPPER SOURCE SAN
	name=leaks-$(basename "$2")-$3
	build "$1" $name -O0 -D_GNU_SOURCE -fsanitize=$3 "$src/$2" || return
	ran=$((ran + 1))
	timeout 120 "$tmp/$name" >"$tmp/leaks.log" 2>&1
	rc=$?
	# The first frame of the source's in each report's stack.
	awk -v f="$2" '/leak of/ { first = 1 }
		first && index($0, f ":") { sub(/.*:/, "", $NF); sub(/:.*/, "", $NF); print $NF; first = 0 }' \
		"$tmp/leaks.log" | sort -n -u >"$tmp/found"
	marked "$2" leaks | sort -n >"$tmp/want"
	if [ $rc -eq 0 ] || ! cmp -s "$tmp/found" "$tmp/want"; then
		fail "$name: exit $rc; leaked lines reported: $(tr '\n' ' ' <"$tmp/found")," \
		     "marked: $(tr '\n' ' ' <"$tmp/want")"
		sed -n 1,60p "$tmp/leaks.log"
	else
		pass "$name: $(wc -l <"$tmp/want") leaks, each at its line"
	fi
}
for san in address leak; do
	sanitizer_runs gcc $san "" || { echo "skip: gcc -fsanitize=$san does not run here"; continue; }
	leaks "$cc_wrap" sanitized_leaks.c $san
	leaks "$cxx_wrap" sanitized_leaks.cpp $san
done

# bug SAN WHAT REPORT [MADE]: the sanitizer reports REPORT, with the line of the bug,
# and with the line that made the block unless MADE is "no". ThreadSanitizer's
# allocation stacks come from its own record of the instrumented functions' calls, in
# which a call through an uninstrumented library leaves no line of the caller's.
bug() {
	name=bugs-$1
	[ -x "$tmp/$name" ] || build "$cc_wrap" $name -O0 -fsanitize=$1 "$src/sanitized_bugs.c" -lpthread || return
	ran=$((ran + 1))
	timeout 120 "$tmp/$name" $2 >"$tmp/bug.log" 2>&1
	rc=$?
	made=$(marked sanitized_bugs.c made)
	ok=yes
	[ $rc -ne 0 ] || ok=no
	grep -q "$3" "$tmp/bug.log" || ok=no
	[ "${4:-}" = no ] || grep -q "sanitized_bugs.c:$made" "$tmp/bug.log" || ok=no
	for line in $(marked sanitized_bugs.c bug); do
		grep -q "sanitized_bugs.c:$line" "$tmp/bug.log" && break
		line=
	done
	[ -n "$line" ] || ok=no
	if [ $ok = yes ]; then
		pass "$name $2: $3"
	else
		fail "$name $2 (exit $rc): no '$3' naming lines $made and the bug's"
		sed -n 1,40p "$tmp/bug.log"
	fi
}
if sanitizer_runs gcc address ""; then
	bug address overflow "ERROR: AddressSanitizer: heap-buffer-overflow"
	bug address use-after-free "ERROR: AddressSanitizer: heap-use-after-free"
fi
sanitizer_runs gcc thread "" && bug thread race "WARNING: ThreadSanitizer: data race" no

echo "$ran runs, $failed failed"
[ $ran -gt 0 ] || exit 77
[ $failed -eq 0 ]
