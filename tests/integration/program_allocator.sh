#!/bin/sh
# SPDX-License-Identifier: MIT
# A program whose malloc and free are built into the executable (an allocator of its
# own, or jemalloc or tcmalloc linked statically): its calls of free cannot be routed,
# so the library must leave every block to that allocator and count nothing, and say
# so once on a terminal (and only there: the program's stderr is its own). program_allocator_prog.c checks that libc's blocks for it are the allocator's
# own and that its free() sees no other pointer; built here with cc and with
# allocinfo-cc (which compiles a file that defines malloc() without the header, and
# links the library), and with each static allocator installed.
set -u
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
[ "${ALLOCINFO_SANITIZER:-no}" = no ] ||
	{ echo "skip: a sanitizer's malloc cannot be replaced by the program's"; exit 77; }
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "skip: no C compiler"; exit 77; }
: "${top_srcdir:?}" "${top_builddir:?}" "${ALLOCINFO_LIB:?}"
SRC=$top_srcdir/tests/integration/program_allocator_prog.c
LIBDIR=$top_builddir/lib/.libs
W=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-progalloc.XXXXXX") || exit 99
trap 'rm -rf "$W"' EXIT
MESSAGE='^allocinfo: the program defines malloc or free itself, and its own calls of them cannot be routed: nothing is counted (as with ALLOCINFO=never)$'
ran=0 failed=0

# build OUT ARGS...: with cc, and with allocinfo-cc as OUT_cc.
build() {
	out=$1
	shift
	"$CC" -O1 -Wall -o "$W/$out" "$@" || exit 99
	ALLOCINFO_CC=$CC ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$LIBDIR \
		sh "$top_builddir/tools/allocinfo-cc" -O1 -Wall -o "$W/${out}_cc" "$@" || exit 99
}
build plain "$SRC"

# expect PROGRAM ENV...: "ok", exit 0, and nothing on stderr (not a terminal).
expect() {
	prog=$1
	shift
	ran=$((ran + 1))
	env "$@" "$W/$prog" >"$W/out" 2>"$W/err"
	rc=$?
	what="$prog${*:+, $*}"
	if [ $rc -ne 0 ] || [ "$(cat "$W/out")" != ok ]; then
		fail "$what (exit $rc)"
		cat "$W/out" "$W/err" | head -n 20
	elif [ -s "$W/err" ]; then
		fail "$what: stderr is not the program's alone"
		cat "$W/err"
	else
		echo "ok: $what"
	fi
}

# on_terminal PROGRAM NOTICES ENV...: run on a pseudo-terminal (script(1)), "ok" and
# NOTICES lines of the library's.
on_terminal() {
	prog=$1 notices=$2
	shift 2
	command -v script >/dev/null || { echo "skip: no script(1) for a terminal"; return; }
	ran=$((ran + 1))
	what="$prog on a terminal${*:+, $*}"
	script -qec "env $* '$W/$prog'" /dev/null </dev/null | tr -d '\r' >"$W/tty"
	if ! grep -qx ok "$W/tty" || [ "$(grep -c "$MESSAGE" "$W/tty")" != "$notices" ] ||
	   [ "$(grep -c . "$W/tty")" != $((notices + 1)) ]; then
		fail "$what: expected ok and $notices notice(s)"
		cat "$W/tty"
	else
		echo "ok: $what"
	fi
}

expect plain
expect plain LD_PRELOAD="$ALLOCINFO_LIB"
expect plain LD_PRELOAD="$ALLOCINFO_LIB" ALLOCINFO=never
expect plain LD_PRELOAD="$ALLOCINFO_LIB" ALLOCINFO_DEBUG=1
expect plain LD_PRELOAD="$ALLOCINFO_LIB" ALLOCINFO_HEAP=own
expect plain_cc
expect plain_cc ALLOCINFO=never
expect plain_cc ALLOCINFO=0
expect plain_cc ALLOCINFO_DEBUG=1 ALLOCINFO_HEAP=own
on_terminal plain 1 LD_PRELOAD="$ALLOCINFO_LIB"
on_terminal plain_cc 1
on_terminal plain_cc 0 ALLOCINFO=never

# Allocators linked statically: the executable defines their malloc and free.
for a in jemalloc:"-lpthread -ldl -lm" tcmalloc_minimal:"-lstdc++ -lpthread -lm"; do
	name=${a%%:*} libs=${a#*:}
	archive=$("$CC" -print-file-name="lib$name.a")
	if [ ! -f "$archive" ]; then
		echo "skip: no lib$name.a"
		continue
	fi
	build "static_$name" -DNO_OWN_MALLOC "$SRC" "$archive" $libs
	expect "static_$name"
	expect "static_$name" LD_PRELOAD="$ALLOCINFO_LIB"
	expect "static_$name" LD_PRELOAD="$ALLOCINFO_LIB" ALLOCINFO=never
	# Built with the header: its calls reach the library, which gives them the
	# allocator's blocks.
	expect "static_${name}_cc"
	expect "static_${name}_cc" ALLOCINFO_HEAP=own
	on_terminal "static_${name}_cc" 1
done

# A wrapper that passes each call on to the next malloc (libpasson.so, as glibc's
# libmemusage.so does), preloaded before the library (which its calls then reach, to be
# served by glibc's malloc) and after it, into a program without a malloc of its own.
WRAP=$top_builddir/tests/integration/.libs/libpasson.so
if [ -f "$WRAP" ]; then
	build libc -DNO_OWN_MALLOC "$SRC"
	for order in "$WRAP $ALLOCINFO_LIB" "$ALLOCINFO_LIB $WRAP"; do
		for mode in A=1 ALLOCINFO=never ALLOCINFO=0 ALLOCINFO_DEBUG=1 ALLOCINFO_HEAP=own; do
			expect libc LD_PRELOAD="$order" $mode
		done
		expect libc_cc LD_PRELOAD="$order"
		expect libc_cc LD_PRELOAD="$order" ALLOCINFO=never
	done
else
	echo "skip: libpasson.so is not built"
fi

echo "$((ran - failed)) passed, $failed failed"
[ $failed -eq 0 ]
