#!/bin/sh
# SPDX-License-Identifier: MIT
# bpftool on a BPF-backed process's pinned maps: named fields (bytes, calls; file,
# line, func, module, flags, via, allocator; the meta map's), and, while the process is stopped, the
# per-tag sums over CPUs of the counters map, named by the tags map, are exactly the
# process's own report.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require

start wait own ALLOCINFO_STORE=bpf
kill -STOP "$pid"
d=$pins/$pid
for m in counters tags meta allocinfo; do
	[ -e "$d/$m" ] || fail "no pin $d/$m"
done
[ -f "$ALLOCINFO_STORE_DIR/allocinfo-$pid" ] || fail "no store file for $pid"

# meta: whose maps these are.
bpftool -j map dump pinned "$d/meta" >"$work/meta.json" || fail "bpftool map dump $d/meta"
grep -q "\"formatted\":{\"key\":0,\"value\":{\"pid\":$pid,\"nr_cpus\":[1-9][0-9]*,\"tag_capacity\":[1-9][0-9]*,\"version\":2,\"start_time\":[1-9][0-9]*,\"store\":\"$ALLOCINFO_STORE_DIR/allocinfo-$pid\"}}" \
	"$work/meta.json" || fail "meta map: $(cat "$work/meta.json")"
cap=$(grep -o '"tag_capacity":[0-9]*' "$work/meta.json" | cut -d: -f2)

# counters: {bytes, calls} per (cpu, slot), key cpu * capacity + slot.
bpftool -j map dump pinned "$d/counters" >"$work/counters.json" ||
	fail "bpftool map dump $d/counters"
grep -o '"formatted":{"key":[0-9]*,"value":{"bytes":-\{0,1\}[0-9]*,"calls":-\{0,1\}[0-9]*}}' \
	"$work/counters.json" | tr -c '0-9\n-' ' ' >"$work/counters"
[ -s "$work/counters" ] || fail "counters map without fields bytes and calls"
awk -v cap="$cap" '{ s = $1 % cap; b[s] += $2; c[s] += $3 }
	END { for (s in b) print s, b[s], c[s] }' "$work/counters" >"$work/sums"

# tags: the names of the slots.
bpftool -j map dump pinned "$d/tags" >"$work/tags.json" || fail "bpftool map dump $d/tags"
grep -o '"formatted":{"key":[0-9]*,"value":{"file":"[^"]*","line":[0-9]*,"func":"[^"]*","module":"[^"]*","flags":[0-9]*,"via":"[^"]*","allocator":"[^"]*"}}' \
	"$work/tags.json" |
	sed 's/^"formatted":{"key":\([0-9]*\),"value":{"file":"\([^"]*\)","line":\([0-9]*\),"func":"\([^"]*\)","module":"\([^"]*\)","flags":\([0-9]*\),"via":"\([^"]*\)","allocator":"\([^"]*\)"}}$/\1|\2|\3|\4|\5|\6|\7|\8/' \
	>"$work/tags"
[ -s "$work/tags" ] || fail "tags map without fields file, line, func, module, flags, via, allocator"

# A report from the maps, by the readers' rules: static tags always, dynamic and
# overflow tags while nonzero, unloaded ones while nonzero and marked.
{
	echo "allocinfo - version: 2.0"
	echo "#     <size>  <calls> <tag info>"
	awk -F'|' -v sums="$work/sums" '
	BEGIN { while ((getline l < sums) > 0) { split(l, x, " "); b[x[1]] = x[2]; c[x[1]] = x[3] } }
	{
		used = $6 % 2; dynamic = int($6 / 2) % 2; unloaded = int($6 / 4) % 2
		overflow = int($6 / 32) % 2
		bytes = b[$1] + 0; calls = c[$1] + 0
		if (!used || (bytes == 0 && calls == 0 && (dynamic || unloaded || overflow)))
			next
		printf "%12d %8d %s:%d [%s] func:%s%s%s%s \n", bytes < 0 ? 0 : bytes, calls < 0 ? 0 : calls,
			$2, $3, $5, $4, $7 != "" ? " via:" $7 : "", $8 != "" ? " allocator:" $8 : "",
			unloaded ? " unloaded:yes" : ""
	}' "$work/tags"
} >"$work/maps"

expect_subject_rows "$work/maps"
expect_subject_rows "$work/own"
same_rows "$work/maps" "$work/own" || fail "the maps and the process's own report differ"
finish "$pid"
[ ! -e "$d" ] || fail "$d left after exit"
exit 0
