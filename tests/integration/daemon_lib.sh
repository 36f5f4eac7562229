# SPDX-License-Identifier: MIT
# Sourced by the allocinfod tests: skips without root or /dev/fuse, and provides a
# private temp dir, the daemon on a private mountpoint, instrumented processes,
# bounded waits, and a trap that stops everything started here.
#
#   T       private temp dir          MNT   the daemon's mountpoint (T/mnt)
#   LINK    the symlink to MNT/allocinfo (T/allocinfo), as /run/allocinfo would be
#   ALLOCINFOD  the daemon built here;  HOLD, HOLD_B, HTTP  the test programs
#   SRC         daemon_hold.c

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "allocinfod tests need root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
: "${ALLOCINFO_STORE_DIR:?run the test through tests/run-test.sh}"
: "${top_srcdir:?}" "${top_builddir:?}"
ALLOCINFOD=$top_builddir/tools/allocinfod
[ -x "$ALLOCINFOD" ] || skip "allocinfod was not built (no libfuse3)"

HOLD=$top_builddir/tests/integration/daemon_hold
HOLD_B=$top_builddir/tests/integration/daemon_hold_b
HTTP=$top_builddir/tests/integration/daemon_http
SRC=$top_srcdir/tests/integration/daemon_hold.c
T=$(mktemp -d "${TMPDIR:-/tmp}/allocinfod-test.XXXXXX") || exit 99
MNT=$T/mnt
LINK=$T/allocinfo
PIDS=
DAEMON_PID=
DAEMON_LOG=
NSTARTS=0
HEADER='allocinfo - version: 2.0
#     <size>  <calls> <tag info>'

# wait_for SECONDS COMMAND...: true once COMMAND succeeds, false after SECONDS.
wait_for() {
	_n=$(($1 * 20))
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		_n=$((_n - 1))
	done
	return 1
}

alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
# mount_count DIR: how many allocinfod filesystems are mounted on DIR.
mount_count() {
	awk -v dir="$1" '{
		for (i = 7; i <= NF && $i != "-"; i++) ;
		if ($5 == dir && $(i + 1) == "fuse.allocinfod") n++
	} END { print n + 0 }' /proc/self/mountinfo
}
mounted() { [ "$(mount_count "$1")" -gt 0 ]; }
not_mounted() { ! mounted "$1"; }

# stop_pid PID: SIGTERM, then SIGKILL after 10 s; reaps it when it is our child.
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	wait_for 10 dead "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# start_daemon [OPTION]...: allocinfod -f on MNT with LINK; waits until it serves.
start_daemon() {
	NSTARTS=$((NSTARTS + 1))
	DAEMON_LOG=$T/daemon.$NSTARTS.log
	"$ALLOCINFOD" -f --mountpoint "$MNT" --link "$LINK" \
		--store-dir "$ALLOCINFO_STORE_DIR" "$@" 2>"$DAEMON_LOG" &
	DAEMON_PID=$!
	if ! wait_for 20 grep -qs "serving" "$DAEMON_LOG"; then
		if dead "$DAEMON_PID" && grep -q "cannot mount" "$DAEMON_LOG"; then
			cat "$DAEMON_LOG" >&2
			skip "FUSE cannot be mounted here"
		fi
		cat "$DAEMON_LOG" >&2
		fail "allocinfod did not start"
	fi
}

stop_daemon() {
	[ -n "$DAEMON_PID" ] || return 0
	stop_pid "$DAEMON_PID"
	DAEMON_PID=
}

# start_hold PROGRAM ARG...: starts an instrumented process and waits until it is
# ready. Sets LAST_PID, and SITE_FILE (its tags' file name).
start_hold() {
	NHOLD=$((${NHOLD:-0} + 1))
	_out=$T/hold.$NHOLD
	"$@" >"$_out" &
	LAST_PID=$!
	PIDS="$PIDS $LAST_PID"
	wait_for 20 grep -qs "^ready " "$_out" || fail "$* did not start"
	set -- $(cat "$_out")
	[ "$2" = "$LAST_PID" ] || fail "started $LAST_PID, but it says it is $2"
	SITE_FILE=$3
}

# line_of NAME: the line of daemon_hold.c marked "site:NAME".
line_of() {
	grep -n "site:$1 \*/" "$SRC" | cut -d: -f1
}

# row BYTES CALLS LINE MODULE FUNC: a report line as the kernel prints it.
row() {
	printf '%12d %8d %s:%d [%s] func:%s \n' "$1" "$2" "$SITE_FILE" "$3" "$4" "$5"
}

# ours FILE: the report's header and the rows of daemon_hold and daemon_hold_b (the
# others come from libraries, e.g. libstdc++'s start-up allocations, which vary).
ours() {
	awk 'NR <= 2 || / \[daemon_hold(_b)?\] func:/' "$1"
}

# sum_rows FILE...: the rows of several reports, equal tag info summed, sorted.
sum_rows() {
	awk 'FNR > 2 {
		key = $0
		sub(/^ *[0-9]+ +[0-9]+ /, "", key)
		b[key] += $1; c[key] += $2
	}
	END { for (k in b) printf "%12d %8d %s\n", b[k], c[k], k }' "$@" | LC_ALL=C sort
}

# check_report FILE: exactly the two header lines, then rows in the kernel's format.
check_report() {
	awk -v h1='allocinfo - version: 2.0' -v h2='#     <size>  <calls> <tag info>' '
		NR == 1 && $0 != h1 { print "bad header 1: " $0; bad = 1 }
		NR == 2 && $0 != h2 { print "bad header 2: " $0; bad = 1 }
		NR > 2 && $0 !~ /^ *[0-9]+ +[0-9]+ [^ ]+:[0-9]+ \[[^ ]+\] func:[^ ]+( [a-z_]+:[^ ]+)* $/ {
			print "bad row " NR ": " $0; bad = 1 }
		END { if (NR < 2) { print "no header"; bad = 1 } exit bad }' "$1" >&2
}

cleanup() {
	_rc=$?
	trap - EXIT INT TERM HUP
	for _p in $PIDS; do kill -TERM "$_p" 2>/dev/null; done
	stop_daemon
	for _p in $PIDS; do kill -KILL "$_p" 2>/dev/null; done
	wait 2>/dev/null
	if mounted "$MNT"; then
		umount -l "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT" 2>/dev/null
	fi
	# Under a sanitizer build the daemon's reports land in its log.
	if [ "$_rc" = 0 ] && cat "$T"/daemon.*.log 2>/dev/null | grep -q "Sanitizer"; then
		echo "FAIL: a sanitizer reported in allocinfod's log" >&2
		_rc=1
	fi
	if [ "$_rc" != 0 ] && [ "$_rc" != 77 ]; then
		for _f in "$T"/daemon.*.log; do
			[ -s "$_f" ] && { echo "--- $_f"; cat "$_f"; } >&2
		done
	fi
	rm -rf "$T"
	exit "$_rc"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP
