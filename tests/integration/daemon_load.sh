#!/bin/sh
# SPDX-License-Identifier: MIT
# Reads under load: while four processes allocate and free as fast as they can, a
# thousand reads of the combined file are all well-formed reports (the two header
# lines, every row in the kernel's format, no negative count).
. "$top_srcdir/tests/integration/daemon_lib.sh"

READS=${DAEMON_LOAD_READS:-1000}
start_daemon
# At the lowest priority: they still run whenever a CPU is free, so they write while
# the daemon reads, but on two CPUs the reads are not starved and the test stays short.
for i in 1 2 3 4; do
	start_hold nice -n 19 "$HOLD" churn
done
LA=$(line_of churn_a) LB=$(line_of churn_b)

# Reads go into one file, each report followed by a separator line, then are
# checked in one pass: the reads themselves stay back to back.
i=0
while [ $i -lt "$READS" ]; do
	timeout 10 cat "$LINK" || { echo "@@read $i failed"; break; }
	echo "@@end"
	i=$((i + 1))
done >"$T/reads"

for p in $PIDS; do alive "$p" || fail "churning process $p died"; done
awk -v reads="$READS" -v sa=":$LA [daemon_hold] func:churn " -v sb=":$LB [daemon_hold] func:churn " '
	function fail(msg) { print "read " n + 1 ": " msg; bad = 1 }
	/^@@read/ { print; bad = 1; next }
	/^@@end$/ {
		if (line < 2) fail("no header")
		if (!a || !b) fail("the churning sites are missing")
		n++; line = 0; a = b = 0; next
	}
	{ line++ }
	line == 1 && $0 != "allocinfo - version: 2.0" { fail("bad header: " $0) }
	line == 2 && $0 != "#     <size>  <calls> <tag info>" { fail("bad header: " $0) }
	line > 2 && $0 !~ /^ *[0-9]+ +[0-9]+ [^ ]+:[0-9]+ \[[^ ]+\] func:[^ ]+( [a-z_]+:[^ ]+)* $/ {
		fail("bad row: " $0)
	}
	line > 2 && index($0, sa) { a = 1 }
	line > 2 && index($0, sb) { b = 1 }
	END {
		if (n != reads) { print "only " n " of " reads " reads"; bad = 1 }
		exit bad
	}' "$T/reads" >&2 || fail "malformed reads"
alive "$DAEMON_PID" || fail "allocinfod died"
exit 0
