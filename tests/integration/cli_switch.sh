#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo -p PID --disable stops counting in that process (its allocations are not
# counted) and --enable resumes it; other processes are left alone. --status and
# the JSON of one process say whether it counts.
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
start b cli_prog 4
f=$a_file

# The switch is the header's `enabled` word (offset 96 in store format version 1).
enabled() {
	od -An -t u4 -j 96 -N 4 "$store_dir/allocinfo-$1" | tr -d ' '
}
[ "$(enabled "$a_pid")" = 1 ] || fail "a starts enabled"

allocinfo -p "$a_pid" --disable > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "--disable"; }
[ -s "$tmp/out" ] && fail "--disable prints nothing"
[ "$(enabled "$a_pid")" = 0 ] || fail "the switch is still on"
[ "$(enabled "$b_pid")" = 1 ] || fail "b was switched too"
send a 3 grow
send b 4 grow
allocinfo -p "$a_pid" | grep " func:grow \$" > "$tmp/got"
row 0 0 "$f" $LINE_GROW cli_prog grow > "$tmp/want"
same "$tmp/want" "$tmp/got"

# Whether a process counts: --status, and the JSON report of one process. (The
# store is in BPF maps when the processes could create them.)
store_of() { if [ -d "/sys/fs/bpf/allocinfo/$1" ]; then echo bpf; else echo shm; fi; }
allocinfo --status > "$tmp/got" || fail "--status"
printf 'pid:%d comm:cli_prog counting:%s store:%s\n' "$a_pid" off "$(store_of "$a_pid")" \
	"$b_pid" on "$(store_of "$b_pid")" | sort -t: -k2n > "$tmp/want"
same "$tmp/want" "$tmp/got"
allocinfo -p "$b_pid" --status > "$tmp/got" || fail "-p --status"
printf 'pid:%d comm:cli_prog counting:on store:%s\n' "$b_pid" "$(store_of "$b_pid")" > "$tmp/want"
same "$tmp/want" "$tmp/got"
allocinfo -p "$a_pid" --json | head -n 1 > "$tmp/got"
printf '{"version":"2.0","pid":%d,"counting":false,"sites":[\n' "$a_pid" > "$tmp/want"
same "$tmp/want" "$tmp/got"
allocinfo -p "$b_pid" --json | head -n 1 > "$tmp/got"
printf '{"version":"2.0","pid":%d,"counting":true,"sites":[\n' "$b_pid" > "$tmp/want"
same "$tmp/want" "$tmp/got"
allocinfo --json | head -n 1 | grep -q counting && fail "counting in a report of several processes"
allocinfo --status --json > /dev/null 2>&1
[ $? -eq 2 ] || fail "--status --json"
allocinfo -p "$b_pid" | grep " func:grow \$" > "$tmp/got"
row 2000 2 "$f" $LINE_GROW cli_prog grow > "$tmp/want"
same "$tmp/want" "$tmp/got"

# Disabling twice is harmless; enabling resumes counting from there.
allocinfo -p "$a_pid" --disable || fail "--disable again"
allocinfo --pid "$a_pid" --enable || fail "--enable"
[ "$(enabled "$a_pid")" = 1 ] || fail "the switch is still off"
send a 3 grow
allocinfo -p "$a_pid" | ours > "$tmp/got"
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_prog initial
	row 1024 1 "$f" $LINE_CALLOC cli_prog initial
	row 6 1 "$f" $LINE_STRDUP cli_prog initial
	row 2000 2 "$f" $LINE_GROW cli_prog grow
} > "$tmp/want"
same "$tmp/want" "$tmp/got"

# Usage errors exit with 2, a process without a store with 1.
allocinfo --enable > /dev/null 2>&1
[ $? -eq 2 ] || fail "--enable without -p"
allocinfo -p "$a_pid" --enable --disable > /dev/null 2>&1
[ $? -eq 2 ] || fail "--enable --disable"
allocinfo -p "$a_pid" --enable --json > /dev/null 2>&1
[ $? -eq 2 ] || fail "--enable --json"
allocinfo -p $$ --disable > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "--disable of an uninstrumented process"
grep -q "^allocinfo: $store_dir/allocinfo-$$: no store" "$tmp/err" || fail "$(cat "$tmp/err")"
echo "ok"
