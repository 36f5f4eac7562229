#!/bin/bash
# SPDX-License-Identifier: MIT
# The "process" rows of make bench: what the library adds to a process's start (exec
# of /bin/true) and to a fork (fork, _exit, wait), plain against LD_PRELOAD with each
# store, and to the start of a program with 10,000 call sites (report_10000 start,
# built with the header, against its build without it: every tag is registered at
# start), measured in the same run, interleaved, median of the repetitions. Prints
# microseconds per operation, the difference and the ratio to plain: wall time, and
# CPU time (of the process and its children: on a busy machine the steadier figure).
# Options: --quick (fewer operations), --reps N; --memory (bench.sh's) skips it.
set -u
: "${top_builddir:?run through make bench}"
SPAWN=$top_builddir/tests/benchmark/spawn
LIB=$top_builddir/lib/.libs/liballocinfo.so
SITES=$top_builddir/tests/benchmark/report_10000
for f in "$SPAWN" "$LIB" "$SITES" "${SITES}_plain"; do
	[ -e "$f" ] || { echo "process_cost.sh: $f is not built (make bench builds it)" >&2; exit 1; }
done
reps=5
ops=300
while [ $# -gt 0 ]; do
	case $1 in
	--quick) reps=3; ops=100 ;;
	--reps) reps=$2; shift ;;
	--memory) exit 0 ;;	# bench.sh's memory rows only: these are times
	*) ;;	# bench.sh's other options
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

declare -A wall cpu
# one MODE VARIANT: "WALL CPU" microseconds per operation.
one() {
	local line
	if [ "$1" = sites ]; then	# the program with 10,000 call sites, built twice
		if [ "$2" = plain ]; then
			line=$(SPAWN_PROGRAM=${SITES}_plain SPAWN_ARG=start "$SPAWN" exec "$ops")
		else
			line=$(ALLOCINFO_STORE=$2 SPAWN_PROGRAM=$SITES SPAWN_ARG=start "$SPAWN" exec "$ops")
		fi
	elif [ "$2" = plain ]; then
		line=$("$SPAWN" "$1" "$ops")
	elif [ "$1" = exec ]; then	# a plain parent, an instrumented /bin/true
		line=$(ALLOCINFO_STORE=$2 SPAWN_PRELOAD=$LIB "$SPAWN" "$1" "$ops")
	else				# an instrumented parent forks
		line=$(ALLOCINFO_STORE=$2 LD_PRELOAD=$LIB "$SPAWN" "$1" "$ops")
	fi
	sed -n 's/.*wall_ns_per_op=\([0-9.]*\) cpu_ns_per_op=\([0-9.]*\).*/\1 \2/p' <<<"$line" |
		awk '{ printf "%.1f %.1f\n", $1 / 1000, $2 / 1000 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

modes_variants() {
	case $1 in
	sites) echo "plain shm" ;;
	*) echo "$variants" ;;
	esac
}
for mode in exec fork sites; do
	for ((r = 0; r < reps; r++)); do
		for v in $(modes_variants "$mode"); do
			read -r w c < <(one "$mode" "$v")
			wall[$mode|$v]+="$w"$'\n'
			cpu[$mode|$v]+="$c"$'\n'
		done
	done
done

echo
echo "process start and fork (microseconds per operation, median of $reps x $ops)"
printf '%-26s %9s %9s %7s   %9s %9s %7s\n' row "wall us" "+us" ratio "cpu us" "+us" ratio
for mode in exec fork sites; do
	case $mode in
	exec) name="exec /bin/true" ;;
	fork) name="fork+_exit+wait" ;;
	sites) name="start, 10,000 sites" ;;
	esac
	bw=$(printf '%s' "${wall[$mode|plain]}" | grep . | median)
	bc=$(printf '%s' "${cpu[$mode|plain]}" | grep . | median)
	for v in $(modes_variants "$mode"); do
		mw=$(printf '%s' "${wall[$mode|$v]}" | grep . | median)
		mc=$(printf '%s' "${cpu[$mode|$v]}" | grep . | median)
		awk -v n="$name ($v)" -v mw="$mw" -v bw="$bw" -v mc="$mc" -v bc="$bc" 'BEGIN {
			printf "%-26s %9.1f %+9.1f %6.2fx   %9.1f %+9.1f %6.2fx\n",
				n, mw, mw - bw, mw / bw, mc, mc - bc, mc / bc }'
	done
done
