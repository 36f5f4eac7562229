#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfod's files: two processes of one program and one of another. The combined
# file sums equal lines exactly and keeps different modules apart; each per-process
# file shows its process alone; a process that exits leaves the report.
. "$top_srcdir/tests/integration/daemon_lib.sh"

start_daemon
start_hold "$HOLD" hold 2; A1=$LAST_PID
start_hold "$HOLD" hold 3; A2=$LAST_PID
start_hold "$HOLD_B" hold 1; B=$LAST_PID
LB=$(line_of blocks) LT=$(line_of table) LN=$(line_of name)
LCA=$(line_of churn_a) LCB=$(line_of churn_b)

# The whole report of one process of daemon_hold (K blocks) or daemon_hold_b:
# every static tag of the program, in site order, idle ones with zeros.
report_of() { # MODULE K [MODULE K]...
	echo "$HEADER"
	while [ $# -gt 0 ]; do
		row $(($2 * 1000)) "$2" "$LB" "$1" hold
		row $(($3 * 1024)) "$3" "$LT" "$1" hold
		row $(($3 * 13)) "$3" "$LN" "$1" hold
		row 0 0 "$LCA" "$1" churn
		row 0 0 "$LCB" "$1" churn
		shift 3
	done
}

# 1. The combined file, through the symlink as /run/allocinfo: daemon_hold's lines
#    are the sums of both processes, daemon_hold_b's stay apart.
cat "$LINK" >"$T/all" || fail "cannot read $LINK"
check_report "$T/all" || fail "combined report malformed"
report_of daemon_hold 5 2 daemon_hold_b 1 1 >"$T/want"
ours "$T/all" | diff -u "$T/want" - >&2 || fail "combined report differs"

# 2. Each per-process file: that process alone.
for p in "$A1:daemon_hold:2" "$A2:daemon_hold:3" "$B:daemon_hold_b:1"; do
	pid=${p%%:*} rest=${p#*:}
	cat "$MNT/$pid" >"$T/p.$pid" || fail "cannot read $MNT/$pid"
	check_report "$T/p.$pid" || fail "$MNT/$pid malformed"
	report_of "${rest%:*}" "${rest#*:}" 1 >"$T/want"
	ours "$T/p.$pid" | diff -u "$T/want" - >&2 || fail "$MNT/$pid differs"
done
# Every row of the combined file, libraries' too, is the sum of the processes' rows.
sum_rows "$T/p.$A1" "$T/p.$A2" "$T/p.$B" >"$T/want"
tail -n +3 "$T/all" | LC_ALL=C sort | diff -u "$T/want" - >&2 ||
	fail "combined rows are not the sums of the per-process rows"

# 3. The directory lists the files; their mode is 0400 by default.
ls "$MNT" | sort >"$T/ls"
printf '%s\n' allocinfo problems "$A1" "$A2" "$B" | sort >"$T/want"
diff -u "$T/want" "$T/ls" >&2 || fail "directory listing differs"
[ "$(stat -c %a "$MNT/allocinfo")" = 400 ] || fail "mode of allocinfo is not 0400"
[ "$(stat -c %a "$MNT/$A1")" = 400 ] || fail "mode of $A1 is not 0400"
[ ! -s "$MNT/problems" ] || [ -z "$(cat "$MNT/problems")" ] || fail "problems: $(cat "$MNT/problems")"
if printf x 2>/dev/null >"$MNT/allocinfo"; then fail "allocinfo is writable"; fi

# 4. A process that exits leaves: daemon_hold_b entirely, then one daemon_hold.
stop_pid "$B"
cat "$LINK" >"$T/all" || fail "cannot read $LINK"
report_of daemon_hold 5 2 >"$T/want"
ours "$T/all" | diff -u "$T/want" - >&2 || fail "report after daemon_hold_b exited differs"
sum_rows "$T/p.$A1" "$T/p.$A2" >"$T/want"
tail -n +3 "$T/all" | LC_ALL=C sort | diff -u "$T/want" - >&2 ||
	fail "rows after daemon_hold_b exited are not the sums of the others"
[ ! -e "$MNT/$B" ] || fail "$MNT/$B still exists"
[ ! -e "$ALLOCINFO_STORE_DIR/allocinfo-$B" ] || fail "the store of $B is still there"
stop_pid "$A2"
cat "$LINK" >"$T/all" || fail "cannot read $LINK"
report_of daemon_hold 2 1 >"$T/want"
ours "$T/all" | diff -u "$T/want" - >&2 || fail "report after $A2 exited differs"
diff -u "$T/p.$A1" "$T/all" >&2 || fail "report after $A2 exited is not that of $A1"

# 5. SIGTERM: the daemon unmounts and removes its link.
stop_daemon
[ ! -e "$LINK" ] && [ ! -L "$LINK" ] || fail "$LINK left behind"
not_mounted "$MNT" || fail "$MNT still mounted"
exit 0
