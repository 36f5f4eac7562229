#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo --save then --diff: exactly the growth of each site, only changed sites,
# largest growth first; --watch repeats a report until --count or SIGINT.
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
start c cli_other 5
f=$a_file

allocinfo --save "$tmp/all.snap" > "$tmp/out" || fail "--save"
[ -s "$tmp/out" ] && fail "--save prints nothing"
allocinfo -p "$a_pid" --save "$tmp/a.snap" || fail "-p --save"
[ "$(head -n 1 "$tmp/a.snap")" = "$(printf 'allocinfo-snapshot\t1')" ] || fail "snapshot magic"
grep -qx "$(printf 'pid\t%s' "$a_pid")" "$tmp/a.snap" || fail "snapshot pid"
grep -qx "$(printf 'site\t300\t3\tcli_prog\t%s\t%s\tinitial\t0' "$f" $LINE_MALLOC)" \
	"$tmp/a.snap" || { cat "$tmp/a.snap"; fail "snapshot site"; }

# Nothing changed yet: a header alone.
allocinfo -p "$a_pid" --diff "$tmp/a.snap" > "$tmp/got" || fail "--diff"
header > "$tmp/want"
same "$tmp/want" "$tmp/got"

send a 3 grow
send a 3 shrink
send a 3 untagged
send c 5 grow

# Signed deltas; a new site (the caller tag) and a shrinking one included.
allocinfo -p "$a_pid" --diff "$tmp/a.snap" > "$tmp/got" 2> "$tmp/err" || fail "--diff"
[ -s "$tmp/err" ] && { cat "$tmp/err"; fail "unexpected messages"; }
{
	header
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
	row -6 -1 "$f" $LINE_STRDUP cli_prog initial
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

# All processes: c's growth too, sorted by bytes growth, ties in site order.
allocinfo --diff "$tmp/all.snap" | ours > "$tmp/got" || fail "--diff"
{
	header
	row 2000 2 "$f" $LINE_GROW cli_other grow
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
	row -6 -1 "$f" $LINE_STRDUP cli_prog initial
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

allocinfo -p "$a_pid" --diff "$tmp/a.snap" --sort site > "$tmp/got" || fail "--sort site"
{
	header
	row -6 -1 "$f" $LINE_STRDUP cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
	row 777 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

allocinfo -p "$a_pid" --diff "$tmp/a.snap" --human --top 2 > "$tmp/got" || fail "--human"
{
	header
	row 1.95KiB 2 "$f" $LINE_GROW cli_prog grow
	row 777B 1 "$f" $LINE_UNTAGGED cli_prog untagged_alloc
} > "$tmp/want"
same "$tmp/want" "$tmp/got"
allocinfo -p "$a_pid" --diff "$tmp/a.snap" --human --sort site --top 1 | sed 1,2d > "$tmp/got"
row -6B -1 "$f" $LINE_STRDUP cli_prog initial > "$tmp/want"
same "$tmp/want" "$tmp/got"

# A snapshot of one process compared with all of them: said on stderr.
allocinfo --diff "$tmp/a.snap" > /dev/null 2> "$tmp/err" || fail "--diff"
grep -q "^allocinfo: note: $tmp/a.snap was saved for process $a_pid" "$tmp/err" ||
	fail "no note: $(cat "$tmp/err")"

# Broken snapshots are refused with exit status 1.
sed '$d' "$tmp/a.snap" > "$tmp/trunc.snap"
allocinfo --diff "$tmp/trunc.snap" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "a truncated snapshot should be refused"
grep -q "^allocinfo: $tmp/trunc.snap: truncated" "$tmp/err" || fail "$(cat "$tmp/err")"
sed '1s/1$/9/' "$tmp/a.snap" > "$tmp/v9.snap"
allocinfo --diff "$tmp/v9.snap" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "version 9 should be refused"
grep -q "unsupported snapshot version '9'" "$tmp/err" || fail "$(cat "$tmp/err")"
printf 'allocinfo-snapshot\t1\nsite\tx\n' > "$tmp/bad.snap"
allocinfo --diff "$tmp/bad.snap" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "a bad record should be refused"
grep -q "^allocinfo: $tmp/bad.snap: line 2: " "$tmp/err" || fail "$(cat "$tmp/err")"
allocinfo --diff "$tmp/none.snap" > /dev/null 2>&1
[ $? -eq 1 ] || fail "a missing snapshot should exit with 1"

# --watch --count N: N reports, no screen clearing when not on a terminal.
allocinfo -p "$a_pid" --watch 0.1 --count 3 > "$tmp/watch" || fail "--watch"
[ "$(grep -c '^allocinfo - version: 2.0$' "$tmp/watch")" -eq 3 ] || fail "3 reports expected"
grep -q "$(printf '\033')" "$tmp/watch" && fail "escape sequences without a terminal"
allocinfo -p "$a_pid" --watch 0.1 --count 2 --diff "$tmp/a.snap" > "$tmp/watch" || fail "watch diff"
[ "$(grep -c " func:grow \$" "$tmp/watch")" -eq 2 ] || fail "2 diffs expected"

# On a terminal, each report starts by clearing the screen.
if command -v script > /dev/null; then
	script -qc "allocinfo -p $a_pid --watch 0.1 --count 2" /dev/null < /dev/null > "$tmp/tty" ||
		fail "--watch on a terminal"
	[ "$(grep -c "$(printf '\033\\[H\033\\[2Jallocinfo - version: 2.0')" "$tmp/tty")" -eq 2 ] ||
		{ od -c "$tmp/tty" | head; fail "no screen clearing on a terminal"; }
fi

# --watch until SIGINT: ends at once, exit status 0. A file of its own: the reports
# left in $tmp/watch above would let the signal go before the tool can take it (a
# background job starts with SIGINT ignored), and it would then run for ever.
allocinfo --watch 60 > "$tmp/watch-int" &
w=$!
wait_for "$tmp/watch-int" '^allocinfo - version' || fail "no first report"
kill -INT $w
wait $w
[ $? -eq 0 ] || fail "--watch should exit with 0 on SIGINT"
[ "$(grep -c '^allocinfo - version' "$tmp/watch-int")" -eq 1 ] || fail "one report expected"

# --watch -p of a process that exits: exit status 1.
allocinfo -p "$c_pid" --watch 0.1 > /dev/null 2> "$tmp/err" &
w=$!
sleep 0.2
echo exit >&5
wait $w
[ $? -eq 1 ] || fail "--watch -p should exit with 1 when the process is gone"
grep -q -E "^allocinfo: (.*allocinfo-$c_pid: |process $c_pid: no such process$)" "$tmp/err" ||
	fail "$(cat "$tmp/err")"
echo "ok"
