#!/bin/sh
# SPDX-License-Identifier: MIT
# Long torture runs (`make regtest`, never part of `make check`): the concurrency
# tests at full length - a minute of dlopen/dlclose against a reader, 20,000 forks
# while four threads allocate, 200,000 short-lived threads - repeated ROUNDS times
# (default 3), each with a private store directory.
set -u
rounds=${ROUNDS:-3}
ALLOCINFO_TORTURE=1
export ALLOCINFO_TORTURE
for r in $(seq 1 "$rounds"); do
	for t in test_dlopen test_process test_threads; do
		start=$(date +%s)
		if ! "$top_srcdir/tests/run-test.sh" "$top_builddir/tests/unit/$t" >"$t.torture.log" 2>&1; then
			echo "round $r: $t FAILED (see $t.torture.log)"
			exit 1
		fi
		echo "round $r: $t ok ($(( $(date +%s) - start )) s)"
	done
done
