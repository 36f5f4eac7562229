#!/bin/bash
# SPDX-License-Identifier: MIT
# The built-in heap profiler's cost beside jemalloc's own heap profiler, in the same
# run, as ratios to the uninstrumented baseline. Columns:
#   base         the workload built without allocinfo (absolute figure)
#   allocinfo    built with allocinfo.h, no profiler
#   +prof 512K   and ALLOCINFO_PROFILE at ALLOCINFO_PROFILE_SAMPLE_RATE=512KiB
#   +prof 16K    the same at 16KiB
#   jemalloc     the baseline with LD_PRELOAD=libjemalloc.so.2 (Debian's is built
#                with profiling)
#   je prof 512K and MALLOC_CONF=prof:true,lg_prof_sample:19 (2^19 = 512 KiB)
#   je prof 16K  lg_prof_sample:14 (16 KiB)
# Both profilers write one profile at exit (prof_final:true for jemalloc). Time is
# the median CPU time per operation, peak RSS the median maximum resident set (GNU
# time's %M); the ratio of the best runs in parentheses. Never a pass/fail test.
# Called by `make bench` (top_builddir set). Options: --quick, --reps N.
set -u

: "${top_builddir:?run through make bench}"
B=$top_builddir/tests/benchmark
reps=7
scale=1
while [ $# -gt 0 ]; do
	case $1 in
	--quick) reps=3; scale=4 ;;
	--reps) reps=$2; shift ;;
	*) ;;	# bench.sh's other options
	esac
	shift
done
if [ ! -x /usr/bin/time ]; then
	echo "profile_bench.sh: GNU time (/usr/bin/time) is needed for peak RSS" >&2
	exit 1
fi
JE=$(/sbin/ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*libjemalloc.so.2 (.*) => //p' | head -n 1)

work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-profbench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# Stores are memfds, as users get them: a store file on a disk filesystem costs
# each process milliseconds of page-cache work (user-guide.md).
unset ALLOCINFO_STORE_DIR LD_PRELOAD ALLOCINFO ALLOCINFO_DEBUG ALLOCINFO_CALLBACKS MALLOC_CONF \
	ALLOCINFO_PROFILE ALLOCINFO_PROFILE_SAMPLE_RATE ALLOCINFO_PROFILE_ALLOC_INTERVAL \
	ALLOCINFO_PROFILE_INUSE_INTERVAL ALLOCINFO_PROFILE_TIME_INTERVAL

variants="base on pp512 pp16"
[ -n "$JE" ] && variants+=" je je19 je14"

# run VARIANT PROGRAM ARGS...: "TIME-FIELDS peak_kb=N"
run() {
	local v=$1 prog=$2 out
	shift 2
	local -a env=()
	case $v in
	base) prog=$B/${prog}_plain ;;
	on) prog=$B/${prog}_tagged ;;
	pp512) prog=$B/${prog}_tagged
	       env=(ALLOCINFO_PROFILE=$work/p ALLOCINFO_PROFILE_SAMPLE_RATE=512KiB) ;;
	pp16) prog=$B/${prog}_tagged
	      env=(ALLOCINFO_PROFILE=$work/p ALLOCINFO_PROFILE_SAMPLE_RATE=16KiB) ;;
	je) prog=$B/${prog}_plain; env=(LD_PRELOAD=$JE) ;;
	je19) prog=$B/${prog}_plain
	      env=(LD_PRELOAD=$JE MALLOC_CONF=prof:true,lg_prof_sample:19,prof_final:true,prof_prefix:$work/je) ;;
	je14) prog=$B/${prog}_plain
	      env=(LD_PRELOAD=$JE MALLOC_CONF=prof:true,lg_prof_sample:14,prof_final:true,prof_prefix:$work/je) ;;
	esac
	out=$(env "${env[@]}" /usr/bin/time -f 'peak_kb=%M' -o "$work/time" "$prog" "$@") || return 1
	rm -f "$work"/p.* "$work"/je.*
	printf '%s %s\n' "$out" "$(cat "$work/time")"
}

. "$(dirname "$0")/bench_lib.sh"

echo
echo "The built-in heap profiler and jemalloc's prof, ratios to the baseline (same run)"
printf '%-24s %-12s' "workload" "base"
for v in $variants; do
	case $v in
	base) ;;
	on) printf '%-15s' "allocinfo" ;;
	pp512) printf '%-15s' "+prof 512K" ;;
	pp16) printf '%-15s' "+prof 16K" ;;
	je) printf '%-15s' "jemalloc" ;;
	je19) printf '%-15s' "je prof 512K" ;;
	je14) printf '%-15s' "je prof 16K" ;;
	esac
done
printf '\n%s\n' "$(printf '%.0s-' {1..126})"
[ -n "$JE" ] || echo "(libjemalloc.so.2 is not installed: no jemalloc columns)"

declare -A tim rss
for w in "pairs 64 1 $((5000000 / scale))" "pairs 4096 1 $((2000000 / scale))" \
	 "ctree $((40 / scale))"; do
	set -- $w
	prog=$1
	shift
	vs=($variants)
	n=${#vs[@]}
	echo "  $prog $*" >&2
	for ((r = 0; r < reps; r++)); do
		for ((i = 0; i < n; i++)); do
			v=${vs[(i + r) % n]}
			line=$(run "$v" "$prog" "$@") || { echo "$prog ($v) failed" >&2; continue; }
			tim[$v]+="$(field cpu_ns_per_op "$line")"$'\n'
			rss[$v]+="$(field peak_kb "$line")"$'\n'
		done
	done
	declare -A t=() m=()
	for v in $variants; do
		t[$v]=$(printf '%s' "${tim[$v]}" | grep . | median_min)
		m[$v]=$(printf '%s' "${rss[$v]}" | grep . | median_min)
		tim[$v]="" rss[$v]=""
	done
	case "$prog $1" in
	"pairs 64") label="malloc/free 64 B" ;;
	"pairs 4096") label="malloc/free 4 KiB" ;;
	ctree*) label="C trees, lists, strings" ;;
	esac
	printf '%-24s %-12s' "$label, time" "$(awk -v x="${t[base]%% *}" 'BEGIN { printf "%.1f ns", x }')"
	for v in $variants; do
		[ "$v" = base ] || printf '%s' "$(ratio "${t[$v]}" "${t[base]}" 15)"
	done
	printf '\n%-24s %-12s' "$label, peak RSS" "$(awk -v k="${m[base]%% *}" 'BEGIN { printf "%.1f MB", k / 1024 }')"
	for v in $variants; do
		[ "$v" = base ] || printf '%s' "$(ratio "${m[$v]}" "${m[base]}" 15)"
	done
	printf '\n'
done
