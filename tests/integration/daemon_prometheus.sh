#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfod --metrics: /metrics has one series per process and call site, passes
# promtool, and a real Prometheus server (on loopback, with a private config and
# storage) scrapes it: its query API returns the exact live bytes of a known site.
. "$top_srcdir/tests/integration/daemon_lib.sh"

start_daemon --metrics 127.0.0.1:0
PORT=$(sed -n 's/.*metrics on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$DAEMON_LOG")
[ -n "$PORT" ] || fail "no metrics port in the log"
start_hold "$HOLD" hold 2; A1=$LAST_PID
start_hold "$HOLD" hold 3; A2=$LAST_PID
LB=$(line_of blocks)

# 1. The exposition: rows are not merged across processes.
"$HTTP" get "$PORT" /metrics >"$T/metrics" || fail "GET /metrics failed"
series() { # PID BYTES
	printf 'allocinfo_live_bytes{module="daemon_hold",file="%s",line="%d",func="hold",pid="%d",comm="daemon_hold"} %d\n' \
		"$SITE_FILE" "$LB" "$1" "$2"
}
grep -Fqx "$(series "$A1" 2000)" "$T/metrics" || fail "no series for $A1: $(cat "$T/metrics")"
grep -Fqx "$(series "$A2" 3000)" "$T/metrics" || fail "no series for $A2"
grep -q '^# TYPE allocinfo_live_bytes gauge$' "$T/metrics" || fail "no TYPE line"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$T/metrics" >&2 || fail "promtool check metrics"
fi
"$HTTP" get "$PORT" /nothing >/dev/null && fail "GET /nothing answered 200"

# 2. A real Prometheus server.
command -v prometheus >/dev/null 2>&1 || { echo "prometheus not installed: part 2 skipped" >&2; exit 0; }
PPORT=$("$HTTP" port) || fail "no free port"
cat >"$T/prometheus.yml" <<EOT
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: allocinfod
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOT
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$T/prometheus.log" 2>&1 &
PROM=$!
PIDS="$PIDS $PROM"

# allocinfo_live_bytes{line="LB",pid="A1"}, URL-encoded.
Q="/api/v1/query?query=allocinfo_live_bytes%7Bline%3D%22$LB%22%2Cpid%3D%22$A1%22%2Cmodule%3D%22daemon_hold%22%7D"
scraped() {
	"$HTTP" get "$PPORT" "$Q" >"$T/query" 2>/dev/null &&
		grep -q '"value":\[[0-9.]*,"2000"\]' "$T/query"
}
if ! wait_for 45 scraped; then
	cat "$T/prometheus.log" >&2
	fail "Prometheus did not return 2000 bytes: $(cat "$T/query" 2>/dev/null)"
fi
# Exactly one series answers, and it names the call site.
grep -q "\"file\":\"$SITE_FILE\"" "$T/query" || fail "series without its file: $(cat "$T/query")"
[ "$(grep -o '"value"' "$T/query" | wc -l)" = 1 ] || fail "more than one series: $(cat "$T/query")"
stop_pid "$PROM"
exit 0
