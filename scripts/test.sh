#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the whole test suite from scratch: installs what it needs, mounts bpffs when it
# is not mounted, then builds and runs `make check` three times: a normal build, one
# under AddressSanitizer and one under ThreadSanitizer, with a minute of fuzzing the
# store parser (make fuzz) beside the sanitizer builds. Prints one closing line,
# "N passed, N failed, N skipped", and exits non-zero if anything failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" || exit 1

# BPF tests need bpffs; FUSE tests need /dev/fuse (they skip without it).
mounted_bpffs=no
if [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/fs/bpf 2>/dev/null; then
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null && mounted_bpffs=yes
fi

(cd "$top" && ./autogen.sh >/dev/null 2>&1) || { echo "autogen.sh failed"; exit 1; }

pass=0 fail=0 skip=0 status=0
suite_started=$(date +%s)
run_suite() {
	name=$1
	shift
	dir=$top/build-test-$name
	rm -rf "$dir"
	echo "== $name: configure $*"
	if ! "$top/scripts/build.sh" "$dir" "$@"; then
		echo "== $name: build failed"
		fail=$((fail + 1))
		status=1
		return
	fi
	echo "== $name: make check"
	started=$(date +%s)
	(cd "$dir" && make -j"$(nproc)" check >"$dir/check.out" 2>&1)
	rc=$?
	echo "== $name: make check took $(($(date +%s) - started)) s"
	grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS|XFAIL):' "$dir/check.out"
	p=$(sed -n 's/^# PASS: *//p' "$dir/test-suite.log" 2>/dev/null | head -n1)
	f=$(sed -n 's/^# FAIL: *//p' "$dir/test-suite.log" 2>/dev/null | head -n1)
	e=$(sed -n 's/^# ERROR: *//p' "$dir/test-suite.log" 2>/dev/null | head -n1)
	s=$(sed -n 's/^# SKIP: *//p' "$dir/test-suite.log" 2>/dev/null | head -n1)
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0} + ${e:-0}))
	skip=$((skip + ${s:-0}))
	if [ $rc != 0 ]; then
		status=1
		# Each failing test's own log, whose last lines say what failed.
		grep -E '^(FAIL|ERROR):' "$dir/check.out" | sed 's/^[A-Z]*: //' | sort -u |
			while read -r t; do
				echo "== $name: ${t%.sh}.log, its last 60 lines"
				tail -n 60 "$dir/${t%.sh}.log" 2>/dev/null
			done
		[ -f "$dir/test-suite.log" ] || { tail -50 "$dir/check.out"; fail=$((fail + 1)); }
	fi
}

# The store parser under libFuzzer for a bounded time, from the seed corpus. It runs
# beside the sanitizer builds: libFuzzer keeps one core busy, and a build or a test
# suite leaves the other idle often enough.
fuzz_out=$top/build-test-plain/fuzz.out
start_fuzz() {
	echo "== fuzz: make fuzz FUZZ_TIME=${FUZZ_TIME:-60} (beside the sanitizer builds)"
	(cd "$top/build-test-plain" && make fuzz FUZZ_TIME="${FUZZ_TIME:-60}" >"$fuzz_out" 2>&1) &
	fuzz_pid=$!
}
finish_fuzz() {
	if wait "$fuzz_pid"; then
		pass=$((pass + 1))
		echo "PASS: fuzz"
	else
		fail=$((fail + 1))
		status=1
		echo "FAIL: fuzz"
		tail -40 "$fuzz_out"
	fi
}

run_suite plain
start_fuzz
run_suite asan --enable-sanitizer=address --disable-bpf
run_suite tsan --enable-sanitizer=thread --disable-bpf
finish_fuzz

[ $mounted_bpffs = yes ] && umount /sys/fs/bpf 2>/dev/null
echo "== the whole suite took $(($(date +%s) - suite_started)) s"
echo "$pass passed, $fail failed, $skip skipped"
exit $status
