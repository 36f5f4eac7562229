#!/bin/sh
# SPDX-License-Identifier: MIT
# kill -9: a killed process's store is dropped by the next read; a killed daemon
# leaves a dead mount that the next one recovers. Also: plain allocinfod detaches,
# --mode is applied, SIGTERM stops the detached daemon cleanly.
. "$top_srcdir/tests/integration/daemon_lib.sh"

start_daemon
start_hold "$HOLD" hold 2; A1=$LAST_PID
start_hold "$HOLD" hold 3; A2=$LAST_PID
LB=$(line_of blocks)

# 1. A process killed with kill -9 leaves its store behind; the next read drops it.
kill -KILL "$A2"
wait "$A2" 2>/dev/null
[ -e "$ALLOCINFO_STORE_DIR/allocinfo-$A2" ] || fail "kill -9 removed the store itself?"
cat "$LINK" >"$T/all" || fail "cannot read $LINK"
check_report "$T/all" || fail "report malformed"
grep -Fqx "$(row 2000 2 "$LB" daemon_hold hold)" "$T/all" || fail "the killed process is still counted"
[ ! -e "$ALLOCINFO_STORE_DIR/allocinfo-$A2" ] || fail "the store of the killed process is still there"
[ ! -e "$MNT/$A2" ] || fail "$MNT/$A2 still exists"
grep -q "removed store of a dead process: .*allocinfo-$A2" "$DAEMON_LOG" || fail "removal not logged"

# 2. The daemon killed with kill -9: its mount is dead (ENOTCONN) and its link stays.
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
if cat "$LINK" >/dev/null 2>&1; then fail "the dead daemon's mount still answers"; fi
mounted "$MNT" || fail "no stale mount to recover"

# ... and the next one recovers the mount and replaces the link; --mode applies.
start_daemon --mode 0444
grep -q "stale mount" "$DAEMON_LOG" || fail "the stale mount was not noticed"
cat "$LINK" >"$T/all" || fail "cannot read $LINK after a restart"
check_report "$T/all" || fail "report malformed after a restart"
grep -Fqx "$(row 2000 2 "$LB" daemon_hold hold)" "$T/all" || fail "wrong report after a restart"
[ "$(stat -c %a "$MNT/allocinfo")" = 444 ] || fail "--mode 0444 not applied"
[ "$(stat -c %a "$MNT/$A1")" = 444 ] || fail "--mode 0444 not applied to $A1"
[ "$(mount_count "$MNT")" = 1 ] || fail "mounts stacked up"
stop_daemon
not_mounted "$MNT" || fail "$MNT still mounted after SIGTERM"
[ ! -L "$LINK" ] || fail "$LINK left behind after SIGTERM"

# 3. Without -f allocinfod detaches: it returns once serving, in a session of its own.
"$ALLOCINFOD" --mountpoint "$MNT" --link "$LINK" --store-dir "$ALLOCINFO_STORE_DIR" \
	--pid-file "$T/pid" </dev/null >"$T/detach.out" 2>&1 || fail "allocinfod failed: $(cat "$T/detach.out")"
DAEMON_PID=$(cat "$T/pid") || fail "no pid file"
[ -s "$T/detach.out" ] && fail "a detached daemon wrote: $(cat "$T/detach.out")"
alive "$DAEMON_PID" || fail "the detached daemon is not running"
[ "$(ps -o sid= -p "$DAEMON_PID" | tr -d ' ')" = "$DAEMON_PID" ] || fail "not a session leader"
[ "$(readlink "/proc/$DAEMON_PID/cwd")" = / ] || fail "not in /"
cat "$LINK" >"$T/all" || fail "cannot read $LINK from the detached daemon"
grep -Fqx "$(row 2000 2 "$LB" daemon_hold hold)" "$T/all" || fail "wrong report from the detached daemon"
# A second daemon on the same mountpoint is refused.
if "$ALLOCINFOD" -f --mountpoint "$MNT" --no-link --store-dir "$ALLOCINFO_STORE_DIR" 2>"$T/second"; then
	fail "a second daemon mounted over the first"
fi
grep -q "already served" "$T/second" || fail "second daemon: $(cat "$T/second")"
kill -TERM "$DAEMON_PID"
wait_for 10 dead "$DAEMON_PID" || fail "the detached daemon ignored SIGTERM"
DAEMON_PID=
wait_for 5 not_mounted "$MNT" || fail "$MNT still mounted"
[ ! -L "$LINK" ] || fail "$LINK left behind"
[ ! -e "$T/pid" ] || fail "pid file left behind"
exit 0
