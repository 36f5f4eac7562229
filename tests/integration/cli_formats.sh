#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo --json (parsed, exact values), --prometheus (exact series; promtool
# check metrics when promtool is installed) and --pprof (go tool pprof -top shows
# each site's exact live bytes when go is installed).
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
start b cli_prog 4
start c cli_other 5
send a 3 grow
send c 5 shrink
f=$a_file

# ---- JSON ----------------------------------------------------------------------
command -v python3 > /dev/null || fail "python3 is needed"
allocinfo --json > "$tmp/all.json" || fail "--json"
allocinfo --json -p "$a_pid" > "$tmp/a.json" || fail "--json -p"
python3 - "$tmp/all.json" "$tmp/a.json" "$f" "$a_pid" <<'EOF' || fail "JSON"
import json, sys
allj, aj, f, apid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def site(module, line, func, b, c, **extra):
    d = {"module": module, "file": f, "line": line, "func": func, "bytes": b,
         "calls": c, "unloaded": False, "accurate": True}
    d.update(extra)
    return d

def ours(doc):
    return [s for s in doc["sites"] if s["module"] in ("cli_prog", "cli_other")]

doc = json.load(open(allj))
assert doc["version"] == "2.0", doc
assert "pid" not in doc, "summed over processes: no pid"
want = [
    site("cli_other", 54, "initial", 300, 3),
    site("cli_other", 56, "initial", 1024, 1),
    site("cli_other", 57, "initial", 0, 0),
    site("cli_other", 63, "grow", 0, 0),
    site("cli_prog", 54, "initial", 600, 6),
    site("cli_prog", 56, "initial", 2048, 2),
    site("cli_prog", 57, "initial", 12, 2),
    site("cli_prog", 63, "grow", 2000, 2),
]
got = ours(doc)
assert got == want, "all processes:\n%s\nwanted\n%s" % (got, want)

doc = json.load(open(aj))
assert doc["pid"] == apid, doc
kw = {"pid": apid, "comm": "cli_prog"}
want = [
    site("cli_prog", 54, "initial", 300, 3, **kw),
    site("cli_prog", 56, "initial", 1024, 1, **kw),
    site("cli_prog", 57, "initial", 6, 1, **kw),
    site("cli_prog", 63, "grow", 2000, 2, **kw),
]
got = ours(doc)
assert got == want, "-p:\n%s\nwanted\n%s" % (got, want)
EOF

# ---- Prometheus ----------------------------------------------------------------
allocinfo --prometheus > "$tmp/metrics" || fail "--prometheus"
series() {	# metric pid comm module line func value
	printf '%s{module="%s",file="%s",line="%s",func="%s",pid="%s",comm="%s"} %s\n' \
		"$1" "$4" "$f" "$5" "$6" "$2" "$3" "$7"
}
# Per process: a and b are separate series, not summed.
{
	series allocinfo_live_bytes "$a_pid" cli_prog cli_prog $LINE_MALLOC initial 300
	series allocinfo_live_bytes "$a_pid" cli_prog cli_prog $LINE_GROW grow 2000
	series allocinfo_live_bytes "$b_pid" cli_prog cli_prog $LINE_MALLOC initial 300
	series allocinfo_live_bytes "$b_pid" cli_prog cli_prog $LINE_GROW grow 0
	series allocinfo_live_bytes "$c_pid" cli_other cli_other $LINE_STRDUP initial 0
	series allocinfo_live_allocations "$a_pid" cli_prog cli_prog $LINE_MALLOC initial 3
	series allocinfo_live_allocations "$a_pid" cli_prog cli_prog $LINE_GROW grow 2
	series allocinfo_live_allocations "$c_pid" cli_other cli_other $LINE_CALLOC initial 1
} > "$tmp/want"
while IFS= read -r line; do
	grep -qxF "$line" "$tmp/metrics" || { cat "$tmp/metrics"; fail "no series: $line"; }
done < "$tmp/want"
for t in allocinfo_live_bytes allocinfo_live_allocations; do
	grep -qx "# TYPE $t gauge" "$tmp/metrics" || fail "no TYPE line for $t"
	[ "$(grep -c "^$t{.*module=\"cli_" "$tmp/metrics")" -eq 12 ] || fail "$t: 12 series expected"
done
if command -v promtool > /dev/null; then
	promtool check metrics < "$tmp/metrics" || fail "promtool check metrics"
else
	echo "promtool not installed: its check is skipped"
fi

# ---- pprof ---------------------------------------------------------------------
allocinfo -p "$a_pid" --pprof "$tmp/a.pb.gz" > "$tmp/out" || fail "--pprof"
[ -s "$tmp/out" ] && fail "--pprof FILE prints nothing"
gzip -t "$tmp/a.pb.gz" || fail "--pprof: not gzip"
allocinfo -p "$a_pid" --pprof - | gzip -t || fail "--pprof -"
allocinfo --pprof "$tmp/no/such/dir/x.pb.gz" 2> "$tmp/err"
[ $? -eq 1 ] || fail "--pprof to an impossible path should exit with 1"
grep -q "^allocinfo: $tmp/no/such/dir/x.pb.gz: " "$tmp/err" || fail "message: $(cat "$tmp/err")"
if command -v go > /dev/null; then
	HOME=$tmp GOCACHE=$tmp/gocache PPROF_TMPDIR=$tmp GOFLAGS= \
		go tool pprof -top -lines -nodefraction=0 -unit=B -sample_index=inuse_space \
		"$tmp/a.pb.gz" > "$tmp/top" 2> "$tmp/err" || { cat "$tmp/err"; fail "go tool pprof"; }
	for want in "300B $LINE_MALLOC initial" "1024B $LINE_CALLOC initial" \
		    "6B $LINE_STRDUP initial" "2000B $LINE_GROW grow"; do
		set -- $want
		grep -qE "^ *$1 .* $3 $(printf '%s' "$f" | sed 's/[.[\*^$]/\\&/g'):$2\$" "$tmp/top" ||
			{ cat "$tmp/top"; fail "go tool pprof -top: no line for $want"; }
	done
	HOME=$tmp GOCACHE=$tmp/gocache PPROF_TMPDIR=$tmp \
		go tool pprof -top -lines -nodefraction=0 -sample_index=inuse_objects \
		"$tmp/a.pb.gz" > "$tmp/top" 2>&1 || fail "go tool pprof (objects)"
	grep -qE "^ *3 .* initial .*:$LINE_MALLOC\$" "$tmp/top" || { cat "$tmp/top"; fail "objects"; }
	grep -qE "^ *2 .* grow .*:$LINE_GROW\$" "$tmp/top" || { cat "$tmp/top"; fail "objects"; }
else
	echo "go not installed: go tool pprof is skipped"
fi
echo "ok"
