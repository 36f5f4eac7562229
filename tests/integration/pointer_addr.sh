#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo -p PID --addr: the block holding an address of another process, at its
# start, inside and at its last byte, for a small, a large and an aligned block;
# freed blocks, one past the end, the stack and static data are in none
# (exit 1, one line); malformed uses are usage errors. --by allocator, and the
# allocator token in the report, JSON and Prometheus.
set -u
prog=$top_builddir/tests/integration/addr_prog
fifo=$(mktemp -u) && mkfifo "$fifo" || exit 99
out=$(mktemp) || exit 99
"$prog" <"$fifo" >"$out" &
pid=$!
exec 3>"$fifo"	# the program runs until this closes
trap 'exec 3>&-; wait $pid; rm -f "$fifo" "$out"' EXIT
for i in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
set -- $(cat "$out")
[ "$1" = pid ] || { echo "the program printed no addresses"; exit 1; }
small=$4 l_small=$5 big=$7 l_big=$8 aligned=${10} l_aligned=${11} freed=${13} stack=${15} static=${17}
l_pool=${20}
fail=0

hex() { printf '0x%x' $(($1)); }

# expect ADDR START OFFSET SIZE LINE
expect() {
	got=$(allocinfo -p $pid --addr "$1" 2>&1)
	want="$1: $3 bytes into $4 bytes at $2 from "
	tail="addr_prog.c:$5 [addr_prog] func:main allocator:malloc"
	case $got in
	"$want"*"$tail") ;;
	*) echo "--addr $1: expected '$want...$tail'"
	   echo "got: $got"; fail=1 ;;
	esac
}

# none ADDR: in no block
none() {
	got=$(allocinfo -p $pid --addr "$1" 2>&1) && { echo "--addr $1: found: $got"; fail=1; return; }
	[ "$got" = "allocinfo: $1 is not inside a live counted block of process $pid" ] ||
		{ echo "--addr $1: $got"; fail=1; }
}

expect "$small" "$small" 0 100 "$l_small"
expect "$(hex "$small + 57")" "$small" 57 100 "$l_small"
expect "$(hex "$small + 99")" "$small" 99 100 "$l_small"
none "$(hex "$small + 100")"
expect "$big" "$big" 0 5000 "$l_big"
expect "$(hex "$big + 4999")" "$big" 4999 5000 "$l_big"
none "$(hex "$big + 5000")"
expect "$aligned" "$aligned" 0 8192 "$l_aligned"
expect "$(hex "$aligned + 8000")" "$aligned" 8000 8192 "$l_aligned"
# A sanitizer's allocator keeps a freed block whole (quarantine), record and all.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] && none "$freed"
none "$stack"
none "$static"
none 0x10

# --by allocator: the pool's line exactly, and the malloc family's.
by=$(allocinfo -p $pid --by allocator)
printf '%s\n' "$by" | grep -Fx "         300        2 allocator:arena " >/dev/null ||
	{ echo "--by allocator: no exact arena line:"; printf '%s\n' "$by"; fail=1; }
printf '%s\n' "$by" | grep -E '^ +[0-9]+ +[0-9]+ allocator:malloc $' >/dev/null ||
	{ echo "--by allocator: no malloc line:"; printf '%s\n' "$by"; fail=1; }
[ "$(printf '%s\n' "$by" | sed -n 2p)" = "#     <size>  <calls> <allocator>" ] ||
	{ echo "--by allocator: header"; fail=1; }
# The token in the site report, JSON and Prometheus.
allocinfo -p $pid | grep -E "addr_prog\.c:$l_pool \[addr_prog\] func:main allocator:arena \$" >/dev/null ||
	{ echo "no allocator:arena token in the report"; fail=1; }
allocinfo -p $pid --json | grep -F '"allocator":"arena"' >/dev/null ||
	{ echo "no allocator in JSON"; fail=1; }
allocinfo -p $pid --prometheus | grep -F 'allocator="arena"' >/dev/null ||
	{ echo "no allocator label in Prometheus"; fail=1; }
allocinfo --by calls >/dev/null 2>&1; [ $? = 2 ] || { echo "--by calls: not a usage error"; fail=1; }

# Usage: needs -p, a hex address.
allocinfo --addr 0x10 >/dev/null 2>&1; [ $? = 2 ] || { echo "--addr without -p: not a usage error"; fail=1; }
allocinfo -p $pid --addr 1234 >/dev/null 2>&1; [ $? = 2 ] || { echo "--addr 1234: not a usage error"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
