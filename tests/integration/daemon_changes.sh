#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfod keeps what the tags of an unchanged store come to from one read of the
# combined file to the next, and reads only the counters again: every read must
# still be what a fresh reader (allocinfo) prints, while processes add caller tags,
# allocate and free at known sites, start and exit between reads.
. "$top_srcdir/tests/integration/daemon_lib.sh"

PROG=$top_builddir/tests/integration/cli_prog
OTHER=$top_builddir/tests/integration/cli_other
ALLOCINFO=$top_builddir/tools/allocinfo
[ -x "$PROG" ] && [ -x "$OTHER" ] && [ -x "$ALLOCINFO" ] || skip "test programs not built"
export ALLOCINFO_SYMBOL_CACHE=0

# start_prog NAME PROGRAM FD: PROGRAM with its commands on FD (see cli_prog.c).
start_prog() {
	mkfifo "$T/$1.in" || exit 99
	"$2" <"$T/$1.in" >"$T/$1.out" &
	PIDS="$PIDS $!"
	eval "exec $3>\"\$T/\$1.in\""
	wait_for 20 grep -qs '^file ' "$T/$1.out" || fail "$2 did not start"
	eval "$1_pid=\$(sed -n 's/^ready //p' \"\$T/\$1.out\")"
}

# acks NAME COMMAND: how many times NAME has acknowledged COMMAND.
acks() { grep -c "^ok $2\$" "$T/$1.out"; }
more_acks() { [ "$(acks "$1" "$2")" -gt "$3" ]; }

# send NAME FD COMMAND: sends COMMAND and waits for its acknowledgement.
send() {
	_before=$(acks "$1" "$3")
	echo "$3" >&"$2"
	wait_for 10 more_acks "$1" "$3" "$_before" || fail "$1 did not answer '$3'"
}

# same_as_fresh STEP: the combined file, read a few times, is allocinfo's report.
same_as_fresh() {
	"$ALLOCINFO" >"$T/want" 2>/dev/null || fail "$1: allocinfo failed"
	for _i in 1 2 3; do
		cat "$LINK" >"$T/got" || fail "$1: cannot read $LINK"
		diff -u "$T/want" "$T/got" >&2 || fail "$1: read $_i differs from allocinfo's"
	done
}

start_daemon
start_prog a "$PROG" 5
same_as_fresh "one process"
send a 5 untagged		# a caller tag: a new tag slot
grep -q " func:untagged_alloc $" "$LINK" || fail "the new caller tag is missing"
same_as_fresh "a new caller tag"
send a 5 grow			# counters only
same_as_fresh "grown"
send a 5 shrink
same_as_fresh "shrunk"
start_prog b "$OTHER" 6
same_as_fresh "a second program"
send b 6 untagged
send a 5 grow
same_as_fresh "both changed"
echo exit >&5			# exits without an answer
wait_for 10 dead "$a_pid" || fail "cli_prog did not exit"
same_as_fresh "the first one gone"
start_prog c "$PROG" 7		# the same program again, in a new process
send c 7 untagged
same_as_fresh "the program back"
echo "ok"
