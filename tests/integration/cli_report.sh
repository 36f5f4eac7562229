#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo's report: two processes of one program summed exactly, one of another
# program apart; -p shows one process alone; --sort, --top, --human; a caller tag
# symbolized; the lines of a process that exits go.
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
start b cli_prog 4
start c cli_other 5
send a 3 grow
send a 3 untagged
send c 5 shrink
f=$a_file

# Everything, summed: equal sites of a and b on one line, cli_other apart.
allocinfo > "$tmp/all" 2> "$tmp/err" || fail "allocinfo exited with $?"
[ -s "$tmp/err" ] && { cat "$tmp/err"; fail "unexpected messages"; }
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_other initial
	row 1024 1 "$f" $LINE_CALLOC cli_other initial
	row 0 0 "$f" $LINE_STRDUP cli_other initial
	row 0 0 "$f" $LINE_GROW cli_other grow
	row 600 6 "$f" $LINE_MALLOC cli_prog initial
	row 2048 2 "$f" $LINE_CALLOC cli_prog initial
	row 12 2 "$f" $LINE_STRDUP cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
} > "$tmp/want"
ours < "$tmp/all" > "$tmp/got"
same "$tmp/want" "$tmp/got"
[ "$(sed -n 2p "$tmp/all")" = "#     <size>  <calls> <tag info>" ] || fail "header"

# One process alone.
allocinfo -p "$a_pid" | ours > "$tmp/got" || fail "-p"
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_prog initial
	row 1024 1 "$f" $LINE_CALLOC cli_prog initial
	row 6 1 "$f" $LINE_STRDUP cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

allocinfo --pid "$c_pid" | ours > "$tmp/got" || fail "--pid"
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_other initial
	row 1024 1 "$f" $LINE_CALLOC cli_other initial
	row 0 0 "$f" $LINE_STRDUP cli_other initial
	row 0 0 "$f" $LINE_GROW cli_other grow
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

# --sort bytes: largest first, ties in site order.
allocinfo --sort bytes | ours > "$tmp/got" || fail "--sort bytes"
{
	header
	row 2048 2 "$f" $LINE_CALLOC cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 1024 1 "$f" $LINE_CALLOC cli_other initial
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
	row 600 6 "$f" $LINE_MALLOC cli_prog initial
	row 300 3 "$f" $LINE_MALLOC cli_other initial
	row 12 2 "$f" $LINE_STRDUP cli_prog initial
	row 0 0 "$f" $LINE_STRDUP cli_other initial
	row 0 0 "$f" $LINE_GROW cli_other grow
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

allocinfo --sort calls | ours > "$tmp/got" || fail "--sort calls"
{
	header
	row 600 6 "$f" $LINE_MALLOC cli_prog initial
	row 300 3 "$f" $LINE_MALLOC cli_other initial
	row 2048 2 "$f" $LINE_CALLOC cli_prog initial
	row 12 2 "$f" $LINE_STRDUP cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 1024 1 "$f" $LINE_CALLOC cli_other initial
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
	row 0 0 "$f" $LINE_STRDUP cli_other initial
	row 0 0 "$f" $LINE_GROW cli_other grow
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

allocinfo --sort site > "$tmp/got" || fail "--sort site"
same "$tmp/all" "$tmp/got"

# --top N: the first N lines of the same order.
allocinfo --sort bytes > "$tmp/sorted" || fail "--sort bytes"
allocinfo --sort bytes --top 3 > "$tmp/got" || fail "--top"
head -n 5 "$tmp/sorted" > "$tmp/want"
same "$tmp/want" "$tmp/got"
allocinfo -p "$c_pid" --top 1 | ours > "$tmp/got"
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_other initial
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

# --human: one token, in the same 12 columns.
allocinfo -p "$a_pid" --human | ours > "$tmp/got" || fail "--human"
{
	header
	row 300B 3 "$f" $LINE_MALLOC cli_prog initial
	row 1.00KiB 1 "$f" $LINE_CALLOC cli_prog initial
	row 6B 1 "$f" $LINE_STRDUP cli_prog initial
	row 1.95KiB 2 "$f" $LINE_GROW cli_prog grow
	row 777B 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

# Every line of the full report parses: bytes, calls, file:line, [module], func:.
sed 1,2d "$tmp/all" | grep -v -E '^ {0,11}[0-9]+ +[0-9]+ [^ ]+:[0-9]+( \[[^] ]+\])? func:[^ ]+( [a-z]+:[^ ]+)* $' &&
	fail "lines above do not parse"

# b exits: its lines go, a's stay.
echo exit >&4
wait_pid=$b_pid
n=0
while [ -e "$store_dir/allocinfo-$wait_pid" ] && [ $n -lt 400 ]; do
	sleep 0.025
	n=$((n + 1))
done
[ -e "$store_dir/allocinfo-$wait_pid" ] && fail "b's store stays after its exit"
allocinfo | ours > "$tmp/got" || fail "allocinfo"
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_other initial
	row 1024 1 "$f" $LINE_CALLOC cli_other initial
	row 0 0 "$f" $LINE_STRDUP cli_other initial
	row 0 0 "$f" $LINE_GROW cli_other grow
	row 300 3 "$f" $LINE_MALLOC cli_prog initial
	row 1024 1 "$f" $LINE_CALLOC cli_prog initial
	row 6 1 "$f" $LINE_STRDUP cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

# -p of a process that is gone (its store removed at exit), or was never
# instrumented: exit status 1, and which of the two it is. (b removed its store in
# its exit handlers; it is gone once reaped.)
wait "$b_pid"
allocinfo -p "$b_pid" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 1 ] || fail "-p of an exited process should exit with 1"
[ "$(cat "$tmp/err")" = "allocinfo: process $b_pid: no such process" ] ||
	fail "-p of an exited process says: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "output for an exited process"
allocinfo -p $$ > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "-p of an uninstrumented process should exit with 1"
[ "$(cat "$tmp/err")" = "allocinfo: $store_dir/allocinfo-$$: no store (process $$ is not instrumented, or publishes no store)" ] ||
	fail "-p of an uninstrumented process says: $(cat "$tmp/err")"
echo "ok"
