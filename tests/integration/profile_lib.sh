#!/bin/sh
# SPDX-License-Identifier: MIT
# Sourced by the built-in heap profiler's tests: the workload (profile_prog.c, with
# the header, and its plain build for LD_PRELOAD), a private work directory, go tool
# pprof, skip and fail.
set -u
prog=$top_builddir/tests/integration/profile_prog
plain=$top_builddir/tests/integration/profile_prog_plain
work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-profile.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
# The profiler's own knobs must come from each test alone.
unset ALLOCINFO_PROFILE ALLOCINFO_PROFILE_SAMPLE_RATE ALLOCINFO_PROFILE_ALLOC_INTERVAL \
	ALLOCINFO_PROFILE_INUSE_INTERVAL ALLOCINFO_PROFILE_TIME_INTERVAL
LSAN_OPTIONS="suppressions=$top_srcdir/tests/integration/profile_lsan.supp:print_suppressions=0 ${LSAN_OPTIONS:-}"
export LSAN_OPTIONS
# go writes its caches under $HOME.
export HOME="${HOME:-$work}" GOFLAGS=-mod=mod GOTOOLCHAIN=local

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

need_pprof() {
	command -v go >/dev/null 2>&1 || skip "no go tool pprof (Debian: golang-go)"
}

# pprof_top FILE SAMPLE_INDEX: "BYTES FUNCTION" per function, flat values in plain
# units (bytes or objects), from go tool pprof -top.
pprof_top() {
	go tool pprof -top -unit=B -nodecount=1000 -sample_index="$2" "$1" 2>"$work/pprof.err" |
		awk '/^ *[0-9.]+B? +[0-9.]+%/ { v = $1; sub(/B$/, "", v); print v, $6 }'
}

# count_files GLOB: how many files match.
count_files() {
	n=0
	for f in $1; do
		[ -e "$f" ] && n=$((n + 1))
	done
	echo "$n"
}
