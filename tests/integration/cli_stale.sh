#!/bin/sh
# SPDX-License-Identifier: MIT
# Stores whose process is gone: a process killed with kill -9 leaves its store, which
# the next read ignores and allocinfo --gc removes. So are stores of a reused pid, of
# a process that exec'd another program, and stores marked exited.
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
start b cli_prog 4
f=$a_file
send b 4 grow

kill -9 "$b_pid"
wait "$b_pid" 2> /dev/null
[ -e "$store_dir/allocinfo-$b_pid" ] || fail "kill -9 should leave the store behind"

# Live processes that did not write the stores claiming them.
sleep 60 &
s1=$!
sleep 60 &
s2=$!
sleep 60 &
s3=$!
bg_pids="$bg_pids $s1 $s2 $s3"
"$progs/cli_forge" reused "$store_dir/allocinfo-$s1" "$s1" || exit 99
"$progs/cli_forge" exited "$store_dir/allocinfo-$s2" "$s2" || exit 99
"$progs/cli_forge" otherexe "$store_dir/allocinfo-$s3" "$s3" || exit 99

# The next read shows a alone, and says nothing of stale stores.
allocinfo > "$tmp/all" 2> "$tmp/err" || fail "allocinfo"
[ -s "$tmp/err" ] && { cat "$tmp/err"; fail "unexpected messages"; }
ours < "$tmp/all" > "$tmp/got"
{
	header
	row 300 3 "$f" $LINE_MALLOC cli_prog initial
	row 1024 1 "$f" $LINE_CALLOC cli_prog initial
	row 6 1 "$f" $LINE_STRDUP cli_prog initial
	row 0 0 "$f" $LINE_GROW cli_prog grow
} > "$tmp/want_a"
same "$tmp/want_a" "$tmp/got"
grep -q forged "$tmp/all" && fail "a stale forged store was read"

allocinfo -p "$b_pid" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "-p of a killed process should exit with 1"
grep -qx "allocinfo: $store_dir/allocinfo-$b_pid: process $b_pid is gone" "$tmp/err" ||
	fail "$(cat "$tmp/err")"
allocinfo -p "$s1" > /dev/null 2> "$tmp/err"
grep -qx "allocinfo: $store_dir/allocinfo-$s1: pid $s1 was reused by another process" \
	"$tmp/err" || fail "$(cat "$tmp/err")"
allocinfo -p "$s2" > /dev/null 2> "$tmp/err"
grep -qx "allocinfo: $store_dir/allocinfo-$s2: process $s2 has exited" "$tmp/err" ||
	fail "$(cat "$tmp/err")"
allocinfo -p "$s3" > /dev/null 2> "$tmp/err"
grep -qx "allocinfo: $store_dir/allocinfo-$s3: process $s3 now runs another program" \
	"$tmp/err" || fail "$(cat "$tmp/err")"

# --gc removes exactly the stale stores, and says so. (It also removes BPF pins of
# dead processes, machine-wide: other tests' lines are left out here.)
gc() {
	allocinfo --gc > "$tmp/gc.all" 2> "$tmp/err.all" || fail "--gc"
	grep -v '^removed /sys/fs/bpf/' "$tmp/gc.all" > "$tmp/gc"
	grep -v '^allocinfo: /sys/fs/bpf/' "$tmp/err.all" > "$tmp/err"
}
gc
[ -s "$tmp/err" ] && { cat "$tmp/err"; fail "unexpected messages"; }
for p in "$b_pid" "$s1" "$s2" "$s3"; do
	echo "removed $store_dir/allocinfo-$p"
done | sort > "$tmp/want"
sort "$tmp/gc" > "$tmp/got"
same "$tmp/want" "$tmp/got"
for p in "$b_pid" "$s1" "$s2" "$s3"; do
	[ -e "$store_dir/allocinfo-$p" ] && fail "allocinfo-$p is still there"
done
[ -e "$store_dir/allocinfo-$a_pid" ] || fail "--gc removed a live store"
gc
[ -s "$tmp/gc" ] && fail "nothing left to remove: $(cat "$tmp/gc")"
allocinfo | ours > "$tmp/got" || fail "allocinfo after --gc"
same "$tmp/want_a" "$tmp/got"

allocinfo --gc -p "$a_pid" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--gc -p is a usage error"
echo "ok"
