#!/bin/sh
# SPDX-License-Identifier: MIT
# The tokens in the BPF store: a row through a declared wrapper (" via:") and one of
# an allocator of the program's own (" allocator:") carry their tokens in the tags
# map (bpftool shows the via and allocator fields) and in the report iterator's
# lines, which equal those of allocinfo -p once it has named the caller tags.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require

start tokens own ALLOCINFO_STORE=bpf ALLOCINFO_WRAPPERS=bpf_xmalloc
kill -STOP "$pid"
d=$pins/$pid
expect_row_of() {	# FILE BYTES CALLS LINE FUNC TOKEN
	row=$(printf '%12s %8s ' "$2" "$3")
	grep -q -x -E "$row[^ ]*bpf_prog\.c:$4 \[bpf_prog\] func:$5 $6 " "$1" ||
		fail "$1 has no row \"$row...bpf_prog.c:$4 [bpf_prog] func:$5 $6\""
}
expect_row_of "$work/own" 300 1 120 tokens via:bpf_xmalloc
expect_row_of "$work/own" 200 1 121 tokens allocator:arena

# The tags map's entries of both caller tags: unnamed, with their tokens.
bpftool -j map dump pinned "$d/tags" >"$work/tags.json" || fail "bpftool map dump $d/tags"
for tokens in '"via":"bpf_xmalloc","allocator":""' '"via":"","allocator":"arena"'; do
	n=$(grep -o "\"module\":\"bpf_prog\",\"flags\":3,$tokens}" "$work/tags.json" | wc -l)
	[ "$n" = 1 ] || fail "tags map: $n entries of a caller tag with $tokens: $(cat "$work/tags.json")"
done
# Every entry has both fields; only those two are set.
n=$(grep -o '"via":"[^"]*","allocator":"[^"]*"}' "$work/tags.json" | grep -c -v '"via":"","allocator":""}')
[ "$n" = 2 ] || fail "tags map: $n entries with a token, expected 2"

# The iterator, before and after allocinfo -p names the caller tags.
it=$d/allocinfo
cat "$it" >"$work/iter" || fail "cannot read $it"
grep -q -x -E '         300        1 \?\?:0 \[bpf_prog\] func:0x[0-9a-f]+ via:bpf_xmalloc ' "$work/iter" ||
	fail "iterator: no unnamed via: row: $(cat "$work/iter")"
grep -q -x -E '         200        1 \?\?:0 \[bpf_prog\] func:0x[0-9a-f]+ allocator:arena ' "$work/iter" ||
	fail "iterator: no unnamed allocator: row: $(cat "$work/iter")"
allocinfo -p "$pid" >"$work/cli" 2>"$work/cli.err" || fail "allocinfo -p $pid: $(cat "$work/cli.err")"
expect_row_of "$work/cli" 300 1 120 tokens via:bpf_xmalloc
expect_row_of "$work/cli" 200 1 121 tokens allocator:arena
cat "$it" >"$work/iter" || fail "cannot read $it"
rows "$work/iter" >"$work/rows_iter"
rows "$work/cli" >"$work/rows_cli"
if ! cmp -s "$work/rows_iter" "$work/rows_cli"; then
	diff "$work/rows_cli" "$work/rows_iter"
	fail "the iterator's lines differ from those of allocinfo -p $pid once named"
fi
expect_row_of "$work/iter" 300 1 120 tokens via:bpf_xmalloc
expect_row_of "$work/iter" 200 1 121 tokens allocator:arena
kill -CONT "$pid"
finish "$pid"
exit 0
