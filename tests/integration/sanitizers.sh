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
# - a program without frame pointers, its rbp pointing into its own data, gets stacks
#   that end at its line (not one for every block, kept by the sanitizer for good);
# - AddressSanitizer still finds a write one past a block's end, a write after free
#   and a double free (as a double free), naming the line that made the block, and
#   ThreadSanitizer a race on a block;
# - AddressSanitizer's alloc-dealloc-mismatch check sees a C++ program's new[] freed
#   by delete, new by free, malloc by delete and new by delete[], and every form given
#   back as it came runs clean.
set -u
# The sanitizers here are the program's; a sanitizer build of the library is not.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: the library is built for a sanitizer"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/integration/checkers_lib.sh"
unset TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
ran=0 failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
pass() { echo "ok: $*"; }

# build WRAPPER OUT ARGS...: build_tagged, its failure counted.
build() { build_tagged "$@" || { fail "$2: not built with the header"; return 1; }; }

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
	first_lines "$2" 'leak of' <"$tmp/leaks.log" | uniq >"$tmp/found"	# one a line
	marked "$2" leaks >"$tmp/want"
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

# A program built without frame pointers whose rbp holds a pointer into its own stack
# (sanitized_rbp.c): the stacks of its blocks end at its line instead of running on
# through its data, so identical stacks are kept once. The plain build is the control:
# its stacks differ with every block.
rbp_frames() {	# rbp_frames SAN
	[ "$(uname -m)" = x86_64 ] || { echo "skip: sanitized_rbp.c is x86-64"; return; }
	name=rbp-$1
	build "$cc_wrap" $name -O1 -fomit-frame-pointer -fsanitize=$1 "$src/sanitized_rbp.c" || return
	gcc -g -O1 -fomit-frame-pointer -fsanitize=$1 "$src/sanitized_rbp.c" -o "$tmp/$name-plain" ||
		{ fail "$name: the plain build does not build"; return; }
	made=$(marked sanitized_rbp.c made)
	ran=$((ran + 1))
	timeout 120 "$tmp/$name-plain" leak 3 >"$tmp/rbp-plain.log" 2>&1
	timeout 120 "$tmp/$name" leak 3 >"$tmp/rbp.log" 2>&1
	plain=$(grep -c 'leak of' "$tmp/rbp-plain.log")
	records=$(grep -c 'leak of' "$tmp/rbp.log")
	lines=$(first_lines sanitized_rbp.c 'leak of' <"$tmp/rbp.log" | tr '\n' ' ')
	if [ "$plain" != 3 ]; then
		fail "$name: the plain build's leaks are $plain records, not 3: the test does not reproduce"
		sed -n 1,30p "$tmp/rbp-plain.log"
	# (LeakSanitizer's build calls the header's allocation function out of line, and
	# that frame, without a record, is the last one a walk by frame pointers sees.)
	elif [ "$records" = 1 ] && grep -q 'leak of 168 byte(s) in 3 object(s)' "$tmp/rbp.log" &&
	     ! grep -q 'unknown module' "$tmp/rbp.log" &&
	     { [ $1 = leak ] || [ "$lines" = "$made " ]; }; then
		pass "$name: 3 leaks in one record${lines:+, at line ${lines% }} (the plain build: $plain records)"
	else
		fail "$name: $records leak records, at lines $lines; want one of 3 objects at $made"
		sed -n 1,30p "$tmp/rbp.log"
	fi
	[ $1 = address ] || return
	# Every stack AddressSanitizer keeps: 20,000 blocks made and freed.
	ran=$((ran + 1))
	ids() { ASAN_OPTIONS=print_stats=1:atexit=1 timeout 120 "$@" 2>&1 |
		sed -n 's/.*StackDepot: \([0-9]*\) ids.*/\1/p' | tail -n 1; }
	plain=$(ids "$tmp/$name-plain" churn 20000)
	ours=$(ids "$tmp/$name" churn 20000)
	if [ -n "$ours" ] && [ -n "$plain" ] && [ "$plain" -gt 40000 ] && [ "$ours" -lt 100 ]; then
		pass "$name: 40,000 makes and frees keep $ours stacks (the plain build: $plain)"
	else
		fail "$name: 40,000 makes and frees keep '$ours' stacks, want under 100 (the plain build: '$plain')"
	fi
}
for san in address leak; do
	sanitizer_runs gcc $san "" && rbp_frames $san
done

# reported NAME SOURCE WHAT REPORT RC [MADE]: the run of NAME (its output in
# $tmp/NAME.log) exited RC, not 0, with REPORT, naming every line of SOURCE marked WHAT,
# and line MADE when given.
reported() {
	name=$1 source=$2 what=$3 report=$4 rc=$5 made=${6:-}
	ok=yes
	[ $rc -ne 0 ] || ok=no
	grep -q "$report" "$tmp/$name.log" || ok=no
	lines=$(marked "$source" "$what")
	[ -n "$lines" ] || ok=no
	for line in $lines $made; do
		grep -q "$source:$line\b" "$tmp/$name.log" || ok=no
	done
	if [ $ok = yes ]; then
		pass "$name $what: $report, at lines" $lines $made
	else
		fail "$name $what (exit $rc): no '$report' naming lines" $lines $made
		sed -n 1,40p "$tmp/$name.log"
	fi
}

# bug SAN WHAT REPORT [MADE]: the sanitizer reports REPORT, with every line marked
# WHAT, and with the line that made the block unless MADE is "no". ThreadSanitizer's
# allocation stacks come from its own record of the instrumented functions' calls, in
# which a call through an uninstrumented library leaves no line of the caller's.
bug() {
	name=bugs-$1
	[ -x "$tmp/$name" ] || build "$cc_wrap" $name -O0 -fsanitize=$1 "$src/sanitized_bugs.c" -lpthread || return
	ran=$((ran + 1))
	timeout 120 "$tmp/$name" $2 >"$tmp/$name.log" 2>&1
	rc=$?
	made=
	[ "${4:-}" = no ] || made=$(marked sanitized_bugs.c made)
	reported $name sanitized_bugs.c "$2" "$3" $rc $made
}
if sanitizer_runs gcc address ""; then
	bug address overflow "ERROR: AddressSanitizer: heap-buffer-overflow"
	bug address use-after-free "ERROR: AddressSanitizer: heap-use-after-free"
	bug address double-free "ERROR: AddressSanitizer: attempting double-free"
fi
sanitizer_runs gcc thread "" && bug thread race "WARNING: ThreadSanitizer: data race" no

# mismatch WHAT REPORT: AddressSanitizer reports REPORT for a C++ block given back by
# the wrong function (sanitized_mismatch.cpp), naming both lines marked WHAT; without
# WHAT, every form given back as it came runs clean.
mismatch() {
	name=mismatch
	[ -x "$tmp/$name" ] || build "$cxx_wrap" $name -O0 -fsanitize=address "$src/sanitized_mismatch.cpp" || return
	ran=$((ran + 1))
	timeout 120 "$tmp/$name" ${1:-} >"$tmp/$name.log" 2>&1
	rc=$?
	if [ -n "${1:-}" ]; then
		reported $name sanitized_mismatch.cpp "$1" "$2" $rc
	elif [ $rc -eq 0 ] && [ "$(cat "$tmp/$name.log")" = done ]; then
		pass "$name: every form given back as it came, clean"
	else
		fail "$name (exit $rc): not clean"
		sed -n 1,40p "$tmp/$name.log"
	fi
}
if sanitizer_runs gcc address ""; then
	mismatch
	mismatch array "alloc-dealloc-mismatch (operator new \[\] vs operator delete)"
	mismatch new-free "alloc-dealloc-mismatch (operator new vs free)"
	mismatch malloc-delete "alloc-dealloc-mismatch (malloc vs operator delete)"
	mismatch new-array-delete "alloc-dealloc-mismatch (operator new vs operator delete \[\])"
fi

echo "$ran runs, $failed failed"
[ $ran -gt 0 ] || exit 77
[ $failed -eq 0 ]
