#!/bin/sh
# SPDX-License-Identifier: MIT
# The example callback libraries of Documentation/examples, loaded with
# ALLOCINFO_CALLBACKS into a program built with allocinfo.h and into one built
# without it and run under LD_PRELOAD: their exact output.
set -u
prog=$top_builddir/tests/integration/callbacks_prog
plain=$top_builddir/tests/integration/callbacks_prog_plain
ex=$top_builddir/Documentation/examples/.libs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-cb.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {	# check WHAT EXPECTED ACTUAL
	if [ "$2" != "$3" ]; then
		printf '%s: expected\n%s\ngot\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

# 1. Allocations above a size, with their call site.
err=$(ALLOCINFO_CALLBACKS=$ex/libcallbacks_log_large.so LOG_LARGE_ABOVE=50000 \
	"$prog" large 2>&1 >"$tmp/lines") || { echo "large: the program failed"; fail=1; }
read -r l1 l2 <"$tmp/lines"
check "log_large, tagged" \
"large: malloc 100000 bytes at tests/integration/callbacks_prog.c:$l1 func:large [callbacks_prog]
large: calloc 200000 bytes at tests/integration/callbacks_prog.c:$l2 func:large [callbacks_prog]" \
	"$(printf '%s\n' "$err" | sed 's|at [^ ]*tests/integration/|at tests/integration/|')"

if [ "${ALLOCINFO_SANITIZER:-no}" = no ]; then
	# Under LD_PRELOAD every call is a caller tag: module and offset, for addr2line.
	err=$(ALLOCINFO_CALLBACKS=$ex/libcallbacks_log_large.so LOG_LARGE_ABOVE=50000 \
		LD_PRELOAD=$ALLOCINFO_LIB "$plain" large 2>&1 >/dev/null)
	n=$(printf '%s\n' "$err" | grep -c '^large: ')
	check "log_large, LD_PRELOAD: lines" 2 "$n"
	off1=$(printf '%s\n' "$err" | sed -n '1s/^large: malloc 100000 bytes at \[callbacks_prog_plain\] +\(0x[0-9a-f]*\) (addr2line -f -e callbacks_prog_plain \1)$/\1/p')
	off2=$(printf '%s\n' "$err" | sed -n '2s/^large: calloc 200000 bytes at \[callbacks_prog_plain\] +\(0x[0-9a-f]*\) (addr2line -f -e callbacks_prog_plain \1)$/\1/p')
	if [ -z "$off1" ] || [ -z "$off2" ]; then
		printf 'log_large, LD_PRELOAD: unexpected lines\n%s\n' "$err"
		fail=1
	elif command -v addr2line >/dev/null; then
		check "addr2line of the malloc" large "$(addr2line -f -e "$plain" "$off1" | head -1)"
		check "addr2line of the calloc" large "$(addr2line -f -e "$plain" "$off2" | head -1)"
	fi
fi

# 2. Guard bytes, checked at free: the overflowing block is reported with its site.
err=$(ALLOCINFO_CALLBACKS=$ex/libcallbacks_guard.so "$prog" overflow 2>&1 >"$tmp/lines") ||
	{ echo "overflow: the program failed"; fail=1; }
read -r l1 <"$tmp/lines"
check "guard" \
"guard: 100-byte block from tests/integration/callbacks_prog.c:$l1 func:overflow [callbacks_prog] was written past its end" \
	"$(printf '%s\n' "$err" | sed 's|from [^ ]*tests/integration/|from tests/integration/|')"
# Without the overflow, nothing is reported and the program's own output is intact.
err=$(ALLOCINFO_CALLBACKS=$ex/libcallbacks_guard.so "$prog" large 2>&1 >/dev/null) ||
	{ echo "guard, large: the program failed"; fail=1; }
check "guard, no overflow" "" "$err"

# 3. Per-thread statistics: the worker thread's exact line (a sanitizer's runtime
# allocates in every thread it starts, through the same malloc: there, only its run).
err=$(ALLOCINFO_CALLBACKS=$ex/libcallbacks_thread_stats.so "$prog" threads 2>&1 >/dev/null) ||
	{ echo "threads: the program failed"; fail=1; }
[ "${ALLOCINFO_SANITIZER:-no}" = no ] && check "thread_stats" \
"(worker): 10 allocations (1000 bytes), 1 reallocs (500 bytes), 10 frees (1400 bytes)" \
	"$(printf '%s\n' "$err" | sed -n 's/^thread [0-9]* \((worker)\)/\1/p')"

[ $fail = 0 ] && echo ok
exit $fail
