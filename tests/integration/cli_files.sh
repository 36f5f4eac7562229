#!/bin/sh
# SPDX-License-Identifier: MIT
# Every file allocinfo reads is bounded: --diff of /dev/zero, of a file that is not
# a snapshot and of a snapshot larger than 64 MiB each get one clear line (exit
# status 1) at once and in little memory; --diff still reads a snapshot from a
# pipe; a symbol cache that is a FIFO, or larger than 64 MiB, is ignored without
# blocking.
. "$top_srcdir/tests/integration/cli_lib.sh"

# limit_memory KB: ulimit -v, but for a sanitizer build (its shadow memory needs
# terabytes of address space).
limit_memory() {
	[ "${ALLOCINFO_SANITIZER:-no}" != no ] || ulimit -v "$1"
}

start a cli_prog 3

# diff_fails FILE WHY: --diff FILE exits 1 within 10 s and 256 MiB, saying WHY.
diff_fails() {
	( limit_memory 262144; exec timeout 10 allocinfo --diff "$1" ) > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 1 ] || fail "--diff $1 exited with $rc: $(head -c 300 "$tmp/err")"
	echo "allocinfo: $1: $2" > "$tmp/want"
	same "$tmp/want" "$tmp/err"
	[ ! -s "$tmp/out" ] || fail "--diff $1 printed something"
}
diff_fails /dev/zero "not an allocinfo snapshot (made by allocinfo --save)"
head -c 100000 /dev/urandom > "$tmp/random"
diff_fails "$tmp/random" "not an allocinfo snapshot (made by allocinfo --save)"
printf 'allocinfo-snapshot\t1\n' > "$tmp/huge"
truncate -s 100M "$tmp/huge"
diff_fails "$tmp/huge" "larger than 64 MiB: not a snapshot made by allocinfo --save"

# A snapshot through a pipe.
allocinfo --save - | timeout 10 allocinfo --diff /dev/stdin > "$tmp/out" 2> "$tmp/err" ||
	fail "--diff from a pipe: $(cat "$tmp/err")"
header > "$tmp/want"
same "$tmp/want" "$tmp/out"

# A symbol cache that is a FIFO, then one of 100 MB: ignored.
mkdir -p "$tmp/xdg/allocinfo" && chmod 700 "$tmp/xdg" "$tmp/xdg/allocinfo"
mkfifo "$tmp/xdg/allocinfo/symbols"
XDG_CACHE_HOME=$tmp/xdg timeout 10 allocinfo -p "$a_pid" > "$tmp/out" 2> "$tmp/err" ||
	fail "allocinfo with a FIFO as symbol cache: $?"
[ -p "$tmp/xdg/allocinfo/symbols" ] || [ -f "$tmp/xdg/allocinfo/symbols" ] || fail "cache gone"
rm -f "$tmp/xdg/allocinfo/symbols"
truncate -s 100M "$tmp/xdg/allocinfo/symbols"
( limit_memory 262144; XDG_CACHE_HOME=$tmp/xdg exec timeout 10 allocinfo -p "$a_pid" ) \
	> "$tmp/out2" 2> "$tmp/err" || fail "allocinfo with a 100 MB symbol cache: $?"
same "$tmp/out" "$tmp/out2"
echo ok
