#!/bin/sh
# SPDX-License-Identifier: MIT
# fork of a BPF-backed process: the child gets maps and pins of its own, starting
# from a copy of the parent's counters; the parent's stay as they were.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require

start fork own ALLOCINFO_STORE=bpf
parent=$pid
wait_file "$work/own.child"
child=$(pgrep -P "$parent" -x bpf_prog) || fail "no child of $parent"
pids="$pids $child"
[ -d "$pins/$parent" ] || fail "no pins for the parent $parent"
[ -d "$pins/$child" ] || fail "no pins for the child $child"

cat "$pins/$parent/allocinfo" >"$work/parent_iter" || fail "cannot read the parent's iterator"
cat "$pins/$child/allocinfo" >"$work/child_iter" || fail "cannot read the child's iterator"
expect_subject_rows "$work/parent_iter"
expect_subject_rows "$work/child_iter"
expect_row "$work/child_iter" 2000 1 93
expect_row "$work/parent_iter" 0 0 93	# the child's line, idle in the parent
same_rows "$work/child_iter" "$work/own.child" || fail "the child's iterator and its own report differ"
bpftool -j map dump pinned "$pins/$child/meta" | grep -q "\"pid\":$child," ||
	fail "the child's meta map does not name it"

kill -USR1 "$child"
finish "$parent"
[ ! -e "$pins/$child" ] || fail "pins of the child $child left after its exit"
[ ! -e "$pins/$parent" ] || fail "pins of the parent $parent left after its exit"
exit 0
