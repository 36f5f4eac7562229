#!/bin/sh
# SPDX-License-Identifier: MIT
# The sampling profiler's hooks in a program built without allocinfo.h, under
# LD_PRELOAD=liballocinfo.so: a profiler loaded with ALLOCINFO_CALLBACKS
# (profiler_hooks_lib.c) sees the block's size, the functions of its stack with both
# walkers, its realloc in place and its free with the sample data it wrote; also under
# ALLOCINFO_DEBUG=1 and over each other allocator installed underneath.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: LD_PRELOAD under a sanitizer"; exit 77; }
prog=$top_builddir/tests/integration/profiler_hooks_prog
hooks=$top_builddir/tests/integration/.libs/libprofilerhooks.so
unset ALLOCINFO ALLOCINFO_DEBUG ALLOCINFO_PROFILE_UNWIND
fail=0
want="alloc 123457: hooks_leaf hooks_middle main
realloc in place 123457 -> 61728: hooks-ok
free 61728: hooks-ok"

# run WHAT ENV...: the program's stderr must be exactly $want.
run() {
	what=$1
	shift
	out=$(env "$@" ALLOCINFO_CALLBACKS="$hooks" "$prog" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || [ "$out" != "$want" ]; then
		printf 'FAIL: %s (exit %s): expected\n%s\ngot\n%s\n' "$what" "$rc" "$want" "$out"
		fail=1
	else
		echo "ok: $what"
	fi
}

library() {
	/sbin/ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*$1 (.*) => //p" | head -n 1
}

run "LD_PRELOAD, unwinder" LD_PRELOAD="$ALLOCINFO_LIB"
run "LD_PRELOAD, frame pointers" LD_PRELOAD="$ALLOCINFO_LIB" ALLOCINFO_PROFILE_UNWIND=fp
run "LD_PRELOAD, ALLOCINFO_DEBUG=1" LD_PRELOAD="$ALLOCINFO_LIB" ALLOCINFO_DEBUG=1
for so in libjemalloc.so.2 libtcmalloc_minimal.so.4 libmimalloc.so.2; do
	lib=$(library "$so")
	if [ -z "$lib" ]; then
		echo "skip: $so is not installed"
		continue
	fi
	run "LD_PRELOAD=liballocinfo.so $so" LD_PRELOAD="$ALLOCINFO_LIB $lib"
done
exit $fail
