#!/bin/sh
# SPDX-License-Identifier: MIT
# Pins at exit: none left after a normal exit; after kill -9, `allocinfo --gc`
# removes them (and the store file), and leaves a live process's alone.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require

start wait live ALLOCINFO_STORE=bpf
live=$pid

start wait exit ALLOCINFO_STORE=bpf
[ -d "$pins/$pid" ] || fail "no pins for $pid"
finish "$pid"
[ ! -e "$pins/$pid" ] || fail "pins of $pid left after a normal exit: $(ls "$pins/$pid")"
[ ! -e "$ALLOCINFO_STORE_DIR/allocinfo-$pid" ] || fail "store file of $pid left after exit"

# kill -9: no exit handler runs. (Any BPF store created meanwhile may sweep the pins
# of a process that is gone: the test then checks that --gc leaves nothing.)
start wait killed ALLOCINFO_STORE=bpf
killed=$pid
kill -KILL "$killed"
wait "$killed" 2>/dev/null
[ -f "$ALLOCINFO_STORE_DIR/allocinfo-$killed" ] || fail "no store file left by $killed to collect"
allocinfo --gc >"$work/gc" 2>"$work/gc.err" || fail "allocinfo --gc: $(cat "$work/gc.err")"
[ ! -e "$pins/$killed" ] || fail "allocinfo --gc left $pins/$killed: $(cat "$work/gc" "$work/gc.err")"
[ ! -e "$ALLOCINFO_STORE_DIR/allocinfo-$killed" ] || fail "allocinfo --gc left the store of $killed"
grep -q -x -F "removed $ALLOCINFO_STORE_DIR/allocinfo-$killed" "$work/gc" ||
	fail "allocinfo --gc did not name the store of $killed: $(cat "$work/gc")"

[ -d "$pins/$live" ] || fail "allocinfo --gc removed the pins of the live process $live"
cat "$pins/$live/allocinfo" >"$work/live_iter" || fail "cannot read $pins/$live/allocinfo"
expect_subject_rows "$work/live_iter"
finish "$live"
[ ! -e "$pins/$live" ] || fail "pins of $live left after a normal exit"
exit 0
