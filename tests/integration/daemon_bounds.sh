#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfod keeps nothing of a store once it is gone: after reading a store of
# 65,534 tags (and its 65,534 lines) and seeing its process exit, the daemon's
# resident memory is back within 16 MiB of what it was before; a 2 GiB store of
# 1,048,574 tags is refused (problems file) without growing it either; a store
# slow to name is named within the budget, and the problems file says so.
. "$top_srcdir/tests/integration/daemon_lib.sh"
FORGE=$top_builddir/tests/integration/cli_forge

rss_kb() { awk '/^VmRSS:/ { print $2 }' /proc/$DAEMON_PID/status; }
sleeper() {
	sleep 120 &
	LAST_PID=$!
	PIDS="$PIDS $LAST_PID"
	wait_for 10 sh -c "[ \"\$(readlink /proc/$LAST_PID/exe)\" = \"$(command -v sleep | xargs readlink -f)\" ]" ||
		fail "sleep did not start"
}

start_daemon
timeout 20 cat "$LINK" > /dev/null || fail "first read"
before=$(rss_kb)
sleeper; big=$LAST_PID
"$FORGE" big "$ALLOCINFO_STORE_DIR/allocinfo-$big" $big 65534 16 || exit 99
sleeper; huge=$LAST_PID
"$FORGE" big "$ALLOCINFO_STORE_DIR/allocinfo-$huge" $huge 1048574 125 || exit 99
timeout 60 cat "$LINK" > "$T/all" || fail "read with the big stores"
[ "$(grep -c " \[big-$big\] func:big $" "$T/all")" = 65534 ] || fail "not 65,534 lines of the big store"
timeout 60 cat "$MNT/problems" > "$T/problems" || fail "problems"
grep -qx "$ALLOCINFO_STORE_DIR/allocinfo-$huge: implausible sizes" "$T/problems" ||
	fail "problems: $(cat "$T/problems")"
during=$(rss_kb)
kill "$big" "$huge"
wait_for 10 dead "$big" || fail "sleep did not die"
for i in 1 2 3; do timeout 20 cat "$LINK" > "$T/all" || fail "read after"; done
after=$(rss_kb)
echo "VmRSS: $before kB before, $during kB with the big store, $after kB after" >&2
# (A sanitizer's allocator keeps freed memory in quarantine: nothing to measure.)
[ "${ALLOCINFO_SANITIZER:-no}" != no ] || [ $((after - before)) -lt 16384 ] ||
	fail "the daemon kept $((after - before)) kB"

# A store slow to name costs its own lines only: 65,000 caller tags over 100 large
# objects (see cli_budget.sh) spend the naming budget of a read, the rest are shown
# unnamed, and the problems file says so.
mods=
n=0
for m in $(find /usr/lib/x86_64-linux-gnu /usr/lib /usr/bin /usr/libexec -maxdepth 2 \
		-type f -size +2M 2>/dev/null | sort); do
	[ "$(head -c 4 "$m" | tr -d '\0')" = "$(printf '\177ELF')" ] || continue
	mods="$mods $m"
	n=$((n + 1))
	[ $n -lt 100 ] || break
done
if [ $n = 100 ]; then
	sleeper; slow=$LAST_PID
	"$FORGE" callers "$ALLOCINFO_STORE_DIR/allocinfo-$slow" $slow 65000 $mods || exit 99
	start_hold "$HOLD" hold 2
	timeout 60 cat "$LINK" > "$T/all" || fail "read with the slow store"
	grep -Fqx "$(row 2000 2 "$(line_of blocks)" daemon_hold hold)" "$T/all" ||
		fail "daemon_hold's line with the slow store"
	timeout 60 cat "$MNT/problems" > "$T/problems" || fail "problems"
	grep -Eqx "$ALLOCINFO_STORE_DIR/allocinfo-$slow: naming its caller tags took over 2000 ms: [0-9]+ shown unnamed" \
		"$T/problems" || fail "problems: $(cat "$T/problems")"
fi
exit 0
