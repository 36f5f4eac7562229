#!/bin/sh
# SPDX-License-Identifier: MIT
# A forked child's store is made at its first counter update, not at fork: until
# then it has no store (nor BPF pins) of its own and readers say so; from then on it
# has one, holding exactly the parent's live blocks and its own. With each store.
# A daemon's is made when it starts its session (setsid(), or daemon(3)), though it
# allocates nothing after the fork: readers find it, with what it holds.
. "$top_srcdir/tests/integration/process_lib.sh"
cli=$top_builddir/tools/allocinfo
src=tests/integration/process_prog.c
line_parent=$(grep -n 'LINE_PARENT \*/' "$top_srcdir/$src" | cut -d: -f1)
line_child=$(grep -n 'LINE_CHILD \*/' "$top_srcdir/$src" | cut -d: -f1)
line_daemon=$(grep -n 'LINE_DAEMON \*/' "$top_srcdir/$src" | cut -d: -f1)
pins=/sys/fs/bpf/allocinfo

stores=shm
[ "$(id -u)" = 0 ] && [ -z "$(ALLOCINFO_STORE=bpf "$prog" fds 2>&1 >/dev/null)" ] &&
	stores="shm bpf"
for store in $stores; do
	rm -f "$work/a" "$work/b" "$work/out"
	mkfifo "$work/a" "$work/b" || fail "mkfifo"
	ALLOCINFO_STORE=$store "$prog" lazy "$work/a" "$work/b" >"$work/out" 2>"$work/err" &
	parent=$!
	pids="$pids $parent"
	wait_nonempty "$work/out"
	child=$(head -1 "$work/out")
	pids="$pids $child"

	# Not allocated yet: the parent's store is the only one it holds.
	"$cli" -p "$child" >"$work/before" 2>&1 && fail "$store: a store for $child before it counted"
	grep -E -q "^allocinfo: .*(not yet published|publishes no store)" "$work/before" ||
		fail "$store: before its first update: $(cat "$work/before")"
	[ -e "$pins/$child" ] && fail "$store: pins for $child before it counted"

	: >"$work/a"
	n=0
	until grep -q allocated "$work/out"; do
		n=$((n + 1)); [ $n -lt 400 ] || fail "$store: the child did not allocate"; sleep 0.05
	done
	"$cli" -p "$child" >"$work/after" 2>&1 || fail "$store: no store after: $(cat "$work/after")"
	grep -E -q "^ +100 +1 .*$src:$line_parent " "$work/after" ||
		fail "$store: the parent's block is not the child's: $(cat "$work/after")"
	grep -E -q "^ +77 +1 .*$src:$line_child " "$work/after" ||
		fail "$store: the child's block is not counted: $(cat "$work/after")"
	if [ $store = bpf ]; then
		[ -d "$pins/$child" ] || fail "bpf: no pins for $child once it counted"
		grep -E -q "^ +77 +1 .*$src:$line_child " "$pins/$child/allocinfo" ||
			fail "bpf: the child's iterator lacks its block"
	fi
	: >"$work/b"
	wait "$parent" || fail "$store: the child failed (status $?): $(cat "$work/err")"
	[ -s "$work/err" ] && fail "$store: messages: $(cat "$work/err")"

	for how in setsid daemon; do
		rm -f "$work/d" "$work/out"
		mkfifo "$work/d" || fail "mkfifo"
		ALLOCINFO_STORE=$store "$prog" daemon $how "$work/d" >"$work/out" 2>"$work/err" ||
			fail "$store: process_prog daemon $how: $(cat "$work/err")"
		wait_nonempty "$work/out"
		d=$(head -1 "$work/out")
		pids="$pids $d"
		"$cli" -p "$d" >"$work/daemon" 2>&1 ||
			fail "$store, $how: no store for the daemon: $(cat "$work/daemon")"
		grep -E -q "^ +100000 +1 .*$src:$line_daemon " "$work/daemon" ||
			fail "$store, $how: the daemon's block is not counted: $(cat "$work/daemon")"
		[ $store = bpf ] && { [ -d "$pins/$d" ] || fail "bpf, $how: no pins for $d"; }
		: >"$work/d"
		n=0
		while [ -d "/proc/$d" ] && ! grep -q '^State:.*Z' "/proc/$d/status" 2>/dev/null; do
			n=$((n + 1)); [ $n -lt 400 ] || fail "$store, $how: the daemon did not exit"
			sleep 0.05
		done
		[ -s "$work/err" ] && fail "$store, $how: messages: $(cat "$work/err")"
	done
done
exit 0
