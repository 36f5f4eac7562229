#!/bin/sh
# SPDX-License-Identifier: MIT
# Sourced by the tests of the library inside other people's processes: the subject
# program (process_prog.c), a private work directory, skip and fail.

prog=$top_builddir/tests/integration/process_prog
PATH=$PATH:/usr/sbin:/sbin
work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-process.XXXXXX") || exit 99
pids=""

cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# wait_nonempty FILE: waits up to 20 s for FILE to have a line.
wait_nonempty() {
	n=0
	while ! grep -q . "$1" 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -lt 400 ] || fail "$1 stayed empty"
		sleep 0.05
	done
}
