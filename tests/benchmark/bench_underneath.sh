#!/bin/bash
# SPDX-License-Identifier: MIT
# allocinfo on top of other allocators: each workload with jemalloc, tcmalloc and
# mimalloc underneath, against that allocator alone, in the same run. Called by
# `make bench` after bench.sh (top_builddir set); takes the same --quick and --reps.
#
# Columns, for allocator X (preloaded: the programs are built without it):
#   X alone    the baseline binary (no allocinfo) with LD_PRELOAD=X
#   tagged     the binary built with allocinfo.h, with LD_PRELOAD=X: X comes before
#              the library, whose calls are routed to it (GOT rewriting)
#   preload    the baseline binary with LD_PRELOAD="liballocinfo.so X": the
#              library comes first, X next
#   never      as tagged, with ALLOCINFO=never: no record, nothing routed
# Time is the median CPU time per operation (wall time for the two-thread
# producer/consumer), peak RSS the median of the runs' largest resident sets (read
# every 2 ms, bench.h); each as a ratio to X alone, with the ratio of the best runs
# in parentheses.
set -u

: "${top_builddir:?run through make bench}"
B=$top_builddir/tests/benchmark
LIB=$top_builddir/lib/.libs/liballocinfo.so
reps=7
scale=1
while [ $# -gt 0 ]; do
	case $1 in
	--quick) reps=3; scale=4 ;;
	--reps) reps=$2; shift ;;
	*) shift ;;	# bench.sh's other options
	esac
	shift
done
# Stores are memfds, as users get them: a store file on a disk filesystem costs
# each process milliseconds of page-cache work (user-guide.md).
unset ALLOCINFO_STORE_DIR LD_PRELOAD ALLOCINFO ALLOCINFO_DEBUG ALLOCINFO_HEAP

library() {
	/sbin/ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*$1 (.*) => //p" | head -n 1
}

# run VARIANT ALLOCATOR-PATH PROGRAM ARGS...: the program's result line
run() {
	local v=$1 lib=$2 prog=$3 pre mode=1
	shift 3
	case $v in
	alone) pre=$lib; prog=$B/${prog}_plain ;;
	tagged) pre=$lib; prog=$B/${prog}_tagged ;;
	preload) pre="$LIB $lib"; prog=$B/${prog}_plain ;;
	never) pre=$lib; prog=$B/${prog}_tagged; mode=never ;;
	esac
	local out
	out=$(LD_PRELOAD=$pre ALLOCINFO=$mode BENCH_RSS_POLL_MS=2 "$prog" "$@") || return 1
	grep '^wall_ns_per_op=' <<<"$out"
}

. "$(dirname "$0")/bench_lib.sh"

declare -A tim rss
variants="alone tagged preload never"
printf '%-34s %-10s %-16s%-16s%-16s%-16s%-16s%-16s\n' "workload over allocator" "X alone" \
	"time, tagged" "time, preload" "time, never" "RSS, tagged" "RSS, preload" "RSS, never"
printf '%s\n' "$(printf '%.0s-' {1..142})"
for pair in jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4 mimalloc:libmimalloc.so.2; do
	name=${pair%%:*} lib=$(library "${pair#*:}")
	if [ -z "$lib" ]; then
		echo "(${pair#*:} is not installed: no rows)"
		continue
	fi
	for w in "pairs 64 1 $((5000000 / scale))" "pairs 64 1 $((2500000 / scale)) realloc" \
		 "pairs 64 1 $((5000000 / scale)) own" "pairs 64 1 $((2500000 / scale)) own-realloc" \
		 "ctree $((40 / scale))" "cxx $((40 / scale))" "prodcons $((2000000 / scale))"; do
		set -- $w
		prog=$1
		shift
		metric=cpu_ns_per_op
		[ "$prog" = prodcons ] && metric=wall_ns_per_op
		echo "  $name: $prog" >&2
		vs=($variants)
		for ((r = 0; r < reps; r++)); do
			for ((i = 0; i < ${#vs[@]}; i++)); do
				v=${vs[(i + r) % ${#vs[@]}]}
				line=$(run "$v" "$lib" "$prog" "$@") || { echo "$prog ($v over $name) failed" >&2; continue; }
				tim[$v]+="$(field $metric "$line")"$'\n'
				rss[$v]+="$(field polled_peak_kb "$line")"$'\n'
			done
		done
		declare -A t=() m=()
		for v in $variants; do
			t[$v]=$(printf '%s' "${tim[$v]}" | grep . | median_min)
			m[$v]=$(printf '%s' "${rss[$v]}" | grep . | median_min)
			tim[$v]="" rss[$v]=""
		done
		case $prog in
		pairs) label="malloc/free 64 B"
		       [ "${4:-}" = realloc ] && label="realloc, grow, free 64 B"
		       [ "${4:-}" = own ] && label="its own malloc, size, free 64 B"
		       [ "${4:-}" = own-realloc ] && label="its own malloc, realloc, free 64 B" ;;
		ctree) label="C trees, lists, strings" ;;
		cxx) label="C++ map, vector, shared_ptr" ;;
		prodcons) label="producer/consumer (2 threads)" ;;
		esac
		printf '%-34s %-10s %s%s%s%s%s%s\n' "$label, $name" \
			"$(awk -v k="${m[alone]%% *}" 'BEGIN { printf "%.1f MB", k / 1024 }')" \
			"$(ratio "${t[tagged]}" "${t[alone]}")" "$(ratio "${t[preload]}" "${t[alone]}")" \
			"$(ratio "${t[never]}" "${t[alone]}")" \
			"$(ratio "${m[tagged]}" "${m[alone]}")" "$(ratio "${m[preload]}" "${m[alone]}")" \
			"$(ratio "${m[never]}" "${m[alone]}")"
	done
done
