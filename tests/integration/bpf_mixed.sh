#!/bin/sh
# SPDX-License-Identifier: MIT
# A BPF-backed and a shm-backed process of the same program in one report: the
# readers read both, and sum their tags.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require

start wait bpf ALLOCINFO_STORE=bpf
a=$pid
start wait shm ALLOCINFO_STORE=shm
b=$pid
[ -d "$pins/$a" ] || fail "the BPF-backed process $a has no pins"
[ ! -e "$pins/$b" ] || fail "the shm-backed process $b has pins"

allocinfo -p "$a" >"$work/a" 2>"$work/a.err" || fail "allocinfo -p $a: $(cat "$work/a.err")"
allocinfo -p "$b" >"$work/b" 2>"$work/b.err" || fail "allocinfo -p $b: $(cat "$work/b.err")"
expect_subject_rows "$work/a"
expect_subject_rows "$work/b"

allocinfo >"$work/all" 2>"$work/all.err" || fail "allocinfo: $(cat "$work/all.err")"
expect_row "$work/all" 200 2 69
expect_row "$work/all" 240 6 71
expect_row "$work/all" 20 2 73
expect_row "$work/all" 0 0 74
finish "$a"
finish "$b"
exit 0
