#!/bin/bash
# SPDX-License-Identifier: MIT
# The sampling profiler's cost, against the uninstrumented baseline in the same run:
# malloc/free pairs and the C-trees workload with no profiler attached, and with a
# profiler that does nothing (libprofilernoop.so, loaded by ALLOCINFO_CALLBACKS)
# sampling at 512 KiB and 16 KiB; then one sampled allocation's cost with its stack,
# 20 frames deep, from libgcc's unwinder and from the frame-pointer walk.
# Called by `make bench` (top_builddir set). Options: --quick, --reps N; --memory
# (bench.sh's) skips it.
set -u

: "${top_builddir:?run through make bench}"
B=$top_builddir/tests/benchmark
NOOP=$B/.libs/libprofilernoop.so

reps=7
scale=1
while [ $# -gt 0 ]; do
	case $1 in
	--quick) reps=3; scale=4 ;;
	--reps) reps=$2; shift ;;
	--no-heaptrack|--no-callgrind) ;;
	--memory) exit 0 ;;	# bench.sh's memory rows only: these are times
	*) echo "sampler_bench.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# Stores are memfds, as users get them: a store file on a disk filesystem costs
# each process milliseconds of page-cache work (user-guide.md).
unset ALLOCINFO_STORE_DIR LD_PRELOAD ALLOCINFO ALLOCINFO_DEBUG ALLOCINFO_CALLBACKS ALLOCINFO_PROFILE_UNWIND

# run VARIANT PROGRAM ARGS...: the program's result line.
run() {
	local variant=$1 prog=$2
	shift 2
	case $variant in
	base) "$B/${prog}_plain" "$@" ;;
	on) ALLOCINFO=1 "$B/${prog}_tagged" "$@" ;;
	p512) ALLOCINFO=1 ALLOCINFO_CALLBACKS=$NOOP BENCH_PROFILE_RATE=524288 \
		"$B/${prog}_tagged" "$@" ;;
	p16) ALLOCINFO=1 ALLOCINFO_CALLBACKS=$NOOP BENCH_PROFILE_RATE=16384 \
		"$B/${prog}_tagged" "$@" ;;
	esac
}

field() { sed -n "s/.*\<$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A cpu	# "row|variant" -> samples

# measure ROW "VARIANTS" PROGRAM ARGS...: interleaved, repeated runs; CPU time.
measure() {
	local row=$1 variants=$2 prog=$3 r i v line
	shift 3
	local -a vs=($variants)
	for ((r = 0; r < reps; r++)); do
		for ((i = 0; i < ${#vs[@]}; i++)); do
			v=${vs[(i + r) % ${#vs[@]}]}
			line=$(run "$v" "$prog" "$@")
			[ -n "$line" ] || { echo "sampler_bench.sh: $prog ($v) failed" >&2; continue; }
			cpu[$row|$v]+="$(field cpu_ns_per_op "$line")"$'\n'
		done
	done
}

med() { printf '%s' "${cpu[$1|$2]:-}" | grep . | median; }

cell() {	# cell ROW VARIANT -> "1.23x"
	awk -v m="$(med "$1" "$2")" -v b="$(med "$1" base)" \
		'BEGIN { if (b > 0 && m != "nan") printf "%-14s", sprintf("%.2fx", m / b); else printf "%-14s", "-" }'
}

echo "sampling profiler: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $reps runs per figure" >&2
iters=$((5000000 / scale))
for size in 32 4096; do
	echo "  pairs: $size bytes" >&2
	measure "pairs-$size" "base on p512 p16" pairs "$size" 1 "$iters"
done
echo "  C trees" >&2
measure ctree "base on p512 p16" ctree $((40 / scale))

printf '%-34s %-14s %-14s%-14s%-14s\n' "sampling profiler (no-op)" "base" "no profiler" \
	"512 KiB" "16 KiB"
printf '%s\n' "$(printf '%.0s-' {1..90})"
for row in pairs-32 pairs-4096 ctree; do
	case $row in
	pairs-32) label="malloc/free 32 B, 1 thread"; unit=ns/pair; div=1 ;;
	pairs-4096) label="malloc/free 4096 B, 1 thread"; unit=ns/pair; div=1 ;;
	ctree) label="C trees, lists, strings"; unit=ms/round; div=1000000 ;;
	esac
	printf '%-34s %-14s %s%s%s\n' "$label" \
		"$(awk -v v="$(med "$row" base)" -v d=$div -v u=$unit 'BEGIN { printf "%.1f %s", v / d, u }')" \
		"$(cell "$row" on)" "$(cell "$row" p512)" "$(cell "$row" p16)"
done

# One sampled allocation (rate 1) 20 frames deep: the pair's time less the same pair
# unsampled, for each way of taking the stack.
echo "  sampled allocation cost" >&2
declare -A one
for v in none unwind fp; do
	samples=""
	for ((r = 0; r < reps; r++)); do
		case $v in
		none) line=$(ALLOCINFO=1 "$B/sampled_depth" 20 $((200000 / scale)) off) ;;
		*) line=$(ALLOCINFO=1 ALLOCINFO_PROFILE_UNWIND=$v "$B/sampled_depth" 20 \
			$((200000 / scale))) ;;
		esac
		samples+="$(field cpu_ns_per_op "$line")"$'\n'
	done
	one[$v]=$(printf '%s' "$samples" | grep . | median)
done
printf '%-34s %-14s %s\n' "sampled alloc, 20 frames deep" \
	"$(awk -v v="${one[none]}" 'BEGIN { printf "%.1f ns/pair", v }')" \
	"$(awk -v n="${one[none]}" -v u="${one[unwind]}" -v f="${one[fp]}" 'BEGIN {
		printf "unwinder +%.0f ns, frame pointers +%.0f ns (%.1fx cheaper)",
			u - n, f - n, (u - n) / (f - n) }')"
