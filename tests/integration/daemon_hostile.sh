#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile stores and hostile HTTP clients: corrupt, truncated, oversized and odd
# files (the fuzz corpus among them) named for live processes never crash or hang
# allocinfod. Reads still work, show the good process exactly, and the bad stores
# are named in the log and in the problems file. Bad requests get errors.
. "$top_srcdir/tests/integration/daemon_lib.sh"

start_daemon --metrics 127.0.0.1:0
PORT=$(sed -n 's/.*metrics on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$DAEMON_LOG")
start_hold "$HOLD" hold 2; A1=$LAST_PID
LB=$(line_of blocks)
S=$ALLOCINFO_STORE_DIR
STORE=$S/allocinfo-$A1

# A live process to lend its pid to each bad store (a dead pid's store is only stale).
# Never the pid the fuzz corpus's stores claim (h.pid in tests/fuzz/gen_corpus.cpp):
# there a corpus store would claim its own pid, and the daemon, seeing that process
# start at another time, would rightly remove it as a dead process's store.
CORPUS_PID=4242
lend_pid() {
	sleep 60 &
	LENT=$!
	PIDS="$PIDS $LENT"
	[ "$LENT" != "$CORPUS_PID" ] || lend_pid
}
# BAD: pids of the bad stores; an empty file is a store being created, skipped
# without a word (SILENT).
BAD=
SILENT=
bad_store() { # COMMAND...: writes the store at the path appended
	lend_pid
	"$@" "$S/allocinfo-$LENT"
	if [ -f "$S/allocinfo-$LENT" ] && [ ! -L "$S/allocinfo-$LENT" ] &&
	   [ ! -s "$S/allocinfo-$LENT" ]; then
		SILENT="$SILENT $LENT"
	else
		BAD="$BAD $LENT"
	fi
}
garbage() { head -c 4096 /dev/urandom >"$1"; }
truncated_header() { head -c 100 "$STORE" >"$1"; }
truncated_tags() { head -c 5000 "$STORE" >"$1"; }
oversized() { truncate -s 3G "$1"; }
other_pid() { cp "$STORE" "$1"; }
fifo() { mkfifo "$1"; }
directory() { mkdir "$1"; }
link_to_store() { ln -s "$STORE" "$1"; }
link_to_zero() { ln -s /dev/zero "$1"; }
for how in garbage truncated_header truncated_tags oversized other_pid fifo directory \
	   link_to_store link_to_zero; do
	bad_store "$how"
done
for f in "$top_srcdir"/tests/fuzz/corpus/*; do
	bad_store cp "$f"
done

# The good process, exactly; every read bounded in time.
for file in "$LINK" "$MNT/$A1"; do
	timeout 20 cat "$file" >"$T/all" || fail "cannot read $file"
	check_report "$T/all" || fail "$file malformed"
	grep -Fqx "$(row 2000 2 "$LB" daemon_hold hold)" "$T/all" || fail "$file: wrong report"
	[ "$(grep -c '\[daemon_hold\]' "$T/all")" = 5 ] || fail "$file: other rows of daemon_hold"
done
# Every bad store named in the problems file and the log.
timeout 20 cat "$MNT/problems" >"$T/problems" || fail "cannot read problems"
for p in $BAD; do
	grep -q "^$S/allocinfo-$p: " "$T/problems" || fail "allocinfo-$p not named in problems"
	grep -q "skipping store $S/allocinfo-$p: " "$DAEMON_LOG" || fail "allocinfo-$p not logged"
	[ ! -e "$MNT/$p" ] || fail "$MNT/$p is served"
	if timeout 20 cat "$MNT/$p" >/dev/null 2>&1; then fail "$MNT/$p can be read"; fi
done
[ "$(grep -c . "$T/problems")" = "$(echo $BAD | wc -w)" ] || fail "problems: $(cat "$T/problems")"
for p in $SILENT; do
	[ ! -e "$MNT/$p" ] || fail "$MNT/$p (an empty store) is served"
done
# The log names each bad store once, not on every read.
timeout 20 cat "$LINK" >/dev/null || fail "cannot read $LINK again"
p=${BAD# }; p=${p%% *}
[ "$(grep -c "skipping store $S/allocinfo-$p: " "$DAEMON_LOG")" = 1 ] || fail "logged again"
timeout 20 "$HTTP" get "$PORT" /metrics >"$T/metrics" || fail "GET /metrics with bad stores"
grep -q "pid=\"$A1\"" "$T/metrics" || fail "metrics without $A1"

# Hostile HTTP: garbage, an oversized request, another method; then a good request.
answer() { timeout 20 "$HTTP" raw "$PORT" | head -1 | tr -d '\r'; }
[ "$(printf 'garbage\r\n\r\n' | answer)" = "HTTP/1.0 400 Bad Request" ] || fail "garbage request"
[ "$(head -c 20000 /dev/zero | tr '\0' a | answer)" = "HTTP/1.0 431 Request Header Fields Too Large" ] ||
	fail "oversized request"
[ "$(printf 'POST /metrics HTTP/1.0\r\n\r\n' | answer)" = "HTTP/1.0 405 Method Not Allowed" ] ||
	fail "POST request"
[ "$(printf 'GET /metrics HTTP/1.0\r\n\r\n' | answer)" = "HTTP/1.0 200 OK" ] || fail "good request"
alive "$DAEMON_PID" || fail "allocinfod died"
# A --metrics address that is not loopback is refused.
if "$ALLOCINFOD" -f --mountpoint "$T" --no-link --metrics 192.0.2.1:9 2>"$T/remote"; then
	fail "a non-loopback --metrics was accepted"
fi
grep -q "not a loopback address" "$T/remote" || fail "non-loopback: $(cat "$T/remote")"
exit 0
