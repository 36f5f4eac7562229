#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every benchmark against the uninstrumented baseline, in the same run, and
# prints one table. Called by `make bench` (top_builddir and top_srcdir set).
#
# Variants of each workload (columns):
#   base       the source built with -DALLOCINFO_DISABLE, no library
#   off        built with allocinfo.h and the library, ALLOCINFO=0
#   on         the same, ALLOCINFO=1 (tagged call sites)
#   preload    the baseline binary with LD_PRELOAD=liballocinfo.so: every
#              allocation untagged, charged to a caller tag
#   glheap     as on, with ALLOCINFO_HEAP=glibc: every counted block glibc's,
#              with a 16-byte record in front (no small-block heap)
#   record     the baseline binary with LD_PRELOAD=librecordonly.so: a 16-byte
#              header in front of every block, as the record, and no counting
#              (a reference: what the record's memory alone costs)
#   trailer    the baseline binary with LD_PRELOAD=libtraileronly.so: 8 bytes
#              more at the end of every block instead, and no counting (what a
#              smaller record there would cost)
#   heaptrack  the baseline binary under heaptrack, when it is installed
#   cb1, cb3   as on, with ALLOCINFO_CALLBACKS=libcallbacksempty.so: one pair of
#              empty pre and post callbacks, or three chained (their own rows)
#   onwrap, preloadwrap   as on and preload, with the program's wrapper declared in
#              ALLOCINFO_WRAPPERS (the "declared wrappers" rows only)
#
# Time: runs of the variants are interleaved, repeated, and compared by their median
# (the ratio of minimums is printed too). Single-threaded rows compare CPU time per
# operation (robust on a shared machine); two-threaded rows, and every heaptrack
# figure (heaptrack does part of its work in another process), compare wall time.
#
# Options: --quick (fewer repetitions, smaller runs), --reps N, --no-heaptrack,
# --no-callgrind, --memory (only the workloads' peak RSS and the memory rows).
set -u

: "${top_builddir:?run through make bench}"
B=$top_builddir/tests/benchmark
LIB=$top_builddir/lib/.libs/liballocinfo.so
CLI=$top_builddir/tools/allocinfo
RECORD=$B/.libs/librecordonly.so
TRAILER=$B/.libs/libtraileronly.so
CALLBACKS=$B/.libs/libcallbacksempty.so

reps=7
ht_reps=3
scale=1
use_heaptrack=yes
use_callgrind=yes
memory_only=no
while [ $# -gt 0 ]; do
	case $1 in
	--quick) reps=3; ht_reps=1; scale=4 ;;
	--reps) reps=$2; shift ;;
	--no-heaptrack) use_heaptrack=no ;;
	--no-callgrind) use_callgrind=no ;;
	--memory) memory_only=yes; use_heaptrack=no; use_callgrind=no ;;
	*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
command -v heaptrack >/dev/null 2>&1 || use_heaptrack=no
command -v valgrind >/dev/null 2>&1 || use_callgrind=no

work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# Stores are memfds, as users get them: a store file on a disk filesystem costs
# each process milliseconds of page-cache work (user-guide.md).
unset ALLOCINFO_STORE_DIR LD_PRELOAD ALLOCINFO ALLOCINFO_DEBUG

# ---- running one variant ---------------------------------------------------------

# run VARIANT PROGRAM ARGS...: the program's result line on stdout.
run() {
	local variant=$1 prog=$2
	shift 2
	case $variant in
	base) "$B/${prog}_plain" "$@" ;;
	off) ALLOCINFO=0 "$B/${prog}_tagged" "$@" ;;
	on) ALLOCINFO=1 "$B/${prog}_tagged" "$@" ;;
	preload) ALLOCINFO=1 LD_PRELOAD=$LIB "$B/${prog}_plain" "$@" ;;
	glheap) ALLOCINFO=1 ALLOCINFO_HEAP=glibc "$B/${prog}_tagged" "$@" ;;
	onwrap) ALLOCINFO=1 ALLOCINFO_WRAPPERS=bench_xmalloc "$B/${prog}_tagged" "$@" ;;
	preloadwrap) ALLOCINFO=1 ALLOCINFO_WRAPPERS=bench_xmalloc LD_PRELOAD=$LIB \
		"$B/${prog}_plain" "$@" ;;
	record) LD_PRELOAD=$RECORD "$B/${prog}_plain" "$@" ;;
	trailer) LD_PRELOAD=$TRAILER "$B/${prog}_plain" "$@" ;;
	cb1) ALLOCINFO=1 ALLOCINFO_CALLBACKS=$CALLBACKS BENCH_CALLBACKS=1 "$B/${prog}_tagged" "$@" ;;
	cb3) ALLOCINFO=1 ALLOCINFO_CALLBACKS=$CALLBACKS BENCH_CALLBACKS=3 "$B/${prog}_tagged" "$@" ;;
	heaptrack)
		heaptrack -o "$work/ht" "$B/${prog}_plain" "$@" 2>/dev/null |
			grep '^wall_ns_per_op='
		rm -f "$work"/ht*
		;;
	esac
}

# field NAME LINE: the value of NAME=value in LINE.
field() {
	local name=$1 line=$2
	sed -n "s/.*\<$name=\([0-9.]*\).*/\1/p" <<<"$line"
}

# median and min of the numbers on stdin, one a line: "MEDIAN MIN".
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan nan"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.6g %.6g\n", m, v[1] }'
}

declare -A wall cpu peak	# "row|variant" -> newline-separated samples

# measure ROW "VARIANTS" PROGRAM ARGS...: repeated, interleaved runs. Heaptrack
# runs (fewer of them) take the argument list in HT_ARGS when it is set.
measure() {
	local row=$1 variants=$2 prog=$3
	shift 3
	local -a vs=($variants)
	local n=${#vs[@]} r i v line
	for ((r = 0; r < reps; r++)); do
		for ((i = 0; i < n; i++)); do
			v=${vs[(i + r) % n]}
			if [ "$v" = heaptrack ]; then
				[ $r -lt $ht_reps ] || continue
				line=$(run heaptrack "$prog" ${HT_ARGS:-"$@"})
			else
				line=$(run "$v" "$prog" "$@")
			fi
			if [ -z "$line" ]; then
				echo "bench.sh: $prog ($v) $* failed" >&2
				continue
			fi
			wall[$row|$v]+="$(field wall_ns_per_op "$line")"$'\n'
			cpu[$row|$v]+="$(field cpu_ns_per_op "$line")"$'\n'
			local kb
			kb=$(field polled_peak_kb "$line")	# exact (bench.h), when polled
			peak[$row|$v]+="${kb:-$(field peak_rss_kb "$line")}"$'\n'
		done
	done
}

# get ROW VARIANT wall|cpu|peak: "MEDIAN MIN" of the samples.
get() {
	local key="$1|$2"
	case $3 in
	wall) printf '%s' "${wall[$key]:-}" | grep . | stats ;;
	peak) printf '%s' "${peak[$key]:-}" | grep . | stats ;;
	*) printf '%s' "${cpu[$key]:-}" | grep . | stats ;;
	esac
}

# ---- the table -----------------------------------------------------------------

rows=()	# printed at the end, in order
line_of() { rows+=("$(printf "$@")"); }

fmt_ratio() {	# median-ratio min-ratio -> "1.23x (1.20)"
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "nan" || a == "" || b == "") { printf "%-16s", "-"; exit }
		printf "%-16s", sprintf("%.2fx (%.2f)", a, b) }'
}

# ratio_cells ROW METRIC VARIANTS: one cell per variant column.
ratio_cells() {
	local row=$1 metric=$2 out="" v b bm bmin m mmin metric_v
	read -r bm bmin < <(get "$row" base "$metric")
	for v in off on preload glheap record trailer heaptrack; do
		case " $3 " in
		*" $v "*) ;;
		*) out+=$(printf "%-16s" "-"); continue ;;
		esac
		metric_v=$metric
		[ "$v" = heaptrack ] && metric_v=wall
		if [ "$v" = heaptrack ] && [ "$metric" != wall ]; then
			read -r b bmin < <(get "$row" base wall)
		else
			b=$bm
		fi
		read -r m mmin < <(get "$row" "$v" "$metric_v")
		out+=$(fmt_ratio "$(awk -v m="$m" -v b="$b" 'BEGIN { if (b > 0 && m != "nan") print m / b; else print "nan" }')" \
				 "$(awk -v m="$mmin" -v b="$bmin" 'BEGIN { if (b > 0 && m != "nan") print m / b; else print "nan" }')")
	done
	printf '%s' "$out"
}

time_row() {	# time_row LABEL ROW METRIC VARIANTS UNIT-SCALE UNIT
	local label=$1 row=$2 metric=$3 variants=$4 div=$5 unit=$6 bm bmin
	read -r bm bmin < <(get "$row" base "$metric")
	line_of '%-34s %-14s %s' "$label" \
		"$(awk -v v="$bm" -v d="$div" -v u="$unit" 'BEGIN { printf "%.1f %s", v / d, u }')" \
		"$(ratio_cells "$row" "$metric" "$variants")"
}

ht=""
[ $use_heaptrack = yes ] && ht=heaptrack
all="base off on preload glheap record trailer $ht"

echo "allocinfo benchmarks: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs," \
     "$reps runs per figure (heaptrack: $ht_reps)" >&2

if [ $memory_only = no ]; then	# --memory: only the memory rows
# 1. malloc/free pairs.
pairs_iters=$((5000000 / scale))
for threads in 1 2; do
	for size in 16 32 64 256 4096; do
		echo "  pairs: $size bytes, $threads thread(s)" >&2
		HT_ARGS="$size $threads $((pairs_iters / 25))" \
			measure "pairs-$size-$threads" "$all" pairs "$size" "$threads" "$pairs_iters"
	done
done

# 1b. malloc/free pairs with user callbacks registered.
for size in 32 4096; do
	echo "  pairs with callbacks: $size bytes" >&2
	measure "cbpairs-$size" "base on cb1 cb3" pairs "$size" 1 "$pairs_iters"
done
fi

# 2. realistic workloads, their resident memory polled (bench.h): the kernel's own
# peak figure is off by hundreds of KiB on them.
echo "  workloads" >&2
export BENCH_RSS_POLL_MS=2
HT_ARGS=$((4 / scale + 1)) measure ctree "$all" ctree $((40 / scale))
HT_ARGS=$((4 / scale + 1)) measure cxx "$all" cxx $((40 / scale))
HT_ARGS=$((100000 / scale)) measure prodcons "$all" prodcons $((2000000 / scale))
HT_ARGS=$((4 / scale + 1)) measure interp "$all" interp $((30 / scale))
unset BENCH_RSS_POLL_MS
if [ $memory_only = no ]; then
echo "  declared wrappers" >&2
measure wrapped "base on onwrap preload preloadwrap" wrapped 32 $((2000000 / scale))
fi

line_of '%-34s %-14s %-16s%-16s%-16s%-16s%-16s%-16s%-16s' "workload" "base" "ALLOCINFO=0" \
	"on (tagged)" "on (LD_PRELOAD)" "on, glibc heap" "record only" "8 B at end" "heaptrack"
line_of '%s' "$(printf '%.0s-' {1..176})"
if [ $memory_only = no ]; then
for size in 16 32 64 256 4096; do
	time_row "malloc/free $size B, 1 thread" "pairs-$size-1" cpu "off on preload glheap record trailer $ht" 1 ns/pair
done
for size in 16 32 64 256 4096; do
	time_row "malloc/free $size B, 2 threads" "pairs-$size-2" wall "off on preload glheap record trailer $ht" 1 ns/pair
done
# The two-thread speed-up, 2 * t(1) / t(2) in wall time, relative to the baseline's.
# From the fastest runs: on a shared machine the median of a two-thread run mostly
# measures who else was running.
speedup() {	# speedup SIZE VARIANT -> the speed-up
	local a b x
	read -r x a < <(get "pairs-$1-1" "$2" wall)
	read -r x b < <(get "pairs-$1-2" "$2" wall)
	awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) print 2 * a / b; else print "nan" }'
}
for size in 16 32 64 256 4096; do
	base_su=$(speedup "$size" base)
	cells=""
	for v in off on preload glheap record trailer heaptrack; do
		if [ "$v" = heaptrack ] && [ -z "$ht" ]; then
			cells+=$(printf "%-16s" "-")
			continue
		fi
		cells+=$(awk -v s="$(speedup "$size" "$v")" -v b="$base_su" \
			'BEGIN { if (b > 0 && s != "nan") printf "%-16s", sprintf("%.2f", s / b); else printf "%-16s", "-" }')
	done
	line_of '%-34s %-14s %s' "2-thread speed-up $size B, rel." \
		"$(printf '%.2f' "$base_su")" "$cells"
done
time_row "C trees, lists, strings" ctree cpu "off on preload glheap record trailer $ht" 1000000 ms/round
time_row "C++ map, vector, shared_ptr" cxx cpu "off on preload glheap record trailer $ht" 1000000 ms/round
time_row "producer/consumer (2 threads)" prodcons wall "off on preload glheap record trailer $ht" 1 ns/msg
time_row "interpreter heap, collected" interp cpu "off on preload glheap record trailer $ht" 1 ns/object
fi
# Peak resident memory of the same runs (heaptrack's own process is not the program's).
time_row "peak RSS: C trees, lists, strings" ctree peak "off on preload glheap record trailer" 1024 MiB
time_row "peak RSS: C++ map, vector, ..." cxx peak "off on preload glheap record trailer" 1024 MiB
time_row "peak RSS: producer/consumer" prodcons peak "off on preload glheap record trailer" 1024 MiB
time_row "peak RSS: interpreter heap" interp peak "off on preload glheap record trailer" 1024 MiB

if [ $memory_only = no ]; then
# Callback rows: the pair with none registered (the "on" column), with one empty pre
# and post, with three chained; ratios to the baseline in the columns named.
cb_ratio() {	# cb_ratio ROW VARIANT -> "1.23x (1.20)"
	local bm bmin m mmin
	read -r bm bmin < <(get "$1" base cpu)
	read -r m mmin < <(get "$1" "$2" cpu)
	fmt_ratio "$(awk -v m="$m" -v b="$bm" 'BEGIN { if (b > 0 && m != "nan") print m / b; else print "nan" }')" \
		"$(awk -v m="$mmin" -v b="$bmin" 'BEGIN { if (b > 0 && m != "nan") print m / b; else print "nan" }')"
}
for size in 32 4096; do
	read -r bm bmin < <(get "cbpairs-$size" base cpu)
	line_of '%-34s %-14s %s%s%s' "malloc/free $size B: none, 1, 3 cb" \
		"$(awk -v v="$bm" 'BEGIN { printf "%.1f ns/pair", v }')" \
		"on $(cb_ratio "cbpairs-$size" on)" "1 cb $(cb_ratio "cbpairs-$size" cb1)" \
		"3 cb $(cb_ratio "cbpairs-$size" cb3)"
done

# Declared wrappers: a pair through the program's own wrapper, undeclared and declared
# (each allocation then walks out of the wrapper to its caller).
wrap_cell() {	# wrap_cell VARIANT -> "N ns (R.RRx)"
	local m mn bm bmin
	read -r bm bmin < <(get wrapped base cpu)
	read -r m mn < <(get wrapped "$1" cpu)
	awk -v m="$m" -v b="$bm" 'BEGIN { if (b > 0 && m != "nan") printf "%-16s", sprintf("%.1f ns %.2fx", m, m / b); else printf "%-16s", "-" }'
}
line_of '%-34s %-14s %s%s%s%s' "wrapper pair 32 B: on, declared" \
	"$(get wrapped base cpu | awk '{ printf "%.1f ns/pair", $1 }')" "$(wrap_cell on)" \
	"$(wrap_cell onwrap)" "$(wrap_cell preload)" "$(wrap_cell preloadwrap)"
fi

# 3. instructions per pair (callgrind): the difference between two run lengths, so
# start-up and exit cancel out. The path counted is the one that runs natively.
if [ $use_callgrind = yes ]; then
	echo "  callgrind" >&2
	ir() {	# ir VARIANT ITERS -> instructions executed by the whole run
		local v=$1 n=$2 env=()
		case $v in
		base) prog=$B/pairs_plain ;;
		off) prog=$B/pairs_tagged; env=(ALLOCINFO=0) ;;
		on) prog=$B/pairs_tagged; env=(ALLOCINFO=1) ;;
		preload) prog=$B/pairs_plain; env=(ALLOCINFO=1 LD_PRELOAD=$LIB) ;;
		glheap) prog=$B/pairs_tagged; env=(ALLOCINFO=1 ALLOCINFO_HEAP=glibc) ;;
		record) prog=$B/pairs_plain; env=(LD_PRELOAD=$RECORD) ;;
		trailer) prog=$B/pairs_plain; env=(LD_PRELOAD=$TRAILER) ;;
		cb1) prog=$B/pairs_tagged; env=(ALLOCINFO=1 ALLOCINFO_CALLBACKS=$CALLBACKS BENCH_CALLBACKS=1) ;;
		cb3) prog=$B/pairs_tagged; env=(ALLOCINFO=1 ALLOCINFO_CALLBACKS=$CALLBACKS BENCH_CALLBACKS=3) ;;
		esac
		env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$prog" 32 1 "$n" 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	n1=100000 n2=300000
	# pairs.c also runs n/16 warm-up pairs.
	pairs=$(( (n2 + n2 / 16) - (n1 + n1 / 16) ))
	declare -A ipp
	for v in base off on preload glheap record trailer cb1 cb3; do
		a=$(ir "$v" $n1)
		b=$(ir "$v" $n2)
		ipp[$v]=$(awk -v a="$a" -v b="$b" -v p="$pairs" 'BEGIN { printf "%.1f", (b - a) / p }')
	done
	cells=""
	for v in off on preload glheap record trailer; do
		cells+=$(awk -v x="${ipp[$v]}" -v b="${ipp[base]}" \
			'BEGIN { printf "%-16s", sprintf("%+.1f (%.2fx)", x - b, x / b) }')
	done
	line_of '%-34s %-14s %s%-16s' "instructions/pair 32 B (callgrind)" "${ipp[base]}" "$cells" "-"
	line_of '%-34s %-14s %s' "instructions/pair 32 B, callbacks" "${ipp[base]}" \
		"$(awk -v o="${ipp[on]}" -v a="${ipp[cb1]}" -v c="${ipp[cb3]}" -v b="${ipp[base]}" \
			'BEGIN { printf "none %+.1f, 1 cb %+.1f, 3 cb %+.1f", o - b, a - b, c - b }')"
fi

# 4. memory: extra bytes per live allocation, a million small ones.
echo "  memory" >&2
for size in 16 24 32 64; do
	declare -A rss=() heap=()
	for v in base off on preload glheap record trailer; do
		line=$(run "$v" memory "$size" $((1000000 / scale)))
		rss[$v]=$(field rss_bytes_per_alloc "$line")
		heap[$v]=$(field heap_bytes_per_alloc "$line")
	done
	for kind in rss heap; do
		cells=""
		for v in off on preload glheap record trailer; do
			if [ $kind = rss ]; then x=${rss[$v]} b=${rss[base]}; else x=${heap[$v]} b=${heap[base]}; fi
			cells+=$(awk -v x="$x" -v b="$b" 'BEGIN { printf "%-16s", sprintf("%+.1f B", x - b) }')
		done
		if [ $kind = rss ]; then label="bytes/alloc $size B, RSS"; b=${rss[base]};
		else label="bytes/alloc $size B, glibc mallinfo2"; b=${heap[base]}; fi
		line_of '%-34s %-14s %s%-16s' "$label" "$b B" "$cells" "-"
	done
done

# 4b. memory a program gives back: one size class filled and freed, then another
# (peak), everything freed (RSS after free), then malloc_trim(0). Base: MiB above the
# start; the others: ratio for the peak, MiB more than the baseline after. Then the
# time malloc_trim(0) took: the median of three runs, interleaved (a trim of a few ms
# moves by a third from run to run); the memory figures are the first run's.
echo "  phase change" >&2
declare -A ph_peak=() ph_free=() ph_trim=() ph_trim_us=()
for r in 1 2 3; do
	for v in base off on preload glheap record trailer; do
		line=$(run "$v" phase $((4000000 / scale)) $((1000000 / scale)))
		ph_trim_us[$v]+="$(field trim_us "$line")"$'\n'
		[ $r = 1 ] || continue
		ph_peak[$v]=$(field peak_kb "$line")
		ph_free[$v]=$(field free_kb "$line")
		ph_trim[$v]=$(field trim_kb "$line")
	done
done
for v in "${!ph_trim_us[@]}"; do
	read -r ph_trim_us[$v] _ < <(printf '%s' "${ph_trim_us[$v]}" | stats)
done
for kind in peak free trim trim_us; do
	cells=""
	for v in off on preload glheap record trailer; do
		case $kind in
		peak) x=${ph_peak[$v]} b=${ph_peak[base]}
		      cells+=$(awk -v x="$x" -v b="$b" 'BEGIN { printf "%-16s", sprintf("%.2fx", x / b) }') ;;
		free) x=${ph_free[$v]} b=${ph_free[base]}
		      cells+=$(awk -v x="$x" -v b="$b" 'BEGIN { printf "%-16s", sprintf("%+.1f MiB", (x - b) / 1024) }') ;;
		trim) x=${ph_trim[$v]} b=${ph_trim[base]}
		      cells+=$(awk -v x="$x" -v b="$b" 'BEGIN { printf "%-16s", sprintf("%+.1f MiB", (x - b) / 1024) }') ;;
		trim_us) x=${ph_trim_us[$v]} b=${ph_trim_us[base]}
		      cells+=$(awk -v x="$x" -v b="$b" 'BEGIN { printf "%-16s", sprintf("%.2fx", x / (b > 0 ? b : 1)) }') ;;
		esac
	done
	case $kind in
	peak) label="phase change 64 B -> 256 B: peak"; b=${ph_peak[base]} ;;
	free) label="phase change: RSS after free"; b=${ph_free[base]} ;;
	trim) label="  and after malloc_trim(0)"; b=${ph_trim[base]} ;;
	trim_us) label="  malloc_trim(0)'s time"
		 line_of '%-34s %-14s %s%-16s' "$label" "$(awk -v b="${ph_trim_us[base]}" 'BEGIN { printf "%.1f ms", b / 1000 }')" "$cells" "-"
		 continue ;;
	esac
	line_of '%-34s %-14s %s%-16s' "$label" "$(awk -v b="$b" 'BEGIN { printf "%.1f MiB", b / 1024 }')" "$cells" "-"
done

if [ $memory_only = no ]; then
# 5. the report: time per read against the number of tags.
echo "  report" >&2
for n in 10 100 1000 10000; do
	samples=""
	for ((r = 0; r < 3; r++)); do
		line=$(ALLOCINFO=1 "$B/report_$n" 5)
		samples+="$(field wall_ns_per_op "$line")"$'\n'
	done
	read -r m mn < <(printf '%s' "$samples" | grep . | stats)
	cli="-"
	if [ -x "$CLI" ]; then
		coproc HOLD { ALLOCINFO=1 exec "$B/report_$n" hold; }
		read -r pid <&"${HOLD[0]}"
		"$CLI" -p "$pid" >/dev/null 2>&1	# warm
		t0=$(date +%s%N)
		for ((r = 0; r < 5; r++)); do "$CLI" -p "$pid" >/dev/null 2>&1; done
		t1=$(date +%s%N)
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		cli=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "CLI %.2f ms", d / 5 / 1e6 }')
	fi
	line_of '%-34s %-14s %-16s%-16s%-16s%-16s%-16s%-16s' "report read, $n tags" "-" "-" \
		"$(awk -v m="$m" 'BEGIN { printf "%.2f ms", m / 1e6 }')" \
		"$(awk -v m="$m" -v n="$n" 'BEGIN { printf "%.2f us/tag", m / 1e3 / n }')" "-" "-" "$cli"
done

fi
echo
printf '%s\n' "${rows[@]}"
cat <<'EOF'

Times: base is the absolute figure; the other columns are median ratios to it, with
the ratio of the fastest runs in parentheses. 1-thread rows: CPU time; 2-thread
rows, producer/consumer and every heaptrack figure: wall time. Speed-up rows: the
variant's 2*t(1 thread)/t(2 threads) from its fastest runs, divided by the
baseline's (base column: the baseline's own speed-up). Instructions: extra per
pair over the baseline's (callgrind). Memory: extra bytes per live allocation.
Peak RSS rows: the workloads' peak resident memory (the largest of readings of
/proc/self/statm every 2 ms), as a ratio to the baseline's. Phase change: 4M blocks
of 64 bytes freed, then 1M of 256; resident memory above the start at the peak
(ratio), and after everything is freed and after malloc_trim(0) (MiB more than the
baseline).
Record only: the baseline with a 16-byte header on every block and no counting;
the distance from it to the "on" columns is what counting itself costs. 8 B at end:
the baseline with 8 bytes more at the end of every block instead, and no counting.
Wrapper row: a malloc/free pair through a wrapper of the program's own, CPU time
per pair and ratio to base: tagged build undeclared, then with ALLOCINFO_WRAPPERS
naming it; preloaded undeclared, then declared (the cells are absolute here).
Report rows: time of one allocinfo_print() to /dev/null, per tag, and one
`allocinfo -p PID` when the CLI is built. Callback rows: the pair with no callback
registered ("on"), with one pair of empty pre and post callbacks, and with three
chained (ALLOCINFO_CALLBACKS), as ratios to the base column.
EOF
