#!/bin/sh
# SPDX-License-Identifier: MIT
# SIGINT stops allocinfod even when a script started it in the background, where
# the shell leaves SIGINT ignored: it unmounts, removes its link and exits 0.
. "$top_srcdir/tests/integration/daemon_lib.sh"

DAEMON_LOG=$T/daemon.1.log
# A non-interactive shell's background job: SIGINT ignored when it starts.
sh -c '"$1" -f --mountpoint "$2" --link "$3" --store-dir "$4" 2>"$5" &
	echo $! >"$6"
	wait' sh "$ALLOCINFOD" "$MNT" "$LINK" "$ALLOCINFO_STORE_DIR" "$DAEMON_LOG" "$T/pid" &
SHELL_PID=$!
wait_for 20 grep -qs "serving" "$DAEMON_LOG" || { cat "$DAEMON_LOG" >&2; fail "allocinfod did not start"; }
DAEMON_PID=$(cat "$T/pid")
# It started with SIGINT ignored, and must not have kept it so (bit 2 of SigIgn).
sigign=$(awk '/^SigIgn:/ { print $2 }' "/proc/$DAEMON_PID/status")
[ $((0x$sigign & 2)) = 0 ] || fail "allocinfod ignores SIGINT (SigIgn $sigign)"
kill -INT "$DAEMON_PID"
wait_for 10 dead "$DAEMON_PID" || fail "allocinfod did not stop on SIGINT"
wait "$SHELL_PID" || fail "allocinfod exited with status $?"
DAEMON_PID=
not_mounted "$MNT" || fail "$MNT is still mounted after SIGINT"
[ ! -e "$LINK" ] && [ ! -L "$LINK" ] || fail "$LINK is still there after SIGINT"
grep -q "stopping" "$DAEMON_LOG" || fail "no orderly stop in the log"
exit 0
