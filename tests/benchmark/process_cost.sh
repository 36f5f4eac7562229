#!/bin/bash
# SPDX-License-Identifier: MIT
# The "process" rows of make bench: what the library adds to a process's start (exec
# of /bin/true) and to a fork (fork, _exit, wait), plain against LD_PRELOAD with each
# store, measured in the same run, interleaved, median of the repetitions. Prints
# microseconds per operation (wall), the difference and the ratio to plain.
# Options: --quick (fewer operations), --reps N.
set -u
: "${top_builddir:?run through make bench}"
SPAWN=$top_builddir/tests/benchmark/spawn
LIB=$top_builddir/lib/.libs/liballocinfo.so
reps=5
ops=300
while [ $# -gt 0 ]; do
	case $1 in
	--quick) reps=3; ops=100 ;;
	--reps) reps=$2; shift ;;
	*) ;;	# bench.sh's options
	esac
	shift
done
unset LD_PRELOAD ALLOCINFO ALLOCINFO_STORE ALLOCINFO_STORE_DIR ALLOCINFO_DEBUG

variants="plain shm none"
# The BPF store where this machine allows one (root, bpffs, a build with it).
if [ -z "$(ALLOCINFO_STORE=bpf LD_PRELOAD=$LIB /bin/true 2>&1)" ] &&
	[ "$(id -u)" = 0 ]; then
	variants="$variants bpf"
fi

declare -A samples
# one MODE VARIANT: microseconds per operation.
one() {
	local line
	if [ "$2" = plain ]; then
		line=$("$SPAWN" "$1" "$ops")
	else
		line=$(ALLOCINFO_STORE=$2 LD_PRELOAD=$LIB "$SPAWN" "$1" "$ops")
	fi
	sed -n 's/.*wall_ns_per_op=\([0-9.]*\).*/\1/p' <<<"$line" | awk '{ printf "%.1f\n", $1 / 1000 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for mode in exec fork; do
	for ((r = 0; r < reps; r++)); do
		for v in $variants; do
			samples[$mode|$v]+="$(one "$mode" "$v")"$'\n'
		done
	done
done

echo
echo "process start and fork (wall microseconds per operation, median of $reps x $ops)"
printf '%-28s %10s %10s %8s\n' row us "+us" ratio
for mode in exec fork; do
	if [ "$mode" = exec ]; then name="exec /bin/true"; else name="fork+_exit+wait"; fi
	base=$(printf '%s' "${samples[$mode|plain]}" | grep . | median)
	for v in $variants; do
		m=$(printf '%s' "${samples[$mode|$v]}" | grep . | median)
		awk -v n="$name ($v)" -v m="$m" -v b="$base" 'BEGIN {
			printf "%-28s %10.1f %+10.1f %7.2fx\n", n, m, m - b, m / b }'
	done
done
