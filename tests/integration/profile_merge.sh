#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo -p PID --pprof OUT --profile FILE: the sampled stacks of the process's
# heap profile and allocinfo's exact totals of its sites (read now, from its store)
# in one profile, with the profile's own exact samples replaced, not doubled. A
# corrupt, truncated or foreign file gets one "allocinfo:" line and exit 1.
. "$top_srcdir/tests/integration/profile_lib.sh"
need_pprof
cli=$top_builddir/tools/allocinfo

mkfifo "$work/go"
ALLOCINFO_PROFILE=$work/h ALLOCINFO_PROFILE_SAMPLE_RATE=1 "$prog" hold "$work/go" \
	>"$work/out" 2>"$work/err" &
held=$!
n=0
while ! grep -q '^pid ' "$work/out"; do
	n=$((n + 1))
	[ $n -lt 400 ] || { : >"$work/go"; fail "the workload did not start: $(cat "$work/err")"; }
	sleep 0.05
done
pid=$(sed -n 's/^pid //p' "$work/out")
"$cli" -p "$pid" --pprof "$work/merged.pb.gz" --profile "$work/h.$pid.0.pb.gz" \
	2>"$work/cli.err"
rc=$?
: >"$work/go"
wait $held || fail "the workload failed: $(cat "$work/err")"
[ $rc = 0 ] && [ ! -s "$work/cli.err" ] || fail "allocinfo: exit $rc: $(cat "$work/cli.err")"

top=$(pprof_top "$work/merged.pb.gz" inuse_space)
printf '%s\n' "$top" | grep -qx '409600 work_a' && printf '%s\n' "$top" | grep -qx '50000 work_b' ||
	fail "merged inuse_space: $top"
top=$(pprof_top "$work/merged.pb.gz" alloc_objects)
printf '%s\n' "$top" | grep -qx '200 work_c' || fail "merged alloc_objects: $top"
top=$(pprof_top "$work/merged.pb.gz" exact_inuse_space)
printf '%s\n' "$top" | grep -qx '409600 work_a' && printf '%s\n' "$top" | grep -qx '50000 work_b' ||
	fail "merged exact_inuse_space (once, not twice): $top"
top=$(pprof_top "$work/merged.pb.gz" exact_inuse_objects)
printf '%s\n' "$top" | grep -qx '100 work_a' || fail "merged exact_inuse_objects: $top"

# Hostile files: one line each, exit 1, no output file.
f=$work/h.$pid.0.pb.gz
printf 'not a profile at all' >"$work/text"
head -c 100 "$f" >"$work/truncated"
gzip -dc "$f" | head -c 300 | gzip >"$work/cut"
printf '\037\213garbage-after-the-magic' >"$work/badgz"
printf '\012\377\377\377\377\017' >"$work/badlen"
: >"$work/empty"
for bad in text truncated cut badgz badlen empty; do
	rm -f "$work/o.pb.gz"
	"$cli" -p "$pid" --pprof "$work/o.pb.gz" --profile "$work/$bad" >"$work/o" 2>"$work/e"
	rc=$?
	[ $rc = 1 ] || fail "$bad: exit $rc"
	[ "$(wc -l <"$work/e")" = 1 ] && grep -q "^allocinfo: $work/$bad: not a pprof profile: " "$work/e" ||
		fail "$bad: expected one line: $(cat "$work/e")"
	[ ! -e "$work/o.pb.gz" ] || fail "$bad: an output file was written"
done
# A FIFO would block a plain open; a directory is no profile either.
mkfifo "$work/fifo" && mkdir "$work/dir" || exit 99
for bad in fifo dir; do
	timeout 20 "$cli" -p "$pid" --pprof "$work/o.pb.gz" --profile "$work/$bad" >"$work/o" 2>"$work/e"
	rc=$?
	[ $rc = 1 ] || fail "$bad: exit $rc"
	[ "$(cat "$work/e")" = "allocinfo: $work/$bad: not a regular file" ] ||
		fail "$bad: $(cat "$work/e")"
done
"$cli" --profile "$f" >/dev/null 2>"$work/e" && fail "--profile without --pprof accepted"
grep -q "^allocinfo: --profile needs --pprof$" "$work/e" || fail "usage: $(cat "$work/e")"
echo ok
