#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfod facing another user's processes and files (as root, with the real
# user nobody): a program of nobody's whose debug link names a FIFO does not stall
# the daemon; an execute-only program of root's run by nobody is shown by address
# in its own file; nobody's lines stay apart (" user:nobody"); and /metrics gives
# nobody only the series of nobody's processes (the files' mode 0400 says so), and
# root every process's.
. "$top_srcdir/tests/integration/daemon_lib.sh"
id nobody >/dev/null 2>&1 || skip "no user nobody"
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || skip "LD_PRELOAD under a sanitizer"
command -v setpriv >/dev/null || skip "no setpriv"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler"
LIB=$(readlink -f "$top_builddir/lib/.libs/liballocinfo.so")
[ -f "$LIB" ] || skip "no shared liballocinfo"

chmod 755 "$T"
chmod 1777 "$ALLOCINFO_STORE_DIR"
mkdir -m 755 "$T/bin" && chown nobody "$T/bin"
cp "$LIB" "$T/liballocinfo.so" && cp "$HTTP" "$T/http" && chmod 755 "$T/liballocinfo.so" "$T/http" ||
	exit 99
NOBODY="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"

build() {	# OUT CFLAGS...
	out=$1
	shift
	"$CC" -O1 -fno-inline -o "$out" "$top_srcdir/tests/integration/nobody_prog.c" "$@" || exit 99
}
run() {	# AS PROG: sets PID once its store is published
	rm -f "$T/bin/ready"
	$1 env ALLOCINFO_STORE=shm LD_PRELOAD="$T/liballocinfo.so" "$2" "$T/bin/ready" &
	PIDS="$PIDS $!"
	wait_for 10 test -s "$T/bin/ready" || fail "$2 did not start"
	PID=$(cat "$T/bin/ready")
	wait_for 10 test -s "$ALLOCINFO_STORE_DIR/allocinfo-$PID" || fail "$2: no store"
}
line() {	# BYTES CALLS FILE:LINE MODULE FUNC [TOKEN]
	printf '%12s %8s %s [%s] func:%s%s \n' "$1" "$2" "$3" "$4" "$5" "${6:+ $6}"
}

start_daemon --metrics 127.0.0.1:0
PORT=$(sed -n 's/.*metrics on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$DAEMON_LOG")
start_hold "$HOLD" hold 2; A1=$LAST_PID
LB=$(line_of blocks)

# 1. A debug link naming a FIFO.
build "$T/bin/prog_fifo"
cp "$T/bin/prog_fifo" "$T/bin/prog_fifo.debug"
objcopy --add-gnu-debuglink="$T/bin/prog_fifo.debug" "$T/bin/prog_fifo" || exit 99
rm "$T/bin/prog_fifo.debug" && mkfifo "$T/bin/prog_fifo.debug" && chown -R nobody "$T/bin"
run "$NOBODY" "$T/bin/prog_fifo"
FIFO=$PID

# 2. Execute-only, root's.
build "$T/bin/prog_xo" && chmod 0711 "$T/bin/prog_xo"
run "$NOBODY" "$T/bin/prog_xo"
XO=$PID

for f in "$LINK" "$MNT/$FIFO" "$MNT/$XO"; do
	timeout 20 cat "$f" > "$T/out" || fail "cat $f: $? (124: it blocked)"
	check_report "$T/out" || fail "$f malformed"
done
timeout 20 cat "$LINK" > "$T/all"
line 3000 2 "??:0" prog_fifo hold user:nobody > "$T/want"
grep -F '[prog_fifo]' "$T/all" | cmp -s "$T/want" - || fail "combined: $(grep -F prog_fifo "$T/all")"
grep -Fqx "$(row 2000 2 "$LB" daemon_hold hold)" "$T/all" || fail "combined: root's line"
timeout 20 cat "$MNT/$XO" | grep -F '[prog_xo]' > "$T/got"
grep -Eqx ' +3000 +2 \?\?:0 \[prog_xo\] func:0x[0-9a-f]+ user:nobody ' "$T/got" ||
	fail "$MNT/$XO: $(cat "$T/got")"

# 3. /metrics: everything for root; nobody's processes only for nobody.
timeout 20 "$T/http" get "$PORT" /metrics > "$T/root.metrics" || fail "GET /metrics as root"
for p in "$A1" "$FIFO" "$XO"; do
	grep -q "pid=\"$p\"" "$T/root.metrics" || fail "root's /metrics without $p"
done
timeout 20 $NOBODY "$T/http" get "$PORT" /metrics > "$T/nobody.metrics" ||
	fail "GET /metrics as nobody"
grep -q "pid=\"$A1\"" "$T/nobody.metrics" && fail "nobody's /metrics shows root's process"
grep -Fqx "allocinfo_live_bytes{module=\"prog_fifo\",file=\"??\",line=\"0\",func=\"hold\",user=\"nobody\",pid=\"$FIFO\",comm=\"prog_fifo\"} 3000" \
	"$T/nobody.metrics" || fail "nobody's /metrics: $(grep prog_fifo "$T/nobody.metrics")"
pids=$(grep -o 'pid="[0-9]*"' "$T/nobody.metrics" | sort -u | tr '\n' ' ')
[ "$pids" = "$(printf 'pid="%s" ' $(echo "$FIFO $XO" | tr ' ' '\n' | sort))" ] ||
	fail "nobody's /metrics has $pids"
# And the files agree: nobody can read its process's file, not the combined one.
$NOBODY cat "$MNT/$FIFO" > /dev/null || fail "nobody cannot read $MNT/$FIFO"
if $NOBODY cat "$LINK" > /dev/null 2>&1; then fail "nobody can read $LINK"; fi
alive "$DAEMON_PID" || fail "allocinfod died"
exit 0
