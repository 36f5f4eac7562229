#!/bin/sh
# SPDX-License-Identifier: MIT
# The built-in heap profiler's files as go tool pprof reads them: at rate 1 the
# in-use and allocated bytes and objects of each function are exactly the workload's,
# for a rebuilt program and under LD_PRELOAD, in profile.proto and in the gperftools
# text format; the stacks name the right functions; the exact per-site sample types
# hold allocinfo's own totals; files are 0600 and named BASE.PID.SEQ.pb.gz; at the
# default rate the in-use estimate is within 10% of allocinfo's exact total.
. "$top_srcdir/tests/integration/profile_lib.sh"
need_pprof

# expect_top FILE INDEX "FUNC VALUE ..." : each FUNC's flat value is VALUE (0: absent).
expect_top() {
	top=$(pprof_top "$1" "$2")
	[ -n "$top" ] || fail "go tool pprof read nothing from $1: $(cat "$work/pprof.err")"
	set -- "$1" "$2" $3
	file=$1 index=$2
	shift 2
	while [ $# -ge 2 ]; do
		got=$(printf '%s\n' "$top" | awk -v f="$1" '$2 == f { print $1 }')
		[ "${got:-0}" = "$2" ] ||
			fail "$file $index: $1 has ${got:-nothing}, expected $2; top: $top"
		shift 2
	done
}

# check_small FILE: the "small" workload at rate 1.
check_small() {
	expect_top "$1" inuse_space "work_a 409600 work_b 50000 work_c 0"
	expect_top "$1" inuse_objects "work_a 100 work_b 50 work_c 0"
	expect_top "$1" alloc_space "work_a 409600 work_b 50000 work_c 102400"
	expect_top "$1" alloc_objects "work_a 100 work_b 50 work_c 200"
}

for how in rebuilt preload; do
	if [ $how = rebuilt ]; then
		run="$prog"
	else
		[ "${ALLOCINFO_SANITIZER:-no}" = no ] && [ -n "${ALLOCINFO_LIB:-}" ] || continue
		run="env LD_PRELOAD=$ALLOCINFO_LIB $plain"
	fi
	rm -f "$work"/small.*
	ALLOCINFO_PROFILE=$work/small ALLOCINFO_PROFILE_SAMPLE_RATE=1 $run small \
		>"$work/out" 2>"$work/err" || fail "$how: the workload failed: $(cat "$work/err")"
	[ ! -s "$work/err" ] || fail "$how: unexpected stderr: $(cat "$work/err")"
	[ "$(count_files "$work/small.*")" = 1 ] || fail "$how: expected one file: $(ls "$work")"
	f=$(ls "$work"/small.*)
	case $f in
	"$work"/small.[0-9]*.0.pb.gz) ;;
	*) fail "$how: file named $f, expected $work/small.PID.0.pb.gz" ;;
	esac
	[ "$(stat -c %a "$f")" = 600 ] || fail "$how: $f has mode $(stat -c %a "$f")"
	check_small "$f"
	# The exact totals beside the samples (the preloaded program's sites are its
	# callers of malloc, named from its debug info as the report names them).
	expect_top "$f" exact_inuse_space "work_a 409600 work_b 50000 work_c 0"
	expect_top "$f" exact_inuse_objects "work_a 100 work_b 50"
	# Stacks: work_a called by run_small called by main, leaf first.
	go tool pprof -traces -sample_index=inuse_space "$f" >"$work/traces" 2>&1
	awk '/^-----/ { if (s) print s; s = ""; next }
	     $1 ~ /:$/ || !NF { next } { s = s " " $NF } END { print s }' \
		"$work/traces" >"$work/stacks"
	grep -q "^ work_a run_small main " "$work/stacks" ||
		fail "$how: no stack work_a <- run_small <- main: $(cat "$work/traces")"
	grep -q "^ work_b run_small main " "$work/stacks" ||
		fail "$how: no stack work_b <- run_small <- main: $(cat "$work/traces")"
	# Each sampled stack names its call site.
	grep -q "site: .*profile_prog.c:[0-9]" "$work/traces" ||
		fail "$how: no site label: $(cat "$work/traces")"

	# The gperftools text format, unsampled and symbolized by pprof itself.
	rm -f "$work"/small.*
	ALLOCINFO_PROFILE=$work/small.heap ALLOCINFO_PROFILE_SAMPLE_RATE=1 $run small \
		>"$work/out" 2>"$work/err" || fail "$how: the workload failed: $(cat "$work/err")"
	f=$(ls "$work"/small.*)
	case $f in
	"$work"/small.[0-9]*.0.heap) ;;
	*) fail "$how: text file named $f, expected $work/small.PID.0.heap" ;;
	esac
	head -1 "$f" | grep -q '^heap profile: 151: 467792 \[351: 570192\] @ heap_v2/1$' ||
		fail "$how: text header: $(head -1 "$f")"
	grep -q '^MAPPED_LIBRARIES:$' "$f" || fail "$how: no MAPPED_LIBRARIES in $f"
	check_small "$f"
done

# The default rate (512 KiB): the in-use estimate within 10% of the exact total.
if [ "${ALLOCINFO_SANITIZER:-no}" = no ]; then
	rm -f "$work"/big.*
	ALLOCINFO_PROFILE=$work/big "$prog" big >"$work/out" 2>"$work/err" ||
		fail "big: the workload failed: $(cat "$work/err")"
	exact=$(sed -n 's/^exact //p' "$work/out")
	[ "$exact" = $((4000 * 300 * 1024 + 4000 * 40 * 1024 + 4000 * 3000)) ] ||
		fail "big: allocinfo's exact total is $exact"
	f=$(ls "$work"/big.*)
	est=$(pprof_top "$f" inuse_space | awk '$2 ~ /^work_[abc]$/ { s += $1 } END { print s + 0 }')
	awk -v e="$est" -v x="$exact" 'BEGIN { d = e - x; if (d < 0) d = -d; exit !(d <= x / 10) }' ||
		fail "big: estimate $est is more than 10% from the exact $exact"
	echo "big: estimated $est, exact $exact"
fi
echo ok
