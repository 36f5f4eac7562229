#!/bin/sh
# SPDX-License-Identifier: MIT
# Each of the built-in heap profiler's snapshot triggers fires as configured, and the
# files are numbered BASE.PID.0, 1, ... in order: every ALLOC_INTERVAL bytes
# allocated, every INUSE_INTERVAL bytes of in-use growth, every TIME_INTERVAL seconds,
# at each allocinfo_profiler_snapshot(), once at exit (with what is still live in its
# in-use view), from several threads at once; started by allocinfo_pprof_profiler_start() as by the environment;
# a fork child profiles on under its own pid.
. "$top_srcdir/tests/integration/profile_lib.sh"

# run NAME ARGS...: runs the workload at rate 1 with base $work/NAME and whatever
# ALLOCINFO_PROFILE_* the caller exported; fails on a nonzero exit or any stderr.
run() {
	name=$1
	shift
	rm -f "$work/$name".*
	ALLOCINFO_PROFILE=$work/$name ALLOCINFO_PROFILE_SAMPLE_RATE=1 "$prog" "$@" \
		>"$work/out" 2>"$work/err" || fail "$name: the workload failed: $(cat "$work/err")"
	[ ! -s "$work/err" ] || fail "$name: unexpected stderr: $(cat "$work/err")"
}

# expect_files NAME N: files $work/NAME.PID.0.pb.gz .. N-1, and no others.
expect_files() {
	got=$(count_files "$work/$1.*")
	[ "$got" = "$2" ] || fail "$1: expected $2 files, found $got: $(ls "$work")"
	i=0
	while [ $i -lt "$2" ]; do
		[ "$(count_files "$work/$1.[0-9]*.$i.pb.gz")" = 1 ] ||
			fail "$1: no file number $i: $(ls "$work")"
		i=$((i + 1))
	done
}

# 10 MiB allocated in 16 KiB blocks, a snapshot every MiB, and the one at exit.
ALLOCINFO_PROFILE_ALLOC_INTERVAL=1MiB run alloc chunks 10
expect_files alloc 11

# 10 MiB kept, a snapshot every 2,000,000 bytes of growth, and at exit. Each crossing
# is measured from the in-use total when the last one was met, so a sampled block
# that anything frees meanwhile delays every later one: at exactly 2 MiB the fifth
# crossing needs every byte of the 10 MiB (a loaded ASan run once made only four),
# while at 2,000,000 bytes 485,760 are to spare.
ALLOCINFO_PROFILE_INUSE_INTERVAL=2000000 run inuse chunks 10
expect_files inuse 6

# Snapshots every second: the workload ends once the second is written (about 2 s
# after the profiler started), a second before the third is due; and the one at exit.
ALLOCINFO_PROFILE_TIME_INTERVAL=1 run time timed 2
expect_files time 3
waited=$(sed -n 's/^waited //p' "$work/out")
awk -v w="$waited" 'BEGIN { exit !(w >= 1.8 && w < 30) }' ||
	fail "time: the second snapshot came after ${waited:-no} seconds, not 2 or a little more"

# Exit alone: one file.
run exit small
expect_files exit 1

# Three explicit snapshots and the one at exit; the last holds what is live at exit.
run snap snapshot 3
[ "$(grep -c '^snapshot 0$' "$work/out")" = 3 ] || fail "snapshot: $(cat "$work/out")"
expect_files snap 4
if command -v go >/dev/null 2>&1; then
	top=$(pprof_top "$work"/snap.*.3.pb.gz inuse_space)
	printf '%s\n' "$top" | grep -qx '409600 work_a' || fail "snapshot at exit: $top"
fi

# Four threads allocating and taking snapshots at once (the sanitizer builds run
# this too): two files each, and the one at exit; work_b's 80 kept blocks live.
run threads threads 4
grep -qx joined "$work/out" || fail "threads: $(cat "$work/out")"
expect_files threads 9
if command -v go >/dev/null 2>&1; then
	top=$(pprof_top "$work"/threads.*.8.pb.gz inuse_space)
	printf '%s\n' "$top" | grep -qx '40000 work_b' || fail "threads, at exit: $top"
fi

# Started by the API, without the environment.
rm -f "$work"/api.*
"$prog" api "$work/api" >"$work/out" 2>"$work/err" || fail "api: $(cat "$work/err")"
grep -qx 'start 0' "$work/out" || fail "api: $(cat "$work/out") $(cat "$work/err")"
expect_files api 1

# fork: the parent's file and the child's, under its pid; the child's in-use view
# has the parent's blocks it inherited and its own.
run fork fork
child=$(sed -n 's/^child //p' "$work/out")
parent_files=$(count_files "$work/fork.*")
[ "$parent_files" = 2 ] || fail "fork: expected two files: $(ls "$work")"
[ -e "$work/fork.$child.0.pb.gz" ] || fail "fork: no file of the child $child: $(ls "$work")"
if command -v go >/dev/null 2>&1; then
	top=$(pprof_top "$work/fork.$child.0.pb.gz" inuse_space)
	printf '%s\n' "$top" | grep -qx '100000 work_b' || fail "fork: child's view: $top"
fi
echo ok
