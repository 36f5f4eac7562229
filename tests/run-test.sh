#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one test with a private store directory, so that tests running in parallel
# never see each other's processes. Exit codes as automake's: 77 skip, 99 error.
# On a tmpfs where there is one: a store file on a disk filesystem costs each process
# milliseconds of page-cache work, and the tests start thousands of processes.
top=${TMPDIR:-/tmp}
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && top=/dev/shm
dir=$(mktemp -d "$top/allocinfo-test.XXXXXX") || exit 99
ALLOCINFO_STORE_DIR=$dir
export ALLOCINFO_STORE_DIR
# A test that hangs (a loop in the allocation path, a deadlock) fails after this many
# seconds, instead of holding the suite until CI's own limit ends it with nothing said.
limit=${ALLOCINFO_TEST_TIMEOUT:-900}
start=$(date +%s%N)
case $1 in
*.sh) timeout -k 10 "$limit" sh "$@" ;;
*) timeout -k 10 "$limit" "$@" ;;
esac
rc=$?
rm -rf "$dir"
# The time each test takes, in its log: the suite must stay well inside CI's budget.
echo "run-test: $1 took $(( ($(date +%s%N) - start) / 1000000 )) ms"
if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "run-test: $1 did not finish within $limit s (ALLOCINFO_TEST_TIMEOUT): stopped"
	exit 99
fi
exit $rc
