#!/bin/sh
# SPDX-License-Identifier: MIT
# A reader that may not map the counters map copies the counters out with batch
# lookups instead, and reports the same. The kernel maps a BPF map only through a
# shared mapping, which it refuses on a read-only descriptor; readers then open the
# pin again read-write. Here the pins are made read-only for their owner and the
# reader runs as root without CAP_DAC_OVERRIDE, so that second open fails.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require
command -v setpriv >/dev/null || skip "no setpriv"
command -v strace >/dev/null || skip "no strace"

start wait own ALLOCINFO_STORE=bpf
kill -STOP "$pid"
allocinfo -p "$pid" >"$work/mapped" 2>"$work/mapped.err" ||
	fail "allocinfo -p $pid: $(cat "$work/mapped.err")"
expect_subject_rows "$work/mapped"

chmod 0400 "$pins/$pid"/*
no_override="setpriv --bounding-set=-dac_override,-dac_read_search"
# The precondition: such a reader cannot open the counters pin read-write.
if $no_override bpftool map show pinned "$pins/$pid/counters" >/dev/null 2>&1; then
	fail "a read-write open of a read-only pin succeeded without CAP_DAC_OVERRIDE"
fi

strace -f -qq -o "$work/trace" -e trace=bpf $no_override allocinfo -p "$pid" \
	>"$work/copied" 2>"$work/copied.err" ||
	fail "allocinfo -p $pid without CAP_DAC_OVERRIDE: $(cat "$work/copied.err")"
[ ! -s "$work/copied.err" ] || fail "allocinfo -p $pid said: $(cat "$work/copied.err")"
grep -q 'BPF_MAP_LOOKUP_BATCH' "$work/trace" ||
	fail "the counters were not copied with batch lookups: $(grep -c . "$work/trace") bpf calls"
cmp -s "$work/mapped" "$work/copied" || {
	diff "$work/mapped" "$work/copied"
	fail "the report read with batch lookups differs from the mapped one"
}

finish "$pid"
exit 0
