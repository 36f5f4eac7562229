#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfod names a BPF store's caller tags for its report iterator: after a read
# of /run/allocinfo (here, a private mountpoint), the iterator of a process of the
# daemon's user prints the caller tag's file, line and function.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require
[ -c /dev/fuse ] || skip "no /dev/fuse"
daemon=$top_builddir/tools/allocinfod
[ -x "$daemon" ] || skip "allocinfod was not built (no libfuse3)"

mkdir "$work/mnt"
dpid=
stop_daemon() {
	[ -n "$dpid" ] || return 0
	kill -TERM "$dpid" 2>/dev/null
	n=0
	while kill -0 "$dpid" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	kill -KILL "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
}
trap 'stop_daemon; cleanup' EXIT

start wait own ALLOCINFO_STORE=bpf
it=$pins/$pid/allocinfo
cat "$it" >"$work/before" || fail "cannot read $it"
grep -q -E '^ +48 +1 \?\?:0 \[bpf_prog\] func:0x[0-9a-f]+ $' "$work/before" ||
	{ cat "$work/before"; fail "the caller tag is not unnamed before any reader"; }

"$daemon" -f --mountpoint "$work/mnt" --store-dir "$ALLOCINFO_STORE_DIR" 2>"$work/daemon.log" &
dpid=$!
n=0
until grep -qs serving "$work/daemon.log"; do
	n=$((n + 1))
	[ $n -lt 400 ] || { cat "$work/daemon.log"; fail "allocinfod did not start"; }
	sleep 0.05
done
cat "$work/mnt/allocinfo" >"$work/combined" || fail "cannot read the daemon's report"
expect_row "$work/combined" 48 1 75
cat "$it" >"$work/after" || fail "cannot read $it"
expect_row "$work/after" 48 1 75
grep -q '??:0 \[bpf_prog\]' "$work/after" && fail "a caller tag of bpf_prog is still unnamed"
stop_daemon
finish "$pid"
exit 0
