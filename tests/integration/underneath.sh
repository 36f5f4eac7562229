#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo on top of the program's own allocator (jemalloc, tcmalloc, mimalloc,
# glibc's libc_malloc_debug.so): a program built with the header, the allocator
# preloaded into it, linked ahead of the library, or linked and the library preloaded
# ahead of it. Every run must finish with exact counts, each block served by that
# allocator (tests/unit/underneath.c checks its statistics), also after a library
# built without the header is loaded with dlopen and blocks cross between them, and
# when a library hands out free as data the program holds a copy of. A combination
# whose allocator is not installed is skipped, and said so.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: LD_PRELOAD under a sanitizer"; exit 77; }
U=$top_builddir/tests/unit
# A library built without the header, loaded with dlopen once the program runs.
PLUGIN=$U/.libs/libplain.so
# One that calls the allocator's own functions (underneath_api.c).
API_PLUGIN=$U/.libs/libapiplugin.so
ran=0 failed=0

# The installed path of a shared library, from the loader's cache.
library() {
	/sbin/ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*$1 (.*) => //p" | head -n 1
}

# expect_ok WHAT ENV... PROGRAM ALLOCATOR
expect_ok() {
	what=$1
	shift
	out=$(env "$@" 2>&1)
	rc=$?
	ran=$((ran + 1))
	if [ $rc -ne 0 ] || [ "$(printf '%s\n' "$out" | tail -n 1)" != ok ]; then
		echo "FAIL: $what (exit $rc)"
		printf '%s\n' "$out" | head -n 40
		failed=$((failed + 1))
	else
		echo "ok: $what"
	fi
}

# expect_quiet WHAT ENV... PROGRAM ALLOCATOR: as expect_ok, and no line of the
# library's (ALLOCINFO_DEBUG names every pointer it finds wrong; here there is none).
expect_quiet() {
	expect_ok "$@"
	if printf '%s\n' "$out" | grep -q '^allocinfo:'; then
		echo "FAIL: $1: the library said"
		printf '%s\n' "$out" | grep '^allocinfo:' | head -n 10
		failed=$((failed + 1))
	fi
}

expect_ok "glibc alone" "$U/underneath" glibc "$PLUGIN"
expect_ok "C++, glibc alone" "$U/underneath_cxx" glibc
expect_ok "copies of free, glibc alone" "$U/underneath_copied"

# A wrapper that passes every call on to the next malloc (libpasson.so, the kind of
# glibc's libmemusage.so). Before the library, it is taken for the allocator first and
# its calls reach the library's exported functions, which hand them to glibc; after
# it, it is the allocator next. Exact counts over glibc's blocks either way.
WRAP=$top_builddir/tests/integration/.libs/libpasson.so
if [ -f "$WRAP" ]; then
	for mode in A=1 "ALLOCINFO_HEAP=own UNDERNEATH_OWN_HEAP=1"; do
		expect_ok "LD_PRELOAD=libpasson.so liballocinfo.so, $mode" $mode \
			LD_PRELOAD="$WRAP $ALLOCINFO_LIB" UNDERNEATH_FIRST=1 "$U/underneath" glibc "$PLUGIN"
		expect_ok "LD_PRELOAD=liballocinfo.so libpasson.so, $mode" $mode \
			LD_PRELOAD="$ALLOCINFO_LIB $WRAP" "$U/underneath" glibc "$PLUGIN"
	done
	expect_quiet "LD_PRELOAD=libpasson.so liballocinfo.so, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 \
		LD_PRELOAD="$WRAP $ALLOCINFO_LIB" UNDERNEATH_FIRST=1 "$U/underneath" glibc "$PLUGIN"
	expect_quiet "LD_PRELOAD=liballocinfo.so libpasson.so, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 \
		LD_PRELOAD="$ALLOCINFO_LIB $WRAP" "$U/underneath" glibc "$PLUGIN"
	expect_ok "C++, LD_PRELOAD=libpasson.so liballocinfo.so" \
		LD_PRELOAD="$WRAP $ALLOCINFO_LIB" "$U/underneath_cxx" glibc
	expect_ok "C++, LD_PRELOAD=liballocinfo.so libpasson.so" \
		LD_PRELOAD="$ALLOCINFO_LIB $WRAP" "$U/underneath_cxx" glibc
fi

# An allocator whose functions call one another by name (self_calling_alloc.c), as
# Electric Fence's do: preloaded after the library, its malloc()'s call of memalign()
# must stay its own (it recursed until the stack ran out); before the library, it
# comes first as any allocator does. Its figures show it served every block.
SELF=$top_builddir/tests/integration/.libs/libselfcalling.so
if [ -f "$SELF" ]; then
	for mode in A=1 ALLOCINFO=never "ALLOCINFO_HEAP=own UNDERNEATH_OWN_HEAP=1"; do
		expect_ok "LD_PRELOAD=liballocinfo.so libselfcalling.so, $mode" $mode \
			LD_PRELOAD="$ALLOCINFO_LIB $SELF" "$U/underneath" selfcall "$PLUGIN"
		expect_ok "LD_PRELOAD=libselfcalling.so, $mode" $mode LD_PRELOAD="$SELF" \
			UNDERNEATH_FIRST=1 "$U/underneath" selfcall "$PLUGIN"
		expect_ok "C++, LD_PRELOAD=liballocinfo.so libselfcalling.so, $mode" $mode \
			LD_PRELOAD="$ALLOCINFO_LIB $SELF" "$U/underneath_cxx" selfcall
	done
	expect_quiet "LD_PRELOAD=liballocinfo.so libselfcalling.so, ALLOCINFO_DEBUG=1" \
		ALLOCINFO_DEBUG=1 LD_PRELOAD="$ALLOCINFO_LIB $SELF" "$U/underneath" selfcall \
		"$PLUGIN"
	expect_quiet "LD_PRELOAD=libselfcalling.so, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 \
		LD_PRELOAD="$SELF" UNDERNEATH_FIRST=1 "$U/underneath" selfcall "$PLUGIN"
fi
# Electric Fence itself (package electric-fence), which keeps no figures to check:
# in both orders, no crash and exact counts. Not the C++ program, whose new of 2^62
# bytes Electric Fence's memalign() cannot fail without a crash of its own.
EFENCE=$(library libefence.so.0)
if [ -n "$EFENCE" ]; then
	expect_ok "LD_PRELOAD=liballocinfo.so libefence.so.0" \
		LD_PRELOAD="$ALLOCINFO_LIB $EFENCE" "$U/underneath" glibc-debug "$PLUGIN"
	expect_ok "LD_PRELOAD=libefence.so.0" LD_PRELOAD="$EFENCE" UNDERNEATH_FIRST=1 \
		"$U/underneath" glibc-debug "$PLUGIN"
else
	echo "skip: libefence.so.0 is not installed"
fi

# gperftools' debugging allocators, which abort on a block made by operator new and
# freed by free() or delete[]: the global objects a C++ library makes while dlopen()
# loads it, before its calls are routed, must go back to the allocator's own delete
# and delete[]. The library's reader module, loaded when the program first reads its
# report, is such a library, and so is libcxxglobals.so. (Their
# malloc_usable_size() of an aligned block is larger than the block, so the programs
# above, which fill each block to its usable size, are not run over them.)
CXXGLOBALS=$U/.libs/libcxxglobals.so
for lib in libtcmalloc_debug.so.4 libtcmalloc_minimal_debug.so.4; do
	TCDEBUG=$(library $lib)
	if [ -z "$TCDEBUG" ]; then
		echo "skip: $lib is not installed"
		continue
	fi
	expect_ok "LD_PRELOAD=$lib, a report read" LD_PRELOAD="$TCDEBUG" \
		"$U/underneath_report"
	expect_ok "LD_PRELOAD=$lib, a C++ library loaded and unloaded" \
		LD_PRELOAD="$TCDEBUG" "$U/underneath_report" "$CXXGLOBALS"
	expect_ok "LD_PRELOAD=liballocinfo.so $lib, a C++ library loaded and unloaded" \
		LD_PRELOAD="$ALLOCINFO_LIB $TCDEBUG" "$U/underneath_report" "$CXXGLOBALS"
	expect_ok "LD_PRELOAD=$lib, a C++ library, ALLOCINFO=never" ALLOCINFO=never \
		LD_PRELOAD="$TCDEBUG" "$U/underneath_report" "$CXXGLOBALS"
done

for pair in jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4 \
	    mimalloc:libmimalloc.so.2 glibc-debug:libc_malloc_debug.so.0; do
	name=${pair%%:*} lib=$(library "${pair#*:}")
	if [ -z "$lib" ]; then
		echo "skip: ${pair#*:} is not installed"
		continue
	fi
	# A library's words set to free, malloc and realloc, which the program holds as
	# copies the loader made before the library started (libxml2's xmlFree): routed
	# with the library's, in every order.
	expect_ok "copies of free, LD_PRELOAD=$lib" LD_PRELOAD="$lib" "$U/underneath_copied"
	expect_quiet "copies of free, LD_PRELOAD=$lib, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 \
		LD_PRELOAD="$lib" "$U/underneath_copied"
	expect_ok "copies of free, LD_PRELOAD=liballocinfo.so $lib" \
		LD_PRELOAD="$ALLOCINFO_LIB $lib" "$U/underneath_copied"
	# Preloaded into a binary built with the header: the allocator comes first.
	if [ "$name" = glibc-debug ]; then
		expect_ok "LD_PRELOAD=$lib MALLOC_CHECK_=3" LD_PRELOAD="$lib" MALLOC_CHECK_=3 \
			MALLOC_PERTURB_=165 UNDERNEATH_FIRST=1 "$U/underneath" glibc "$PLUGIN"
		expect_ok "LD_PRELOAD=$lib" LD_PRELOAD="$lib" UNDERNEATH_FIRST=1 \
			"$U/underneath" glibc "$PLUGIN"
		expect_ok "LD_PRELOAD=$lib MALLOC_CHECK_=3, ALLOCINFO=never" ALLOCINFO=never \
			LD_PRELOAD="$lib" MALLOC_CHECK_=3 MALLOC_PERTURB_=165 UNDERNEATH_FIRST=1 \
			"$U/underneath" glibc "$PLUGIN"
		continue
	fi
	expect_ok "LD_PRELOAD=$lib" LD_PRELOAD="$lib" UNDERNEATH_FIRST=1 "$U/underneath" \
		"$name" "$PLUGIN"
	expect_ok "C++, LD_PRELOAD=$lib" LD_PRELOAD="$lib" "$U/underneath_cxx" "$name"
	expect_ok "C++, LD_PRELOAD=liballocinfo.so $lib" LD_PRELOAD="$ALLOCINFO_LIB $lib" \
		"$U/underneath_cxx" "$name"
	# Preloaded after the library: it comes next.
	expect_ok "LD_PRELOAD=liballocinfo.so $lib" LD_PRELOAD="$ALLOCINFO_LIB $lib" \
		"$U/underneath" "$name" "$PLUGIN"
	# ALLOCINFO=never, either way: the allocator's blocks alone, without records,
	# and nothing the program writes below a block is taken for one.
	expect_ok "LD_PRELOAD=$lib, ALLOCINFO=never" ALLOCINFO=never LD_PRELOAD="$lib" \
		UNDERNEATH_FIRST=1 "$U/underneath" "$name" "$PLUGIN"
	expect_ok "LD_PRELOAD=liballocinfo.so $lib, ALLOCINFO=never" ALLOCINFO=never \
		LD_PRELOAD="$ALLOCINFO_LIB $lib" "$U/underneath" "$name" "$PLUGIN"
	expect_ok "C++, LD_PRELOAD=$lib, ALLOCINFO=never" ALLOCINFO=never LD_PRELOAD="$lib" \
		"$U/underneath_cxx" "$name"
	expect_ok "C++, LD_PRELOAD=liballocinfo.so $lib, ALLOCINFO=never" ALLOCINFO=never \
		LD_PRELOAD="$ALLOCINFO_LIB $lib" "$U/underneath_cxx" "$name"
	# The library's own small-block heap, asked for explicitly, over the allocator.
	expect_ok "LD_PRELOAD=liballocinfo.so $lib, ALLOCINFO_HEAP=own" \
		ALLOCINFO_HEAP=own UNDERNEATH_OWN_HEAP=1 LD_PRELOAD="$ALLOCINFO_LIB $lib" \
		"$U/underneath" "$name" "$PLUGIN"
	expect_ok "LD_PRELOAD=$lib, ALLOCINFO_HEAP=own" ALLOCINFO_HEAP=own \
		UNDERNEATH_OWN_HEAP=1 UNDERNEATH_FIRST=1 LD_PRELOAD="$lib" \
		"$U/underneath" "$name" "$PLUGIN"
	expect_ok "C++, LD_PRELOAD=$lib, ALLOCINFO_HEAP=own" \
		ALLOCINFO_HEAP=own LD_PRELOAD="$lib" "$U/underneath_cxx" "$name"
	# The allocator's own functions (dallocx, mi_free, tc_malloc_size, ...) given
	# blocks that malloc made, in both orders and every mode.
	for mode in "" ALLOCINFO=never ALLOCINFO_HEAP=own; do
		expect_ok "$name's functions, LD_PRELOAD=$lib${mode:+, $mode}" $mode \
			LD_PRELOAD="$lib" UNDERNEATH_FIRST=1 "$U/underneath_api" "$name" "$API_PLUGIN"
		expect_ok "$name's functions, LD_PRELOAD=liballocinfo.so $lib${mode:+, $mode}" \
			$mode LD_PRELOAD="$ALLOCINFO_LIB $lib" "$U/underneath_api" "$name" \
			"$API_PLUGIN"
	done
	expect_quiet "$name's functions, LD_PRELOAD=$lib, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 \
		LD_PRELOAD="$lib" UNDERNEATH_FIRST=1 "$U/underneath_api" "$name" "$API_PLUGIN"
	expect_quiet "$name's functions, LD_PRELOAD=liballocinfo.so $lib, ALLOCINFO_DEBUG=1" \
		ALLOCINFO_DEBUG=1 LD_PRELOAD="$ALLOCINFO_LIB $lib" "$U/underneath_api" "$name" \
		"$API_PLUGIN"
	if [ ! -x "$U/underneath_$name" ]; then
		echo "skip: built without lib$name's development files"
		continue
	fi
	expect_ok "$name's functions, linked with -l$name" UNDERNEATH_FIRST=1 \
		"$U/underneath_api_$name" "$name" "$API_PLUGIN"
	expect_ok "$name's functions, linked with -l$name, LD_PRELOAD=liballocinfo.so" \
		LD_PRELOAD="$ALLOCINFO_LIB" "$U/underneath_api_$name" "$name" "$API_PLUGIN"
	# Linked ahead of the library (as allocinfo-cc ... -l$name links), and behind
	# it when the library is preloaded.
	expect_ok "linked with -l$name" UNDERNEATH_FIRST=1 "$U/underneath_$name" "$name" \
		"$PLUGIN"
	expect_ok "linked with -l$name, LD_PRELOAD=liballocinfo.so" \
		LD_PRELOAD="$ALLOCINFO_LIB" "$U/underneath_$name" "$name" "$PLUGIN"
	expect_ok "linked with -l$name, ALLOCINFO=0" ALLOCINFO=0 UNDERNEATH_FIRST=1 \
		"$U/underneath_$name" "$name" "$PLUGIN"
	expect_ok "linked with -l$name, ALLOCINFO=never" ALLOCINFO=never UNDERNEATH_FIRST=1 \
		"$U/underneath_$name" "$name" "$PLUGIN"
	# Debugging: every block the library made passes its checks, and every block
	# the allocator made itself goes back to it, unnamed.
	expect_quiet "LD_PRELOAD=$lib, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 LD_PRELOAD="$lib" \
		UNDERNEATH_FIRST=1 "$U/underneath" "$name" "$PLUGIN"
	expect_quiet "LD_PRELOAD=liballocinfo.so $lib, ALLOCINFO_DEBUG=1" ALLOCINFO_DEBUG=1 \
		LD_PRELOAD="$ALLOCINFO_LIB $lib" "$U/underneath" "$name" "$PLUGIN"
done
# A program built without the header and linked with jemalloc, under
# LD_PRELOAD=liballocinfo.so: jemalloc's statistics move by its size class of each
# block with its 16-byte record, and the blocks are counted at their caller.
if [ -x "$U/underneath_plain" ]; then
	ran=$((ran + 1))
	out=$(LD_PRELOAD=$ALLOCINFO_LIB "$U/underneath_plain" 2>&1)
	line=$(printf '%s\n' "$out" | sed -n 's/^line //p')
	set -- $(printf '%s\n' "$out" | sed -n 's/^jemalloc \([0-9]*\) alone [0-9]* recorded \([0-9]*\)$/\1 \2/p')
	if [ $# -ne 2 ] || [ "$1" != "$2" ] ||
	   ! printf '%s\n' "$out" | grep -E "^ *800000 +8 .*underneath_plain\.c:$line \[underneath_plain\] func:make_block \$" >/dev/null; then
		echo "FAIL: linked with -ljemalloc, built without the header, LD_PRELOAD=liballocinfo.so"
		printf '%s\n' "$out"
		failed=$((failed + 1))
	else
		echo "ok: linked with -ljemalloc, built without the header, LD_PRELOAD=liballocinfo.so"
	fi
fi
echo "$((ran - failed)) passed, $failed failed"
[ $failed -eq 0 ] || exit 1
[ $ran -gt 1 ] || exit 77
exit 0
